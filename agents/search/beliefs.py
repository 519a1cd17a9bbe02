"""What the searching seat believes about the cards it cannot see: the worlds of a view and
their weights.

The unseen cards are dealt `pool` times uniformly among the deals consistent with the view
(:func:`fourhundred_agents.search.worlds.deal_worlds`). With weighting, each deal weighs the likelihood of
what the other seats were seen to do there (their bids, their plays to this trick): under the
policy alone, or, with several models (:class:`SeatModels`), under each model a seat may be,
summed over a uniform prior, each seat then taken for its most likely model in that world.
`worlds` draws among the deals in proportion to their weights (systematic resampling,
:func:`resample`) give each world its count; a world drawn several times is scored once and
counted as often. Every draw is a hash of the agent's key and the position, so the worlds of
a view do not depend on the views beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from fourhundred_agents.draws import view_hash
from fourhundred_agents.scripted.heuristic_bid import PARAMS_DTYPE, params_record
from fourhundred_agents.search.policy_playout import NetRunner
from fourhundred_agents.search.settings import SCRIPTED_MODELS
from fourhundred_agents.search.worlds import (
    MAX_OBSERVED,
    add_log_likelihood,
    deal_worlds,
    observed_rows,
    seat_log_likelihoods,
)
from fourhundred_env._jit import U64, kernel
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.engine import Engine, State
from fourhundred_env.errors import ConfigError
from fourhundred_env.observation import OBS_SIZE
from fourhundred_env.streams import RESAMPLE_SALT
from fourhundred_env.view import SeatView, world_state


@dataclass(frozen=True)
class SeatModels:
    """Who a seat may be in a world: model 0 the policy, model 1 + i the scripted bot whose
    heuristic parameter record is ``scripted[i]``."""

    scripted: np.ndarray
    """(M,) PARAMS_DTYPE: the scripted models."""
    prior: np.ndarray
    """(1 + M,) float64: each model's log prior, uniform over the models named; -inf for the
    policy when it is not one of them."""
    modelled: bool
    """Each other seat's model is inferred (more than one model, or a scripted one)."""
    own: int
    """The model that plays the searching seat itself in its play-outs."""


def seat_models(names: list[str], own: str) -> SeatModels:
    """The models `names` (`policy` and names of SCRIPTED_MODELS) with `own` (`policy` or one
    of the scripted names) for the searching seat; ConfigError for another `own`."""
    scripted = [n for n in names if n != "policy"]
    records = [params_record(*SCRIPTED_MODELS[n]) for n in scripted]
    prior = np.full(1 + len(scripted), -np.log(len(names)))
    if "policy" not in names:
        prior[0] = -np.inf
    if own != "policy" and own not in scripted:
        raise ConfigError(
            f"own={own!r}: expected policy or one of the scripted names in models "
            f"({'+'.join(names)})"
        )
    return SeatModels(
        scripted=np.concatenate(records) if records else np.zeros(0, PARAMS_DTYPE),
        prior=prior,
        modelled=len(names) > 1 or bool(scripted),
        own=0 if own == "policy" else 1 + scripted.index(own),
    )


class Worlds(NamedTuple):
    """The worlds of K views, each view's `pool` deals and the ones drawn among them."""

    hands: np.ndarray
    """(K * pool, 4) uint64: row k * pool + i, deal i of view k (the cards still held)."""
    models: np.ndarray | None
    """(K * pool, 4) int8: each seat's most likely model in each deal (the searching seat:
    its own model); None when the seats are not modelled."""
    picks: np.ndarray
    """(K, worlds) int64: the deals drawn, distinct, in deal order (-1 past the distinct ones)."""
    counts: np.ndarray
    """(K, worlds) int64: how often each was drawn (0 past the distinct ones)."""


