"""Self-play rollouts on Ray actors (``backend: ray`` in the training config, the ``ray``
extra).

Each of `rollout_actors` actors holds a :class:`~fourhundred_train.ppo.Collector` of its own: the envs, a
copy of the network (and oracle critic), the teacher and the objectives, on one CPU and one
torch thread. Every update the learner puts its weights in Ray's object store once (one
broadcast, read by every actor), asks each actor for its part of the rollout, waits for all
of them and joins the parts in actor order into one :class:`~fourhundred_train.ppo.Rollout`, which it
learns from as from a local one. The learner and the actors take turns (synchronous PPO):
the rollouts stay on-policy, and the learner does not collect while the actors do.

What is reproducible:

- one actor plays exactly the local rollout (the same seeds, the same tables in the same
  order, the same weights): the run is the local run bit for bit, when the learner's torch
  also uses one thread (``torch_threads: 1``; with more, torch may round the learner's own
  forward passes differently from the actor's one-thread ones);
- with N actors, actor i plays the tables whose number is i modulo N of every group, with
  the seeds of the local run's streams with its number appended: a run is fixed by its seed
  and N, bit for bit whatever the timing, the machine's load or the nodes the actors land
  on (the learner always waits for every part and joins them in order);
- runs with different N differ (other deals and draws per table, other batch shapes in the
  network), as runs with different seeds do: N is part of a run's recipe, like num_tables.

The snapshot pool is read by the actors from the run folder: on a cluster that folder must
be on a file system every node sees. The run's `--resume` works as with local rollouts
(the actors are started afresh and get the weights at the next update).
"""

from __future__ import annotations

import logging
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fourhundred_env.engine import Engine
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_train.build import build_parts
from fourhundred_train.config import TrainConfig

if TYPE_CHECKING:
    from fourhundred_train.batch import Rollout

__all__ = ["RolloutActors", "RolloutWorker", "join_rollouts"]


class RolloutWorker:
    """What one Ray actor runs: its part of every update's tables (see the module docstring)."""

    def __init__(self, config: TrainConfig, part: int, parts: int) -> None:
        from fourhundred_train.collect import Collector

        torch.set_num_threads(1)  # one CPU per actor: the actors are the parallelism
        rules = Rules.preset(config.rules)
        engine = Engine(rules)
        # unseeded: the initial weights are never used, the learner's are loaded every update
        built = build_parts(config, engine)
        self.net, self.critic = built.net, built.critic
        self.collector = Collector(
            config, engine, self.net, self.critic, built.objectives, part, parts
        )

    def collect(
        self, weights: dict[str, Any], update: int, decisions: int, pool: list[str]
    ) -> Rollout:
        """Load the learner's weights, then play this part of update `update`."""
        self.net.load_state_dict(weights["net"])
        if self.critic is not None:
            self.critic.load_state_dict(weights["critic"])
        return self.collector.collect(update, decisions, pool)


def start_ray(address: str | None, cpus: int) -> bool:
    """Join the Ray cluster at `address`, or start a local instance of `cpus` CPUs (None),
    unless Ray is running here already; True if this call started it (to shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    level = logging.ERROR if address is None else logging.WARNING
    kwargs: dict[str, Any] = dict(include_dashboard=False, logging_level=level)
    if address is None:
        kwargs["num_cpus"] = cpus
    else:  # fail fast where nothing listens (Ray retries for a minute or more)
        from fourhundred_tournament.ray_backend import probe_address

        probe_address(address)
    ray.init(address=address, **kwargs)
    return True


class RolloutActors:
    """The learner's side: the Ray instance and the actors, and each update's rollout."""

    def __init__(self, config: TrainConfig) -> None:
        try:
            import ray
        except ImportError:
            raise FourHundredError(
                "backend 'ray' needs Ray: expected it installed (pip install 'fourhundred[ray]')"
            ) from None
        self.ray = ray
        self.started = start_ray(config.ray_address, config.rollout_actors)
        actor = ray.remote(num_cpus=1)(RolloutWorker)
        n = config.rollout_actors
        self.actors = [actor.remote(config, i, n) for i in range(n)]

    def collect(self, net: torch.nn.Module, critic: torch.nn.Module | None, update: int,
                decisions: int, pool: list[str]) -> Rollout:  # fmt: skip
        """Update `update`'s rollout: the weights broadcast, every part, joined."""
        weights = {"net": net.state_dict()}
        if critic is not None:
            weights["critic"] = critic.state_dict()
        ref = self.ray.put(weights)  # one copy in the object store, read by every actor
        parts = self.ray.get(
            [a.collect.remote(ref, update, decisions, list(pool))
             for a in self.actors]
        )  # fmt: skip
        return join_rollouts(parts)

    def close(self) -> None:
        """Kills the actors, and shuts Ray down if this object started it."""
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
        if self.started:
            self.ray.shutdown()
            self.started = False


_ROWS = ("rollout_q", "rollout_own")  # indexed by rollout_row: rows of all parts in turn


def join_rollouts(parts: list[Rollout]) -> Rollout:
    """One rollout of the parts' tables side by side (the batch axis: the parts in order);
    the rollout-values rows renumbered so that each part's `rollout_row` still points at its
    own rows of `rollout_q`."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    joined: dict[str, Any] = {}
    for f in fields(first):
        values = [getattr(p, f.name) for p in parts]
        if values[0] is None:
            joined[f.name] = None
        elif f.name == "learner" or f.name in _ROWS:
            joined[f.name] = np.concatenate(values, axis=0)
        elif f.name == "rollout_row":
            offsets = np.cumsum([0] + [len(p.rollout_q) for p in parts[:-1]])
            joined[f.name] = np.concatenate(
                [np.where(v >= 0, v + o, -1) for v, o in zip(values, offsets, strict=True)],
                axis=1,
            )
        else:
            joined[f.name] = np.concatenate(values, axis=1)  # (T, B, ...)
    return type(first)(**joined)
