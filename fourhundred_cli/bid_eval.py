"""`fourhundred bid-eval`: a bidder against other bids with the card play fixed.

Without ``--report``: two bidders' points per hand on the same hands (seat 0 of
FourHundredBid-v0). With ``--report``: the bidding benchmark (train/bid_report.py): fixed
match situations x every dealer x seeded deals against ``heuristic-v1``'s and ``minbid``'s
bids (points per hand, contracts made, hands thrown in, match-win change, with intervals),
then duplicate matches to 41 with identical card play against both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "bid-eval"
HELP = "compare a bidder with other bids, card play fixed (--report: the bidding benchmark)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument("bidder", help="agent spec of the bidder, e.g. neural-bid:runs/.../policy.pt")
    p.add_argument("--baseline", default="heuristic-v1", help="bidder to compare with")
    p.add_argument(
        "--play", default="heuristic-v1",
        help="agent that plays the cards, the same for every bidder (as the bid trainers')",
    )  # fmt: skip
    p.add_argument("--tables", type=int, default=1024, help="tables played side by side")
    p.add_argument("--rounds", type=int, default=20, help="hands per table")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals")
    p.add_argument("--rules", default="wiki", help="rules preset: wiki or pagat")
    g = p.add_argument_group("the bidding benchmark")
    g.add_argument("--report", action="store_true",
                   help="the standard report against heuristic-v1's and minbid's bids")  # fmt: skip
    g.add_argument("--deals", type=int, default=256,
                   help="deals per match situation and dealer")  # fmt: skip
    g.add_argument("--matches", type=int, default=200,
                   help="duplicate matches per baseline (0: hands only)")  # fmt: skip
    g.add_argument("--out", default="runs/bid-eval", help="folder of the report and tournaments")
    g.add_argument("--workers", type=int, default=1, help="tournament processes")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from fourhundred_cli.common import check_seed, writable_folder
    from fourhundred_env.errors import FourHundredError

    for name in ("tables", "rounds", "deals", "workers"):
        if getattr(args, name) < 1:
            raise FourHundredError(f"--{name} {getattr(args, name)}: expected at least 1")
    if args.matches < 0:
        raise FourHundredError(f"--matches {args.matches}: expected 0 or more")
    check_seed(args.seed)
    if args.report:
        writable_folder(args.out, "--out")
    if args.report:
        return _report(args)
    from fourhundred_train.evaluate import compare_bidders

    play = args.play
    r = compare_bidders(
        args.bidder, args.baseline, play, args.tables, args.rounds, args.seed, args.rules
    )
    print(f"{int(r['hands']):,} hands, the same for both bidders (play: {play})")
    from fourhundred_env.registry import display_name

    print(f"  {display_name(args.bidder):<40} {r['bidder_points_per_hand']:+.3f} points per hand")
    print(
        f"  {display_name(args.baseline):<40} {r['baseline_points_per_hand']:+.3f} points per hand"
    )
    print(
        f"  difference {r['difference']:+.3f} [{r['difference_low']:+.3f}, "
        f"{r['difference_high']:+.3f}] (95%); hands whose points differ: "
        f"{100 * r['changed_bids_share']:.1f}%"
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    from fourhundred_train.bid_report import bid_report, format_report

    report = bid_report(
        args.bidder, play=args.play, deals=args.deals, matches=args.matches,
        seed=args.seed, rules=args.rules, out_dir=args.out, workers=args.workers,
    )  # fmt: skip
    text = format_report(report)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bid_report.json").write_text(json.dumps(report, indent=1))
    (out / "bid_report.txt").write_text(text + "\n")
    print(f"report: {out / 'bid_report.txt'}, {out / 'bid_report.json'}")
    return 0
