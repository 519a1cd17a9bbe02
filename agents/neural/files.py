"""What a model file is, told from its first bytes and its zip directory (no torch, nothing
unpickled), so that each loader can refuse another library's file by naming the spec that
plays it: ``neural:model.zip`` says it is a Stable-Baselines3 model (``sb3:``), ``sb3:policy.pt``
that it is a torch file. :func:`archive_problem` checks a torch file's archive whole before
torch reads any of it, :func:`unpacked_size_problem` what any zip would unpack to (a zip
bomb) from its directory alone; :func:`resolve_checkpoint` finds a bundled file from any
directory.
"""

from __future__ import annotations

import json
import math
import pickletools
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Literal

FileKind = Literal["missing", "sb3", "torch", "manifest", "zip", "other"]
PRETRAINED = Path(__file__).resolve().parents[1] / "pretrained"
"""The bundled checkpoints (package data of ``agents``)."""


def resolve_checkpoint(path: str | Path) -> Path:
    """`path` as given when it is a file; else ``agents/pretrained/NAME`` (as the bundled
    configs write it) is the installed package's copy, so those configs work from any
    directory."""
    path = Path(path)
    if path.is_file() or path.is_absolute() or path.parent != Path("agents/pretrained"):
        return path
    bundled = PRETRAINED / path.name
    return bundled if bundled.is_file() else path


def model_file_kind(path: str | Path) -> FileKind:
    """The kind of the file at `path`: "sb3" (a zip holding ``data`` and ``policy.pth``:
    ``model.save`` of SB3 or sb3-contrib), "torch" (a zip torch.save wrote: ``*/data.pkl``),
    "manifest" (a JSON text), "zip" (another or a damaged zip), "other" or "missing"."""
    path = Path(path)
    if not path.is_file():
        return "missing"
    with path.open("rb") as f:
        head = f.read(4)
    if head.lstrip()[:1] == b"{":
        return "manifest"
    if head != b"PK\x03\x04":
        return "other"
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return "zip"
    if "data" in names and "policy.pth" in names:
        return "sb3"
    if any(n.endswith("/data.pkl") for n in names):
        return "torch"
    return "zip"


def unpacked_size_problem(
    source: str | Path | IO[bytes], members: Mapping[str, int], total: int
) -> str | None:
    """Why the zip archive `source` would unpack too big, in one phrase, or None: a member named
    in `members` declaring more bytes than its bound there, or all members together more than
    `total`. Reads the zip's directory only; :mod:`zipfile` never unpacks a member past the
    size its directory declares (a member that lies fails its CRC-32), so these bounds hold
    for what is read. A zip that cannot be read at all is left to the reader's own message."""
    try:
        with zipfile.ZipFile(source) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError):
        return None
    for info in infos:
        bound = members.get(info.filename)
        if bound is not None and info.file_size > bound:
            return (
                f"its member {info.filename!r} unpacks to {info.file_size:,} bytes: expected at "
                f"most {bound:,}"
            )
    size = sum(info.file_size for info in infos)
    if size > total:
        return f"its {len(infos)} members unpack to {size:,} bytes: expected at most {total:,}"
    return None


def archive_problem(path: str | Path | IO[bytes]) -> str | None:
    """Why the zip archive at `path` cannot be trusted, in one phrase, or None when every member
    is stored uncompressed (as ``torch.save`` writes them, so nothing read is larger than the
    file), named once, and reads back with its CRC-32 right. torch itself checks no CRC: a file
    with bytes overwritten in a tensor loads with the wrong weights."""
    try:
        with zipfile.ZipFile(path) as z:
            seen: set[str] = set()
            for info in z.infolist():
                name = info.filename
                if name in seen:
                    return f"its member {name!r} appears twice"
                seen.add(name)
                if info.compress_type != zipfile.ZIP_STORED:
                    return (
                        f"its member {name!r} is compressed (method {info.compress_type}), "
                        "which torch.save never does"
                    )
                try:
                    with z.open(info) as member:  # the ZipInfo, not the name: duplicates
                        while member.read(1 << 20):
                            pass
                except zipfile.BadZipFile as e:
                    if "CRC" in str(e):
                        return f"its member {name!r} fails its CRC-32 check"
                    return f"its member {name!r} is damaged ({str(e)[:120]})"
    except zipfile.BadZipFile as e:
        return f"not a whole zip archive: {e}"
    except (OSError, EOFError, ValueError, RuntimeError, NotImplementedError) as e:
        return f"its zip archive cannot be read: {type(e).__name__}: {str(e)[:120]}"
    return None


