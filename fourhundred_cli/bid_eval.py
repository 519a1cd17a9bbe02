"""`fourhundred bid-eval`: two bidders' points per hand on the same hands, card play fixed."""

from __future__ import annotations

import argparse

NAME = "bid-eval"
HELP = "compare two bidders' points per hand on the same hands, play fixed"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bidder", help="agent spec of the bidder, e.g. neural-bid:runs/.../policy.pt")
    p.add_argument("--baseline", default="heuristic", help="bidder to compare with (heuristic)")
    p.add_argument("--play", default="heuristic", help="agent that plays the cards (heuristic)")
    p.add_argument("--tables", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=20, help="hands per table")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", default="wiki")


def run(args: argparse.Namespace) -> int:
    from train.evaluate import compare_bidders

    r = compare_bidders(
        args.bidder, args.baseline, args.play, args.tables, args.rounds, args.seed, args.rules
    )
    print(f"{int(r['hands']):,} hands, the same for both bidders (play: {args.play})")
    print(f"  {args.bidder:<40} {r['bidder_points_per_hand']:+.3f} points per hand")
    print(f"  {args.baseline:<40} {r['baseline_points_per_hand']:+.3f} points per hand")
    print(
        f"  difference {r['difference']:+.3f} [{r['difference_low']:+.3f}, "
        f"{r['difference_high']:+.3f}] (95%); hands whose points differ: "
        f"{100 * r['changed_bids_share']:.1f}%"
    )
    return 0
