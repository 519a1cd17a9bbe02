"""Scripted bots' compiled play-outs (agents/scripted/playout.py) and their position-keyed draws: the
same games as the bots' own `act` called round by round, whatever the batch."""

from __future__ import annotations

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.draws import view_uniforms
from fourhundred_env import Engine, Rules
from fourhundred_env.envs import FourHundredVectorEnv
from fourhundred_env.envs import driver as driver_module
from fourhundred_env.view import seat_view
from tests.envs_common import assert_same_data, pick_actions

OPPONENTS = [
    "random",
    "heuristic:epsilon=0.3",
    ("random:any", "minbid", "heuristic-v1", "heuristic:epsilon=0.5,sigma=1.4"),
]


def _run(env: FourHundredVectorEnv, steps: int, seed: int) -> list:
    out = []
    obs, info = env.reset(seed=seed)
    out.append((obs, info))
    for step in range(steps):
        actions = pick_actions(obs["action_mask"], step, np.arange(env.num_envs))
        obs, reward, terminated, truncated, info = env.step(actions)
        out.append((obs, reward, terminated, truncated, info))
    out.append(env.driver.state.records.copy())
    return out


@pytest.mark.parametrize("opponents", OPPONENTS, ids=["random", "epsilon", "mixed"])
def test_compiled_playouts_play_the_games_the_bots_own_act_plays(opponents, monkeypatch) -> None:
    kw = {"learner_seats": (1,), "opponents": opponents, "max_hands": 6}
    fused = FourHundredVectorEnv(12, **kw)
    fused_run = _run(fused, 150, seed=5)
    assert fused.driver._playout is not None
    monkeypatch.setattr(driver_module, "_playout", lambda agents: None)
    by_act = FourHundredVectorEnv(12, **kw)  # each bot's `act`, round by round
    slow_run = _run(by_act, 150, seed=5)
    assert by_act.driver._playout is None
    for k, (a, b) in enumerate(zip(fused_run, slow_run, strict=True)):
        for x, y in zip(a, b, strict=True) if isinstance(a, tuple) else [(a, b)]:
            assert_same_data(x, y, f"step {k}")


@pytest.mark.parametrize("opponents", OPPONENTS[:2], ids=["random", "epsilon"])
def test_a_table_plays_alone_as_in_its_batch_with_stochastic_opponents(opponents) -> None:
    kw = {"learner_seats": (0,), "opponents": opponents, "max_hands": 4}
    batch = FourHundredVectorEnv(6, **kw)
    obs, _ = batch.reset(seed=40)
    singles = [FourHundredVectorEnv(1, **kw) for _ in range(6)]
    single_obs = [env.reset(seed=40 + i)[0] for i, env in enumerate(singles)]
    for step in range(80):
        actions = pick_actions(obs["action_mask"], step, np.arange(6))
        obs, reward, term, trunc, _ = batch.step(actions)
        for i, env in enumerate(singles):
            o, r, t, u, _ = env.step(actions[i : i + 1])
            np.testing.assert_array_equal(o["observation"][0], obs["observation"][i])
            assert (r[0], t[0], u[0]) == (reward[i], term[i], trunc[i])
            single_obs[i] = o


def test_draws_are_fixed_by_the_position_and_the_game_stream() -> None:
    engine = Engine(Rules())
    state = engine.init(40, seed=3)
    engine.deal(state)
    view = seat_view(engine, state)
    agent = make_agent("random:any", seed=9)
    batched = agent.act(view)
    alone = np.concatenate([agent.act(view.select(np.array([j]))) for j in range(40)])
    np.testing.assert_array_equal(batched, alone)
    reversed_ = agent.act(view.select(np.arange(40)[::-1]))[::-1]
    np.testing.assert_array_equal(batched, reversed_)
    assert len(set(batched.tolist())) > 3  # different positions, different draws
    # another game stream or another seed: other draws
    u = np.empty(40)
    view_uniforms(view.records, agent.key, np.uint64(1), u)
    state.stream[:] = 12345
    other = np.empty(40)
    view_uniforms(seat_view(engine, state).records, agent.key, np.uint64(1), other)
    assert (u != other).all()
    assert (make_agent("random:any", seed=10).act(view) != batched).any()
