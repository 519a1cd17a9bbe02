"""Figure helpers shared by the tournament figures and the training curves (`fourhundred_train.plots`).

Figures are built on `matplotlib.figure.Figure` directly and rendered by Agg, so importing
the modules that use them neither selects nor disturbs a pyplot backend (in a notebook, say).
matplotlib (the optional ``plots`` extra) is imported only when a figure is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["new_figure", "save_figure"]


def new_figure(width: float, height: float) -> Any:
    """A matplotlib Figure drawn by Agg (no pyplot state), constrained layout, 110 dpi."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)  # rendered by Agg whatever pyplot's backend is
    return fig


def save_figure(fig: Any, path: str | Path) -> Path:
    """Write `fig` as PNG (Agg renderer), whole or not at all (:mod:`fourhundred_tournament.files`), and
    return the path."""
    from fourhundred_tournament.files import replaced

    path = Path(path)
    with replaced(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    return path
