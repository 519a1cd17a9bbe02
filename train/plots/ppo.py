"""The figures of self-play (PPO) runs: the win rate against the evaluation opponent with its
Wilson band, points per hand, bidding, and the PPO losses and diagnostics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fourhundred_tournament.figures import new_figure
from fourhundred_train.plots.curves import (
    COLORS,
    Axis,
    curve,
    ema,
    legend,
    panel,
    percent_axis,
    percent_panel,
    smoothing_note,
    smoothing_weight,
)
from fourhundred_train.plots.runs import Run

WIN_RATE = "eval/win_rate"
WIN_LOW = "eval/win_rate_low"
WIN_HIGH = "eval/win_rate_high"

#: (tag, panel title, y-axis label) of the losses grid, row by row.
LOSS_PANELS: tuple[tuple[str, str, str], ...] = (
    ("losses/policy_loss", "Policy loss", "clipped surrogate loss"),
    ("losses/value_loss", "Value loss", "0.5 · MSE (scaled points²)"),
    ("losses/entropy", "Policy entropy", "entropy (nats)"),
    ("losses/approx_kl", "Approximate KL", "KL to rollout policy (nats)"),
    ("losses/clipfrac", "Clipped fraction", "samples clipped (%)"),
    ("losses/explained_variance", "Explained variance", "explained variance of returns"),
)
_PERCENT_TAGS = {"losses/clipfrac", "charts/bid_success_rate", "charts/thrown_in_rate"}
_NONNEGATIVE_TAGS = {"losses/approx_kl", "losses/clipfrac"}


def figure_win_rate(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Win rate to 41 against the evaluation opponent with its Wilson 95% band; None if no run
    logged ``eval/win_rate``."""
    with_eval = [r for r in runs if r.has(WIN_RATE)]
    if not with_eval:
        return None
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    axis = Axis(runs)
    weight = smoothing_weight(runs, WIN_RATE, smoothing)
    fig = new_figure(8.0, 5.2)
    ax = fig.add_subplot()
    for i, run in enumerate(runs):
        if not run.has(WIN_RATE):
            continue
        color = COLORS[i % len(COLORS)]
        s = run.scalars[WIN_RATE]
        x = axis.x(run, s.steps)
        if run.has(WIN_LOW) and run.has(WIN_HIGH):
            lo, hi = run.scalars[WIN_LOW], run.scalars[WIN_HIGH]
            ax.fill_between(
                axis.x(run, lo.steps),
                100 * lo.values,
                100 * np.interp(lo.steps, hi.steps, hi.values),
                color=color,
                alpha=0.15,
                linewidth=0,
            )
        ax.plot(x, 100 * s.values, "o-", color=color, alpha=0.35, markersize=3.5, linewidth=0.9)
        if len(x) > 1:
            ax.plot(x, ema(100 * s.values, weight), color=color, linewidth=2)
    ax.axhline(50, color="0.35", linestyle="--", linewidth=1.1)
    ax.set_ylim(0, 100)
    percent_axis(ax)
    ax.set_ylabel("matches won (%)")
    axis.style(ax)
    opponents = {str(r.config.get("eval_opponent", "")) for r in with_eval} - {""}
    against = opponents.pop() if len(opponents) == 1 else "the evaluation opponent"
    ax.set_title(f"Win rate to 41 against {against}", fontsize=12)
    legend(
        fig,
        runs,
        smoothing_note(weight),
        [
            (Patch(color="0.5", alpha=0.3, linewidth=0), "Wilson 95% interval"),
            (Line2D([], [], color="0.5", marker="o", markersize=3.5, alpha=0.5), "each evaluation"),
            (Line2D([], [], color="0.35", linestyle="--"), "50% (even)"),
        ],
        tag=WIN_RATE,
    )
    return fig


def figure_points_per_hand(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Mean hand points of the learner's seats per update; None if no run logged them."""
    tag = "charts/points_per_hand"
    if not any(r.has(tag) for r in runs):
        return None
    axis = Axis(runs)
    weight = smoothing_weight(runs, tag, smoothing)
    fig = new_figure(8.0, 4.8)
    ax = fig.add_subplot()
    for i, run in enumerate(runs):
        curve(ax, axis, run, tag, COLORS[i % len(COLORS)], weight)
    ax.axhline(0, color="0.35", linestyle="--", linewidth=1.0)
    ax.set_ylabel("points per hand (learner seats)")
    axis.style(ax)
    ax.set_title("Points per hand in training rollouts", fontsize=12)
    legend(fig, runs, smoothing_note(weight), tag=tag)
    return fig


def figure_bidding(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Bid success rate and thrown-in rate per update (two panels); None if neither logged."""
    panels = (
        ("charts/bid_success_rate", "Bid success rate", "contracts made (%)"),
        ("charts/thrown_in_rate", "Hands thrown in", "hands thrown in (%)"),
    )
    if not any(r.has(tag) for r in runs for tag, _, _ in panels):
        return None
    axis = Axis(runs)
    fig = new_figure(11.0, 4.6)
    axes = fig.subplots(1, 2, sharex=True)
    notes = []
    for ax, (tag, title, ylabel) in zip(axes, panels, strict=True):
        notes.append(percent_panel(ax, axis, runs, tag, smoothing, title, ylabel))
    fig.suptitle("Bidding in training rollouts", fontsize=12)
    legend(fig, runs, smoothing_note(max(notes)))
    return fig


def value_loss_label(runs: Sequence[Run]) -> str:
    """The value loss's unit, from the runs' rewards (config.yaml): the returns are rewards x
    reward_scale ("scaled"), the rewards points, the match value (match_value_points x the
    change of the team's match-win chance: reward match_value), both, or what your own
    reward pays (reward package.module:function: named by its function)."""
    from fourhundred_train.config import FIXED_REWARDS

    units = set()
    for r in runs:
        reward = r.config.get("reward", "team_points")
        with_value = float(r.config.get("match_value_points") or 0) > 0
        if reward not in FIXED_REWARDS:
            units.add(f"scaled {reward.replace(':', '.').rpartition('.')[2]} reward²")
        elif reward == "match_value":
            units.add("scaled match value²")
        elif with_value:
            units.add("scaled (points + match value)²")
        else:
            units.add("scaled points²")
    unit = units.pop() if len(units) == 1 else "scaled reward²"
    return f"0.5 · MSE ({unit})"


def figure_losses(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """The PPO losses and diagnostics, one panel each (2 x 3); None if none was logged."""
    if not any(r.has(tag) for r in runs for tag, _, _ in LOSS_PANELS):
        return None
    axis = Axis(runs)
    fig = new_figure(13.0, 7.6)
    axes = fig.subplots(2, 3, sharex=True)
    weights = []
    for ax, (tag, title, ylabel) in zip(axes.flat, LOSS_PANELS, strict=True):
        if tag == "losses/value_loss":
            ylabel = value_loss_label(runs)
        scale = 100.0 if tag in _PERCENT_TAGS else 1.0
        weight = smoothing_weight(runs, tag, smoothing)
        weights.append(weight)
        drawn = panel(ax, axis, runs, tag, weight, scale=scale)
        if tag in _NONNEGATIVE_TAGS and drawn:
            ax.set_ylim(bottom=0)
        if tag in _PERCENT_TAGS:
            percent_axis(ax)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        axis.style(ax)
        ax.tick_params(labelbottom=True)
    fig.suptitle("PPO losses and diagnostics", fontsize=12)
    legend(fig, runs, smoothing_note(max(weights)))
    return fig
