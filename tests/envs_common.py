"""Helpers shared by the environment tests (tests/test_envs_*.py)."""

from __future__ import annotations

import numpy as np

from fourhundred_agents import register_agent
from fourhundred_agents.protocol import Agent
from fourhundred_env.view import SeatView


def pick_actions(mask: np.ndarray, step: int, tables: np.ndarray) -> np.ndarray:
    """(B,) int64 legal actions chosen by a fixed rule of (step, table): the k-th legal action
    with k = (7 * step + 13 * table) mod (number of legal actions); 0 where none is legal.

    The same table gets the same action alone or inside any batch, with no random stream.
    """
    mask = np.asarray(mask).astype(bool)
    count = mask.sum(axis=1)
    k = (7 * step + 13 * np.asarray(tables)) % np.maximum(count, 1)
    action = (np.cumsum(mask, axis=1) <= k[:, None]).sum(axis=1)
    return np.where(count > 0, action, 0).astype(np.int64)


def assert_same_data(a: object, b: object, where: str = "") -> None:
    """Dicts/arrays/scalars equal exactly (dtype and shape included)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same_data(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b), where
    else:
        assert a == b, where


class LowestAgent(Agent):
    """Deterministic: always the lowest legal action (the minimum bid, the lowest card id)."""

    name = "envtest_lowest"

    def act(self, view: SeatView) -> np.ndarray:
        return np.argmax(view.legal_mask, axis=1).astype(np.int64)


register_agent("envtest_lowest", lambda rules, seed, arg: LowestAgent(rules, seed))
