"""The optional parts of training, one small unit each, beside PPO's clipped loss.

Every option that changes what the learner learns from (configs/selfplay.yaml uses them
all) is an :class:`Objective`. Its hooks say what it needs from the rollout and what it
gives back; the trainer (train/ppo.py) calls them for every enabled objective, in the order
of :func:`make_objectives`, and each does nothing unless overridden:

=============  ==========================================================================
``start``      a rollout begins: allocate this objective's fields of the ``Rollout``
``record``     at every step, for each group of tables, before the learner acts: store
               what it needs from the tables' engine state (``env.state``)
``finish``     the rollout is over
``rewards``    extra points per seat, added to the rewards before GAE
``prepare``    the update's samples are chosen: per-sample tensors for the terms below
``value_loss`` per minibatch: a term added to PPO's value loss (weighted by ``vf_coef``)
``loss``       per minibatch: a term added to PPO's loss
``summary``    once per update: scalars logged beside the means of the terms' scalars
=============  ==========================================================================

The objectives:

- :class:`Kickstart` (`teacher`, `kickstart_coef`, `kickstart_decisions`; Schmitt et al.
  2018): the teacher agent labels every learner decision from that seat's own view, and its
  cross-entropy joins the loss with a weight that falls linearly to zero. The policy reaches
  the teacher's level in a few million decisions instead of learning 400 from random play.
- :class:`OracleValue` (`oracle_critic`; PerfectDou, 2022): advantages come from a second
  value network that also sees the other three hands, so where the hidden cards lie no
  longer counts as the policy's doing. It exists only in training checkpoints; the policy
  reads its own observation alone.
- :class:`MatchBonus` (`match_bonus`): the partnership whose hand wins the match gains
  points, the losers lose them, so a bid that wins the match is worth more than its points.
- :class:`BidReward` (`reward=package.module:function`, mode "bidding"): your own reward
  of a hand, the function of a BidOutcome the fitted-Q bidder takes too
  (train/bid_q/hooks.py), in place of the hand's points and match value.
- :class:`RolloutValues` (`rollout_share`, `rollout_coef`, `rollout_team_from`;
  agents/search/rollout.py): at a share of the learner's decisions every legal bid or card is
  played out to the end of the hand by the teacher, and an all-actions policy-gradient term
  moves the policy towards the actions worth most: one step of policy improvement over the
  teacher, with far less noise than a sampled return. With `rollout_team_from`, the
  learner's own policy later plays its partnership's seats in the play-outs (the teacher the
  opponents'): each step then improves on the learner itself, as policy iteration does.

Weight averaging, :class:`WeightAverage` (`average_from`, `average_every`), is not an
objective: it changes no gradient, only what the run's policy.pt holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fourhundred_agents.search.rollout import rollout_targets
from fourhundred_env.engine import Engine, State, unpack_sets
from fourhundred_env.view import seat_view
from fourhundred_train.config import FIXED_REWARDS
from fourhundred_train.network import HIDDEN_HANDS, OracleCritic, PolicyValueNet
from fourhundred_train.seeding import derive_seed

if TYPE_CHECKING:
    from fourhundred_agents.protocol import Agent
    from fourhundred_train.batch import Rollout
    from fourhundred_train.bid_q.hooks import Reward
    from fourhundred_train.config import TrainConfig

# rollout values are computed this many positions at a time: up to 14 branches each
_ROLLOUT_CHUNK = 4096


@dataclass
class Minibatch:
    """What a term sees of one minibatch of M learner decisions."""

    rows: torch.Tensor
    """(M,) int64: rows of the update's samples (positions in `prepare`'s `index`)."""
    obs: torch.Tensor
    """(M, OBS_SIZE) float32 observations."""
    logp_all: torch.Tensor
    """(M, 66) float32 log-probabilities of every action under the policy being learned
    (illegal actions masked to a very low value)."""
    probs: torch.Tensor
    """(M, 66) float32: ``logp_all.exp()``, the tensor PPO's entropy uses too."""
    returns: torch.Tensor
    """(M,) float32 GAE returns: the value targets."""


