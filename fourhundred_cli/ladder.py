"""`fourhundred ladder add|report|remove`: a living ladder of bots in one results database."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fourhundred_cli.common import (
    accept_unchecked_argument,
    check_seed,
    keeps_games_on_interrupt,
    writable_folder,
)
from fourhundred_env.errors import FourHundredError

NAME = "ladder"
HELP = "a living ladder: add bots as they come (only missing pairings played), report, retire"

_PLAY_KEYS = ("workers", "backend", "ray_address", "table_batch", "chunk_matches")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    sub = p.add_subparsers(dest="ladder_command", required=True, metavar="ACTION",
                           help="add, report or remove")  # fmt: skip
    fmt = p.formatter_class
    add = sub.add_parser("add", formatter_class=fmt, help="put bots on the ladder and play the "
                         "pairings they are missing", description="put bots on the ladder and "
                         "play the pairings they are missing (each against every bot on it)")  # fmt: skip
    add.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs to add")
    _db(add)
    add.add_argument("--matches", type=int, help="duplicate matches per new pairing "
                     "(default 100; a stopped add resumes with its own)")  # fmt: skip
    add.add_argument("--seed", type=int, help="the ladder's seed, when it is created (default 0)")
    add.add_argument("--rules", help="the ladder's rules preset, when it is created (default wiki)")
    add.add_argument("--max-hands", type=int, help="the ladder's match cap in hands, when it is "
                     "created (default 200)")  # fmt: skip
    add.add_argument("--anchor", metavar="BOT", help="pin this bot at 1500 from now on "
                     "(default: the ladder's anchor, or none: the mean is 1500)")  # fmt: skip
    add.add_argument("--deals", choices=("secret", "public"),
                     help="secret: each event dealt from a secret of its own, drawn from the "
                     "operating system's randomness; public: every event from the seed alone, "
                     "so anyone who knows the seed predicts every card (taken only when named, "
                     "for a new ladder or one of public deals) (default secret)")  # fmt: skip
    add.add_argument("--run", action="append", default=[], metavar="SPEC",
                     help="a program bot (cmd:) already on the ladder that this add may start, "
                     "its spec as the ladder shows it: a spec read from the database never "
                     "starts a program by itself; repeatable (default: none)")  # fmt: skip
    play_arguments(add)
    _report_flags(add)
    report = sub.add_parser("report", formatter_class=fmt, help="report what a ladder (or any "
                            "results database) holds", description="report what a ladder (or "
                            "any results database) holds, from the file alone")  # fmt: skip
    _db(report)
    report.add_argument("--anchor", metavar="BOT", help="pin this bot at 1500 in this report "
                        "(default: the ladder's anchor, or the mean is 1500)")  # fmt: skip
    _report_flags(report)
    remove = sub.add_parser("remove", formatter_class=fmt, help="retire bots; their games stay",
                            description="retire bots: they play no more games; theirs stay")  # fmt: skip
    remove.add_argument("names", nargs="+", metavar="BOT", help="labels (or specs) of the bots")
    _db(remove)


def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="the ladder's SQLite file (required)")
    accept_unchecked_argument(p)


def play_arguments(p: argparse.ArgumentParser) -> None:
    """How the games are played (the tournament's flags of the same names)."""
    p.add_argument("--workers", type=int, help="processes (default 2; 1: in this process)")
    p.add_argument("--backend", choices=("local", "ray"), help="where jobs run (default local)")
    p.add_argument("--address", dest="ray_address", metavar="ADDR",
                   help="with --backend ray: the cluster's head (default: a local Ray)")  # fmt: skip
    p.add_argument("--table-batch", type=int, help="tables per job in lockstep (default 512)")
    p.add_argument("--chunk-matches", type=int, help="duplicate matches per job (default 256)")
    p.add_argument("--agent-module", action="append", dest="agent_modules", metavar="MODULE",
                   help="import MODULE first (it registers agents); repeatable (default: none)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _report_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", metavar="DIR", help="where <db>.ladder.json and <db>.history.png go "
                   "(default: the database's folder)")  # fmt: skip
    p.add_argument("--bootstrap", type=int, default=1000,
                   help="bootstrap resamples of the Elo intervals (default 1000)")  # fmt: skip


def play_settings(args: argparse.Namespace) -> dict[str, Any]:
    """TournamentConfig fields of how to play, from the flags given."""
    out = {k: getattr(args, k) for k in _PLAY_KEYS if getattr(args, k, None) is not None}
    if getattr(args, "agent_modules", None):
        out["agent_modules"] = list(args.agent_modules)
    out["progress"] = not getattr(args, "no_progress", False)
    return out


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    if args.ladder_command == "add":
        from fourhundred_tournament.ladder.play import add_bots

        check_seed(args.seed)
        if args.out:
            writable_folder(args.out, "--out")
        keeps_games_on_interrupt(args, args.db)
        s = add_bots(
            args.db, args.specs, args.matches, seed=args.seed, rules=args.rules,
            max_hands=args.max_hands, anchor=args.anchor, play=play_settings(args),
            deals=args.deals, run=args.run, accept_unchecked=args.accept_unchecked,
        )  # fmt: skip
        if s.lock_note:
            print(f"note: {s.lock_note}", file=sys.stderr)
        what = f"event #{s.event}: added {', '.join(s.added)}" if s.event else "no new event"
        if s.resumed:
            what += f"; resumed the add of {', '.join(s.resumed)}"
        if s.retired:
            what += f"; retired {', '.join(s.retired)} (a new version of its files came)"
        print(f"{what}; {s.games_played} games played in {s.seconds:.1f} s "
              f"({s.games_resumed} already in {args.db})")  # fmt: skip
    elif args.ladder_command == "remove":
        from fourhundred_tournament.ladder.play import remove_bots

        event = remove_bots(args.db, args.names, args.accept_unchecked)
        print(f"event #{event}: retired {', '.join(args.names)}; their games stay in {args.db}")
        return 0
    return report(args.db, getattr(args, "anchor", None), args.out, args.bootstrap,
                  args.accept_unchecked)  # fmt: skip


def report(
    db_path: str, anchor: str | None, out: str | None, bootstrap: int,
    accept_unchecked: bool = False,
) -> int:  # fmt: skip
    """Print the ladder's report and write its JSON and history figure."""
    from fourhundred_tournament.db import ReadOnlyResults
    from fourhundred_tournament.files import write_text
    from fourhundred_tournament.ladder.history import format_ladder, ladder_report

    if bootstrap < 0:
        raise FourHundredError(f"--bootstrap {bootstrap}: expected 0 or more")
    with ReadOnlyResults(db_path, accept_unchecked=accept_unchecked) as db:
        rep = ladder_report(db, bootstrap=bootstrap, anchor=anchor)
    labels = [b["label"] for b in rep["bots"]]
    if anchor is not None and rep["anchor"] not in labels:
        raise FourHundredError(
            f"--anchor {anchor!r}: expected one of the bots {labels} (a label or its name)"
        )
    print(format_ladder(rep))
    db = Path(db_path)
    folder = Path(out) if out else db.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{db.stem}.ladder.json"
        write_text(path, json.dumps(rep, indent=1, default=float) + "\n")  # whole or not at all
    except OSError as e:
        raise FourHundredError(
            f"--out {str(folder)!r}: cannot write there ({e.strerror})"
        ) from None
    written = [path]
    try:
        from fourhundred_tournament.ladder.plots import write_history_plot

        written.append(write_history_plot(rep, folder / f"{db.stem}.history.png"))
    except ModuleNotFoundError as e:  # matplotlib: the plots extra
        print(f"note: no history plot ({e.name} is not installed: pip install "
              "'fourhundred[plots]')", file=sys.stderr)  # fmt: skip
    print("report: " + ", ".join(str(p) for p in written))
    return 0
