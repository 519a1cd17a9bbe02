"""The tournament results database: one SQLite file, written as results are produced.

Tables (one row per finished hand, per finished match, per conduct event)::

    meta     key, value                 schema version and the tournament fingerprint (JSON)
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
from typing import Any

from fourhundred_env.errors import FourHundredError

SCHEMA_VERSION = 1
GameKey = tuple[str, str, int, int]

_SEATS = range(4)
HAND_COLUMNS: tuple[str, ...] = (
    "pair_a", "pair_b", "match_id", "orientation", "hand_index", "team0", "team1",
    "dealer", "required_total", "thrown_in", "redeal_seat", "claim_seat",
    *(f"bid{s}" for s in _SEATS), *(f"tricks{s}" for s in _SEATS),
    *(f"points{s}" for s in _SEATS), *(f"score{s}" for s in _SEATS),
    *(f"forfeit{s}" for s in _SEATS), *(f"decisions{s}" for s in _SEATS),
    *(f"seconds{s}" for s in _SEATS),
)  # fmt: skip
MATCH_COLUMNS: tuple[str, ...] = (
    "pair_a", "pair_b", "match_id", "orientation", "team0", "team1", "first_dealer",
    "finished", "winner_team", "winner", "num_hands", "num_played", "num_thrown_in",
    *(f"score{s}" for s in _SEATS), "target", "forfeits", "decision_seconds",
)  # fmt: skip
EVENT_COLUMNS: tuple[str, ...] = (
    "pair_a", "pair_b", "match_id", "orientation", "hand_index", "seat", "agent", "kind",
    "detail", "seconds",
)  # fmt: skip

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
        hands: Iterable[Sequence[Any]] = (),
        matches: Iterable[Sequence[Any]] = (),
        events: Iterable[Sequence[Any]] = (),
    ) -> None:
        """Insert rows (tuples in the order of HAND_COLUMNS, MATCH_COLUMNS, EVENT_COLUMNS), one commit."""
        with self.con:
            self.con.executemany(_insert("hands", HAND_COLUMNS), hands)
            self.con.executemany(_insert("events", EVENT_COLUMNS), events)
            self.con.executemany(_insert("matches", MATCH_COLUMNS), matches)

    # -- reading ----------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, params).fetchall()

    def meta(self) -> dict[str, str]:
        return dict(self.con.execute("SELECT key, value FROM meta").fetchall())


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
