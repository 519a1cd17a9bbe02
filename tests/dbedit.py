"""Databases edited for tests: as older versions of fourhundred wrote them (the readers must
go on reading them), or changed by someone who also recomputes the rows' digests (so that a
test reaches the checks behind them)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fourhundred_tournament.db.digests import DIGEST_META, register, seal
from fourhundred_tournament.db.ladder import sealed_settings
from fourhundred_tournament.db.schema import has_column


def to_schema_1(path: Path, con: sqlite3.Connection | None = None) -> None:
    """Make the database at `path` what a version before moves and row digests wrote: no
    ``moves`` column, no ``digest`` columns, no ``digests`` meta, schema 1. With `con`, in
    its transaction (the caller commits)."""
    own = con is None
    con = con if con is not None else sqlite3.connect(path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        con.execute("ALTER TABLE hands DROP COLUMN moves")
        for table in tables:
            if has_column(con, table, "digest"):
                con.execute(f"ALTER TABLE {table} DROP COLUMN digest")
        con.execute("DELETE FROM meta WHERE key = ?", (DIGEST_META,))
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
        if own:
            con.commit()
    finally:
        if own:
            con.close()


def reseal(con: sqlite3.Connection) -> None:
    """Recompute the digest of every row (in `con`'s transaction): what a forger does after
    an edit, which the digests cannot tell from the writer's own."""
    register(con)
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        if has_column(con, table, "digest"):
            con.execute(f"UPDATE {table} SET digest = NULL")
            seal(con, table)
    found = con.execute("SELECT value FROM meta WHERE key = 'ladder'").fetchone()
    if found is not None and "digest" in json.loads(found[0]):  # the ladder's settings too
        value = sealed_settings(json.loads(found[0]))
        con.execute("UPDATE meta SET value = ? WHERE key = 'ladder'", (value,))
