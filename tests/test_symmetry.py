"""The plain suits are equal (RULES.md: "the other three suits are equal"): a game with the
suits renamed is the same game, seen through fourhundred_env.symmetry's index maps."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fourhundred_env.cards import NUM_ACTIONS, card_text, parse_card
from fourhundred_env.observation import OBS_FIELDS, encode_observation
from fourhundred_env.symmetry import (
    SUIT_MAPS,
    SUIT_PERMUTATIONS,
    card_permutation,
    inverse,
    permutation_maps,
)
from fourhundred_env.table import Table
from fourhundred_env.view import seat_view


def test_six_renamings_of_the_plain_suits_hearts_fixed():
    assert len(set(SUIT_PERMUTATIONS)) == 6
    assert SUIT_PERMUTATIONS[0] == (0, 1, 2, 3)
    assert all(p[3] == 3 and sorted(p) == [0, 1, 2, 3] for p in SUIT_PERMUTATIONS)


@given(st.sampled_from(SUIT_PERMUTATIONS))
def test_maps_are_permutations_and_inverse_undoes_them(perm):
    obs_src, action_src = permutation_maps(perm)
    assert sorted(obs_src) == list(range(obs_src.size))
    assert sorted(action_src) == list(range(NUM_ACTIONS))
    assert (action_src[52:] == np.arange(52, NUM_ACTIONS)).all()  # bids are not renamed
    x = np.random.default_rng(0).normal(size=obs_src.size)
    assert (x[obs_src][inverse(obs_src)] == x).all()


def test_a_card_keeps_its_rank_and_hearts_stay_hearts():
    perm = (2, 0, 1, 3)  # clubs -> spades, diamonds -> clubs, spades -> diamonds
    new = card_permutation(perm)
    assert card_text(int(new[parse_card("QC")])) == "QS"
    assert card_text(int(new[parse_card("2D")])) == "2C"
    assert card_text(int(new[parse_card("AH")])) == "AH"


def _renamed(text: str, new: np.ndarray) -> str:
    return card_text(int(new[parse_card(text)]))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(SUIT_PERMUTATIONS[1:]))
def test_a_renamed_game_is_seen_as_the_renamed_observation(seed, perm):
    """Two tables, one dealt the renamed hands and played the renamed moves: at every
    decision, each seat's observation and legal moves are the first table's, renamed."""
    obs_src, action_src = permutation_maps(perm)
    new = card_permutation(perm)
    a, b = Table(seed=seed), Table(seed=seed)
    a.deal(seed=seed)
    b.deal([[_renamed(c, new) for c in a.hand(s)] for s in range(4)])
    rng = np.random.default_rng(seed)
    while a.phase in ("bid", "play"):
        assert b.phase == a.phase and b.to_play == a.to_play
        for seat in range(4):
            va = seat_view(a.engine, a.state, np.array([0]), seat=seat)
            vb = seat_view(b.engine, b.state, np.array([0]), seat=seat)
            assert (encode_observation(vb) == encode_observation(va)[:, obs_src]).all()
            assert (vb.legal_mask == va.legal_mask[:, action_src]).all()
        action = int(rng.choice(a.legal_ids()))
        a.act(action)
        b.act(int(inverse(action_src)[action]))
    assert a.scores == b.scores and a.tricks_won == b.tricks_won


def test_suit_fields_are_renamed_too():
    """led_suit and shown_void move with the suits (not only the 52-card blocks)."""
    perm = SUIT_PERMUTATIONS[3]
    obs_src, _ = SUIT_MAPS[3]
    led = OBS_FIELDS["led_suit"]
    x = np.zeros(obs_src.size)
    x[led.start + 0] = 1  # clubs led
    assert x[obs_src][led.start + perm[0]] == 1
