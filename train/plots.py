"""Learning curves of training runs, from their TensorBoard event files, as PNG files.

    from train.plots import load_runs, write_training_plots
    paths = write_training_plots(["runs/selfplay__1__...", "runs/selfplay__2__..."], "plots/")

Event files are read with TensorBoard's own reader (`EventAccumulator`), which also drops
the events a resumed run purged. Runs are overlaid, one colour each: the raw values faint,
an exponential moving average (debiased, as TensorBoard draws it) on top. The win rate
against the evaluation opponent carries its Wilson 95% band (``eval/win_rate_low`` /
``eval/win_rate_high``). The x axis is the number of learner decisions trained on when every
run logged ``charts/decisions`` (read from it, so runs logged with the update as their step
still plot right), else the TensorBoard step.

Figures are built on `matplotlib.figure.Figure` directly (the Agg renderer writes the PNGs),
so importing this module neither selects nor disturbs a pyplot backend, e.g. in a notebook.
Nothing here imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.errors import FourHundredError
from tournament.figures import new_figure, save_figure

WIN_RATE = "eval/win_rate"
WIN_LOW = "eval/win_rate_low"
WIN_HIGH = "eval/win_rate_high"
DECISIONS = "charts/decisions"

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

# Colour-blind friendly (Okabe-Ito), in order of contrast on white.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


class NoRunsError(FourHundredError):
    """No TensorBoard event files where run folders were expected."""


@dataclass
class Series:
    """One scalar tag of one run: `steps` (N,) int64 TensorBoard steps (learner decisions;
    the update number in runs logged before that), `values` (N,) float64."""

    steps: np.ndarray
    values: np.ndarray


@dataclass
class Run:
    """The scalars of one run folder and what its config.yaml says (empty if absent)."""

    path: Path
    label: str
    scalars: dict[str, Series]
    config: dict[str, Any] = field(default_factory=dict)

    def has(self, tag: str) -> bool:
        s = self.scalars.get(tag)
        return s is not None and bool(np.isfinite(s.values).any())


# -- reading -----------------------------------------------------------------------------------
def _has_events(path: Path) -> bool:
    return path.is_dir() and any(path.glob("events.out.tfevents.*"))


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run folders among `paths`: a folder with event files is a run; a folder without any
    stands for the run folders below it (e.g. ``runs/``). Raises NoRunsError if none."""
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise NoRunsError(f"run folder {str(p)!r} does not exist")
        if _has_events(p):
            found.append(p)
            continue
        below = sorted({f.parent for f in p.rglob("events.out.tfevents.*")}) if p.is_dir() else []
        if not below:
            raise NoRunsError(
                f"{str(p)!r} holds no TensorBoard event files (events.out.tfevents.*): "
                "expected a run folder written by `fourhundred train`, or a folder of them"
            )
        found.extend(below)
    return list(dict.fromkeys(found))


