"""The tournament results database: one SQLite file, written as results are produced.

Tables (one row per finished hand, per finished match, per conduct event)::

    meta     key, value                 schema version, the tournament fingerprint (JSON) and
                                        how its agents were seeded ("seeding": the job split)
    hands    game key, hand_index       dealer, bids, tricks, points, scores, forfeits,
                                        decisions and seconds per seat (deal = seed, match, hand)
    matches  game key                   team labels, winner, hands, final scores, seconds
    events   game key, hand, seat       forfeits (timeout, error, illegal) and slow moves

A game key is ``(pair_a, pair_b, match_id, orientation)``: the pairing (agent labels, sorted),
the deal stream and which side holds seats 0 and 2 (orientation 0: `pair_a`). The two
orientations of one match id are the two halves of a duplicate match.

A database belongs to one tournament: its fingerprint (agents, rules, seed, max_hands) must
match the run's, or :class:`ResultsDB` refuses it before changing anything. Hands and events
of a match still in flight when a run was killed are deleted on the next open (`resume`), and
only the games without a ``matches`` row are played again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from fourhundred_env.errors import FourHundredError

SCHEMA_VERSION = 1
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
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hands (
    {_KEY}, hand_index INTEGER NOT NULL, team0 TEXT NOT NULL, team1 TEXT NOT NULL,
    dealer INTEGER, required_total INTEGER, thrown_in INTEGER, redeal_seat INTEGER,
    claim_seat INTEGER,
    {", ".join(f"{c}{s} INTEGER" for c in ("bid", "tricks", "points", "score", "forfeit", "decisions") for s in _SEATS)},
    {", ".join(f"seconds{s} REAL" for s in _SEATS)},
    PRIMARY KEY (pair_a, pair_b, match_id, orientation, hand_index)
);
CREATE TABLE IF NOT EXISTS matches (
    {_KEY}, team0 TEXT NOT NULL, team1 TEXT NOT NULL, first_dealer INTEGER,
    finished INTEGER NOT NULL, winner_team INTEGER NOT NULL, winner TEXT,
    num_hands INTEGER, num_played INTEGER, num_thrown_in INTEGER,
    score0 INTEGER, score1 INTEGER, score2 INTEGER, score3 INTEGER, target INTEGER,
    forfeits INTEGER, decision_seconds REAL,
    PRIMARY KEY (pair_a, pair_b, match_id, orientation)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, {_KEY}, hand_index INTEGER, seat INTEGER,
    agent TEXT, kind TEXT NOT NULL, detail TEXT, seconds REAL
);
"""


class DatabaseMismatchError(FourHundredError):
    """The database holds results of another tournament (or is not a tournament database)."""


def _describe(fp: Mapping[str, Any], key: str) -> str:
    value = fp.get(key)
    return json.dumps(value, sort_keys=True) if not isinstance(value, str) else value


def check_fingerprint(path: Path, fingerprint: Mapping[str, Any]) -> bool:
    """Raise DatabaseMismatchError unless `path` is absent or holds this tournament.

    Opens the file read-only, so a refused database is left exactly as it was. Returns True
    when the file exists (a rerun that resumes), False when it does not.
    """
    if not path.exists():
        return False
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        raise DatabaseMismatchError(
            f"database {str(path)!r} is not a fourhundred tournament database ({e}): "
            "expected one written by `fourhundred tournament`; choose another --db or --overwrite"
        ) from None
    if "fingerprint" not in rows:
        raise DatabaseMismatchError(
            f"database {str(path)!r} has no tournament fingerprint: expected one written by "
            "`fourhundred tournament`; choose another --db or --overwrite"
        )
    stored = json.loads(rows["fingerprint"])
    diffs = [
        f"{key}: database {_describe(stored, key)}, this run {_describe(fingerprint, key)}"
        for key in sorted(set(stored) | set(fingerprint))
        if stored.get(key) != fingerprint.get(key)
    ]
    if diffs:
        raise DatabaseMismatchError(
            f"database {str(path)!r} holds a different tournament ("
            + "; ".join(diffs)
            + "): expected the same agents, rules, seed and max_hands to resume it; "
            "choose another --db, or --overwrite to discard it"
        )
    return True


