"""The compiled kernels' rule helpers give what the scalar functions of fourhundred_env.rules
give, the source of truth: for every bundled preset and for random rules profiles, over many
scores, bids and targets (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from fourhundred_env import kernels as K
from fourhundred_env import rules as R
from fourhundred_env.rules import PRESETS, Rules


@njit
def _kernel_bid_value(bid: int, score_before: int, rules: np.ndarray) -> int:
    return K.bid_value(bid, score_before, rules[0])


@njit
def _kernel_min_bid(score: int, rules: np.ndarray) -> int:
    return K.min_bid_of(score, rules[0])


@njit
def _kernel_required_total(scores: np.ndarray, rules: np.ndarray) -> int:
    return K.required_total_of(scores, rules[0])


@njit
def _kernel_hand_is_played(bids: np.ndarray, scores: np.ndarray, rules: np.ndarray) -> bool:
    return K.hand_is_played(bids, K.required_total_of(scores, rules[0]), rules[0])


@njit
def _kernel_qualifies(scores: np.ndarray, team: int, target: int, rules: np.ndarray) -> bool:
    return K.qualifies(scores, team, target, rules[0])


@njit
def _kernel_end_of_game(scores: np.ndarray, target: int, rules: np.ndarray) -> tuple[int, int]:
    return K.end_of_game(scores, target, rules[0])


PRESET_RULES = st.sampled_from([Rules.preset(name) for name in PRESETS])
ANY_RULES = st.builds(
    Rules,
    no_face_redeal=st.booleans(),
    min_bid_base=st.integers(1, 13),
    min_bid_escalates=st.booleans(),
    min_total_bids=st.integers(4, 104),
    escalate_total=st.booleans(),
    total_counted_in=st.sampled_from(["tricks", "points"]),
    five_to_run=st.booleans(),
    score_table=st.sampled_from(["wiki", "pagat"]),
    five_six_face_value_from=st.none() | st.integers(-60, 120),
    target=st.integers(1, 200),
    target_step=st.integers(1, 50),
    partner_must_be_positive=st.booleans(),
    simultaneous_finish=st.sampled_from(["extend", "highest_player", "highest_team_total"]),
)
PROFILES = PRESET_RULES | ANY_RULES
SCORE = st.integers(-300, 600)
SCORES = st.lists(SCORE, min_size=4, max_size=4)
BIDS = st.lists(st.integers(1, 13), min_size=4, max_size=4)
MANY = settings(max_examples=400, deadline=None)


def test_every_preset_is_among_the_profiles_checked() -> None:
    assert sorted(PRESETS) == ["pagat", "wiki"]  # a new preset: PRESET_RULES takes it too
    assert {Rules.preset(name).name for name in PRESETS} == set(PRESETS)


@MANY
@given(rules=PROFILES, bid=st.integers(1, 13), score=SCORE)
def test_bid_value(rules: Rules, bid: int, score: int) -> None:
    assert _kernel_bid_value(bid, score, K.rules_record(rules)) == R.bid_value(bid, score, rules)


@MANY
@given(rules=PROFILES, score=SCORE)
def test_min_bid(rules: Rules, score: int) -> None:
    assert _kernel_min_bid(score, K.rules_record(rules)) == R.min_bid(score, rules)


@MANY
@given(rules=PROFILES, scores=SCORES)
def test_required_total(rules: Rules, scores: list[int]) -> None:
    got = _kernel_required_total(np.array(scores, np.int32), K.rules_record(rules))
    assert got == R.required_total(scores, rules)


@MANY
@given(rules=PROFILES, bids=BIDS, scores=SCORES)
def test_hand_is_played(rules: Rules, bids: list[int], scores: list[int]) -> None:
    got = _kernel_hand_is_played(
        np.array(bids, np.int8), np.array(scores, np.int32), K.rules_record(rules)
    )
    assert got == R.hand_is_played(bids, scores, rules)


@MANY
@given(rules=PROFILES, scores=SCORES, team=st.sampled_from([0, 1]), raised=st.integers(0, 3))
def test_team_qualifies(rules: Rules, scores: list[int], team: int, raised: int) -> None:
    target = rules.target + raised * rules.target_step
    got = _kernel_qualifies(np.array(scores, np.int32), team, target, K.rules_record(rules))
    assert got == R.team_qualifies(scores, team, target, rules)


@MANY
@given(rules=PROFILES, scores=SCORES, raised=st.integers(0, 3))
def test_end_of_game(rules: Rules, scores: list[int], raised: int) -> None:
    target = rules.target + raised * rules.target_step
    winner, next_target = _kernel_end_of_game(
        np.array(scores, np.int32), target, K.rules_record(rules)
    )
    expected_winner, expected_target = R.end_of_game(scores, target, rules)
    assert (None if winner < 0 else winner, next_target) == (expected_winner, expected_target)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_bid_and_score_of_each_preset(name: str) -> None:
    """Every bid at every score from -100 to 200, in full, for each bundled preset."""
    rules = Rules.preset(name)
    record = K.rules_record(rules)
    for score in range(-100, 201):
        assert _kernel_min_bid(score, record) == R.min_bid(score, rules)
        for bid in range(1, 14):
            assert _kernel_bid_value(bid, score, record) == R.bid_value(bid, score, rules)
