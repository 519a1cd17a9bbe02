"""The `device` setting of the trainers and of the model bots (agents/neural/device.py): its
forms and refusals, ``auto``, the CPU bit for bit, and a run on a GPU where there is one.

The suite finds the CPU alone (``_cpu_only`` in tests/conftest.py); the tests that ask for
``real_devices`` see the machine's. The CUDA tests skip without a GPU, or fail with
FOURHUNDRED_REQUIRE_CUDA=1 (a machine that is meant to have one)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fourhundred_agents.neural.device as device_module  # noqa: E402
from fourhundred_agents.bid_analysis import play_hand  # noqa: E402
from fourhundred_agents.neural.device import check_device, torch_device  # noqa: E402
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet  # noqa: E402
from fourhundred_agents.registry import make_agent  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.cards import NUM_CARDS  # noqa: E402
from fourhundred_env.configs import save_yaml  # noqa: E402
from fourhundred_env.errors import ConfigError  # noqa: E402
from fourhundred_env.observation import OBS_SIZE  # noqa: E402
from fourhundred_train.bid_q import BidQTrainer, load_bid_q_config  # noqa: E402
from fourhundred_train.checkpoint import load_policy, on_cpu  # noqa: E402
from fourhundred_train.config import load_config, resume_config  # noqa: E402
from fourhundred_train.exit import ExitTrainer, load_exit_config  # noqa: E402
from fourhundred_train.exit import resume_config as exit_resume_config  # noqa: E402
from fourhundred_train.ppo import Trainer  # noqa: E402

MODEL = "agents/pretrained/selfplay.pt"
FORMS = "expected 'auto', 'cpu', 'cuda' or 'cuda:N'"
TINY = ["total_decisions=2048", "eval_every=0", "torch_threads=1"]  # 2 updates of tiny
FULL = ["oracle_critic=true", "average_from=0", "average_every=1", "teacher=heuristic",
        "kickstart_coef=0.5", "rollout_share=0.05", "rollout_team_from=1024"]  # fmt: skip
"""Every part that holds a network or per-sample tensors: the critic, the weight average,
the teacher's labels and the rollout values played by the learner's own network."""


def _tensors(path: Path) -> dict[str, torch.Tensor]:
    """Every tensor of a checkpoint by its path of keys (read as written: no map_location)."""
    out: dict[str, torch.Tensor] = {}

    def walk(obj, key: str) -> None:
        if isinstance(obj, torch.Tensor):
            out[key] = obj
        elif isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{key}/{k}")
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                walk(v, f"{key}[{i}]")

    walk(torch.load(path, weights_only=True), "")
    return out


def _same_tensors(a: Path, b: Path) -> bool:
    x, y = _tensors(a), _tensors(b)
    return x.keys() == y.keys() and all(
        x[k].dtype == y[k].dtype and torch.equal(x[k], y[k]) for k in x
    )


def _copy_always(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every trainer learn on a copy of its network, as on a GPU, here on the CPU;
    returns the list of the copies' classes, filled as they are made."""
    copies: list[str] = []

    def copy_always(net, device):
        copies.append(type(net).__name__)
        import copy

        return copy.deepcopy(net).to(device)

    monkeypatch.setattr(device_module, "learner_copy", copy_always)
    return copies


# -- the forms and the refusals -------------------------------------------------------------
@pytest.mark.parametrize("text", ["auto", "cpu", "cuda", "cuda:0", "cuda:12"])
def test_the_forms_of_a_device_are_accepted(text: str) -> None:
    assert check_device(text) == text


@pytest.mark.parametrize("text", ["gpu", "cuda:x", "CUDA", "", "cuda:", "cuda:-1", "cuda:01",
                                  "cpu:0", " cpu", "mps", 0, None])  # fmt: skip
def test_anything_else_is_refused_naming_the_forms(text) -> None:
    with pytest.raises(ConfigError, match=f"device={text!r}: {FORMS}") as e:
        check_device(text)
    assert "\n" not in str(e.value)


