"""`fourhundred bid-analyse`: a bidder's distribution over the bids of one hand, and what each
bid is worth by play-outs (agents/bid_analysis.py), as a table and a plot."""

from __future__ import annotations

import argparse

NAME = "bid-analyse"
HELP = "why a bot bids what it bids: its bid distribution and each bid's value by play-outs"


def _ints(text: str, what: str) -> tuple[int, ...]:
    from fourhundred_env.errors import FourHundredError

    try:
        return tuple(int(x) for x in text.replace(",", " ").split())
    except ValueError:
        raise FourHundredError(
            f"{what} {text!r}: expected whole numbers, as in 12,31,-4,27"
        ) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument(
        "bidder", help="agent spec of the bidder, e.g. neural-bid:agents/pretrained/bidder.pt"
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--hand",
        help='the 13 cards of the seat to bid, e.g. "AH KH 10S 2C ..." (this or --deal-seed)',
    )
    where.add_argument(
        "--deal-seed", type=int, help="or a seeded deal: match 0's first hand (this or --hand)"
    )
    p.add_argument("--scores", default="0,0,0,0", help="scores before the hand, seats 0-3")
    p.add_argument("--dealer", type=int, default=3, help="the dealer's seat (3: seat 0 bids first)")
    p.add_argument(
        "--bids", default="", help="with --hand: the bids made so far, in order (default: none)"
    )
    p.add_argument("--seat", type=int, default=0,
                   help="with --deal-seed: the seat to analyse (earlier seats bid as --play)")  # fmt: skip
    p.add_argument("--play", default="heuristic-v1", help="plays the cards in the play-outs")
    p.add_argument("--worlds", type=int, default=128, help="worlds per bid")
    p.add_argument("--seed", type=int, default=0, help="seed of the worlds")
    p.add_argument("--rules", default="wiki", help="rules preset: wiki or pagat")
    p.add_argument(
        "--plot", metavar="PNG", help="also draw the analysis to this file (default: none)"
    )


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from fourhundred_agents.bid_analysis import analyse_bid, position_from_seed, position_from_text
    from fourhundred_cli.common import check_seed, writable_file
    from fourhundred_env.rules import Rules

    check_seed(args.seed)
    if args.deal_seed is not None:
        check_seed(args.deal_seed, "--deal-seed")
    if args.plot:
        writable_file(args.plot, "--plot")
    rules = Rules.preset(args.rules)
    scores = _ints(args.scores, "--scores")
    if args.hand is not None:
        pos = position_from_text(args.hand, scores, args.dealer, _ints(args.bids, "--bids"), rules)
    else:
        pos = position_from_seed(args.deal_seed, args.seat, scores, args.dealer, rules, args.play)
    analysis = analyse_bid(pos, args.bidder, args.play, args.worlds, args.seed, rules)
    print(analysis.table())
    if args.plot:
        from fourhundred_train.bid_report import plot_bid_analysis

        print(f"plot: {plot_bid_analysis(analysis, args.plot)}")
    return 0
