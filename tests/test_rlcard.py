"""400 as an RLCard environment: the Env's API as RLCard's agents use it, DQN and
NFSP running on it unchanged, the DMC example trained at a tiny size and its model playing a
tournament as ``rlcard:PATH``, and bad model files refused in one line. Needs the ``rlcard``
extra; CI sets FOURHUNDRED_REQUIRE_RLCARD=1, which fails a skip."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.requires import missing, require

require(
    missing(("rlcard", "torch", "git"), "rlcard"),
    "FOURHUNDRED_REQUIRE_RLCARD",
    "the RLCard tests",
    module=True,
)

import rlcard  # noqa: E402
import torch  # noqa: E402

import fourhundred_env.envs.rlcard  # noqa: E402, F401 - registers "fourhundred"
from fourhundred_agents.neural.checkpoint import CheckpointError  # noqa: E402
from fourhundred_agents.registry import make_agent  # noqa: E402
from fourhundred_env import Rules  # noqa: E402
from fourhundred_env.errors import FourHundredError, IllegalActionError  # noqa: E402
from fourhundred_env.observation import OBS_SIZE  # noqa: E402
from tests.test_examples import load_example  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class FirstLegal:
    """The simplest RLCard agent that gets hands played: bids 3 where it may (four bids of 3
    reach the total of 11), else the lowest legal action id (the lowest card)."""

    use_raw = False

    def step(self, state):
        legal = list(state["legal_actions"])
        return 54 if 54 in legal else legal[0]

    def eval_step(self, state):
        return self.step(state), {}


def test_the_env_is_rlcards_shape_and_plays_a_hand() -> None:
    env = rlcard.make("fourhundred", config={"seed": 3})
    assert env.num_players == 4 and env.num_actions == 66
    assert env.state_shape == [[OBS_SIZE]] * 4 and env.action_shape == [None] * 4
    state, _player = env.reset()
    assert state["obs"].shape == (OBS_SIZE,) and state["obs"].dtype == np.float32
    assert list(state["legal_actions"]) and all(52 <= a <= 65 for a in state["legal_actions"])
    assert state["raw_legal_actions"][0].isdigit()  # a bid, as text
    env.set_agents([FirstLegal()] * 4)
    trajectories, payoffs = env.run(is_training=False)
    assert env.is_over() and len(trajectories) == 4
    assert payoffs[0] == payoffs[2] and payoffs[1] == payoffs[3]  # team points


def test_same_seed_same_games_and_the_payoffs_follow_the_config() -> None:
    def games(config: dict, n: int = 3) -> list[list[float]]:
        env = rlcard.make("fourhundred", config=config)
        env.set_agents([FirstLegal()] * 4)
        return [env.run()[1].tolist() for _ in range(n)]

    assert games({"seed": 5}) == games({"seed": 5})
    assert games({"seed": 5}) != games({"seed": 6})
    own = games({"seed": 5, "game_reward": "hand_points"})
    team = games({"seed": 5})
    assert all(t[0] == o[0] + o[2] for o, t in zip(own, team, strict=True))
    match = games({"seed": 5, "game_episode": "match", "game_reward": "match_result",
                   "game_max_hands": 3}, n=2)  # fmt: skip
    assert all(m in ([0.0] * 4, [1.0, -1.0] * 2, [-1.0, 1.0] * 2) for m in match)


def test_illegal_actions_and_bad_config_are_one_line() -> None:
    env = rlcard.make("fourhundred", config={"seed": 1, "allow_step_back": True})
    state, player = env.reset()
    with pytest.raises(IllegalActionError, match="illegal action") as e:
        env.step(0)  # a card, in the bidding
    assert "\n" not in str(e.value)
    assert env.get_player_id() == player  # nothing changed
    env.step(next(iter(state["legal_actions"])))
    assert env.step_back()[1] == player
    for config in ({"game_reward": "chips"}, {"game_hands": 3}, {"game_max_hands": 0},
                   {"game_rules": 41}):  # fmt: skip
        with pytest.raises(FourHundredError) as e:
            rlcard.make("fourhundred", config=config)
        assert "\n" not in str(e.value)


def test_dqn_and_nfsp_train_on_it_unchanged() -> None:
    from rlcard.agents import DQNAgent, NFSPAgent
    from rlcard.utils import reorganize

    torch.manual_seed(0)
    env = rlcard.make("fourhundred", config={"seed": 0})
    dqn = DQNAgent(num_actions=env.num_actions, state_shape=env.state_shape[0],
                   mlp_layers=[32], replay_memory_init_size=20, train_every=4, batch_size=8)  # fmt: skip
    nfsp = NFSPAgent(num_actions=env.num_actions, state_shape=env.state_shape[0],
                     hidden_layers_sizes=[32], q_mlp_layers=[32], reservoir_buffer_capacity=100,
                     q_replay_memory_init_size=20, q_batch_size=8, batch_size=8)  # fmt: skip
    env.set_agents([dqn, nfsp, FirstLegal(), FirstLegal()])
    for _ in range(3):
        trajectories, payoffs = env.run(is_training=True)
        trajectories = reorganize(trajectories, payoffs)
        for ts in trajectories[0]:
            dqn.feed(ts)
        for ts in trajectories[1]:
            nfsp.feed(ts)
    assert dqn.total_t > 0


@pytest.fixture(scope="module")
def dmc_run(tmp_path_factory) -> Path:
    """The DMC example at a tiny size: the folder holding model.tar."""
    out = tmp_path_factory.mktemp("runs")
    example = load_example("rlcard_dmc")
    args = example.parse_args(
        ["--total-frames", "48", "--num-actors", "1", "--unroll-length", "8", "--batch-size",
         "2", "--num-buffers", "4", "--no-progress", "--runs-dir", str(out)]
    )  # fmt: skip
    return example.main(args)


def test_the_dmc_example_saves_a_model_a_curve_and_its_manifest(dmc_run: Path) -> None:
    run = dmc_run.parent
    assert (dmc_run / "model.tar").is_file() and (dmc_run / "fourhundred.json").is_file()
    assert list(run.glob("events.out.tfevents.*")) and (run / "config.yaml").is_file()
    assert json.loads((dmc_run / "meta.json").read_text())["env"] == {}  # no environment kept
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run))
    events.Reload()
    assert "charts/return_0" in events.Tags()["scalars"]


def test_the_dmc_model_plays_a_tournament_as_rlcard_path(dmc_run: Path, tmp_path: Path) -> None:
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.tournament import run_tournament

    spec = f"rlcard:{dmc_run}"
    agent = make_agent(spec)
    assert agent.meta["library"] == "rlcard" and agent.replayable
    cfg = load_config(None, dict(
        agents=[spec, "heuristic-v1"], matches=1, seed=1, workers=1, max_hands=2,
        out_dir=str(tmp_path), progress=False, bootstrap=20, table_batch=2,
    ))  # fmt: skip
    assert run_tournament(cfg).games_played == 2
    con = sqlite3.connect(cfg.db_path)
    assert {t for row in con.execute("SELECT team0, team1 FROM matches") for t in row} == {
        spec,
        "heuristic-v1",
    }


def test_the_dmc_example_keeps_each_checkpoint_as_a_loadable_snapshot(dmc_run: Path) -> None:
    kept = sorted((dmc_run / "snapshots").iterdir())
    assert kept, "no snapshot kept"
    last = json.loads((kept[-1] / "snapshot.json").read_text())
    final = torch.load(dmc_run / "model.tar", weights_only=True)
    assert last["frames"] == final["frames"] and kept[-1].name == f"{final['frames']:012d}"
    assert last["minutes"] >= 0
    assert (kept[-1] / "model.tar").read_bytes() == (dmc_run / "model.tar").read_bytes()
    agent = make_agent(f"rlcard:{kept[-1]}")  # the manifest travels with it
    assert agent.meta["library"] == "rlcard"


def test_a_snapshot_is_kept_only_when_model_tar_is_whole_and_new(tmp_path: Path) -> None:
    example = load_example("rlcard_dmc")
    from fourhundred_agents.libraries.rlcard import write_manifest

    write_manifest(tmp_path)
    kept: dict[str, float] = {}
    assert example.keep_snapshot(tmp_path, 0.0, kept) is None  # no model.tar yet
    (tmp_path / "model.tar").write_bytes(b"half a file")
    assert example.keep_snapshot(tmp_path, 0.0, kept) is None  # DMC is still writing it
    _dmc_file(tmp_path / "model.tar")
    snapshot = example.keep_snapshot(tmp_path, 0.0, kept)
    assert snapshot == tmp_path / "snapshots" / "000000000000"
    assert json.loads((snapshot / "snapshot.json").read_text())["frames"] == 0
    assert example.keep_snapshot(tmp_path, 0.0, kept) is None  # the same file: kept once
    first = json.loads((snapshot / "snapshot.json").read_text())["minutes"]
    _dmc_file(tmp_path / "model.tar")  # saved again before the learner's next step: the
    os.utime(tmp_path / "model.tar", (1, 1))  # same network, kept with its first minutes
    assert example.keep_snapshot(tmp_path, time.time(), kept) is None
    assert json.loads((snapshot / "snapshot.json").read_text())["minutes"] == first
    make_agent(f"rlcard:{snapshot}")


def _dmc_file(path: Path, in_size: int = OBS_SIZE + 66, layers: tuple[int, ...] = (16,)) -> Path:
    sizes = [in_size, *layers, 1]
    state = {}
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        state[f"fc_layers.{2 * i}.weight"] = torch.zeros(b, a)
        state[f"fc_layers.{2 * i}.bias"] = torch.zeros(b)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model_state_dict": [state] * 4, "frames": 0}, path)
    return path


def test_bad_model_files_are_refused_in_one_line(dmc_run: Path, tmp_path: Path) -> None:
    cases = {
        "a whole pickled agent": (next(dmc_run.glob("0_*.pth")), "Python objects"),
        "another game's network": (_dmc_file(tmp_path / "g" / "model.tar", in_size=100), "inputs"),
        "not torch's": (dmc_run / "logs.csv", "not a file torch.save wrote"),
        "missing": (tmp_path / "none" / "model.tar", "does not exist"),
    }
    other = _dmc_file(tmp_path / "pagat" / "model.tar")
    fr_manifest = json.loads((dmc_run / "fourhundred.json").read_text())
    fr_manifest["rules"] = Rules.preset("pagat").to_dict()
    (other.parent / "fourhundred.json").write_text(json.dumps(fr_manifest))
    cases["other rules"] = (other, "game|rules")
    version = _dmc_file(tmp_path / "v" / "model.tar")
    (version.parent / "fourhundred.json").write_text(json.dumps({**fr_manifest, "obs_version": 0,
                                                                 "rules": Rules().to_dict()}))  # fmt: skip
    cases["another observation"] = (version, "version")
    for what, (path, words) in cases.items():
        with pytest.raises(CheckpointError, match=words) as e:
            make_agent(f"rlcard:{path}")
        assert "\n" not in str(e.value), what
    assert make_agent(f"rlcard:{_dmc_file(tmp_path / 'ok' / 'model.tar')}")  # a fitting one plays


@pytest.mark.parametrize(
    "blocked, code, extra",
    [
        ("rlcard", "import fourhundred_env.envs.rlcard", "rlcard"),
        ("pyspiel", "import fourhundred_env.envs.openspiel", "openspiel"),
        ("pyspiel", "from fourhundred_agents.registry import make_agent; make_agent('openspiel:random')", "openspiel"),
    ],
)  # fmt: skip
def test_a_missing_library_names_its_extra(blocked: str, code: str, extra: str) -> None:
    script = f"import sys; sys.modules[{blocked!r}] = None\nfrom fourhundred_env.errors import FourHundredError\ntry:\n    {code}\nexcept FourHundredError as e:\n    print(e)\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"pip install 'fourhundred[{extra}]'" in out.stdout and out.stdout.count("\n") == 1


def test_rlcard_path_plays_as_dmcs_own_agent_predicts(dmc_run: Path) -> None:
    from rlcard.agents.dmc_agent.model import DMCAgent

    from fourhundred_env.view import seat_view

    checkpoint = torch.load(dmc_run / "model.tar", map_location="cpu", weights_only=True)
    theirs = DMCAgent([OBS_SIZE], [66], device="cpu")
    theirs.load_state_dict(checkpoint["model_state_dict"][0])
    ours = make_agent(f"rlcard:{dmc_run}")
    env = rlcard.make("fourhundred", config={"seed": 9})
    state, player = env.reset()
    compared = 0
    while not env.is_over():
        view = seat_view(env.game.engine, env.game.state, np.zeros(1, np.int64), player)
        action, _ = theirs.eval_step(state)
        assert int(ours.act(view)[0]) == int(action)
        compared += 1
        state, player = env.step(action)
    assert compared >= 4


def test_the_dmc_curve_plays_each_snapshot_against_heuristic_v1(
    dmc_run: Path, tmp_path: Path
) -> None:
    import importlib.util

    from fourhundred_tournament.report.statistics import load_report

    spec = importlib.util.spec_from_file_location("dmc_curve", ROOT / "benchmarks/dmc_curve.py")
    curve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(curve)
    kept = curve.snapshots(dmc_run.parent)
    assert [meta["frames"] for _, meta in kept] == sorted(meta["frames"] for _, meta in kept)
    snapshot, meta = kept[-1]
    result = curve.evaluate(snapshot, tmp_path / "eval", matches=1, seed=3, workers=1)
    assert result["games"] == 2 and result["low"] <= result["rate"] <= result["high"]
    _, report = load_report(tmp_path / "eval" / "results.sqlite")
    board = {row["agent"]: row for row in report["leaderboard"]}
    assert result["rate"] == board[f"rlcard:{snapshot}"]["win_rate"]  # the snapshot's side
    row = {**meta, **result}
    assert f"| {meta['frames']:,} | {100 * result['rate']:.1f} [" in curve.table([row])
