"""A database file checked before use, read-only, so that a refused file is left exactly as
it was: a write a killed run left half done rolled back (by the writer only), SQLite's
integrity check, then the tournament fingerprint."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fourhundred_env.errors import FourHundredError
from fourhundred_env.registry import check_name


class DatabaseMismatchError(FourHundredError):
    """The database holds results of another tournament (or is not a tournament database)."""


class DatabaseDamagedError(FourHundredError):
    """The database file is damaged (it fails SQLite's integrity check, or a read or write
    hits a malformed page); it is left as it was."""


class UncheckedDatabaseError(DatabaseDamagedError):
    """The database's row checks were switched off (:func:`check_checked`)."""


ACCEPT_FLAG = "--accept-unchecked"
"""The command-line flag by which an owner reads a database whose checks were switched off."""


def check_checked(path: Path, meta: Mapping[str, str], accept: bool = False) -> None:
    """Raise UncheckedDatabaseError in one line naming :data:`ACCEPT_FLAG` when the rows of
    the database at `path` (its `meta`) were checked by their writer and no longer are (see
    :func:`fourhundred_tournament.db.digests.unchecked_reason`), unless `accept`: its owner
    reads it as it is, by name (its rows that still carry a digest are checked)."""
    from fourhundred_tournament.db.digests import unchecked_reason

    if accept or not path.is_file():
        return
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return  # read_meta said what it is
    try:
        reason = unchecked_reason(con, meta)
    except sqlite3.DatabaseError as e:
        raise damaged_error(path, e) from None
    finally:
        con.close()
    if reason is not None:
        raise UncheckedDatabaseError(
            f"database {str(path)!r} has its row checks switched off ({reason}); it was left "
            f"as it is: expected a database whose rows carry their checksums; `fourhundred "
            f"tournament` and `fourhundred ladder` read it as it is, knowingly, with {ACCEPT_FLAG}"
        )


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
        raise damaged_error(path, e) from None


def damaged_error(path: Path, error: Exception | str) -> DatabaseDamagedError:
    """The one-line refusal of the damaged database at `path` (`error`: what SQLite said)."""
    return DatabaseDamagedError(
        f"database {str(path)!r} is damaged ({error}); it was left as it is: expected an intact "
        "tournament database; restore a copy, or choose another --db (or --overwrite to discard "
        "it)"
    )


