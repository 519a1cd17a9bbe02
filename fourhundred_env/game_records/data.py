"""The data of a game record (:class:`GameRecord`, :class:`RecordedHand`) and how it is
written, as text and as JSON (docs/records.md). Reading a record, and everything that plays one
through a table, is above this module: :mod:`fourhundred_env.game_records.files`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fourhundred_env.cards import card_text, parse_card
from fourhundred_env.errors import FourHundredError, RecordError, short
from fourhundred_env.game_records.hands import HandRecord, Scores
from fourhundred_env.rules import PRESETS, Rules

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "GameRecord",
    "RecordedHand",
    "record_to_json",
    "record_to_text",
]

FORMAT = "fourhundred-record"
"""The format's name: the first line of the text form, the ``format`` key of the JSON form."""
FORMAT_VERSION = 1
"""The one version this code reads and writes."""


@dataclass(frozen=True)
class RecordedHand:
    """One hand of a record: the deal and the moves; the result once the hand is over.

    Cards are written as :func:`~fourhundred_env.cards.card_text` does (``"10S"``), the deal
    as :func:`~fourhundred_env.cards.hand_text` does (``"AH 10H | KS | 2C"``), as in
    :class:`~fourhundred_env.game_records.hands.HandRecord`.
    """

    deal: tuple[str, str, str, str]
    """The four hands as dealt, by seat."""
    bids: tuple[str, ...] = ()
    """The bids in bidding order, from the dealer's right (the next seat): ``"2"`` to
    ``"13"``, or ``"redeal"`` (a no-picture redeal request, which ends the hand)."""
    cards: tuple[str, ...] = ()
    """Every card in the order played (a hand cut by an auto-claim stops early)."""
    dealer: int | None = None
    """The dealer; None in a hand-written record that leaves it to the rules (the deal passes
    to the right, to the next seat)."""
    forfeits: tuple[int, ...] = ()
    """Seats whose contract was scored as missed (tournament conduct): set with the hand's
    last move."""
    tricks: Scores | None = None
    """Tricks taken by seat, when the hand is over (None: not stated, or in progress)."""
    points: Scores | None = None
    """Each seat's score change in the hand, when it is over."""
    scores: Scores | None = None
    """Scores after the hand, when it is over."""

    @property
    def moves(self) -> tuple[str, ...]:
        """The decisions of the hand in order: the bids, then the cards."""
        return self.bids + self.cards

    @property
    def finished(self) -> bool:
        """Whether the hand's result is recorded."""
        return self.scores is not None

    @classmethod
    def from_hand_record(cls, hand: HandRecord) -> RecordedHand:
        """The record of a finished hand of :attr:`Table.history <fourhundred_env.table.Table.history>`."""
        bids: list[str] = []
        for k in range(4):
            seat = (hand.dealer + 1 + k) % 4
            if seat == hand.redeal_seat:
                bids.append("redeal")
                break
            bid = hand.bids[seat]
            if bid is None:
                break
            bids.append(str(bid))
        return cls(
            deal=hand.hands, bids=tuple(bids), cards=tuple(c for _, c in hand.plays),
            dealer=hand.dealer, forfeits=hand.forfeits, tricks=hand.tricks_won,
            points=hand.points, scores=hand.scores_after,
        )  # fmt: skip

    def tricks_played(self) -> list[tuple[tuple[tuple[int, str], ...], int | None]]:
        """The cards as tricks: [((seat, card), ...), winner or None while it is open)] (needs
        `dealer`; a malformed card raises CardError)."""
        if self.dealer is None:
            raise RecordError("a hand without its dealer: the tricks' leaders are unknown")
        out: list[tuple[tuple[tuple[int, str], ...], int | None]] = []
        leader = (self.dealer + 1) % 4
        for start in range(0, len(self.cards), 4):
            ids = [parse_card(c) for c in self.cards[start : start + 4]]
            trick = tuple(((leader + k) % 4, card_text(c)) for k, c in enumerate(ids))
            winner = None
            if len(ids) == 4:  # hearts are trump; else the highest card of the suit led
                led = ids[0] // 13
                best = max(
                    range(4), key=lambda k: (ids[k] // 13 == 3, ids[k] // 13 == led, ids[k] % 13)
                )
                winner = leader = (leader + best) % 4
            out.append((trick, winner))
        return out


@dataclass(frozen=True)
class GameRecord:
    """A match of 400, whole or cut at a decision (see the module docstring)."""

    rules: Rules = dataclasses.field(default_factory=Rules)
    """The rules the match is played under (conduct flags included)."""
    seats: tuple[str, str, str, str] | None = None
    """Who played each seat (agent labels or specs, or names); None: not recorded."""
    dealer: int = 0
    """Dealer of the first hand."""
    scores: Scores = (0, 0, 0, 0)
    """Scores by seat when the record starts."""
    target: int | None = None
    """The target when the record starts; None: the rules' target."""
    hands: tuple[RecordedHand, ...] = ()
    """The hands in order; only the last may be unfinished."""

    def __post_init__(self) -> None:
        if not isinstance(self.rules, Rules):
            raise RecordError(f"record rules={short(self.rules)}: expected a Rules instance")
        if self.target is None:
            object.__setattr__(self, "target", self.rules.target)
        if self.seats is not None:
            seats = tuple(self.seats)
            if len(seats) != 4 or not all(
                isinstance(s, str) and s.strip() and "\n" not in s for s in seats
            ):
                raise RecordError(
                    f"record seats={short(self.seats)}: expected 4 labels, each one line of text"
                )
            object.__setattr__(self, "seats", seats)
        if isinstance(self.scores, str) or not isinstance(self.scores, Sequence | np.ndarray):
            raise RecordError(f"record scores={short(self.scores)}: expected 4 integers")
        if isinstance(self.hands, str) or not isinstance(self.hands, Sequence):
            raise RecordError(f"record hands={short(self.hands)}: expected a sequence of hands")
        object.__setattr__(self, "scores", tuple(self.scores))
        object.__setattr__(self, "hands", tuple(self.hands))

    @classmethod
    def from_history(
        cls,
        history: Sequence[HandRecord],
        rules: Rules,
        seats: Sequence[str] | None = None,
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
        target: int | None = None,
    ) -> GameRecord:
        """The record of finished hands (a table's :attr:`~fourhundred_env.table.Table.history`,
        a tournament game replayed); the start defaults to the first hand's dealer and scores
        and the rules' target."""
        first = history[0] if history else None
        return cls(
            rules=rules,
            seats=None if seats is None else tuple(seats),  # type: ignore[arg-type]
            dealer=dealer if dealer is not None else (first.dealer if first else 0),
            scores=tuple(scores) if scores is not None else (first.scores_before if first else (0, 0, 0, 0)),  # type: ignore[arg-type]
            target=target,
            hands=tuple(RecordedHand.from_hand_record(h) for h in history),
        )  # fmt: skip

    @property
    def num_decisions(self) -> int:
        """Decisions recorded, every hand's bids and cards."""
        return sum(len(h.moves) for h in self.hands)

    def to_text(self) -> str:
        """The text form (docs/records.md)."""
        return record_to_text(self)

    def to_json(self) -> str:
        """The JSON form (docs/records.md)."""
        return record_to_json(self)


# -- the text form ---------------------------------------------------------------------
def record_to_text(record: GameRecord) -> str:
    """The text form of `record`, with comments saying who bids and who leads and wins."""
    preset, differ = _rules_fields(record.rules)
    flags = "".join(f" {k}={_value_text(v)}" for k, v in differ.items())
    out = [f"{FORMAT} {FORMAT_VERSION}", "# a match of 400: the header, then hand by hand", f"rules: {preset}{flags}"]  # fmt: skip
    if record.seats is not None:
        out += [f"seat S{s}: {label}" for s, label in enumerate(record.seats)]
    out += [f"dealer: S{record.dealer}", f"scores: {_ints(record.scores)}", f"target: {record.target}"]  # fmt: skip
    for n, hand in enumerate(record.hands, 1):
        out += ["", f"hand {n}"]
        if hand.dealer is not None:
            out.append(f"dealer: S{hand.dealer}")
        out += [f"S{s}: {cards}" for s, cards in enumerate(hand.deal)]
        if hand.bids:
            note = None
            if hand.dealer is not None:
                note = " ".join(f"S{(hand.dealer + 1 + k) % 4}" for k in range(len(hand.bids)))
            out.append(_noted(f"bids: {' '.join(hand.bids)}", note))
        try:
            tricks = hand.tricks_played() if hand.dealer is not None else None
        except FourHundredError:
            tricks = None
        if tricks is None:
            out += [
                f"play: {' '.join(hand.cards[k : k + 4])}" for k in range(0, len(hand.cards), 4)
            ]
        for k, (trick, winner) in enumerate(tricks or (), 1):
            won = f", S{winner} wins" if winner is not None else ""
            out.append(_noted(f"play: {' '.join(c for _, c in trick)}", f"trick {k}: S{trick[0][0]} leads{won}"))  # fmt: skip
        if hand.forfeits:
            out.append(f"forfeit: {' '.join(f'S{s}' for s in hand.forfeits)}")
        if hand.tricks is not None:
            out.append(_noted(f"tricks: {_ints(hand.tricks)}", "thrown in" if not hand.cards and not any(hand.tricks) else None))  # fmt: skip
        if hand.points is not None:
            out.append(f"points: {' '.join(f'{p:+d}' for p in hand.points)}")
        if hand.scores is not None:
            out.append(f"scores: {_ints(hand.scores)}")
    return "\n".join(out) + "\n"


_NOTE_COLUMN = 24  # where the writer's comments start on bids and play lines


def _noted(line: str, note: str | None) -> str:
    return f"{line:<{_NOTE_COLUMN}}  # {note}" if note else line


def _ints(values: Any) -> str:
    return " ".join(str(v) for v in values)


def _rules_fields(rules: Rules) -> tuple[str, dict[str, Any]]:
    """The preset `rules` is closest to, and the flags that differ from it."""
    mine = rules.to_dict()
    options = {}
    for name in PRESETS:
        base = Rules.preset(name).to_dict()
        options[name] = {k: v for k, v in mine.items() if base[k] != v}
    best = min(options, key=lambda name: (len(options[name]), name != "wiki"))
    return best, options[best]


def _value_text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


# -- the JSON form ------------------------------------------------------------------------------
def record_to_json(record: GameRecord) -> str:
    """The JSON form of `record`: the header's keys one a line, then one line per hand."""
    preset, differ = _rules_fields(record.rules)
    head = {
        "format": FORMAT, "version": FORMAT_VERSION, "rules": {"preset": preset, **differ},
        "seats": None if record.seats is None else list(record.seats), "dealer": record.dealer,
        "scores": list(record.scores), "target": record.target,
    }  # fmt: skip
    hands = []
    for hand in record.hands:
        h: dict[str, Any] = {"dealer": hand.dealer, "deal": list(hand.deal)}
        h["bids"] = [b if not b.isdigit() else int(b) for b in hand.bids]
        h["cards"] = list(hand.cards)
        if hand.forfeits:
            h["forfeits"] = list(hand.forfeits)
        for name in ("tricks", "points", "scores"):
            if getattr(hand, name) is not None:
                h[name] = list(getattr(hand, name))
        hands.append("    " + json.dumps(h))
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    body = ",\n".join(hands)
    return (
        "{\n" + "\n".join(lines) + '\n  "hands": [\n' + body + ("\n" if hands else "") + "  ]\n}\n"
    )
