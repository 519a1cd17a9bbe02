"""Networks that OpenSpiel's PyTorch DQN and NFSP learn on 400 as bots
(``openspiel:dqn,path=PATH``, ``openspiel:nfsp,path=PATH``): the example trained at a tiny size
and its file playing a tournament, each decision the one OpenSpiel's own learner takes on the
game's information-state tensor, sampling replayable, and bad files refused in one line.
Needs the ``openspiel`` and ``train`` extras; CI sets FOURHUNDRED_REQUIRE_OPENSPIEL=1, which
fails a skip."""

from __future__ import annotations

import itertools
import json
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.requires import missing, require

require(
    missing(("pyspiel", "open_spiel", "torch", "tree"), "openspiel"),
    "FOURHUNDRED_REQUIRE_OPENSPIEL",
    "the OpenSpiel network tests",
    module=True,
)

import pyspiel  # noqa: E402
import torch  # noqa: E402
from open_spiel.python.pytorch import dqn, nfsp  # noqa: E402

import fourhundred_env.envs.openspiel  # noqa: E402, F401 - registers "fourhundred"
from fourhundred_agents.libraries.openspiel import AgentBot  # noqa: E402
from fourhundred_agents.neural.checkpoint import CheckpointError  # noqa: E402
from fourhundred_agents.registry import make_agent  # noqa: E402
from fourhundred_env import Rules  # noqa: E402
from fourhundred_env.errors import ConfigError  # noqa: E402
from fourhundred_env.observation import OBS_SIZE  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from tests.test_examples import load_example  # noqa: E402


@pytest.fixture(scope="module")
def dqn_file(tmp_path_factory) -> Path:
    """The DQN example at a tiny size: seat 0's saved network."""
    out = tmp_path_factory.mktemp("runs")
    example = load_example("openspiel_dqn")
    args = example.parse_args(
        ["--episodes", "2", "--hidden", "16", "--min-buffer-size-to-learn", "16",
         "--batch-size", "8", "--no-progress", "--runs-dir", str(out)]
    )  # fmt: skip
    return example.main(args)


def _states(count: int, seed: int = 0):
    """`count` decision states of the ``fourhundred`` game, reached by random play."""
    game = pyspiel.load_game("fourhundred")
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        state = game.new_initial_state()
        while not state.is_terminal() and len(found) < count:
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            found.append(state.clone())
            state.apply_action(int(rng.choice(state.legal_actions())))
    return found


def _view(state):
    return seat_view(
        state.get_game().engine, state._state(), np.zeros(1, np.int64), state.current_player()
    )


def test_the_example_saves_each_seat_with_its_manifest(dqn_file: Path) -> None:
    run = dqn_file.parent
    assert sorted(p.name for p in run.glob("dqn_*.pt")) == [f"dqn_{s}.pt" for s in range(4)]
    manifest = json.loads((run / "fourhundred.json").read_text())
    assert manifest["format"] == "fourhundred-openspiel-v1" and manifest["obs_size"] == OBS_SIZE
    saved = torch.load(dqn_file, weights_only=True)
    assert {"iteration", "model"} <= set(saved) and saved["iteration"] > 0


def test_the_saved_network_plays_a_tournament(dqn_file: Path, tmp_path: Path) -> None:
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.tournament import run_tournament

    spec = f"openspiel:dqn,path={dqn_file}"
    agent = make_agent(spec)
    assert agent.meta["library"] == "openspiel" and agent.meta["kind"] == "dqn"
    assert agent.replayable
    cfg = load_config(None, dict(
        agents=[spec, "heuristic-v1"], matches=1, seed=1, workers=1, max_hands=2,
        out_dir=str(tmp_path), progress=False, bootstrap=20, table_batch=2,
    ))  # fmt: skip
    assert run_tournament(cfg).games_played == 2
    con = sqlite3.connect(cfg.db_path)
    teams = {t for row in con.execute("SELECT team0, team1 FROM matches") for t in row}
    assert teams == {spec, "heuristic-v1"}


def test_each_decision_is_openspiels_dqn_at_epsilon_zero(dqn_file: Path) -> None:
    learner = dqn.DQN(0, OBS_SIZE, 66, hidden_layers_sizes=[16])
    learner._q_network.load_state_dict(torch.load(dqn_file, weights_only=True)["model"])
    agent = make_agent(f"openspiel:dqn,path={dqn_file}")
    states = _states(60)
    kinds = set()
    for state in states:
        p = state.current_player()
        theirs = learner._act_epsilon_greedy(
            state.information_state_tensor(p), state.legal_actions(p), 0.0
        )[0]
        assert AgentBot(agent, p).step(state) == theirs
        kinds.add(theirs >= 52)
    assert kinds == {True, False}  # bids and cards both checked


