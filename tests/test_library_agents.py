"""Models of other RL libraries as agents: a tiny MaskablePPO model (the SB3
example) and a tiny CleanRL-style network (the CleanRL example), trained here for a few
hundred decisions, play a tournament as ``sb3:`` and ``torch:``, are offered by the web
table, and their runs plot; bad files are refused in one line."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from fourhundred_agents.libraries.agent import model_spec
from fourhundred_agents.neural.checkpoint import CheckpointError
from fourhundred_agents.registry import make_agent
from fourhundred_env import Rules
from tests.test_examples import load_example

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """{"sb3": its run folder, "cleanrl": its run folder}, each trained for 512 decisions."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("runs")
    sb3 = load_example("sb3_maskable_ppo")
    sb3.main(sb3.parse_args(
        ["--total-timesteps", "512", "--num-envs", "16", "--n-steps", "16", "--batch-size",
         "128", "--n-epochs", "1", "--eval-matches", "4", "--eval-max-hands", "2",
         "--runs-dir", str(out)]
    ))  # fmt: skip
    cleanrl = load_example("cleanrl_ppo")
    cleanrl.main(cleanrl.parse_args(
        ["--total-timesteps", "512", "--num-envs", "16", "--num-steps", "16", "--update-epochs",
         "1", "--runs-dir", str(out)]
    ))  # fmt: skip
    torch.set_num_threads(threads)
    (sb3_run,) = out.glob("sb3_maskable_ppo__1__*")
    (cleanrl_run,) = out.glob("cleanrl_ppo__1__*")
    return {"sb3": sb3_run, "cleanrl": cleanrl_run}


def test_both_examples_name_their_runs_as_fourhundred_train_does(runs) -> None:
    for run in runs.values():
        _name, seed, stamp = run.name.split("__")
        assert (
            seed == "1"
            and len(stamp) == 15
            and stamp[8] == "-"
            and stamp.replace("-", "").isdigit()
        )
        assert (run / "config.yaml").is_file() and list(run.glob("events.out.tfevents.*"))
    assert (runs["sb3"] / "model.zip").is_file()
    assert (runs["cleanrl"] / "policy.pt").is_file() and (runs["cleanrl"] / "policy.json").is_file()
    assert model_spec(runs["sb3"]) == f"sb3:{runs['sb3'] / 'model.zip'}"
    assert model_spec(runs["cleanrl"]) == f"torch:{runs['cleanrl'] / 'policy.json'}"
    assert model_spec(runs["cleanrl"] / "policy.pt") == f"torch:{runs['cleanrl'] / 'policy.pt'}"


def test_sb3_agent_plays_as_maskableppo_predicts(runs) -> None:
    from sb3_contrib import MaskablePPO

    from fourhundred_env.envs.sb3 import make_sb3_vec_env
    from fourhundred_env.view import seat_view

    path = runs["sb3"] / "model.zip"
    model = MaskablePPO.load(path, device="cpu")
    env = make_sb3_vec_env("FourHundred-v0", num_envs=32, seed=5, opponents="heuristic")
    agent = make_agent(f"sb3:{path}", Rules(), seed=0)
    assert agent.meta["stamped"] and agent.meta["policy"] == "MaskableMultiInputActorCriticPolicy"
    obs = env.reset()
    for _ in range(20):
        masks = env.action_masks()
        expected, _ = model.predict(obs, action_masks=masks, deterministic=True)
        driver = env.env.driver
        rows = np.arange(32)
        view = seat_view(driver.engine, driver.state, rows, driver.state.to_play[rows])
        assert np.array_equal(agent.act(view), expected)
        obs, *_ = env.step(expected)


