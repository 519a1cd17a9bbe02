"""`fourhundred plot RUN_DIR [RUN_DIR ...] [--out DIR]` and `fourhundred plot RESULTS.sqlite`.

Run folders (TensorBoard event files of `fourhundred train`) give learning curves
(:mod:`fourhundred_train.plots`); a tournament's SQLite file gives its report figures
(:mod:`fourhundred_tournament.plots`). matplotlib and tensorboard are imported only when the command runs.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fourhundred_cli.common import writable_folder
from fourhundred_env.errors import FourHundredError

NAME = "plot"
HELP = "write PNG plots of training runs or of a tournament results database"

DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    p.add_argument(
        "paths", nargs="+", metavar="PATH",
        help="run folders (or a folder of runs) to overlay, or one tournament .sqlite/.db file",
    )  # fmt: skip
    p.add_argument(
        "--out", metavar="DIR",
        help="where the PNGs go (default: <run>/plots for one run, <common parent>/plots for "
        "several, <db folder>/plots for a database)",
    )  # fmt: skip
    p.add_argument(
        "--smoothing", type=float, metavar="W",
        help="EMA weight of the learning curves in [0, 1) (default: from the curve length)",
    )  # fmt: skip


def _is_db(path: Path) -> bool:
    return path.suffix.lower() in DB_SUFFIXES


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    try:
        return _run(args)
    except ModuleNotFoundError as e:
        if e.name not in ("matplotlib", "tensorboard", "yaml"):
            raise
        raise FourHundredError(
            f"plotting needs {e.name}: pip install 'fourhundred[train,plots]'"
        ) from None


def _run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths]
    dbs = [p for p in paths if _is_db(p)]
    if dbs:
        if len(paths) != 1:
            raise FourHundredError(
                f"plot {' '.join(args.paths)}: expected either one results database "
                f"({'/'.join(DB_SUFFIXES)}) or run folders, not both or several databases"
            )
        from fourhundred_tournament.plots import write_tournament_plots

        db = dbs[0]
        out = Path(args.out) if args.out else db.parent / "plots"
        writable_folder(out, "--out")
        written = write_tournament_plots(db, out)
    else:
        if args.smoothing is not None and not 0.0 <= args.smoothing < 1.0:
            raise FourHundredError(f"--smoothing {args.smoothing}: expected a number in [0, 1)")
        from fourhundred_train.plots import load_runs, write_training_plots

        runs = load_runs(paths)
        if args.out:
            out = Path(args.out)
        elif len(runs) == 1:
            out = runs[0].path / "plots"
        else:
            out = Path(os.path.commonpath([r.path.resolve() for r in runs])) / "plots"
        writable_folder(out, "--out")
        written = write_training_plots(runs, out, smoothing=args.smoothing)
        print(f"{len(runs)} run(s): " + ", ".join(str(r.path) for r in runs))
        names = {p.name for p in written}
        if not names & {"win_rate.png", "exit.png", "bid_eval.png"}:
            print("no eval/* scalars in these runs, so no win_rate.png or bid_eval.png (train "
                  "with eval_every > 0)")  # fmt: skip
    for path in written:
        print(path)
    return 0
