"""The copies between table and view records (`fourhundred_env.view`) take every field of
:class:`State` into account: a table copied whole, a view cut from a table, a table rebuilt
from a view. Fields are filled with random bytes so that a field left out shows."""

from __future__ import annotations

import numpy as np
import pytest

from fourhundred_env import Engine, Rules
from fourhundred_env.engine import State
from fourhundred_env.errors import FourHundredError
from fourhundred_env.view import (
    PUBLIC_ARRAYS,
    PUBLIC_SCALARS,
    TABLE_ARRAYS,
    TABLE_SCALARS,
    SeatView,
    copy_table,
    seat_view,
    world_state,
)

NOT_COPIED_TO_A_VIEW = {
    "scores",  # the view has the scores before the hand
    "winner",
    "dealt_set",  # the view has what each seat played (dealt_set & ~hand_set)
    "hand_set",  # the view has the viewer's own
    "forfeit",
    "hand_points",
    "thrown_in",
    "redeal_seat",
    "claim_seat",
    "match_id",
    "hand_index",
}
"""The State fields a seat view does not hold as they are. A field added to State is either
added to SeatView (then copied with no other edit) or named here."""


def _random_records(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    records = np.zeros(n, dtype)
    raw = records.view(np.uint8)
    raw[:] = np.random.default_rng(seed).integers(0, 256, raw.shape, dtype=np.uint8)
    return records


def test_a_table_copy_copies_every_field_of_state() -> None:
    assert set(TABLE_SCALARS + TABLE_ARRAYS) == set(State.DTYPE.names)
    src = _random_records(State.DTYPE, 3, seed=1)
    dst = np.zeros(3, State.DTYPE)
    for j in range(3):
        copy_table(src[j], dst[j])
    for name in State.DTYPE.names:
        np.testing.assert_array_equal(dst[name], src[name], err_msg=name)


def test_every_field_of_state_reaches_a_view_or_is_named_as_not_shown() -> None:
    public = set(PUBLIC_SCALARS + PUBLIC_ARRAYS)
    assert public | NOT_COPIED_TO_A_VIEW == set(State.DTYPE.names)
    assert not public & NOT_COPIED_TO_A_VIEW
    assert public <= set(SeatView.DTYPE.names)


def test_a_view_holds_every_public_field_of_its_table_as_it_is() -> None:
    engine = Engine(Rules())
    state = State.from_records(_random_records(State.DTYPE, 5, seed=2), seed=0)
    state.to_play = 1  # the viewer (seat 2) is not to play: no legal mask is worked out
    view = seat_view(engine, state, seat=2)
    for name in PUBLIC_SCALARS + PUBLIC_ARRAYS:
        np.testing.assert_array_equal(getattr(view, name), getattr(state, name), err_msg=name)
    np.testing.assert_array_equal(view.hand_set, state.hand_set[:, 2])
    np.testing.assert_array_equal(view.played_set, state.dealt_set & ~state.hand_set)
    np.testing.assert_array_equal(view.table, np.arange(5))
    assert (view.seat == 2).all() and not view.legal_mask.any()


def test_a_world_holds_every_public_field_of_its_view_and_the_rest_as_dealt() -> None:
    engine = Engine(Rules())
    view = SeatView.from_records(_random_records(SeatView.DTYPE, 4, seed=3))
    hands = np.random.default_rng(4).integers(0, 2**52, (6, 4), dtype=np.uint64)
    rep = np.array([0, 3, 3, 1, 2, 0])
    state = world_state(engine, view, hands, rep)
    fresh = engine.init(6)
    for name in PUBLIC_SCALARS + PUBLIC_ARRAYS:
        np.testing.assert_array_equal(getattr(state, name), getattr(view, name)[rep], name)
    np.testing.assert_array_equal(state.scores, view.scores_before[rep])
    np.testing.assert_array_equal(state.hand_set, hands)
    np.testing.assert_array_equal(state.dealt_set, hands | view.played_set[rep])
    for name in NOT_COPIED_TO_A_VIEW - {"scores", "hand_set", "dealt_set"}:
        np.testing.assert_array_equal(getattr(state, name), getattr(fresh, name), name)


def test_a_world_of_cards_beyond_the_pack_is_refused_in_one_line() -> None:
    """Bits 52-63 of a card set are no card: world_state took them (a search bot's worlds are
    its own, but the function is public)."""
    engine = Engine(Rules())
    view = SeatView.from_records(_random_records(SeatView.DTYPE, 2, seed=3))
    hands = np.zeros((2, 4), np.uint64)
    hands[1, 2] = np.uint64(1) << np.uint64(60)
    with pytest.raises(FourHundredError, match="cards numbered 52 to 63: expected card sets"):
        world_state(engine, view, hands)
