"""Gymnasium and PettingZoo environments for 400 (this package adds gymnasium; the rules core
does not import it).

Registration. Gymnasium 1.x no longer loads environment plugins from package entry points,
so an import has to register the ids. Importing this package does (the rules core stays free
of gymnasium); ``gym.make("fourhundred_env.envs:FourHundred-v0")`` imports it for you::

    import gymnasium as gym
    import fourhundred_env.envs  # registers FourHundred-v0 and FourHundredBid-v0

    env = gym.make("FourHundred-v0")                              # one table, learner seat 0
    envs = gym.make_vec("FourHundred-v0", num_envs=4096,
                        vectorization_mode="vector_entry_point")  # the native batched env
    env = gym.make("fourhundred_env.envs:FourHundredBid-v0")     # imports it for you

- ``FourHundred-v0``: :class:`FourHundredEnv` (single agent: the learner holds seat 0 by
  default, or a partnership; the other seats are agents); its vector entry point is
  :class:`FourHundredVectorEnv` with the same defaults. Self-play over all four seats:
  ``FourHundredVectorEnv(num_envs)`` or ``make_vec(..., learner_seats=(0, 1, 2, 3))``.
- ``FourHundredBid-v0``: :class:`FourHundredBidEnv` / :class:`FourHundredBidVectorEnv`, one
  bid per episode.
- PettingZoo: ``fourhundred_env.envs.pettingzoo_env.env()`` (needs the ``pettingzoo`` extra).

Every option is a field of :class:`EnvConfig`, passed as a keyword (``gym.make(...,
episode="hand", reward="team_points", opponents="heuristic", observation_dtype="int8")``).
The observation layout is :mod:`fourhundred_env.observation` (``OBS_VERSION``).
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

from fourhundred_env.envs.bidding import FourHundredBidEnv, FourHundredBidVectorEnv
from fourhundred_env.envs.config import EnvConfig, ScoreDistribution
from fourhundred_env.envs.driver import TableDriver
from fourhundred_env.envs.single import FourHundredEnv
from fourhundred_env.envs.vector import FourHundredVectorEnv

__all__ = [
    "EnvConfig",
    "FourHundredBidEnv",
    "FourHundredBidVectorEnv",
    "FourHundredEnv",
    "FourHundredVectorEnv",
    "ScoreDistribution",
    "TableDriver",
    "register_envs",
]

_IDS: dict[str, dict[str, Any]] = {
    "FourHundred-v0": {
        "entry_point": "fourhundred_env.envs.single:FourHundredEnv",
        "vector_entry_point": "fourhundred_env.envs.vector:FourHundredVectorEnv",
        "kwargs": {"learner_seats": (0,), "illegal_action": "end"},
    },
    "FourHundredBid-v0": {
        "entry_point": "fourhundred_env.envs.bidding:FourHundredBidEnv",
        "vector_entry_point": "fourhundred_env.envs.bidding:FourHundredBidVectorEnv",
        "kwargs": {"illegal_action": "end"},
    },
}


def register_envs() -> None:
    """Register the Gymnasium ids (done on import; harmless to call again)."""
    for env_id, spec in _IDS.items():
        if env_id not in registry:
            register(id=env_id, **spec)


register_envs()
