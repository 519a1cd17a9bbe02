"""The observation encoder: layout, a known position decoded back to its facts, no hidden
information, batched equals one by one."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fourhundred_env import Engine, FourHundredError, Rules, Table
from fourhundred_env import observation as obs_mod
from fourhundred_env.cards import parse_card, parse_hand
from fourhundred_env.engine import State
from fourhundred_env.observation import (
    OBS_FIELDS,
    OBS_HIGH,
    OBS_HIGH_INT8,
    OBS_LOW,
    OBS_LOW_INT8,
    OBS_SCALE,
    OBS_SIZE,
    OBS_VERSION,
    decode_observation,
    encode_observation,
    require_obs_version,
)
from fourhundred_env.view import seat_view

# S0 leads two spades and wins both, then leads a diamond; S1 (no diamonds) ruffs with the 5 of
# hearts, S2 plays the ace of diamonds; S3 is to play to the third trick.
HANDS = [
    "AS KS QS 2H 3H 4H 2D 3D 4D 2C 3C 4C 5C",
    "AH KH QH JH 10H 9H 8H 7H 6H 5H JS 10S 9S",
    "AD KD QD JD 10D 9D 8D 7D 6D 5D 8S 7S 6S",
    "AC KC QC JC 10C 9C 8C 7C 6C 5S 4S 3S 2S",
]
SCORES = (-7, 35, 44, 3)  # S2 at 44 but partner S0 below 0: nobody has won yet
BIDS = ("3", "5", "4", "2")  # S0 first (dealer S3); total 14 >= required 13
PLAYS = ("AS", "JS", "8S", "2S", "KS", "10S", "7S", "3S", "2D", "5H", "AD")


def known_position(hands: list[str] = HANDS) -> Table:
    t = Table(dealer=3, scores=SCORES)
    t.deal(hands=hands)
    for action in BIDS + PLAYS:
        t.act(action)
    return t


def observe(t: Table, seat: int) -> np.ndarray:
    view = seat_view(t.engine, t.state, seat=np.array([seat]))
    return encode_observation(view)[0]


def cards(text: str) -> list[int]:
    return sorted(parse_hand(text, expected=None))


def test_layout_is_contiguous_and_documented() -> None:
    start = 0
    for name, field in OBS_FIELDS.items():
        assert field.name == name and field.start == start and field.size > 0
        start = field.stop
    assert start == OBS_SIZE == 588 and OBS_VERSION == 1
    # The module docstring's index table names every field with its exact range.
    doc = obs_mod.__doc__ or ""
    rows = re.findall(r"^(\w+)\s+(\d+)(?:-(\d+))?\s", doc, flags=re.MULTILINE)
    documented = {name: (int(a), int(b or a)) for name, a, b in rows if name in OBS_FIELDS}
    assert documented == {n: (f.start, f.stop - 1) for n, f in OBS_FIELDS.items()}
    assert f"{OBS_SIZE} entries" in doc
    assert OBS_LOW.shape == OBS_HIGH.shape == OBS_SCALE.shape == (OBS_SIZE,)
    assert (OBS_HIGH_INT8[OBS_FIELDS["scores"].slice] == 100).all()
    assert OBS_HIGH_INT8[OBS_FIELDS["required_total"].start] == 52
    assert (OBS_LOW[OBS_FIELDS["scores"].slice] == -1).all() and OBS_LOW.sum() == -4


def test_known_position_decodes_to_its_facts_for_the_seat_to_play() -> None:
    t = known_position()
    assert t.to_play == 3
    facts = decode_observation(observe(t, 3))
    # Viewer S3: rel_seat 1 is S0 (its right), 2 is S1 (partner), 3 is S2 (left).
    assert facts["hand"] == cards("AC KC QC JC 10C 9C 8C 7C 6C 5S 4S")
    assert facts["played"] == [
        cards("2S 3S"),
        cards("AS KS 2D"),
        cards("JS 10S 5H"),
        cards("8S 7S AD"),
    ]
    assert facts["trick"] == [None, parse_card("2D"), parse_card("5H"), parse_card("AD")]
    assert facts["trick_leader"] == 1 and facts["led_suit"] == 1  # S0 led a diamond
    assert facts["bids"] == [2, 3, 5, 4]
    assert facts["tricks_won"] == [0, 2, 0, 0]
    assert facts["tricks_needed"] == [2, 1, 5, 4]
    assert facts["scores"] == [3, -7, 35, 44]
    assert facts["at_target"] == [False, False, False, True]
    assert facts["positive"] == [True, False, True, True]
    assert facts["min_bid"] == [2, 2, 3, 4]
    assert (facts["required_total"], facts["bid_total"], facts["target"]) == (13, 14, 41)
    assert facts["dealer"] == 0 and facts["to_play"] == 0
    assert facts["num_tricks"] == 2
    assert facts["shown_void"] == [[], [], [1], []]  # S1 showed no diamonds
    assert facts["phase"] == 1


def test_known_position_from_a_seat_not_to_play() -> None:
    t = known_position()
    obs = observe(t, 0)
    facts = decode_observation(obs)
    # Viewer S0: rel_seat 1 is S1, 2 is S2 (partner), 3 is S3.
    assert facts["hand"] == cards("QS 2H 3H 4H 3D 4D 2C 3C 4C 5C")
    assert facts["trick"] == [parse_card("2D"), parse_card("5H"), parse_card("AD"), None]
    assert facts["trick_leader"] == 0 and facts["to_play"] == 3 and facts["dealer"] == 3
    assert facts["bids"] == [3, 5, 4, 2] and facts["scores"] == [-7, 35, 44, 3]
    assert facts["shown_void"] == [[], [1], [], []]
    view = seat_view(t.engine, t.state, seat=np.array([0]))
    assert not view.legal_mask.any()  # not S0's turn


def test_bidding_position_and_hand_over() -> None:
    t = Table(dealer=0, scores=(0, 12, 31, -3))
    t.deal(hands=HANDS)
    t.act("2")  # S1 bids first
    facts = decode_observation(observe(t, 2))
    assert facts["phase"] == 0 and facts["to_play"] == 0 and facts["dealer"] == 2
    assert facts["bids"] == [0, 0, 0, 2]  # S1 is S2's left: rel_seat 3
    assert facts["min_bid"] == [3, 2, 2, 2] and facts["required_total"] == 12
    assert facts["trick_leader"] is None and facts["trick"] == [None] * 4
    assert facts["hand"] == cards(HANDS[2])
    for bid in ("3", "2", "2"):  # total 9 < 12: thrown in
        t.act(bid)
    assert t.phase == "hand_over"
    facts = decode_observation(observe(t, 2))
    assert facts["phase"] == 2 and facts["to_play"] is None
    assert facts["dealer"] == 3  # between hands: the next hand's dealer (S1)


def test_no_hidden_information_leaks() -> None:
    """Two deals that differ only in cards other seats still hold: S3 sees the same thing."""
    swapped = [h.split() for h in HANDS]  # two swaps of cards nobody has played yet
    swapped[1][swapped[1].index("9S")], swapped[2][swapped[2].index("6S")] = "6S", "9S"
    swapped[0][swapped[0].index("3C")], swapped[2][swapped[2].index("5D")] = "5D", "3C"
    t1 = known_position()
    t2 = known_position([" ".join(h) for h in swapped])
    assert not np.array_equal(t1.state.hand_set, t2.state.hand_set)
    assert np.array_equal(observe(t1, 3), observe(t2, 3))
    assert not np.array_equal(observe(t1, 2), observe(t2, 2))  # S2's own hand differs


def random_positions(b: int, steps: int, seed: int) -> tuple[Engine, State]:
    engine = Engine(Rules())
    state = engine.init(b, seed=seed, scores=np.array([0, 15, 33, -12]))
    engine.deal(state)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        engine.step(state, engine.random_actions(state, rng, max_bid=5))
        done = np.flatnonzero(state.phase == 2)
        if done.size and rng.random() < 0.8:
            engine.deal(state, done)
    return engine, state


@pytest.mark.parametrize("seat_choice", ["to_play", "fixed"])
def test_batched_equals_one_by_one_and_bounds(seat_choice: str) -> None:
    engine, state = random_positions(64, 37, seed=5)
    seats = None if seat_choice == "to_play" else np.full(64, 2)
    if seats is None:
        seats = np.where(state.to_play >= 0, state.to_play, 1)
    view = seat_view(engine, state, seat=seats)
    batch = encode_observation(view)
    assert batch.dtype == np.float32 and batch.shape == (64, OBS_SIZE)
    assert (batch >= OBS_LOW).all() and (batch <= OBS_HIGH).all()
    for i in range(64):
        one = encode_observation(view.select(np.array([i])))
        assert np.array_equal(one[0], batch[i])
        facts = decode_observation(batch[i])
        seat = int(seats[i])
        assert len(facts["hand"]) == int(np.bitwise_count(state.hand_set[i, seat]))
        num_played = 4 * int(state.num_tricks[i]) + int(state.trick_size[i])
        assert sum(map(len, facts["played"])) == num_played
    out = np.full((64, OBS_SIZE), 7.0, np.float32)
    assert encode_observation(view, out) is out and np.array_equal(out, batch)
    # The int8 encoding holds the same facts unscaled: times OBS_SCALE, exactly the float32 one.
    raw = encode_observation(view, dtype=np.int8)
    assert raw.dtype == np.int8 and np.array_equal(raw * OBS_SCALE, batch)
    assert (raw >= OBS_LOW_INT8).all() and (raw <= OBS_HIGH_INT8).all()
    assert decode_observation(raw[5]) == decode_observation(batch[5])
    out8 = np.full((64, OBS_SIZE), 7, np.int8)
    assert encode_observation(view, out8) is out8 and np.array_equal(out8, raw)


def test_bad_input() -> None:
    engine, state = random_positions(4, 3, seed=1)
    view = seat_view(engine, state)
    with pytest.raises(FourHundredError, match="expected"):
        encode_observation(view, np.zeros((3, OBS_SIZE), np.float32))
    with pytest.raises(FourHundredError, match="float32 or int8"):
        encode_observation(view, dtype=np.float64)
    view.seat[0] = -1
    with pytest.raises(FourHundredError, match="viewer seats"):
        encode_observation(view)
    with pytest.raises(FourHundredError, match=r"\(588,\)"):
        decode_observation(np.zeros(10))


def test_require_obs_version() -> None:
    require_obs_version(OBS_VERSION)
    with pytest.raises(FourHundredError, match="layout version 0"):
        require_obs_version(0, "model.pt")
