"""What every learning-curve figure shares: the run colours, the EMA smoothing (`ema`,
`auto_smoothing`), the x axis (`Axis`: learner decisions when every run logged
``charts/decisions``, bidding positions fitted when every run is a fitted-Q bidder's
(``charts/positions``), else the TensorBoard step), a curve drawn raw and smoothed, the
legend below the axes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fourhundred_train.plots.runs import Run

DECISIONS = "charts/decisions"
POSITIONS = "charts/positions"
"""The fitted-Q bidder's x: bidding positions fitted so far (its TensorBoard step too)."""

# Colour-blind friendly (Okabe-Ito), in order of contrast on white.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


# -- smoothing ---------------------------------------------------------------------------------
def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """Debiased exponential moving average (TensorBoard's smoothing), (N,) float64.

    NaN values are skipped (the average carries over them); `weight` in [0, 1), 0 = raw.
    """
    values = np.asarray(values, np.float64)
    out = np.empty_like(values)
    last, norm = 0.0, 0.0
    for i, v in enumerate(values):
        if math.isfinite(v):
            last = weight * last + (1.0 - weight) * v
            norm = weight * norm + (1.0 - weight)
        out[i] = last / norm if norm > 0 else math.nan
    return out


def auto_smoothing(num_points: int) -> float:
    """An EMA weight whose window is about 1/20 of the curve: 0 up to 20 points, 0.8 at 100,
    0.98 at 1000."""
    return float(min(max(1.0 - 20.0 / max(num_points, 1), 0.0), 0.99))


# -- drawing -----------------------------------------------------------------------------------
class Axis:
    """The shared x axis: learner decisions when every run logged them, bidding positions
    fitted when every run logged those (fitted-Q bidders), else the update."""

    def __init__(self, runs: Sequence[Run]) -> None:
        self.tag: str | None = None
        for tag in (DECISIONS, POSITIONS):
            if runs and all(r.has(tag) for r in runs):
                self.tag = tag
                break
        self.decisions = self.tag is not None
        self.label = {DECISIONS: "learner decisions trained on",
                      POSITIONS: "bidding positions fitted"}.get(self.tag, "PPO update")  # fmt: skip

    def x(self, run: Run, steps: np.ndarray) -> np.ndarray:
        """(n,) float64 positions on the axis of `run`'s updates `steps` (n,): the updates
        themselves, or the learner decisions (positions) at them (interpolated)."""
        if self.tag is None:
            return steps.astype(np.float64)
        d = run.scalars[self.tag]
        return np.interp(steps, d.steps, d.values)

    def style(self, ax: Any) -> None:
        """Labels the matplotlib axes `ax`'s x axis, sets its ticks and draws a light grid."""
        from matplotlib.ticker import EngFormatter, MaxNLocator

        ax.set_xlabel(self.label)
        if self.decisions:
            ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3, linewidth=0.6)


def curve(
    ax: Any, axis: Axis, run: Run, tag: str, color: str, weight: float, scale: float = 1.0
) -> bool:
    """Raw values faint, their EMA on top; False if the run has no finite value of `tag`."""
    if not run.has(tag):
        return False
    s = run.scalars[tag]
    x = axis.x(run, s.steps)
    y = s.values * scale
    if len(x) == 1:
        ax.plot(x, y, "o", color=color, markersize=5)
        return True
    ax.plot(x, y, color=color, alpha=0.25, linewidth=0.9)
    ax.plot(x, ema(y, weight), color=color, linewidth=1.9)
    return True


def smoothing_weight(runs: Sequence[Run], tag: str, smoothing: float | None) -> float:
    """The EMA weight of `tag`'s curves: `smoothing`, or auto_smoothing of the longest."""
    if smoothing is not None:
        return float(smoothing)
    n = max((len(r.scalars[tag].steps) for r in runs if tag in r.scalars), default=0)
    return auto_smoothing(n)


def legend(
    fig: Any,
    runs: Sequence[Run],
    note: str,
    extra: Sequence[tuple[Any, str]] = (),
    tag: str | None = None,
) -> None:
    """One legend below the axes (never over the data): a line per run (colours as in every
    figure; runs without `tag` say so), then `extra`, under the title `note`."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=COLORS[i % len(COLORS)], linewidth=2) for i in range(len(runs))]
    labels = [r.label if tag is None or r.has(tag) else f"{r.label} (not logged)" for r in runs]
    handles += [h for h, _ in extra]
    labels += [t for _, t in extra]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=min(len(labels), 3),
        frameon=False,
        title=note,
        title_fontsize=8.5,
    )


def smoothing_note(weight: float) -> str:
    """The legend's title: what the faint and the bold lines are at EMA weight `weight`."""
    return (
        f"faint: raw values; bold: EMA (smoothing {weight:.2f})"
        if weight > 0
        else "values as logged (too few points to smooth)"
    )


def percent_axis(ax: Any) -> None:
    """`ax`'s y tick labels as percentages of values in 0-100."""
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(100))


def panel(ax: Any, axis: Axis, runs: Sequence[Run], tag: str, weight: float,
          scale: float = 1.0) -> bool:  # fmt: skip
    """Every run's curve of `tag` on `ax` in its colour, or the note that no run logged it;
    whether any curve was drawn."""
    drawn = [curve(ax, axis, run, tag, COLORS[i % len(COLORS)], weight, scale=scale)
             for i, run in enumerate(runs)]  # fmt: skip
    if not any(drawn):
        not_logged(ax, tag)
    return any(drawn)


def percent_panel(ax: Any, axis: Axis, runs: Sequence[Run], tag: str, smoothing: float | None,
                  title: str, ylabel: str) -> float:  # fmt: skip
    """A panel of a rate logged in 0-1 (`tag`), drawn in percent from 0, titled and styled;
    returns the smoothing weight it used."""
    weight = smoothing_weight(runs, tag, smoothing)
    panel(ax, axis, runs, tag, weight, scale=100.0)
    ax.set_ylim(bottom=0)
    percent_axis(ax)
    ax.set_title(title, fontsize=11)
    ax.set_ylabel(ylabel)
    axis.style(ax)
    return weight


def not_logged(ax: Any, tag: str) -> None:
    """A panel without curves says that no run logged `tag`."""
    ax.text(0.5, 0.5, f"{tag}\nnot logged", transform=ax.transAxes, ha="center", va="center",
            color="0.4")  # fmt: skip
