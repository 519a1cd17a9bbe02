"""Card and action encodings: round trips and clear errors for malformed text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fourhundred_env.cards import (
    BID_OFFSET,
    FACE_SET,
    NUM_ACTIONS,
    REDEAL_ACTION,
    SUIT_SETS,
    Suit,
    action_text,
    card_text,
    cards_to_set,
    hand_text,
    parse_action,
    parse_card,
    parse_deal,
    parse_hand,
    set_to_cards,
)
from fourhundred_env.engine import unpack_sets
from fourhundred_env.errors import CardError, DealError


@pytest.mark.parametrize(
    ("text", "card"),
    [("2C", 0), ("AC", 12), ("2D", 13), ("KS", 37), ("2H", 39), ("AH", 51), ("10S", 34),
     ("TS", 34), ("ts", 34), (" qd ", 23), ("JH", 48)],
)  # fmt: skip
def test_card_ids_follow_13_suit_plus_rank(text: str, card: int) -> None:
    """RULES.md: card id c = 13 * suit + rank, suits clubs, diamonds, spades, hearts; rank 0 = 2."""
    assert parse_card(text) == card


def test_every_card_and_action_round_trips() -> None:
    for c in range(52):
        assert parse_card(card_text(c)) == c
    for a in range(NUM_ACTIONS):
        assert parse_action(action_text(a)) == a
    assert [action_text(BID_OFFSET + b) for b in (1, 13)] == ["1", "13"]
    assert action_text(REDEAL_ACTION) == "redeal" and parse_action("Redeal") == REDEAL_ACTION
    assert Suit.HEARTS == 3


@given(st.sets(st.integers(0, 51)))
def test_card_sets_round_trip(cards: set[int]) -> None:
    s = cards_to_set(cards)
    assert set_to_cards(s) == sorted(cards)
    assert np.flatnonzero(unpack_sets(np.array([s]), 52)[0]).tolist() == sorted(cards)


def test_suit_and_face_sets() -> None:
    assert [len(set_to_cards(s)) for s in SUIT_SETS] == [13] * 4
    faces = {card_text(c) for c in set_to_cards(FACE_SET)}
    assert faces == {r + s for r in "JQKA" for s in "CDSH"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "malformed card"), ("A", "malformed card"), ("1H", "unknown rank '1'"),
     ("11S", "unknown rank '11'"), ("AX", "unknown suit 'X'"), ("ZZ", "unknown suit 'Z'")],
)  # fmt: skip
def test_malformed_cards(text: str, message: str) -> None:
    with pytest.raises(CardError, match=message):
        parse_card(text)


def test_malformed_hands_and_actions() -> None:
    with pytest.raises(CardError, match="duplicate card 'AH'"):
        parse_hand("AH KH AH", expected=None)
    with pytest.raises(CardError, match="has 3 cards: expected 13"):
        parse_hand("AH, KH, QH")
    with pytest.raises(CardError, match="bid '14' is out of range"):
        parse_action("14")
    with pytest.raises(CardError, match="action id 66 is out of range"):
        parse_action(66)
    for text in ("²", "٣"):  # digits to str.isdigit, not to int()
        with pytest.raises(CardError):
            parse_action(text)
    assert hand_text(cards_to_set(parse_hand("2C AH 10H KS", None))) == "AH 10H | KS | 2C"


RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUIT_HANDS = [" ".join(r + s for r in RANKS) for s in "SHDC"]


def test_a_deal_is_four_hands_of_every_card_once() -> None:
    sets = parse_deal(SUIT_HANDS)
    assert sets.dtype == np.uint64 and sets.shape == (4,)
    assert [hand_text(s) for s in sets] == [
        hand_text(cards_to_set(parse_hand(h))) for h in SUIT_HANDS
    ]
    assert int(np.bitwise_or.reduce(sets)) == (1 << 52) - 1


@pytest.mark.parametrize(
    ("hands", "seat", "message"),
    [
        (SUIT_HANDS[:3], None, "expected 4 hands"),
        ([*SUIT_HANDS[:3], "AC KC"], 3, "has 2 cards: expected 13"),
        ([*SUIT_HANDS[:3], SUIT_HANDS[3].replace("2C", "AC")], 3, "duplicate card 'AC'"),
        ([*SUIT_HANDS[:3], SUIT_HANDS[3].replace("2C", "AS")], None,
         "card AS is dealt to seat 0 and to seat 3: expected every card exactly once"),
    ],
)  # fmt: skip
def test_a_bad_deal_names_the_seat_at_fault(
    hands: list[str], seat: int | None, message: str
) -> None:
    with pytest.raises(DealError, match=message) as caught:
        parse_deal(hands)
    assert caught.value.seat == seat


def test_a_card_dealt_twice_is_named_with_the_callers_seat_names() -> None:
    hands = [SUIT_HANDS[0].replace("2S", "AH"), *SUIT_HANDS[1:]]
    with pytest.raises(DealError, match="card AH is dealt to S0 and to S1"):
        parse_deal(hands, ("S0", "S1", "S2", "S3"))
