"""The learning-curve PNGs of a set of runs: which figures (`TRAINING_FIGURES`) and writing
them (`write_training_plots`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from fourhundred_tournament.figures import save_figure
from fourhundred_train.plots.bids import figure_bid_eval, figure_bid_q
from fourhundred_train.plots.episodes import figure_episodes
from fourhundred_train.plots.exit import figure_exit
from fourhundred_train.plots.ppo import (
    figure_bidding,
    figure_losses,
    figure_points_per_hand,
    figure_win_rate,
)
from fourhundred_train.plots.runs import Run, load_runs

#: File name -> figure function, in the order they are written.
TRAINING_FIGURES = {
    "win_rate.png": figure_win_rate,
    "points_per_hand.png": figure_points_per_hand,
    "episodes.png": figure_episodes,
    "bid_success.png": figure_bidding,
    "losses.png": figure_losses,
    "exit.png": figure_exit,
    "bid_eval.png": figure_bid_eval,
    "bid_q.png": figure_bid_q,
}


def write_training_plots(
    runs: Iterable[str | Path] | Sequence[Run],
    out_dir: str | Path,
    smoothing: float | None = None,
) -> list[Path]:
    """Write the learning-curve PNGs of `runs` (run folders, or :class:`Run` s) into `out_dir`.

    Returns the written paths, in the order of :data:`TRAINING_FIGURES`; a figure whose
    scalars no run logged (e.g. ``win_rate.png`` of runs trained without evaluation) is
    skipped. `smoothing` is the EMA weight (None: :func:`auto_smoothing` of the longest curve).
    """
    runs = list(runs)
    if not all(isinstance(r, Run) for r in runs):
        runs = load_runs(runs)
    written = []
    for name, make in TRAINING_FIGURES.items():
        fig = make(runs, smoothing)
        if fig is not None:
            written.append(save_figure(fig, Path(out_dir) / name))
    return written
