"""Game records parsed, read, written and gone through decision by decision, each replayed
through a :class:`~fourhundred_env.table.Table`.

A :class:`GameRecord` is the rules, the seats' labels, the match's start (first dealer,
scores, target) and per hand the dealer, the deal, the bids in order, every card in order and
the result. It has two forms, both of version :data:`FORMAT_VERSION` (docs/records.md):

- text, line by line, for people to read and write by hand;
- JSON, ``{"format": "fourhundred-record", "version": 1, ...}``.

The record's data and its writers are :mod:`fourhundred_env.game_records.data`, its
readers :mod:`fourhundred_env.game_records.readers`, its replay
:mod:`fourhundred_env.game_records.replay`; this module puts them together with
:class:`~fourhundred_env.table.Table`.

Every load replays the record through :class:`~fourhundred_env.table.Table` (``deal`` and
``act``, :mod:`fourhundred_env.game_records.replay`), so each move is checked by the engine; a
record that is not a game of 400 raises
:class:`~fourhundred_env.errors.RecordError` in one line naming the hand and the move::

    record = read_record("game.400")           # text or JSON
    table = Table.from_record(record, upto=17)  # the position before the 18th decision
    write_record(table.record(), "game.json")
    for d in decisions(record):                 # each decision, with a table of its own
        print(d.hand, d.move, d.seat, d.action)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from fourhundred_env.errors import RecordError, short
from fourhundred_env.game_records.data import FORMAT, FORMAT_VERSION, GameRecord, RecordedHand
from fourhundred_env.game_records.readers import json_to_record, text_to_record
from fourhundred_env.game_records.replay import Decision
from fourhundred_env.game_records.replay import decisions as _decisions
from fourhundred_env.table import Table

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Decision",
    "GameRecord",
    "RecordedHand",
    "decisions",
    "parse_record",
    "read_record",
    "record_target",
    "write_record",
]

MAX_RECORD_BYTES = 64 * 2**20
"""The largest record file read (a match of 1,000 hands is about half a megabyte)."""


def decisions(record: GameRecord) -> Iterator[Decision]:
    """Every decision of `record` in order (bids and cards alike), each with a
    :class:`~fourhundred_env.table.Table` of its own at that moment, the move not yet made."""
    return _decisions(record, Table)


def parse_record(text: str) -> GameRecord:
    """A record from its text or JSON form (told apart by a leading ``{``), replayed and
    completed: every hand's dealer and result filled in, cards in the canonical notation.
    Raises RecordError naming the line, or the hand and move, that is wrong."""
    if not isinstance(text, str):
        raise RecordError(f"record {short(text)}: expected text")
    text = text.removeprefix("\ufeff")  # a byte-order mark, as some editors write UTF-8
    raw = json_to_record(text) if text.lstrip().startswith("{") else text_to_record(text)
    return Table.from_record(raw).record(seats=raw.seats)


def read_record(path: str | Path) -> GameRecord:
    """The record in file `path` (text or JSON), as :func:`parse_record` reads it; errors
    name the file."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise RecordError(
                f"{path}: {path.stat().st_size:,} bytes: expected a record of at most "
                f"{MAX_RECORD_BYTES:,} bytes"
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"record file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise RecordError(f"record file {str(path)!r} is a folder: expected a file") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text: expected a record (text or JSON)") from None
    except OSError as e:
        raise RecordError(f"record file {str(path)!r} cannot be read: {e.strerror}") from None
    try:
        return parse_record(text)
    except RecordError as e:
        raise RecordError(f"{path}: {e}") from None


def record_target(path: str | Path) -> Path:
    """The file :func:`write_record` writes for `path` (the file a link points to, so that the
    link stays a link). A place it must not write is refused in one line (RecordError) and
    left as it was: a missing folder, a folder, a device or a pipe, or an existing file that
    is not a game record (a results database or a checkpoint given as the record's name)."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise RecordError(f"cannot write {str(path)!r}: the folder {str(folder)!r} does not exist")
    if target.is_dir():
        raise RecordError(f"cannot write {str(path)!r}: it is a folder: expected a file name")
    if target.exists() and not target.is_file():
        raise RecordError(
            f"cannot write {str(path)!r}: it is not a regular file (a device or a pipe): "
            "expected a file name"
        )
    if target.is_file() and target.stat().st_size and not _looks_like_record(target):
        raise RecordError(
            f"{str(path)!r} exists and is not a game record: expected a new file name or a "
            "record to replace (the file is left as it was)"
        )
    return target


def _looks_like_record(path: Path) -> bool:
    """Whether the file's first bytes name the record format (text or JSON)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"fourhundred-record" in head.lower()


def write_record(record: GameRecord, path: str | Path) -> Path:
    """Write `record` to `path`, JSON for a ``.json`` suffix, else text (``.400``, ``.txt``):
    whole or not at all (a temporary file renamed over `path`). Returns the path."""
    if not isinstance(record, GameRecord):
        raise RecordError(f"write_record: {short(record)}: expected a GameRecord")
    path = Path(path)
    text = record.to_json() if path.suffix.lower() == ".json" else record.to_text()
    target = record_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    except OSError as e:
        raise RecordError(f"cannot write {str(path)!r}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o644 & ~umask)  # as any new file (mkstemp's is private)
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise RecordError(f"cannot write {str(path)!r}: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
