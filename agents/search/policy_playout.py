"""Play-outs of a policy network: many tables played to the end of the hand at once, every seat
deciding by the network from its own view.

A search bot scores each candidate action by playing the rest of the hand out with the
policy in every world it samples (:mod:`fourhundred_agents.search.agent`). Those play-outs are thousands of
tables advanced in lockstep: one compiled call plays every forced move (a single legal card)
and writes the observation of each table that has a real choice; the network reads all of
them in one batch (:class:`NetRunner`); a second compiled call plays the most likely legal
action of each. So a play-out of the rest of a hand costs one network call per remaining
decision, whatever the number of tables.

The network runs in bfloat16 where the CPU has native support for it (AMX or AVX-512 BF16:
four times faster than float32 at these batch sizes), float32 otherwise. A row's logits do
not depend on the other rows of the batch in bfloat16 on this machine (checked by
tests/test_search.py), so a table's play-out is the same alone or among thousands.
"""

from __future__ import annotations

import numpy as np

from fourhundred_agents.scripted.heuristic_bid import NUM_FEATURES, PARAMS_DTYPE
from fourhundred_agents.scripted.heuristic_play import heuristic_one
from fourhundred_env import kernels as K
from fourhundred_env._jit import ONE, ZERO, kernel, lowest_bit, popcount
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.engine import State
from fourhundred_env.observation import OBS_SCALE, OBS_SIZE, encode_one
from fourhundred_env.symmetry import mean_over_renamings, stack_renamed
from fourhundred_env.view import NO_MASK, SeatView, cut_view

_MASKED = np.float32(-1e30)
_NO_MODELS = np.zeros((0, 4), np.int8)
_NO_SCRIPTED = np.zeros(0, PARAMS_DTYPE)


def best_dtype(requested: str = "auto") -> str:
    """The network's dtype name, "bfloat16" or "float32": `requested`, or with "auto"
    bfloat16 where the CPU computes it natively (oneDNN reports bf16 support), else float32."""
    if requested != "auto":
        return requested
    import torch

    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native = False
    return "bfloat16" if native else "float32"