def test_both_enter_a_tournament_against_random(runs, tmp_path: Path) -> None:
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.tournament import run_tournament

    specs = [f"sb3:{runs['sb3'] / 'model.zip'}", f"torch:{runs['cleanrl'] / 'policy.pt'}"]
    cfg = load_config(None, dict(
        agents=[*specs, "random"], matches=2, seed=1, workers=1, max_hands=4,
        out_dir=str(tmp_path), progress=False, bootstrap=20, table_batch=4,
    ))  # fmt: skip
    summary = run_tournament(cfg)
    assert summary.games_played == 3 * 2 * 2  # three pairings, 2 matches, both orientations
    con = sqlite3.connect(cfg.db_path)
    teams = {t for row in con.execute("SELECT team0, team1 FROM matches") for t in row}
    assert teams == {*specs, "random"}


def test_the_web_table_offers_them(runs) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from fourhundred_web.app import create_app

    specs = [f"sb3:{runs['sb3'] / 'model.zip'}", f"torch:{runs['cleanrl'] / 'policy.pt'}"]
    with TestClient(create_app(agents=specs), base_url="http://localhost") as client:
        offered = json.dumps(client.get("/api/options").json()["agents"])
    assert all(Path(s.split(":", 1)[1]).name in offered for s in specs)


