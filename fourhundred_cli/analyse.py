"""`fourhundred analyse`: engine analysis of a game record: every decision's legal actions
valued by an agent that can value them (agents/analysis/), what each seat lost per hand and
its largest mistakes. `fourhundred bid-analyse` is another thing: one bid position."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "analyse"
HELP = "engine analysis of a game record: each decision's action values and the value lost"
MAX_DECISIONS = 5000
"""The default bound on the decisions one command values (a long evening's record holds a few
thousand; each is a search)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument("record", help="the game record (text or JSON, docs/records.md)")
    p.add_argument(
        "--agent", default="search",
        help="agent that values the actions: search[:SETTINGS] or neural:PATH",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of the agent's worlds")
    p.add_argument(
        "--hand", type=int, help="analyse only this hand of the record, from 1 (default: all)"
    )
    only = p.add_mutually_exclusive_group()
    only.add_argument("--cards-only", action="store_true", help="analyse the card play only")
    only.add_argument("--bids-only", action="store_true", help="analyse the bids only")
    p.add_argument("--top", type=int, default=5, help="largest mistakes shown")
    p.add_argument(
        "--noise", type=float, default=1.0,
        help="standard errors within which a loss counts as none",
    )  # fmt: skip
    p.add_argument(
        "--json", metavar="OUT", help="also write the whole analysis to this JSON file "
        "(default: none)",
    )  # fmt: skip
    p.add_argument(
        "--max-decisions", type=int, default=MAX_DECISIONS, metavar="N",
        help="refuse, before any work, a record with more decisions to analyse than this "
        f"(--hand, --cards-only or --bids-only analyse fewer) (default {MAX_DECISIONS})",
    )  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from fourhundred_cli.common import check_seed
    from fourhundred_env.errors import FourHundredError
    from fourhundred_env.game_records.files import read_record

    check_seed(args.seed)
    if args.top < 0:
        raise FourHundredError(f"--top {args.top}: expected 0 or more mistakes to show")
    if args.max_decisions < 1:
        raise FourHundredError(f"--max-decisions {args.max_decisions}: expected at least 1")
    if not args.noise >= 0:
        raise FourHundredError(f"--noise {args.noise}: expected 0 or more standard errors")
    if args.json is not None and Path(args.json).is_dir():
        raise FourHundredError(f"--json {args.json!r} is a folder: expected a file name")
    if args.json is not None and not Path(args.json).parent.is_dir():
        raise FourHundredError(
            f"--json {args.json!r}: the folder {str(Path(args.json).parent)!r} does not exist"
        )
    record = read_record(args.record)
    if args.hand is not None and not 1 <= args.hand <= len(record.hands):
        raise FourHundredError(
            f"--hand {args.hand}: expected a hand of the record, 1 to {len(record.hands)}"
        )
    phases = ("play",) if args.cards_only else ("bid",) if args.bids_only else ("bid", "play")
    from fourhundred_agents.analysis import analyse_record, make_valuer

    valuer = make_valuer(args.agent, record.rules, args.seed)  # refused before any work
    bars: list = []  # the bar, made at the first call, once the total is known

    def progress(done: int, total: int) -> None:
        if args.no_progress:
            return
        if not bars:
            from tqdm import tqdm

            bars.append(tqdm(total=total, unit="decision", desc="analysis", dynamic_ncols=True))
        bars[0].update(done - bars[0].n)

    try:
        analysis = analyse_record(record, valuer, args.seed, progress, args.hand, phases,
                                  args.top, args.noise, args.max_decisions)  # fmt: skip
    finally:
        for bar in bars:
            bar.close()
    print(analysis.table(args.top))
    if args.json is not None:
        Path(args.json).write_text(analysis.to_json() + "\n", encoding="utf-8")
        print(f"analysis: {args.json}")
    return 0
