"""`fourhundred evaluate-run RUN`: a run's snapshots against a fixed agent, after the fact."""

from __future__ import annotations

import argparse
from pathlib import Path

from fourhundred_env.errors import FourHundredError

NAME = "evaluate-run"
HELP = "play a run's snapshots against a fixed agent after the fact; log eval/* to its TensorBoard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="a run folder (runs/<name>__<seed>__<time>)")
    p.add_argument("--opponent", default=None, help="agent spec (default: the run's eval_opponent)")
    p.add_argument(
        "--matches",
        type=int,
        default=None,
        help="duplicate matches per snapshot (default: the run's eval_matches)",
    )
    p.add_argument("--every", type=int, default=1, help="evaluate every K-th snapshot")


def run(args: argparse.Namespace) -> int:
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
            # the trainer's step: learner decisions trained on at that snapshot
            writer.add_scalar(key, value, update * config.num_tables * config.rollout_steps)
        writer.flush()
        print(
            f"  update {update:>5}: win rate {100 * result['eval/win_rate']:5.1f}% "
            f"[{100 * result['eval/win_rate_low']:.1f}, {100 * result['eval/win_rate_high']:.1f}]"
            f"  points/hand {result['eval/points_per_hand']:+.2f}"
        )
    writer.close()
    return 0
