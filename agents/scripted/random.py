"""The `random` bot: uniformly random legal actions, bids capped, decided in a kernel."""

from __future__ import annotations

import numpy as np

from fourhundred_agents.compiled import CompiledPolicy
from fourhundred_agents.draws import random_one, view_uniform
from fourhundred_agents.protocol import Agent
from fourhundred_agents.scripted.playout import POLICY_RANDOM, Playout
from fourhundred_env._jit import kernel
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.rules import Rules
from fourhundred_env.streams import RANDOM_SALT
from fourhundred_env.view import SeatView


@kernel
def random_legal(views: np.ndarray, key: np.uint64, cut: int, out: np.ndarray) -> int:
    """`out` (K,) int64: for each record of `views` (SeatView.DTYPE), `random_one` of its mask
    with the agent's draw for that position. Returns the first record with no legal action,
    or -1."""
    allowed = np.zeros(NUM_ACTIONS, np.bool_)
    for i in range(views.shape[0]):
        v = views[i]
        out[i] = random_one(v["legal_mask"], view_uniform(v, key, RANDOM_SALT), cut, allowed)
        if out[i] < 0:
            return i
    return -1


class RandomAgent(Agent):
    """Uniformly random legal actions; bids capped at `max_bid` (None: any legal bid).

    Uniformly random bids up to 13 are mostly missed, and four such bots never reach 41, so
    the default caps bids at 4 (a seat whose minimum is higher bids its minimum).
    """

    name = "random"
    replayable = True  # its draws hash the seed, the stream and the position

    def __init__(self, rules: Rules | None = None, seed: int = 0, max_bid: int | None = 4) -> None:
        super().__init__(rules, seed)
        self.max_bid = max_bid
        # bids kept: 1..cut, as the slice [:max_bid] of bids 1..13 (a negative max_bid counts
        # from 13 down, as it did when the cap was that slice of the mask)
        self._cut = 13 if max_bid is None else len(range(13)[:max_bid])

    def act(self, view: SeatView) -> np.ndarray:
        """A uniformly random legal action per table, bids capped at `max_bid`; raises
        ValueError where a row of the legal mask is empty."""
        out = np.empty(view.size, np.int64)
        if random_legal(view.records, self.key, self._cut, out) >= 0:
            raise ValueError("RandomAgent: a row of the legal mask is empty")
        return out

    def compiled_policy(self) -> CompiledPolicy:
        """The random policy with this agent's key and bid cap, for the compiled play-outs."""
        return CompiledPolicy(POLICY_RANDOM, self.key, Playout, cut=self._cut)

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """Its actions, and probabilities (K, 66) float32 uniform over each row's whole
        legal mask (the bid cap not taken into account)."""
        actions = self.act(view)
        mask = view.legal_mask.astype(np.float32)
        return actions, mask / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
