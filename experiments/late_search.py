"""Where the search's card play gains: bots `late3`, `late6` and `late9` bid and play with
`selfplay.pt`, except the cards of the last K tricks, which `search` plays.

An agent module for the tournament (BENCHMARKS.md, "Search bot")::

    PYTHONPATH=experiments .venv/bin/fourhundred tournament --agent-module late_search \\
        --set isolation=none --agents late6 neural:agents/pretrained/selfplay.pt \\
        --matches 60 --seed 3601 --workers 1
"""

from __future__ import annotations

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_agents.registry import make_agent
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.registry import register_agent
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

NETWORK = "neural:agents/pretrained/selfplay.pt"


class LateSearch(Agent):
    """The network everywhere but the cards of the last `k` tricks, which `search` plays."""

    stateless = False
    replayable = False

    def __init__(self, rules: Rules, seed: int, k: int) -> None:
        super().__init__(rules, seed)
        self.k, self.name = k, f"late{k}"
        self.network = make_agent(NETWORK, rules, seed)
        self.search = make_agent("search", rules, seed + 1)

    def reset(self, num_tables: int) -> None:
        """Reset both bots."""
        self.network.reset(num_tables)
        self.search.reset(num_tables)

    def act(self, view: SeatView) -> np.ndarray:
        """The search's cards in the last `k` tricks, the network's actions elsewhere."""
        playing = ~view.legal_mask[:, NUM_CARDS:].any(axis=1)
        late = playing & (view.num_tricks >= 13 - self.k)
        out = np.empty(view.size, np.int64)
        for sel, agent in ((late, self.search), (~late, self.network)):
            if sel.any():
                out[sel] = agent.act(view.select(np.flatnonzero(sel)))
        return out


for _k in (3, 6, 9):
    register_agent(
        f"late{_k}",
        lambda rules, seed, text=None, k=_k: LateSearch(rules, seed, k),
        f"selfplay.pt, with search playing the cards of the last {_k} tricks",
    )