def test_plot_draws_both_runs(runs, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from fourhundred_cli import main

    assert main(["plot", str(runs["sb3"]), str(runs["cleanrl"]), "--out", str(tmp_path)]) == 0
    written = {p.name for p in tmp_path.glob("*.png")}
    assert {"episodes.png", "losses.png", "win_rate.png"} <= written
    from fourhundred_train.plots import load_runs

    sb3, cleanrl = load_runs([runs["sb3"], runs["cleanrl"]])
    for run in (sb3, cleanrl):
        assert run.has("charts/win_rate") and run.has("losses/entropy")
    assert sb3.has("eval/win_rate") and sb3.has("eval/win_rate_low")
    assert (sb3.scalars["losses/entropy"].values > 0).all()  # SB3's entropy_loss negated


def test_evaluate_run_plays_the_model_of_either_run(runs, capsys) -> None:
    import shutil

    from fourhundred_cli import main
    from fourhundred_train.plots import load_runs

    for name in ("sb3", "cleanrl"):
        run = runs[name].parent / f"{runs[name].name}_copy"  # the other tests' runs stay as made
        shutil.copytree(runs[name], run)
        assert main(["evaluate-run", str(run), "--opponent", "random", "--matches", "2",
                     "--workers", "1"]) == 0  # fmt: skip
        assert "win rate" in capsys.readouterr().out
        (loaded,) = load_runs([run])
        assert loaded.has("eval/win_rate") and loaded.has("eval/win_rate_low")
        assert main(["evaluate-run", str(run), "--ladder", str(run / "l.sqlite")]) == 2
        assert "fourhundred ladder add" in capsys.readouterr().err


def test_match_results_plays_several_opponents(runs) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from fourhundred_env.envs.sb3 import make_sb3_vec_env, match_results

    model = MaskablePPO.load(runs["sb3"] / "model.zip", device="cpu")
    results = match_results(model, ["random", "heuristic"], num_matches=4, max_hands=2)
    assert set(results) == {"random", "heuristic"}
    assert all(
        abs(r["win_rate"] + r["draw_rate"] + r["loss_rate"] - 1) < 1e-9 for r in results.values()
    )
    assert match_results(model, "random", 4, max_hands=2) == results["random"]  # seeded
    # a model trained without masks plays only legal actions too
    env = make_sb3_vec_env(num_envs=2)
    plain = PPO("MultiInputPolicy", env, n_steps=8, batch_size=16, device="cpu")
    assert match_results(plain, "random", 3, max_hands=2)["matches"] == 3


# -- bad input ------------------------------------------------------------------------------
def test_bad_sb3_files_are_refused_in_one_line(runs, tmp_path: Path) -> None:
    from stable_baselines3 import PPO

    zip_path = runs["sb3"] / "model.zip"
    cut = tmp_path / "cut.zip"
    cut.write_bytes(zip_path.read_bytes()[:3000])
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("hello.txt", "hi")
    cartpole = tmp_path / "cartpole.zip"
    PPO("MlpPolicy", "CartPole-v1", n_steps=8, batch_size=8, device="cpu").save(cartpole)
    cases = {
        cut: "damaged|not a Stable-Baselines3 model",
        other_zip: "not a Stable-Baselines3 model",
        cartpole: r"observations of shape \[4\].*expected",
        runs["cleanrl"] / "policy.pt": "is a torch file.*torch:",
        tmp_path / "missing.zip": "does not exist",
    }
    for path, message in cases.items():
        with pytest.raises(CheckpointError, match=message) as e:
            make_agent(f"sb3:{path}", Rules())
        assert "\n" not in str(e.value)
    with pytest.raises(CheckpointError, match=r"Stable-Baselines3 model zip.*sb3:"):
        make_agent(f"neural:{zip_path}", Rules())
    with pytest.raises(CheckpointError, match="other rules"):
        make_agent(f"sb3:{zip_path}", Rules(target=31))


def test_an_sb3_zip_with_a_custom_policy_class_is_not_unpickled(runs, tmp_path: Path) -> None:
    """The loader never runs a zip's pickles: a policy class it does not know is refused."""
    src = runs["sb3"] / "model.zip"
    forged = tmp_path / "forged.zip"
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(forged, "w") as out:
        for name in z.namelist():
            data = z.read(name)
            if name == "data":
                values = json.loads(data)
                values["policy_class"]["__module__"] = "evil.module"
                data = json.dumps(values).encode()
            out.writestr(name, data)
    with pytest.raises(CheckpointError, match=r"evil\.module.*does not rebuild"):
        make_agent(f"sb3:{forged}", Rules())


def test_bad_torch_manifests_are_refused_in_one_line(runs, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["cleanrl"], run)
    manifest = json.loads((run / "policy.json").read_text())

    def refused(change: dict, message: str) -> None:
        (run / "policy.json").write_text(json.dumps({**manifest, **change}))
        with pytest.raises(CheckpointError, match=message) as e:
            make_agent(f"torch:{run / 'policy.pt'}", Rules())
        assert "\n" not in str(e.value)

    refused({"extra": 1}, r"unknown key\(s\) \['extra'\]")
    refused({"policy": "mine"}, "'mine', which is not registered.*--agent-module")
    refused({"obs_size": 600}, "obs_size=600: expected 588")
    refused({"num_actions": 60}, "num_actions=60: expected 66")
    refused({"obs_version": 99}, "observation layout version 99")
    refused({"kwargs": {"hidden": [32]}}, "do not fit MLPPolicy")
    (run / "policy.json").unlink()
    with pytest.raises(CheckpointError, match=r"does not exist.*manifest"):
        make_agent(f"torch:{run / 'policy.pt'}", Rules())
    with pytest.raises(CheckpointError, match="torch: policy"):
        make_agent(f"neural:{runs['cleanrl'] / 'policy.pt'}", Rules())


# -- the environments' conventions ----------------------------------------------------------
def test_check_env_passes_on_both_envs_without_pillow() -> None:
    """A core install has no Pillow: the envs then declare no "rgb_array", so Gymnasium's
    check_env, which renders every declared mode, passes (simulated: PIL unimportable)."""
    code = (
        "import sys; sys.modules['PIL'] = None\n"
        "import warnings; warnings.simplefilter('ignore')\n"
        "import gymnasium as gym, fourhundred_env.envs\n"
        "from gymnasium.utils.env_checker import check_env\n"
        "for env_id in ('FourHundred-v0', 'FourHundredBid-v0'):\n"
        "    env = gym.make(env_id)\n"
        "    assert 'rgb_array' not in env.metadata['render_modes'], env.metadata\n"
        "    check_env(env)\n"
        "    env.reset(seed=0); env.action_masks()\n"
        "try:\n"
        "    gym.make('FourHundred-v0', render_mode='rgb_array')\n"
        "except Exception as e:\n"
        "    assert 'needs Pillow' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('rgb_array without Pillow')\n"
        "assert 'PIL' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=300)


def test_with_pillow_rgb_array_is_declared() -> None:
    pytest.importorskip("PIL")
    import gymnasium as gym

    assert "rgb_array" in gym.make("FourHundred-v0").metadata["render_modes"]
