"""What a PPO run plays and learns with, built from its config in one place: the network,
the oracle critic, the teacher and the objectives (:func:`build_parts`). The trainer
(train/ppo.py) builds them once, every Ray rollout actor (train/ray_rollouts.py) its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from fourhundred_env.engine import Engine
from fourhundred_train.config import TrainConfig
from fourhundred_train.network import NetConfig, OracleCritic, PolicyValueNet
from fourhundred_train.objectives import Objective, make_objectives

if TYPE_CHECKING:
    from fourhundred_agents.protocol import Agent

__all__ = ["TrainingParts", "build_parts"]


@dataclass
class TrainingParts:
    """The network, the oracle critic (None when off), the teacher (None without one) and
    the enabled objectives, in the order of their hooks (train/objectives.py).

    `net` and `critic` are the learner's, on the run's device; `play_net` and `play_critic`
    what the rollouts play, on the CPU: the same objects on the CPU, else copies that
    :meth:`sync` brings up to the learner's weights."""

    net: PolicyValueNet
    critic: OracleCritic | None
    teacher: Agent | None
    objectives: list[Objective]
    play_net: PolicyValueNet
    play_critic: OracleCritic | None

    def sync(self) -> None:
        """Copy the learner's weights to the rollouts' CPU copies (nothing to do on the CPU,
        where they are the learner's own)."""
        if self.play_net is self.net:
            return
        self.play_net.load_state_dict(self.net.state_dict())
        if self.critic is not None and self.play_critic is not None:
            self.play_critic.load_state_dict(self.critic.state_dict())


def build_parts(
    config: TrainConfig, engine: Engine, device: torch.device | None = None
) -> TrainingParts:
    """The parts `config` asks for, built in this order: the network, the oracle critic,
    the teacher, the objectives. The networks draw their initial weights from torch's
    global generator on the CPU: whoever wants given weights seeds it before (the trainer
    does, with ``derive_seed(seed, 0)``); the order fixes which draws each network gets, and
    the device (None: the CPU) does not change them: the learner's are copies of the
    rollouts' networks moved there. With `features` (mode bidding), the function is loaded and
    checked on sample views first (ConfigError in one line), and the policy network reads its
    F columns after the observation (its ``extra_features``; the oracle critic does not)."""
    features = None
    if config.features:
        from fourhundred_agents.neural.extra_features import load_features

        features = load_features(config.features, engine.rules)
    extra = 0 if features is None else features.size
    net_config = NetConfig(hidden=config.hidden, layers=config.layers, extra_inputs=extra)
    play_net = PolicyValueNet(net_config)
    play_net.extra_features = features
    play_critic = OracleCritic(net_config) if config.oracle_critic else None
    net, critic = play_net, play_critic
    if device is not None:
        from fourhundred_agents.neural.device import learner_copy

        net = learner_copy(play_net, device)
        critic = None if play_critic is None else learner_copy(play_critic, device)
    teacher = None
    if config.teacher is not None:
        from fourhundred_agents.registry import make_agent

        teacher = make_agent(config.teacher, rules=engine.rules, seed=config.seed)
    objectives = make_objectives(config, engine, play_net, critic, teacher, device)
    return TrainingParts(net, critic, teacher, objectives, play_net, play_critic)
