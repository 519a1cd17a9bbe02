"""The `fourhundred` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np

from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_env.table import Table

SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable]] = {}


def subcommand(name: str, help_text: str):
    """Register `fn(args) -> int` as a subcommand, with `add(parser)` adding its arguments."""

    def wrap(add: Callable[[argparse.ArgumentParser], None]):
        def inner(fn: Callable) -> Callable:
            SUBCOMMANDS[name] = (help_text, add, fn)
            return fn

        return inner

    return wrap


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


def _add_match(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    p.add_argument("--rules", default="wiki", help="rules preset: wiki (default) or pagat")
    p.add_argument("--max-bid", type=int, default=4, help="highest bid the random bots make (4)")
    p.add_argument("--max-hands", type=int, default=1000, help="stop an unfinished match (1000)")


@subcommand("match", "play one match between random legal bots and print its score sheet")(
    _add_match
)
def _match(args: argparse.Namespace) -> int:
    rules = Rules.preset(args.rules)
    table = play_random_match(rules, args.seed, args.max_bid, args.max_hands)
    print(table.score_sheet())
    if table.winner is None:
        print(f"(stopped unfinished after {table.hand_number} hands)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fourhundred", description="400 (Lebanese/Syrian trick-taking game) for AI bots"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add, fn) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add(p)
        p.set_defaults(func=fn)
    return parser


def _load_plugins() -> None:
    """Subcommands defined outside the rules core (tournament, play, train) register on import."""
    import importlib

    for module in ("agents.cli", "train.cli", "train.plot_cli"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name not in (module, module.split(".")[0]):
                raise


def main(argv: Sequence[str] | None = None) -> int:
    _load_plugins()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FourHundredError as e:
        print(f"fourhundred: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
