"""`search`: the policy network improved by search at every decision.

At each decision with a real choice, the seat

1. **deals worlds**: the cards it cannot see, dealt to the other seats uniformly among the deals
   consistent with its view (counts, cards played, shown voids), each world drawn from a hash
   of the position, so a decision never depends on the batch or the order of calls
   (:mod:`agents.search.worlds`);
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
     :mod:`agents.search.policy_playout`), or, once `endgame` tricks or fewer are left, solved
     exactly by alpha-beta over the made/missed contracts (:mod:`agents.search.endgame`);
   - bids (``bids=true``): the rest of the bidding and the whole hand played out the same way;
   and values the outcome by what it does to the match: the match-win estimate of the scores
   after the hand (:mod:`agents.value.matchwin`), 1 or 0 when the hand ends the match
   (``value=points``: the team's points in the hand instead);
4. **plays** the action with the best mean value, unless it beats the policy's own choice by no
   more than `margin` (play-outs are noisy; the policy is a good prior).

The candidate actions are the policy's `top_actions` most likely cards and its
`bid_candidates` most likely bids. Worlds are scored in chunks until all are done or the
time budget (`time_per_move` seconds per decision in the call) is spent: anytime, the best
action so far is returned. The budget only binds on a slow or loaded machine; when it does,
a decision depends on the machine's speed, not only on the game.

Specs: ``search`` (the defaults), ``search:strong`` (more worlds, a deeper endgame, up to 1 s
a move), ``search:bidder`` (a bidder for heuristic-v1's card play:
``compose:bid=search:bidder,play=heuristic-v1``; see PRESETS),
``search:worlds=64,endgame=4,model=PATH`` (any setting over the preset).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agents.draws import view_hash
from agents.protocol import Agent
from agents.scripted.heuristic_bid import (
    HEURISTIC_V1_PARAMS,
    PARAMS_DTYPE,
    HeuristicParams,
    params_record,
)
from agents.search.endgame import LEAF_PATTERNS, solve
from agents.search.policy_playout import NetRunner, PolicyPlayout
from agents.search.worlds import (
    MAX_OBSERVED,
    add_log_likelihood,
    deal_worlds,
    observed_rows,
    seat_log_likelihoods,
)
from agents.value.matchwin import (
    MatchWin,
    first_team_wins,
    matchwin_path,
    rule_diff,
    same_game,
    write_features,
)
from fourhundred_env import kernels as K
from fourhundred_env._jit import U64, helper, kernel
from fourhundred_env.cards import NUM_ACTIONS, NUM_CARDS
from fourhundred_env.configs import check_fields
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.errors import ConfigError
from fourhundred_env.observation import OBS_SIZE, encode_observation
from fourhundred_env.registry import register_agent
from fourhundred_env.rules import Rules
from fourhundred_env.streams import RESAMPLE_SALT
from fourhundred_env.view import SeatView, world_state

DEFAULT_MODEL = str(Path(__file__).parents[1] / "pretrained" / "selfplay.pt")
SCRIPTED_MODELS: dict[str, tuple[HeuristicParams, bool]] = {
    "heuristic-v1": (HEURISTIC_V1_PARAMS, False),
    "heuristic": (HeuristicParams(), False),
    "minbid": (HEURISTIC_V1_PARAMS, True),
}
"""The scripted bots a seat may be modelled as (`models`): heuristic parameters, min_bids."""


@dataclass(frozen=True)
class SearchSettings:
    """``search``, ``search:strong``, ``search:worlds=64,endgame=4`` (settings over a preset)."""

    preset: Literal["default", "strong", "bidder"] = "default"
    """Starting values of every setting left unset (see PRESETS)."""
    model: str = DEFAULT_MODEL
    """Policy checkpoint that plays the play-outs and weights the worlds (a neural: path)."""
    worlds: int | None = None
    """Worlds scored per decision."""
    candidates: int | None = None
    """Deals drawn per decision before weighting and resampling down to `worlds` (at least
    `worlds`; with weighting=uniform, `worlds` deals are drawn)."""
    weighting: Literal["uniform", "policy"] | None = None
    """How worlds are weighted: all alike, or by the policy's likelihood of the others' bids
    and plays."""
    epsilon: float | None = None
    """Share of a uniformly random legal action mixed into the policy's likelihood (a seat
    that does not play like the policy does not rule a world out)."""
    endgame: int | None = None
    """Tricks left (at most) from which card play is solved exactly in every world; 0: never."""
    bids: bool | None = None
    """Search the bids too (False: the policy bids)."""
    bid_candidates: int | None = None
    """Bids searched: the policy's most likely ones."""
    top_actions: int | None = None
    """Cards searched: the policy's most likely ones (0: every legal card)."""
    margin: float | None = None
    """Value (match-win probability, or points with value=points) by which a searched action
    must beat the policy's own choice, on average over the worlds, to be played instead."""
    confidence: float | None = None
    """Standard errors (of the mean difference, world by world) by which a searched action
    must beat the policy's own choice on top of the margin: 0 takes the best mean."""
    bid_worlds: int | None = None
    """Worlds scored per bid (bids are few and decide most of the points)."""
    time_per_move: float | None = None
    """Time budget in seconds per decision (a call with K decisions may take K times it);
    the worlds scored by then decide."""
    value: Literal["match", "points"] = "match"
    """What a play-out is worth: the match-win estimate after the hand, or the team's points."""
    per_point: float | None = None
    """With value=match, added to a play-out's worth per point the team scores in the hand:
    where the bids' match-win chances are about even, the points decide (0: none)."""
    matchwin: str | None = None
    """The match-win estimate's weights (value=match): '' the bundled matchwin.npz (fitted
    on selfplay.pt's play), a file, or a file's name in agents/pretrained
    (``matchwin_h1.npz``, fitted on heuristic-v1's play)."""
    dtype: Literal["auto", "bfloat16", "float32"] = "auto"
    """Precision of the network (auto: bfloat16 where the CPU has it natively)."""
    models: str | None = None
    """Who the other seats may be, joined by '+': `policy` (the network) and the scripted bots
    of SCRIPTED_MODELS (`heuristic-v1`, `heuristic`, `minbid`). With more than one, each
    other seat's model is inferred in every world from the actions it was seen to take (a
    uniform prior over the list), and the play-outs play each seat as its most likely
    model in that world (needs weighting=policy)."""
    own: str | None = None
    """Who plays the searching seat itself in its play-outs: `policy`, or one of the scripted
    bots named in `models`: a search that bids for a scripted card player
    (``compose:bid=search:models=heuristic-v1,own=heuristic-v1,play=heuristic-v1``)."""

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("worlds", "bid_worlds"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise ConfigError(f"{name}={v}: expected at least 1")
        if self.candidates is not None and self.candidates < 1:
            raise ConfigError(f"candidates={self.candidates}: expected at least 1")
        for name in ("endgame", "top_actions"):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= 13:
                raise ConfigError(f"{name}={v}: expected 0 to 13")
        if self.bid_candidates is not None and self.bid_candidates < 1:
            raise ConfigError(f"bid_candidates={self.bid_candidates}: expected at least 1")
        if self.models is not None:
            names = self.models.split("+")
            unknown = [m for m in names if m != "policy" and m not in SCRIPTED_MODELS]
            if unknown or len(set(names)) != len(names):
                raise ConfigError(
                    f"models={self.models!r}: expected distinct names from "
                    f"{', '.join(['policy', *SCRIPTED_MODELS])} joined by '+'"
                )
        if self.epsilon is not None and not 0.0 <= self.epsilon <= 1.0:
            raise ConfigError(f"epsilon={self.epsilon}: expected a probability 0 to 1")
        for name in ("margin", "confidence", "time_per_move", "per_point"):
            v = getattr(self, name)
            if v is not None and not v >= 0:
                why = " (a negative budget is none)" if name == "time_per_move" else ""
                raise ConfigError(f"{name}={v}: expected 0 or more{why}")

    def resolved(self) -> dict[str, Any]:
        """Every setting, the unset ones from the preset."""
        out = dict(PRESETS[self.preset])
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                out[f.name] = v
        out["candidates"] = max(out["candidates"], out["worlds"])
        return out


PRESETS: dict[str, dict[str, Any]] = {
    "default": dict(worlds=32, candidates=128, weighting="policy", epsilon=0.05, endgame=0,
                    bids=True, bid_candidates=4, bid_worlds=64, top_actions=6, margin=0.0,
                    confidence=1.0, time_per_move=0.5, models="policy+heuristic-v1",
                    own="policy", matchwin="", per_point=0.0),
    "strong": dict(worlds=128, candidates=512, weighting="policy", epsilon=0.05, endgame=0,
                   bids=True, bid_candidates=5, bid_worlds=256, top_actions=0, margin=0.0,
                   confidence=1.0, time_per_move=1.0, models="policy+heuristic-v1",
                   own="policy", matchwin="", per_point=0.0),
    "bidder": dict(worlds=32, candidates=512, weighting="policy", epsilon=0.05, endgame=0,
                   bids=True, bid_candidates=14, bid_worlds=512, top_actions=6, margin=0.0,
                   confidence=0.0, time_per_move=30.0, models="heuristic-v1",
                   own="heuristic-v1", matchwin="matchwin_h1.npz", per_point=0.003),
}  # fmt: skip
"""The presets. The other seats are inferred to be the policy or heuristic-v1, bids are
searched, and a searched action replaces the policy's only when it is one standard error
better (confidence=1): on the tuning deals (seed 111, 60 duplicate matches against
heuristic-v1) the models alone won 70.0%, the bid search at one standard error 80.0%, both
83.3%. The exact endgame is off: on the tuning deals of seed 101 it lost strength against
selfplay.pt (70.8% -> 60.8%). See BENCHMARKS.md, "Search bot".

``bidder`` searches every legal bid for a seat whose cards heuristic-v1 plays: the other
seats are taken for heuristic-v1 (their bids weight 8,192 candidate deals, resampled to 512
worlds), every seat of every play-out is played by heuristic-v1, and a bid is valued by the
match-win estimate fitted on heuristic-v1's matches plus 0.003 per point the team scores in
the hand (per_point: 10 points weigh 3 percentage points of match-win chance); the best
mean is bid (confidence=0). The budget of 30 s a decision is there not to bind (a decision
then never depends on the machine). One step of policy improvement over heuristic-v1's
bidding, computed at the table: see BENCHMARKS.md, "Bidding (issue 20)", fourth and fifth
rounds. per_point=0.003 won 58.7% on the tuning deals of seed 9201 against 58.1% without it
(57.4% at 0.005) and turns the bidding report's points per hand from -0.25 to +0.11."""


# -- values of finished play-outs -------------------------------------------------------------
@helper
def team_value(t: np.ndarray, seat: int, points: bool, per_point: float, w1: np.ndarray,
               b1: np.ndarray, w2: np.ndarray, b2: np.ndarray, w3: np.ndarray, b3: float,
               x: np.ndarray, h1: np.ndarray, h2: np.ndarray) -> float:  # fmt: skip
    """What the table record t, its hand over, is worth to `seat`'s team: its points in the
    hand (`points`), else 1 or 0 if the match is over, else the match-win estimate; plus
    `per_point` times its points in the hand."""
    team = seat & 1
    pts = np.float64(t["hand_points"][team] + t["hand_points"][team + 2])
    if points:
        return pts
    if t["phase"] == K.MATCH_OVER:
        return (1.0 if t["winner"] == team else 0.0) + per_point * pts
    dealer = np.int64(t["dealer"])
    write_features(t["scores"], np.int64(t["target"]), dealer, x)
    p = first_team_wins(x, w1, b1, w2, b2, w3, b3, h1, h2)
    return (p if ((dealer + 1) & 1) == team else 1.0 - p) + per_point * pts


@kernel
def playout_values(s: np.ndarray, seats: np.ndarray, points: bool, per_point: float,
                   w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray,
                   w3: np.ndarray, b3: float, out: np.ndarray) -> None:  # fmt: skip
    """out (n,): `team_value` of each finished table of s for seats (n,)."""
    x = np.empty(w1.shape[0], np.float32)
    h1 = np.empty(w1.shape[1], np.float32)
    h2 = np.empty(w2.shape[1], np.float32)
    for j in range(s.shape[0]):
        out[j] = team_value(s[j], seats[j], points, per_point, w1, b1, w2, b2, w3, b3, x, h1, h2)


@kernel
def pattern_values(s: np.ndarray, seats: np.ndarray, points: bool, per_point: float,
                   rules: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray,
                   w3: np.ndarray, b3: float, out: np.ndarray) -> None:  # fmt: skip
    """out (n, 16): for table record j of s (in card play) and seats[j], the value to its team
    of each made/missed pattern of the four contracts (bit s: seat s makes it), as the hand
    would end: the scores, the end of the match and the match-win estimate after it, plus
    `per_point` times the team's points (or those points alone, `points`)."""
    r = rules[0]
    x = np.empty(w1.shape[0], np.float32)
    h1 = np.empty(w1.shape[1], np.float32)
    h2 = np.empty(w2.shape[1], np.float32)
    scores = np.zeros(4, np.int64)
    for j in range(s.shape[0]):
        t = s[j]
        team = np.int64(seats[j]) & 1
        dealer = (np.int64(t["dealer"]) + 1) & 3
        for p in range(LEAF_PATTERNS):
            pts = 0
            for k in range(4):
                before = np.int64(t["scores_before"][k])
                value = K.bid_value(np.int64(t["bids"][k]), before, r)
                made = (p >> k) & 1 == 1 and not t["forfeit"][k]
                delta = value if made else -value
                scores[k] = before + delta
                if (k & 1) == team:
                    pts += delta
            if points:
                out[j, p] = pts
                continue
            winner, target = K.end_of_game(scores, np.int64(t["target"]), r)
            if winner >= 0:
                out[j, p] = (1.0 if winner == team else 0.0) + per_point * pts
            else:
                write_features(scores, target, dealer, x)
                v = first_team_wins(x, w1, b1, w2, b2, w3, b3, h1, h2)
                out[j, p] = (v if ((dealer + 1) & 1) == team else 1.0 - v) + per_point * pts


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


# -- the agent --------------------------------------------------------------------------------
MAX_DEALS = 1 << 16
"""Candidate deals weighted at once: views are searched in chunks of MAX_DEALS // pool (the
worlds of a view do not depend on the views beside it, so chunking changes nothing but the
memory: a batch of 7,168 bids at 8,192 deals each would need 190 GB at once)."""


def _chunks(rows: np.ndarray, pool: int):
    """rows in consecutive pieces of at most MAX_DEALS // pool (at least 1)."""
    step = max(1, MAX_DEALS // pool)
    for lo in range(0, rows.size, step):
        yield rows[lo : lo + step]


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
        scripted = [n for n in names if n != "policy"]
        records = [params_record(*SCRIPTED_MODELS[n]) for n in scripted]
        self.scripted = np.concatenate(records) if records else np.zeros(0, PARAMS_DTYPE)
        # model m of a seat: 0 the policy, 1 + i scripted[i]; log prior of each, in that order
        self.model_prior = np.full(1 + len(scripted), -np.log(len(names)))
        if "policy" not in names:
            self.model_prior[0] = -np.inf
        self.modelled = len(names) > 1 or bool(scripted)
        own = str(c["own"])
        if own != "policy" and own not in scripted:  # names: the models in force
            raise ConfigError(
                f"own={own!r}: expected policy or one of the scripted names in models "
                f"({'+'.join(names)})"
            )
        self.own_model = 0 if own == "policy" else 1 + scripted.index(own)
        if self.modelled and not self.weighted:
            raise ConfigError(f"models={c['models']!r} needs weighting=policy")
        self._models: np.ndarray | None = None
        self.engine = Engine(self.rules)
        from agents.neural.checkpoint import (  # torch only when made
            CheckpointError,
            load_policy,
            require_card_player,
        )

        net, trained, _ = load_policy(self.settings.model)
        require_card_player(net, self.settings.model)
        if not same_game(trained, self.rules):
            raise CheckpointError(
                f"checkpoint {self.settings.model!r} was trained under other rules: "
                f"(checkpoint, wanted) {rule_diff(trained, self.rules)}"
            )
        self.runner = NetRunner(net, self.settings.dtype)
        self.playout = PolicyPlayout(self.runner, self.engine._r)
        self.matchwin = MatchWin(
            matchwin_path(str(c["matchwin"])), rules=None if self.points else self.rules
        )
        self.chunk = 8
        self.last_stats: dict[str, Any] = {}

    # -- the policy at the real table --------------------------------------------------------
    def _policy(self, view: SeatView) -> np.ndarray:
        """(K, 66) float64 log-probabilities of the policy at the views (-inf: illegal)."""
        logits, _ = self.runner(encode_observation(view))
        logits = np.where(view.legal_mask, logits.astype(np.float64), -np.inf)
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))

    def act(self, view: SeatView) -> np.ndarray:
        t0 = time.perf_counter()
        deadline = t0 + self.time_per_move * view.size
        logp = self._policy(view)
        actions = np.argmax(logp, axis=1).astype(np.int64)
        # candidate actions: the policy's most likely legal ones
        order = np.argsort(-logp, axis=1, kind="stable")
        legal_n = view.legal_mask.sum(axis=1)
        playing = view.phase == Phase.PLAY
        width = np.minimum(np.where(playing, self.top_actions, self.bid_candidates), legal_n)
        searched = width > 1
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
                actions[rows] = self._choose(cand, actions[rows], values, mult)
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
        legal = view.legal_mask[rows]
        n = legal.sum(axis=1)
        cand = np.full((rows.size, int(n.max())), -1, np.int64)
        r, a = np.nonzero(legal)
        cand[r, np.arange(r.size) - np.repeat(np.cumsum(n) - n, n)] = a
        sub = view.select(rows)
        picks, counts = self._worlds(sub, worlds, pool)
        values, mult = self._score(sub, cand, picks, counts, pool, np.inf)
        done = ~np.isnan(values)
        total = np.where(done, values, 0.0) * mult[:, :, None]
        mean = total.sum(axis=1) / np.where(done, mult[:, :, None], 0.0).sum(axis=1)
        ok = cand >= 0
        out[rows[np.nonzero(ok)[0]], cand[ok]] = mean[ok]

    def _choose(self, cand: np.ndarray, own: np.ndarray, values: np.ndarray,
                mult: np.ndarray) -> np.ndarray:  # fmt: skip
        """The action of each decision: the candidate with the best mean value over the worlds
        scored, if it beats the policy's own choice (paired world by world) by more than
        `margin` plus `confidence` standard errors; else the policy's own. values (K, W, A),
        NaN for worlds not scored; mult (K, W) the worlds' counts."""
        out = own.copy()
        for j in range(cand.shape[0]):
            done = ~np.isnan(values[j, :, 0])
            if not done.any():
                continue
            v = values[j, done]
            m = mult[j, done]
            mine = int(np.flatnonzero(cand[j] == own[j])[0])
            d = v - v[:, mine : mine + 1]  # (worlds, A): paired differences
            total = m.sum()
            mean = (m[:, None] * d).sum(0) / total
            var = (m[:, None] * (d - mean) ** 2).sum(0) / total
            n_eff = total**2 / (m**2).sum()
            se = np.sqrt(var / max(n_eff - 1.0, 1.0))
            ok = (cand[j] >= 0) & (mean > self.margin + self.confidence * se)
            if ok.any():
                out[j] = cand[j, int(np.argmax(np.where(ok, mean, -np.inf)))]
        return out

    # -- worlds ------------------------------------------------------------------------------
    def _worlds(self, view: SeatView, worlds: int, pool: int) -> tuple[np.ndarray, np.ndarray]:
        """The worlds of each view: picks (K, worlds) numbers among its `pool` deals (-1 past
        the distinct ones) and counts (K, worlds), how often each was drawn."""
        k = view.size
        hands = np.empty((k * pool, 4), np.uint64)
        deal_worlds(view.records, self.key, 0, pool, hands)
        self._hands = hands
        self._models = None
        if not self.weighted:
            picks = np.tile(np.arange(pool, dtype=np.int64), (k, 1))
            return picks, np.ones((k, pool), np.int64)
        rep = np.repeat(np.arange(k), pool)
        states = world_state(self.engine, view, hands, rep)
        n = states.batch_size
        obs = np.empty((n * MAX_OBSERVED, OBS_SIZE), np.float32)
        legal = np.empty(n * MAX_OBSERVED, np.uint64)
        acts = np.empty(n * MAX_OBSERVED, np.int64)
        owners = np.empty(n * MAX_OBSERVED, np.int64)
        actors = np.empty(n * MAX_OBSERVED, np.int64)
        known = np.empty((n * MAX_OBSERVED, self.scripted.shape[0]), np.int64)
        scratch = np.zeros(1, State.DTYPE)
        vscratch = np.zeros(1, SeatView.DTYPE)
        viewer = np.ascontiguousarray(view.seat[rep], np.int64)
        m = observed_rows(states.records, viewer, self.engine._r, scratch, vscratch, obs, legal,
                          acts, owners, actors, self.scripted, known)  # fmt: skip
        logw = np.zeros(n)
        if not m:
            logits = None
        elif np.isfinite(self.model_prior[0]):
            logits = self.runner(obs[:m])[0]
        else:  # no seat can be the policy: its likelihoods are not needed
            logits = np.zeros((m, NUM_ACTIONS), np.float32)
        if self.modelled:
            # each seat's likelihood under each model; a world's weight sums over the models
            # (prior-weighted), and each seat plays as its most likely model there
            loglik = np.zeros((n, 4, self.model_prior.size))
            if m:
                seat_log_likelihoods(logits, legal[:m], acts[:m], owners[:m], actors[:m],
                                     known[:m], self.epsilon, loglik)  # fmt: skip
            joint = loglik + self.model_prior
            top = joint.max(axis=2)
            logw = (top + np.log(np.exp(joint - top[..., None]).sum(axis=2))).sum(axis=1)
            self._models = np.argmax(joint, axis=2).astype(np.int8)  # ties: the first
            self.last_stats["scripted_share"] = float(
                ((self._models > 0).sum() - (self._models[np.arange(n), viewer] > 0).sum())
                / (3 * n)
            )
            self._models[np.arange(n), viewer] = self.own_model
        elif m:
            add_log_likelihood(logits, legal[:m], acts[:m], owners[:m], self.epsilon, logw)
        logw = logw.reshape(k, pool)
        picks = np.empty((k, worlds), np.int64)
        counts = np.empty((k, worlds), np.int64)
        resample(view.records, self.key, logw, worlds, picks, counts)
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        self.last_stats["ess"] = float((w.sum(1) ** 2 / (w**2).sum(1)).mean())
        self.last_stats["distinct"] = float((picks >= 0).sum(1).mean())
        return picks, counts

    # -- scoring -----------------------------------------------------------------------------
    def _score(self, view: SeatView, cand: np.ndarray, picks: np.ndarray, counts: np.ndarray,
               pool: int, deadline: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """values (K, W, A): each candidate action's value in each distinct world (NaN where
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
                self.engine.step(branch, c[src, a], validate=False)
                if self._models is None:
                    self.playout.run(branch)
                else:
                    models = np.ascontiguousarray(self._models[world[po[src]]])
                    self.playout.run(branch, models=models, scripted=self.scripted)
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
    "endgame on request (search, search:strong, search:worlds=N,...); search:bidder bids "
    "for heuristic-v1's card play (compose:bid=search:bidder,play=heuristic-v1)",
    settings=SearchSettings,
    positional="preset",
)
