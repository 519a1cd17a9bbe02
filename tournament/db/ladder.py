"""A ladder's own tables beside the results: its bots, its events and its pairings.

A ladder (:mod:`fourhundred_tournament.ladder`) is a results database that grows: each ``ladder add`` is an
event that puts bots on it and plays the pairings they are missing. Its rows of ``hands``,
``matches`` and ``events`` are a tournament's (keyed by the pairing's labels), and three tables
say what the ladder is made of::

    ladder_bots      label                one bot version: its spec, version number, the SHA-256
                                          of its files (None: it names none), the event that
                                          first added it, and what else is known (JSON: a
                                          training run's step, say)
    ladder_events    event                1, 2, ...: kind (add, remove), the labels added or
                                          retired, the versions retired by the add (their files
                                          changed), matches per pairing, start and end times
    ladder_pairings  pair_a, pair_b       the event that planned it and its duplicate matches
    ladder_deals     event                the event's own deal secret (hex; secret deals only):
                                          its pairings deal from it (an event without one, of a
                                          ladder made before events drew their own, deals from
                                          the meta ``deals`` secret)
    ladder_files     label, name          each file of a bot version with its SHA-256
                                          (:func:`fourhundred_tournament.identity.file_digests`),
                                          so that a refusal names the file that changed (a bot
                                          added before files were recorded one by one has none)

A bot's label is its spec; a later version of the same spec (its checkpoint or program
changed) is labelled ``SPEC@v2``, ``SPEC@v3``..., so the game keys of two versions never meet
and a ladder whose bots never changed holds the rows of a tournament of the same bots. The meta
key ``ladder`` holds the settings every pairing shares (rules, seed, max_hands, the anchor of
the ratings) and the ladder's format version; ``fingerprint`` is kept up to date with every
bot, so that the readers of tournament databases (the report, replays, the web's Watch view)
read a ladder as they read a tournament.

:func:`read_ladder` reads any database the project writes: a tournament's is read as a ladder
of one event that added all its agents.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fourhundred_tournament.db.checks import DatabaseMismatchError, damaged_error, read_fingerprint
from fourhundred_tournament.db.digests import (
    add_digest_column,
    first_mismatch,
    is_strict,
    row_digest,
    seal,
)
from fourhundred_tournament.db.results import ResultsDB
from fourhundred_tournament.db.values import row_damage
from fourhundred_tournament.deals import DealSecret

__all__ = [
    "LADDER_SCHEMA",
    "LADDER_VERSION",
    "Ladder",
    "LadderBot",
    "LadderEvent",
    "check_ladder_meta",
    "empty_ladder",
    "finish_events",
    "pairing_secrets",
    "read_ladder",
    "recorded_pairings",
    "sealed_settings",
    "settings_digest",
    "version_label",
    "write_event",
]

LADDER_VERSION = 1
"""The format of the ladder tables and of the ``ladder`` meta; a newer one is refused."""

LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ladder_bots (
    label TEXT PRIMARY KEY, spec TEXT NOT NULL, version INTEGER NOT NULL, files TEXT,
    added INTEGER NOT NULL, info TEXT NOT NULL DEFAULT '{}', digest TEXT
);
CREATE TABLE IF NOT EXISTS ladder_events (
    event INTEGER PRIMARY KEY, kind TEXT NOT NULL, labels TEXT NOT NULL, retired TEXT NOT NULL,
    matches INTEGER, started TEXT NOT NULL, finished TEXT, note TEXT NOT NULL DEFAULT '',
    digest TEXT
);
CREATE TABLE IF NOT EXISTS ladder_pairings (
    pair_a TEXT NOT NULL, pair_b TEXT NOT NULL, event INTEGER NOT NULL, matches INTEGER NOT NULL,
    digest TEXT, PRIMARY KEY (pair_a, pair_b)
);
CREATE TABLE IF NOT EXISTS ladder_deals (
    event INTEGER PRIMARY KEY, secret TEXT NOT NULL, digest TEXT
);
CREATE TABLE IF NOT EXISTS ladder_files (
    label TEXT NOT NULL, name TEXT NOT NULL, sha256 TEXT NOT NULL, digest TEXT,
    PRIMARY KEY (label, name)
);
"""


