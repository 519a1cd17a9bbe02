"""The tables of a results database: one named row type per table (its fields the table's
columns, in order), the bins of the time histogram, and the SQL that creates the tables."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

SCHEMA_VERSION = 3
"""The schema this version writes and reads (2: ``hands`` keeps each hand's ``moves``; 3: the
rows carry a ``digest``, :mod:`~fourhundred_tournament.db.digests`). A database of an older
schema is read as it is, and gains the columns, NULL in its rows, when it is next written; a
newer one is refused."""
GameKey = tuple[str, str, int, int]

_SEATS = range(4)


# -- rows: one named tuple per table, its fields the table's columns in order -------------------
# Named tuples rather than dataclasses: a row stays a plain tuple, so sqlite3 inserts it as it
# is, a worker pickles it cheaply to the parent, and code that reads rows by position works.
class HandRow(NamedTuple):
    """A row of ``hands``: one finished hand (played or thrown in), per-seat values by seat."""

    pair_a: str
    pair_b: str
    match_id: int
    orientation: int
    hand_index: int  # 0 for the first hand of the match
    team0: str  # label of the agent on seats 0 and 2
    team1: str
    dealer: int
    required_total: int
    thrown_in: int  # 1: thrown in without a score
    redeal_seat: int  # -1: none asked
    claim_seat: int  # -1: the hand was played out
    bid0: int
    bid1: int
    bid2: int
    bid3: int
    tricks0: int
    tricks1: int
    tricks2: int
    tricks3: int
    points0: int  # the seat's score change in this hand
    points1: int
    points2: int
    points3: int
    score0: int  # the seat's score after this hand
    score1: int
    score2: int
    score3: int
    forfeit0: int  # 1: the seat's contract was forfeited under the conduct rules
    forfeit1: int
    forfeit2: int
    forfeit3: int
    decisions0: int  # agent calls that served the seat at this table during the hand
    decisions1: int
    decisions2: int
    decisions3: int
    seconds0: float  # the seat's agent time at this table (a batched call split evenly)
    seconds1: float
    seconds2: float
    seconds3: float
    moves: (
        bytes | None
    )  # the dealt hands and the decisions in order (fourhundred_tournament.db.moves);
    # None in a row written before databases kept them


class MatchRow(NamedTuple):
    """A row of ``matches``: one finished game (won, or stopped unfinished at `max_hands`)."""

    pair_a: str
    pair_b: str
    match_id: int
    orientation: int
    team0: str
    team1: str
    first_dealer: int
    finished: int  # 0: stopped unfinished (a draw)
    winner_team: int  # -1 when unfinished
    winner: str | None  # label of the winning agent, None when unfinished
    num_hands: int
    num_played: int
    num_thrown_in: int
    score0: int  # final scores by seat
    score1: int
    score2: int
    score3: int
    target: int  # the target at the end (it rises when both teams qualify at once)
    forfeits: int  # forfeited contracts in the game, both sides
    decision_seconds: float  # agent time of all seats at this table


class EventRow(NamedTuple):
    """A row of ``events``: a forfeit (timeout, error, illegal) or a slow move at one table
    (``id``, the table's own key, is assigned by SQLite)."""

    pair_a: str
    pair_b: str
    match_id: int
    orientation: int
    hand_index: int
    seat: int
    agent: str  # label of the agent that misbehaved
    kind: str  # "timeout", "error", "illegal" or "slow"
    detail: str
    seconds: float  # the call's time


Row = TypeVar("Row", HandRow, MatchRow, EventRow)
HAND_COLUMNS: tuple[str, ...] = HandRow._fields
MATCH_COLUMNS: tuple[str, ...] = MatchRow._fields
EVENT_COLUMNS: tuple[str, ...] = EventRow._fields
TIME_COLUMNS: tuple[str, ...] = ("pair_a", "pair_b", "agent", "bin", "decisions")
TIME_BINS_PER_DECADE = 20
TIME_BIN_FLOOR = 1e-6  # seconds: the lower edge of bin 0
NUM_TIME_BINS = 9 * TIME_BINS_PER_DECADE  # up to 1,000 s


def time_bin(seconds: float) -> int:
    """The histogram bin of a time per decision (see :mod:`fourhundred_tournament.db`)."""
    if seconds <= TIME_BIN_FLOOR:
        return 0
    b = math.floor(TIME_BINS_PER_DECADE * math.log10(seconds / TIME_BIN_FLOOR))
    return min(b, NUM_TIME_BINS - 1)


def time_bin_edge(b: int) -> float:
    """The upper edge of bin b, in seconds."""
    return TIME_BIN_FLOOR * 10 ** ((b + 1) / TIME_BINS_PER_DECADE)


def seat_columns(name: str, values: np.ndarray) -> dict[str, list[Any]]:
    """The per-seat columns ``name0`` .. ``name3`` of rows from (n, 4) `values`, by seat."""
    return {f"{name}{s}": values[:, s].tolist() for s in _SEATS}


def rows_from_columns(row_type: type[Row], columns: Mapping[str, Sequence[Any]]) -> list[Row]:
    """Rows of `row_type` from one equally long sequence per column, given by name (any order).

    A missing or unknown column name is an error: rows are never built by position.
    """
    names = row_type._fields
    if set(columns) != set(names):
        missing = [n for n in names if n not in columns]
        unknown = sorted(set(columns) - set(names))
        raise ValueError(f"{row_type.__name__}: missing columns {missing}, unknown {unknown}")
    return list(map(row_type._make, zip(*(columns[n] for n in names), strict=True)))


_KEY = "pair_a TEXT NOT NULL, pair_b TEXT NOT NULL, match_id INTEGER NOT NULL, orientation INTEGER NOT NULL"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hands (
    {_KEY}, hand_index INTEGER NOT NULL, team0 TEXT NOT NULL, team1 TEXT NOT NULL,
    dealer INTEGER, required_total INTEGER, thrown_in INTEGER, redeal_seat INTEGER,
    claim_seat INTEGER,
    {", ".join(f"{c}{s} INTEGER" for c in ("bid", "tricks", "points", "score", "forfeit", "decisions") for s in _SEATS)},
    {", ".join(f"seconds{s} REAL" for s in _SEATS)}, moves BLOB, digest TEXT,
    PRIMARY KEY (pair_a, pair_b, match_id, orientation, hand_index)
);
CREATE TABLE IF NOT EXISTS matches (
    {_KEY}, team0 TEXT NOT NULL, team1 TEXT NOT NULL, first_dealer INTEGER,
    finished INTEGER NOT NULL, winner_team INTEGER NOT NULL, winner TEXT,
    num_hands INTEGER, num_played INTEGER, num_thrown_in INTEGER,
    score0 INTEGER, score1 INTEGER, score2 INTEGER, score3 INTEGER, target INTEGER,
    forfeits INTEGER, decision_seconds REAL, digest TEXT,
    PRIMARY KEY (pair_a, pair_b, match_id, orientation)
);
CREATE TABLE IF NOT EXISTS move_times (
    pair_a TEXT NOT NULL, pair_b TEXT NOT NULL, agent TEXT NOT NULL, bin INTEGER NOT NULL,
    decisions INTEGER NOT NULL, PRIMARY KEY (pair_a, pair_b, agent, bin)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, {_KEY}, hand_index INTEGER, seat INTEGER,
    agent TEXT, kind TEXT NOT NULL, detail TEXT, seconds REAL, digest TEXT
);
"""
"""The tables (``CREATE TABLE IF NOT EXISTS``), run by the writer at every open."""


def has_column(con: sqlite3.Connection, table: str, column: str) -> bool:
    """Whether `table` of the database `con` has the column `column` (an older schema's may
    not)."""
    return any(r[1] == column for r in con.execute(f"PRAGMA table_info({table})"))


def insert_sql(table: str, columns: Sequence[str]) -> str:
    """The statement that inserts (or replaces) one row of `columns` into `table`."""
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
