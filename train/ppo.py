"""PPO with action masking for 400, over the batched environments. Read top to bottom.

One update = one rollout of `rollout_steps` steps at `num_tables` tables, then a few epochs
of clipped PPO on the learner's decisions.

Tables come in groups (`selfplay_share`, `heuristic_share`, `snapshot_share`): at self-play
tables all four seats are the learner; at the others the learner holds seats 0 and 2 and the
environment plays seats 1 and 3 with the scripted opponent or a frozen past snapshot of the
learner (the opponent pool), so the policy does not overfit itself. In bidding mode every
table is a `FourHundredBidVectorEnv`: the learner only bids, `play_policy` does the rest.

Credit: every seat has its own stream of decisions at a table. A decision's reward is what
that seat receives (``info["seat_rewards"]``) until its next decision; GAE runs along each
(table, seat) stream. Hands still unfinished when the rollout ends are not learned from:
every rollout starts fresh episodes from envs seeded by (seed, update) (train/seeding.py),
which is what makes ``--resume`` continue a run bit for bit.

Four options serve the self-play run (configs/selfplay.yaml):

- Kickstarting (`teacher`, `kickstart_coef`, `kickstart_decisions`; Schmitt et al. 2018): the
  teacher agent labels every learner decision from that seat's own view, and its
  cross-entropy joins the loss with a weight that falls linearly to zero. The policy reaches
  the teacher's level in a few million decisions instead of learning 400 from random play.
- Oracle critic (`oracle_critic`; PerfectDou, 2022): advantages come from a second value
  network that also sees the other three hands, so where the hidden cards lie no longer
  counts as the policy's doing. It exists only in training checkpoints; the policy reads
  its own observation alone.
- Match bonus (`match_bonus`): the partnership whose hand wins the match gains points, the
  losers lose them, so a bid that wins the match is worth more than its points.
- Rollout values (`rollout_share`, `rollout_coef`; agents/rollout.py): at a share of
  the learner's decisions every legal bid or card is played out to the end of the hand by
  the teacher, and an all-actions policy-gradient term moves the policy towards the actions
  worth most: one step of policy improvement over the teacher, with far less noise than a
  sampled return. With `rollout_team_from`, the learner's own policy later plays its
  partnership's seats in the play-outs (the teacher the opponents'): each step then improves
  on the learner itself, as policy iteration does.
- Weight averaging (`average_from`, `average_every`; SWA, Izmailov et al. 2018): the run's
  policy.pt is the uniform mean of the weights after every `average_every`-th update from
  `average_from` decisions on (torch.optim.swa_utils.AveragedModel). Training goes on from
  the last weights, so the run is the same; only the product is steadier and stronger than
  any one update's weights, which swing from update to update.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from agents.rollout import concat_states, rollout_targets
from fourhundred_env.engine import Engine, State
from fourhundred_env.envs.bidding import FourHundredBidVectorEnv
from fourhundred_env.envs.config import ScoreDistribution
from fourhundred_env.envs.vector import FourHundredVectorEnv
from fourhundred_env.rules import Rules
from train.checkpoint import (
    CheckpointError,
    atomic_save,
    policy_record,
    read_checkpoint,
    save_policy,
)
from train.config import TrainConfig, save_config
from train.network import HIDDEN_HANDS, NetConfig, OracleCritic, PolicyValueNet, masked_logits
from train.seeding import derive_seed

_PARTNER = np.array([2, 3, 0, 1])


@dataclass
class Group:
    """Tables of one kind: rows offset..offset+size of the rollout batch."""

    kind: str  # "selfplay", "scripted", "snapshot", "bidding"
    env: Any
    offset: int
    size: int
    opponent: str | None = None
    obs: dict[str, np.ndarray] = field(default_factory=dict)
    seat: np.ndarray | None = None


@dataclass
class Rollout:
    obs: np.ndarray  # (T, B, OBS) float32
    mask: np.ndarray  # (T, B, 66) bool
    action: np.ndarray  # (T, B) int64
    logp: np.ndarray  # (T, B) float32
    value: np.ndarray  # (T, B) float32
    seat: np.ndarray  # (T, B) int64: acting seat
    seat_rewards: np.ndarray  # (T, B, 4) float32, hand points of every seat (unscaled)
    done: np.ndarray  # (T, B) bool: an episode ended at this step
    thrown_in: np.ndarray  # (T, B) bool
    learner: np.ndarray  # (B, 4) bool: seats whose decisions the learner made
    teacher: np.ndarray | None = None  # (T, B) int64: the teacher's action (kickstarting)
    hidden: np.ndarray | None = None  # (T, B, 3) uint64: other hands, for the oracle critic
    scores_before: np.ndarray | None = None  # (T, B, 4) int32: pre-hand scores (match_bonus)
    target: np.ndarray | None = None  # (T, B) int32: target in force (match_bonus)
    rollout_row: np.ndarray | None = None  # (T, B) int64: row of rollout_q, -1 where none
    rollout_q: np.ndarray | None = None  # (n, 66) float32: action values, -inf illegal
    rollout_own: np.ndarray | None = None  # (n,) int64: the teacher's own action


class Trainer:
    """Holds the network, optimiser, opponent pool and run folder of one training run."""

    def __init__(self, config: TrainConfig, run_dir: Path, resume: bool = False) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.config = config
        self.run_dir = Path(run_dir)
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.rules = Rules.preset(config.rules)
        # stateless but for the rules, as the envs' own: it reads their states (env.state)
        self.engine = Engine(self.rules)
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(derive_seed(config.seed, 0))
        net_config = NetConfig(hidden=config.hidden, layers=config.layers)
        self.net = PolicyValueNet(net_config)
        self.critic = OracleCritic(net_config) if config.oracle_critic else None
        params = list(self.net.parameters())
        if self.critic is not None:
            params += list(self.critic.parameters())
        self.params = params
        self.optimizer = torch.optim.Adam(params, lr=config.learning_rate, eps=1e-5)
        self.average = None
        if config.average_from is not None:
            from torch.optim.swa_utils import AveragedModel

            self.average = AveragedModel(self.net)
        self.update = 0
        self.decisions = 0
        self.pool: list[str] = []
        self.history: list[dict[str, float]] = []
        self.teacher = None
        if config.teacher is not None:
            from agents.registry import make_agent

            self.teacher = make_agent(config.teacher, rules=self.rules, seed=config.seed)
        if resume:
            self._load(self.ckpt_dir / "latest.pt")
        else:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        # on resume too: overrides given then (a longer total_decisions) outlive the next resume
        save_config(config, self.run_dir / "config.yaml")
        self.writer = SummaryWriter(
            str(self.run_dir), purge_step=self.update + 1 if resume else None
        )
        if not resume:
            self.writer.add_text("config", _markdown_table(config.to_dict()), 0)
        self.decisions_per_update = config.num_tables * config.rollout_steps
        self.num_updates = max(1, math.ceil(config.total_decisions / self.decisions_per_update))

    # -- environments -----------------------------------------------------------------------
    def _groups(self) -> list[Group]:
        c = self.config
        scores = ScoreDistribution(low=c.hand_scores_low, high=c.hand_scores_high)
        common = dict(
            rules=self.rules,
            reward="hand_points",
            hand_scores=scores,
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
        if c.mode == "bidding":
            env = FourHundredBidVectorEnv(c.num_tables, seat=0, policy=c.play_policy, **common)
            return [Group("bidding", env, 0, c.num_tables)]
        n_self = round(c.num_tables * c.selfplay_share)
        n_snap = round(c.num_tables * c.snapshot_share)
        n_script = c.num_tables - n_self - n_snap
        rng = np.random.default_rng(derive_seed(c.seed, self.update, 1))
        snapshot = self.pool[rng.integers(len(self.pool))] if self.pool else None
        groups = []
        offset = 0
        for kind, size, opponent in (
            ("selfplay", n_self, None),
            ("scripted", n_script, c.opponent),
            ("snapshot", n_snap, f"neural:{snapshot}" if snapshot else c.opponent),
        ):
            if size == 0:
                continue
            if opponent is None:
                env = FourHundredVectorEnv(size, episode="hand", **common)
            else:
                env = FourHundredVectorEnv(
                    size, episode="hand", learner_seats=(0, 2), opponents=opponent, **common
                )
            groups.append(Group(kind, env, offset, size, opponent))
            offset += size
        return groups

    # -- one rollout ------------------------------------------------------------------------
    def collect(self) -> Rollout:
        c = self.config
        groups = self._groups()
        b, t_steps = c.num_tables, c.rollout_steps
        learner = np.zeros((b, 4), bool)
        for i, g in enumerate(groups):
            g.obs, info = g.env.reset(seed=derive_seed(c.seed, self.update, 2, i))
            g.seat = info["seat"]
            seats = g.env.config.learner_seats
            learner[g.offset : g.offset + g.size, list(seats)] = True
        gen = torch.Generator().manual_seed(derive_seed(c.seed, self.update, 3))
        from fourhundred_env.observation import OBS_SIZE

        r = Rollout(
            obs=np.empty((t_steps, b, OBS_SIZE), np.float32),
            mask=np.empty((t_steps, b, 66), bool),
            action=np.empty((t_steps, b), np.int64),
            logp=np.empty((t_steps, b), np.float32),
            value=np.empty((t_steps, b), np.float32),
            seat=np.empty((t_steps, b), np.int64),
            seat_rewards=np.empty((t_steps, b, 4), np.float32),
            done=np.empty((t_steps, b), bool),
            thrown_in=np.empty((t_steps, b), bool),
            learner=learner,
            teacher=np.empty((t_steps, b), np.int64) if self.teacher is not None else None,
            hidden=np.empty((t_steps, b, 3), np.uint64) if self.critic is not None else None,
        )
        if c.match_bonus > 0:
            r.scores_before = np.empty((t_steps, b, 4), np.int32)
            r.target = np.empty((t_steps, b), np.int32)
        pick = np.random.default_rng(derive_seed(c.seed, self.update, 5))
        to_label: list[tuple[int, np.ndarray, State]] = []  # (step, tables, their states)
        for t in range(t_steps):
            for g in groups:
                rows = slice(g.offset, g.offset + g.size)
                r.obs[t, rows] = g.obs["observation"]
                r.mask[t, rows] = g.obs["action_mask"]
                r.seat[t, rows] = g.seat
                if r.teacher is not None:
                    r.teacher[t, rows] = self._teach(g)
                if r.hidden is not None:
                    r.hidden[t, rows] = _other_hands(g.env.state, g.seat)
                if r.scores_before is not None:
                    r.scores_before[t, rows] = g.env.state.scores_before
                    r.target[t, rows] = g.env.state.target
                if c.rollout_share > 0:
                    state = g.env.state
                    choice = r.mask[t, rows].sum(1) > 1  # a bid or a card, with a choice
                    mine = r.learner[np.arange(g.offset, g.offset + g.size), g.seat]
                    local = np.flatnonzero(choice & mine & (pick.random(g.size) < c.rollout_share))
                    if local.size:
                        to_label.append((t, g.offset + local, state.select(local)))
            with torch.no_grad():
                logits, value = self.net(torch.from_numpy(r.obs[t]))
                if r.hidden is not None:
                    value = self.critic(torch.from_numpy(r.obs[t]), _unpack(r.hidden[t]))
                logp_all = torch.log_softmax(masked_logits(logits, torch.from_numpy(r.mask[t])), -1)
                action = torch.multinomial(logp_all.exp(), 1, generator=gen).squeeze(1)
            r.action[t] = action.numpy()
            r.logp[t] = logp_all.gather(1, action[:, None]).squeeze(1).numpy()
            r.value[t] = value.numpy()
            for g in groups:
                rows = slice(g.offset, g.offset + g.size)
                g.obs, _, term, trunc, info = g.env.step(r.action[t, rows])
                g.seat = info["seat"]
                r.seat_rewards[t, rows] = info["seat_rewards"]
                r.done[t, rows] = term | trunc
                r.thrown_in[t, rows] = info.get("thrown_in", np.zeros(g.size, bool))
        for g in groups:
            g.env.close()
        if c.rollout_share > 0:
            self._label(r, to_label)
        return r

    def _label(self, r: Rollout, to_label: list) -> None:
        """Fill r.rollout_* with rollout values (agents/rollout.py) at the chosen steps."""
        r.rollout_row = np.full(r.action.shape, -1, np.int64)
        if not to_label:
            r.rollout_q = np.zeros((0, 66), np.float32)
            r.rollout_own = np.zeros(0, np.int64)
            return
        steps = np.concatenate([np.full(len(rows), t) for t, rows, _ in to_label])
        tables = np.concatenate([rows for _, rows, _ in to_label])
        state = concat_states([s for _, _, s in to_label])
        values, own = [], []
        team = None
        start_team = self.config.rollout_team_from
        if start_team is not None and self.decisions >= start_team:  # policy iteration
            from agents.neural import NeuralAgent

            dtype = getattr(torch, self.config.rollout_team_dtype)
            team = NeuralAgent.from_net(self.net, self.rules, dtype=dtype)
        for start in range(0, len(tables), 4096):  # bounded memory: up to 14 branches each
            part = state.select(slice(start, start + 4096))
            q, o = rollout_targets(self.engine, part, self.teacher, team)
            values.append(q)
            own.append(o)
        r.rollout_row[steps, tables] = np.arange(len(tables))
        r.rollout_q = np.concatenate(values)
        r.rollout_own = np.concatenate(own)

    def _teach(self, g: Group) -> np.ndarray:
        """The teacher's action at each table of a group, from the acting seat's own view."""
        from fourhundred_env.view import seat_view

        return self.teacher.act(seat_view(self.engine, g.env.state))

    def kickstart_weight(self) -> float:
        """The teacher's cross-entropy weight at the current point of the run."""
        c = self.config
        if self.teacher is None or c.kickstart_coef == 0:
            return 0.0
        if c.kickstart_decisions == 0:
            return c.kickstart_coef
        return c.kickstart_coef * max(0.0, 1.0 - self.decisions / c.kickstart_decisions)

    # -- advantages ---------------------------------------------------------------------------
    def advantages(self, r: Rollout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """GAE along each (table, seat) stream: (advantages, returns, valid) of shape (T, B)."""
        c = self.config
        t_steps, b = r.action.shape
        rewards = r.seat_rewards * np.float32(c.reward_scale)
        if c.reward == "team_points":
            rewards = rewards + rewards[:, :, _PARTNER]
        if c.match_bonus > 0:
            rewards = rewards + self.match_bonuses(r) * np.float32(c.reward_scale)
        rows = np.arange(b)
        next_value = np.zeros((b, 4), np.float32)
        next_adv = np.zeros((b, 4), np.float32)
        pending = np.zeros((b, 4), np.float32)
        ended_later = np.zeros(b, bool)
        adv = np.zeros((t_steps, b), np.float32)
        valid = np.zeros((t_steps, b), bool)
        for t in reversed(range(t_steps)):
            d = r.done[t]
            next_value[d] = 0.0
            next_adv[d] = 0.0
            pending[d] = 0.0
            ended_later |= d
            pending += rewards[t]
            s = r.seat[t]
            delta = pending[rows, s] + c.gamma * next_value[rows, s] - r.value[t]
            adv[t] = delta + c.gamma * c.gae_lambda * next_adv[rows, s]
            valid[t] = ended_later & r.learner[rows, s]
            next_value[rows, s] = r.value[t]
            next_adv[rows, s] = adv[t]
            pending[rows, s] = 0.0
        return adv, adv + r.value, valid

    def match_bonuses(self, r: Rollout) -> np.ndarray:
        """(T, B, 4) float32: +match_bonus to the seats whose played hand won the match,
        -match_bonus to the losers, at the step the hand ended; 0 elsewhere."""
        from fourhundred_env.engine import Engine

        out = np.zeros(r.seat_rewards.shape, np.float32)
        ended = r.done & ~r.thrown_in
        if not ended.any():
            return out
        scores = r.scores_before[ended] + r.seat_rewards[ended].astype(np.int32)
        winner, _ = Engine(self.rules).end_of_game(scores, r.target[ended])
        side = np.where(np.arange(4)[None, :] % 2 == winner[:, None], 1.0, -1.0)
        out[ended] = np.where(winner[:, None] >= 0, side, 0.0) * self.config.match_bonus
        return out

    # -- learning -------------------------------------------------------------------------
    def learn(self, r: Rollout) -> dict[str, float]:
        c = self.config
        adv, returns, valid = self.advantages(r)
        idx = np.flatnonzero(valid.reshape(-1))
        obs = torch.from_numpy(r.obs.reshape(-1, r.obs.shape[-1])[idx])
        mask = torch.from_numpy(r.mask.reshape(-1, 66)[idx])
        actions = torch.from_numpy(r.action.reshape(-1)[idx])
        old_logp = torch.from_numpy(r.logp.reshape(-1)[idx])
        old_values = r.value.reshape(-1)[idx]
        advantages = torch.from_numpy(adv.reshape(-1)[idx])
        rets = torch.from_numpy(returns.reshape(-1)[idx])
        hidden = _unpack(r.hidden.reshape(-1, 3)[idx]) if r.hidden is not None else None
        kick = self.kickstart_weight()
        teacher = torch.from_numpy(r.teacher.reshape(-1)[idx]) if kick > 0 else None
        rollout_adv = None
        if r.rollout_row is not None:  # per sample: action values minus their legal mean, or NaN
            q = r.rollout_q
            legal = np.isfinite(q)
            centred = np.where(legal, q - np.where(legal, q, 0).sum(1, keepdims=True)
                               / np.maximum(legal.sum(1, keepdims=True), 1), 0.0)  # fmt: skip
            row = r.rollout_row.reshape(-1)[idx]
            table = np.full((idx.size, 66), np.nan, np.float32)
            table[row >= 0] = centred[row[row >= 0]] * c.reward_scale
            rollout_adv = torch.from_numpy(table)
        if c.anneal_lr:
            frac = 1.0 - self.update / self.num_updates
            self.optimizer.param_groups[0]["lr"] = c.learning_rate * max(frac, 0.0)
        rng = np.random.default_rng(derive_seed(c.seed, self.update, 4))
        n = idx.size
        if n < 2 * c.num_minibatches:  # no finished hands to learn from (a tiny rollout)
            return {"charts/samples": float(n)}
        mb = max(2, n // c.num_minibatches)  # every minibatch full-size: no 1-sample std
        stats: dict[str, list[float]] = defaultdict(list)
        for _ in range(c.update_epochs):
            order = rng.permutation(n)
            for start in range(0, n - mb + 1, mb):  # the remainder (< mb samples) is skipped
                j = torch.from_numpy(order[start : start + mb])
                logits, value = self.net(obs[j])
                logp_all = torch.log_softmax(masked_logits(logits, mask[j]), -1)
                logp = logp_all.gather(1, actions[j, None]).squeeze(1)
                probs = logp_all.exp()
                entropy = -(probs * logp_all.clamp_min(-1e4)).sum(-1).mean()
                log_ratio = logp - old_logp[j]
                ratio = log_ratio.exp()
                a = advantages[j]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(
                    -a * ratio, -a * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef)
                ).mean()
                v_loss = 0.5 * ((value - rets[j]) ** 2).mean()
                if hidden is not None:  # the oracle critic's loss; the net's own head learns too
                    v_loss = v_loss + 0.5 * ((self.critic(obs[j], hidden[j]) - rets[j]) ** 2).mean()
                loss = pg - c.ent_coef * entropy + c.vf_coef * v_loss
                if teacher is not None:
                    teacher_ce = -logp_all.gather(1, teacher[j, None]).clamp_min(-1e4).mean()
                    loss = loss + kick * teacher_ce
                    stats["teacher"].append(float(teacher_ce.detach()))
                    stats["agree"].append(float((logp_all.argmax(-1) == teacher[j]).float().mean()))
                if rollout_adv is not None:
                    qa = rollout_adv[j]
                    has = ~torch.isnan(qa[:, 0])
                    if has.any():  # all-actions policy gradient on the rollout values
                        gain = (probs[has] * qa[has]).sum(-1).mean()
                        loss = loss - c.rollout_coef * gain
                        stats["rollout"].append(float(gain.detach()) / c.reward_scale)
                        chosen = qa[has].gather(1, logp_all[has].argmax(-1, keepdim=True))
                        best = chosen.squeeze(1) >= qa[has].max(-1).values
                        stats["ragree"].append(float(best.float().mean()))
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.params, c.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats["kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clip"].append(float(((ratio - 1).abs() > c.clip_coef).float().mean()))
                stats["policy"].append(float(pg.detach()))
                stats["value"].append(float(v_loss.detach()))
                stats["entropy"].append(float(entropy.detach()))
            if c.target_kl is not None and np.mean(stats["kl"][-(n // mb) :]) > c.target_kl:
                break
        var = float(np.var(returns.reshape(-1)[idx]))
        explained = (
            float("nan")
            if var == 0
            else 1 - float(np.var(returns.reshape(-1)[idx] - old_values)) / var
        )
        out = {
            "losses/policy_loss": float(np.mean(stats["policy"])),
            "losses/value_loss": float(np.mean(stats["value"])),
            "losses/entropy": float(np.mean(stats["entropy"])),
            "losses/approx_kl": float(np.mean(stats["kl"])),
            "losses/clipfrac": float(np.mean(stats["clip"])),
            "losses/explained_variance": explained,
            "charts/learning_rate": float(self.optimizer.param_groups[0]["lr"]),
            "charts/samples": float(n),
        }
        if stats["teacher"]:
            out["losses/teacher_cross_entropy"] = float(np.mean(stats["teacher"]))
            out["charts/teacher_agreement"] = float(np.mean(stats["agree"]))
            out["charts/kickstart_weight"] = kick
        if stats["rollout"]:
            out["losses/rollout_policy_gain"] = float(np.mean(stats["rollout"]))
            out["charts/rollout_best_card_share"] = float(np.mean(stats["ragree"]))
        if r.rollout_q is not None and len(r.rollout_q):
            q = r.rollout_q
            own = q[np.arange(len(q)), r.rollout_own]
            out["charts/rollout_positions"] = float(len(q))
            out["charts/rollout_teacher_gap"] = float((q.max(1) - own).mean())
        return out

    # -- rollout statistics -----------------------------------------------------------------
    @staticmethod
    def rollout_stats(r: Rollout) -> dict[str, float]:
        """Points per hand, bid success and thrown-in rate of the learner's seats."""
        ended = r.done
        hands = int(ended.sum())
        if hands == 0:
            return {}
        thrown = r.thrown_in[ended]
        points = r.seat_rewards[ended]  # (hands, 4)
        learner = np.broadcast_to(r.learner, (*r.done.shape, 4))[ended]
        played = ~thrown
        pts = points[played][learner[played]]
        return {
            "charts/points_per_hand": float(points[learner].mean()),
            "charts/bid_success_rate": float((pts > 0).mean()) if pts.size else float("nan"),
            "charts/thrown_in_rate": float(thrown.mean()),
            "charts/hands": float(hands),
        }

    # -- checkpoints ------------------------------------------------------------------------
    def save(self) -> Path:
        """Write the policy (policy.pt) and the whole training state (latest.pt), atomically."""
        policy_path = self.run_dir / "policy.pt"
        extra = {"update": self.update, "mode": self.config.mode,
                 "play_policy": self.config.play_policy}  # fmt: skip
        last = policy_record(self.net, self.rules, extra)  # what training resumes from
        if self.averaged:
            mean = {**extra, "averaged": self.averaged}
            save_policy(policy_path, self.average.module, self.rules, mean)
        else:
            atomic_save(last, policy_path)
        atomic_save(
            {
                "format": "fourhundred-train-v1",
                "policy": last,
                "average": None if self.average is None else self.average.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "update": self.update,
                "decisions": self.decisions,
                "pool": list(self.pool),
                "critic": None if self.critic is None else self.critic.state_dict(),
                "config": self.config.to_dict(),
            },
            self.ckpt_dir / "latest.pt",
        )
        return policy_path

    @property
    def averaged(self) -> int:
        """How many updates' weights are in the average (0: policy.pt is the last weights)."""
        return 0 if self.average is None else int(self.average.n_averaged)

    def snapshot(self) -> None:
        path = self.ckpt_dir / f"policy_{self.update:05d}.pt"
        save_policy(path, self.net, self.rules, {"update": self.update})
        self.pool = [*self.pool, str(path)][-self.config.pool_size :]

    def _load(self, path: Path) -> None:
        data = read_checkpoint(path)
        if data.get("format") != "fourhundred-train-v1":
            raise CheckpointError(f"{str(path)!r} is a policy, not a training checkpoint to resume")
        self.net.load_state_dict(data["policy"]["state_dict"])
        if (data.get("critic") is None) != (self.critic is None):
            raise CheckpointError(
                f"{str(path)!r} was trained with oracle_critic={data.get('critic') is not None}: "
                f"expected oracle_critic={self.critic is not None} as in this config"
            )
        if self.critic is not None:
            self.critic.load_state_dict(data["critic"])
        self.optimizer.load_state_dict(data["optimizer"])
        if self.average is not None and data.get("average") is not None:
            self.average.load_state_dict(data["average"])  # else averaging starts on this resume
        self.update = int(data["update"])
        self.decisions = int(data["decisions"])
        self.pool = list(data["pool"])

    # -- the loop ---------------------------------------------------------------------------
    def log(self, values: dict[str, float]) -> None:
        for k, v in values.items():
            if not (isinstance(v, float) and math.isnan(v)):
                self.writer.add_scalar(k, v, self.update)
        self.writer.flush()

    def train(
        self, evaluate=None, progress: bool = True, stop_at: int | None = None
    ) -> list[dict[str, float]]:
        """Run the remaining updates; `evaluate(policy_path, update)` -> dict of metrics.

        `stop_at` ends early after that update (as a crash would, but after its checkpoint).
        """
        from tqdm import tqdm

        c = self.config
        bar = tqdm(total=self.num_updates, initial=self.update, unit="update", disable=not progress,
                   desc=f"{c.name} ({c.mode})")  # fmt: skip
        while self.update < self.num_updates:
            start = time.perf_counter()
            rollout = self.collect()
            collect_s = time.perf_counter() - start
            metrics = self.learn(rollout)
            elapsed = time.perf_counter() - start
            self.update += 1
            self.decisions += self.decisions_per_update
            metrics.update(self.rollout_stats(rollout))
            metrics["charts/decisions_per_s"] = self.decisions_per_update / elapsed
            metrics["charts/rollout_decisions_per_s"] = self.decisions_per_update / collect_s
            metrics["charts/decisions"] = float(self.decisions)
            if c.mode == "selfplay" and self.update % c.snapshot_every == 0:
                self.snapshot()
            if (
                self.average is not None
                and self.decisions >= c.average_from
                and self.update % c.average_every == 0
            ):
                self.average.update_parameters(self.net)
                metrics["charts/averaged_policies"] = float(self.averaged)
            last = self.update == self.num_updates
            due = (
                evaluate is not None and c.eval_every and (self.update % c.eval_every == 0 or last)
            )
            if self.update % c.checkpoint_every == 0 or last or due:
                policy_path = self.save()
                if due:
                    metrics.update(evaluate(policy_path, self.update))
            self.log(metrics)
            self.history.append({"update": float(self.update), **metrics})
            bar.set_postfix(
                pts=f"{metrics.get('charts/points_per_hand', float('nan')):.2f}",
                made=f"{metrics.get('charts/bid_success_rate', float('nan')):.2f}",
                dps=f"{metrics['charts/decisions_per_s']:.0f}",
            )
            bar.update(1)
            if stop_at is not None and self.update >= stop_at:
                break
        bar.close()
        self.writer.close()
        return self.history


def _other_hands(state, seat: np.ndarray) -> np.ndarray:
    """(B, 3) uint64: the hands of the right, partner and left seats of `seat` at each table
    (seats relative as in the observation encoder)."""
    rel = (seat.astype(np.intp)[:, None] + np.arange(1, 4)[None, :]) % 4
    return np.take_along_axis(state.hand_set, rel, axis=1)


def _unpack(sets: np.ndarray) -> torch.Tensor:
    """(N, 3) uint64 card sets -> (N, HIDDEN_HANDS) float32 bits."""
    from fourhundred_env.engine import unpack_sets

    bits = unpack_sets(np.ascontiguousarray(sets), 52).reshape(len(sets), HIDDEN_HANDS)
    return torch.from_numpy(bits.astype(np.float32))


def _markdown_table(values: dict[str, Any]) -> str:
    return "| key | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in values.items())
