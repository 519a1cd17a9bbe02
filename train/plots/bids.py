"""The figures of bidders in training: the bidding benchmark's judgement at each evaluation
(``eval/bid_*``, train/bid_report.py `BidEval`: PPO bidding and the fitted-Q bidder), and
the fitted-Q bidder's fit (``losses/fit_loss``, ``charts/mean_best_minus_own``,
``charts/own_bid_value``), one point per iteration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fourhundred_tournament.figures import new_figure
from fourhundred_train.plots.curves import (
    COLORS,
    Axis,
    curve,
    legend,
    panel,
    percent_panel,
    smoothing_note,
    smoothing_weight,
)
from fourhundred_train.plots.runs import Run

BID_DWIN = "eval/bid_dwin_pp"
"""dP(win) over heuristic-v1's bids on the same hands, percentage points (with _low, _high)."""
BID_POINTS_GAIN = "eval/bid_points_gain"
"""Points per hand over heuristic-v1's bids on the same hands (with _low, _high)."""
FIT_LOSS = "losses/fit_loss"


def _band(ax: Any, axis: Axis, runs: Sequence[Run], tag: str, weight: float) -> bool:
    """Every run's curve of `tag` with its 95% band (tag_low, tag_high) and the zero line."""
    drawn = False
    for i, run in enumerate(runs):
        color = COLORS[i % len(COLORS)]
        if run.has(f"{tag}_low") and run.has(f"{tag}_high"):
            lo, hi = run.scalars[f"{tag}_low"], run.scalars[f"{tag}_high"]
            ax.fill_between(axis.x(run, lo.steps), lo.values,
                            np.interp(lo.steps, hi.steps, hi.values), color=color, alpha=0.15,
                            linewidth=0)  # fmt: skip
        drawn |= curve(ax, axis, run, tag, color, weight)
    ax.axhline(0, color="0.35", linestyle="--", linewidth=1.0)
    return drawn


def figure_bid_eval(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """The bidding benchmark at each evaluation (2 x 2): dP(win) and points per hand over
    heuristic-v1's bids with their 95% intervals, contracts made and hands thrown in; None if
    no run logged ``eval/bid_dwin_pp``."""
    if not any(r.has(BID_DWIN) for r in runs):
        return None
    from matplotlib.patches import Patch

    axis = Axis(runs)
    fig = new_figure(12.0, 8.0)
    axes = fig.subplots(2, 2, sharex=True)
    weights = []
    for ax, tag, title, ylabel in (
        (axes[0, 0], BID_DWIN, "dP(win) over heuristic-v1's bids", "match-win chance (pp per hand)"),
        (axes[0, 1], BID_POINTS_GAIN, "Points over heuristic-v1's bids", "points per hand"),
    ):  # fmt: skip
        weight = smoothing_weight(runs, tag, smoothing)
        weights.append(weight)
        if not _band(ax, axis, runs, tag, weight):
            ax.text(0.5, 0.5, f"{tag}\nnot logged", transform=ax.transAxes, ha="center")
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        axis.style(ax)
        ax.tick_params(labelbottom=True)
    for ax, tag, title, ylabel in (
        (axes[1, 0], "eval/bid_made_rate", "Contracts made", "contracts made (%)"),
        (axes[1, 1], "eval/bid_thrown_in_rate", "Hands thrown in", "hands thrown in (%)"),
    ):
        weights.append(percent_panel(ax, axis, runs, tag, smoothing, title, ylabel))
        ax.tick_params(labelbottom=True)
    hands = {int(r.scalars["eval/bid_hands"].values[-1]) for r in runs if r.has("eval/bid_hands")}
    fig.suptitle(
        "The bids judged as bid-eval --report judges them: the same "
        f"{'/'.join(map(str, sorted(hands)))} hands each evaluation, cards by the play policy",
        fontsize=12,
    )
    legend(fig, runs, smoothing_note(max(weights)),
           [(Patch(color="0.5", alpha=0.3, linewidth=0), "95% interval (paired)")])  # fmt: skip
    return fig


def figure_bid_q(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """The fitted-Q bidder's fit per iteration (1 x 3): its squared error, the mean gap from
    the bid made to the best bid, and the value of the bid made (value units: percentage
    points of match-win chance, or points with value team_points); None if no run logged
    ``losses/fit_loss``."""
    runs = [r for r in runs if r.has(FIT_LOSS)]
    if not runs:
        return None
    units = {"pts" if r.config.get("value") == "team_points" else "pp" for r in runs}
    unit = units.pop() if len(units) == 1 else "value units"
    axis = Axis(runs)
    fig = new_figure(14.0, 4.8)
    axes = fig.subplots(1, 3, sharex=True)
    weights = []
    for ax, (tag, title, ylabel) in zip(axes, (
        (FIT_LOSS, "Fit loss", f"squared error ({unit}²)"),
        ("charts/mean_best_minus_own", "Best bid over the bid made", f"mean gap ({unit})"),
        ("charts/own_bid_value", "Value of the bid made (play-outs)", f"mean value ({unit})"),
    ), strict=True):  # fmt: skip
        weight = smoothing_weight(runs, tag, smoothing)
        weights.append(weight)
        panel(ax, axis, runs, tag, weight)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        axis.style(ax)
    fig.suptitle("Fitted-Q bidder, per iteration", fontsize=12)
    legend(fig, runs, smoothing_note(max(weights)))
    return fig