def read_scalars(run_dir: str | Path) -> dict[str, Series]:
    """Every scalar tag of one run folder, all events kept (no reservoir sampling)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags().get("scalars", []):
        events = acc.Scalars(tag)
        steps = np.array([e.step for e in events], np.int64)
        values = np.array([e.value for e in events], np.float64)
        order = np.argsort(steps, kind="stable")
        out[tag] = Series(steps[order], values[order])
    return out


def _read_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "config.yaml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def load_runs(paths: Iterable[str | Path]) -> list[Run]:
    """Runs (see :func:`find_runs`) with their scalars, labelled "name (seed s)" from their
    config.yaml, or by folder name when that is missing or not unique."""
    dirs = find_runs(paths)
    runs = [Run(d, d.name, read_scalars(d), _read_config(d)) for d in dirs]
    labels = [
        f"{r.config['name']} (seed {r.config['seed']})"
        if {"name", "seed"} <= r.config.keys()
        else r.path.name
        for r in runs
    ]
    for r, label in zip(runs, labels, strict=True):
        r.label = label if labels.count(label) == 1 else r.path.name
    return runs


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
class _Axis:
    """The shared x axis: learner decisions when every run logged them, else the update."""

    def __init__(self, runs: Sequence[Run]) -> None:
        self.decisions = bool(runs) and all(r.has(DECISIONS) for r in runs)
        self.label = "learner decisions trained on" if self.decisions else "PPO update"

    def x(self, run: Run, steps: np.ndarray) -> np.ndarray:
        if not self.decisions:
            return steps.astype(np.float64)
        d = run.scalars[DECISIONS]
        return np.interp(steps, d.steps, d.values)

    def style(self, ax: Any) -> None:
        from matplotlib.ticker import EngFormatter, MaxNLocator

        ax.set_xlabel(self.label)
        if self.decisions:
            ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3, linewidth=0.6)


def _curve(
    ax: Any, axis: _Axis, run: Run, tag: str, color: str, weight: float, scale: float = 1.0
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


def _weight(runs: Sequence[Run], tag: str, smoothing: float | None) -> float:
    if smoothing is not None:
        return float(smoothing)
    n = max((len(r.scalars[tag].steps) for r in runs if tag in r.scalars), default=0)
    return auto_smoothing(n)


def _legend(
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


def _smoothing_note(weight: float) -> str:
    return (
        f"faint: raw values; bold: EMA (smoothing {weight:.2f})"
        if weight > 0
        else "values as logged (too few points to smooth)"
    )


def _percent_axis(ax: Any) -> None:
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(100))


def figure_win_rate(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Win rate to 41 against the evaluation opponent with its Wilson 95% band; None if no run
    logged ``eval/win_rate``."""
    with_eval = [r for r in runs if r.has(WIN_RATE)]
    if not with_eval:
        return None
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    axis = _Axis(runs)
    weight = _weight(runs, WIN_RATE, smoothing)
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
    _percent_axis(ax)
    ax.set_ylabel("matches won (%)")
    axis.style(ax)
    opponents = {str(r.config.get("eval_opponent", "")) for r in with_eval} - {""}
    against = opponents.pop() if len(opponents) == 1 else "the evaluation opponent"
    ax.set_title(f"Win rate to 41 against {against}", fontsize=12)
    _legend(
        fig,
        runs,
        _smoothing_note(weight),
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
    axis = _Axis(runs)
    weight = _weight(runs, tag, smoothing)
    fig = new_figure(8.0, 4.8)
    ax = fig.add_subplot()
    for i, run in enumerate(runs):
        _curve(ax, axis, run, tag, COLORS[i % len(COLORS)], weight)
    ax.axhline(0, color="0.35", linestyle="--", linewidth=1.0)
    ax.set_ylabel("points per hand (learner seats)")
    axis.style(ax)
    ax.set_title("Points per hand in training rollouts", fontsize=12)
    _legend(fig, runs, _smoothing_note(weight), tag=tag)
    return fig


def figure_bidding(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """Bid success rate and thrown-in rate per update (two panels); None if neither logged."""
    panels = (
        ("charts/bid_success_rate", "Bid success rate", "contracts made (%)"),
        ("charts/thrown_in_rate", "Hands thrown in", "hands thrown in (%)"),
    )
    if not any(r.has(tag) for r in runs for tag, _, _ in panels):
        return None
    axis = _Axis(runs)
    fig = new_figure(11.0, 4.6)
    axes = fig.subplots(1, 2, sharex=True)
    notes = []
    for ax, (tag, title, ylabel) in zip(axes, panels, strict=True):
        weight = _weight(runs, tag, smoothing)
        notes.append(weight)
        drawn = [
            _curve(ax, axis, run, tag, COLORS[i % len(COLORS)], weight, scale=100.0)
            for i, run in enumerate(runs)
        ]
        if not any(drawn):
            _not_logged(ax, tag)
        ax.set_ylim(bottom=0)
        _percent_axis(ax)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        axis.style(ax)
    fig.suptitle("Bidding in training rollouts", fontsize=12)
    _legend(fig, runs, _smoothing_note(max(notes)))
    return fig


def figure_losses(runs: Sequence[Run], smoothing: float | None = None) -> Any | None:
    """The PPO losses and diagnostics, one panel each (2 x 3); None if none was logged."""
    if not any(r.has(tag) for r in runs for tag, _, _ in LOSS_PANELS):
        return None
    axis = _Axis(runs)
    fig = new_figure(13.0, 7.6)
    axes = fig.subplots(2, 3, sharex=True)
    weights = []
    for ax, (tag, title, ylabel) in zip(axes.flat, LOSS_PANELS, strict=True):
        scale = 100.0 if tag in _PERCENT_TAGS else 1.0
        weight = _weight(runs, tag, smoothing)
        weights.append(weight)
        drawn = [
            _curve(ax, axis, run, tag, COLORS[i % len(COLORS)], weight, scale=scale)
            for i, run in enumerate(runs)
        ]
        if not any(drawn):
            _not_logged(ax, tag)
        if tag in _NONNEGATIVE_TAGS and any(drawn):
            ax.set_ylim(bottom=0)
        if tag in _PERCENT_TAGS:
            _percent_axis(ax)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel(ylabel)
        axis.style(ax)
        ax.tick_params(labelbottom=True)
    fig.suptitle("PPO losses and diagnostics", fontsize=12)
    _legend(fig, runs, _smoothing_note(max(weights)))
    return fig


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
    _percent_axis(ax)
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
        _not_logged(ax, EXIT + "vs_opponent_win_rate")
    ax.set_xlabel("minutes of training")
    ax.set_title(f"Against {against}", fontsize=11)
    ax = axes[0, 1]
    if not _rate_panel(ax, runs, "vs_previous", iterations):
        _not_logged(ax, EXIT + "vs_previous_win_rate")
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
            _percent_axis(ax)
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
    _legend(fig, runs, "one colour per run; bands: Wilson 95% intervals")
    return fig


def _not_logged(ax: Any, tag: str) -> None:
    ax.text(0.5, 0.5, f"{tag}\nnot logged", transform=ax.transAxes, ha="center", va="center",
            color="0.4")  # fmt: skip


#: File name -> figure function, in the order they are written.
TRAINING_FIGURES = {
    "win_rate.png": figure_win_rate,
    "points_per_hand.png": figure_points_per_hand,
    "bid_success.png": figure_bidding,
    "losses.png": figure_losses,
    "exit.png": figure_exit,
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
