"""`heuristic-v1`: the heuristic bot as first measured, frozen: the fixed yardstick.

It is :class:`~fourhundred_agents.scripted.heuristic.HeuristicAgent` (the compiled bidding and card play described
in :mod:`fourhundred_agents.scripted.heuristic`) with its parameters frozen at the values it was measured with
(:data:`~fourhundred_agents.scripted.heuristic.HEURISTIC_V1_PARAMS`, BENCHMARKS.md "Tournament"); it takes no
argument. What keeps it frozen is its recorded behaviour, not a copy of its code:
tests/test_heuristic_fixture.py asserts its decisions at 5,000 recorded positions bit for
bit, so a change to the heuristic's code that would move heuristic-v1 fails there (tune the
heuristic through `HeuristicParams` or new code paths that v1's parameters leave off).
"""

from __future__ import annotations

from fourhundred_agents.scripted.heuristic import HeuristicAgent
from fourhundred_agents.scripted.heuristic_bid import HEURISTIC_V1_PARAMS
from fourhundred_env.registry import NoSettings, register_agent
from fourhundred_env.rules import Rules


class HeuristicV1Agent(HeuristicAgent):
    """The heuristic with the frozen parameters of `heuristic-v1` (see the module docstring)."""

    name = "heuristic-v1"

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed, HEURISTIC_V1_PARAMS)


register_agent(
    "heuristic-v1",
    lambda rules, seed, settings: HeuristicV1Agent(rules, seed),
    "the heuristic as first measured, frozen (a fixed yardstick)",
    settings=NoSettings,
)
