"""The rollouts of a PPO update, played: see :class:`Collector`."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from fourhundred_agents.neural.agent import MATCH_FIELDS, blank_fields
from fourhundred_env.engine import Engine
from fourhundred_env.envs.bidding import FourHundredBidVectorEnv
from fourhundred_env.envs.config import ScoreDistribution
from fourhundred_env.envs.vector import FourHundredVectorEnv
from fourhundred_env.observation import OBS_SIZE
from fourhundred_env.view import seat_view
from fourhundred_train.batch import Group, Rollout
from fourhundred_train.config import TrainConfig
from fourhundred_train.network import OracleCritic, PolicyValueNet, masked_logits
from fourhundred_train.objectives import (
    Objective,
    unpack_hands,
)
from fourhundred_train.seeding import derive_seed


class Collector:
    """Plays the rollouts: the tables of an update, the network (and oracle critic) sampling
    the learner's decisions, the objectives recording what they need. The trainer owns one
    (backend local); each Ray rollout actor owns its own, with a copy of the weights, and
    plays part `part` of `parts` of every group of tables (train/ray_rollouts.py). With one
    part the seeds are the run's own (train/seeding.py); with several, each part's streams
    have the part's number appended, so no two parts deal or draw alike."""

    def __init__(
        self,
        config: TrainConfig,
        engine: Engine,
        net: PolicyValueNet,
        critic: OracleCritic | None,
        objectives: list[Objective],
        part: int = 0,
        parts: int = 1,
    ) -> None:
        self.config = config
        self.rules = engine.rules
        self.engine = engine
        self.net = net
        self.critic = critic
        self.objectives = objectives
        self.part = part
        self.parts = parts
        self.update = 0
        self.blank = () if config.match_features else MATCH_FIELDS
        # your bid features (config features; None: none): worked out at every step from the
        # acting seat's view and stored with the rollout, so the update reads them back
        self.features = getattr(net, "extra_features", None)

    # -- environments -----------------------------------------------------------------------
    def _groups(self, update: int, pool: list[str]) -> list[Group]:
        """This update's tables (this part's share of each group): new envs, the snapshot
        opponent drawn from the pool."""
        c = self.config
        scores = ScoreDistribution(low=c.hand_scores_low, high=c.hand_scores_high)
        common = dict(
            rules=self.rules,
            reward="hand_points",
            hand_scores=scores,
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
        if c.mode == "bidding" and c.learner_partnership:
            size = self._share(c.num_tables)
            env = FourHundredVectorEnv(size, episode="hand", learner_seats=(0, 2),
                                       learner_decides="bids", opponents=c.play_policy, **common)  # fmt: skip
            return [Group("bidding", env, 0, size)]
        if c.mode == "bidding":
            size = self._share(c.num_tables)
            env = FourHundredBidVectorEnv(size, seat=0, policy=c.play_policy, **common)
            return [Group("bidding", env, 0, size)]
        n_self = round(c.num_tables * c.selfplay_share)
        n_snap = round(c.num_tables * c.snapshot_share)
        n_script = c.num_tables - n_self - n_snap
        rng = np.random.default_rng(derive_seed(c.seed, update, 1))
        snapshot = pool[rng.integers(len(pool))] if pool else None
        groups = []
        offset = 0
        start = 0  # where the group starts among the run's tables (all parts)
        for kind, size, opponent in (
            ("selfplay", n_self, None),
            ("scripted", n_script, c.opponent),
            ("snapshot", n_snap, f"neural:{snapshot}" if snapshot else c.opponent),
        ):
            size, start = self._share(size, start), start + size
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

    def _share(self, size: int, start: int = 0) -> int:
        """This part's tables of a group of `size` whose tables are numbers start.. of the
        run's: those whose number is the part's modulo `parts` (each part gets one of every
        `parts` tables of each group, and num_tables // parts or one more in all)."""
        return len(range(start + (self.part - start) % self.parts, start + size, self.parts))

    def _seed(self, *coords: int) -> int:
        """The seed of a stream of this update (train/seeding.py); with several parts, each
        part's own (the part's number appended to the coordinates)."""
        return derive_seed(*coords) if self.parts == 1 else derive_seed(*coords, 1000 + self.part)

    # -- one rollout ------------------------------------------------------------------------
    def collect(self, update: int, decisions: int, pool: list[str]) -> Rollout:
        """One rollout of update `update`: every table reset with this update's seeds and
        stepped `rollout_steps` times, the network sampling each learner decision (the envs
        play the others'); the objectives record what they need at every step. `decisions`:
        the learner's so far; `pool`: the snapshots the snapshot tables may play."""
        c = self.config
        self.update = update
        groups = self._groups(update, pool)
        r = self._start_rollout(groups)
        gen = torch.Generator().manual_seed(self._seed(c.seed, update, 3))
        for t in range(c.rollout_steps):
            self._observe(r, t, groups)
            self._act(r, t, gen)
            self._step(r, t, groups)
        for g in groups:
            g.env.close()
        for o in self.objectives:
            o.finish(r, decisions)
        return r

    def _start_rollout(self, groups: list[Group]) -> Rollout:
        """Reset every group's tables with this update's seeds; an empty rollout, with the
        objectives' fields allocated."""
        c = self.config
        b, t_steps = sum(g.size for g in groups), c.rollout_steps
        learner = np.zeros((b, 4), bool)
        for i, g in enumerate(groups):
            g.obs, info = g.env.reset(seed=self._seed(c.seed, self.update, 2, i))
            g.seat = info["seat"]
            learner[g.offset : g.offset + g.size, list(g.env.config.learner_seats)] = True
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
        )
        if self.features is not None:
            r.extra = np.empty((t_steps, b, self.features.size), np.float32)
        for o in self.objectives:
            o.start(r, self.update)
        return r

    def _observe(self, r: Rollout, t: int, groups: list[Group]) -> None:
        """Step t's observations, masks and acting seats, and what the objectives record."""
        for g in groups:
            rows = slice(g.offset, g.offset + g.size)
            r.obs[t, rows] = g.obs["observation"]
            blank_fields(r.obs[t, rows], self.blank)
            r.mask[t, rows] = g.obs["action_mask"]
            r.seat[t, rows] = g.seat
            if r.extra is not None:  # the bidding seat's own view (the observation's)
                r.extra[t, rows] = self.features(seat_view(self.engine, g.env.state))
            for o in self.objectives:
                o.record(r, t, rows, g.env.state, g.seat)

    def _act(self, r: Rollout, t: int, gen: torch.Generator) -> None:
        """Step t's actions, sampled from the network, with their log-probabilities and the
        value estimates (the oracle critic's when there is one)."""
        with torch.no_grad():
            obs = torch.from_numpy(r.obs[t])
            if r.extra is None:
                logits, value = self.net(obs)
            else:
                logits, value = self.net(obs, torch.from_numpy(r.extra[t]))
            if self.critic is not None:
                value = self.critic(obs, unpack_hands(r.hidden[t]))
            logp_all = torch.log_softmax(masked_logits(logits, torch.from_numpy(r.mask[t])), -1)
            action = torch.multinomial(logp_all.exp(), 1, generator=gen).squeeze(1)
        r.action[t] = action.numpy()
        r.logp[t] = logp_all.gather(1, action[:, None]).squeeze(1).numpy()
        r.value[t] = value.numpy()

    def _step(self, r: Rollout, t: int, groups: list[Group]) -> None:
        """Play step t's actions: every seat's rewards, and which episodes ended."""
        for g in groups:
            rows = slice(g.offset, g.offset + g.size)
            g.obs, _, term, trunc, info = g.env.step(r.action[t, rows])
            g.seat = info["seat"]
            r.seat_rewards[t, rows] = info["seat_rewards"]
            r.done[t, rows] = term | trunc
            r.thrown_in[t, rows] = info.get("thrown_in", np.zeros(g.size, bool))
            if r.hand_bids is not None:  # how the hands ended, for your own reward
                r.hand_bids[t, rows] = info.get("bids", 0)
                r.hand_tricks[t, rows] = info.get("tricks_won", 0)
