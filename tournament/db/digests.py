"""Row checksums: every row of ``hands``, ``matches``, ``events`` and the ladder's tables carries
in its ``digest`` column a BLAKE2b checksum of its values as SQLite stores them, so that a
change the value checks cannot see (a score of 9 made -95, still in range; a pairing's
matches; a label) is refused on read in one line naming the row.

The checksum detects damage and hand edits; it is not a signature: whoever can write the file
can compute it again (``sqlite3`` with this module's function), so it proves nothing about who
wrote a row. A database written before rows carried one (no ``digests`` in its meta) is read
as it is: its rows of NULL digest pass, and those written since are checked. A database whose
checks were switched off (its ``digests`` meta deleted while its rows carry digests, a row's
digest cleared among sealed ones, a digest column dropped, the ladder's meta row stripped of
its checksum: :func:`unchecked_reason`) is refused unless its owner accepts it by name
(``--accept-unchecked``).

The writer computes a row's digest inside SQLite after the insert (:func:`seal`), from the
values as stored, so the numbers a column's affinity converts (an int stored in a REAL column
reads back as a float) are summed as they read back.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence

from fourhundred_tournament.db.schema import has_column

__all__ = [
    "DIGEST_META", "DIGEST_SCHEME", "SEALED_TABLES", "add_digest_column", "covered", "first_mismatch",
    "is_strict", "last_rowid", "register", "row_digest", "seal", "unchecked_reason",
]  # fmt: skip

DIGEST_META = "digests"
"""The meta key of a database whose every row carries a digest (value: the scheme, JSON)."""
DIGEST_SCHEME = {"scheme": "blake2b-64", "version": 1}

_FUNCTION = "fourhundred_digest"
SEALED_TABLES = (
    "hands", "matches", "events", "ladder_bots", "ladder_events", "ladder_pairings",
    "ladder_deals", "ladder_files",
)  # fmt: skip
"""Every table whose rows carry a digest."""
_DIGEST_SCHEMA = 3  # fourhundred_tournament.db.schema.SCHEMA_VERSION that added the digests


def row_digest(table: str, *values: object) -> str:
    """The digest of a row of `table` holding `values` (as SQLite gives them back): 16 hex
    digits of BLAKE2b over the table's name and the values' reprs."""
    text = "\x1f".join([table, *map(repr, values)])
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def register(con: sqlite3.Connection) -> None:
    """Give `con` the SQL function the digests are computed with (every connection that writes
    or checks rows)."""
    con.create_function(_FUNCTION, -1, row_digest, deterministic=True)


def covered(con: sqlite3.Connection, table: str) -> tuple[str, ...]:
    """The columns of `table` its digest covers: all but ``digest`` itself and an ``id``
    SQLite assigns (the events'), which a resumed run numbers differently."""
    return tuple(
        r[1] for r in con.execute(f"PRAGMA table_info({table})") if r[1] not in ("digest", "id")
    )


def add_digest_column(con: sqlite3.Connection, table: str) -> None:
    """Give `table` its ``digest`` column if it has none (a database of an older schema: its
    rows keep NULL, and are not checked unless the meta says every row has one)."""
    if not has_column(con, table, "digest"):
        con.execute(f"ALTER TABLE {table} ADD COLUMN digest TEXT")


def digest_expression(table: str, columns: Sequence[str]) -> str:
    """The SQL expression of a row's digest of `table` over `columns`."""
    return f"{_FUNCTION}('{table}', {', '.join(columns)})"


def seal(con: sqlite3.Connection, table: str, after_rowid: int | None = None) -> None:
    """Compute the digest of the rows of `table` inserted since rowid `after_rowid` (None: of
    every row without one), in the caller's transaction."""
    expr = digest_expression(table, covered(con, table))
    if after_rowid is None:
        con.execute(f"UPDATE {table} SET digest = {expr} WHERE digest IS NULL")
    else:
        con.execute(f"UPDATE {table} SET digest = {expr} WHERE rowid > ?", (after_rowid,))


def last_rowid(con: sqlite3.Connection, table: str) -> int:
    """The largest rowid of `table` (0 when empty): rows inserted next come after it."""
    (top,) = con.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()
    return int(top or 0)


def first_mismatch(
    con: sqlite3.Connection,
    table: str,
    names: Sequence[str],
    strict: bool,
    where: str = "",
    params: Sequence[object] = (),
) -> dict[str, object] | None:
    """The key columns `names` (and their values) of the first row of `table` whose digest is
    not that of its values, or None. `strict`: a row without a digest is one (a database
    whose meta says every row has one); `where`: more conditions (``AND ...``)."""
    if not has_column(con, table, "digest"):
        if not strict:
            return None
        row = con.execute(f"SELECT {', '.join(names)} FROM {table} WHERE 1 {where} LIMIT 1", params)
        found = row.fetchone()
        return None if found is None else dict(zip(names, found, strict=True))
    bad = f"digest != {digest_expression(table, covered(con, table))}"
    bad = f"digest IS NULL OR {bad}" if strict else f"digest IS NOT NULL AND {bad}"
    found = con.execute(
        f"SELECT {', '.join(names)} FROM {table} WHERE ({bad}) {where} LIMIT 1", params
    ).fetchone()
    return None if found is None else dict(zip(names, found, strict=True))


def is_strict(meta: Mapping[str, str]) -> bool:
    """Whether every row of a database with this meta carries a digest."""
    return DIGEST_META in meta


def unchecked_reason(con: sqlite3.Connection, meta: Mapping[str, str]) -> str | None:
    """Why the rows of the database open in `con` (its `meta`) are no longer all checked,
    though its writer checked them, or None. A writer of this version records the meta
    ``digests`` in a new database and seals every row it writes (an older database keeps its
    rows of NULL digest, all before the first sealed row of each table) and the ladder's meta
    row; what is found otherwise was switched off by hand."""
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "ladder" in meta and "ladder_files" in tables:  # written by a writer that seals it
        try:
            value = json.loads(meta["ladder"])
            sealed = not isinstance(value, dict) or "digest" in value
        except (TypeError, ValueError, AttributeError):
            sealed = True  # unreadable: the row check says so
        if not sealed:
            return "the meta row 'ladder' has lost its checksum"
    if DIGEST_META in meta:
        return None  # every row is checked, one without a digest refused
    schema = meta.get("schema", "1")
    if schema.isdigit() and int(schema) >= _DIGEST_SCHEMA:
        for table in ("hands", "matches", "events"):
            if table in tables and not has_column(con, table, "digest"):
                return f"the digest column of {table} is gone"
    with_digest = without = False
    for table in SEALED_TABLES:
        if table not in tables or not has_column(con, table, "digest"):
            continue
        last_null, first_sealed = con.execute(
            f"SELECT MAX(CASE WHEN digest IS NULL THEN rowid END), "
            f"MIN(CASE WHEN digest IS NOT NULL THEN rowid END) FROM {table}"
        ).fetchone()
        with_digest |= first_sealed is not None
        without |= last_null is not None
        if last_null is not None and first_sealed is not None and last_null > first_sealed:
            return f"a row of {table} without its checksum after rows with one"
    if with_digest and not without:
        return f"its meta {DIGEST_META!r} is gone, while every row carries a checksum"
    return None