@dataclass(frozen=True)
class LadderBot:
    """One version of a bot on the ladder."""

    label: str  # the games' label: the spec, or SPEC@vN for a later version
    spec: str
    version: int
    files: str | None  # SHA-256 of its files when added (None: the spec names no file)
    added: int  # the event that first added it
    info: dict[str, Any] = field(default_factory=dict)  # e.g. {"run": ..., "step": ...}
    file_map: dict[str, str] | None = None  # each file's SHA-256 (None: not recorded)


@dataclass(frozen=True)
class LadderEvent:
    """One change of the ladder: bots added (kind "add"; "tournament" for the agents of a
    tournament database read as a ladder) or retired ("remove")."""

    event: int
    kind: str
    labels: tuple[str, ...]
    retired: tuple[str, ...]  # versions an add retired (a newer one of the same spec came)
    matches: int | None
    started: str
    finished: str | None  # None: its games were not all played yet (a run was stopped)
    note: str = ""


@dataclass(frozen=True)
class Ladder:
    """What a database holds, as a ladder (see the module docstring)."""

    path: Path
    settings: dict[str, Any]  # rules (dict), seed, max_hands, anchor
    bots: tuple[LadderBot, ...]
    events: tuple[LadderEvent, ...]
    pairings: dict[tuple[str, str], tuple[int, int]]  # pair -> (event, duplicate matches)
    is_ladder: bool  # False: a tournament database read as a ladder of one event

    def bot(self, label: str) -> LadderBot:
        """The bot of label `label` (StopIteration if there is none)."""
        return next(b for b in self.bots if b.label == label)

    def active(self, upto: int | None = None) -> list[str]:
        """Labels of the bots on the ladder (added and not retired) after event `upto`
        (default: the last), in the order they came."""
        on: dict[str, None] = {}
        for e in self.events:
            if upto is not None and e.event > upto:
                break
            for label in e.retired:
                on.pop(label, None)
            for label in e.labels:
                if e.kind == "remove":
                    on.pop(label, None)
                else:
                    on[label] = None
        return list(on)

    def retired_at(self, label: str) -> int | None:
        """The event that last retired `label`, if it is not on the ladder now."""
        if label in self.active():
            return None
        events = [e.event for e in self.events if label in e.retired
                  or (e.kind == "remove" and label in e.labels)]  # fmt: skip
        return events[-1] if events else None

    def pairings_upto(self, event: int) -> dict[tuple[str, str], int]:
        """The pairings planned by event `event` or earlier, with their duplicate matches."""
        return {p: m for p, (e, m) in self.pairings.items() if e <= event}

    def specs(self) -> dict[str, str]:
        """The spec of each version whose label is not its spec (``SPEC@v2``), by label."""
        return {b.label: b.spec for b in self.bots if b.label != b.spec}


def version_label(spec: str, version: int) -> str:
    """The label of version `version` of `spec`: the spec itself for the first."""
    return spec if version == 1 else f"{spec}@v{version}"


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


# -- reading ------------------------------------------------------------------------------------
def _tables(db: ResultsDB) -> set[str]:
    return {r[0] for r in db.query("SELECT name FROM sqlite_master WHERE type = 'table'")}


def check_ladder_meta(path: Path, meta: Mapping[str, str]) -> None:
    """DatabaseMismatchError when the ``ladder`` meta is unreadable or of a newer format."""
    if "ladder" not in meta:
        return
    try:
        version = int(json.loads(meta["ladder"]).get("version", 0))
    except (ValueError, TypeError, AttributeError):
        version = None
    if version is None or version > LADDER_VERSION:
        raise DatabaseMismatchError(
            f"database {str(path)!r} is a ladder of format {version}, newer than this "
            f"fourhundred's {LADDER_VERSION} (or unreadable): expected a ladder this version "
            "writes; upgrade fourhundred"
        )


