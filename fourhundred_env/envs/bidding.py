"""`FourHundredBid-v0`: one decision per episode, the bid, for training bidding policies fast.

Each episode is one hand from pre-hand scores drawn from ``hand_scores`` (the dealer, hence
the learner's place in the bidding order, is drawn too). The learner holds `seat` (default 0)
and makes only its bid (or redeal request, when its hand allows one); `policy` (an agent spec,
default "random", or one per seat) makes every other decision: the other seats' bids before
and after it, and all the card play, the learner's own cards included. The observation is
the ordinary one (:mod:`fourhundred_env.observation`): the learner's hand, the bids made
before it, the scores, minimum bids and required total. The action space is the ordinary
Discrete(66); the mask allows only the legal bids (and redeal).

Illegal actions end the episode in the single-agent env by default (``illegal_action="end"``,
as ``FourHundred-v0``); the vector env raises by default. Masks, results in ``info`` and
render modes as in ``FourHundred-v0``.

Reward: the learner's points for the hand (``reward="team_points"``: its team's). A hand
thrown in (a redeal request, or bids that do not reach the required total) ends the episode
with reward 0 and ``info["thrown_in"]`` True. A hand thrown in before the learner bid (an
earlier seat's redeal request) is skipped, never shown. The step that ends a hand says how
it ended in ``info["bids"]`` and ``info["tricks_won"]`` (every seat's): PPO bidding's own
rewards (``reward=package.module:function``, docs/bidding.md) read them.

:class:`FourHundredBidVectorEnv` is the natively batched version; since every episode is one
step, it defaults to ``autoreset_mode=SAME_STEP`` (each step returns the next episode's
observation, the final one in ``info["final_obs"]``) rather than wasting every other step.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gymnasium.vector import AutoresetMode

from fourhundred_env.envs.config import EnvConfig
from fourhundred_env.envs.single import FourHundredEnv
from fourhundred_env.envs.vector import FourHundredVectorEnv, render_modes
from fourhundred_env.errors import FourHundredError

_FIXED = {"episode": "hand", "learner_decides": "bids"}


def bid_config(
    config: EnvConfig | None, seat: int, policy: str | tuple[str, ...], options: dict[str, Any]
) -> EnvConfig:
    """The EnvConfig of a bidding environment: one-hand episodes, the learner bids only."""
    for name, value in _FIXED.items():
        if name in options and options[name] != value:
            raise FourHundredError(
                f"{name}={options[name]!r}: the bidding environment always has {name}={value!r}"
            )
        options.pop(name, None)
    if "learner_seats" in options or "opponents" in options:
        raise FourHundredError(
            "the bidding environment takes seat= and policy=, not learner_seats= or opponents="
        )
    if options.get("reward", "hand_points") == "match_result":
        raise FourHundredError(
            "reward='match_result': expected 'hand_points' or 'team_points' for bidding"
        )
    if isinstance(seat, bool) or seat not in (0, 1, 2, 3):
        raise FourHundredError(f"seat={seat!r}: expected a seat 0 to 3")
    return EnvConfig.build(config, **_FIXED, learner_seats=(seat,), opponents=policy, **options)


class FourHundredBidVectorEnv(FourHundredVectorEnv):
    """B bidding episodes at once. See the module docstring.

    Args: `num_envs`; `seat` the learner bids for; `policy` the agent spec playing everything
    else; `autoreset_mode` (default SAME_STEP); `render_mode`; `config` and/or EnvConfig fields
    (``reward``, ``rules``, ``hand_scores``, ``illegal_action``...) as keywords.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": render_modes(),
        "render_fps": 2,
    }

    def __init__(
        self,
        num_envs: int = 1,
        *,
        seat: int = 0,
        policy: str | tuple[str, ...] = "random",
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        render_mode: str | None = None,
        config: EnvConfig | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            num_envs,
            autoreset_mode=autoreset_mode,
            render_mode=render_mode,
            config=bid_config(config, seat, policy, options),
        )


class FourHundredBidEnv(FourHundredEnv):
    """One bidding episode at a time (``gym.make("FourHundredBid-v0")``). See the module docstring."""

    def __init__(
        self,
        *,
        seat: int = 0,
        policy: str | tuple[str, ...] = "random",
        render_mode: str | None = None,
        config: EnvConfig | None = None,
        **options: Any,
    ) -> None:
        base = config if config is not None else EnvConfig(illegal_action="end")
        super().__init__(render_mode=render_mode, config=bid_config(base, seat, policy, options))
