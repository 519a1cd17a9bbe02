"""The phases of a table, declared once: the engine's `Phase`, and the plain integers the
compiled kernels compare a table's ``phase`` field with (`fourhundred_env.kernels` reads them
from here)."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["PHASE_NAMES", "Phase", "phase_name"]


class Phase(IntEnum):
    """Where a table is: bidding, playing, between hands, or at the end of its match."""

    BID = 0
    PLAY = 1
    HAND_OVER = 2
    MATCH_OVER = 3


PHASE_NAMES = ("bid", "play", "hand_over", "match_over")
"""The phases' names, indexed by their values."""


def phase_name(phase: int) -> str:
    """The name of a phase value, or ``phase 99 (none)`` for a value that is no phase (error
    messages about states changed from outside)."""
    p = int(phase)
    return PHASE_NAMES[p] if 0 <= p < len(PHASE_NAMES) else f"phase {p} (none)"
