"""The `fourhundred` command line: one parser, every subcommand imported explicitly.

This package is the top layer (rules core <- envs <- agents <- tournament / train <- CLI):
nothing below imports it. Each subcommand is a module with ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> exit code``; heavy imports (torch, the tournament,
matplotlib) happen inside ``run``, so ``fourhundred --help`` and ``fourhundred match`` stay light.
Bad input (a FourHundredError) is one line on stderr and exit code 2; Ctrl-C is a line and 130.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

from fourhundred_cli import (
    analyse,
    bid_analyse,
    bid_eval,
    bot_check,
    evaluate_run,
    fit_matchwin,
    ladder,
    match,
    play,
    plot,
    record,
    serve,
    tournament,
    train,
)
from fourhundred_env import __version__
from fourhundred_env.errors import FourHundredError

COMMANDS: tuple[ModuleType, ...] = (
    tournament, ladder, bot_check, play, match, record, train, evaluate_run, bid_eval, bid_analyse,
    fit_matchwin, analyse, plot, serve,
)  # fmt: skip


class _HelpFormatter(argparse.HelpFormatter):
    """Every flag's help ends with its default: " (default: X)" is added where the help does
    not say it already; a flag whose default is None says what None means itself."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        quiet = default is None or default is False or default is argparse.SUPPRESS
        quiet = quiet or default == []
        if "default" in text or quiet or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    """The `fourhundred` parser: every subcommand of COMMANDS with its flags."""
    parser = argparse.ArgumentParser(
        prog="fourhundred", description="400 (Lebanese/Syrian trick-taking game) for AI bots"
    )
    parser.add_argument("--version", action="version", version=f"fourhundred {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(
            command.NAME, help=command.HELP, description=command.HELP,
            formatter_class=_HelpFormatter,
        )  # fmt: skip
        command.add_arguments(p)
        p.set_defaults(_command=command.run, _parser=p)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line parsed; an unknown flag of a subcommand is reported with that
    subcommand's usage (argparse alone shows the top-level one), exit code 2."""
    args, unknown = build_parser().parse_known_args(argv)
    if unknown:
        args._parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run `fourhundred ARGV...`; returns the exit status: 0, 2 for bad input (one line on
    stderr), 130 when interrupted."""
    args = parse_args(argv)
    interrupted: list[bool] = []

    def on_interrupt(signum: int, frame: object) -> None:
        interrupted.append(True)
        raise KeyboardInterrupt

    # Ctrl-C raises KeyboardInterrupt as usual, and is remembered: a library that turns it
    # into another error (numba, interrupted while compiling a kernel on the first run, raises
    # RuntimeError from its cache) or swallows it still ends the command as an interruption.
    # Only where Ctrl-C would interrupt anyway: not outside the main thread, and not where
    # SIGINT is ignored (a background job, nohup) or handled by the caller.
    watch = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    old = signal.signal(signal.SIGINT, on_interrupt) if watch else None
    try:
        code = int(args._command(args) or 0)
    except FourHundredError as e:
        if not interrupted:
            print(f"fourhundred: error: {e}", file=sys.stderr)
            return 2
        code = 0
    except KeyboardInterrupt:
        code = 0
        interrupted.append(True)
    except BrokenPipeError:  # the output went to a pipe that closed (`| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception:
        if not interrupted:
            raise
        code = 0
    finally:
        if watch:
            signal.signal(signal.SIGINT, old)
    if interrupted and code != 130:  # (a command that handled it has said so itself)
        note = getattr(args, "_interrupt_note", "")  # common.keeps_games_on_interrupt
        print("\nfourhundred: interrupted" + (f": {note}" if note else ""), file=sys.stderr)
        return 130
    return code
