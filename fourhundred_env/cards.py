"""Card and action encodings, and card text.

Card id ``c = 13 * suit + rank``: suits clubs, diamonds, spades, hearts (hearts always trump);
rank 0 is the 2, rank 12 the ace. A set of cards is a uint64 bitmask with bit ``c`` set.

Actions (one discrete space of 66, fixed): 0-51 play card ``c``; 52-64 bid 1..13
(``BID_OFFSET + bid``); 65 asks for a no-picture redeal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum

import numpy as np

from fourhundred_env.errors import CardError, DealError, short


class Suit(IntEnum):
    """The four suits, numbered as in card ids (``card // 13``); hearts are always trump."""

    CLUBS = 0
    DIAMONDS = 1
    SPADES = 2
    HEARTS = 3


NUM_CARDS = 52
NUM_ACTIONS = 66
BID_OFFSET = 51  # action = BID_OFFSET + bid, bids 1..13 -> 52..64
REDEAL_ACTION = 65
TRUMP = Suit.HEARTS

SUIT_LETTERS = "CDSH"
SUIT_SYMBOLS = "♣♦♠♥"
RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
_RANK_ALIASES = {"T": 8, "1": None}  # "TS" == "10S"; "1" alone is not a rank

U64 = np.uint64
ONE = U64(1)
SUIT_SETS = np.array([((1 << 13) - 1) << (13 * s) for s in range(4)], dtype=np.uint64)
"""SUIT_SETS[s]: bitmask of all 13 cards of suit s."""
FACE_SET = U64(sum(1 << (13 * s + r) for s in range(4) for r in (9, 10, 11, 12)))
"""All jacks, queens, kings and aces: a hand without any may ask for a redeal."""
FULL_DECK = U64((1 << NUM_CARDS) - 1)


def card_id(suit: int, rank: int) -> int:
    """Card id ``13 * suit + rank`` of suit 0..3 and rank 0..12 (not range-checked)."""
    return 13 * int(suit) + int(rank)


def card_suit(card: int) -> int:
    """Suit 0..3 of card id `card` (``card // 13``; not range-checked)."""
    return int(card) // 13


def card_rank(card: int) -> int:
    """Rank 0..12 (0 the 2, 12 the ace) of card id `card` (``card % 13``; not range-checked)."""
    return int(card) % 13


def _integer(value: object, what: str) -> int:
    """`value` as an int if it is an integer (Python or numpy, not a bool); else CardError."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise CardError(f"{what} {short(value)}: expected an integer")
    return int(value)


def card_text(card: int) -> str:
    """``"AH"``, ``"10S"``, ``"2C"``."""
    card = _integer(card, "card id")
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"card id {card} is out of range: expected 0 to 51")
    return RANK_TEXT[card % 13] + SUIT_LETTERS[card // 13]


def parse_card(text: str) -> int:
    """Card id of ``"AH"``, ``"10S"``, ``"TS"``, ``"2c"`` (case and surrounding spaces ignored)."""
    if not isinstance(text, str):
        raise CardError(f"card {short(text)} is not text: expected a card like 'AH', '10S' or '2C'")
    t = text.strip().upper()
    if not 2 <= len(t) <= 3:
        raise CardError(
            f"malformed card {short(text)}: expected rank then suit, like 'AH', '10S', '2C'"
        )
    rank_text, suit_text = t[:-1], t[-1]
    suit = SUIT_LETTERS.find(suit_text)
    if suit < 0:
        raise CardError(
            f"unknown suit {short(suit_text)} in card {short(text)}: expected one of C, D, S, H"
        )
    if rank_text == "T":
        rank = 8
    elif rank_text in RANK_TEXT:
        rank = RANK_TEXT.index(rank_text)
    else:
        raise CardError(
            f"unknown rank {short(rank_text)} in card {short(text)}: expected one of "
            + ", ".join(RANK_TEXT)
            + " (or T for 10)"
        )
    return card_id(suit, rank)


def parse_hand(text: str | Sequence[str], expected: int | None = 13) -> list[int]:
    """Card ids of a hand written as text or a list of cards.

    Text is cards separated by spaces or commas (``"AH KH 10S 2C"``), optionally grouped by
    suit with ``|`` as :func:`hand_text` writes them (``"AH 10H | KS | 2C"``); ``"-"`` is the
    empty hand. Raises CardError on a malformed card, a duplicate, or (if `expected` is set) a
    wrong count.
    """
    if expected is not None:
        expected = _integer(expected, "expected card count")
    if isinstance(text, str):
        tokens = text.replace(",", " ").replace("|", " ").split()
        if tokens == ["-"]:
            tokens = []
    elif isinstance(text, Iterable) and not isinstance(text, bytes):
        tokens = list(text)
    else:
        raise CardError(f"hand {short(text)}: expected text like 'AH KH 10S' or a list of cards")
    cards = [parse_card(tok) for tok in tokens]
    seen: set[int] = set()
    for tok, c in zip(tokens, cards, strict=True):
        if c in seen:
            raise CardError(f"duplicate card {short(tok)} in hand {short(text)}")
        seen.add(c)
    if expected is not None and len(cards) != expected:
        raise CardError(f"hand {short(text)} has {len(cards)} cards: expected {expected}")
    return cards


SEAT_NAMES = ("seat 0", "seat 1", "seat 2", "seat 3")


def parse_deal(
    hands: Sequence[str | Sequence[str]], seat_names: Sequence[str] = SEAT_NAMES
) -> np.ndarray:
    """The 4 hands of a deal (text or lists of cards, by seat) -> (4,) uint64 card sets.

    The one check of a deal written by hand: each hand 13 cards as :func:`parse_hand` reads
    them, every card exactly once. Raises DealError: `seat` set for a malformed hand, None for
    a card dealt to two seats (named by `seat_names` in the message).
    """
    if isinstance(hands, str | bytes) or not isinstance(hands, Sequence) or len(hands) != 4:
        raise DealError(f"{short(hands)}: expected 4 hands, one per seat 0-3")
    owner: dict[int, int] = {}
    sets = np.zeros(4, dtype=np.uint64)
    for seat, text in enumerate(hands):
        try:
            cards = parse_hand(text)
        except CardError as e:
            raise DealError(str(e), seat) from None
        for c in cards:
            if c in owner:
                raise DealError(
                    f"card {card_text(c)} is dealt to {seat_names[owner[c]]} and to "
                    f"{seat_names[seat]}: expected every card exactly once"
                )
            owner[c] = seat
        sets[seat] = cards_to_set(cards)
    return sets


def cards_to_set(cards: Iterable[int]) -> np.uint64:
    """The uint64 set of card ids 0..51."""
    out = 0
    for c in cards:
        c = _integer(c, "card id")
        if not 0 <= c < NUM_CARDS:
            raise CardError(f"card id {c} is out of range: expected 0 to 51")
        out |= 1 << c
    return U64(out)


def set_to_cards(card_set: int | np.integer) -> list[int]:
    """Card ids in a bitmask, ascending."""
    s = _integer(card_set, "card set")
    return [c for c in range(NUM_CARDS) if s >> c & 1]


def sorted_for_display(cards: Iterable[int]) -> list[int]:
    """Hearts first (trump), then spades, diamonds, clubs; high to low within a suit."""
    return sorted(cards, key=lambda c: (-card_suit(c), -card_rank(c)))


def hand_text(card_set: int | np.integer) -> str:
    """A hand as text, sorted for display: ``"AH 10H | KS | ... "``."""
    groups = []
    for suit in (Suit.HEARTS, Suit.SPADES, Suit.DIAMONDS, Suit.CLUBS):
        cards = [c for c in sorted_for_display(set_to_cards(card_set)) if card_suit(c) == suit]
        if cards:
            groups.append(" ".join(card_text(c) for c in cards))
    return " | ".join(groups) if groups else "-"


def action_text(action: int) -> str:
    """``"AH"`` for a card, ``"4"`` for a bid of 4, ``"redeal"``."""
    action = _integer(action, "action id")
    if 0 <= action < NUM_CARDS:
        return card_text(action)
    if NUM_CARDS <= action <= BID_OFFSET + 13:
        return str(action - BID_OFFSET)
    if action == REDEAL_ACTION:
        return "redeal"
    raise CardError(f"action id {action} is out of range: expected 0 to {NUM_ACTIONS - 1}")


def parse_action(action: str | int | np.integer) -> int:
    """Action id of a card text, a bid ("2".."13"), "redeal", or an action id already."""
    if isinstance(action, int | np.integer) and not isinstance(action, bool):
        a = int(action)
        if not 0 <= a < NUM_ACTIONS:
            raise CardError(f"action id {a} is out of range: expected 0 to {NUM_ACTIONS - 1}")
        return a
    if not isinstance(action, str):
        raise CardError(f"action {short(action)} is neither text nor an action id")
    t = action.strip()
    if t.lower() == "redeal":
        return REDEAL_ACTION
    if t.isascii() and t.isdigit():  # isdigit alone takes "²", which int() refuses
        bid = int(t) if len(t) <= 3 else 10**3  # int() refuses 5,000 digits
        if not 1 <= bid <= 13:
            raise CardError(f"bid {short(t)} is out of range: expected 1 to 13")
        return BID_OFFSET + bid
    return parse_card(t)
