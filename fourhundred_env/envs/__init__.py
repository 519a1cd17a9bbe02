"""Gymnasium and PettingZoo environments for 400 (this package adds gymnasium; the rules core
does not import it).

Registration. Gymnasium 1.x no longer loads environment plugins from package entry points,
so an import has to register the ids. Importing this package does (the rules core stays free
of gymnasium); ``gym.make("fourhundred_env.envs:FourHundred-v0")`` imports it for you::

    import gymnasium as gym
    import fourhundred_env.envs  # registers FourHundred-v0 and FourHundredBid-v0

    env = gym.make("FourHundred-v0")                              # one table, learner seat 0
    env.action_masks()                                            # (66,) bool: MaskablePPO's hook
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

``gym.make`` returns the environment itself (registered with ``order_enforce=False`` and
``disable_env_checker=True``; the envs refuse a step before reset themselves), so
``env.action_masks()`` works on it. Gymnasium 1.x wrappers do not forward attributes: through
wrappers of your own (``TimeLimit``, ``RecordEpisodeStatistics``...) call
``env.get_wrapper_attr("action_masks")()``, as sb3-contrib's ``get_action_masks`` does.

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

# gym.make returns the env itself, not wrapped in OrderEnforcing and PassiveEnvChecker:
# Gymnasium 1.x wrappers no longer forward attributes, and `env.action_masks()` (what
# sb3-contrib's MaskablePPO and its docs call) must work on what gym.make returns. The envs
# enforce the call order themselves (step before reset raises) and tests run check_env.
_PLAIN = {"order_enforce": False, "disable_env_checker": True}

_IDS: dict[str, dict[str, Any]] = {
    "FourHundred-v0": {
        "entry_point": "fourhundred_env.envs.single:FourHundredEnv",
        "vector_entry_point": "fourhundred_env.envs.vector:FourHundredVectorEnv",
        "kwargs": {"learner_seats": (0,), "illegal_action": "end"},
        **_PLAIN,
    },
    "FourHundredBid-v0": {
        "entry_point": "fourhundred_env.envs.bidding:FourHundredBidEnv",
        "vector_entry_point": "fourhundred_env.envs.bidding:FourHundredBidVectorEnv",
        "kwargs": {"illegal_action": "end"},
        **_PLAIN,
    },
}


def register_envs() -> None:
    """Register the Gymnasium ids (done on import; harmless to call again)."""
    for env_id, spec in _IDS.items():
        if env_id not in registry:
            register(id=env_id, **spec)


register_envs()
