"""The tournament results database: one SQLite file, written as results are produced.

Tables (one row per finished hand, per finished match, per conduct event)::

    meta     key, value                 schema version, the tournament fingerprint (JSON) and
                                        how its agents were seeded ("seeding": the job split)
    hands    game key, hand_index       dealer, bids, tricks, points, scores, forfeits,
                                        decisions and seconds per seat (deal = seed, match, hand)
    matches  game key                   team labels, winner, hands, final scores, seconds
    events   game key, hand, seat       forfeits (timeout, error, illegal) and slow moves
    move_times  pairing, agent, bin     decisions per bin of time per decision (a histogram)

A game key is ``(pair_a, pair_b, match_id, orientation)``: the pairing (agent labels, sorted),
the deal stream and which side holds seats 0 and 2 (orientation 0: `pair_a`). The two
orientations of one match id are the two halves of a duplicate match.

The time histogram has 20 log-spaced bins per decade from 1 us (:func:`time_bin`); a batched
call of k decisions that took t seconds adds k decisions at t / k. It counts every decision
played, those of games dropped by an interrupted run too, so unlike the other tables it is not
the same after a resume as after a straight run (times never are).

A database belongs to one tournament: its fingerprint (agents, rules, seed, max_hands) must
match the run's, or :class:`ResultsDB` refuses it before changing anything. Hands and events
of a match still in flight when a run was killed are deleted on the next open (`resume`), and
only the games without a ``matches`` row are played again.

One writer per database: :class:`ResultsDB` holds an exclusive lock on ``<db>.lock`` (an
advisory ``flock``, which the system releases when its process dies, however it dies) and
writes the writer's pid, host, start time and command into it. A second writer is refused
with a line naming the first; a lock file left by a killed run is taken over (the system
released its lock) and the takeover is reported. Before anything is written, a database is
checked read-only (``PRAGMA integrity_check``, then its fingerprint); a damaged one is
refused in one line and left exactly as it was. Readers (the report, the plots, the web
interface) open the file read-only and need no lock. The schema is unchanged by the lock.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from fourhundred_env.errors import FourHundredError

try:
    import fcntl
except ImportError:  # not a POSIX system: no advisory locks (see WriterLock)
    fcntl = None  # type: ignore[assignment]

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
TIME_COLUMNS: tuple[str, ...] = ("pair_a", "pair_b", "agent", "bin", "decisions")
TIME_BINS_PER_DECADE = 20
TIME_BIN_FLOOR = 1e-6  # seconds: the lower edge of bin 0
NUM_TIME_BINS = 9 * TIME_BINS_PER_DECADE  # up to 1,000 s


def time_bin(seconds: float) -> int:
    """The histogram bin of a time per decision (see the module docstring)."""
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
CREATE TABLE IF NOT EXISTS move_times (
    pair_a TEXT NOT NULL, pair_b TEXT NOT NULL, agent TEXT NOT NULL, bin INTEGER NOT NULL,
    decisions INTEGER NOT NULL, PRIMARY KEY (pair_a, pair_b, agent, bin)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, {_KEY}, hand_index INTEGER, seat INTEGER,
    agent TEXT, kind TEXT NOT NULL, detail TEXT, seconds REAL
);
"""


class DatabaseMismatchError(FourHundredError):
    """The database holds results of another tournament (or is not a tournament database)."""


class DatabaseDamagedError(FourHundredError):
    """The database file is damaged (it fails SQLite's integrity check, or a read or write
    hits a malformed page); it is left as it was."""


class DatabaseBusyError(FourHundredError):
    """Another run is writing the database (it holds the writer lock)."""


# -- one writer per database --------------------------------------------------------------------
def lock_path(path: str | Path) -> Path:
    """The writer-lock file of the database at `path`: ``<path>.lock``."""
    return Path(str(path) + ".lock")


