"""The results of one tournament: :class:`ResultsDB` writes them (the one writer, holding the
lock) and reads them back; :class:`ReadOnlyResults` only reads (no lock)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fourhundred_env.errors import FourHundredError
from fourhundred_tournament.db.checks import (
    DatabaseDamagedError,
    check_checked,
    check_fingerprint,
    check_schema,
    damaged_error,
    is_blank,
    read_meta,
    recover_interrupted_write,
)
from fourhundred_tournament.db.digests import (
    DIGEST_META,
    DIGEST_SCHEME,
    add_digest_column,
    last_rowid,
    register,
    seal,
)
from fourhundred_tournament.db.lock import WriterLock
from fourhundred_tournament.db.schema import (
    EVENT_COLUMNS,
    HAND_COLUMNS,
    MATCH_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    EventRow,
    GameKey,
    HandRow,
    MatchRow,
    has_column,
    insert_sql,
)

_SEALED = ("hands", "matches", "events")
"""The result tables whose rows carry a digest (:mod:`~fourhundred_tournament.db.digests`)."""


class ResultsDB:
    """The writer (and a reader) of one tournament database (see :mod:`fourhundred_tournament.db`).

    Takes the writer lock first (DatabaseBusyError if another run holds it), then discards
    the files (`overwrite`) or checks the existing database (damage, fingerprint) before
    writing anything. `lock_note` says when a dead run's lock was taken over.
    """

    def __init__(
        self,
        path: str | Path,
        fingerprint: Mapping[str, Any],
        overwrite: bool = False,
        check: Callable[[Path], None] | None = None,
        create_meta: Mapping[str, Mapping[str, Any]] | None = None,
        accept_unchecked: bool = False,
    ) -> None:
        """`check(path)`: run instead of the fingerprint check (under the lock, before
        anything is written) by a writer that checks the file its own way (a ladder).
        `create_meta`: meta rows (key -> JSON value) a new database records with its schema
        and fingerprint, in the same transaction (an existing one keeps its own).
        `accept_unchecked`: write to a database whose row checks were switched off
        (:func:`~fourhundred_tournament.db.checks.check_checked`; refused otherwise)."""
        self.path = Path(path)
        self.con: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # keyed by the file itself: a symbolic link to the database takes the same lock
            self.lock = WriterLock(self.path.resolve(), shown=self.path)
            self.lock_note = self.lock.acquire()
        except OSError as e:
            raise FourHundredError(
                f"cannot write the results database {str(self.path)!r} ({e.strerror or e}): "
                "expected a writable folder (--db or --out)"
            ) from None
        try:
            if overwrite:
                for suffix in ("", "-wal", "-shm", "-journal"):  # the file, not a link to it
                    Path(str(self.path.resolve()) + suffix).unlink(missing_ok=True)
            else:
                recover_interrupted_write(self.path)
                if check is not None:
                    check(self.path)
                else:
                    check_fingerprint(self.path, fingerprint)
                if self.path.exists() and not is_blank(self.path):
                    check_checked(self.path, read_meta(self.path), accept_unchecked)
            self.con = sqlite3.connect(self.path, timeout=30)
            register(self.con)
            self.con.execute("PRAGMA synchronous=NORMAL")
            self._create(fingerprint, create_meta or {})
        except sqlite3.DatabaseError as e:
            self.close()
            raise damaged_error(self.path, e) from None
        except OSError as e:
            self.close()
            raise FourHundredError(
                f"cannot write the results database {str(self.path)!r} ({e.strerror or e}): "
                "expected a writable file"
            ) from None
        except BaseException:
            self.close()
            raise

    def _create(
        self, fingerprint: Mapping[str, Any], create_meta: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """The tables, the schema version, the fingerprint and `create_meta` in one
        transaction: a run killed at any point leaves either none of them (a blank file, which
        the next run takes as new) or all."""
        con = self.con
        con.isolation_level = None  # our own BEGIN/COMMIT: executescript would commit midway
        try:
            con.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    con.execute(statement)
            if not has_column(con, "hands", "moves"):  # schema 1: its rows keep NULL
                con.execute("ALTER TABLE hands ADD COLUMN moves BLOB")
            for table in _SEALED:  # schema 1 or 2: its rows keep NULL (and are not checked)
                add_digest_column(con, table)
            new = not con.execute("SELECT 1 FROM meta WHERE key = 'fingerprint'").fetchall()
            rows = [("schema", str(SCHEMA_VERSION)),
                    ("fingerprint", json.dumps(dict(fingerprint), sort_keys=True))]  # fmt: skip
            if new:
                rows += [(k, json.dumps(dict(v), sort_keys=True)) for k, v in create_meta.items()]
            if not con.execute(
                "SELECT 1 FROM hands UNION ALL SELECT 1 FROM matches LIMIT 1"
            ).fetchall():  # no row yet (a new file, or one an older run made and left empty)
                rows.append((DIGEST_META, json.dumps(DIGEST_SCHEME, sort_keys=True)))
            con.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", rows)
            # an older schema (a newer one was refused) is this one now; an unchanged file is
            # left byte for byte as it was
            con.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema' AND value != ?",
                (str(SCHEMA_VERSION), str(SCHEMA_VERSION)),
            )
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.isolation_level = ""  # back to the module's default: `with con` transactions

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
                since = {t: last_rowid(self.con, t) for t in _SEALED}
                self.con.executemany(insert_sql("hands", HAND_COLUMNS), map(tuple, hands))
                self.con.executemany(insert_sql("events", EVENT_COLUMNS), map(tuple, events))
                self.con.executemany(
                    "INSERT INTO move_times (pair_a, pair_b, agent, bin, decisions) VALUES "
                    "(?, ?, ?, ?, ?) ON CONFLICT (pair_a, pair_b, agent, bin) DO UPDATE SET "
                    "decisions = decisions + excluded.decisions",
                    move_times,
                )
                self.con.executemany(insert_sql("matches", MATCH_COLUMNS), map(tuple, matches))
                for table, rowid in since.items():
                    seal(self.con, table, rowid)
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
            raise damaged_error(self.path, e) from None

    @property
    def has_moves(self) -> bool:
        """Whether ``hands`` has the ``moves`` column (a database of schema 1, not written
        since, has not)."""
        try:
            return has_column(self.con, "hands", "moves")
        except sqlite3.DatabaseError as e:
            raise damaged_error(self.path, e) from None

    def hand_select(self) -> str:
        """The SELECT list of HAND_COLUMNS for this file (``NULL AS moves`` without the column)."""
        if self.has_moves:
            return ", ".join(HAND_COLUMNS)
        return ", ".join("NULL AS moves" if c == "moves" else c for c in HAND_COLUMNS)

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

    def set_meta(self, key: str, value: Mapping[str, Any]) -> None:
        """Store `value` (as JSON) under `key` in ``meta``, replacing what is there (a
        ladder's fingerprint grows with every bot added)."""
        with self.con:
            self.con.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (key, json.dumps(dict(value), sort_keys=True)),
            )


class ReadOnlyResults(ResultsDB):
    """A results database opened read-only (the reading half of :class:`ResultsDB`)."""

    def __init__(
        self,
        path: str | Path,
        fingerprint: Mapping[str, Any] | None = None,
        accept_unchecked: bool = False,
    ) -> None:
        """Open `path` read-only after SQLite's integrity check (and, given `fingerprint`,
        after checking that it holds that tournament). Needs no writer lock. A database
        whose row checks were switched off is refused unless `accept_unchecked`
        (:func:`~fourhundred_tournament.db.checks.check_checked`)."""
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
            check_schema(self.path, read_meta(self.path))
        check_checked(self.path, read_meta(self.path), accept_unchecked)
        self.con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        register(self.con)
