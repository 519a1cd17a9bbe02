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
    what = f" (the mean of {trainer.averaged} updates' weights)" if trainer.averaged else ""
    print(
        f"done: {trainer.update} updates, {trainer.decisions:,} decisions; "
        f"policy {run_dir / 'policy.pt'}{what}"
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


def _add_evaluate_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="a run folder (runs/<name>__<seed>__<time>)")
    p.add_argument("--opponent", default=None, help="agent spec (default: the run's eval_opponent)")
    p.add_argument("--matches", type=int, default=None, help="duplicate matches per snapshot")
    p.add_argument("--every", type=int, default=1, help="evaluate every K-th snapshot")


@subcommand(
    "evaluate-run",
    "play a run's snapshots against a fixed agent after the fact; log eval/* to its TensorBoard",
)(_add_evaluate_run)
def _evaluate_run(args: argparse.Namespace) -> int:
    from torch.utils.tensorboard import SummaryWriter

    from train.config import load_config
    from train.evaluate import evaluate_pair

    run = Path(args.run)
    if not (run / "config.yaml").is_file():
        raise FourHundredError(f"{args.run!r}: expected a run folder with config.yaml")
    config = load_config(run / "config.yaml")
    snapshots = sorted((run / "checkpoints").glob("policy_*.pt"))[:: max(1, args.every)]
    if not snapshots:
        raise FourHundredError(f"{args.run!r} has no checkpoints/policy_*.pt snapshots")
    opponent = args.opponent or config.eval_opponent
    matches = args.matches or config.eval_matches
    writer = SummaryWriter(str(run))  # beside the run's own events: one TensorBoard run
    print(f"{len(snapshots)} snapshots of {run} against {opponent}, {matches} duplicate matches")
    for snap in snapshots:
        update = int(snap.stem.split("_")[1])
        out = run / "eval" / f"posthoc_{update:05d}"
        result = evaluate_pair(
            f"neural:{snap}", opponent, matches, seed=config.seed * 1_000_003 + update,
            rules=config.rules, out_dir=out,
        )  # fmt: skip
        for key, value in result.items():
            writer.add_scalar(key, value, update)
        writer.flush()
        print(
            f"  update {update:>5}: win rate {100 * result['eval/win_rate']:5.1f}% "
            f"[{100 * result['eval/win_rate_low']:.1f}, {100 * result['eval/win_rate_high']:.1f}]"
            f"  points/hand {result['eval/points_per_hand']:+.2f}"
        )
    writer.close()
    return 0
