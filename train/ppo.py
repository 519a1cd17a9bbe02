"""PPO with action masking for 400, over the batched environments. Read top to bottom.

`Trainer.train` is the loop. Each update collects a rollout of `rollout_steps` steps at
`num_tables` tables (`collect`), computes GAE advantages on the learner's decisions
(`batch`), runs a few epochs of clipped PPO on them (`learn`), then adds a snapshot to the
opponent pool, checkpoints, evaluates and logs (``losses/*``, ``charts/*``).

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

The optional parts of configs/selfplay.yaml live in train/objectives.py, one unit each, and
join PPO here through their hooks: kickstarting toward a teacher, the oracle critic, the
match bonus, rollout values, and the weight average that policy.pt holds.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from fourhundred_agents.neural.device import device_used, torch_device
from fourhundred_env.engine import Engine
from fourhundred_env.errors import ConfigError, FourHundredError, short
from fourhundred_env.registry import starts_program
from fourhundred_env.rules import Rules
from fourhundred_train.batch import Batch, Group, Rollout
from fourhundred_train.build import build_parts
from fourhundred_train.checkpoint import (
    CheckpointError,
    atomic_save,
    policy_record,
    read_checkpoint,
    save_policy,
)
from fourhundred_train.collect import Collector
from fourhundred_train.config import AGENT_KEYS, TrainConfig, save_config
from fourhundred_train.network import masked_logits
from fourhundred_train.objectives import (
    Kickstart,
    Minibatch,
    Objective,
    Term,
    WeightAverage,
)
from fourhundred_train.seeding import derive_seed

__all__ = ["Batch", "Collector", "Group", "Rollout", "Trainer", "check_agents"]

_PARTNER = np.array([2, 3, 0, 1])
_O = TypeVar("_O", bound=Objective)
Stats = dict[str, list[float]]  # per metric name, its value at each minibatch


class Trainer:
    """One training run: the network (and oracle critic), optimiser, objectives, opponent
    pool and run folder. `train` runs it; ``resume=True`` continues it from latest.pt.
    `overrides` (key: value text, as given on the command line: an `Overrides`) is where a
    bad agent spec is blamed (`check_agents`)."""

    def __init__(self, config: TrainConfig, run_dir: Path, resume: bool = False,
                 overrides: Mapping[str, str] | None = None) -> None:  # fmt: skip
        from torch.utils.tensorboard import SummaryWriter

        c = self.config = config
        self.run_dir = Path(run_dir)
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.rules = Rules.preset(c.rules)
        # stateless but for the rules, as the envs' own: it reads their states (env.state)
        self.engine = Engine(self.rules)
        # where the learner learns; a device this machine lacks is refused before anything
        self.device = torch_device(c.device)
        self.device_used = device_used(c.device, self.device)  # recorded in TensorBoard
        # before the run folder: a bad spec leaves nothing behind
        check_agents(c, self.rules, overrides)
        torch.set_num_threads(c.torch_threads)
        torch.manual_seed(derive_seed(c.seed, 0))  # the networks' initial weights
        self.parts = parts = build_parts(c, self.engine, self.device)
        # the learner's networks, on the device (the rollouts play CPU copies of them)
        self.net, self.critic, self.teacher = parts.net, parts.critic, parts.teacher
        self.objectives = parts.objectives
        self.params = [*self.net.parameters(), *(self.critic.parameters() if self.critic else ())]
        self.optimizer = torch.optim.Adam(self.params, lr=c.learning_rate, eps=1e-5)
        self.average = None
        if c.average_from is not None:
            self.average = WeightAverage(self.net, c.average_from, c.average_every)
        self.collector = Collector(
            c, self.engine, parts.play_net, parts.play_critic, self.objectives
        )
        self.blank = self.collector.blank  # the match fields blanked (match_features: false)
        self.features = self.collector.features  # your bid features (None: none)
        self.rollout_actors = None
        if c.backend == "ray":
            from fourhundred_train.ray_rollouts import RolloutActors

            self.rollout_actors = RolloutActors(c)
        self.update = 0
        self.decisions = 0
        self.pool: list[str] = []
        self.history: list[dict[str, float]] = []
        self.decisions_per_update = c.num_tables * c.rollout_steps
        self.num_updates = max(1, math.ceil(c.total_decisions / self.decisions_per_update))
        if resume:
            self._load(self.ckpt_dir / "latest.pt")
            if self.num_updates < self.update:  # before config.yaml is rewritten with it
                raise ConfigError(
                    f"total_decisions={c.total_decisions:,}: expected at least the "
                    f"{self.decisions:,} decisions this run has done (a resume goes on from them)"
                )
        else:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        # on resume too: overrides given then (a longer total_decisions) outlive the next resume
        save_config(c, self.run_dir / "config.yaml")
        # TensorBoard's step is the number of learner decisions (CleanRL's global_step); a
        # resumed run purges what an interrupted one logged after its checkpoint
        self.writer = SummaryWriter(
            str(self.run_dir), purge_step=self.decisions + 1 if resume else None
        )
        if not resume:
            self.writer.add_text("config", _markdown_table(c.to_dict()), 0)
        # at every start: a resume may learn on another device
        self.writer.add_text("device", self.device_used, self.decisions)

    def objective(self, kind: type[_O]) -> _O | None:
        """The enabled objective of class `kind`, or None."""
        return next((o for o in self.objectives if isinstance(o, kind)), None)

    def kickstart_weight(self) -> float:
        """The teacher's cross-entropy weight at this point of the run (0 without one)."""
        kickstart = self.objective(Kickstart)
        return 0.0 if kickstart is None else kickstart.weight(self.decisions)

    # -- the loop ---------------------------------------------------------------------------
    def train(
        self,
        evaluate: Callable[[Path, int], dict[str, Any]] | None = None,
        progress: bool = True,
        stop_at: int | None = None,
    ) -> list[dict[str, float]]:
        """Run the remaining updates; `evaluate(policy_path, update)` -> dict of metrics.

        `stop_at` ends early after that update (as a crash would, but after its checkpoint).
        Returns the history: every update's logged scalars, with its number.
        """
        from tqdm import tqdm

        c = self.config
        bar = tqdm(total=self.num_updates, initial=self.update, unit="update", disable=not progress,
                   desc=f"{c.name} ({c.mode})")  # fmt: skip
        try:
            while self.update < self.num_updates:
                start = time.perf_counter()
                rollout = self.collect()
                collect_s = time.perf_counter() - start
                batch = self.batch(rollout)
                metrics = self.learn(rollout, batch)
                elapsed = time.perf_counter() - start
                self.update += 1
                self.decisions += self.decisions_per_update
                metrics.update(self.rollout_stats(rollout))
                metrics["charts/decisions_per_s"] = self.decisions_per_update / elapsed
                metrics["charts/rollout_decisions_per_s"] = self.decisions_per_update / collect_s
                metrics["charts/decisions"] = float(self.decisions)
                metrics.update(self._after_update())
                metrics.update(self._checkpoint_and_evaluate(evaluate))
                self.log(metrics)
                _show_progress(bar, metrics)
                if stop_at is not None and self.update >= stop_at:
                    break
        finally:  # a run stopped by an error too: the bar ends before the error's line
            bar.close()
            self.writer.close()
            self.close()
        return self.history

    def resumable(self) -> bool:
        """Whether `--resume` can go on with this run: its checkpoint is written."""
        return (self.ckpt_dir / "latest.pt").is_file()

    def close(self) -> None:
        """Stop the Ray rollout actors, if any (and the Ray instance the run started)."""
        if self.rollout_actors is not None:
            self.rollout_actors.close()
            self.rollout_actors = None

    # -- one rollout ------------------------------------------------------------------------
    def collect(self) -> Rollout:
        """One rollout of this update with the current weights (copied to the CPU first when
        the learner is elsewhere): in this process, or (backend ray) by the rollout actors,
        each playing its part of the tables (train/ray_rollouts.py)."""
        self.parts.sync()
        if self.rollout_actors is not None:
            return self.rollout_actors.collect(
                self.parts.play_net, self.parts.play_critic, self.update, self.decisions,
                self.pool,
            )  # fmt: skip
        return self.collector.collect(self.update, self.decisions, self.pool)

    # -- advantages -------------------------------------------------------------------------
    def rewards(self, r: Rollout) -> np.ndarray:
        """(T, B, 4) float32 rewards of every seat in learning units: its hand points (plus
        its partner's with team_points) and the objectives' extra points, x reward_scale;
        with reward match_value or your own, the objectives' alone (MatchValue, BidReward)."""
        c = self.config
        rewards = r.seat_rewards * np.float32(c.reward_scale)
        if c.reward not in ("team_points", "hand_points"):  # an objective gives all of it
            rewards = np.zeros_like(rewards)
        if c.reward == "team_points":
            rewards = rewards + rewards[:, :, _PARTNER]
        for o in self.objectives:
            extra = o.rewards(r)
            if extra is not None:
                rewards = rewards + extra * np.float32(c.reward_scale)
        return rewards

    def advantages(self, r: Rollout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """GAE along each (table, seat) stream: (advantages, returns, valid) of shape (T, B)."""
        c = self.config
        t_steps, b = r.action.shape
        rewards = self.rewards(r)
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

    def batch(self, r: Rollout) -> Batch:
        """The advantages, and the learner's decisions in hands that ended, flattened; the
        tensors on the learner's device."""
        adv, returns, valid = self.advantages(r)
        idx = np.flatnonzero(valid.reshape(-1))
        device = self.device
        extra = None  # your bid features, as the rollout stored them (not worked out again)
        if r.extra is not None:
            extra = torch.from_numpy(r.extra.reshape(-1, r.extra.shape[-1])[idx]).to(device)
        return Batch(
            index=idx,
            obs=torch.from_numpy(r.obs.reshape(-1, r.obs.shape[-1])[idx]).to(device),
            mask=torch.from_numpy(r.mask.reshape(-1, 66)[idx]).to(device),
            action=torch.from_numpy(r.action.reshape(-1)[idx]).to(device),
            logp=torch.from_numpy(r.logp.reshape(-1)[idx]).to(device),
            value=r.value.reshape(-1)[idx],
            advantage=torch.from_numpy(adv.reshape(-1)[idx]).to(device),
            ret=torch.from_numpy(returns.reshape(-1)[idx]).to(device),
            extra=extra,
        )

    # -- learning ---------------------------------------------------------------------------
    def learn(self, r: Rollout, batch: Batch) -> dict[str, float]:
        """`update_epochs` epochs of clipped PPO with the objectives' terms on `batch`, in
        minibatches; returns the update's losses/* and charts/* scalars."""
        c = self.config
        for o in self.objectives:
            o.prepare(r, batch.index, self.decisions)
        if c.anneal_lr:
            frac = 1.0 - self.update / self.num_updates
            self.optimizer.param_groups[0]["lr"] = c.learning_rate * max(frac, 0.0)
        rng = np.random.default_rng(derive_seed(c.seed, self.update, 4))
        n = batch.index.size
        if n < 2 * c.num_minibatches:  # no finished hands to learn from (a tiny rollout)
            return {"charts/samples": float(n)}
        mb = max(2, n // c.num_minibatches)  # every minibatch full-size: no 1-sample std
        ppo: Stats = defaultdict(list)
        terms: list[Stats] = [defaultdict(list) for _ in self.objectives]
        for _ in range(c.update_epochs):
            order = rng.permutation(n)
            for start in range(0, n - mb + 1, mb):  # the remainder (< mb samples) is skipped
                rows = torch.from_numpy(order[start : start + mb]).to(self.device)
                self._learn_minibatch(batch, rows, ppo, terms)
            if (
                c.target_kl is not None
                and np.mean(ppo["losses/approx_kl"][-(n // mb) :]) > c.target_kl
            ):
                break
        out = {name: float(np.mean(values)) for name, values in ppo.items()}
        out["losses/explained_variance"] = _explained_variance(batch)
        out["charts/learning_rate"] = float(self.optimizer.param_groups[0]["lr"])
        out["charts/samples"] = float(n)
        for o, stats in zip(self.objectives, terms, strict=True):
            out.update({name: float(np.mean(values)) for name, values in stats.items()})
            out.update(o.summary(r))
        return out

    def _learn_minibatch(
        self, batch: Batch, rows: torch.Tensor, ppo: Stats, terms: list[Stats]
    ) -> None:
        """One gradient step on the batch's `rows`: PPO's clipped policy loss, value loss and
        entropy bonus, each objective's terms added in the objectives' order."""
        c = self.config
        obs = batch.obs[rows]
        if batch.extra is None:
            logits, value = self.net(obs)
        else:
            logits, value = self.net(obs, batch.extra[rows])
        logp_all = torch.log_softmax(masked_logits(logits, batch.mask[rows]), -1)
        logp = logp_all.gather(1, batch.action[rows, None]).squeeze(1)
        mb = Minibatch(rows, obs, logp_all, logp_all.exp(), batch.ret[rows])
        entropy = -(mb.probs * logp_all.clamp_min(-1e4)).sum(-1).mean()
        log_ratio = logp - batch.logp[rows]
        ratio = log_ratio.exp()
        a = batch.advantage[rows]
        a = (a - a.mean()) / (a.std() + 1e-8)
        pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef)).mean()
        v_loss = 0.5 * ((value - mb.returns) ** 2).mean()
        for o, stats in zip(self.objectives, terms, strict=True):
            v_loss = _add(v_loss, o.value_loss(mb), stats)
        loss = pg_loss - c.ent_coef * entropy + c.vf_coef * v_loss
        for o, stats in zip(self.objectives, terms, strict=True):
            loss = _add(loss, o.loss(mb), stats)
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, c.max_grad_norm)
        self.optimizer.step()
        ppo["losses/policy_loss"].append(float(pg_loss.detach()))
        ppo["losses/value_loss"].append(float(v_loss.detach()))
        ppo["losses/entropy"].append(float(entropy.detach()))
        with torch.no_grad():
            ppo["losses/approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
            ppo["losses/clipfrac"].append(float(((ratio - 1).abs() > c.clip_coef).float().mean()))

    # -- after an update --------------------------------------------------------------------
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

    def _after_update(self) -> dict[str, float]:
        """Add the weights to the opponent pool and to the weight average when due."""
        c = self.config
        if c.mode == "selfplay" and self.update % c.snapshot_every == 0:
            self.snapshot()
        if self.average is None:
            return {}
        return self.average.after_update(self.net, self.update, self.decisions)

    def _checkpoint_and_evaluate(
        self, evaluate: Callable[[Path, int], dict[str, Any]] | None
    ) -> dict[str, Any]:
        """Checkpoint every `checkpoint_every` updates, at the last and before an evaluation;
        evaluate the policy.pt just written every `eval_every` updates and at the last.
        Returns the evaluation's scalars (eval/*), if any."""
        c = self.config
        last = self.update == self.num_updates
        due = evaluate is not None and c.eval_every and (self.update % c.eval_every == 0 or last)
        if not (self.update % c.checkpoint_every == 0 or last or due):
            return {}
        policy_path = self.save()
        return evaluate(policy_path, self.update) if due else {}

    def log(self, values: dict[str, float]) -> None:
        """The update's scalars to TensorBoard at step `decisions` (NaN left out) and to the
        history."""
        for k, v in values.items():
            if not (isinstance(v, float) and math.isnan(v)):
                self.writer.add_scalar(k, v, self.decisions)
        self.writer.flush()
        self.history.append({"update": float(self.update), **values})

    # -- checkpoints ------------------------------------------------------------------------
    def save(self) -> Path:
        """Write the policy (policy.pt) and the whole training state (latest.pt), atomically."""
        policy_path = self.run_dir / "policy.pt"
        extra = {"update": self.update, "mode": self.config.mode,
                 "play_policy": self.config.play_policy, "reward": self.config.reward,
                 "reward_scale": self.config.reward_scale,
                 "match_value_points": self.config.match_value_points,
                 "blank_fields": list(self.blank)}  # fmt: skip
        if self.features is not None:  # its name and width only: a checkpoint names no code
            extra["features"] = self.features.record()
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
        return 0 if self.average is None else self.average.count

    def snapshot(self) -> None:
        """Freeze the current weights into the opponent pool (the newest `pool_size` kept)."""
        path = self.ckpt_dir / f"policy_{self.update:05d}.pt"
        save_policy(path, self.net, self.rules, {"update": self.update})
        self.pool = [*self.pool, str(path)][-self.config.pool_size :]

    def _load(self, path: Path) -> None:
        """Continue from a training checkpoint (latest.pt) of a run of the same kind, on
        whatever device it was made (its CPU tensors are loaded into the learner's)."""
        data = read_checkpoint(path)
        if data.get("format") != "fourhundred-train-v1":
            raise CheckpointError(f"{str(path)!r} is a policy, not a training checkpoint to resume")
        self._check_features(data["policy"], path)
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
        self.pool = _pool(data["pool"], path)

    def _check_features(self, policy: dict[str, Any], path: Path) -> None:
        """Refuse (CheckpointError, one line) to resume a run whose network reads other bid
        features than this config's `features` (none where it reads some, or another
        function's name or width): the check a checkpoint gets where it is played."""
        from fourhundred_agents.neural.extra_features import recorded_problem

        net = policy.get("net") if isinstance(policy.get("net"), dict) else {}
        extra = policy.get("extra") if isinstance(policy.get("extra"), dict) else {}
        problem = recorded_problem(self.features, extra.get("features"),
                                   int(net.get("extra_inputs", 0)), "its latest.pt", str(path))  # fmt: skip
        if problem is not None:
            raise CheckpointError(
                f"--resume {str(self.run_dir)!r}: {problem} (a run goes on with its own "
                "features, as its config.yaml names them)"
            )


def _pool(pool: Any, path: Path) -> list[str]:
    """latest.pt's opponent pool, each entry played as ``neural:ENTRY``: one that makes that
    spec start a program or import code (``features=``) is refused in one line (CheckpointError),
    as a spec read from any file is (a run folder is data: docs/security.md)."""
    entries = [str(p) for p in pool] if isinstance(pool, list) else None
    if entries is None:
        raise CheckpointError(f"{str(path)!r}: its opponent pool is a {type(pool).__name__}: "
                              "expected a list of snapshot files")  # fmt: skip
    for entry in entries:
        if starts_program(f"neural:{entry}"):
            raise CheckpointError(
                f"{str(path)!r}: its opponent pool names {short(entry)}, which played as "
                "neural:ENTRY starts a program or imports code (features=): expected the run's "
                "own snapshot files (a run folder is data: docs/security.md)"
            )
    return entries


def check_agents(
    config: TrainConfig, rules: Rules, overrides: Mapping[str, str] | None = None
) -> None:
    """Make each agent spec of `config` once (AGENT_KEYS, even the evaluations' when they are
    off: the spec is stored in config.yaml, and `evaluate-run` reads it), so that an unknown
    agent, bad settings or an unreadable checkpoint raise ConfigError naming the key now,
    rather than at the first rollout, after the run folder is made. A spec that `overrides`
    gave (an `Overrides`: key -> value text, with its `source`) is blamed on the override as
    written (``opponent=heuristc (command line): unknown agent ...``)."""
    from fourhundred_agents.registry import make_agent

    given = overrides or {}
    for key in AGENT_KEYS:
        spec = getattr(config, key)
        if spec is None:
            continue
        try:
            make_agent(spec, rules, seed=0).close()
        except FourHundredError as e:  # the message names the spec, or its checkpoint's file
            if key in given:
                where = getattr(given, "source", "command line")
                raise ConfigError(f"{key}={given[key]} ({where}): {e}") from None
            raise ConfigError(f"{key}: {e}" if spec in str(e) else f"{key}={spec!r}: {e}") from None


def _add(total: torch.Tensor, term: Term | None, stats: Stats) -> torch.Tensor:
    """`total` plus the term's loss, its scalars appended to `stats` (no term: `total`).

    Terms are added one at a time, in the objectives' order: the autograd graph, hence the
    rounding of the gradients, follows the order in which the sum was built."""
    if term is None:
        return total
    for name, value in term.scalars.items():
        stats[name].append(value)
    return total + term.loss


def _explained_variance(batch: Batch) -> float:
    """1 - Var(returns - values) / Var(returns) of the values at collection (NaN if flat)."""
    returns = batch.ret.cpu().numpy()
    var = float(np.var(returns))
    return float("nan") if var == 0 else 1 - float(np.var(returns - batch.value)) / var


def _show_progress(bar: Any, metrics: dict[str, float]) -> None:
    """One update done on the progress bar, with its points, bid success and speed."""
    bar.set_postfix(
        pts=f"{metrics.get('charts/points_per_hand', float('nan')):.2f}",
        made=f"{metrics.get('charts/bid_success_rate', float('nan')):.2f}",
        dps=f"{metrics['charts/decisions_per_s']:.0f}",
    )
    bar.update(1)


def _markdown_table(values: dict[str, Any]) -> str:
    return "| key | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in values.items())
