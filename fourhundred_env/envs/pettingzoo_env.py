"""400 as a PettingZoo AEC environment, used as PettingZoo's classic card games are.

| Creation           | ``from fourhundred_env.envs.pettingzoo_env import env; env(...)``   |
|--------------------|---------------------------------------------------------------------|
| Agents             | ``["player_0", "player_1", "player_2", "player_3"]`` (seats 0-3)    |
| Teams              | player_0 + player_2 against player_1 + player_3                     |
| Action space       | Discrete(66): 0-51 play card, 52-64 bid 1..13, 65 ask for a redeal  |
| Observation        | Dict(observation=Box(588,) float32, action_mask=Box(66,) int8)      |

Observation: :mod:`fourhundred_env.observation` (own hand, cards played by whom, the trick,
bids, tricks, scores, ... relative to the observing seat); ``action_mask`` is 1 on the legal
actions of the agent to act and all 0 for the others (and once the game is over).

Rewards (``reward=``): by default each seat's hand points when a hand ends (``team_points``:
the team's; ``match_result``: +1/-1 to the teams when the match is decided). An episode is a
match (``episode="match"``, truncated after ``max_hands`` hands) or one hand
(``episode="hand"``, pre-hand scores drawn from ``hand_scores``). An illegal action ends
the game for every agent by default (``illegal_action="end"``, PettingZoo classic's
convention, as ``TerminateIllegalWrapper``): the offender gets ``illegal_penalty`` and the
others 0; ``illegal_action="raise"`` raises IllegalActionError instead (for masked
learners, where an illegal action is a bug); with ``"penalize"`` the offender pays
``illegal_penalty`` and a random legal action is played instead. "end" and "penalize" flag
it in ``infos[agent]["illegal_action"]``.

Rendering follows PettingZoo's conventions: ``render_mode="human"`` prints the table (all
hands shown) after every step and ``render()`` returns None; "ansi" returns the text;
"rgb_array" returns an (H, W, 3) uint8 picture (needs Pillow, the ``plots`` extra).

Same one-table driver as the Gymnasium environments: ``reset(seed=s)`` plays the deals of
table seed ``s``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.envs.config import EnvConfig, SelfPlay
from fourhundred_env.envs.driver import TableDriver
from fourhundred_env.envs.text import table_text
from fourhundred_env.envs.vector import (
    check_render_mode,
    render_modes,
    single_observation_space,
)
from fourhundred_env.errors import FourHundredError

ObsDict = dict[str, np.ndarray]
AGENTS = [f"player_{seat}" for seat in range(4)]


class raw_env(AECEnv[str, ObsDict, int]):
    """The AEC environment without wrappers. Args: `render_mode` None, "ansi", "human" or
    "rgb_array";
    `config` (an :class:`EnvConfig`; every seat is an agent) and/or its fields as keywords."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "fourhundred_v0",
        "render_modes": render_modes(),
        "render_fps": 2,
        "is_parallelizable": False,
    }
    default_config = EnvConfig(illegal_action="end")

    def __init__(
        self, render_mode: str | None = None, config: EnvConfig | None = None, **options: Any
    ) -> None:
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        base = config if config is not None else self.default_config
        self.config = EnvConfig.build(base, **options)
        if not self.config.self_play:
            raise FourHundredError(
                f"learner_seats={self.config.learner_seats}: every seat is an agent in the "
                "PettingZoo environment"
            )
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        space = single_observation_space(self.config.observation_dtype)
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self.driver = TableDriver(1, self.config)

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of `agent` (the same for every seat)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of `agent`: ``Discrete(66)``."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode; `seed` as in the Gymnasium environments; `options` are ignored."""
        driver = self.driver
        if seed is not None:
            driver.seed(seed)
        elif driver.base_seed is None:
            driver.seed(int(np.random.SeedSequence().generate_state(1, np.uint64)[0]))
        driver.start(np.array([0]))
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[int(driver.state.to_play[0])]

    def observe(self, agent: str) -> ObsDict:
        """What `agent`'s seat may know now, and its action mask (all 0 unless it is to act)."""
        obs, mask = self.driver.observe(np.array([AGENTS.index(agent)], np.int8))
        return {"observation": obs[0], "action_mask": mask[0]}

    def step(self, action: int | None) -> None:
        """The agent to act plays `action` (None for an agent whose episode is over)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise FourHundredError(f"{agent} is to act: expected an action id, got None")
        driver = self.driver
        seat_rewards, _, illegal = driver.act(np.array([int(action)], np.int64), np.ones(1, bool))
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: float(seat_rewards[0, i]) for i, a in enumerate(AGENTS)}
        if self.config.illegal_action != "raise":
            self.infos = {a: {"illegal_action": bool(illegal[0]) and a == agent} for a in AGENTS}
        if driver.over[0]:
            done = {a: True for a in AGENTS}
            keep = {a: False for a in AGENTS}
            self.terminations = done if driver.terminated[0] else keep
            self.truncations = done if driver.truncated[0] else keep
            self._accumulate_rewards()
            self._deads_step_first()
        else:
            self.agent_selection = AGENTS[int(driver.state.to_play[0])]
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        """The table, all hands shown: "ansi" returns the text, "rgb_array" an (H, W, 3)
        uint8 picture; "human" prints the text (`step` calls it) and returns None."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: make the env with one")
            return None
        if self.render_mode == "rgb_array":
            from fourhundred_env.envs.image import table_image

            return table_image(self.driver.engine, self.driver.state, 0)
        text = table_text(self.driver.engine, self.driver.state, 0)
        if self.render_mode == "human":
            print(text, flush=True)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's standard checks (out-of-bounds actions, call
    order), as classic environments are made. Keywords as for :class:`raw_env`."""
    aec: AECEnv = raw_env(**kwargs)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


assert SelfPlay == (0, 1, 2, 3)
