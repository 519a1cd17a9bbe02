"""`search`: the policy network improved by search at every decision.

At each decision with a real choice, the seat

1. **deals worlds**: the cards it cannot see, dealt to the other seats uniformly among the deals
   consistent with its view (counts, cards played, shown voids), each world drawn from a hash
   of the position, so a decision never depends on the batch or the order of calls
   (:mod:`fourhundred_agents.search.worlds`);
2. **weights them** (``weighting=policy``) by the policy's likelihood of what the other seats
   did (their bids, their plays to this trick) and resamples `worlds` of the `candidates`
   in proportion (systematic resampling; a world drawn several times is played once and
   counted as often). With ``models=policy+heuristic-v1`` (any of SCRIPTED_MODELS) the
   other seats are not all taken for the policy: in every world each seat's observed bids
   and plays are scored under each model (a scripted bot takes one action, mixed with
   `epsilon` of a random one like the policy), the world weighs the sum over the models (a
   uniform prior), and its play-outs play each seat as its most likely model there
   (Bayesian opponent modelling over a library of known bots, from the hand's own evidence);
3. **scores each candidate action** in every world:
   - card play: the rest of the hand played out by the policy at all four seats (greedy, each
     seat from its own view; worlds x actions tables through the network at once:
     :mod:`fourhundred_agents.search.policy_playout`), or, once `endgame` tricks or fewer are left, solved
     exactly by alpha-beta over the made/missed contracts (:mod:`fourhundred_agents.search.endgame`);
   - bids (``bids=true``): the rest of the bidding and the whole hand played out the same way;
   and values the outcome by what it does to the match: the match-win estimate of the scores
   after the hand (:mod:`fourhundred_agents.value.matchwin`), 1 or 0 when the hand ends the match
   (``value=points``: the team's points in the hand instead);
4. **plays** the action with the best mean value, unless it beats the policy's own choice by no
   more than `margin` (play-outs are noisy; the policy is a good prior).

The candidate actions are the policy's `top_actions` most likely cards and its
`bid_candidates` most likely bids. Worlds are scored in chunks until all are done or the
time budget (`time_per_move` seconds per decision in the call) is spent: anytime, the best
action so far is returned. The budget only binds on a slow or loaded machine; when it does,
a decision depends on the machine's speed, not only on the game.

Specs: ``search`` (the defaults), ``search:strong`` (more worlds, a deeper endgame, up to 1 s
a move), ``search:fast`` (the defaults for the cards of the last six tricks only, over
``exit.pt``, the bundled bidder bidding and the policy playing the earlier cards;
``tricks=N`` sets how many, ``bid_model=policy`` lets the policy bid), ``search:bidder``
(a bidder for heuristic-v1's card play: ``compose:bid=search:bidder,play=heuristic-v1``; see
PRESETS),
``search:worlds=64,endgame=4,model=PATH`` (any setting over the preset).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_agents.search.beliefs import Beliefs, resample, seat_models
from fourhundred_agents.search.choice import choose
from fourhundred_agents.search.endgame import LEAF_PATTERNS, solve
from fourhundred_agents.search.policy_playout import NetRunner, PolicyPlayout
from fourhundred_agents.search.settings import (
    DEFAULT_MODEL,
    PRESETS,
    SCRIPTED_MODELS,
    SearchSettings,
)
from fourhundred_agents.search.values import pattern_values, playout_values, team_value
from fourhundred_agents.value.matchwin import MatchWin, matchwin_path, rule_diff, same_game
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import ConfigError
from fourhundred_env.observation import encode_observation
from fourhundred_env.registry import register_agent
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, world_state

__all__ = [
    "DEFAULT_MODEL",
    "MAX_DEALS",
    "PRESETS",
    "SCRIPTED_MODELS",
    "SearchAgent",
    "SearchSettings",
    "pattern_values",
    "playout_values",
    "resample",
    "team_value",
]


# -- the agent --------------------------------------------------------------------------------
MAX_DEALS = 1 << 16
"""Candidate deals weighted at once: views are searched in chunks of MAX_DEALS // pool (the
worlds of a view do not depend on the views beside it, so chunking changes nothing but the
memory: a batch of 7,168 bids at 8,192 deals each would need 190 GB at once)."""


def _chunks(rows: np.ndarray, pool: int):
    """Yields `rows` in consecutive pieces of at most MAX_DEALS // pool (at least 1)."""
    step = max(1, MAX_DEALS // pool)
    for lo in range(0, rows.size, step):
        yield rows[lo : lo + step]


OutcomeValues = Callable[[State, State, np.ndarray], np.ndarray]
"""(the n worlds before the action, the same played to the hand's end, (n,) the seat
valued) -> (n,) values."""


class SearchAgent(Agent):
    """See the module docstring."""

    name = "search"

    def __init__(self, rules: Rules | None = None, seed: int = 0,
                 settings: SearchSettings | None = None) -> None:  # fmt: skip
        super().__init__(rules, seed)
        self.settings = settings if settings is not None else SearchSettings()
        c = self.settings.resolved()
        self.worlds = int(c["worlds"])
        self.candidates = int(c["candidates"]) if c["weighting"] == "policy" else self.worlds
        self.weighted = c["weighting"] == "policy"
        self.epsilon = float(c["epsilon"])
        self.endgame = int(c["endgame"])
        self.search_bids = bool(c["bids"])
        self.bid_candidates = int(c["bid_candidates"])
        self.top_actions = int(c["top_actions"]) or NUM_CARDS
        self.tricks = int(c["tricks"])
        self.margin = float(c["margin"])
        self.confidence = float(c["confidence"])
        self.bid_worlds = int(c["bid_worlds"])
        self.bid_pool = max(int(c["candidates"]) * self.bid_worlds // self.worlds, self.bid_worlds)
        if not self.weighted:
            self.bid_pool = self.bid_worlds
        self.time_per_move = float(c["time_per_move"])
        self.points = self.settings.value == "points"
        self.per_point = float(c["per_point"])
        names = str(c["models"]).split("+")
        if not self.weighted and self.settings.models is None:
            names = ["policy"]  # the preset's models need weights: uniform worlds go without
        self.seat_models = seat_models(names, str(c["own"]))
        if self.seat_models.modelled and not self.weighted:
            raise ConfigError(f"models={c['models']!r} needs weighting=policy")
        self._models: np.ndarray | None = None
        self.engine = Engine(self.rules)
        from fourhundred_agents.neural.checkpoint import (  # torch only when made
            CheckpointError,
            load_policy,
            require_card_player,
        )

        self.model = str(c["model"])
        net, trained, _ = load_policy(self.model)
        card_net = require_card_player(net, self.model)
        self._other_rules: CheckpointError | None = None
        if not same_game(trained, self.rules):
            self._other_rules = CheckpointError(
                f"checkpoint {self.model!r} was trained under other rules: "
                f"(checkpoint, wanted) {rule_diff(trained, self.rules)}"
            )
            # its policy is read at the real table, and in the worlds and play-outs unless
            # every seat is played by a scripted model (models=heuristic-v1,
            # own=heuristic-v1: the bid values of any rules, as the fitted-Q bidder's)
            if np.isfinite(self.seat_models.prior[0]) or self.seat_models.own == 0:
                raise self._other_rules
        symmetric = self.settings.symmetric
        self.runner = NetRunner(card_net, self.settings.dtype, symmetric=symmetric == "all")
        self.prior = self.runner  # the policy at the real table
        if symmetric == "prior":
            self.prior = NetRunner(card_net, self.settings.dtype, symmetric=True)
        self.own_bids = None  # a model that bids with a bidding network: its bid policy
        if card_net is not net:
            from fourhundred_agents.neural.agent import NeuralAgent

            self.own_bids = NeuralAgent(self.model, self.rules, seed, net=net,
                                        symmetric=symmetric != "none")  # fmt: skip
        self.bidder = None  # bids=false: who bids, when not the policy
        if c["bid_model"] not in ("", "policy"):
            if self.search_bids:
                raise ConfigError(
                    f"bid_model={c['bid_model']!r}: the bids are searched; "
                    "expected bids=false with it"
                )
            from fourhundred_agents.neural.agent import NeuralAgent

            self.bidder = NeuralAgent(str(c["bid_model"]), self.rules, seed)
        self.beliefs = Beliefs(self.engine, self.runner, self.key, self.weighted, self.epsilon,
                               self.seat_models)  # fmt: skip
        self.playout = PolicyPlayout(self.runner, self.engine._r)
        self.matchwin = (
            MatchWin(matchwin_path(str(c["matchwin"])))  # points: the estimate is not read
            if self.points
            else MatchWin.for_rules(self.rules, str(c["matchwin"]))
        )
        self.chunk = 8
        self.last_stats: dict[str, Any] = {}
        self.outcome_values: OutcomeValues | None = None
        """When set, what every play-out is worth instead of the match-win estimate (the
        fitted-Q bidder's custom reward, train/bid_q/values.py); views solved by the endgame
        solver have no play-out, so it is refused with endgame > 0 in card play."""

    # -- the policy at the real table --------------------------------------------------------
    def _policy(self, view: SeatView) -> np.ndarray:
        """(K, 66) float64 log-probabilities of the policy at the views (-inf: illegal). Where
        `bid_model` bids, the bids' entries are the card network's (never read)."""
        if self._other_rules is not None:
            raise self._other_rules
        logits, _ = self.prior(encode_observation(view))
        bids = np.flatnonzero(view.phase != Phase.PLAY)
        if self.own_bids is not None and self.bidder is None and bids.size:  # its bid network
            own, _ = self.own_bids.outputs(view.select(bids))
            logits[bids] = own.numpy()
        logits = np.where(view.legal_mask, logits.astype(np.float64), -np.inf)
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    def act(self, view: SeatView) -> np.ndarray:
        """The policy's most likely legal action, replaced where searched (see the module
        docstring) by a better candidate; `last_stats` holds the call's counts."""
        t0 = time.perf_counter()
        deadline = t0 + self.time_per_move * view.size
        logp = self._policy(view)
        actions = np.argmax(logp, axis=1).astype(np.int64)
        playing = view.phase == Phase.PLAY
        if self.bidder is not None and not playing.all():
            bids = np.flatnonzero(~playing)
            actions[bids] = self.bidder.act(view.select(bids))
        # candidate actions: the policy's most likely legal ones
        order = np.argsort(-logp, axis=1, kind="stable")
        legal_n = view.legal_mask.sum(axis=1)
        width = np.minimum(np.where(playing, self.top_actions, self.bid_candidates), legal_n)
        late = 13 - view.num_tricks <= self.tricks
        searched = (width > 1) & (~playing | late)
        self.last_stats = {"decisions": view.size, "searched": 0, "worlds": 0}
        if self.time_per_move <= 0:
            return actions
        groups = ((playing, self.worlds, self.candidates),
                  (~playing & self.search_bids, self.bid_worlds, self.bid_pool))  # fmt: skip
        for sel, worlds, pool in groups:
            every = np.flatnonzero(searched & sel)
            self.last_stats["searched"] += int(every.size)
            for rows in _chunks(every, pool):
                cand = np.full((rows.size, int(width[rows].max())), -1, np.int64)
                for j, k in enumerate(rows):
                    cand[j, : width[k]] = order[k, : width[k]]
                sub = view.select(rows)
                picks, counts = self._worlds(sub, worlds, pool)
                values, mult = self._score(sub, cand, picks, counts, pool, deadline)
                actions[rows] = choose(cand, actions[rows], values, mult, self.margin,
                                   self.confidence)  # fmt: skip
        self.last_stats["seconds"] = time.perf_counter() - t0
        return actions

    def action_values(self, view: SeatView) -> np.ndarray:
        """(K, 66) float64: every legal action's mean value over the worlds of each view
        (weighted by how often each was drawn), -inf where illegal. No time budget: every
        world is scored. Bidding views get `bid_worlds` worlds, card play `worlds`."""
        legal = view.legal_mask
        out = np.full(legal.shape, -np.inf)
        self.last_stats = {"decisions": view.size, "searched": 0, "worlds": 0}
        playing = view.phase == Phase.PLAY
        for sel, worlds, pool in ((playing, self.worlds, self.candidates),
                                  (~playing, self.bid_worlds, self.bid_pool)):  # fmt: skip
            for rows in _chunks(np.flatnonzero(sel & legal.any(axis=1)), pool):
                self._action_values(view, rows, worlds, pool, out)
        return out

    def _action_values(self, view: SeatView, rows: np.ndarray, worlds: int, pool: int,
                       out: np.ndarray) -> None:  # fmt: skip
        """`action_values` of the view's rows `rows`, written into out."""
        cand, values, mult = self._legal_values(view, rows, worlds, pool)
        done = ~np.isnan(values)
        total = np.where(done, values, 0.0) * mult[:, :, None]
        mean = total.sum(axis=1) / np.where(done, mult[:, :, None], 0.0).sum(axis=1)
        ok = cand >= 0
        out[rows[np.nonzero(ok)[0]], cand[ok]] = mean[ok]

    def _legal_values(self, view: SeatView, rows: np.ndarray, worlds: int,
                      pool: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """Every legal action of the view's rows `rows` scored in all their worlds: cand
        (R, A) the actions (-1 past the last), values (R, W, A) and mult (R, W) as `_score`."""
        legal = view.legal_mask[rows]
        n = legal.sum(axis=1)
        cand = np.full((rows.size, int(n.max())), -1, np.int64)
        r, a = np.nonzero(legal)
        cand[r, np.arange(r.size) - np.repeat(np.cumsum(n) - n, n)] = a
        sub = view.select(rows)
        picks, counts = self._worlds(sub, worlds, pool)
        values, mult = self._score(sub, cand, picks, counts, pool, np.inf)
        return cand, values, mult

    def world_values(self, view: SeatView) -> tuple[np.ndarray, np.ndarray]:
        """The values `action_values` averages, world by world: (K, W, 66) float64 every
        legal action's value in each distinct world of each view (NaN where illegal and past
        the view's distinct worlds) and (K, W) float64 how often each world was drawn (0
        past them); W is the larger of `worlds` and `bid_worlds`. No time budget."""
        legal = view.legal_mask
        width = max(self.worlds, self.bid_worlds)
        out = np.full((view.size, width, legal.shape[1]), np.nan)
        weights = np.zeros((view.size, width))
        self.last_stats = {"decisions": view.size, "searched": 0, "worlds": 0}
        playing = view.phase == Phase.PLAY
        for sel, worlds, pool in ((playing, self.worlds, self.candidates),
                                  (~playing, self.bid_worlds, self.bid_pool)):  # fmt: skip
            for rows in _chunks(np.flatnonzero(sel & legal.any(axis=1)), pool):
                cand, values, mult = self._legal_values(view, rows, worlds, pool)
                scored = ~np.isnan(values[:, :, 0])
                j, a = np.nonzero(cand >= 0)
                w = values.shape[1]
                out[rows[j], :w, cand[j, a]] = np.where(scored[j], values[j, :, a], np.nan)
                weights[rows, :w] = np.where(scored, mult, 0.0)
        return out, weights

    # -- worlds ------------------------------------------------------------------------------
    def _worlds(self, view: SeatView, worlds: int, pool: int) -> tuple[np.ndarray, np.ndarray]:
        """The worlds of each view (:meth:`Beliefs.worlds`): picks (K, worlds) numbers among its
        `pool` deals (-1 past the distinct ones) and counts (K, worlds), how often each was
        drawn; the deals are kept for the scoring (`_hands`, `_models`)."""
        drawn = self.beliefs.worlds(view, worlds, pool, self.last_stats)
        self._hands = drawn.hands
        self._models = drawn.models
        return drawn.picks, drawn.counts

    # -- scoring -----------------------------------------------------------------------------
    def _score(self, view: SeatView, cand: np.ndarray, picks: np.ndarray, counts: np.ndarray,
               pool: int, deadline: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """`values` (K, W, A): each candidate action's value in each distinct world (NaN where
        not scored) and mult (K, W) the worlds' counts. Worlds go in chunks until done or
        past the deadline."""
        k, width = cand.shape
        w_max = picks.shape[1]
        values = np.full((k, w_max, width), np.nan)
        mult = counts.astype(np.float64)
        distinct = (picks >= 0).sum(axis=1)
        endgame = (view.phase == Phase.PLAY) & (13 - view.num_tricks <= self.endgame)
        leaves = None
        done = 0
        for start in range(0, int(distinct.max()), self.chunk):
            if start > 0 and time.perf_counter() > deadline:
                break
            stop = start + self.chunk
            rows, slots = np.nonzero(np.arange(start, stop)[None, :] < distinct[:, None])
            slots = slots + start
            world = rows * pool + picks[rows, slots]
            states = world_state(self.engine, view, self._hands[world], rows)
            seats = np.ascontiguousarray(view.seat[rows], np.int64)
            vals = np.full((rows.size, width), np.nan)
            eg = endgame[rows]
            if eg.any() and self.outcome_values is not None:
                raise ConfigError(
                    "a custom value of play-outs with the endgame solver: expected endgame=0"
                )
            if eg.any():
                if leaves is None:
                    leaves = self._leaves(view)
                idx = np.flatnonzero(eg)
                out = np.empty((idx.size, NUM_CARDS))
                nodes = np.empty(idx.size, np.int64)
                solve(states.select(idx).records, seats[idx], rows[idx], leaves, out, nodes)
                c = cand[rows[idx]]
                vals[idx] = np.where(c >= 0, np.take_along_axis(out, np.maximum(c, 0), 1), 0.0)
            po = np.flatnonzero(~eg)
            if po.size:
                c = cand[rows[po]]
                src, a = np.nonzero(c >= 0)
                branch = states.select(po[src])
                start = None if self.outcome_values is None else states.select(po[src])
                self.engine.step(branch, c[src, a], validate=False)
                if self._models is None:
                    self.playout.run(branch)
                else:
                    models = np.ascontiguousarray(self._models[world[po[src]]])
                    self.playout.run(branch, models=models,
                                     scripted=self.seat_models.scripted)  # fmt: skip
                if self.outcome_values is not None:
                    v = self.outcome_values(start, branch, seats[po[src]])
                else:
                    v = np.empty(branch.batch_size)
                    playout_values(branch.records, seats[po[src]], self.points, self.per_point,
                                   *self.matchwin.weights, v)  # fmt: skip
                vals[po] = 0.0
                vals[po[src], a] = v
            values[rows, slots] = vals
            done += rows.size
        self.last_stats["worlds"] += done
        return values, mult

    def _leaves(self, view: SeatView) -> np.ndarray:
        """(K, 16): the value of each made/missed pattern at each view (public facts only)."""
        hands = np.zeros((view.size, 4), np.uint64)
        tables = world_state(self.engine, view, hands)
        out = np.empty((view.size, LEAF_PATTERNS))
        pattern_values(tables.records, np.ascontiguousarray(view.seat, np.int64), self.points,
                       self.per_point, self.engine._r, *self.matchwin.weights, out)  # fmt: skip
        return out


def _search_factory(rules: Rules, seed: int, settings: SearchSettings) -> Agent:
    return SearchAgent(rules, seed, settings)


register_agent(
    "search",
    _search_factory,
    "search over the bundled policy: worlds weighted by the other seats' inferred models "
    "(policy or heuristic-v1), play-outs valued by the match-win estimate, bid search, exact "
    "endgame on request (search, search:strong, search:worlds=N,...); search:fast searches "
    "the cards of the last six tricks only, over exit.pt, and bids with bidder.pt; "
    "search:bidder bids for heuristic-v1's card play "
    "(compose:bid=search:bidder,play=heuristic-v1)",
    settings=SearchSettings,
    positional="preset",
)
