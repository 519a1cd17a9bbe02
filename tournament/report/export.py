"""The report written out: JSON and CSV files, TensorBoard scalars and text."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_tournament.files import replaced, write_text
from fourhundred_tournament.report.text import format_report


def write_report(report: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write report.json, leaderboard.csv and pairwise.csv into `out_dir`; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / "report.json",
        "leaderboard": out / "leaderboard.csv",
        "pairwise": out / "pairwise.csv",
    }
    # each file whole or not at all: a full disk leaves the previous one, never a cut one
    write_text(paths["json"], json.dumps(report, indent=2, default=_json_default) + "\n")
    board = report["leaderboard"]
    cols = ["rank", "agent", "elo", "elo_low", "elo_high", "win_rate", "win_low", "win_high",
            "games", "wins", "losses", "unfinished", "hands", "contracts", "points_per_hand",
            "bid_success", "mean_bid", "thrown_in_caused", "thrown_in_per_100", "decisions",
            "ms_per_move", "ms_p50", "ms_p90", "ms_p99", "ms_max", "forfeits",
            "slow_moves"]  # fmt: skip
    with replaced(paths["leaderboard"]) as tmp, tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(board)
    with replaced(paths["pairwise"]) as tmp, tmp.open("w", newline="") as f:
        cols = ["agent", "opponent", "games", "score", "rate", "low", "high",
                "duplicate_matches", "sweeps", "splits", "swept"]  # fmt: skip
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(report["pairwise"])
    return paths


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def log_tensorboard(report: dict[str, Any], log_dir: str | Path, step: int | None = None) -> None:
    """Write the leaderboard as TensorBoard scalars (``tournament/<metric>/<agent>``) and text.

    Imports torch.utils.tensorboard (or tensorboardX) only when called.
    """
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        try:
            from tensorboardX import SummaryWriter
        except ImportError:
            from fourhundred_env.errors import FourHundredError

            raise FourHundredError(
                "TensorBoard logging needs torch (pip install 'fourhundred[train]') or tensorboardX"
            ) from None
    step = report["games"] if step is None else step
    writer = SummaryWriter(log_dir=str(log_dir))
    try:
        for r in report["leaderboard"]:
            a = r["agent"]
            for key in ("elo", "win_rate", "points_per_hand", "bid_success", "thrown_in_per_100",
                        "ms_per_move", "forfeits"):  # fmt: skip
                v = r[key]
                if v == v:  # not NaN
                    writer.add_scalar(f"tournament/{key}/{a}", float(v), step)
        writer.add_text("tournament/report", "```\n" + format_report(report) + "\n```", step)
    finally:
        writer.close()