MAX_MEMBERS = 4096
"""The most members a torch file's zip may hold (one per tensor storage, plus a few): a
trainer's checkpoint of the largest network (MAX_LAYERS layers; its policy, critic, average and
optimizer state) holds well under a thousand."""
MAX_PICKLE_BYTES = 2**24
"""The largest ``data.pkl`` read (16 MiB): the record of names, shapes and settings (a
trainer's checkpoint writes about 100 KB; the tensors' bytes are members of their own)."""
MAX_PICKLE_OPS = 2**20
"""The most pickle operations unpickled (a trainer's checkpoint has about 20,000)."""
MAX_PICKLE_STACK = 2**13
"""The most values a pickle may hold open at once (its nesting, and pickle's batches of 1,000
items): a list nested a million deep is refused before it is built."""
MAX_TENSORS = 4096
"""The most tensors a torch file may build (as MAX_MEMBERS)."""
MAX_DEPTH = 32
"""The deepest nesting of lists and mappings in a model file's settings (ours nest 4 deep)."""
MAX_DIGITS = 300
"""The longest integer read from a model file's settings, in digits (ours have at most 20;
a longer one is no size or version, and above 4,300 digits Python cannot even print it)."""
MAX_INT_BITS = 1000
"""MAX_DIGITS in bits (a pickle writes integers in bytes)."""


class MetadataError(ValueError):
    """A model file's settings (JSON, or a torch file's pickled values) outside the bounds
    above: its message is the phrase that says what and where."""


