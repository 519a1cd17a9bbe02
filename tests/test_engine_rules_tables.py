"""The RULES.md tables of tests/rules_tables.py, run against the batched engine itself.

The same rows check the oracle (test_oracle.py) and the scalar functions of rules.py
(test_rules_table.py); here they go through the engine's own vectorised code: minimum bids
and required totals as dealt, thrown-in decisions from real bids, score changes, and the
end-of-game decision, all rows of a table in one batch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fourhundred_env import rules as scalar
from fourhundred_env.engine import Engine, Phase
from fourhundred_env.rules import Rules
from tests.rules_tables import DELTA_ROWS, END_ROWS, MIN_BID_ROWS, PLAYED_ROWS, TOTAL_ROWS


def _engine(flags: dict) -> Engine:
    return Engine(Rules(**flags))


@pytest.mark.parametrize("row", MIN_BID_ROWS, ids=lambda r: f"{r.score}->{r.expected}")
def test_min_bid_as_dealt_and_as_legal_bids(row) -> None:
    engine = _engine(row.flags)
    state = engine.init(1, dealer=3, scores=np.array([row.score, 0, 0, 0]))
    engine.deal(state)
    assert state.min_bid[0, 0] == row.expected
    mask = engine.legal_mask(state)[0]
    bids = [a - 51 for a in np.flatnonzero(mask[52:65]) + 52]
    assert bids == list(range(row.expected, 14))


@pytest.mark.parametrize("row", TOTAL_ROWS, ids=lambda r: f"{r.scores}->{r.expected}")
def test_required_total_as_dealt(row) -> None:
    engine = _engine(row.flags)
    state = engine.init(1, dealer=0, scores=np.array(row.scores))
    engine.deal(state)
    assert state.required_total[0] == row.expected


def _reachable(row) -> bool:
    """Rows whose bids are all legal for their scores (others test the function alone)."""
    rules = Rules(**row.flags)
    return all(b >= scalar.min_bid(s, rules) for b, s in zip(row.bids, row.scores, strict=True))


@pytest.mark.parametrize(
    "row", [r for r in PLAYED_ROWS if _reachable(r)], ids=lambda r: f"{r.bids}"
)
def test_hand_played_or_thrown_in_from_real_bids(row) -> None:
    engine = _engine(row.flags)
    state = engine.init(1, dealer=3, scores=np.array(row.scores))
    engine.deal(state)
    for seat in range(4):  # dealer 3: seats bid 0, 1, 2, 3
        engine.step(state, np.array([51 + row.bids[seat]]))
    if row.played:
        assert state.phase[0] == Phase.PLAY and not state.thrown_in[0]
    else:
        assert state.phase[0] == Phase.HAND_OVER and state.thrown_in[0]
        assert state.scores[0].tolist() == list(row.scores)
        assert state.dealer[0] == 0  # the deal passed to the right


def test_score_changes_in_one_batch() -> None:
    """Every DELTA row as one seat of one table, scored by the engine's hand scoring."""
    for flags in ({}, dict(Rules.preset("pagat").to_dict())):
        rows = [r for r in DELTA_ROWS if Rules(**r.flags) == Rules(**flags)]
        engine = _engine(flags)
        n = len(rows)
        state = engine.init(n, dealer=0, scores=np.array([[r.score_before, 0, 0, 0] for r in rows]))
        engine.deal(state)
        state.bids[:, 0] = [r.bid for r in rows]
        state.bids[:, 1:] = 1
        state.tricks_won[:, 0] = [r.tricks for r in rows]
        state.tricks_won[:, 1:] = 1
        state.phase[:] = Phase.PLAY
        engine._score_hands(state, np.arange(n))
        assert state.hand_points[:, 0].tolist() == [r.delta for r in rows]
        assert state.scores[:, 0].tolist() == [r.after for r in rows]


def test_end_of_game_rows_in_one_batch() -> None:
    by_flags: dict[tuple, list] = {}
    for row in END_ROWS:
        by_flags.setdefault(tuple(sorted(row.flags.items())), []).append(row)
    for flags, rows in by_flags.items():
        engine = _engine(dict(flags))
        winner, target = engine.end_of_game(
            np.array([r.scores for r in rows]), np.array([r.target_before for r in rows])
        )
        for row, w, tgt in zip(rows, winner, target, strict=True):
            assert (None if w < 0 else int(w)) == row.winner, row.quote
            if row.winner is None:
                assert tgt == row.next_target, row.quote


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.lists(st.integers(-60, 80), min_size=4, max_size=4), min_size=1, max_size=40
    ),
    raised=st.integers(0, 3),
    mode=st.sampled_from(["extend", "highest_player", "highest_team_total"]),
    partner=st.booleans(),
)
def test_vectorised_end_of_game_equals_scalar(scores, raised, mode, partner) -> None:
    rules = Rules(simultaneous_finish=mode, partner_must_be_positive=partner)
    target = 41 + 10 * (raised if mode == "extend" else 0)
    winner, next_target = Engine(rules).end_of_game(np.array(scores), np.full(len(scores), target))
    for row, w, t in zip(scores, winner, next_target, strict=True):
        expected_winner, expected_target = scalar.end_of_game(row, target, rules)
        assert (None if w < 0 else int(w)) == expected_winner
        if expected_winner is None:
            assert t == expected_target