def read_ladder(db: ResultsDB) -> Ladder:
    """The ladder `db` holds; a tournament database is read as one event adding all its
    agents, each pairing planned with as many matches as the highest match id played.
    DatabaseMismatchError when the database is neither, or a ladder of a newer format;
    DatabaseDamagedError in one line naming the row when a row of the ladder's tables holds a
    value a ladder cannot have written, or values its digest was not computed from."""
    meta = db.meta()
    if "ladder" not in meta:
        return _tournament_as_ladder(db, meta)
    check_ladder_meta(db.path, meta)
    check = _RowCheck(db)
    settings = check.settings(meta["ladder"])
    rows = {t: _rows(db, t) for t in LADDER_TABLES}
    checked = sorted((check.bot(r) for r in rows["ladder_bots"]), key=lambda b: (b[4], b[0]))
    labels = {b[0] for b in checked}
    maps: dict[str, dict[str, str]] = {}
    for row in rows["ladder_files"]:
        label, name, sha = check.file(row, labels)
        maps.setdefault(label, {})[name] = sha
    bots = tuple(LadderBot(*b, maps.get(b[0])) for b in checked)
    events = tuple(check.event(r, i + 1, labels) for i, r in enumerate(rows["ladder_events"]))
    last = len(events)
    for b in bots:
        if b.added > last:
            raise check.damage("ladder_bots", {"label": b.label}, f"added={b.added}",
                               f"an event of 1 to {last}")  # fmt: skip
    pairings = dict(check.pairing(r, labels, last) for r in rows["ladder_pairings"])
    for event, _secret in rows["ladder_deals"]:
        if type(event) is not int or not 1 <= event <= last:
            raise check.damage("ladder_deals", {"event": event}, f"event={event!r}",
                               f"an event of 1 to {last}")  # fmt: skip
    anchor = settings.get("anchor")
    if anchor is not None and anchor not in labels:
        raise check.damage("meta", {"key": "ladder"}, f"anchor={anchor!r}", "a bot's label")
    strict = is_strict(meta)
    present = _tables(db)
    for table, names in LADDER_TABLES.items():
        if table not in present:  # a ladder made before the table was
            continue
        bad = first_mismatch(db.con, table, names, strict)
        if bad is not None:
            raise row_damage(db, table, bad, "values that do not match its checksum", "a ladder")
    return Ladder(db.path, settings, bots, events, pairings, True)


LADDER_TABLES = {
    "ladder_bots": ("label",), "ladder_events": ("event",),
    "ladder_pairings": ("pair_a", "pair_b"), "ladder_deals": ("event",),
    "ladder_files": ("label", "name"),
}  # fmt: skip
"""The ladder's own tables, with the columns that name a row."""
_COLUMNS = {
    "ladder_bots": "label, spec, version, files, added, info",
    "ladder_events": "event, kind, labels, retired, matches, started, finished, note",
    "ladder_pairings": "pair_a, pair_b, event, matches",
    "ladder_deals": "event, secret",
    "ladder_files": "label, name, sha256",
}
_ORDER = {"ladder_events": " ORDER BY event", "ladder_files": " ORDER BY label, name"}
_KINDS = ("add", "remove", "tournament")
_MAX_MATCHES = 10**7  # a pairing's duplicate matches (far more than a ladder plays)
_MAX_HANDS = 100_000  # fourhundred_tournament.config.MAX_HANDS (the db layer does not import it)


def _rows(db: ResultsDB, table: str) -> list[tuple[Any, ...]]:
    if table not in _tables(db):  # a ladder made before the table was
        return []
    return db.query(f"SELECT {_COLUMNS[table]} FROM {table}{_ORDER.get(table, '')}")