class Beliefs:
    """The worlds of views for an agent's key: deals weighted (``weighted``) by the likelihood
    of the other seats' actions under `models`, the policy's read by `runner`, each action
    mixed with `epsilon` of a uniformly random legal one."""

    def __init__(self, engine: Engine, runner: NetRunner, key: np.uint64, weighted: bool,
                 epsilon: float, models: SeatModels) -> None:  # fmt: skip
        self.engine = engine
        self.runner = runner
        self.key = key
        self.weighted = weighted
        self.epsilon = epsilon
        self.models = models

    def worlds(self, view: SeatView, worlds: int, pool: int, stats: dict[str, Any]) -> Worlds:
        """`worlds` worlds of each view among its `pool` deals (all `pool`, each once, without
        weighting). Adds to stats: `ess` (the deals' effective number, mean over the views),
        `distinct` (distinct worlds drawn, mean) and with models `scripted_share` (the share
        of the other seats taken for a scripted model)."""
        k = view.size
        hands = np.empty((k * pool, 4), np.uint64)
        deal_worlds(view.records, self.key, 0, pool, hands)
        if not self.weighted:
            picks = np.tile(np.arange(pool, dtype=np.int64), (k, 1))
            return Worlds(hands, None, picks, np.ones((k, pool), np.int64))
        scripted = self.models.scripted
        prior = self.models.prior
        rep = np.repeat(np.arange(k), pool)
        states = world_state(self.engine, view, hands, rep)
        n = states.batch_size
        obs = np.empty((n * MAX_OBSERVED, OBS_SIZE), np.float32)
        legal = np.empty(n * MAX_OBSERVED, np.uint64)
        acts = np.empty(n * MAX_OBSERVED, np.int64)
        owners = np.empty(n * MAX_OBSERVED, np.int64)
        actors = np.empty(n * MAX_OBSERVED, np.int64)
        known = np.empty((n * MAX_OBSERVED, scripted.shape[0]), np.int64)
        scratch = np.zeros(1, State.DTYPE)
        vscratch = np.zeros(1, SeatView.DTYPE)
        viewer = np.ascontiguousarray(view.seat[rep], np.int64)
        m = observed_rows(states.records, viewer, self.engine._r, scratch, vscratch, obs, legal,
                          acts, owners, actors, scripted, known)  # fmt: skip
        logw = np.zeros(n)
        if not m:
            logits = None
        elif np.isfinite(prior[0]):
            logits = self.runner(obs[:m])[0]
        else:  # no seat can be the policy: its likelihoods are not needed
            logits = np.zeros((m, NUM_ACTIONS), np.float32)
        models = None
        if self.models.modelled:
            # each seat's likelihood under each model; a world's weight sums over the models
            # (prior-weighted), and each seat plays as its most likely model there
            loglik = np.zeros((n, 4, prior.size))
            if m:
                seat_log_likelihoods(logits, legal[:m], acts[:m], owners[:m], actors[:m],
                                     known[:m], self.epsilon, loglik)  # fmt: skip
            joint = loglik + prior
            top = joint.max(axis=2)
            logw = (top + np.log(np.exp(joint - top[..., None]).sum(axis=2))).sum(axis=1)
            models = np.argmax(joint, axis=2).astype(np.int8)  # ties: the first
            stats["scripted_share"] = float(
                ((models > 0).sum() - (models[np.arange(n), viewer] > 0).sum()) / (3 * n)
            )
            models[np.arange(n), viewer] = self.models.own
        elif m:
            add_log_likelihood(logits, legal[:m], acts[:m], owners[:m], self.epsilon, logw)
        logw = logw.reshape(k, pool)
        picks = np.empty((k, worlds), np.int64)
        counts = np.empty((k, worlds), np.int64)
        resample(view.records, self.key, logw, worlds, picks, counts)
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        stats["ess"] = float((w.sum(1) ** 2 / (w**2).sum(1)).mean())
        stats["distinct"] = float((picks >= 0).sum(1).mean())
        return Worlds(hands, models, picks, counts)


@kernel
def resample(views: np.ndarray, key: np.uint64, logw: np.ndarray, worlds: int,
             picks: np.ndarray, counts: np.ndarray) -> None:  # fmt: skip
    """Systematic resampling, per view k: `worlds` draws among its candidates (row k of logw
    (K, C)) in proportion to exp(logw), the offset drawn from the position. picks (K, worlds)
    int64 gets the distinct candidates drawn, in candidate order, and counts (K, worlds) how
    often each was drawn (0 past the distinct ones)."""
    c = logw.shape[1]
    w = np.empty(c)
    for k in range(views.shape[0]):
        top = -np.inf
        for i in range(c):
            top = max(top, logw[k, i])
        total = 0.0
        for i in range(c):
            w[i] = np.exp(logw[k, i] - top)
            total += w[i]
        u0 = np.float64(view_hash(views[k], key, RESAMPLE_SALT) >> U64(11)) * (
            1.0 / 9007199254740992.0
        )
        for m in range(worlds):
            picks[k, m] = -1
            counts[k, m] = 0
        acc = 0.0
        i = 0
        n = -1
        for m in range(worlds):
            u = (u0 + m) / worlds * total
            while i < c - 1 and acc + w[i] <= u:
                acc += w[i]
                i += 1
            if n < 0 or picks[k, n] != i:
                n += 1
                picks[k, n] = i
            counts[k, n] += 1