def test_a_device_this_machine_lacks_is_refused_naming_those_it_has(monkeypatch) -> None:
    # the suite sees the CPU alone
    for text in ("cuda", "cuda:0", "cuda:7"):
        with pytest.raises(ConfigError) as e:
            torch_device(text)
        assert str(e.value) == (
            f"device {text!r} is not available: this machine has cpu only: expected 'cpu' or 'auto'"
        )
    assert torch_device("auto") == torch.device("cpu") == torch_device("cpu")
    # a machine with one GPU (torch.device names it without touching CUDA)
    monkeypatch.setattr(device_module, "devices_present", lambda: ["cpu", "cuda:0"])
    assert torch_device("auto") == torch.device("cuda")
    assert torch_device("cuda") == torch.device("cuda")
    assert torch_device("cuda:0") == torch.device("cuda:0")
    with pytest.raises(ConfigError) as e:
        torch_device("cuda:7")
    assert str(e.value) == (
        "device 'cuda:7' is not available: this machine has cpu, cuda:0: expected 'cpu', "
        "'cuda:0' or 'auto'"
    )


def test_auto_is_cuda_where_torch_finds_a_gpu_else_the_cpu(real_devices) -> None:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert real_devices[0] == "cpu" and (len(real_devices) > 1) == torch.cuda.is_available()
    assert torch_device("auto").type == expected
    if not torch.cuda.is_available():
        assert real_devices == ["cpu"]
        with pytest.raises(ConfigError, match="this machine has cpu only"):
            torch_device("cuda")


def test_the_configs_default_to_auto_and_refuse_a_malformed_device() -> None:
    assert load_config("tiny").device == "auto"
    assert load_exit_config("exit").device == "auto"
    assert load_bid_q_config("bidding_q").device == "auto"
    for load, name in ((load_config, "tiny"), (load_exit_config, "exit"),
                       (load_bid_q_config, "bidding_q")):  # fmt: skip
        assert load(name, ["device=cuda:3"]).device == "cuda:3"  # the form only: a config
        # saved on a machine with a GPU loads on one without; the run refuses it (below)
        with pytest.raises(ConfigError, match=f"device='gpu': {FORMS}"):
            load(name, ["device=gpu"])


