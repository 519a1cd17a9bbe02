"""A game record played through a :class:`~fourhundred_env.table.Table`, and a table's record.

Every move goes through ``Table.deal`` and ``Table.act``, so the engine checks it; what is
wrong is raised as one :class:`~fourhundred_env.errors.RecordError` line naming the hand and
the move (:mod:`fourhundred_env.game_records.files`). The table module imports this one, so the
table comes in as an argument (``table``, or ``table_class`` to make one), never by import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fourhundred_env.cards import (
    NUM_CARDS,
    REDEAL_ACTION,
    action_text,
    hand_text,
    parse_action,
    parse_deal,
)
from fourhundred_env.errors import (
    CardError,
    DealError,
    FourHundredError,
    IllegalActionError,
    RecordError,
    short,
)
from fourhundred_env.game_records.data import GameRecord, RecordedHand
from fourhundred_env.game_records.hands import HandRecord

__all__ = ["Decision", "decisions", "replay", "replayed", "start_table", "table_record"]


@dataclass(frozen=True)
class Decision:
    """One decision of a record, as :func:`~fourhundred_env.game_records.files.decisions`
    gives it."""

    hand: int
    """The hand's number in the record, from 1."""
    move: int
    """The decision's number within the hand, from 1 (bids and cards alike)."""
    seat: int
    """The seat deciding."""
    table: Any
    """A :class:`~fourhundred_env.table.Table` of its own at that moment (the move not yet
    made)."""
    action: str
    """What was played there: a bid, ``"redeal"`` or a card."""
    index: int = 0
    """The decision's number in the whole record, from 0: ``Table.from_record(record,
    upto=index)`` is this table."""


# -- the record of a table, and a table from a record ------------------------------------------
def table_record(table: Any, seats: Sequence[str] | None = None) -> GameRecord:
    """Everything `table` has seen since it was made, the hand in progress included
    (``Table.record``)."""
    dealer, scores, target = table._start
    record = GameRecord.from_history(table.history, table.rules, seats, dealer, scores, target)
    if table.phase not in ("bid", "play"):
        return record
    s = table.state
    hand_dealer = table._hand_dealer()
    bids = tuple(str(int(s.bids[0, (hand_dealer + 1 + k) % 4])) for k in range(int(s.num_bids[0])))
    current = RecordedHand(
        deal=tuple(hand_text(h) for h in s.dealt_set[0]),  # type: ignore[arg-type]
        bids=bids, cards=tuple(c for _, c in table.plays), dealer=hand_dealer,
        forfeits=tuple(int(x) for x in np.flatnonzero(s.forfeit[0])),
    )  # fmt: skip
    return dataclasses.replace(record, hands=(*record.hands, current))


def start_table(record: GameRecord, table_class: Callable[..., Any]) -> Any:
    """A fresh table (of `table_class`, a Table) at the record's start: its rules, first
    dealer, scores and target."""
    prefix = "table 'record': "  # Table's own, not the record's
    if not isinstance(record, GameRecord):
        raise RecordError(f"{short(record)}: expected a GameRecord")
    try:
        return table_class(
            rules=record.rules, dealer=record.dealer, scores=record.scores,
            target=record.target, name="record",
        )  # fmt: skip
    except FourHundredError as e:
        raise RecordError(f"record start: {str(e).replace(prefix, '')}") from None


def replayed(record: GameRecord, table_class: Callable[..., Any], upto: int | None = None) -> Any:
    """A table (of `table_class`) with `record` played, or its first `upto` decisions
    (``Table.from_record``)."""
    table = start_table(record, table_class)
    if upto is None:
        for _ in replay(record, table):
            pass
        return table
    if isinstance(upto, bool) or not isinstance(upto, int | np.integer) or upto < 0:
        raise RecordError(f"upto={short(upto)}: expected a number of decisions, 0 or more")
    done = 0
    for _ in replay(record, table):
        if done == upto:
            return table
        done += 1
    if done < upto:
        raise RecordError(f"upto={upto}: the record has only {done} decisions")
    return table


def decisions(record: GameRecord, table_class: Callable[..., Any]) -> Iterator[Decision]:
    """Every decision of `record` in order, each with a table of its own at that moment."""
    table = start_table(record, table_class)
    for d in replay(record, table):
        yield dataclasses.replace(d, table=table.clone())


