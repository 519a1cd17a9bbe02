"""How a scripted bot runs inside a compiled play-out: data only.

A bot that can decide inside a kernel hands out a :class:`CompiledPolicy` from its
``compiled_policy()``; the policy names the play-out class that runs it (``player``), so
environments and rollouts build play-outs from policies without knowing any bot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class CompiledPolicy:
    """A scripted bot as a compiled play-out runs it: it decides exactly as its `act` does,
    but without a Python call per decision."""

    kind: int
    """What decides, in the numbering of `player` (e.g. fourhundred_agents.scripted.playout.POLICY_RANDOM)."""
    key: np.uint64
    """The agent's random-stream key (fourhundred_agents.draws.agent_key of its seed)."""
    player: Callable[[Mapping[int, CompiledPolicy]], Any]
    """The play-out class that plays policies of this kind, built from a {seat: policy}
    mapping; policies of different players cannot share a play-out."""
    cut: int = 13
    """random: bids 1..cut kept (see fourhundred_agents.scripted.random.RandomAgent)."""
    params: Any = None
    """heuristic: a (1,) record of fourhundred_agents.scripted.heuristic_bid.PARAMS_DTYPE."""
