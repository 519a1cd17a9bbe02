"""What a model file is, told from its first bytes and its zip directory (no torch, nothing
unpickled), so that each loader can refuse another library's file by naming the spec that
plays it: ``neural:model.zip`` says it is a Stable-Baselines3 model (``sb3:``), ``sb3:policy.pt``
that it is a torch file. :func:`archive_problem` checks a torch file's archive whole before
torch reads any of it, :func:`unpacked_size_problem` what any zip would unpack to (a zip
bomb) from its directory alone; :func:`resolve_checkpoint` finds a bundled file from any
directory.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
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