class WriterLock:
    """The exclusive writer lock of one database (see the module docstring).

    `acquire` raises DatabaseBusyError naming the holder when another process holds it, and
    returns a note (else None) when it took over the lock file of a run that died without
    releasing it. Released by `release`, or by the system when the process dies.
    """

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = Path(db_path)
        self.path = lock_path(db_path)
        self._fd: int | None = None

    def acquire(self) -> str | None:
        """Take the lock (see the class docstring); OSError if its folder is not writable."""
        if fcntl is None:  # pragma: no cover - POSIX only; elsewhere a second writer is not caught
            return None
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_holder(fd)
                os.close(fd)
                raise DatabaseBusyError(
                    f"database {str(self.db_path)!r} is being written by another run "
                    f"({_describe_holder(holder)}): wait for it to finish or stop it, or choose "
                    "another --db"
                ) from None
            try:  # its last holder may have removed the file between our open and our lock
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _read_holder(fd)
        info = {
            "pid": os.getpid(), "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join(sys.argv)[:300],
        }  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        if previous is None or previous.get("pid") == os.getpid():
            return None
        return (
            f"took over the writer lock of {str(self.db_path)!r} from a run that stopped "
            f"without releasing it ({_describe_holder(previous)})"
        )

    def release(self) -> None:
        """Remove the lock file and release the lock (nothing if not held)."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)  # closing releases the flock
            self._fd = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any] | None:
    """The holder information in a lock file, or None when it is empty or unreadable."""
    try:
        text = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        info = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _describe_holder(info: Mapping[str, Any] | None) -> str:
    if not info:
        return "a process that left no details"
    where = f" on {info['host']}" if info.get("host") not in (None, socket.gethostname()) else ""
    return (
        f"pid {info.get('pid', '?')}{where}, started {info.get('started', '?')}: "
        f"{info.get('command') or '?'}"
    )


# -- checking a file before use -----------------------------------------------------------------
def _journal(path: Path) -> Path:
    return Path(str(path) + "-journal")


def recover_interrupted_write(path: Path) -> None:
    """Roll back the write a killed run left half done (SQLite's own recovery of a hot
    journal, which a read-only connection cannot do). Only the writer, holding the lock,
    calls this; a database without a journal is not touched."""
    journal = _journal(path)
    if not path.is_file() or not journal.is_file() or journal.stat().st_size == 0:
        return
    try:
        con = sqlite3.connect(path, timeout=30)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        raise _damaged(path, e) from None


def _damaged(path: Path, error: Exception | str) -> DatabaseDamagedError:
    return DatabaseDamagedError(
        f"database {str(path)!r} is damaged ({error}); it was left as it is: expected an intact "
        "tournament database; restore a copy, or choose another --db (or --overwrite to discard "
        "it)"
    )


def read_meta(path: Path) -> dict[str, str]:
    """The ``meta`` table of the database at `path`, opened read-only after SQLite's
    integrity check; DatabaseDamagedError or DatabaseMismatchError in one line otherwise."""
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise DatabaseMismatchError(
            f"database {str(path)!r} cannot be opened ({e}): expected a readable SQLite file"
        ) from None
    try:
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.OperationalError as e:
            if "readonly" in str(e) and _journal(path).is_file():
                # a hot journal: a read-only connection cannot roll it back (the writer does)
                raise DatabaseDamagedError(
                    f"database {str(path)!r} holds a write that a killed run left unfinished: "
                    "expected a closed database; rerun that tournament to resume it (which "
                    "repairs this)"
                ) from None
            raise DatabaseMismatchError(
                f"database {str(path)!r} cannot be read ({e}): expected a readable SQLite file"
            ) from None
        except sqlite3.DatabaseError as e:
            raise DatabaseMismatchError(
                f"database {str(path)!r} is not a fourhundred tournament database ({e}): "
                "expected one written by `fourhundred tournament`; choose another --db or "
                "--overwrite"
            ) from None
        try:
            problems = [r[0] for r in con.execute("PRAGMA integrity_check(5)").fetchall()]
        except sqlite3.DatabaseError as e:
            raise _damaged(path, e) from None
        if problems != ["ok"]:
            raise _damaged(path, f"integrity check: {'; '.join(problems)[:300]}")
        try:
            return dict(con.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as e:
            raise DatabaseMismatchError(
                f"database {str(path)!r} is not a fourhundred tournament database ({e}): "
                "expected one written by `fourhundred tournament`; choose another --db or "
                "--overwrite"
            ) from None
    finally:
        con.close()


def _describe(fp: Mapping[str, Any], key: str) -> str:
    value = fp.get(key)
    return json.dumps(value, sort_keys=True) if not isinstance(value, str) else value


def check_fingerprint(path: Path, fingerprint: Mapping[str, Any]) -> bool:
    """Raise DatabaseMismatchError unless `path` is absent or holds this tournament.

    Opens the file read-only (after SQLite's integrity check: a damaged file raises
    DatabaseDamagedError), so a refused database is left exactly as it was. Returns True
    when the file exists (a rerun that resumes), False when it does not.
    """
    if not path.exists():
        return False
    rows = read_meta(path)
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
    """The writer (and a reader) of one tournament database (see the module docstring).

    Takes the writer lock first (DatabaseBusyError if another run holds it), then discards
    the files (`overwrite`) or checks the existing database (damage, fingerprint) before
    writing anything. `lock_note` says when a dead run's lock was taken over.
    """

    def __init__(
        self, path: str | Path, fingerprint: Mapping[str, Any], overwrite: bool = False
    ) -> None:
        self.path = Path(path)
        self.con: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.lock = WriterLock(self.path)
            self.lock_note = self.lock.acquire()
        except OSError as e:
            raise FourHundredError(
                f"cannot write the results database {str(self.path)!r} ({e.strerror or e}): "
                "expected a writable folder (--db or --out)"
            ) from None
        try:
            if overwrite:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(str(self.path) + suffix).unlink(missing_ok=True)
            else:
                recover_interrupted_write(self.path)
                check_fingerprint(self.path, fingerprint)
            self.con = sqlite3.connect(self.path, timeout=30)
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
        except sqlite3.DatabaseError as e:
            self.close()
            raise _damaged(self.path, e) from None
        except OSError as e:
            self.close()
            raise FourHundredError(
                f"cannot write the results database {str(self.path)!r} ({e.strerror or e}): "
                "expected a writable file"
            ) from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the connection (every write is already committed) and release the lock."""
        if self.con is not None:
            self.con.close()
            self.con = None
        lock = getattr(self, "lock", None)
        if lock is not None:
            lock.release()

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

    def drop_partial_games(self, pair: tuple[str, str], games: Iterable[tuple[int, int]]) -> int:
        """Delete the hands and events of those `games` ((match_id, orientation)) of `pair`
        that have no match row: what a job that died mid-way wrote of the games it had in
        flight, before they are played again from their start. Returns the hands deleted."""
        keys = [(pair[0], pair[1], int(m), int(o)) for m, o in games]
        finished = self.finished_games()
        keys = [k for k in keys if k not in finished]
        where = "pair_a = ? AND pair_b = ? AND match_id = ? AND orientation = ?"
        with self.con:
            n = sum(self.con.execute(f"DELETE FROM hands WHERE {where}", k).rowcount for k in keys)
            self.con.executemany(f"DELETE FROM events WHERE {where}", keys)
        return n

    # -- writing ----------------------------------------------------------------------------
    def write(
        self,
        hands: Iterable[HandRow] = (),
        matches: Iterable[MatchRow] = (),
        events: Iterable[EventRow] = (),
        move_times: Iterable[tuple[str, str, str, int, int]] = (),
    ) -> None:
        """Insert rows (or plain tuples in the same column order) and add the counts of
        `move_times` rows (TIME_COLUMNS) to the histogram, in one commit; a failed write (a
        damaged file, a full disk) rolls back and raises FourHundredError."""
        # As plain tuples: sqlite3 binds an exact tuple's values directly but a named tuple's
        # one by one through the sequence protocol, twice as slow over a tournament's rows.
        try:
            with self.con:
                self.con.executemany(_insert("hands", HAND_COLUMNS), map(tuple, hands))
                self.con.executemany(_insert("events", EVENT_COLUMNS), map(tuple, events))
                self.con.executemany(
                    "INSERT INTO move_times (pair_a, pair_b, agent, bin, decisions) VALUES "
                    "(?, ?, ?, ?, ?) ON CONFLICT (pair_a, pair_b, agent, bin) DO UPDATE SET "
                    "decisions = decisions + excluded.decisions",
                    move_times,
                )
                self.con.executemany(_insert("matches", MATCH_COLUMNS), map(tuple, matches))
        except sqlite3.DatabaseError as e:
            raise DatabaseDamagedError(
                f"writing results to {str(self.path)!r} failed ({e}); what was written before "
                "is kept: expected a writable, intact database; rerun the same command to resume"
            ) from None

    # -- reading ----------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """All rows of a SELECT (DatabaseDamagedError if the file is damaged)."""
        try:
            return self.con.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None

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

    def __init__(self, path: str | Path, fingerprint: Mapping[str, Any] | None = None) -> None:
        """Open `path` read-only after SQLite's integrity check (and, given `fingerprint`,
        after checking that it holds that tournament). Needs no writer lock."""
        self.path = Path(path)
        self.lock = None
        self.con = None
        if not self.path.is_file():
            raise FourHundredError(
                f"results database {str(self.path)!r} does not exist: expected the SQLite file "
                "of a tournament (fourhundred tournament --db / --out)"
            )
        if fingerprint is not None:
            check_fingerprint(self.path, fingerprint)
        else:
            read_meta(self.path)
        self.con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