@pytest.mark.parametrize(
    "argv, expected",
    [
        # blamed on the command line that gave it, not on the bundled tiny.yaml
        (["tiny", "device=gpu"], f"device=gpu (command line): device='gpu': {FORMS}"),
        (["tiny", "device=cuda:x"], f"device=cuda:x (command line): device='cuda:x': {FORMS}"),
        (["tiny", "device=cuda"], "device 'cuda' is not available: this machine has cpu only"),
        (["exit", "device=cuda:7"], "device 'cuda:7' is not available: this machine has cpu"),
        (["bidding_q", "device=cuda"], "device 'cuda' is not available: this machine has cpu"),
    ],
)
def test_a_bad_device_is_one_line_and_no_run_folder(
    argv: list[str], expected: str, tmp_path: Path, capsys
) -> None:
    assert main(["train", *argv, f"runs_dir={tmp_path}", "--no-eval"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("fourhundred: error: ") and expected in err, err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("bot", ["neural", "neural-bid", "sb3", "torch"])
def test_the_model_bots_take_a_device_and_refuse_a_bad_one(bot: str) -> None:
    spec = f"{bot}:missing.file"  # the settings are checked before the file is read
    with pytest.raises(ConfigError) as e:
        make_agent(f"{spec},device=gpu", Rules())
    assert (
        str(e.value)
        == f"agent '{spec},device=gpu': device='gpu': {FORMS} (N a GPU's number, from 0)"
    )
    with pytest.raises(ConfigError) as e:
        make_agent(f"{spec},device=cuda:1", Rules())
    assert str(e.value) == (
        f"agent '{spec},device=cuda:1': device 'cuda:1' is not available: this machine has "
        "cpu only: expected 'cpu' or 'auto'"
    )


def test_a_bad_device_in_a_training_spec_names_the_override(tmp_path: Path, capsys) -> None:
    assert main(["train", "tiny", f"opponent=neural:{MODEL},device=cuda", f"runs_dir={tmp_path}",
                 "--no-eval"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.startswith(f"fourhundred: error: opponent=neural:{MODEL},device=cuda (command "
                          f"line): agent 'neural:{MODEL},device=cuda': ")  # fmt: skip
    assert "device 'cuda' is not available" in err and len(err.strip().splitlines()) == 1


def test_a_bot_plays_on_the_cpu_unless_its_spec_says_otherwise() -> None:
    for spec in (f"neural:{MODEL}", f"neural:{MODEL},device=cpu", f"neural:{MODEL},device=auto"):
        agent = make_agent(spec, Rules())
        assert agent.device == torch.device("cpu")
        assert all(p.device.type == "cpu" for p in agent.net.parameters())


def test_a_resume_may_change_the_device(tmp_path: Path) -> None:
    exit_run = tmp_path / "exit"
    exit_run.mkdir()
    save_yaml(load_exit_config("exit", ["device=cuda"]).to_dict(), exit_run / "config.yaml")
    assert exit_resume_config(exit_run, ["device=cpu"]).device == "cpu"
    with pytest.raises(ConfigError, match="overrides change seed"):
        exit_resume_config(exit_run, ["seed=5"])
    ppo_run = tmp_path / "ppo"
    ppo_run.mkdir()
    save_yaml(load_config("tiny", ["device=cuda"]).to_dict(), ppo_run / "config.yaml")
    assert resume_config(ppo_run, ["device=auto"]).device == "auto"


# -- the CPU, bit for bit -------------------------------------------------------------------
def test_on_cpu_gives_back_what_holds_cpu_tensors_only() -> None:
    state = PolicyValueNet(NetConfig(hidden=8, layers=1)).state_dict()
    record = {"policy": {"state_dict": state}, "pool": ["a.pt"], "n": (1, torch.ones(2))}
    assert on_cpu(record) is record and on_cpu(state) is state


def test_a_cpu_run_is_the_same_bits_whatever_the_device_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """device=cpu and auto (the CPU here) train the same weights; so does the GPU's way of
    learning on a copy of the network, its weights copied back to the rollouts' network
    before each rollout, here on the CPU: what is left to differ on a GPU is its rounding."""
    runs = {}
    for setting in ("cpu", "auto"):
        runs[setting] = tmp_path / setting
        Trainer(load_config("tiny", [*TINY, *FULL, f"device={setting}"]), runs[setting]).train(
            progress=False
        )
    copies = _copy_always(monkeypatch)
    runs["copy"] = tmp_path / "copy"
    Trainer(load_config("tiny", [*TINY, *FULL, "device=cpu"]), runs["copy"]).train(progress=False)
    assert copies == ["PolicyValueNet", "OracleCritic"]
    for name in ("policy.pt", "checkpoints/latest.pt", "checkpoints/policy_00002.pt"):
        assert _same_tensors(runs["cpu"] / name, runs["auto"] / name), name
        assert _same_tensors(runs["cpu"] / name, runs["copy"] / name), name


def test_the_fits_on_a_copy_give_the_same_bits(tmp_path: Path, monkeypatch) -> None:
    """Expert iteration's and the fitted-Q bidder's fits, on a copy of the network as on a
    GPU (here on the CPU), leave the same weights as on the network itself."""
    exit_tiny = ["positions=40", "bid_share=0.25", "bidder=", "num_tables=8", "worlds=2",
                 "bid_worlds=2", "candidates=2", "chunk=8", "workers=1", "epochs=1",
                 "batch_size=16", "eval_matches=0", "gate=null", "progress=false",
                 "iterations=1", "window=1", "symmetry=suits", "distill=48",
                 "distill_epochs=1", "holdout=0.3"]  # fmt: skip
    bid_tiny = ["positions=300", "num_tables=64", "hidden=16", "layers=1", "epochs=1",
                "batch_size=128", "net=mlp", "bid_head=value", "worlds=0", "workers=1",
                "per_point=0", "iterations=1"]  # fmt: skip
    for tag in ("plain", "copy"):
        if tag == "copy":
            copies = _copy_always(monkeypatch)
        ExitTrainer(load_exit_config("exit", exit_tiny), tmp_path / f"exit_{tag}").train()
        BidQTrainer(load_bid_q_config("bidding_q", bid_tiny), tmp_path / f"bid_{tag}",
                    progress=False).train()  # fmt: skip
    assert copies == ["PolicyValueNet", "PolicyValueNet", "PolicyValueNet"]  # distil, fit, bid
    for name in ("exit_{}/distilled.pt", "exit_{}/iter_0.pt", "bid_{}/policy.pt"):
        assert _same_tensors(tmp_path / name.format("plain"), tmp_path / name.format("copy"))


# -- a GPU ----------------------------------------------------------------------------------
@pytest.fixture
def cuda(real_devices) -> None:
    """Skips without a CUDA GPU; fails instead with FOURHUNDRED_REQUIRE_CUDA=1."""
    if len(real_devices) < 2:
        if os.environ.get("FOURHUNDRED_REQUIRE_CUDA") == "1":
            pytest.fail("FOURHUNDRED_REQUIRE_CUDA=1 but torch finds no CUDA GPU")
        pytest.skip("no CUDA GPU here")


def _games(spec: str, tables: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Two hands of `spec` (seats 0, 2) against heuristic at `tables` tables: the final hand
    points and the scores."""
    rules = Rules()
    engine = Engine(rules)
    agent, other = make_agent(spec, rules, seed=3), make_agent("heuristic", rules, seed=4)
    state = engine.init(tables, seed=5)
    for _ in range(2):
        engine.deal(state)
        play_hand(engine, state, [agent, other] * 2, [agent, other] * 2)
    return state.hand_points.copy(), state.scores.copy()


def test_tiny_trains_on_cuda_its_checkpoints_load_on_the_cpu_and_it_plays(
    cuda, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    trainer = Trainer(load_config("tiny", [*TINY, *FULL, "device=cuda"]), run)
    assert all(p.device.type == "cuda" for p in trainer.params)
    assert all(p.device.type == "cpu" for p in trainer.parts.play_net.parameters())
    trainer.train(progress=False)
    for name in ("policy.pt", "checkpoints/latest.pt", "checkpoints/policy_00002.pt"):
        tensors = _tensors(run / name)
        assert tensors and all(t.device.type == "cpu" for t in tensors.values()), name
    # the rollouts play a CPU copy of the learner's weights, brought up to them before each
    trainer.parts.sync()
    for a, b in zip(trainer.net.parameters(), trainer.parts.play_net.parameters(), strict=True):
        assert torch.equal(a.detach().cpu(), b.detach())
    net, _, _ = load_policy(run / "policy.pt")
    assert all(p.device.type == "cpu" and torch.isfinite(p).all() for p in net.parameters())
    # resumed on the CPU for one more update
    resumed = Trainer(resume_config(run, ["total_decisions=3072", "device=cpu"]), run,
                      resume=True)  # fmt: skip
    assert resumed.update == 2 and resumed.device == torch.device("cpu")
    resumed.train(progress=False)
    assert resumed.update == 3
    # the policy plays on the GPU as on the CPU, bar a near tie
    spec = f"neural:{run / 'policy.pt'}"
    gpu = make_agent(f"{spec},device=cuda", Rules())
    assert next(gpu.net.parameters()).device.type == "cuda"
    points, scores = _games(f"{spec},device=cuda")
    assert np.isfinite(points).all() and (np.abs(scores) < 1000).all()
    engine = Engine()
    state = engine.init(64, seed=9)
    engine.deal(state)
    from fourhundred_env.view import seat_view

    view = seat_view(engine, state)
    cpu = make_agent(spec, Rules())
    symmetric = make_agent(f"{spec},symmetric=true,device=cuda", Rules())
    np.testing.assert_allclose(symmetric.outputs(view)[0].cpu().numpy(),
                               make_agent(f"{spec},symmetric=true", Rules()).outputs(view)[0]
                               .numpy(), atol=1e-4)  # fmt: skip
    np.testing.assert_allclose(gpu.outputs(view)[0].cpu().numpy(),
                               cpu.outputs(view)[0].numpy(), atol=1e-4)  # fmt: skip


def test_the_fits_run_on_cuda_and_leave_cpu_weights(cuda, tmp_path: Path) -> None:
    from fourhundred_train.bid_q.targets import fit as bid_fit
    from fourhundred_train.exit.targets import fit as exit_fit

    rng = np.random.default_rng(0)
    n = 96
    obs = (rng.random((n, OBS_SIZE)) < 0.1).astype(np.int8)
    legal = rng.random((n, 66)) < 0.3
    legal[:, 0] = True
    pi = np.where(legal, 1.0, 0.0).astype(np.float32)
    pi /= pi.sum(1, keepdims=True)
    for setting in ("cuda", "cpu"):
        config = load_exit_config("exit", [f"device={setting}", "symmetry=suits", "epochs=2",
                                           "objective=cross_entropy", "batch_size=32",
                                           "progress=false"])  # fmt: skip
        torch.manual_seed(1)
        net = PolicyValueNet(NetConfig(hidden=16, layers=1))
        exit_fit(net, obs, legal, pi, np.zeros(n, np.float32), config, seed=2)
        assert all(p.device.type == "cpu" and torch.isfinite(p).all() for p in net.parameters())
    q = np.where(legal[:, NUM_CARDS:], rng.normal(size=(n, 66 - NUM_CARDS)), -np.inf)
    bid_config = load_bid_q_config("bidding_q", ["device=cuda", "epochs=2", "batch_size=32"])
    torch.manual_seed(1)
    net = PolicyValueNet(NetConfig(hidden=16, layers=1))
    loss = bid_fit(net, (obs,), q.astype(np.float32), bid_config, seed=3)
    assert np.isfinite(loss)
    assert all(p.device.type == "cpu" and torch.isfinite(p).all() for p in net.parameters())


def test_a_torch_policy_plays_on_cuda_and_is_not_replayable(cuda, tmp_path: Path) -> None:
    from fourhundred_agents.libraries.torch_policy import MLPPolicy, save_torch_policy

    torch.manual_seed(0)
    save_torch_policy(tmp_path / "policy.pt", MLPPolicy(hidden=(32,)))
    spec = f"torch:{tmp_path / 'policy.pt'}"
    assert make_agent(spec, Rules()).replayable
    agent = make_agent(f"{spec},device=cuda", Rules())
    assert not agent.replayable
    points, _ = _games(f"{spec},device=cuda")
    assert np.isfinite(points).all()


def test_an_sb3_model_plays_on_cuda_and_is_not_replayable(cuda, tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from fourhundred_env.envs.sb3 import make_sb3_vec_env

    env = make_sb3_vec_env(num_envs=2, seed=1)
    MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=16, seed=0,
                device="cpu").save(tmp_path / "model.zip")  # fmt: skip
    spec = f"sb3:{tmp_path / 'model.zip'}"
    agent = make_agent(f"{spec},device=cuda", Rules())
    assert not agent.replayable and make_agent(spec, Rules()).replayable
    points, _ = _games(f"{spec},device=cuda")
    assert np.isfinite(points).all()
