"""Game records of 400: a match written down so that it can be saved, read and played again.

A :class:`GameRecord` is the rules, the seats' labels, the match's start (first dealer,
scores, target) and per hand the dealer, the deal, the bids in order, every card in order and
the result. It has two forms, both of version :data:`FORMAT_VERSION` (docs/records.md):

- text, line by line, for people to read and write by hand (:mod:`fourhundred_env.record_text`);
- JSON, ``{"format": "fourhundred-record", "version": 1, ...}``.

Every load replays the record through :class:`~fourhundred_env.table.Table` (``deal`` and
``act``, :mod:`fourhundred_env.record_replay`), so each move is checked by the engine; a
record that is not a game of 400 raises
:class:`~fourhundred_env.errors.RecordError` in one line naming the hand and the move::

    record = read_record("game.400")           # text or JSON
    table = Table.from_record(record, upto=17)  # the position before the 18th decision
    write_record(table.record(), "game.json")
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fourhundred_env.cards import (
    card_text,
    parse_card,
)
from fourhundred_env.errors import (
    RecordError,
    short,
)
from fourhundred_env.history import HandRecord, Scores
from fourhundred_env.rules import Rules

if TYPE_CHECKING:
    from fourhundred_env.table import Table

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Decision",
    "GameRecord",
    "RecordedHand",
    "parse_record",
    "read_record",
    "write_record",
]

FORMAT = "fourhundred-record"
"""The format's name: the first line of the text form, the ``format`` key of the JSON form."""
FORMAT_VERSION = 1
"""The one version this code reads and writes."""
MAX_RECORD_BYTES = 64 * 2**20
"""The largest record file read (a match of 1,000 hands is about half a megabyte)."""


@dataclass(frozen=True)
class RecordedHand:
    """One hand of a record: the deal and the moves; the result once the hand is over.

    Cards are written as :func:`~fourhundred_env.cards.card_text` does (``"10S"``), the deal
    as :func:`~fourhundred_env.cards.hand_text` does (``"AH 10H | KS | 2C"``), as in
    :class:`~fourhundred_env.history.HandRecord`.
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
class Decision:
    """One decision of a record, as :meth:`GameRecord.decisions` gives it."""

    hand: int
    """The hand's number in the record, from 1."""
    move: int
    """The decision's number within the hand, from 1 (bids and cards alike)."""
    seat: int
    """The seat deciding."""
    table: Table
    """A table of its own at that moment (the move not yet made)."""
    action: str
    """What was played there: a bid, ``"redeal"`` or a card."""
    index: int = 0
    """The decision's number in the whole record, from 0: ``Table.from_record(record,
    upto=index)`` is this table."""


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

    def replay(self, upto: int | None = None) -> Table:
        """A table with the record played (``Table.from_record``)."""
        from fourhundred_env.record_replay import replay, start_table

        table = start_table(self)
        if upto is None:
            for _ in replay(self, table):
                pass
            return table
        if isinstance(upto, bool) or not isinstance(upto, int | np.integer) or upto < 0:
            raise RecordError(f"upto={short(upto)}: expected a number of decisions, 0 or more")
        done = 0
        for _ in replay(self, table):
            if done == upto:
                return table
            done += 1
        if done < upto:
            raise RecordError(f"upto={upto}: the record has only {done} decisions")
        return table

    def decisions(self) -> Iterator[Decision]:
        """Every decision in order, each with a table of its own at that moment."""
        from fourhundred_env.record_replay import replay, start_table

        table = start_table(self)
        for d in replay(self, table):
            yield dataclasses.replace(d, table=table.clone())

    def to_text(self) -> str:
        """The text form (docs/records.md)."""
        from fourhundred_env.record_text import record_to_text

        return record_to_text(self)

    def to_json(self) -> str:
        """The JSON form (docs/records.md)."""
        from fourhundred_env.record_text import record_to_json

        return record_to_json(self)


def parse_record(text: str) -> GameRecord:
    """A record from its text or JSON form (told apart by a leading ``{``), replayed and
    completed: every hand's dealer and result filled in, cards in the canonical notation.
    Raises RecordError naming the line, or the hand and move, that is wrong."""
    from fourhundred_env.record_text import json_to_record, text_to_record

    if not isinstance(text, str):
        raise RecordError(f"record {short(text)}: expected text")
    raw = json_to_record(text) if text.lstrip().startswith("{") else text_to_record(text)
    return raw.replay().record(seats=raw.seats)


def read_record(path: str | Path) -> GameRecord:
    """The record in file `path` (text or JSON), as :func:`parse_record` reads it; errors
    name the file."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise RecordError(
                f"{path}: {path.stat().st_size:,} bytes: expected a record of at most "
                f"{MAX_RECORD_BYTES:,} bytes"
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"record file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise RecordError(f"record file {str(path)!r} is a folder: expected a file") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text: expected a record (text or JSON)") from None
    except OSError as e:
        raise RecordError(f"record file {str(path)!r} cannot be read: {e.strerror}") from None
    try:
        return parse_record(text)
    except RecordError as e:
        raise RecordError(f"{path}: {e}") from None


def write_record(record: GameRecord, path: str | Path) -> Path:
    """Write `record` to `path`, JSON for a ``.json`` suffix, else text (``.400``, ``.txt``):
    whole or not at all (a temporary file renamed over `path`). Returns the path."""
    if not isinstance(record, GameRecord):
        raise RecordError(f"write_record: {short(record)}: expected a GameRecord")
    path = Path(path)
    text = record.to_json() if path.suffix.lower() == ".json" else record.to_text()
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise RecordError(f"cannot write {str(path)!r}: the folder {str(folder)!r} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    except OSError as e:
        raise RecordError(f"cannot write {str(path)!r}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o644 & ~umask)  # as any new file (mkstemp's is private)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise RecordError(f"cannot write {str(path)!r}: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
