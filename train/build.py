"""What a PPO run plays and learns with, built from its config in one place: the network,
the oracle critic, the teacher and the objectives (:func:`build_parts`). The trainer
(train/ppo.py) builds them once, every Ray rollout actor (train/ray_rollouts.py) its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    the enabled objectives, in the order of their hooks (train/objectives.py)."""

    net: PolicyValueNet
    critic: OracleCritic | None
    teacher: Agent | None
    objectives: list[Objective]


def build_parts(config: TrainConfig, engine: Engine) -> TrainingParts:
    """The parts `config` asks for, built in this order: the network, the oracle critic,
    the teacher, the objectives. The networks draw their initial weights from torch's
    global generator: whoever wants given weights seeds it before (the trainer does, with
    ``derive_seed(seed, 0)``); the order fixes which draws each network gets."""
    net_config = NetConfig(hidden=config.hidden, layers=config.layers)
    net = PolicyValueNet(net_config)
    critic = OracleCritic(net_config) if config.oracle_critic else None
    teacher = None
    if config.teacher is not None:
        from fourhundred_agents.registry import make_agent

        teacher = make_agent(config.teacher, rules=engine.rules, seed=config.seed)
    objectives = make_objectives(config, engine, net, critic, teacher)
    return TrainingParts(net, critic, teacher, objectives)
