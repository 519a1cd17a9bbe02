"""Row values checked on read: a row whose values a tournament cannot have written (a bid of
60, a seat of 9, a score that is text) is refused in one line naming the row, rather than
reaching a report, a figure or a replay. SQLite checks a file's pages, not what the values
mean: an edited or damaged row passes its integrity check."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from fourhundred_tournament.db.checks import DatabaseDamagedError, damaged_error
from fourhundred_tournament.db.digests import first_mismatch, is_strict
from fourhundred_tournament.db.moves import DEALT_BYTES, MAX_HAND_MOVES
from fourhundred_tournament.db.results import ResultsDB
from fourhundred_tournament.db.schema import NUM_TIME_BINS, GameKey

__all__ = ["BOUNDS", "check_values", "row_damage"]

_SEATS = range(4)
_BIG = 10**9  # scores, targets, counts: what an int32 of the engine holds, roughly
_HANDS = (
    100_000  # fourhundred_tournament.config.MAX_HANDS (the db layer does not import the config)
)
_ints = dict[str, tuple[int, int]]


def _seats(name: str, low: int, high: int) -> _ints:
    return {f"{name}{s}": (low, high) for s in _SEATS}


BOUNDS: dict[str, _ints] = {
    "hands": {
        "match_id": (0, 2**62), "orientation": (0, 1), "hand_index": (0, _HANDS),
        "dealer": (0, 3), "required_total": (0, 52), "thrown_in": (0, 1),
        "redeal_seat": (-1, 3), "claim_seat": (-1, 3), **_seats("bid", 0, 13),
        **_seats("tricks", 0, 13), **_seats("points", -_BIG, _BIG),
        **_seats("score", -_BIG, _BIG), **_seats("forfeit", 0, 1),
        **_seats("decisions", 0, _BIG),
    },
    "matches": {
        "match_id": (0, 2**62), "orientation": (0, 1), "first_dealer": (0, 3),
        "finished": (0, 1), "winner_team": (-1, 1), "num_hands": (0, _HANDS),
        "num_played": (0, _HANDS), "num_thrown_in": (0, _HANDS),
        **_seats("score", -_BIG, _BIG), "target": (1, _BIG), "forfeits": (0, 4 * _HANDS),
    },
    "events": {
        "match_id": (0, 2**62), "orientation": (0, 1), "hand_index": (-1, _HANDS),
        "seat": (0, 3),
    },
    "move_times": {"bin": (0, NUM_TIME_BINS - 1), "decisions": (0, 2**62)},
}  # fmt: skip
"""Per table, the integer columns and their (lowest, highest) values."""
_SECONDS = {"hands": [f"seconds{s}" for s in _SEATS], "matches": ["decision_seconds"],
            "events": ["seconds"]}  # fmt: skip
_KINDS = ("timeout", "error", "illegal", "slow")
_NAMES = {
    "hands": ("pair_a", "pair_b", "match_id", "orientation", "hand_index"),
    "matches": ("pair_a", "pair_b", "match_id", "orientation"),
    "events": ("id", "pair_a", "pair_b", "match_id", "orientation"),
    "move_times": ("pair_a", "pair_b", "agent", "bin"),
}


_MOVES_BYTES = (DEALT_BYTES + 1, DEALT_BYTES + MAX_HAND_MOVES)


def _problems(table: str, moves: bool = False) -> str:
    """An SQL expression naming a row's first bad value (NULL when every value is good);
    `moves`: the table has the ``moves`` column (whose values' moves the replay checks)."""
    cases = [
        f"WHEN typeof({c}) != 'integer' OR {c} NOT BETWEEN {lo} AND {hi} "
        f"THEN '{c}=' || quote({c}) || ', expected an integer of {lo} to {hi}'"
        for c, (lo, hi) in BOUNDS[table].items()
    ]
    cases += [
        f"WHEN typeof({c}) NOT IN ('real', 'integer') OR {c} < 0 OR {c} > 1e9 "
        f"THEN '{c}=' || quote({c}) || ', expected seconds of 0 or more'"
        for c in _SECONDS.get(table, ())
    ]
    if moves:
        lo, hi = _MOVES_BYTES
        cases.append(
            f"WHEN moves IS NOT NULL AND (typeof(moves) != 'blob' OR length(moves) NOT BETWEEN "
            f"{lo} AND {hi}) THEN 'moves of ' || CASE typeof(moves) WHEN 'blob' THEN "
            f"length(moves) || ' bytes' ELSE 'type ' || typeof(moves) END || ', expected "
            f"{lo} to {hi} bytes (the dealt hands, then 1 to {MAX_HAND_MOVES} action ids)'"
        )
    if table == "matches":
        cases.append(
            "WHEN num_played + num_thrown_in != num_hands THEN 'num_played + num_thrown_in = ' "
            "|| (num_played + num_thrown_in) || ', expected num_hands ' || num_hands"
        )
    if table == "events":
        kinds = ", ".join(f"'{k}'" for k in _KINDS)
        cases.append(f"WHEN kind NOT IN ({kinds}) THEN 'kind=' || quote(kind) || ', expected "
                     f"one of {kinds.replace(chr(39), '')}'")  # fmt: skip
    return "CASE " + " ".join(cases) + " END"


def check_values(db: ResultsDB, key: GameKey | None = None) -> None:
    """Raise DatabaseDamagedError (one line naming the table, the row and the value) when a
    row of `db` (a ResultsDB; only game `key`'s rows when given) holds a value out of range,
    or values that are not those its digest was computed from."""
    strict = is_strict(db.meta())
    for table, names in _NAMES.items():
        where = ""
        params: Sequence[object] = ()
        if key is not None:
            if table == "move_times":
                continue
            where = "AND pair_a = ? AND pair_b = ? AND match_id = ? AND orientation = ?"
            params = tuple(key)
        problem = _problems(table, moves=table == "hands" and db.has_moves)
        rows = db.query(
            f"SELECT {', '.join(names)}, {problem} AS p FROM {table} "
            f"WHERE p IS NOT NULL {where} LIMIT 1",
            params,
        )
        if rows:
            *ids, what = rows[0]
            raise row_damage(db, table, dict(zip(names, ids, strict=True)), what)
        if table != "move_times":
            try:
                bad = first_mismatch(db.con, table, names, strict, where, params)
            except sqlite3.DatabaseError as e:
                raise damaged_error(db.path, e) from None
            if bad is not None:
                raise row_damage(db, table, bad, "values that do not match its checksum")


def row_damage(
    db: ResultsDB, table: str, ids: Mapping[str, object], what: str, writer: str = "a tournament"
) -> DatabaseDamagedError:
    """The one-line refusal of the row of `table` named by `ids` (its key columns and their
    values), which holds `what` (a value `writer` cannot have written)."""
    row = ", ".join(f"{n}={v!r}" for n, v in ids.items())
    return DatabaseDamagedError(
        f"database {str(db.path)!r}: {table} row ({row}) holds {what}: "
        f"expected the values {writer} writes; the file was edited or damaged, and was left as "
        "it is"
    )