class _RowCheck:
    """The checks of the ladder's rows, each raising DatabaseDamagedError naming the row."""

    def __init__(self, db: ResultsDB) -> None:
        self.db = db

    def damage(self, table: str, ids: Mapping[str, object], what: str, expected: str) -> Exception:
        return row_damage(self.db, table, ids, f"{what} (expected {expected})", "a ladder")

    def _int(self, table: str, ids: dict, name: str, value: Any, low: int, high: int) -> int:
        if type(value) is not int or not low <= value <= high:
            span = "an integer" if high >= 2**62 else f"an integer of {low} to {high}"
            raise self.damage(table, ids, f"{name}={value!r}", span)
        return value

    def _text(self, table: str, ids: dict, name: str, value: Any, empty: bool = False) -> str:
        if not isinstance(value, str) or not (empty or value):
            raise self.damage(table, ids, f"{name}={value!r}", "text")
        return value

    def _json(self, table: str, ids: dict, name: str, value: Any, kind: type) -> Any:
        try:
            out = json.loads(value)
        except (TypeError, ValueError):
            out = None
        if not isinstance(out, kind) or (kind is list and not all(isinstance(x, str) for x in out)):
            what = "a JSON object" if kind is dict else "a JSON list of labels"
            raise self.damage(table, ids, f"{name}={str(value)[:80]!r}", what)
        return out

    def settings(self, text: str) -> dict[str, Any]:
        """The ``ladder`` meta (the settings every pairing shares), checked, its checksum
        (``digest``, :func:`sealed_settings`) first."""
        ids = {"key": "ladder"}
        settings = self._json("meta", ids, "ladder", text, dict)
        digest = settings.pop("digest", None)
        self._int("meta", ids, "seed", settings.get("seed"), -(2**63), 2**63 - 1)
        self._int("meta", ids, "max_hands", settings.get("max_hands"), 1, _MAX_HANDS)
        if not isinstance(settings.get("rules"), dict):
            raise self.damage("meta", ids, f"rules={settings.get('rules')!r}", "a mapping of rules")
        if not isinstance(settings.get("anchor"), str | None):
            raise self.damage(
                "meta", ids, f"anchor={settings['anchor']!r}", "a bot's label or null"
            )
        if digest is not None and digest != settings_digest(settings):  # in range, but edited
            raise row_damage(self.db, "meta", ids, "values that do not match its checksum",
                             "a ladder")  # fmt: skip
        return settings

    def bot(self, row: tuple[Any, ...]) -> tuple[str, str, int, str | None, int, dict]:
        label, spec, version, files, added, info = row
        ids = {"label": label}
        t = "ladder_bots"
        self._text(t, ids, "label", label)
        self._text(t, ids, "spec", spec)
        self._int(t, ids, "version", version, 1, 10**6)
        if files is not None and not (isinstance(files, str) and _is_digest(files)):
            raise self.damage(t, ids, f"files={files!r}", "a SHA-256 in hex, or NULL")
        self._int(t, ids, "added", added, 1, 10**9)
        info = self._json(t, ids, "info", info, dict)
        if label != version_label(spec, version):
            raise self.damage(t, ids, f"label={label!r}",
                              repr(version_label(spec, version)) + " for its spec and version")  # fmt: skip
        return label, spec, version, files, added, info

    def file(self, row: tuple[Any, ...], labels: set[str]) -> tuple[str, str, str]:
        label, name, sha = row
        ids = {"label": label, "name": name}
        t = "ladder_files"
        if label not in labels:
            raise self.damage(t, ids, f"label={label!r}", "a bot of ladder_bots")
        self._text(t, ids, "name", name)
        if not (isinstance(sha, str) and _is_digest(sha)):
            raise self.damage(t, ids, f"sha256={sha!r}", "a SHA-256 in hex")
        return label, name, sha

    def event(self, row: tuple[Any, ...], number: int, labels: set[str]) -> LadderEvent:
        event, kind, added, retired, matches, started, finished, note = row
        ids = {"event": event}
        t = "ladder_events"
        if event != number or type(event) is not int:
            raise self.damage(t, ids, f"event={event!r}", f"event {number}: events count 1, 2...")
        if kind not in _KINDS:
            raise self.damage(t, ids, f"kind={kind!r}", f"one of {', '.join(_KINDS)}")
        added = self._json(t, ids, "labels", added, list)
        retired = self._json(t, ids, "retired", retired, list)
        unknown = [x for x in (*added, *retired) if x not in labels]
        if unknown:
            raise self.damage(t, ids, f"label {unknown[0]!r}", "a bot of ladder_bots")
        if matches is not None:
            self._int(t, ids, "matches", matches, 1, _MAX_MATCHES)
        self._text(t, ids, "started", started, empty=True)
        if finished is not None:
            self._text(t, ids, "finished", finished)
        self._text(t, ids, "note", note, empty=True)
        return LadderEvent(event, kind, tuple(added), tuple(retired), matches, started, finished,
                           note)  # fmt: skip

    def pairing(
        self, row: tuple[Any, ...], labels: set[str], last: int
    ) -> tuple[tuple[str, str], tuple[int, int]]:
        a, b, event, matches = row
        ids = {"pair_a": a, "pair_b": b}
        t = "ladder_pairings"
        for name, label in (("pair_a", a), ("pair_b", b)):
            if label not in labels:
                raise self.damage(t, ids, f"{name}={label!r}", "a bot of ladder_bots")
        if a > b:
            raise self.damage(t, ids, "its labels out of order", "pair_a <= pair_b")
        self._int(t, ids, "event", event, 1, last)
        self._int(t, ids, "matches", matches, 1, _MAX_MATCHES)
        return (a, b), (event, matches)