def _not_a_tournament(path: Path, error: Exception) -> DatabaseMismatchError:
    return DatabaseMismatchError(
        f"database {str(path)!r} is not a fourhundred tournament database ({error}): "
        "expected one written by `fourhundred tournament`; choose another --db or --overwrite"
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
            raise _not_a_tournament(path, e) from None
        try:
            problems = [r[0] for r in con.execute("PRAGMA integrity_check(5)").fetchall()]
        except sqlite3.DatabaseError as e:
            raise damaged_error(path, e) from None
        if problems != ["ok"]:
            raise damaged_error(path, f"integrity check: {'; '.join(problems)[:300]}")
        try:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as e:
            raise _not_a_tournament(path, e) from None
        if "fingerprint" in meta or "ladder" in meta:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            for table in CORE_TABLES:
                if table not in tables:  # a writer would make it again, empty
                    raise damaged_error(path, f"no such table: {table}")
        return meta
    finally:
        con.close()


CORE_TABLES = ("hands", "matches")
"""Tables every tournament or ladder database has had since the first schema."""
OWN_TABLES = frozenset(
    {"meta", "hands", "matches", "move_times", "events", "sqlite_sequence",
     "ladder_bots", "ladder_events", "ladder_pairings", "ladder_deals", "ladder_files"}
)  # fmt: skip
"""Every table a fourhundred results database holds (a file with others is another
program's)."""


def read_fingerprint(path: Path, meta: Mapping[str, str]) -> dict[str, Any]:
    """The tournament fingerprint in a database's `meta`, checked: a JSON object naming the
    agents (a list), the rules (a mapping), the seed and max_hands (integers).
    DatabaseDamagedError in one line when it is not."""
    try:
        fp = json.loads(meta["fingerprint"])
        if not isinstance(fp, dict):
            raise TypeError(f"a {type(fp).__name__}, not an object")
        missing = [k for k in ("agents", "rules", "seed", "max_hands") if k not in fp]
        if missing:
            raise KeyError(", ".join(missing))
        if not isinstance(fp["agents"], list) or not isinstance(fp["rules"], dict):
            raise TypeError("agents or rules of the wrong kind")
        int(fp["seed"]), int(fp["max_hands"])
    except (KeyError, TypeError, ValueError) as e:
        why = f"missing {e.args[0]}" if isinstance(e, KeyError) else str(e).splitlines()[0]
        raise DatabaseDamagedError(
            f"database {str(path)!r} has no readable tournament fingerprint ({why[:200]}); it "
            "was left as it is: expected one written by `fourhundred tournament` or "
            "`fourhundred ladder`"
        ) from None
    return fp


def read_names(path: Path, meta: Mapping[str, str]) -> dict[str, str]:
    """The agents' display names in a database's `meta` (``names``: label -> name, what the
    last run that wrote it named them; empty when none were given), checked like a name in
    a spec. DatabaseDamagedError in one line when they are not a JSON object of such names."""
    try:
        names = json.loads(meta.get("names", "{}"))
        if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
            raise TypeError("expected an object of names")
        for label, name in names.items():
            check_name(name, f"the name of {label!r}")
    except (TypeError, ValueError) as e:  # ConfigError is a ValueError
        raise DatabaseDamagedError(
            f"database {str(path)!r} has unreadable agent names ({str(e).splitlines()[0][:200]}); "
            "it was left as it is: expected those `fourhundred tournament` or `fourhundred "
            "ladder` write"
        ) from None
    return names


def is_blank(path: Path) -> bool:
    """True when the file at `path` holds no tournament yet: empty, or only tables with no
    fingerprint and no rows (a run killed as it created the file, or one of an earlier
    version killed between its schema and its fingerprint). A writer takes it as new; a file
    with tables of another program is not blank."""
    if not path.is_file():
        return False
    if path.stat().st_size == 0:
        return True
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables - OWN_TABLES:  # another program's database
            return False
        if (
            "meta" in tables
            and con.execute("SELECT 1 FROM meta WHERE key IN ('fingerprint', 'ladder')").fetchall()
        ):
            return False
        return not any(
            con.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchall()
            for t in ("hands", "matches", "events")
            if t in tables
        )
    except sqlite3.DatabaseError:  # damaged, or not SQLite: read_meta says which
        return False
    finally:
        con.close()


def check_schema(path: Path, meta: Mapping[str, str]) -> None:
    """Raise DatabaseMismatchError when the database's schema (meta ``schema``) is newer than
    this version of fourhundred writes and reads."""
    from fourhundred_tournament.db.schema import SCHEMA_VERSION

    stored = meta.get("schema", "1")
    if not stored.isdigit() or int(stored) > SCHEMA_VERSION:
        raise DatabaseMismatchError(
            f"database {str(path)!r} has schema {stored}, newer than this fourhundred's "
            f"{SCHEMA_VERSION}: expected a database of this version; upgrade fourhundred"
        )


def _describe(fp: Mapping[str, Any], key: str) -> str:
    value = fp.get(key)
    return json.dumps(value, sort_keys=True) if not isinstance(value, str) else value


def _known_files_only(stored: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> dict:
    """`fingerprint` with only the agents' files that `stored` recorded: a database written
    before a bot's files were hashed (the search's checkpoints) holds no digest to check
    them against, and resumes as it did."""
    out = dict(fingerprint)
    known = stored.get("agent_files")
    if isinstance(known, Mapping) and isinstance(out.get("agent_files"), Mapping):
        out["agent_files"] = {k: v for k, v in out["agent_files"].items() if k in known}
    return out


def check_fingerprint(path: Path, fingerprint: Mapping[str, Any]) -> bool:
    """Raise DatabaseMismatchError unless `path` is absent or holds this tournament.

    Opens the file read-only (after SQLite's integrity check: a damaged file raises
    DatabaseDamagedError), so a refused database is left exactly as it was. Returns True
    when the file exists (a rerun that resumes), False when it does not.
    """
    if not path.exists() or is_blank(path):
        return False
    rows = read_meta(path)
    check_schema(path, rows)
    if "ladder" in rows:
        raise DatabaseMismatchError(
            f"database {str(path)!r} is a ladder (`fourhundred ladder`), not one tournament: "
            f"expected a tournament database; add bots with `fourhundred ladder add SPEC --db "
            f"{path}`, report it with `fourhundred ladder report --db {path}`, or choose another "
            "--db"
        )
    if "fingerprint" not in rows:
        raise DatabaseMismatchError(
            f"database {str(path)!r} has no tournament fingerprint: expected one written by "
            "`fourhundred tournament`; choose another --db or --overwrite"
        )
    stored = read_fingerprint(path, rows)
    fingerprint = _known_files_only(stored, fingerprint)
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
