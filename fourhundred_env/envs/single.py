"""`FourHundred-v0`: one table of 400 as a single-agent Gymnasium ``Env``.

The learner holds one seat (default seat 0) or one partnership (``learner_seats=(0, 2)``);
the other seats are played inside `step` by agents resolved with ``agents.make_agent`` from
``opponents`` (default "random"; any registered spec, one per seat if wanted), each seat its
own instance fed only that seat's view. It is :class:`FourHundredVectorEnv` with one table
(no second code path), so the contract is the same, unbatched:

- observation: ``{"observation": (588,) float32, "action_mask": (66,) int8}`` for the
  learner's seat to act; ``info["seat"]`` that seat (int);
- reward: the learner's (its seat's hand points at the end of each hand by default; see
  ``EnvConfig.reward``); ``info["seat_rewards"]`` (4,) float32 every seat's;
- terminated: the hand (``episode="hand"``) or the match is over; truncated: the match
  reached ``max_hands`` hands. Step after the end raises: call `reset`.

Illegal actions raise IllegalActionError, unless ``illegal_action="penalize"`` (then
``info["illegal_action"]`` flags a replaced action). ``gymnasium.utils.env_checker.check_env``
steps unmasked random actions, so it is run with ``illegal_action="penalize"``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.envs.config import EnvConfig
from fourhundred_env.envs.driver import TableDriver
from fourhundred_env.envs.vector import FourHundredVectorEnv, single_observation_space
from fourhundred_env.errors import FourHundredError, IllegalActionError

ObsDict = dict[str, np.ndarray]


class FourHundredEnv(gym.Env[ObsDict, np.int64]):
    """One table, the learner at `learner_seats` (default (0,)), opponents played by agents.

    Args: `render_mode` None or "ansi"; `config` (an :class:`EnvConfig`, default: learner at
    seat 0) and/or its fields as keywords. See the module docstring.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}
    default_config = EnvConfig(learner_seats=(0,))

    def __init__(
        self, *, render_mode: str | None = None, config: EnvConfig | None = None, **options: Any
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise FourHundredError(f"render_mode={render_mode!r}: expected None or 'ansi'")
        base = config if config is not None else self.default_config
        self._vec = FourHundredVectorEnv(
            1,
            autoreset_mode=AutoresetMode.DISABLED,
            render_mode=render_mode,
            config=base,
            **options,
        )
        self.config = self._vec.config
        self.render_mode = render_mode
        self.observation_space = single_observation_space(self.config.observation_dtype)
        self.action_space = spaces.Discrete(NUM_ACTIONS)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsDict, dict[str, Any]]:
        """Start an episode (`seed` as the vector env's table 0; `options` are ignored).

        Returns (observation, info with "seat" and "seat_rewards")."""
        super().reset(seed=seed)
        if seed is None and self._vec.driver.base_seed is None:
            seed = int(self.np_random.integers(2**63))
        obs, info = self._vec.reset(seed=seed)
        return _first(obs), _first(info)

    def step(self, action: Any) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        """Play the learner's action id (0-65); opponents answer until the learner's turn."""
        if self._vec.driver.over[0]:
            raise IllegalActionError("the episode is over: call reset() to start the next one")
        a = np.asarray(action)
        if a.shape not in ((), (1,)) or not np.issubdtype(a.dtype, np.integer):
            raise IllegalActionError(
                f"action {action!r}: expected one integer action id 0-{NUM_ACTIONS - 1}"
            )
        obs, reward, terminated, truncated, info = self._vec.step(a.reshape(1))
        return _first(obs), float(reward[0]), bool(terminated[0]), bool(truncated[0]), _first(info)

    def render(self) -> str | None:  # type: ignore[override]
        """With render_mode "ansi": the table as text, showing the observed seat's hand."""
        frames = self._vec.render()
        return None if frames is None else frames[0]

    @property
    def match_id(self) -> int:
        """Match id of the current episode (see ``FourHundredVectorEnv.match_ids``)."""
        return int(self._vec.match_ids[0])

    @property
    def driver(self) -> TableDriver:
        """The batch-of-one driver underneath (engine state, agents), for tests and tools."""
        return self._vec.driver


def _first(data: dict[str, Any]) -> dict[str, Any]:
    """Row 0 of every batched entry: arrays become (...) arrays, (1,) arrays Python scalars."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out[key] = _first(value)
        elif isinstance(value, np.ndarray) and value.ndim == 1:
            out[key] = value[0].item()
        else:
            out[key] = value[0]
    return out
