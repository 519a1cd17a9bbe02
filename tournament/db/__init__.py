"""The tournament results database: one SQLite file, written as results are produced.

Tables (one row per finished hand, per finished match, per conduct event)::

    meta     key, value                 schema version, the tournament fingerprint (JSON) and
                                        how its agents were seeded ("seeding": the job split)
    hands    game key, hand_index       dealer, bids, tricks, points, scores, forfeits,
                                        decisions and seconds per seat, and the moves: the
                                        dealt hands and every decision in order (a BLOB,
                                        :mod:`~fourhundred_tournament.db.moves`)
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
interface) open the file read-only and need no lock. The writer also holds a ``flock`` on the
database file itself, so a second name of the file (a hard link) meets the first writer.

Every row of ``hands``, ``matches`` and ``events`` (and of a ladder's tables) carries a
``digest`` of its values (:mod:`~fourhundred_tournament.db.digests`), checked on read with the
values: an edit that stays in range is refused as damage.

The schema's version is in ``meta`` (:data:`SCHEMA_VERSION`). A database of schema 1 or 2
has no digests (its rows are read unchecked by them, and those written since carry one); one
of schema 1 has no ``moves``: it is read as it is (its games' cards come back by replaying replayable bots,
:mod:`fourhundred_tournament.replay`), and the writer that resumes it adds the column, NULL in the rows it
holds. A database of a newer schema is refused.

One module per job, each name importable from here: :mod:`~fourhundred_tournament.db.schema` (the row
types, their columns, the time bins, the tables' SQL), :mod:`~fourhundred_tournament.db.lock` (the writer
lock), :mod:`~fourhundred_tournament.db.checks` (a file checked before use),
:mod:`~fourhundred_tournament.db.values` (row values checked on read),
:mod:`~fourhundred_tournament.db.digests` (the rows' checksums), :mod:`~fourhundred_tournament.db.moves` (the
``moves`` values) and :mod:`~fourhundred_tournament.db.results` (the writer and the read-only reader).
"""

from fourhundred_tournament.db.checks import (
    DatabaseDamagedError,
    DatabaseMismatchError,
    check_fingerprint,
    check_schema,
    is_blank,
    read_fingerprint,
    read_meta,
    read_names,
    recover_interrupted_write,
)
from fourhundred_tournament.db.lock import DatabaseBusyError, WriterLock, lock_path
from fourhundred_tournament.db.moves import DEALT_BYTES, MAX_HAND_MOVES, decode_moves, encode_moves
from fourhundred_tournament.db.results import ReadOnlyResults, ResultsDB
from fourhundred_tournament.db.schema import (
    EVENT_COLUMNS,
    HAND_COLUMNS,
    MATCH_COLUMNS,
    NUM_TIME_BINS,
    SCHEMA_VERSION,
    TIME_BIN_FLOOR,
    TIME_BINS_PER_DECADE,
    TIME_COLUMNS,
    EventRow,
    GameKey,
    HandRow,
    MatchRow,
    Row,
    rows_from_columns,
    seat_columns,
    time_bin,
    time_bin_edge,
)
from fourhundred_tournament.db.values import check_values, row_damage

__all__ = [
    "DEALT_BYTES",
    "EVENT_COLUMNS",
    "HAND_COLUMNS",
    "MATCH_COLUMNS",
    "MAX_HAND_MOVES",
    "NUM_TIME_BINS",
    "SCHEMA_VERSION",
    "TIME_BINS_PER_DECADE",
    "TIME_BIN_FLOOR",
    "TIME_COLUMNS",
    "DatabaseBusyError",
    "DatabaseDamagedError",
    "DatabaseMismatchError",
    "EventRow",
    "GameKey",
    "HandRow",
    "MatchRow",
    "ReadOnlyResults",
    "ResultsDB",
    "Row",
    "WriterLock",
    "check_fingerprint",
    "check_schema",
    "check_values",
    "decode_moves",
    "encode_moves",
    "is_blank",
    "lock_path",
    "read_fingerprint",
    "read_meta",
    "read_names",
    "recover_interrupted_write",
    "row_damage",
    "rows_from_columns",
    "seat_columns",
    "time_bin",
    "time_bin_edge",
]
