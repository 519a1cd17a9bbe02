"""The figure of the episodes played in training: the share won (``charts/win_rate``) and the
mean return (``charts/episodic_return``), as the CleanRL example logs them and as an SB3
run's ``rollout/success_rate`` and ``rollout/ep_rew_mean`` are read (:data:`~fourhundred_train.plots.runs.SB3_TAGS`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fourhundred_tournament.figures import new_figure
from fourhundred_train.plots.curves import (
    Axis,
    legend,
    panel,
    percent_axis,
    smoothing_note,
    smoothing_weight,
)
from fourhundred_train.plots.runs import Run

TRAIN_WIN_RATE = "charts/win_rate"
EPISODIC_RETURN = "charts/episodic_return"


def figure_episodes(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Episodes won (%) and mean episode return in the training rollouts (two panels); None
    if no run logged ``charts/win_rate``."""
    if not any(r.has(TRAIN_WIN_RATE) for r in runs):
        return None
    panels = (
        (TRAIN_WIN_RATE, "Episodes won in training", "episodes won (%)", 100.0),
        (EPISODIC_RETURN, "Episode return in training", "mean return (points)", 1.0),
    )
    axis = Axis(runs)
    fig = new_figure(11.0, 4.6)
    axes = fig.subplots(1, 2, sharex=True)
    notes = []
    for ax, (tag, title, ylabel, scale) in zip(axes, panels, strict=True):
        weight = smoothing_weight(runs, tag, smoothing)
        notes.append(weight)
        panel(ax, axis, runs, tag, weight, scale=scale)
        if scale == 100.0:
            ax.set_ylim(0, 100)
            percent_axis(ax)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        axis.style(ax)
    fig.suptitle("Training episodes (against the training opponents)", fontsize=12)
    legend(fig, runs, smoothing_note(max(notes)))
    return fig
