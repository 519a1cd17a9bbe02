"""`fourhundred match`: one match between random legal bots, printed as its score sheet."""

from __future__ import annotations

import argparse

import numpy as np

from fourhundred_cli.common import check_seed
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_env.table import Table

NAME = "match"
HELP = "play one match between random legal bots and print its score sheet"


def play_random_match(
    rules: Rules, seed: int, max_bid: int = 4, max_hands: int = 1000, match_index: int = 0
) -> Table:
    """A whole match between four random legal bots (bids capped at `max_bid`), seeded."""
    table = Table(rules=rules, seed=seed, match_index=match_index, name=f"match {match_index}")
    rng = np.random.default_rng([seed, match_index])
    while table.phase != "match_over" and table.hand_number < max_hands:
        table.deal()
        while table.phase in ("bid", "play"):
            action = int(table.engine.random_actions(table.state, rng, max_bid=max_bid)[0])
            table.act(action)
    return table


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    p.add_argument("--rules", default="wiki", help="rules preset: wiki (default) or pagat")
    p.add_argument("--max-bid", type=int, default=4, help="highest bid the random bots make")
    p.add_argument(
        "--max-hands", type=int, default=1000, help="stop an unfinished match after this many hands"
    )


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    check_seed(args.seed)
    if not 1 <= args.max_bid <= 13:
        raise FourHundredError(f"--max-bid {args.max_bid}: expected a bid from 1 to 13")
    if args.max_hands < 1:
        raise FourHundredError(f"--max-hands {args.max_hands}: expected at least 1")
    rules = Rules.preset(args.rules)
    table = play_random_match(rules, args.seed, args.max_bid, args.max_hands)
    print(table.score_sheet())
    if table.winner is None:
        print(f"(stopped unfinished after {table.hand_number} hands)")
    return 0
