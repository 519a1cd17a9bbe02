"""Checks the subcommands share."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from fourhundred_env.errors import FourHundredError


def check_seed(seed: int | None, flag: str = "--seed") -> None:
    """A seed is an integer from 0 to 2**63 - 1 (the one rule in every subcommand and
    config)."""
    if seed is not None and not 0 <= seed < 2**63:
        raise FourHundredError(f"{flag} {seed}: expected a seed of 0 or more, below 2**63")


def keeps_games_on_interrupt(args, db: str | Path) -> None:
    """An interruption of this command, however it arrives (KeyboardInterrupt, or a library
    that turns it into another error), ends with one line saying that the finished games are
    saved in `db` and how to resume them (printed by ``fourhundred_cli.main``)."""
    args._interrupt_note = f"finished games are saved in {db}; rerun the same command to resume"


def writable_folder(folder: str | Path, flag: str) -> None:
    """`folder` can be written, or made where it does not exist yet: a file where a folder is
    expected, or no permission, is one line before the work rather than a traceback after it.
    Nothing is made here: the writer makes the folder as it writes its first file, so that a
    command refused later (a typo in an agent, a missing model file, a device this machine
    lacks) leaves no empty folder behind."""
    path = Path(folder)
    existing = path
    while not existing.exists() and existing.parent != existing:  # the nearest that exists
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(20, "Not a directory" if existing != path else "File exists")
        with tempfile.TemporaryFile(dir=existing, prefix=".fourhundred-write-test"):
            pass  # a trial write where the folder is, or where it will be made (removed)
    except OSError as e:
        raise FourHundredError(
            f"{flag} {str(folder)!r}: cannot write there ({e.strerror or e}): expected a "
            "writable folder"
        ) from None


def writable_file(path: str | Path, flag: str) -> None:
    """`path` can be written as a file: its folder can be written or made (it is not made
    here: :func:`writable_folder`), and `path` is not a folder (one line otherwise, before
    the work)."""
    path = Path(path)
    writable_folder(path.parent if str(path.parent) else Path("."), flag)
    if path.is_dir():
        raise FourHundredError(f"{flag} {str(path)!r} is a folder: expected a file name")


def accept_unchecked_argument(p: argparse.ArgumentParser) -> None:
    """The flag by which an owner reads a database whose row checks were switched off."""
    p.add_argument("--accept-unchecked", action="store_true",
                   help="read a results database whose row checks were switched off (its "
                   "meta 'digests' deleted while its rows carry checksums, and the like) as it "
                   "is, knowingly (default: refused)")  # fmt: skip
