"""Text rendering of one table of a batch, through :class:`~fourhundred_env.table.Table`."""

from __future__ import annotations

from fourhundred_env.engine import Engine, State
from fourhundred_env.table import Table


def table_text(engine: Engine, state: State, index: int, viewer: int | None = None) -> str:
    """One screen for table `index`: scores, bids, tricks, trick, and `viewer`'s hand only
    (all four hands if `viewer` is None)."""
    table = Table(rules=engine.rules, name=f"table {index}")
    table.state = state.select(index)
    return table.render(viewer if viewer is None or viewer >= 0 else None)
