"""The agent protocol: every bot, scripted, neural or human, is an `Agent`.

One agent instance serves one seat (at one or many tables) and only ever receives that
seat's :class:`~fourhundred_env.view.SeatView`: its own hand and public facts. Two seats are
never served by one instance, so partners cannot share hidden information.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView


class Agent:
    """Base class of all bots.

    Subclasses implement `act` (and may override `act_with_probs` and `reset`). Batched:
    `view` describes K tables where this agent's seat is to act.
    """

    name: str = "agent"

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        self.rules = rules if rules is not None else Rules()
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, num_tables: int) -> None:
        """Called at the start of matches, with the size of the batch of tables it will see."""

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 legal actions, one per table in `view`."""
        raise NotImplementedError

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """Actions and, where the agent has them, action probabilities (K, 66) float32."""
        return self.act(view), None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"


def sample_masked(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(K,) int64: a uniformly random True index of each row of a (K, 66) bool mask."""
    counts = mask.sum(axis=1)
    if (counts == 0).any():
        raise ValueError("sample_masked: a row of the legal mask is empty")
    k = (rng.random(mask.shape[0]) * counts).astype(np.int64)
    return (np.cumsum(mask, axis=1) <= k[:, None]).sum(axis=1).astype(np.int64)


class RandomAgent(Agent):
    """Uniformly random legal actions; bids capped at `max_bid` (None: any legal bid).

    Uniformly random bids up to 13 are mostly missed, and four such bots never reach 41, so
    the default caps bids at 4 (a seat whose minimum is higher bids its minimum).
    """

    name = "random"

    def __init__(self, rules: Rules | None = None, seed: int = 0, max_bid: int | None = 4) -> None:
        super().__init__(rules, seed)
        self.max_bid = max_bid

    def act(self, view: SeatView) -> np.ndarray:
        mask = view.legal_mask
        if self.max_bid is not None:
            bids = mask[:, 52:65].copy()
            capped = bids.copy()
            capped[:, self.max_bid :] = False
            # keep the minimum bid where the cap removes every bid
            lowest = np.argmax(bids, axis=1)
            empty = ~capped.any(axis=1) & bids.any(axis=1)
            capped[np.flatnonzero(empty), lowest[empty]] = True
            mask = mask.copy()
            mask[:, 52:65] = capped
        return sample_masked(mask, self.rng)

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        actions = self.act(view)
        mask = view.legal_mask.astype(np.float32)
        return actions, mask / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)


assert NUM_ACTIONS == 66
