"""`fourhundred train CONFIG [key=value ...] [--resume RUN_DIR]`."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from fourhundred_env.cli import subcommand
from fourhundred_env.errors import FourHundredError


def _add(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="YAML file in configs/ (defaults if omitted)")
    p.add_argument("overrides", nargs="*", help="key=value overrides of config fields")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue this run from its last checkpoint")
    p.add_argument("--no-eval", action="store_true", help="skip the tournament evaluations")


@subcommand("train", "train a policy by self-play PPO, or a bidding policy (configs/*.yaml)")(_add)
def _train(args: argparse.Namespace) -> int:
    from train.config import load_config
    from train.evaluate import make_evaluator
    from train.ppo import Trainer

    if args.config and "=" in args.config:  # only overrides were given
        args.overrides.insert(0, args.config)
        args.config = None
    if args.resume:
        if args.config:
            raise FourHundredError("--resume takes the run's own config.yaml: give overrides only")
        run_dir = Path(args.resume)
        if not (run_dir / "config.yaml").is_file():
            raise FourHundredError(
                f"--resume {args.resume!r}: expected a run folder with config.yaml"
            )
        config = load_config(run_dir / "config.yaml", args.overrides)
    else:
        config = load_config(args.config, args.overrides)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path(config.runs_dir) / f"{config.name}__{config.seed}__{stamp}"
    trainer = Trainer(config, run_dir, resume=bool(args.resume))
    print(f"run folder: {run_dir}  (tensorboard --logdir {config.runs_dir})")
    evaluate = None if args.no_eval else make_evaluator(config, run_dir)
    history = trainer.train(evaluate)
    last = history[-1] if history else {}
    print(
        f"done: {trainer.update} updates, {trainer.decisions:,} decisions; policy {run_dir / 'policy.pt'}"
    )
    for key in sorted(k for k in last if k.startswith(("charts/", "eval/"))):
        print(f"  {key:<36} {last[key]:.4g}")
    return 0


def _add_bid_eval(p: argparse.ArgumentParser) -> None:
    p.add_argument("bidder", help="agent spec of the bidder, e.g. neural-bid:runs/.../policy.pt")
    p.add_argument("--baseline", default="heuristic", help="bidder to compare with (heuristic)")
    p.add_argument("--play", default="heuristic", help="agent that plays the cards (heuristic)")
    p.add_argument("--tables", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=20, help="hands per table")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", default="wiki")


@subcommand("bid-eval", "compare two bidders' points per hand on the same hands, play fixed")(
    _add_bid_eval
)
def _bid_eval(args: argparse.Namespace) -> int:
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
