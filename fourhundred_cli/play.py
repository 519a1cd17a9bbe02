"""`fourhundred play`: a person plays a match in the terminal against three bots."""

from __future__ import annotations

import argparse

from fourhundred_cli.common import check_seed
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules

NAME = "play"
HELP = "play a match in the terminal against three bots"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument(
        "--seat", type=int, default=0, help="your seat 0-3 (default 0; your team is seat %% 2)"
    )
    p.add_argument(
        "--bots", nargs="+", default=["heuristic"], metavar="SPEC",
        help="one agent for all three bots, or three (for the other seats in order); default heuristic",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=None, help="seed of the deals (default: random)")
    p.add_argument("--rules", default="wiki", help="rules preset: wiki (default) or pagat")
    p.add_argument(
        "--max-hands", type=int, default=200, help="stop the match after this many hands"
    )
    p.add_argument(
        "--record", default=None, metavar="FILE",
        help="write the match to FILE as a game record (.json: JSON, else text) after every "
        "hand and at the end (default: none)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    import secrets

    from fourhundred_agents.human import play_match

    check_seed(args.seed)
    if args.max_hands < 1:
        raise FourHundredError(f"--max-hands {args.max_hands}: expected at least 1")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    rules = Rules.preset(args.rules)
    print(f"(seed {seed}: replay this match with --seed {seed})")
    play_match(args.seat, args.bots, rules, seed, args.max_hands, record=args.record)
    return 0
