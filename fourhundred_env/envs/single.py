"""`FourHundred-v0`: one table of 400 as a single-agent Gymnasium ``Env``.

The learner holds one seat (default seat 0) or one partnership (``learner_seats=(0, 2)``);
the other seats are played inside `step` by agents resolved through the registry from
``opponents`` (default "random"; any registered spec, one per seat if wanted), each seat its
own instance fed only that seat's view. It is :class:`FourHundredVectorEnv` with one table
(no second code path), so the contract is the same, unbatched:

- observation: ``{"observation": (588,) float32, "action_mask": (66,) int8}`` for the
  learner's seat to act; ``info["seat"]`` that seat (numpy int8). :meth:`action_masks`
  gives the mask as bool, where MaskablePPO (sb3-contrib) looks for it, through any
  wrapper (``env.get_wrapper_attr("action_masks")()``, ``DummyVecEnv``, ``SubprocVecEnv``).
  The observation that ends an episode has only ``AUTORESET_ACTION`` (0) in its mask: there
  is no decision left, and no mask is ever all 0.
- reward: the learner's, a float (its seat's hand points at the end of each hand by
  default; see ``EnvConfig.reward``); ``info["seat_rewards"]`` (4,) float32 every seat's;
- terminated: the hand (``episode="hand"``) or the match is over; truncated: the match
  reached ``max_hands`` hands. Step after the end raises: call `reset`.
- results: the info of the step that ends an episode has the learner's "outcome" (+1 won,
  0 drawn, -1 lost), "is_success", "points", "contracts_made" and "contracts_bid" (see
  :meth:`TableDriver.results <fourhundred_env.envs.driver.TableDriver.results>`); with
  ``episode="hand"`` also "bids" and "tricks_won" (4,) int8, every seat's.

Illegal actions follow PettingZoo classic's convention by default
(``illegal_action="end"``): the engine's state is left as it was, the episode ends
(terminated), the learner gets ``illegal_penalty`` (default -1) and ``info["illegal_action"]``
is True. So Gymnasium's and SB3's ``check_env``, which step unmasked random actions, pass
with the defaults. ``illegal_action="raise"`` raises IllegalActionError instead (a masked
learner's illegal action is a bug); ``"penalize"`` plays a random legal action instead and
goes on. See ``EnvConfig.illegal_action``.

Render modes: "ansi" (text), "rgb_array" (an (H, W, 3) uint8 picture, needs Pillow: the
``plots`` extra), "human" (prints the text at every reset and step).
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
from fourhundred_env.envs.vector import (
    FourHundredVectorEnv,
    check_render_mode,
    render_modes,
    single_observation_space,
)
from fourhundred_env.errors import IllegalActionError

ObsDict = dict[str, np.ndarray]


class FourHundredEnv(gym.Env[ObsDict, np.int64]):
    """One table, the learner at `learner_seats` (default (0,)), opponents played by agents.

    Args: `render_mode` None, "ansi", "human" or "rgb_array"; `config` (an
    :class:`EnvConfig`, default: learner at seat 0, ``illegal_action="end"``) and/or its
    fields as keywords. See the module docstring.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": render_modes(),
        "render_fps": 2,
    }
    default_config = EnvConfig(learner_seats=(0,), illegal_action="end")

    def __init__(
        self, *, render_mode: str | None = None, config: EnvConfig | None = None, **options: Any
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        base = config if config is not None else self.default_config
        # the table renders itself here, so that "human" prints once per step
        self._vec = FourHundredVectorEnv(
            1,
            autoreset_mode=AutoresetMode.DISABLED,
            render_mode=None if render_mode == "human" else render_mode,
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
        if self.render_mode == "human":
            self.render()
        return _first(obs), _first(info)

    def step(self, action: Any) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        """Play the learner's action id (0-65); opponents answer until the learner's turn."""
        if self._vec.driver.over[0]:
            raise IllegalActionError("the episode is over: call reset() to start the next one")
        a = np.asarray(action)
        if a.shape not in ((), (1,)) or a.dtype.kind not in "iu":
            raise IllegalActionError(
                f"action {action!r}: expected one integer action id 0-{NUM_ACTIONS - 1}"
            )
        obs, reward, terminated, truncated, info = self._vec.step(a.reshape(1))
        if self.render_mode == "human":
            self.render()
        return _first(obs), float(reward[0]), bool(terminated[0]), bool(truncated[0]), _first(info)

    def action_masks(self) -> np.ndarray:
        """(66,) bool: the legal actions of the current observation (MaskablePPO's hook)."""
        return self._vec.action_masks()[0]

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The table, the learner's hand face up: "ansi" a text, "rgb_array" an (H, W, 3)
        uint8 picture, "human" prints the text (and returns None)."""
        if self.render_mode == "human":
            from fourhundred_env.envs.text import table_text

            driver = self._vec.driver
            print(table_text(driver.engine, driver.state, 0, int(driver.obs_seats()[0])))
            return None
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
    """Row 0 of every batched entry, Gymnasium's ``_key`` masks left out (a key is present only
    where its mask was True): (1, ...) arrays become (...) arrays, (1,) arrays numpy scalars
    (bools Python bools), so that ``SyncVectorEnv`` batches them back in the same dtypes."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key.startswith("_"):
            continue
        if isinstance(value, dict):
            out[key] = _first(value)
        elif isinstance(value, np.ndarray) and value.ndim == 1:
            out[key] = value[0].item() if value.dtype == np.bool_ else value[0]
        else:
            out[key] = value[0]
    return out
