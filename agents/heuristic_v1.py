"""`heuristic-v1`: the heuristic bot as first measured, frozen: the fixed yardstick.

It is :class:`~agents.heuristic.HeuristicAgent` (the compiled bidding and card play described
in :mod:`agents.heuristic`) with its parameters frozen at the values it was measured with
(:data:`~agents.heuristic.HEURISTIC_V1_PARAMS`, BENCHMARKS.md "Tournament"); it takes no
argument. What keeps it frozen is its recorded behaviour, not a copy of its code:
tests/test_heuristic_fixture.py asserts its decisions at 5,000 recorded positions bit for
bit, so a change to the heuristic's code that would move heuristic-v1 fails there (tune the
heuristic through `HeuristicParams` or new code paths that v1's parameters leave off).
"""

from __future__ import annotations

from agents.base import Agent
from agents.heuristic import HEURISTIC_V1_PARAMS, HeuristicAgent
from agents.registry import register_agent
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules


class HeuristicV1Agent(HeuristicAgent):
    """The heuristic with the frozen parameters of `heuristic-v1` (see the module docstring)."""

    name = "heuristic-v1"

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed, HEURISTIC_V1_PARAMS)


def _make(rules: Rules, seed: int, arg: str | None) -> Agent:
    if arg is not None:
        raise FourHundredError(f"agent 'heuristic-v1' takes no argument, got 'heuristic-v1:{arg}'")
    return HeuristicV1Agent(rules, seed)


register_agent("heuristic-v1", _make, "the heuristic as first measured, frozen (a fixed yardstick)")