def test_nfsp_plays_its_average_policy_greedy_or_sampled_replayably(tmp_path: Path) -> None:
    learner = nfsp.NFSP(0, OBS_SIZE, 66, [16], reservoir_buffer_capacity=10, anticipatory_param=0.1)
    path = tmp_path / "nfsp.pt"
    # NFSP.save (OpenSpiel 2.0.2) fails as written; what it means to write:
    torch.save({"iteration": 0, "model": learner._avg_network.state_dict()}, path)
    greedy = make_agent(f"openspiel:nfsp,path={path}")
    sampled = [make_agent(f"openspiel:nfsp,path={path},sample=true", seed=s) for s in (1, 1, 2)]
    actions = []
    for state in _states(40, seed=3):
        p, view = state.current_player(), _view(state)
        mask = np.zeros(66, bool)
        mask[state.legal_actions(p)] = True
        theirs = learner._act(np.asarray(state.information_state_tensor(p)), mask)[2]
        action, probs = greedy.act_with_probs(view)
        np.testing.assert_allclose(probs[0], theirs, atol=1e-5)
        assert action[0] == int(np.argmax(np.where(mask, theirs, -1.0)))
        actions.append([int(a.act(view)[0]) for a in sampled])
        assert all(mask[a] for a in actions[-1])
    first, again, other = zip(*actions, strict=True)
    assert first == again and first != other  # same seed, same draws; another seed differs


def _mlp_file(path: Path, sizes: tuple[int, ...] = (OBS_SIZE, 16, 66), **extra) -> Path:
    state = {}
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        name = f"model.{i}" if i == len(sizes) - 2 else f"model.{i}.0"
        state[f"{name}.weight"], state[f"{name}.bias"] = torch.zeros(b, a), torch.zeros(b)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"iteration": 1, "last_loss_value": None, "model": state, **extra}, path)
    return path


def test_bad_files_and_specs_are_refused_in_one_line(dqn_file: Path, tmp_path: Path) -> None:
    learner = dqn.DQN(0, OBS_SIZE, 66, hidden_layers_sizes=[16])
    pickled = tmp_path / "net.pt"
    torch.save(learner._q_network, pickled)  # the whole module: a pickle of OpenSpiel's class
    plain = tmp_path / "plain.pkl"
    plain.write_bytes(pickle.dumps({"model": {}}))
    other_rules = _mlp_file(tmp_path / "pagat" / "dqn.pt")
    manifest = json.loads((dqn_file.parent / "fourhundred.json").read_text())
    (other_rules.parent / "fourhundred.json").write_text(
        json.dumps({**manifest, "rules": Rules.preset("pagat").to_dict()})
    )
    cases = {
        "a pickled network": (pickled, "Python objects"),
        "not torch's": (plain, "not a file torch.save wrote"),
        "another game's inputs": (_mlp_file(tmp_path / "a.pt", (100, 16, 66)), "100 inputs"),
        "another game's actions": (_mlp_file(tmp_path / "b.pt", (OBS_SIZE, 16, 3)), "3 outputs"),
        "not OpenSpiel's MLP": (_dmc_like(tmp_path / "c.pt"), "names of OpenSpiel's MLP"),
        "other rules": (other_rules, "game|rules"),
        "missing": (tmp_path / "none.pt", "does not exist"),
    }
    for what, (path, words) in cases.items():
        with pytest.raises(CheckpointError, match=words) as e:
            make_agent(f"openspiel:dqn,path={path}")
        assert "\n" not in str(e.value), what
    for spec, words in {
        "openspiel:dqn": "expected the file DQN saved",
        f"openspiel:ismcts,path={dqn_file}": "only dqn and nfsp",
        f"openspiel:dqn,path={dqn_file},sample=true": "only nfsp",
    }.items():
        with pytest.raises(ConfigError, match=words) as e:
            make_agent(spec)
        assert "\n" not in str(e.value), spec
    assert make_agent(f"openspiel:dqn,path={_mlp_file(tmp_path / 'ok.pt', (OBS_SIZE, 66))}")


def _dmc_like(path: Path) -> Path:
    torch.save(
        {"model": {"fc.weight": torch.zeros(66, OBS_SIZE), "fc.bias": torch.zeros(66)}}, path
    )
    return path
