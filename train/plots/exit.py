"""The figure of expert-iteration runs (train/exit/): their ``exit/*`` scalars, one point per
iteration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fourhundred_tournament.figures import new_figure
from fourhundred_train.plots.curves import COLORS, legend, not_logged, percent_axis
from fourhundred_train.plots.runs import Run

EXIT = "exit/"
"""Prefix of the scalars of expert-iteration runs (train/exit/), logged once per iteration."""


def _exit_series(run: Run, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(iteration numbers from 1, values) of an expert-iteration scalar of `run`."""
    s = run.scalars[EXIT + name]
    return s.steps.astype(np.float64), s.values


def _rate_panel(ax: Any, runs: Sequence[Run], tag: str, x_of) -> bool:
    """Win rates of `tag` (exit/<tag>_win_rate with its Wilson band) against x_of(run)."""
    drawn = False
    for i, run in enumerate(runs):
        if not run.has(EXIT + f"{tag}_win_rate"):
            continue
        color = COLORS[i % len(COLORS)]
        x = x_of(run)
        _, y = _exit_series(run, f"{tag}_win_rate")
        _, lo = _exit_series(run, f"{tag}_win_rate_low")
        _, hi = _exit_series(run, f"{tag}_win_rate_high")
        ax.fill_between(x, 100 * lo, 100 * hi, color=color, alpha=0.15, linewidth=0)
        ax.plot(x, 100 * y, "o-", color=color, markersize=4, linewidth=1.8)
        drawn = True
    ax.axhline(50, color="0.35", linestyle="--", linewidth=1.1)
    ax.set_ylim(0, 100)
    percent_axis(ax)
    ax.set_ylabel("matches won (%)")
    ax.grid(True, alpha=0.3, linewidth=0.6)
    return drawn


def figure_exit(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Expert iteration, per iteration (2 x 3 panels): the win rate against the evaluation
    opponent by minutes of training and against the previous iteration, the search's gain
    over the network, their agreement, labels per second and where the time went; None if
    no run is an expert-iteration run."""
    runs = [r for r in runs if r.has(EXIT + "search_gain_pp")]
    if not runs:
        return None
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    fig = new_figure(14.0, 8.2)
    axes = fig.subplots(2, 3)
    opponents = {str(r.config.get("eval_opponent", "")) for r in runs} - {""}
    against = opponents.pop() if len(opponents) == 1 else "the evaluation opponent"

    def minutes(run: Run) -> np.ndarray:
        return _exit_series(run, "minutes")[1]

    def iterations(run: Run) -> np.ndarray:
        return _exit_series(run, "minutes")[0]

    ax = axes[0, 0]
    if not _rate_panel(ax, runs, "vs_opponent", minutes):
        not_logged(ax, EXIT + "vs_opponent_win_rate")
    ax.set_xlabel("minutes of training")
    ax.set_title(f"Against {against}", fontsize=11)
    ax = axes[0, 1]
    if not _rate_panel(ax, runs, "vs_previous", iterations):
        not_logged(ax, EXIT + "vs_previous_win_rate")
    ax.set_title("Against the network it was trained from", fontsize=11)
    panels = (
        (axes[0, 2], (("search_gain_pp", "-", "search's best"), ("target_gain_pp", ":", "target")),
         "Gain over the network (held out)", "match-win chance (points of %)", 1.0),
        (axes[1, 0], (("agreement_before", ":", "before the fit"), ("agreement_after", "-", "after")),
         "Network's choice = search's best", "positions (%)", 100.0),
        (axes[1, 1], (("labels_per_s", "-", "labels per second"),),
         "Labelling speed", "positions valued per second", 1.0),
    )  # fmt: skip
    for ax, series, title, ylabel, scale in panels:
        for i, run in enumerate(runs):
            for name, style, _ in series:
                if run.has(EXIT + name):
                    x, y = _exit_series(run, name)
                    ax.plot(x, scale * y, style, marker="o", markersize=4, linewidth=1.6,
                            color=COLORS[i % len(COLORS)])  # fmt: skip
        if len(series) > 1:
            from matplotlib.lines import Line2D

            ax.legend([Line2D([], [], color="0.3", linestyle=st) for _, st, _ in series],
                      [label for _, _, label in series], fontsize=8, frameon=False)  # fmt: skip
        if scale == 100.0:
            percent_axis(ax)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3, linewidth=0.6)
    ax = axes[1, 2]
    parts = (("play_s", "#999999", "playing"), ("label_s", "#0072B2", "labelling"),
             ("fit_s", "#D55E00", "fitting"), ("eval_s", "#009E73", "evaluating"))  # fmt: skip
    run = runs[0]
    x = iterations(run)
    bottom = np.zeros_like(x)
    for name, color, _ in parts:
        if run.has(EXIT + name):
            y = _exit_series(run, name)[1] / 60
            ax.bar(x, y, bottom=bottom, color=color, width=0.7)
            bottom = bottom + y
    ax.legend([Patch(color=c) for _, c, _ in parts], [label for _, _, label in parts],
              fontsize=8, frameon=False)  # fmt: skip
    ax.set_title(f"Time per iteration ({run.label})", fontsize=11)
    ax.set_ylabel("minutes")
    ax.grid(True, axis="y", alpha=0.3, linewidth=0.6)
    for ax in (axes[0, 1], *axes[0, 2:], *axes[1]):
        ax.set_xlabel("iteration")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle("Expert iteration: the network trained on the search's values", fontsize=12)
    legend(fig, runs, "one colour per run; bands: Wilson 95% intervals")
    return fig
