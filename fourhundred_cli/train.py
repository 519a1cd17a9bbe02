"""`fourhundred train CONFIG [key=value ...] [--resume RUN_DIR]`: self-play PPO, expert
iteration or a bidding policy."""

from __future__ import annotations

import argparse
import shlex
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from fourhundred_env.errors import FourHundredError

_T = TypeVar("_T")

NAME = "train"
HELP = "train a policy by self-play PPO, expert iteration or a bidding policy (configs/*.yaml)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument(
        "config",
        nargs="?",
        help="YAML file, or a bundled config's name: tiny, selfplay, exit, bidding, "
        "bidding_short, bidding_q, bidding_q_short (configs/*.yaml; defaults if omitted)",
    )
    p.add_argument("overrides", nargs="*", help="key=value overrides of config fields")
    p.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue this run from its last checkpoint (default: a new run)",
    )
    p.add_argument("--no-eval", action="store_true", help="skip the tournament evaluations")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    from fourhundred_env.configs import parse_overrides
    from fourhundred_train.config import load_config, resume_config
    from fourhundred_train.evaluate import make_evaluator
    from fourhundred_train.ppo import Trainer

    if args.config and "=" in args.config:  # only overrides were given
        args.overrides.insert(0, args.config)
        args.config = None
    from fourhundred_train.bid_q import is_bid_q
    from fourhundred_train.exit import is_exit

    resumed = Path(args.resume) / "config.yaml" if args.resume else None
    config_file = resumed if resumed is not None and resumed.is_file() else None
    if not args.resume:
        config_file = args.config
    if is_bid_q(config_file):
        return _run_bid_q(args)  # a fitted-Q bidder (configs/bidding_q.yaml)
    if is_exit(config_file):
        return _run_exit(args)  # expert iteration (configs/exit.yaml)
    if args.resume:
        if args.config:
            raise FourHundredError("--resume takes the run's own config.yaml: give overrides only")
        run_dir = Path(args.resume)
        if not (run_dir / "config.yaml").is_file():
            raise FourHundredError(
                f"--resume {args.resume!r}: expected a run folder with config.yaml"
            )
        config = resume_config(run_dir, args.overrides)  # mode and the network's shape stay
    else:
        config = load_config(args.config, args.overrides)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path(config.runs_dir) / f"{config.name}__{config.seed}__{stamp}"
    made = _first_missing(run_dir)
    trainer = Trainer(config, run_dir, resume=bool(args.resume),
                      overrides=parse_overrides(args.overrides))  # fmt: skip
    print(f"run folder: {run_dir}  (tensorboard --logdir {config.runs_dir})")
    print(f"device: {trainer.device_used}")
    evaluate = None if args.no_eval else make_evaluator(config, run_dir)
    history = _kept_or_removed(
        args, run_dir, made, trainer.resumable, lambda: trainer.train(evaluate)
    )
    last = history[-1] if history else {}
    what = f" (the mean of {trainer.averaged} updates' weights)" if trainer.averaged else ""
    print(
        f"done: {trainer.update} updates, {trainer.decisions:,} decisions; "
        f"policy {run_dir / 'policy.pt'}{what}"
    )
    for key in sorted(k for k in last if k.startswith(("charts/", "eval/"))):
        print(f"  {key:<36} {last[key]:.4g}")
    return 0


def _config_and_folder(args: argparse.Namespace, load, resume) -> tuple[object, Path]:
    """A trainer's config and run folder: `resume(RUN_DIR, overrides)` with --resume (which
    takes no config file), else `load(config, overrides)` and a new folder for it."""
    if args.resume:
        if args.config:
            raise FourHundredError("--resume takes the run's own config.yaml: give overrides only")
        run_dir = Path(args.resume)
        return resume(run_dir, args.overrides), run_dir
    config = load(args.config, args.overrides)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return config, Path(config.runs_dir) / f"{config.name}__{config.seed}__{stamp}"


def _run_bid_q(args: argparse.Namespace) -> int:
    """A ``mode: bid_q`` config: the fitted-Q bidder (train/bid_q/)."""
    from fourhundred_train.bid_q import BidQTrainer, load_bid_q_config
    from fourhundred_train.bid_q.config import resume_bid_q_config

    config, run_dir = _config_and_folder(args, load_bid_q_config, resume_bid_q_config)
    made = _first_missing(run_dir)
    trainer = BidQTrainer(config, run_dir, resume=bool(args.resume))  # refuses a bad device
    print(f"run folder: {run_dir}")
    print(f"device: {trainer.device_used}")
    history = _kept_or_removed(args, run_dir, made, trainer.resumable, trainer.train)
    print(f"done: {len(history)} iteration(s) this run; policy {run_dir / 'policy.pt'}")
    return 0


def _run_exit(args: argparse.Namespace) -> int:
    """A ``mode: exit`` config: expert iteration (train/exit/)."""
    from fourhundred_train.exit import ExitTrainer, load_exit_config, results_table, resume_config

    if args.no_eval:  # eval_matches may change on a resume: it changes no weight
        args.overrides = [*args.overrides, "eval_matches=0"]
    config, run_dir = _config_and_folder(args, load_exit_config, resume_config)
    made = _first_missing(run_dir)
    trainer = ExitTrainer(config, run_dir, resume=bool(args.resume))  # refuses a bad device
    print(f"run folder: {run_dir}  (tensorboard --logdir {config.runs_dir})")
    print(f"device: {trainer.device_used}")
    history = _kept_or_removed(args, run_dir, made, trainer.resumable, trainer.train)
    print(f"done: {len(history)} iteration(s); policy {run_dir / 'policy.pt'}")
    if history:
        print(results_table(history))
    return 0


def _kept_or_removed(
    args: argparse.Namespace, run_dir: Path, made: Path | None, resumable: Callable[[], bool],
    train: Callable[[], _T],
) -> _T:  # fmt: skip
    """`train()`, which a trainer stopped by bad input mid-run (your reward answering NaN
    at its tenth update) ends with a FourHundredError: a run with something to resume from is
    kept and the error says where it is and the ``--resume`` line that continues it; with
    nothing to resume from, the folders this command `made` (the run folder, or the first
    missing folder above it) are removed rather than left empty."""
    try:
        return train()
    except FourHundredError as e:
        if resumable():
            raise FourHundredError(
                f"{e} (the run so far is kept in {run_dir}: {_resume_line(args, run_dir)} "
                "continues it)"
            ) from None
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
            raise FourHundredError(f"{e} (stopped before anything to resume from: the run "
                                   f"folder {run_dir} is removed)") from None  # fmt: skip
        raise


def _first_missing(folder: Path) -> Path | None:
    """The outermost of `folder` and the folders above it that do not exist yet (what making
    it makes), or None when it exists."""
    missing = None
    for f in (folder, *folder.parents):
        if f.exists():
            break
        missing = f
    return missing


def _resume_line(args: argparse.Namespace, run_dir: Path) -> str:
    """``fourhundred train --resume RUN_DIR``, with the overrides of this command line that
    a resume must name again (a function of your own, a spec that starts a program: a run
    folder is data, fourhundred_train.run_data)."""
    from fourhundred_env.registry import starts_program

    again = [o for o in args.overrides
             if o.partition("=")[0].strip() in ("reward", "features") or starts_program(o)]  # fmt: skip
    return shlex.join(["fourhundred", "train", "--resume", str(run_dir), *again])