@dataclass
class Term:
    """One objective's part of one minibatch's loss."""

    loss: torch.Tensor
    """Scalar tensor added to the loss (to the value loss, when from `value_loss`)."""
    scalars: dict[str, float] = field(default_factory=dict)
    """This minibatch's metrics by TensorBoard name; the update logs their means."""


class Objective:
    """An optional part of training; every hook does nothing unless overridden (see the
    module docstring for when the trainer calls each)."""

    device: torch.device = torch.device("cpu")
    """Where the learner learns (the config's `device`, set by :func:`make_objectives`): the
    per-sample tensors `prepare` keeps go there, as the minibatches do."""

    def start(self, r: Rollout, update: int) -> None:
        """A rollout of update number `update` begins: allocate this objective's fields."""

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Step `t` at the tables `rows` of `r` (their observations and masks are in `r`):
        `state` is those tables' live engine state (copy what must be kept), `seat` (n,)
        int8 the seat to act at each."""

    def finish(self, r: Rollout, decisions: int) -> None:
        """The rollout is over; `decisions` learner decisions were learned from before it."""

    def rewards(self, r: Rollout) -> np.ndarray | None:
        """(T, B, 4) float32 extra points of every seat (before reward_scale), or None."""
        return None

    def prepare(self, r: Rollout, index: np.ndarray, decisions: int) -> None:
        """The update learns from the steps `index` (N,) int64 of r's flattened (T * B)
        steps, after `decisions` learner decisions: keep what the terms need per sample."""

    def value_loss(self, mb: Minibatch) -> Term | None:
        """A term of the value loss at this minibatch, or None."""
        return None

    def loss(self, mb: Minibatch) -> Term | None:
        """A term of the loss at this minibatch, or None."""
        return None

    def summary(self, r: Rollout) -> dict[str, float]:
        """Scalars logged once per update (when it learned from any sample)."""
        return {}


class Kickstart(Objective):
    """Cross-entropy toward a teacher's actions, with a weight that fades out.

    Needs ``r.teacher`` (T, B) int64: the teacher's action at every decision, from the acting
    seat's own view. Labelled whenever there is a teacher, even at weight 0 (rollout values
    alone, or after the fade), as the teacher's every call may draw from its random stream.
    Loss: weight x cross-entropy of the policy to the teacher's action; logs
    ``losses/teacher_cross_entropy``, ``charts/teacher_agreement`` (the policy's argmax is
    the teacher's action) and ``charts/kickstart_weight``.
    """

    def __init__(self, teacher: Agent, engine: Engine, coef: float, fade: int) -> None:
        self.teacher = teacher
        self.engine = engine
        self.coef = coef
        self.fade = fade
        self._weight = 0.0
        self._labels: torch.Tensor | None = None  # (N,) int64, None at weight 0

    def weight(self, decisions: int) -> float:
        """The weight after `decisions` learner decisions: `coef`, falling linearly to 0 at
        `fade` decisions (constant when `fade` is 0)."""
        if self.coef == 0:
            return 0.0
        if self.fade == 0:
            return self.coef
        return self.coef * max(0.0, 1.0 - decisions / self.fade)

    def start(self, r: Rollout, update: int) -> None:
        """Allocates ``r.teacher`` (T, B) int64."""
        r.teacher = np.empty(r.action.shape, np.int64)

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Stores the teacher's action at each table, from the acting seat's own view."""
        r.teacher[t, rows] = self.teacher.act(seat_view(self.engine, state))

    def prepare(self, r: Rollout, index: np.ndarray, decisions: int) -> None:
        """Sets the update's weight and, above 0, keeps the samples' teacher actions."""
        self._weight = self.weight(decisions)
        self._labels = (
            torch.from_numpy(r.teacher.reshape(-1)[index]).to(self.device)
            if self._weight > 0
            else None
        )

    def loss(self, mb: Minibatch) -> Term | None:
        """Weight x the policy's cross-entropy to the teacher's actions (None at weight 0)."""
        if self._labels is None:
            return None
        labels = self._labels[mb.rows]
        cross_entropy = -mb.logp_all.gather(1, labels[:, None]).clamp_min(-1e4).mean()
        term = self._weight * cross_entropy
        agreement = (mb.logp_all.argmax(-1) == labels).float().mean()
        return Term(term, {"losses/teacher_cross_entropy": float(cross_entropy.detach()),
                           "charts/teacher_agreement": float(agreement)})  # fmt: skip

    def summary(self, r: Rollout) -> dict[str, float]:
        """``charts/kickstart_weight``, when the weight was above 0."""
        return {} if self._labels is None else {"charts/kickstart_weight": self._weight}


class OracleValue(Objective):
    """The oracle critic's value loss: the critic sees the other three hands.

    Needs ``r.hidden`` (T, B, 3) uint64: the hands of the right, partner and left seats of
    the acting seat at every step (the trainer's rollout also takes its values, hence the
    advantages, from the critic). Value loss: the critic's squared error to the returns,
    beside the policy network's own value head, which keeps learning (``losses/value_loss``
    is their sum; nothing else is logged).
    """

    def __init__(self, critic: OracleCritic) -> None:
        self.critic = critic
        self._hands: torch.Tensor | None = None  # (N, HIDDEN_HANDS) float32

    def start(self, r: Rollout, update: int) -> None:
        """Allocates ``r.hidden`` (T, B, 3) uint64."""
        r.hidden = np.empty((*r.action.shape, 3), np.uint64)

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Stores the hands of the acting seat's right, partner and left seats."""
        r.hidden[t, rows] = other_hands(state, seat)

    def prepare(self, r: Rollout, index: np.ndarray, decisions: int) -> None:
        """Keeps the samples' hidden hands as (N, HIDDEN_HANDS) float32 bits."""
        self._hands = unpack_hands(r.hidden.reshape(-1, 3)[index]).to(self.device)

    def value_loss(self, mb: Minibatch) -> Term | None:
        """Half the critic's mean squared error to the returns."""
        value = self.critic(mb.obs, self._hands[mb.rows])
        return Term(0.5 * ((value - mb.returns) ** 2).mean())


class MatchBonus(Objective):
    """Points for winning the match, to both seats of the partnership whose hand wins it.

    Needs ``r.scores_before`` (T, B, 4) int32 and ``r.target`` (T, B) int32: the pre-hand
    scores and the target in force at every step. Rewards: `points` to the winners and
    minus `points` to the losers at the step a played hand ends the match.
    """

    def __init__(self, engine: Engine, points: float) -> None:
        self.engine = engine
        self.points = points

    def start(self, r: Rollout, update: int) -> None:
        """Allocates ``r.scores_before`` (T, B, 4) int32 and ``r.target`` (T, B) int32."""
        r.scores_before = np.empty((*r.action.shape, 4), np.int32)
        r.target = np.empty(r.action.shape, np.int32)

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Stores the tables' pre-hand scores and target."""
        r.scores_before[t, rows] = state.scores_before
        r.target[t, rows] = state.target

    def rewards(self, r: Rollout) -> np.ndarray:
        """(T, B, 4) float32: +points to the seats whose played hand won the match,
        -points to the losers, at the step the hand ended; 0 elsewhere."""
        out = np.zeros(r.seat_rewards.shape, np.float32)
        ended = r.done & ~r.thrown_in
        if not ended.any():
            return out
        scores = r.scores_before[ended] + r.seat_rewards[ended].astype(np.int32)
        winner, _ = self.engine.end_of_game(scores, r.target[ended])
        side = np.where(np.arange(4)[None, :] % 2 == winner[:, None], 1.0, -1.0)
        out[ended] = np.where(winner[:, None] >= 0, side, 0.0) * self.points
        return out


def _start_situation(r: Rollout) -> None:
    """Allocates the match situation of each step: ``r.scores_before`` (T, B, 4) int32,
    ``r.target`` (T, B) int32 and ``r.dealer`` (T, B) int8."""
    r.scores_before = np.empty((*r.action.shape, 4), np.int32)
    r.target = np.empty(r.action.shape, np.int32)
    r.dealer = np.empty(r.action.shape, np.int8)


def _record_situation(r: Rollout, t: int, rows: slice, state: State) -> None:
    """Stores the tables' pre-hand scores, target and dealer at step `t`."""
    r.scores_before[t, rows] = state.scores_before
    r.target[t, rows] = state.target
    r.dealer[t, rows] = state.dealer


class MatchValue(Objective):
    """The match-value reward (`match_value_points`): what a hand did to each team's chance
    of winning the match.

    Needs ``r.scores_before`` (T, B, 4), ``r.target`` (T, B) and ``r.dealer`` (T, B): the
    pre-hand scores, target and dealer at every step. At the step a hand ends, each seat gets
    `points` x (V_after - V_before) for its team (agents/value/match_value.py: the match-win
    estimate before the hand and after it, 1 or 0 when the hand ends the match; a hand thrown
    in only passes the deal). Potential-based: over a match the rewards add up to the result
    minus the estimate at the start. With ``pays=False`` (your own reward, :class:`BidReward`,
    which is given the same change) it pays nothing and only logs it.
    """

    def __init__(self, engine: Engine, points: float, pays: bool = True) -> None:
        from fourhundred_agents.value.matchwin import MatchWin

        self.engine = engine
        self.points = points
        self.pays = pays
        self.model = MatchWin.for_rules(engine.rules)

    def start(self, r: Rollout, update: int) -> None:
        """Allocates ``r.scores_before`` (T, B, 4) int32, ``r.target`` (T, B) int32 and
        ``r.dealer`` (T, B) int8."""
        _start_situation(r)

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Stores the tables' pre-hand scores, target and dealer."""
        _record_situation(r, t, rows, state)

    def rewards(self, r: Rollout) -> np.ndarray | None:
        """(T, B, 4) float32: `points` x the change of each seat's team's match-win estimate
        at the step a hand ended; 0 elsewhere (None when it does not pay)."""
        from fourhundred_agents.value.match_value import hand_value_change

        if not self.pays:
            return None
        out = np.zeros(r.seat_rewards.shape, np.float32)
        ended = r.done
        if ended.any():
            change = hand_value_change(
                self.engine, self.model, r.scores_before[ended], r.seat_rewards[ended],
                r.target[ended], r.dealer[ended], ~r.thrown_in[ended],
            )  # fmt: skip
            out[ended] = self.points * change
        return out

    def summary(self, r: Rollout) -> dict[str, float]:
        """``charts/win_change_pp``: the change of the learner's team's match-win estimate per
        hand that ended, in percentage points (what the match-value reward pays, before
        `points` and reward_scale)."""
        from fourhundred_agents.value.match_value import hand_value_change

        ended = r.done
        learner = np.broadcast_to(r.learner, (*r.done.shape, 4))[ended]
        if not learner.any():
            return {}
        change = hand_value_change(
            self.engine, self.model, r.scores_before[ended], r.seat_rewards[ended],
            r.target[ended], r.dealer[ended], ~r.thrown_in[ended],
        )  # fmt: skip
        return {"charts/win_change_pp": float(100 * change[learner].mean())}


class BidReward(Objective):
    """Your own reward of a hand (`reward=package.module:function`, mode "bidding"): the
    function of a BidOutcome that the fitted-Q bidder takes too (train/bid_q/hooks.py).

    Needs ``r.hand_bids`` and ``r.hand_tricks`` (T, B, 4) int8 (how the hand that ended at a
    step ended; the collector copies them from the envs' ``info["bids"]`` and
    ``info["tricks_won"]``), and ``r.scores_before`` (T, B, 4) int32, ``r.target`` (T, B)
    int32 and ``r.dealer`` (T, B) int8 (the hand's pre-hand scores, target and dealer).
    `finish` asks the function once per rollout for every hand that ended and every learner
    seat, the outcome's ``value`` being what the trainer would have paid that seat for the hand
    (`match_value_points` x the change of its team's match-win estimate when > 0, else its
    team's points), and keeps the answers in ``r.bid_reward`` (T, B, 4) float32. Rewards:
    ``r.bid_reward``, in place of the hand's points and match value (the other objectives'
    extras, the match bonus, still join). Logs ``charts/bid_reward_per_hand``, its mean over
    the learner's seats' hands.
    """

    def __init__(self, engine: Engine, reward: tuple[str, Reward], points: float) -> None:
        self.engine = engine
        self.reward = reward
        self.value = _hand_value(engine, points)

    def start(self, r: Rollout, update: int) -> None:
        """Allocates ``r.hand_bids`` and ``r.hand_tricks`` (T, B, 4) int8 and
        ``r.scores_before``, ``r.target`` and ``r.dealer``."""
        r.hand_bids = np.zeros((*r.action.shape, 4), np.int8)
        r.hand_tricks = np.zeros((*r.action.shape, 4), np.int8)
        _start_situation(r)

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Stores the tables' pre-hand scores, target and dealer."""
        _record_situation(r, t, rows, state)

    def finish(self, r: Rollout, decisions: int) -> None:
        """Fills ``r.bid_reward``: the function's reward of every learner seat's hands."""
        from fourhundred_train.bid_q.hooks import hand_outcome, reward_values

        r.bid_reward = np.zeros(r.seat_rewards.shape, np.float32)
        step, table = np.nonzero(r.done)
        k, seat = np.nonzero(r.learner[table])
        if not seat.size:
            return
        step, table = step[k], table[k]
        points = r.seat_rewards[step, table].astype(np.int64)  # the hand's points (the env's)
        scores, target = r.scores_before[step, table], r.target[step, table]
        thrown = r.thrown_in[step, table]
        value = self.value(points, scores, target, r.dealer[step, table], thrown, seat)
        outcome = hand_outcome(self.engine.rules, seat, r.hand_bids[step, table],
                               r.hand_tricks[step, table], points, thrown, scores, target,
                               value)  # fmt: skip
        r.bid_reward[step, table, seat] = reward_values(*self.reward, outcome)

    def rewards(self, r: Rollout) -> np.ndarray:
        """(T, B, 4) float32: ``r.bid_reward``."""
        return r.bid_reward

    def summary(self, r: Rollout) -> dict[str, float]:
        """``charts/bid_reward_per_hand``: the function's mean reward of the learner's seats'
        hands that ended (before reward_scale)."""
        mine = r.done[:, :, None] & r.learner[None]
        if not mine.any():
            return {}
        return {"charts/bid_reward_per_hand": float(r.bid_reward[mine].mean())}


def _hand_value(engine: Engine, points: float):
    """The trainer's own value of hands for the bidding `seat` (n,) of each, as a custom
    reward is given it: `points` x the change of the seat's team's match-win estimate over
    the hand when `points` > 0, else the team's points. The function takes every seat's
    hand points (n, 4), the pre-hand scores (n, 4), target, dealer, thrown_in and seat (n,)."""
    from fourhundred_agents.value.match_value import hand_value_change

    model = None
    if points > 0:
        from fourhundred_agents.value.matchwin import MatchWin

        model = MatchWin.for_rules(engine.rules)

    def value(hand_points: np.ndarray, scores_before: np.ndarray, target: np.ndarray,
              dealer: np.ndarray, thrown_in: np.ndarray, seat: np.ndarray) -> np.ndarray:  # fmt: skip
        n = np.arange(seat.size)
        if model is None:
            team = hand_points[n, seat] + hand_points[n, (seat + 2) % 4]
            return team.astype(np.float64)
        change = hand_value_change(engine, model, scores_before, hand_points, target, dealer,
                                   ~thrown_in)  # fmt: skip
        return points * change[n, seat]

    return value


def _bid_reward_of_playouts(engine: Engine, reward: tuple[str, Reward], points: float):
    """The value of a play-out under your own reward (see
    fourhundred_agents.search.rollout.rollout_values): the function's reward of the hand for
    the acting seat, its outcome's value as :class:`BidReward` gives it."""
    from fourhundred_train.bid_q.hooks import hand_outcome, reward_values

    base = _hand_value(engine, points)

    def value(state: State, table: np.ndarray, branch: State, seat: np.ndarray) -> np.ndarray:
        scores, target = state.scores_before[table], state.target[table]
        v = base(branch.hand_points, scores, target, state.dealer[table], branch.thrown_in,
                 seat.astype(np.int64))  # fmt: skip
        outcome = hand_outcome(engine.rules, seat, branch.bids, branch.tricks_won,
                               branch.hand_points, branch.thrown_in, scores, target, v)  # fmt: skip
        return reward_values(*reward, outcome)

    return value


class RolloutValues(Objective):
    """An all-actions policy gradient on the values of every legal action, played out.

    Needs, at a random share of the learner's decisions with a choice, the table's engine
    state (copied as it is recorded); `finish` plays every legal action out
    (agents/search/rollout.py) and fills ``r.rollout_row`` (T, B) int64 (row of ``r.rollout_q``,
    -1 where none), ``r.rollout_q`` (n, 66) float32 (the values, -inf where illegal) and
    ``r.rollout_own`` (n,) int64 (the teacher's own action). Loss: ``-rollout_coef`` x
    sum over actions of pi(a) x (value - mean legal value), in reward_scale units; logs
    ``losses/rollout_policy_gain`` (in points), ``charts/rollout_best_card_share`` (the
    policy's argmax is a best action), and once per update ``charts/rollout_positions`` and
    ``charts/rollout_teacher_gap`` (best value minus the teacher's own action's).
    """

    def __init__(
        self,
        config: TrainConfig,
        teacher: Agent,
        engine: Engine,
        net: PolicyValueNet,
        reward: tuple[str, Reward] | None = None,
    ) -> None:
        self.teacher = teacher
        self.engine = engine
        self.net = net  # plays the learner's partnership from `team_from` decisions on
        self.seed = config.seed
        self.share = config.rollout_share
        self.coef = config.rollout_coef
        self.reward_scale = config.reward_scale
        self.team_from = config.rollout_team_from
        self.team_dtype = getattr(torch, config.rollout_team_dtype)
        self.value = None  # the team's points; with reward match_value, its match-value change
        if config.reward == "match_value":
            self.value = _match_value_of_playouts(engine, config.match_value_points)
        if reward is not None:  # your own reward: (its name, the function)
            self.value = _bid_reward_of_playouts(engine, reward, config.match_value_points)
        self._pick: np.random.Generator | None = None
        self._positions: list[tuple[int, np.ndarray, State]] = []  # (step, tables, states)
        self._advantages: torch.Tensor | None = None  # (N, 66) float32, NaN rows: no value

    def start(self, r: Rollout, update: int) -> None:
        """Seeds the update's pick of positions (from the run's seed and `update`)."""
        self._pick = np.random.default_rng(derive_seed(self.seed, update, 5))
        self._positions = []

    def record(self, r: Rollout, t: int, rows: slice, state: State, seat: np.ndarray) -> None:
        """Keeps the engine state of a random `share` of the learner's decisions with a
        choice."""
        choice = r.mask[t, rows].sum(1) > 1  # a bid or a card, with a choice
        mine = r.learner[np.arange(rows.start, rows.stop), seat]
        picked = self._pick.random(rows.stop - rows.start) < self.share
        local = np.flatnonzero(choice & mine & picked)
        if local.size:
            self._positions.append((t, rows.start + local, state.select(local)))

    def finish(self, r: Rollout, decisions: int) -> None:
        """Plays every legal action of the kept positions out and fills ``r.rollout_row``,
        ``r.rollout_q`` and ``r.rollout_own``; from `rollout_team_from` decisions on, the
        learner's own policy plays its partnership's seats in the play-outs."""
        r.rollout_row = np.full(r.action.shape, -1, np.int64)
        if not self._positions:
            r.rollout_q = np.zeros((0, 66), np.float32)
            r.rollout_own = np.zeros(0, np.int64)
            return
        steps = np.concatenate([np.full(len(rows), t) for t, rows, _ in self._positions])
        tables = np.concatenate([rows for _, rows, _ in self._positions])
        state = State.concat([s for _, _, s in self._positions])
        team = None
        if self.team_from is not None and decisions >= self.team_from:  # policy iteration
            from fourhundred_agents.neural.agent import NeuralAgent

            team = NeuralAgent.from_net(self.net, self.engine.rules, dtype=self.team_dtype)
        values, own = [], []
        for start in range(0, len(tables), _ROLLOUT_CHUNK):  # bounded memory
            part = state.select(slice(start, start + _ROLLOUT_CHUNK))
            q, o = rollout_targets(self.engine, part, self.teacher, team, self.value)
            values.append(q)
            own.append(o)
        r.rollout_row[steps, tables] = np.arange(len(tables))
        r.rollout_q = np.concatenate(values)
        r.rollout_own = np.concatenate(own)

    def prepare(self, r: Rollout, index: np.ndarray, decisions: int) -> None:
        """Keeps (N, 66) float32 per sample: the action values minus their legal mean, in
        reward_scale units (NaN rows where not played out)."""
        q = r.rollout_q
        legal = np.isfinite(q)
        centred = np.where(legal, q - np.where(legal, q, 0).sum(1, keepdims=True)
                           / np.maximum(legal.sum(1, keepdims=True), 1), 0.0)  # fmt: skip
        row = r.rollout_row.reshape(-1)[index]
        table = np.full((index.size, 66), np.nan, np.float32)
        table[row >= 0] = centred[row[row >= 0]] * self.reward_scale
        self._advantages = torch.from_numpy(table).to(self.device)

    def loss(self, mb: Minibatch) -> Term | None:
        """``-rollout_coef`` x the policy's expected advantage at the played-out samples
        (None when the minibatch has none)."""
        qa = self._advantages[mb.rows]
        has = ~torch.isnan(qa[:, 0])
        if not has.any():
            return None
        gain = (mb.probs[has] * qa[has]).sum(-1).mean()
        term = -self.coef * gain
        chosen = qa[has].gather(1, mb.logp_all[has].argmax(-1, keepdim=True))
        best = chosen.squeeze(1) >= qa[has].max(-1).values
        return Term(term, {"losses/rollout_policy_gain": float(gain.detach()) / self.reward_scale,
                           "charts/rollout_best_card_share": float(best.float().mean())})  # fmt: skip

    def summary(self, r: Rollout) -> dict[str, float]:
        """``charts/rollout_positions`` and ``charts/rollout_teacher_gap`` (none without
        positions)."""
        q = r.rollout_q
        if not len(q):
            return {}
        own = q[np.arange(len(q)), r.rollout_own]
        return {"charts/rollout_positions": float(len(q)),
                "charts/rollout_teacher_gap": float((q.max(1) - own).mean())}  # fmt: skip


def _match_value_of_playouts(engine: Engine, points: float):
    """The value of a play-out under reward match_value (see fourhundred_agents.search.rollout.rollout_values):
    `points` x the acting seat's team's change of match-win estimate over the hand."""
    from fourhundred_agents.value.match_value import hand_value_change
    from fourhundred_agents.value.matchwin import MatchWin

    model = MatchWin.for_rules(engine.rules)

    def value(state: State, table: np.ndarray, branch: State, seat: np.ndarray) -> np.ndarray:
        change = hand_value_change(
            engine, model, state.scores_before[table], branch.hand_points,
            state.target[table], state.dealer[table], ~branch.thrown_in,
        )  # fmt: skip
        return points * change[np.arange(seat.size), seat]

    return value


def make_objectives(
    config: TrainConfig,
    engine: Engine,
    net: PolicyValueNet,
    critic: OracleCritic | None,
    teacher: Agent | None,
    device: torch.device | None = None,
) -> list[Objective]:
    """The objectives `config` enables. Their order is the order of their hooks: the order
    in which they record (and call the shared teacher) and in which their terms join the
    loss, which fixes the rounding of the sums and gradients, hence a run bit for bit.
    `net` is the network the rollouts play (the play-outs of `rollout_team_from` play it),
    on the CPU; `critic` the oracle critic that learns, and `device` (None: the CPU) where
    it does."""
    reward = None  # your own reward, checked before any work: one line if it does not answer
    if config.reward not in FIXED_REWARDS:
        from fourhundred_train.bid_q.hooks import load_reward

        reward = (config.reward, load_reward(config.reward))
    objectives: list[Objective] = []
    if teacher is not None:
        objectives.append(Kickstart(teacher, engine, config.kickstart_coef,
                                    config.kickstart_decisions))  # fmt: skip
    if critic is not None:
        objectives.append(OracleValue(critic))
    if config.match_bonus > 0:
        objectives.append(MatchBonus(engine, config.match_bonus))
    if config.match_value_points > 0:
        objectives.append(MatchValue(engine, config.match_value_points, pays=reward is None))
    if reward is not None:
        objectives.append(BidReward(engine, reward, config.match_value_points))
    if config.rollout_share > 0:
        objectives.append(RolloutValues(config, teacher, engine, net, reward))
    if device is not None:
        for o in objectives:
            o.device = device
    return objectives


class WeightAverage:
    """Weight averaging (`average_from`, `average_every`; SWA, Izmailov et al. 2018).

    The run's policy.pt is the uniform mean of the weights after every `every`-th update
    from `start` decisions on (torch.optim.swa_utils.AveragedModel). Training goes on from
    the last weights, so the run is the same; only the product is steadier and stronger
    than any one update's weights, which swing from update to update.
    """

    def __init__(self, net: PolicyValueNet, start: int, every: int) -> None:
        from torch.optim.swa_utils import AveragedModel

        self.model = AveragedModel(net)
        self.start = start
        self.every = every

    @property
    def count(self) -> int:
        """How many updates' weights are in the mean."""
        return int(self.model.n_averaged)

    @property
    def module(self) -> PolicyValueNet:
        """The network holding the mean weights."""
        return self.model.module

    def after_update(self, net: PolicyValueNet, update: int, decisions: int) -> dict[str, float]:
        """Add `net`'s weights when due after update number `update` (at `decisions`
        learner decisions); returns ``charts/averaged_policies`` then, else nothing."""
        if decisions < self.start or update % self.every != 0:
            return {}
        self.model.update_parameters(net)
        return {"charts/averaged_policies": float(self.count)}

    def state_dict(self) -> dict[str, Any]:
        """The mean and its count, for the training checkpoint."""
        return self.model.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the mean of a training checkpoint."""
        self.model.load_state_dict(state)


def other_hands(state: State, seat: np.ndarray) -> np.ndarray:
    """(B, 3) uint64: the hands of the right, partner and left seats of `seat` (B,) at each
    table (seats relative as in the observation encoder)."""
    rel = (seat.astype(np.intp)[:, None] + np.arange(1, 4)[None, :]) % 4
    return np.take_along_axis(state.hand_set, rel, axis=1)


def unpack_hands(sets: np.ndarray) -> torch.Tensor:
    """(N, 3) uint64 card sets -> (N, HIDDEN_HANDS) float32 bits: the oracle critic's input."""
    bits = unpack_sets(np.ascontiguousarray(sets), 52).reshape(len(sets), HIDDEN_HANDS)
    return torch.from_numpy(bits.astype(np.float32))