class NetRunner:
    """A PolicyValueNet as a function of observations: (n, OBS_SIZE) float32 numpy ->
    logits (n, 66) float32 numpy (and values (n,)), batched, without gradients, in `dtype`.
    `symmetric`: the logits and values averaged over the six renamings of the plain suits
    (fourhundred_env.symmetry), the six read in one call of six times the rows."""

    def __init__(self, net, dtype: str = "auto", symmetric: bool = False) -> None:
        import torch

        self._torch = torch
        self.dtype_name = best_dtype(dtype)
        self.dtype = getattr(torch, self.dtype_name)
        self.net = net.to(dtype=self.dtype).eval()
        self.symmetric = symmetric

    def __call__(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits (n, 66) float32 and values (n,) float32 of observations (n, OBS_SIZE)."""
        torch = self._torch
        x = stack_renamed(obs) if self.symmetric else obs
        with torch.inference_mode():
            logits, value = self.net(torch.from_numpy(x).to(self.dtype))
            logits, value = logits.float().numpy(), value.float().numpy()
        if self.symmetric:
            logits, value = mean_over_renamings(logits), mean_over_renamings(value)
        return logits, value


@kernel
def prepare(s: np.ndarray, live: np.ndarray, num_live: int, rules: np.ndarray,
            scratch: np.ndarray, obs: np.ndarray, legal: np.ndarray, rows: np.ndarray,
            stop_tricks: int, models: np.ndarray, scripted: np.ndarray) -> tuple[int, int]:  # fmt: skip
    """Play forced moves at the tables live[:num_live] until each has a real choice, its hand
    is over, or `stop_tricks` tricks are left at the start of a trick (0: play to the end).
    A seat whose model (models[i, seat], when models has rows) is m > 0 plays as the scripted
    model scripted[m - 1] (a heuristic parameter record) right here. Tables with a choice for
    the network get their observation (the seat to play's) in obs[j], their legal set
    (phase-local bits) in legal[j] and their index in rows[j], j < n; live[:m] keeps them.
    Returns (n, m)."""
    r = rules[0]
    v = scratch[0]
    f = np.empty(NUM_FEATURES)
    modelled = models.shape[0] > 0
    n = 0
    m = 0
    for j in range(num_live):
        i = live[j]
        t = s[i]
        while True:
            phase = t["phase"]
            if phase > K.PLAY:
                break
            if phase == K.PLAY and t["trick_size"] == 0 and 13 - t["num_tricks"] <= stop_tricks:
                break
            lg = K.legal_set(t, r)
            if popcount(lg) == 1:
                a = lowest_bit(lg)
                if phase == K.BID:
                    K.apply_bid(t, a + K.NUM_CARDS, r)
                else:
                    K.apply_card(t, a, r)
                continue
            seat = np.int64(t["to_play"])
            cut_view(t, i, seat, r, NO_MASK, v)
            if modelled and models[i, seat] > 0:
                a = heuristic_one(v, r, scripted[models[i, seat] - 1], f, ZERO)
                if phase == K.BID:
                    K.apply_bid(t, a, r)
                else:
                    K.apply_card(t, a, r)
                continue
            encode_one(v, OBS_SCALE, obs[n])
            legal[n] = lg
            rows[n] = i
            n += 1
            live[m] = i
            m += 1
            break
    return n, m


@kernel
def apply_best(s: np.ndarray, rows: np.ndarray, legal: np.ndarray, logits: np.ndarray,
               rules: np.ndarray) -> None:  # fmt: skip
    """At table rows[j], play the legal action (legal[j], phase-local bits) with the highest
    logits[j] (the lowest action id among equals)."""
    r = rules[0]
    for j in range(rows.shape[0]):
        t = s[rows[j]]
        playing = t["phase"] == K.PLAY
        offset = 0 if playing else NUM_CARDS
        lg = legal[j]
        best = -1
        best_logit = _MASKED
        while lg != ZERO:
            a = lowest_bit(lg)
            lg &= lg - ONE
            x = logits[j, a + offset]
            if best < 0 or x > best_logit:
                best = a
                best_logit = x
        if playing:
            K.apply_card(t, best, r)
        else:
            K.apply_bid(t, best + offset, r)


class PolicyPlayout:
    """Plays tables to the end of their hand (or to a number of tricks left) with a network's
    greedy policy at every seat, each seat from its own view (see the module docstring)."""

    def __init__(self, runner: NetRunner, rules_record: np.ndarray) -> None:
        self.runner = runner
        self.rules = rules_record
        self._scratch = np.zeros(1, SeatView.DTYPE)
        self._obs = np.zeros((0, OBS_SIZE), np.float32)
        self.network_rows = 0  # observations read by the network (for benchmarks)

    def run(self, state: State, stop_tricks: int = 0, models: np.ndarray | None = None,
            scripted: np.ndarray | None = None) -> None:  # fmt: skip
        """Play every table of `state` (at a decision or already over) until its hand is over,
        or until `stop_tricks` tricks are left at a trick's start (0: to the end). In place.
        models (B, 4) int8: who plays each seat, 0 the network, m > 0 the scripted model
        scripted[m - 1] (heuristic parameter records); None: the network everywhere."""
        if models is None:
            models = _NO_MODELS
            scripted = _NO_SCRIPTED
        b = state.batch_size
        if self._obs.shape[0] < b:
            self._obs = np.zeros((max(b, 2 * self._obs.shape[0]), OBS_SIZE), np.float32)
        live = np.arange(b, dtype=np.int64)
        num_live = b
        legal = np.empty(b, np.uint64)
        rows = np.empty(b, np.int64)
        while num_live:
            n, num_live = prepare(
                state.records, live, num_live, self.rules, self._scratch, self._obs, legal,
                rows, stop_tricks, models, scripted,
            )  # fmt: skip
            if n == 0:
                break
            logits, _ = self.runner(self._obs[:n])
            self.network_rows += n
            apply_best(state.records, rows[:n], legal[:n], logits, self.rules)