def settings_digest(settings: Mapping[str, Any]) -> str:
    """The checksum of a ladder's settings (the ``ladder`` meta row without its ``digest``)."""
    return row_digest("meta", "ladder", json.dumps(dict(settings), sort_keys=True))


def sealed_settings(settings: Mapping[str, Any]) -> str:
    """The ``ladder`` meta row's value: the settings (JSON) with their checksum, ``digest``,
    so that an edited ``max_hands`` or ``anchor`` is refused on read like an edited row. A
    ladder written before the row carried one is read as it is (unless checks were switched
    off: :func:`fourhundred_tournament.db.checks.unchecked_reason`)."""
    plain = {k: v for k, v in settings.items() if k != "digest"}
    return json.dumps({**plain, "digest": settings_digest(plain)}, sort_keys=True)


def _is_digest(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def _tournament_as_ladder(db: ResultsDB, meta: Mapping[str, str]) -> Ladder:
    if "fingerprint" not in meta:
        raise DatabaseMismatchError(
            f"database {str(db.path)!r} has no tournament fingerprint: expected one written by "
            "`fourhundred tournament` or `fourhundred ladder`"
        )
    fp = read_fingerprint(db.path, meta)
    labels = sorted(fp["agents"])
    (top,) = db.query("SELECT MAX(match_id) FROM matches")[0]
    matches = int(top) + 1 if top is not None else 1
    mirrors = [a for (a,) in db.query("SELECT DISTINCT pair_a FROM matches WHERE pair_a = pair_b")]
    pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
    pairs += [(a, a) for a in sorted(mirrors) if a in labels]
    files = fp.get("agent_files", {})
    bots = tuple(LadderBot(a, a, 1, files.get(a), 1) for a in labels)
    (played,) = db.query("SELECT COUNT(*) FROM matches")[0]
    done = _now() if played >= 2 * matches * len(pairs) else None
    event = LadderEvent(1, "tournament", tuple(labels), (), matches, "", done)
    settings = {"rules": fp["rules"], "seed": fp["seed"], "max_hands": fp["max_hands"],
                "anchor": None, "version": LADDER_VERSION}  # fmt: skip
    return Ladder(db.path, settings, bots, (event,), {p: (1, matches) for p in sorted(pairs)},
                  False)  # fmt: skip


def pairing_secrets(db: Any) -> dict[tuple[str, str], DealSecret]:
    """The pairings whose event drew a deal secret of its own (table ``ladder_deals``), with
    it; empty for a tournament database (its one secret is the meta ``deals``). A damaged
    secret is DatabaseDamagedError in one line."""
    tables = {r[0] for r in db.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "ladder_deals" not in tables:
        return {}
    out = {}
    rows = db.query(
        "SELECT p.pair_a, p.pair_b, d.event, d.secret FROM ladder_pairings p "
        "JOIN ladder_deals d ON d.event = p.event"
    )
    for a, b, event, text in rows:
        try:
            secret = bytes.fromhex(text)
            if len(secret) != 32:
                raise ValueError(f"{len(secret)} bytes")
        except (TypeError, ValueError) as e:
            raise damaged_error(
                db.path, f"the deal secret of ladder event {event} is not 32 bytes of hex ({e})"
            ) from None
        out[(str(a), str(b))] = DealSecret(secret)
    return out


def recorded_pairings(db: ResultsDB) -> dict[tuple[str, str], int] | None:
    """A ladder's pairings with their duplicate matches; None for a tournament database (its
    pairings are its config's)."""
    if "ladder" not in db.meta():
        return None
    return {p: m for p, (_, m) in read_ladder(db).pairings.items()}


# -- writing (by the one writer, holding the lock) ---------------------------------------------
def write_event(
    db: ResultsDB,
    ladder: Ladder,
    kind: str,
    bots: Sequence[LadderBot],
    labels: Sequence[str],
    retired: Sequence[str],
    pairings: Mapping[tuple[str, str], int],
    matches: int | None,
    note: str = "",
    secret: DealSecret | None = None,
) -> int:
    """Record the next event in one transaction: the new bot versions `bots`, the event
    (`labels` added or, for "remove", retired; `retired` the versions an add replaced), the
    `pairings` it plans and its deal `secret` (None: none of its own). Creates the ladder
    tables and its meta on a new ladder. Returns the event's number."""
    event = 1 + max((e.event for e in ladder.events), default=0)
    con = db.con
    try:
        with con:
            con.executescript(LADDER_SCHEMA)
            for table in LADDER_TABLES:  # a ladder written before rows carried a digest
                add_digest_column(con, table)
            con.execute(
                "INSERT OR REPLACE INTO meta VALUES ('ladder', ?)",
                (sealed_settings(ladder.settings),),
            )
            if not ladder.is_ladder:  # a tournament database becomes a ladder: its event first
                _insert_events(con, ladder)
            con.executemany(
                "INSERT INTO ladder_bots (label, spec, version, files, added, info) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(b.label, b.spec, b.version, b.files, event, json.dumps(b.info, sort_keys=True))
                 for b in bots],
            )  # fmt: skip
            con.executemany(
                "INSERT INTO ladder_files (label, name, sha256) VALUES (?, ?, ?)",
                [(b.label, name, sha) for b in bots for name, sha in
                 sorted((b.file_map or {}).items())],
            )  # fmt: skip
            con.execute(
                "INSERT INTO ladder_events (event, kind, labels, retired, matches, started, "
                "finished, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (event, kind, json.dumps(list(labels)), json.dumps(list(retired)), matches,
                 _now(), None if pairings else _now(), note),
            )  # fmt: skip
            con.executemany(
                "INSERT INTO ladder_pairings (pair_a, pair_b, event, matches) VALUES (?, ?, ?, ?)",
                [(a, b, event, m) for (a, b), m in sorted(pairings.items())],
            )
            if secret is not None:
                con.execute(
                    "INSERT INTO ladder_deals (event, secret) VALUES (?, ?)",
                    (event, secret.secret.hex()),
                )
            for table in LADDER_TABLES:
                seal(con, table)
    except sqlite3.DatabaseError as e:
        from fourhundred_tournament.db.checks import damaged_error

        raise damaged_error(db.path, e) from None
    return event


