"""A ladder's figures (PNG, matplotlib: the optional ``plots`` extra), drawn from the
:func:`fourhundred_tournament.ladder.history.ladder_report` dict, so that they and the text agree:
the ratings after each event (:func:`figure_history`) and, for the snapshots of a training run,
the Elo by training step beside the win rate against a reference bot (:func:`figure_by_step`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_tournament.figures import new_figure, save_figure

__all__ = ["figure_by_step", "figure_history", "step_points", "write_history_plot"]

_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442")  # fmt: skip


def figure_history(report: dict[str, Any]) -> Any:
    """Every bot's Elo after each event, with its 95% interval as a band, from the event that
    added it to the one that retired it (an x there)."""
    events = report["events"]
    fig = new_figure(9.0, 5.2)
    ax = fig.add_subplot()
    x_all = [e["event"] for e in events]
    for k, bot in enumerate(report["bots"]):
        label = bot["label"]
        pts = [(e["event"], e["ratings"][label]) for e in events if label in e["ratings"]
               and (bot["retired"] is None or e["event"] <= bot["retired"])]  # fmt: skip
        if not pts or all(r["elo"] != r["elo"] for _, r in pts):
            continue
        x = np.array([p[0] for p in pts])
        elo = np.array([p[1]["elo"] for p in pts])
        low = np.array([p[1]["low"] for p in pts])
        high = np.array([p[1]["high"] for p in pts])
        color = _COLORS[k % len(_COLORS)]
        style = "-" if bot["active"] else ":"
        ax.plot(x, elo, style, marker="o", color=color, label=bot.get("name", label),
                linewidth=1.8, markersize=4)  # fmt: skip
        ax.fill_between(x, low, high, color=color, alpha=0.12, linewidth=0)
        ax.errorbar(
            x[-1:],
            elo[-1:],
            yerr=[elo[-1:] - low[-1:], high[-1:] - elo[-1:]],
            color=color,
            capsize=4,
            linewidth=1.2,
        )  # the interval now, as a bar
        if bot["retired"] is not None:
            ax.plot([x[-1]], [elo[-1]], "x", color=color, markersize=9, markeredgewidth=2)
    ax.set_xticks(x_all, [f"#{e}" for e in x_all])
    ax.set_xlabel("event (each add or remove); x: retired, dotted: not on the ladder now")
    zero = f"{report['anchor']} = 1500" if report["anchor"] else "mean 1500"
    ax.set_ylabel(f"Elo ({zero}); bands: 95% interval")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title("Ladder: ratings after each event", fontsize=12, loc="left")
    games = sum(p["games"] for p in report["pairings"])
    fig.suptitle(f"{Path(report['file']).name}: {len(report['bots'])} bots, {games} games, "
                 f"rules {report['rules']}, seed {report['seed']}", fontsize=8.5, color="0.35",
                 x=0.99, ha="right")  # fmt: skip
    return fig


def step_points(report: dict[str, Any], reference: str) -> list[dict[str, Any]]:
    """The bots of the report that record a training step (`info["step"]`), by step: Elo
    with its interval now, and the win rate against `reference` with its Wilson interval."""
    vs = {}
    for p in report["pairings"]:
        if reference in (p["pair_a"], p["pair_b"]) and p["games"]:
            mine = p["pair_b"] if p["pair_a"] == reference else p["pair_a"]
            flip = p["pair_a"] == reference
            rate, low, high = p["rate"], p["low"], p["high"]
            vs[mine] = (1 - rate, 1 - high, 1 - low) if flip else (rate, low, high)
    out = []
    for b in report["bots"]:
        if "step" in b["info"]:
            rate, low, high = vs.get(b["label"], (float("nan"),) * 3)
            out.append({"label": b["label"], "step": int(b["info"]["step"]), "elo": b["elo"],
                        "low": b["low"], "high": b["high"], "win_rate": rate, "win_low": low,
                        "win_high": high})  # fmt: skip
    return sorted(out, key=lambda r: r["step"])


def figure_by_step(
    points: Sequence[dict[str, Any]], reference: str, reference_elo: float | None
) -> Any:
    """Two panels over the training step: the snapshots' Elo on the ladder (95% interval),
    the reference's as a line; their win rate against the reference (Wilson 95%)."""
    fig = new_figure(9.0, 6.4)
    top, bottom = fig.subplots(2, 1, sharex=True)
    x = np.array([p["step"] for p in points], np.float64)
    elo = np.array([p["elo"] for p in points])
    top.errorbar(x, elo, yerr=[elo - [p["low"] for p in points], [p["high"] for p in points] - elo],
                 fmt="o-", color="#0072B2", capsize=3, label="snapshot")  # fmt: skip
    if reference_elo is not None and reference_elo == reference_elo:
        top.axhline(reference_elo, color="#D55E00", linestyle="--", label=reference)
    top.set_ylabel("Elo on the ladder (95%)")
    top.legend(fontsize=8, frameon=False)
    top.grid(True, alpha=0.3)
    top.set_title("Elo by training step", fontsize=12, loc="left")
    rate = 100 * np.array([p["win_rate"] for p in points])
    low = 100 * np.array([p["win_low"] for p in points])
    high = 100 * np.array([p["win_high"] for p in points])
    bottom.errorbar(x, rate, yerr=[rate - low, high - rate], fmt="s-", color="#009E73", capsize=3)
    bottom.axhline(50, color="0.45", linestyle="--", linewidth=1)
    bottom.set_ylim(-2, 102)
    bottom.set_ylabel(f"won against {reference} (%)")
    bottom.set_xlabel("training step (learner decisions trained on)")
    bottom.grid(True, alpha=0.3)
    return fig


def write_history_plot(report: dict[str, Any], path: str | Path) -> Path:
    """Draw :func:`figure_history` of `report` into the PNG file `path`."""
    return save_figure(figure_history(report), path)