def replay(record: GameRecord, table: Any) -> Iterator[Decision]:
    """Play `record` on `table` (fresh from `start_table`), yielding each decision with
    `table` itself just before the move is made."""
    index = 0
    for n, hand in enumerate(record.hands, 1):
        where = f"record hand {n}"
        if table.phase == "match_over":
            raise RecordError(
                f"{where}: the match was over after hand {n - 1} (team {table.winner} won): "
                "expected no more hands"
            )
        if hand.dealer is not None and hand.dealer != table.dealer:
            raise RecordError(
                f"{where}: dealer S{hand.dealer} in the record, S{table.dealer} by the rules "
                "(the deal passes to the right, to the next seat, after every hand)"
            )
        _check_deal(hand, where)
        table.deal(hands=hand.deal)
        moves = hand.moves
        for m, action in enumerate(moves, 1):
            if table.phase not in ("bid", "play"):
                raise RecordError(
                    f"{where}, move {m}: the hand is over after move {m - 1} "
                    f"({_why_over(table.history[-1])}): expected no more moves"
                )
            yield Decision(n, m, int(table.to_play), table, action, index)  # type: ignore[arg-type]
            if m == len(moves):
                _forfeit(table, hand, where)
            _act(table, action, f"{where}, move {m}")
            index += 1
        if not moves:
            _forfeit(table, hand, where)
        if table.phase in ("bid", "play"):
            if n < len(record.hands) or hand.finished or hand.tricks or hand.points:
                what = f"hand {n + 1} follows" if n < len(record.hands) else "a result is given"
                raise RecordError(
                    f"{where}: unfinished after move {len(moves)} (S{table.to_play} is to "
                    f"{table.phase}), but {what}"
                )
        else:
            _check_result(hand, table.history[-1], where)


def _check_deal(hand: RecordedHand, where: str) -> None:
    if not isinstance(hand, RecordedHand):
        raise RecordError(f"{where}: {short(hand)}: expected a RecordedHand")
    if isinstance(hand.deal, str) or len(hand.deal) != 4:
        raise RecordError(f"{where}, deal: {short(hand.deal)}: expected the 4 hands of S0 to S3")
    try:
        parse_deal(hand.deal, ("S0", "S1", "S2", "S3"))
    except DealError as e:
        deal = f"{where}, deal" + ("" if e.seat is None else f" of S{e.seat}")
        raise RecordError(f"{deal}: {e}") from None


def _act(table: Any, action: str, where: str) -> None:
    seat, phase = table.to_play, table.phase
    head = f"{where} (seat {seat}, {phase})"
    try:
        if not isinstance(action, str):
            raise CardError(f"move {short(action)}: expected text like '4', 'redeal' or 'AH'")
        a = parse_action(action)
    except CardError as e:
        raise RecordError(f"{head}: {e}") from None
    try:
        table.act(a)  # checks the move (the state is unchanged when it is illegal)
    except IllegalActionError:
        kind = "card" if a < NUM_CARDS else "redeal request" if a == REDEAL_ACTION else "bid"
        raise RecordError(
            f"{head}: illegal {kind} {action_text(a)}{table._why_illegal(a)}; legal: "
            + " ".join(table.legal())
        ) from None


def _forfeit(table: Any, hand: RecordedHand, where: str) -> None:
    for seat in hand.forfeits:
        if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or not 0 <= seat <= 3:
            raise RecordError(f"{where}: forfeit of seat {short(seat)}: expected seats 0 to 3")
        if table.phase in ("bid", "play"):
            table.forfeit(int(seat))


def _why_over(h: HandRecord) -> str:
    if h.redeal_seat is not None:
        return f"S{h.redeal_seat} asked for a redeal"
    if h.thrown_in:
        return "thrown in after the bids"
    if h.claim is not None:
        return f"S{h.claim[0]} claimed the last {h.claim[1]} tricks"
    return "13 tricks played"


def _check_result(hand: RecordedHand, h: HandRecord, where: str) -> None:
    got = {"tricks": h.tricks_won, "points": h.points, "scores": h.scores_after}
    for name, replayed in got.items():
        stated = getattr(hand, name)
        if stated is not None and tuple(stated) != tuple(replayed):
            raise RecordError(
                f"{where}: the record gives {name} {_seats(stated)}, the replay "
                f"{_seats(replayed)}: expected the result of the cards played"
            )
    if h.forfeits != tuple(sorted(set(hand.forfeits))):
        raise RecordError(f"{where}: forfeits {list(hand.forfeits)}: expected each seat once")


def _seats(values: Sequence[object]) -> str:
    return " ".join(str(v) for v in values)