def _insert_events(con: sqlite3.Connection, ladder: Ladder) -> None:
    """Write the bots, events and pairings of `ladder` (a tournament read as a ladder)."""
    con.executemany(
        "INSERT INTO ladder_bots (label, spec, version, files, added, info) VALUES (?, ?, ?, ?, ?, ?)",
        [(b.label, b.spec, b.version, b.files, b.added, json.dumps(b.info)) for b in ladder.bots],
    )
    con.executemany(
        "INSERT INTO ladder_events (event, kind, labels, retired, matches, started, finished, "
        "note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(e.event, e.kind, json.dumps(list(e.labels)), json.dumps(list(e.retired)), e.matches,
          e.started or _now(), e.finished, e.note) for e in ladder.events],
    )  # fmt: skip
    con.executemany(
        "INSERT INTO ladder_pairings (pair_a, pair_b, event, matches) VALUES (?, ?, ?, ?)",
        [(a, b, e, m) for (a, b), (e, m) in sorted(ladder.pairings.items())],
    )


def empty_ladder(path: Path, settings: Mapping[str, Any]) -> Ladder:
    """A ladder with no bot yet (a new database), with these settings."""
    return Ladder(Path(path), {**settings, "version": LADDER_VERSION}, (), (), {}, True)


def finish_events(db: ResultsDB) -> None:
    """Mark finished the events all of whose pairings hold every game."""
    ladder = read_ladder(db)
    counts = dict(
        ((a, b), int(n))
        for a, b, n in db.query("SELECT pair_a, pair_b, COUNT(*) FROM matches GROUP BY 1, 2")
    )
    done = []
    for e in ladder.events:
        if e.finished is not None:
            continue
        planned = [(p, m) for p, (ev, m) in ladder.pairings.items() if ev == e.event]
        if all(counts.get(p, 0) >= 2 * m for p, m in planned):
            done.append(e.event)
    if done:
        with db.con:
            db.con.executemany(
                "UPDATE ladder_events SET finished = ?, digest = NULL WHERE event = ?",
                [(_now(), e) for e in done],
            )
            seal(db.con, "ladder_events")