class ResultsDB:
    """Writer and reader of one tournament database (see the module docstring)."""

    def __init__(self, path: str | Path, fingerprint: Mapping[str, Any]) -> None:
        self.path = Path(path)
        check_fingerprint(self.path, fingerprint)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(self.path)
        self.con.execute("PRAGMA synchronous=NORMAL")
        with self.con:
            self.con.executescript(_SCHEMA)
            self.con.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
            self.con.execute(
                "INSERT OR IGNORE INTO meta VALUES ('fingerprint', ?)",
                (json.dumps(dict(fingerprint), sort_keys=True),),
            )

    def close(self) -> None:
        """Close the connection (every write is already committed)."""
        self.con.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- resuming ---------------------------------------------------------------------------
    def finished_games(self) -> set[GameKey]:
        """Keys of the games with a match row."""
        rows = self.con.execute("SELECT pair_a, pair_b, match_id, orientation FROM matches")
        return {(a, b, int(m), int(o)) for a, b, m, o in rows}

    def drop_unfinished(self) -> int:
        """Delete hands and events of games without a match row (in flight when a run died)."""

        def cond(t: str) -> str:
            return (
                f"NOT EXISTS (SELECT 1 FROM matches m WHERE m.pair_a = {t}.pair_a AND "
                f"m.pair_b = {t}.pair_b AND m.match_id = {t}.match_id "
                f"AND m.orientation = {t}.orientation)"
            )

        with self.con:
            n = self.con.execute(f"DELETE FROM hands WHERE {cond('hands')}").rowcount
            self.con.execute(f"DELETE FROM events WHERE {cond('events')}")
        return n

    # -- writing ----------------------------------------------------------------------------
    def write(
        self,
        hands: Iterable[HandRow] = (),
        matches: Iterable[MatchRow] = (),
        events: Iterable[EventRow] = (),
    ) -> None:
        """Insert rows (or plain tuples in the same column order), in one commit."""
        # As plain tuples: sqlite3 binds an exact tuple's values directly but a named tuple's
        # one by one through the sequence protocol, twice as slow over a tournament's rows.
        with self.con:
            self.con.executemany(_insert("hands", HAND_COLUMNS), map(tuple, hands))
            self.con.executemany(_insert("events", EVENT_COLUMNS), map(tuple, events))
            self.con.executemany(_insert("matches", MATCH_COLUMNS), map(tuple, matches))

    # -- reading ----------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """All rows of a SELECT."""
        return self.con.execute(sql, params).fetchall()

    def meta(self) -> dict[str, str]:
        """The ``meta`` table: schema version, fingerprint and seeding (JSON text)."""
        return dict(self.con.execute("SELECT key, value FROM meta").fetchall())

    def record_meta(self, key: str, value: Mapping[str, Any]) -> None:
        """Store `value` (as JSON) under `key` in ``meta`` unless the key is there already:
        like the fingerprint, the first run of a tournament writes it."""
        with self.con:
            self.con.execute(
                "INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, json.dumps(dict(value)))
            )


def _insert(table: str, columns: Sequence[str]) -> str:
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


class ReadOnlyResults(ResultsDB):
    """A results database opened read-only (the reading half of :class:`ResultsDB`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FourHundredError(
                f"results database {str(self.path)!r} does not exist: expected the SQLite file "
                "of a tournament (fourhundred tournament --db / --out)"
            )
        self.con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            self.meta()
        except sqlite3.DatabaseError as e:
            self.con.close()
            raise DatabaseMismatchError(
                f"{str(self.path)!r} is not a fourhundred tournament database ({e}): "
                "expected one written by `fourhundred tournament`"
            ) from None
