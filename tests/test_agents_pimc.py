"""The `pimc` search bot: random deals consistent with a seat's view, and legal moves."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.search.pimc import determinize
from fourhundred_env import Engine, Rules
from fourhundred_env.cards import FULL_DECK
from fourhundred_env.engine import Phase, unpack_sets
from fourhundred_env.errors import FourHundredError
from fourhundred_env.view import seat_view
from tests.test_rollout import _mid_hand_states


def _cards(sets: np.ndarray) -> np.ndarray:
    return unpack_sets(np.ascontiguousarray(sets).reshape(-1), 52).reshape(*sets.shape, 52)


@pytest.mark.parametrize("seed", [2, 9])
def test_worlds_agree_with_everything_the_seat_has_seen(seed: int) -> None:
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    state = _mid_hand_states(engine, base, 48, seed)
    view = seat_view(engine, state)
    worlds = 8
    keys = np.arange(view.size, dtype=np.uint64) * np.uint64(7919) + np.uint64(seed)
    det = determinize(engine, view, worlds, keys)
    assert det.batch_size == view.size * worlds
    rep = np.repeat(np.arange(view.size), worlds)

    # the seat's own view of every world is its view of the real table
    again = seat_view(engine, det)
    for f in fields(view):
        if f.name != "table":
            np.testing.assert_array_equal(
                getattr(again, f.name), getattr(view, f.name)[rep], f.name
            )

    # the unseen cards are dealt out: disjoint hands, true sizes, the true unseen set
    true = state.select(rep)
    held = _cards(det.hand_set).astype(int)
    assert (held.sum(1) <= 1).all()  # no card twice
    np.testing.assert_array_equal(held.sum(2), _cards(true.hand_set).sum(2))
    np.testing.assert_array_equal(np.bitwise_or.reduce(det.hand_set, axis=1),
                                  np.bitwise_or.reduce(true.hand_set, axis=1))  # fmt: skip
    assert (np.bitwise_or.reduce(det.dealt_set, axis=1) == FULL_DECK).all()

    # nobody holds a suit it has shown void in
    suits = held.reshape(len(held), 4, 4, 13).sum(3) > 0  # (n, seat, suit)
    void = (det.shown_void[:, :, None] >> np.arange(4, dtype=np.uint8)) & 1
    assert not (suits & (void == 1)).any()

    # the worlds differ: the hidden cards are really dealt at random
    assert len({tuple(h) for h in det.hand_set[:worlds].tolist()}) > 1


def test_pimc_plays_legal_moves_the_same_for_the_same_seed() -> None:
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    state = _mid_hand_states(engine, base, 32, 4)
    view = seat_view(engine, state)
    first = make_agent("pimc:worlds=4", rules, seed=1).act(view)
    assert view.legal_mask[np.arange(view.size), first].all()
    np.testing.assert_array_equal(first, make_agent("pimc:worlds=4", rules, seed=1).act(view))

    # bids: searched with bids=1, left to the base agent otherwise
    bidding = engine.init(8, seed=3)
    engine.deal(bidding)
    view = seat_view(engine, bidding)
    assert (view.phase == Phase.BID).all()
    np.testing.assert_array_equal(
        make_agent("pimc:worlds=2", rules, seed=0).act(view), base.act(view)
    )
    searched = make_agent("pimc:worlds=2,bids=1", rules, seed=0).act(view)
    assert view.legal_mask[np.arange(view.size), searched].all()


def test_pimc_decides_each_position_alone_whatever_the_batch() -> None:
    """A table's move depends on the position, the game's stream and the seed, never on
    which other tables share the call (what makes a resumed tournament equal a straight one)."""
    rules = Rules()
    engine = Engine(rules)
    base = make_agent("heuristic-v1", rules, seed=0)
    state = _mid_hand_states(engine, base, 24, 6)
    n = state.batch_size
    state.stream[:] = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    view = seat_view(engine, state)
    whole = make_agent("pimc:worlds=3", rules, seed=5).act(view)
    one_by_one = [make_agent("pimc:worlds=3", rules, seed=5).act(view.select([i]))[0]
                  for i in range(view.size)]  # fmt: skip
    reversed_batch = make_agent("pimc:worlds=3", rules, seed=5).act(
        view.select(np.arange(n - 1, -1, -1))
    )
    np.testing.assert_array_equal(whole, one_by_one)
    np.testing.assert_array_equal(whole, reversed_batch[::-1])
    # the worlds of a position hang on its key alone
    keys = np.arange(view.size, dtype=np.uint64) + np.uint64(11)
    det = determinize(engine, view, 4, keys)
    sub = determinize(engine, view.select([5, 2]), 4, keys[[5, 2]])
    np.testing.assert_array_equal(
        det.hand_set.reshape(n, 4, 4)[[5, 2]], sub.hand_set.reshape(2, 4, 4)
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("pimc:worlds=0", "worlds=0: expected 1 to 65,536"),
        ("pimc:worlds=100000", "worlds=100000: expected 1 to 65,536"),
        ("pimc:depth=2", r"'pimc:depth=2': unknown key\(s\) \['depth'\]: expected some of"),
        ("pimc:worlds=many", "'pimc:worlds=many': worlds='many': expected an integer"),
        ("pimc:base=nobody", "unknown agent 'nobody'"),
    ],
)
def test_bad_pimc_specs_name_the_option(spec: str, message: str) -> None:
    with pytest.raises(FourHundredError, match=message):
        make_agent(spec, Rules(), seed=0)
