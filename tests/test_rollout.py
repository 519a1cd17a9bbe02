"""Rollout values (agents/search/rollout.py): each legal card played out on the true table by
the base agent, checked table by table against a plain one-table-at-a-time loop."""

from __future__ import annotations

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.search.rollout import rollout_targets, rollout_values
from fourhundred_env import Engine, Rules
from fourhundred_env.engine import Phase, State
from fourhundred_env.view import seat_view


def _mid_hand_states(engine: Engine, base, tables: int, seed: int):
    """Tables stopped at a random card-play decision of a hand played by `base`."""
    rng = np.random.default_rng(seed)
    state = engine.init(tables, seed=seed)
    engine.deal(state)
    stop = rng.integers(0, 48, tables)  # cards played before the position
    played = np.zeros(tables, np.int64)
    while True:
        go = (state.phase == Phase.BID) | ((state.phase == Phase.PLAY) & (played < stop))
        if not go.any():
            break
        rows = np.flatnonzero(go)
        actions = np.zeros(tables, np.int64)
        actions[rows] = base.act(seat_view(engine, state, index=rows))
        played += (state.phase == Phase.PLAY) & go
        engine.step(state, actions, active=go)
    return state.select(np.flatnonzero(state.phase == Phase.PLAY))


def _one_table_value(engine: Engine, state, card: int, base, team=None) -> int:
    """The acting seat's team's hand points after `card` (or bid), played out on one table
    (by `team` at the acting seat's partnership's seats, when given)."""
    table = state.copy()
    seat = int(table.to_play[0])
    engine.step(table, np.array([card]))
    while table.phase[0] in (Phase.BID, Phase.PLAY):
        ours = (int(table.to_play[0]) - seat) % 2 == 0
        agent = team if team is not None and ours else base
        engine.step(table, agent.act(seat_view(engine, table)))
    return int(table.hand_points[0, seat] + table.hand_points[0, (seat + 2) % 4])


@pytest.mark.parametrize("seed", [3, 11])
def test_values_match_a_one_table_loop_and_leave_the_state_as_it_was(seed: int) -> None:
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    state = _mid_hand_states(engine, base, 24, seed)
    assert state.batch_size > 10
    before = state.copy()
    values = rollout_values(engine, state, base)
    assert state.equals(before)
    legal = engine.legal_mask(state)
    assert np.isneginf(values[~legal]).all()
    for i in range(state.batch_size):
        one = state.select([i])
        for card in np.flatnonzero(legal[i]):
            assert values[i, card] == _one_table_value(engine, one, int(card), base), (i, card)


def test_targets_hold_every_legal_cards_value_and_the_base_agents_own_card() -> None:
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    parts = [_mid_hand_states(engine, base, 64, s) for s in (5, 6)]
    state = State.concat(parts)
    assert state.batch_size == sum(p.batch_size for p in parts)
    values, own = rollout_targets(engine, state, base)
    np.testing.assert_array_equal(np.isfinite(values), engine.legal_mask(state))
    np.testing.assert_array_equal(own, base.act(seat_view(engine, state)))
    rows = np.arange(state.batch_size)
    gap = values.max(axis=1) - values[rows, own]
    assert (gap >= 0).all() and (gap > 0).any()  # the base agent is not always best


def test_bids_are_valued_by_playing_out_the_whole_hand() -> None:
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    state = engine.init(6, seed=4)
    engine.deal(state)  # the first bid of each hand
    values = rollout_values(engine, state, base)
    legal = engine.legal_mask(state)
    np.testing.assert_array_equal(np.isfinite(values), legal)
    for i in range(state.batch_size):
        for action in np.flatnonzero(legal[i]):
            assert values[i, action] == _one_table_value(
                engine, state.select([i]), int(action), base
            )


class _FirstLegal:
    """A deterministic stand-in for the learner: the lowest legal action, from its own view."""

    def act(self, view) -> np.ndarray:
        return view.legal_mask.argmax(axis=1)


@pytest.mark.parametrize("bids", [False, True])
def test_a_team_agent_plays_the_acting_partnerships_seats_and_the_base_the_others(
    bids: bool,
) -> None:
    """Policy iteration's play-outs: `team` acts for the acting seat and its partner, `base`
    for the two opponents, each from its own view, checked table by table."""
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    team = _FirstLegal()
    if bids:
        state = engine.init(6, seed=8)
        engine.deal(state)
    else:
        state = _mid_hand_states(engine, base, 16, seed=21)
    before = state.copy()
    values = rollout_values(engine, state, base, team)
    assert state.equals(before)
    legal = engine.legal_mask(state)
    np.testing.assert_array_equal(np.isfinite(values), legal)
    for i in range(state.batch_size):
        for action in np.flatnonzero(legal[i]):
            one = state.select([i])
            assert values[i, action] == _one_table_value(engine, one, int(action), base, team)
    assert (values != rollout_values(engine, state, base))[legal].any()  # the team did play


def test_tables_without_a_pending_decision_are_refused() -> None:
    engine = Engine()
    state = engine.init(4, seed=1)  # between hands: nothing to decide
    with pytest.raises(ValueError, match=r"tables \[0, 1, 2, 3\] have no decision pending"):
        rollout_values(engine, state, make_agent("heuristic-v1", Rules(), seed=0))
