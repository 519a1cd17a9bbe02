"""Files written whole or not at all: a report, a figure or a ladder's JSON goes to a
temporary file beside its place, flushed to disk, then renamed over it (``os.replace``, atomic
on POSIX). A full disk or a kill midway leaves the previous file, never a cut one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["replaced", "write_text"]


@contextlib.contextmanager
def replaced(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` to write; renamed over `path` when the block ends
    without an error (else removed, and `path` left as it was)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> Path:
    """Write `text` to `path` whole (see the module docstring); returns the path."""
    with replaced(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
