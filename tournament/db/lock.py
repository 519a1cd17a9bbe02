"""One writer per database: an exclusive advisory ``flock`` on ``<db>.lock``, which the
system releases when its process dies, holding the writer's pid, host, start time and
command; a second writer is refused naming the first, a dead run's lock file taken over.

The lock file goes by the database's name, so the writer also takes a ``flock`` on the
database file itself: a second name of the same file (a hard link, a bind mount) takes the
lock file of its own name but meets the first writer on the file. SQLite's own locks are
``fcntl`` record locks, which ``flock`` does not touch; the writer closes its descriptor of
the file (which drops every record lock the process holds on it) only after its connection
is closed."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fourhundred_env.errors import FourHundredError

try:
    import fcntl
except ImportError:  # not a POSIX system: no advisory locks (see WriterLock)
    fcntl = None  # type: ignore[assignment]


class DatabaseBusyError(FourHundredError):
    """Another run is writing the database (it holds the writer lock)."""


def lock_path(path: str | Path) -> Path:
    """The writer-lock file of the database at `path`: ``<path>.lock``."""
    return Path(str(path) + ".lock")


class WriterLock:
    """The exclusive writer lock of one database (see :mod:`fourhundred_tournament.db`).

    `acquire` raises DatabaseBusyError naming the holder when another process holds it, and
    returns a note (else None) when it took over the lock file of a run that died without
    releasing it. Released by `release`, or by the system when the process dies.
    """

    def __init__(self, db_path: str | Path, shown: str | Path | None = None) -> None:
        """`db_path`: the database (its writer's lock file is ``<db_path>.lock``; pass the
        resolved path, so that every name of the file takes the same lock). `shown`: the
        name said in messages (default `db_path`)."""
        self.db_path = Path(shown if shown is not None else db_path)
        self.path = lock_path(db_path)
        self.file = Path(db_path)
        self._fd: int | None = None
        self._file_fd: int | None = None

    def acquire(self) -> str | None:
        """Take the lock (see the class docstring); OSError if its folder is not writable."""
        if fcntl is None:  # pragma: no cover - POSIX only; elsewhere a second writer is not caught
            return None
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_holder(fd)
                os.close(fd)
                raise DatabaseBusyError(
                    f"database {str(self.db_path)!r} is being written by another run "
                    f"({_describe_holder(holder)}): wait for it to finish or stop it, or choose "
                    "another --db"
                ) from None
            try:  # its last holder may have removed the file between our open and our lock
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        try:
            self._lock_file()
        except BaseException:
            os.close(fd)
            raise
        previous = _read_holder(fd)
        info = {
            "pid": os.getpid(), "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join(sys.argv)[:300],
        }  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        if previous is None or previous.get("pid") == os.getpid():
            return None
        return (
            f"took over the writer lock of {str(self.db_path)!r} from a run that stopped "
            f"without releasing it ({_describe_holder(previous)})"
        )

    def _lock_file(self) -> None:
        """The ``flock`` on the database file itself (created empty when absent: SQLite takes
        an empty file as a new database), held by whichever of its names a writer came by."""
        fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise DatabaseBusyError(
                f"database {str(self.db_path)!r} is being written by another run that opened "
                "it by another name (a hard link to the same file): wait for it to finish or "
                "stop it, or choose another --db"
            ) from None
        self._file_fd = fd

    def release(self) -> None:
        """Remove the lock file and release the lock (nothing if not held)."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            if self._file_fd is not None:
                os.close(self._file_fd)
                self._file_fd = None
            os.close(self._fd)  # closing releases the flock
            self._fd = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any] | None:
    """The holder information in a lock file, or None when it is empty or unreadable."""
    try:
        text = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        info = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _describe_holder(info: Mapping[str, Any] | None) -> str:
    if not info:
        return "a process that left no details"
    where = f" on {info['host']}" if info.get("host") not in (None, socket.gethostname()) else ""
    return (
        f"pid {info.get('pid', '?')}{where}, started {info.get('started', '?')}: "
        f"{info.get('command') or '?'}"
    )
