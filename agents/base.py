"""The agent protocol: every bot, scripted, neural or human, is an `Agent`.

One agent instance serves one seat (at one or many tables) and only ever receives that
seat's :class:`~fourhundred_env.view.SeatView`: its own hand and public facts. Two seats are
never served by one instance, so partners cannot share hidden information.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import inline, kernel
from fourhundred_env.cards import BID_OFFSET, NUM_ACTIONS
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


@inline
def nth_true(row: np.ndarray, k: int) -> int:
    """Index of the k-th (0-based) nonzero entry of `row`; needs k < its count."""
    for a in range(row.shape[0]):
        if row[a]:
            if k == 0:
                return a
            k -= 1
    return -1


def sample_masked(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(K,) int64: a uniformly random True index of each row of a (K, 66) bool mask.

    Draws rng.random(K), one uniform per row, and takes the True entry of rank floor(u * n)
    (the engine's sampler kernel)."""
    u = rng.random(mask.shape[0])
    out = np.empty(mask.shape[0], np.int64)
    K.sample_mask(mask.view(np.uint8), u, -1, out)
    if (out < 0).any():
        raise ValueError("sample_masked: a row of the legal mask is empty")
    return out


@kernel
def random_legal(views: np.ndarray, u: np.ndarray, cut: int, out: np.ndarray) -> int:
    """out (K,) int64: for each record of `views` (SeatView.DTYPE), the legal action of rank
    ``floor(u * n)`` among its n legal actions once bids above `cut` are removed (bids
    1..cut stay; where that leaves no bid, the lowest legal bid stays). u (K,) uniforms in
    [0, 1). Returns the first record with no legal action, or -1."""
    first = BID_OFFSET + 1
    allowed = np.zeros(NUM_ACTIONS, np.bool_)
    for i in range(views.shape[0]):
        row = views[i]["legal_mask"]
        lowest = -1
        for a in range(first, first + 13):
            if row[a]:
                lowest = a
                break
        keep_lowest = lowest >= first + cut  # the cap removes every legal bid
        n = 0
        for a in range(NUM_ACTIONS):
            ok = row[a] != 0 and (
                a < first + cut or a >= first + 13 or (keep_lowest and a == lowest)
            )
            allowed[a] = ok
            if ok:
                n += 1
        if n == 0:
            return i
        out[i] = nth_true(allowed, np.int64(u[i] * n))
    return -1


class RandomAgent(Agent):
    """Uniformly random legal actions; bids capped at `max_bid` (None: any legal bid).

    Uniformly random bids up to 13 are mostly missed, and four such bots never reach 41, so
    the default caps bids at 4 (a seat whose minimum is higher bids its minimum).
    """

    name = "random"

    def __init__(self, rules: Rules | None = None, seed: int = 0, max_bid: int | None = 4) -> None:
        super().__init__(rules, seed)
        self.max_bid = max_bid
        # bids kept: 1..cut, as the slice [:max_bid] of bids 1..13 (a negative max_bid counts
        # from 13 down, as it did when the cap was that slice of the mask)
        self._cut = 13 if max_bid is None else len(range(13)[:max_bid])

    def act(self, view: SeatView) -> np.ndarray:
        u = self.rng.random(view.size)
        out = np.empty(view.size, np.int64)
        if random_legal(view.records, u, self._cut, out) >= 0:
            raise ValueError("sample_masked: a row of the legal mask is empty")
        return out

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        actions = self.act(view)
        mask = view.legal_mask.astype(np.float32)
        return actions, mask / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)


assert NUM_ACTIONS == 66