def parse_json(text: str | bytes, allow_constants: bool = False) -> object:
    """The JSON `text`, bounded: MetadataError (one phrase) for a number that overflows
    (``1e999``), an integer longer than MAX_DIGITS (Python refuses to convert more than 4,300
    digits with a ValueError of its own), ``NaN``/``Infinity`` unless `allow_constants` (SB3
    writes them), or nesting deeper than MAX_DEPTH; json.JSONDecodeError for text that is not
    JSON."""

    def number(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise MetadataError(f"the number {literal[:40]} overflows: expected a finite number")
        return value

    def integer(literal: str) -> int:
        if len(literal.lstrip("-")) > MAX_DIGITS:
            raise MetadataError(
                f"an integer of {len(literal.lstrip('-')):,} digits: expected at most {MAX_DIGITS}"
            )
        return int(literal)

    def constant(name: str) -> float:
        if not allow_constants:
            raise MetadataError(f"{name} is not a number JSON holds: expected a finite number")
        return float(name)

    try:
        value = json.loads(text, parse_float=number, parse_int=integer, parse_constant=constant)
    except RecursionError:
        raise MetadataError(f"it nests too deeply: expected at most {MAX_DEPTH} levels") from None
    problem = plain_problem(value)
    if problem is not None:
        raise MetadataError(problem)
    return value


def plain_problem(value: object, skip: type | tuple[type, ...] = ()) -> str | None:
    """Why the plain values `value` (lists, tuples, mappings, numbers, strings; instances of
    `skip`, such as tensors, are leaves) exceed the bounds above, in one phrase naming where,
    or None. Walked without recursion, so a deep value cannot overflow the stack."""
    todo: list[tuple[object, str, int]] = [(value, "", 0)]
    nodes = 0
    while todo:
        item, where, depth = todo.pop()
        nodes += 1
        if nodes > MAX_PICKLE_OPS:
            return f"it holds more than {MAX_PICKLE_OPS:,} values: expected far fewer"
        if skip and isinstance(item, skip):
            continue
        if isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() > MAX_INT_BITS:
                return (
                    f"{where or 'a value'} is an integer of about {item.bit_length() * 0.30103:,.0f} "
                    f"digits: expected at most {MAX_DIGITS}"
                )
            continue
        children: Iterable[tuple[object, object]] = ()
        if isinstance(item, Mapping):
            children = item.items()
        elif isinstance(item, (list, tuple)):
            children = enumerate(item)
        else:
            continue
        if depth >= MAX_DEPTH:
            return f"{where or 'it'} nests deeper than {MAX_DEPTH} levels: expected at most {MAX_DEPTH}"
        for key, child in children:
            name = f"{where}.{key}" if isinstance(key, str) else f"{where}[{_short(key)}]"
            todo.append((child, name.lstrip(".")[:120], depth + 1))
    return None


def _short(key: object) -> str:
    if isinstance(key, int) and key.bit_length() > 64:
        return "a huge integer"
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def index_problem(source: str | Path | IO[bytes]) -> str | None:
    """Why the directory of the zip `source`, as torch.save writes it, is out of bounds, in one
    phrase, or None: more than MAX_MEMBERS members, a member named twice or compressed, a
    ``data.pkl`` larger than MAX_PICKLE_BYTES, or members declaring more bytes than the file
    holds (stored members are their own size). Reads the directory only, no member, and
    counts the members from the zip's end record before parsing the directory (100,000 members
    take seconds to parse)."""
    count = declared_members(source)
    if count is not None and count > MAX_MEMBERS:
        return f"it holds {count:,} members (tensors): expected at most {MAX_MEMBERS:,}"
    try:
        with zipfile.ZipFile(source) as z:
            infos = z.infolist()
            if isinstance(source, (str, Path)):
                size = Path(source).stat().st_size
            else:
                size = source.seek(0, 2)
    except zipfile.BadZipFile as e:
        return f"not a whole zip archive: {e}"
    except (OSError, EOFError, ValueError, RuntimeError, NotImplementedError) as e:
        return f"its zip archive cannot be read: {type(e).__name__}: {str(e)[:120]}"
    if len(infos) > MAX_MEMBERS:
        return f"it holds {len(infos):,} members (tensors): expected at most {MAX_MEMBERS:,}"
    seen: set[str] = set()
    for info in infos:
        if info.filename in seen:
            return f"its member {info.filename!r} appears twice"
        seen.add(info.filename)
        if info.compress_type != zipfile.ZIP_STORED:
            return (
                f"its member {info.filename!r} is compressed (method {info.compress_type}), "
                "which torch.save never does"
            )
        if info.filename.endswith("data.pkl") and info.file_size > MAX_PICKLE_BYTES:
            return (
                f"its record {info.filename!r} is {info.file_size:,} bytes: expected at most "
                f"{MAX_PICKLE_BYTES:,} (MAX_PICKLE_BYTES)"
            )
    declared = sum(info.file_size for info in infos)
    if declared > size:
        return f"its members declare {declared:,} bytes in a file of {size:,}"
    return None


def declared_members(source: str | Path | IO[bytes]) -> int | None:
    """How many members the zip `source` declares in its end record (zip64's where it holds
    more than 65,535), read from its last 64 KiB; None where no end record is found."""
    try:
        if isinstance(source, (str, Path)):
            with open(source, "rb") as f:
                return _declared_members(f)
        position = source.tell()
        try:
            return _declared_members(source)
        finally:
            source.seek(position)
    except (OSError, ValueError):
        return None


def _declared_members(f: IO[bytes]) -> int | None:
    size = f.seek(0, 2)
    start = max(0, size - (1 << 16) - 22)
    f.seek(start)
    tail = f.read()
    end = tail.rfind(b"PK\x05\x06")
    if end < 0 or end + 22 > len(tail):
        return None
    count = int.from_bytes(tail[end + 10 : end + 12], "little")
    locator = end - 20
    if count == 0xFFFF and locator >= 0 and tail[locator : locator + 4] == b"PK\x06\x07":
        offset = int.from_bytes(tail[locator + 8 : locator + 16], "little")
        f.seek(offset)
        record = f.read(40)
        if record[:4] == b"PK\x06\x06" and len(record) == 40:
            count = int.from_bytes(record[32:40], "little")
    return count


def pickle_problem(data: bytes) -> str | None:
    """Why the pickle `data` (a torch file's ``data.pkl``) is out of bounds, in one phrase, or
    None: more than MAX_PICKLE_OPS operations, more than MAX_PICKLE_STACK values open at once
    (deep nesting), more than MAX_TENSORS tensor storages, or an integer of more than
    MAX_INT_BITS bits.
    Reads the operations (pickletools), builds and runs nothing."""
    height, marks, ops, storages = 0, [], 0, 0
    try:
        for op, arg, _ in pickletools.genops(data):
            ops += 1
            if ops > MAX_PICKLE_OPS:
                return f"its record has more than {MAX_PICKLE_OPS:,} operations"
            before, after = op.stack_before, op.stack_after
            if op.name == "MARK":
                marks.append(height)
            elif pickletools.markobject in before:
                if not marks:
                    return "its record is not a well-formed pickle"
                height = marks.pop() - before.index(pickletools.markobject) + len(after)
            else:
                height += len(after) - len(before)
            if height + len(marks) > MAX_PICKLE_STACK:
                return (
                    f"its record nests more than {MAX_PICKLE_STACK:,} values deep: expected "
                    f"at most {MAX_DEPTH} levels"
                )
            if op.name in ("PERSID", "BINPERSID"):
                storages += 1
                if storages > MAX_TENSORS:
                    return f"its record names more than {MAX_TENSORS:,} tensor storages"
            elif (
                isinstance(arg, int)
                and op.name.startswith("LONG")
                and arg.bit_length() > MAX_INT_BITS
            ):
                return f"its record holds an integer of {arg.bit_length():,} bits: expected at most {MAX_INT_BITS:,}"
    except (ValueError, EOFError, IndexError, KeyError, TypeError) as e:
        return f"its record is not a well-formed pickle ({str(e)[:80]})"
    return None
