"""Scripted bots, compiled: `heuristic` and the `minbid` baseline.

:class:`HeuristicAgent` decides for the K tables of a view in one call of a compiled kernel
(:func:`decide`) that loops over the view's records (``view.records``, see
:mod:`fourhundred_env.batches`), bids and cards mixed, on uint64 card sets. One table and
4,096 tables take the same code, and a table decides the same alone or in a batch. The
kernels run unchanged as plain Python under ``NUMBA_DISABLE_JIT=1``.

It bids by a linear hand evaluation and the expected points of every legal bid
(:mod:`fourhundred_agents.scripted.heuristic_bid`) and plays by rules for following and leading read off
the SeatView alone (:mod:`fourhundred_agents.scripted.heuristic_play`). Each rule was kept because it won
duplicate matches against the version without it (BENCHMARKS.md, "Tournament").

`HeuristicParams` holds the tunable constants; ``heuristic:sigma=1.2,epsilon=0.05`` overrides
them from an agent spec (``epsilon`` > 0 mixes in random legal moves, drawn from the position
as every scripted bot's draws are: see :mod:`fourhundred_agents.draws`). The kernels read them
as one record (:func:`~fourhundred_agents.scripted.heuristic_bid.params_record`).

:class:`MinBidAgent` plays like the heuristic but always bids its minimum, or, as dealer, the
bid that makes the required total (if it can); it never asks for a redeal. It plays like the
frozen `heuristic-v1` (with :data:`~fourhundred_agents.scripted.heuristic_bid.HEURISTIC_V1_PARAMS`), so it stays a fixed baseline while
`heuristic` improves.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fourhundred_agents.compiled import CompiledPolicy
from fourhundred_agents.protocol import Agent
from fourhundred_agents.scripted.heuristic_bid import (
    HEURISTIC_V1_PARAMS,
    HeuristicParams,
    expected_tricks_kernel,
    params_record,
)
from fourhundred_agents.scripted.heuristic_play import decide
from fourhundred_agents.scripted.playout import POLICY_HEURISTIC, Playout
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.kernels import rules_record
from fourhundred_env.registry import NoSettings, register_agent, spec_settings
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView


def mask_to_set(mask: np.ndarray) -> np.ndarray:
    """(K, 52) bool -> (K,) uint64 card sets."""
    k = mask.shape[0]
    packed = np.zeros((k, 8), np.uint8)
    packed[:, :7] = np.packbits(mask[:, :NUM_CARDS], axis=1, bitorder="little")
    return packed.view("<u8").reshape(k).astype(np.uint64)


class HeuristicAgent(Agent):
    """Rule-based bidding and card play, compiled (see the module docstring)."""

    name = "heuristic"
    replayable = True  # its explore draws hash the seed, the stream and the position
    _MIN_BIDS = False
    """True: bid like `minbid` (the kernel's min_bids switch) instead of by the evaluation."""

    def __init__(
        self, rules: Rules | None = None, seed: int = 0, params: HeuristicParams | None = None
    ) -> None:
        super().__init__(rules, seed)
        self.params = params if params is not None else HeuristicParams()
        self._rules = rules_record(self.rules)
        self._params = params_record(self.params, self._MIN_BIDS)

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 legal actions for the K tables of `view` (bidding or playing)."""
        out = np.empty(view.size, np.int64)
        bad = decide(view.records, self._rules, self._params, self.key, out)
        if bad >= 0:
            raise FourHundredError(
                f"{self.name}: view {bad} is not a seat's view (phase {int(view.phase[bad])}, "
                f"bids {view.bids[bad].tolist()}): expected one cut by seat_view"
            )
        return out

    def compiled_policy(self) -> CompiledPolicy:
        """The heuristic with this agent's key and parameters, for the compiled play-outs."""
        return CompiledPolicy(POLICY_HEURISTIC, self.key, Playout, params=self._params)

    def expected_tricks(self, view: SeatView) -> np.ndarray:
        """(K,) float64: tricks this hand should take, before the others' bids."""
        out = np.empty(view.size)
        expected_tricks_kernel(np.ascontiguousarray(view.hand_set), out)
        return out


class MinBidAgent(HeuristicAgent):
    """Bids its minimum (as dealer: the bid that makes the total, when it can) and plays like
    `heuristic-v1` (frozen parameters, so this baseline does not drift): a yardstick for
    bidding."""

    name = "minbid"
    _MIN_BIDS = True

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed, HEURISTIC_V1_PARAMS)


def parse_params(text: str | None, base: HeuristicParams | None = None) -> HeuristicParams:
    """HeuristicParams from ``"sigma=1.2,bid_bias=0.3"`` (the settings of ``heuristic:...``)
    over `base` (default: the defaults)."""
    changes = spec_settings(f"heuristic:{text}") if text else HeuristicParams()
    if base is None:
        return changes
    given = {k.partition("=")[0].strip() for k in (text or "").split(",") if k}
    return dataclasses.replace(base, **{k: getattr(changes, k) for k in given})


def _make_heuristic(rules: Rules, seed: int, params: HeuristicParams) -> Agent:
    return HeuristicAgent(rules, seed, params)


register_agent(
    "heuristic",
    _make_heuristic,
    "rule-based bidding (hand evaluation, rules context) and card play; compiled "
    "(heuristic:sigma=1.2,... overrides HeuristicParams)",
    settings=HeuristicParams,
)
register_agent(
    "minbid",
    lambda rules, seed, settings: MinBidAgent(rules, seed),
    "always bids its minimum (dealer: makes the total); plays like heuristic-v1",
    settings=NoSettings,
)
