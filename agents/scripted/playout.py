"""Compiled play-outs of the scripted bots: several seats played to the next decision of
somebody else, in one kernel call for a whole batch of tables.

An environment whose opponents are all scripted bots (``random``, ``heuristic``,
``heuristic-v1``, ``minbid``) hands their seats to a :class:`Playout` instead of calling each
bot's `act` round after round. The kernel cuts each seat's view exactly as ``seat_view``
does and decides exactly as the bot's `act` does (the same per-record functions, the same
draws: see :mod:`fourhundred_agents.draws`), so both ways give the same games; only the Python call per
decision is gone.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fourhundred_agents.compiled import CompiledPolicy
from fourhundred_agents.draws import random_one, view_uniform
from fourhundred_agents.scripted.heuristic_bid import NUM_FEATURES, PARAMS_DTYPE
from fourhundred_agents.scripted.heuristic_play import heuristic_one
from fourhundred_env import kernels as K
from fourhundred_env._jit import kernel
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.engine import State
from fourhundred_env.streams import RANDOM_SALT
from fourhundred_env.view import NO_MASK, SeatView, cut_view

POLICY_RANDOM = 1
POLICY_HEURISTIC = 2
"""The kinds of :class:`~fourhundred_agents.compiled.CompiledPolicy` a :class:`Playout` plays."""


@kernel
def play_opponents(s: np.ndarray, rules: np.ndarray, decides: np.ndarray, kinds: np.ndarray,
                   keys: np.ndarray, cuts: np.ndarray, params: np.ndarray, scratch: np.ndarray,
                   ended: np.ndarray) -> int:  # fmt: skip
    """At every table, let the seats with a policy (kinds[seat] > 0) decide until a decision
    is the learner's (decides[phase, to_play + 1]), or a seat without a policy is to act, or
    the hand is over. ended[:n] gets the tables whose hand ended here; returns n, or
    -1 - i if a policy chose an illegal action at table i (that table is left before it)."""
    r = rules[0]
    v = scratch[0]
    f = np.empty(NUM_FEATURES)
    allowed = np.zeros(NUM_ACTIONS, np.bool_)
    n = 0
    for i in range(s.shape[0]):
        t = s[i]
        moved = False
        while True:
            phase = t["phase"]
            if phase > K.PLAY:
                break
            seat = np.int64(t["to_play"])
            kind = kinds[seat]
            if decides[phase, seat + 1] or kind == 0:
                break
            cut_view(t, i, seat, r, NO_MASK, v)
            if kind == POLICY_RANDOM:
                u = view_uniform(v, keys[seat], RANDOM_SALT)
                a = random_one(v["legal_mask"], u, cuts[seat], allowed)
            else:
                a = heuristic_one(v, r, params[seat], f, keys[seat])
            if a < 0 or a >= NUM_ACTIONS or not v["legal_mask"][a]:
                return -1 - i
            if phase == K.BID:
                K.apply_bid(t, a, r)
            else:
                K.apply_card(t, a, r)
            moved = True
        if moved and t["phase"] >= K.HAND_OVER:
            ended[n] = i
            n += 1
    return n


class Playout:
    """The compiled play of some seats' scripted bots (see the module docstring).

    `policies`: seat -> the bot's :class:`~fourhundred_agents.compiled.CompiledPolicy`. Seats without one are
    never played here (the caller decides for them).
    """

    def __init__(self, policies: Mapping[int, CompiledPolicy]) -> None:
        self.kinds = np.zeros(4, np.int64)
        self.keys = np.zeros(4, np.uint64)
        self.cuts = np.full(4, 13, np.int64)
        self.params = np.zeros(4, PARAMS_DTYPE)
        for seat, policy in policies.items():
            if policy.kind not in (POLICY_RANDOM, POLICY_HEURISTIC):
                raise ValueError(f"Playout: unknown policy kind {policy.kind} for seat {seat}")
            self.kinds[seat] = policy.kind
            self.keys[seat] = policy.key
            self.cuts[seat] = policy.cut
            if policy.params is not None:
                self.params[seat] = policy.params[0]
        self._scratch = np.zeros(1, SeatView.DTYPE)

    def run(self, state: State, rules: np.ndarray, decides: np.ndarray, ended: np.ndarray) -> int:
        """Play the policies' seats at every table of `state` (see `play_opponents`)."""
        return play_opponents(
            state.records, rules, decides, self.kinds, self.keys, self.cuts, self.params,
            self._scratch, ended,
        )  # fmt: skip
