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
    parse_hand,
    set_to_cards,
)
from fourhundred_env.engine import unpack_sets
from fourhundred_env.errors import CardError


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
