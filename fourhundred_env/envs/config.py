"""Options shared by every environment: one frozen dataclass, :class:`EnvConfig`.

Environments take ``config=EnvConfig(...)`` and/or the same fields as keyword arguments
(``gym.make("FourHundred-v0", episode="hand", reward="team_points")``); an unknown keyword is
an error that names it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.rules import Rules

Episode = Literal["hand", "match"]
Reward = Literal["hand_points", "team_points", "match_result"]
LearnerDecides = Literal["all", "bids"]
IllegalAction = Literal["raise", "end", "penalize"]
ObservationDtype = Literal["float32", "int8"]
SelfPlay = (0, 1, 2, 3)
AgentFactory = Callable[[Rules, int], Any]
"""Makes an opponent: ``factory(rules, seed) -> agent``."""


@dataclass(frozen=True)
class ScoreDistribution:
    """Pre-hand running scores for one-hand episodes, so score-dependent rules get exercised.

    Each seat's score is drawn uniformly from ``low..high`` (inclusive); with probability
    `zero_prob` all four are 0 (the first hand of a match). Draws in which a team would already
    have won (a player at the target with the partner above 0) are drawn again, up to 32
    times; a table whose draws all failed starts from 0, 0, 0, 0.
    """

    low: int = -20
    """Lowest score drawn."""
    high: int = 45
    """Highest score drawn (inclusive)."""
    zero_prob: float = 0.2
    """Probability that the hand starts from 0, 0, 0, 0."""

    def __post_init__(self) -> None:
        try:
            check_fields(self)
        except ConfigError as e:
            raise ConfigError(f"ScoreDistribution.{e}") from None
        if not -1000 <= self.low <= self.high <= 1000:
            raise FourHundredError(
                f"ScoreDistribution low={self.low}, high={self.high}: expected "
                "-1000 <= low <= high <= 1000"
            )
        if not 0.0 <= self.zero_prob <= 1.0:
            raise FourHundredError(
                f"ScoreDistribution.zero_prob={self.zero_prob!r}: expected a probability 0 to 1"
            )


@dataclass(frozen=True)
class EnvConfig:
    """What an environment plays and how it rewards. Every field has a sensible default."""

    rules: Rules = dataclasses.field(default_factory=Rules)
    """The rules (a Rules, a preset name such as "pagat", or a mapping of flags)."""
    episode: Episode = "match"
    """"hand": an episode is one hand from scores drawn from `hand_scores`; "match": a whole
    match from 0, truncated after `max_hands` hands."""
    reward: Reward = "hand_points"
    """"hand_points": each seat's own score change at the end of each hand; "team_points":
    the seat's plus its partner's; "match_result": +1 for the seats of the team that wins the
    match, -1 for the others, 0 otherwise (also 0 on truncation)."""
    max_hands: int = 100
    """Match episodes are truncated once this many hands (thrown-in ones included) were dealt;
    random play may never reach 41."""
    hand_scores: ScoreDistribution | None = dataclasses.field(default_factory=ScoreDistribution)
    """Pre-hand scores of one-hand episodes (None: always 0, 0, 0, 0)."""
    learner_seats: tuple[int, ...] = SelfPlay
    """Seats whose decisions the caller makes: all four (self-play), one seat, or one
    partnership (two opposite seats). Other seats are played by `opponents`."""
    learner_decides: LearnerDecides = "all"
    """"all": the learner bids and plays; "bids": it only bids, and `opponents` play its cards."""
    opponents: str | tuple[str | AgentFactory, ...] = "random"
    """Who plays the seats the learner does not hold: an agent spec (``"heuristic"``, resolved
    by :mod:`fourhundred_env.registry`) or a factory ``f(rules, seed) -> agent``; one for all
    of them or one per seat 0-3 (entries for learner seats are ignored). Each seat gets its own
    instance, fed only that seat's view."""
    illegal_action: IllegalAction = "raise"
    """What an illegal action of the learner does. "raise": IllegalActionError, nothing
    changes (for masked learners, where an illegal action is a bug). "end" (PettingZoo
    classic's convention; the default of the single-agent envs ``FourHundred-v0`` and
    ``FourHundredBid-v0``): the engine's state is left untouched, the episode ends
    (terminated), the acting seat gets `illegal_penalty` (its partner too under a team
    reward) and ``info["illegal_action"]`` is True. "penalize": the acting seat gets
    `illegal_penalty`, a uniformly random legal action (drawn from the table's stream) is
    played instead and the episode goes on, ``info["illegal_action"]`` True."""
    illegal_penalty: float = -1.0
    """Reward of the acting seat for an illegal action under "end" or "penalize". -1 as in
    PettingZoo classic; with point rewards (a hand is worth up to 40 points) an unmasked
    learner may prefer ending a bad episode for -1: make it lower than the points at stake."""
    observation_dtype: ObservationDtype = "float32"
    """"float32": the scaled encoding; "int8": the same facts as raw integers, a quarter of the
    bytes and a faster step (``int8_obs * observation.OBS_SCALE`` is the float32 encoding)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        # shorthands first: one seat, one opponent for every seat, (low, high[, zero_prob])
        seats = self.learner_seats
        if isinstance(seats, int | np.integer) and not isinstance(seats, bool):
            seats = (seats,)
        if isinstance(seats, Iterable) and not isinstance(seats, str):
            seats = tuple(sorted(seats, key=lambda s: (not isinstance(s, int), str(s))))
        set_(self, "learner_seats", seats)
        opponents = self.opponents
        if isinstance(opponents, str) or callable(opponents):
            opponents = (opponents,) * 4
        set_(self, "opponents", tuple(opponents) if isinstance(opponents, Iterable) else opponents)
        scores = self.hand_scores
        if isinstance(scores, Sequence) and not isinstance(scores, str):
            scores = ScoreDistribution(*scores)
        set_(self, "hand_scores", scores)
        check_fields(self)  # types and choices, from the annotations
        rules, scores, seats = self.rules, self.hand_scores, self.learner_seats
        if self.max_hands < 1:
            raise ConfigError(f"max_hands={self.max_hands!r}: expected a positive integer")
        if scores is not None and scores.low >= rules.target and scores.low > 0:
            raise ConfigError(
                f"hand_scores={scores}: every draw has a team that has already won "
                f"(all scores >= the target {rules.target}): expected low below the target"
            )
        partnership = len(seats) == 2 and seats[1] == seats[0] + 2
        if not (seats == SelfPlay or len(seats) == 1 or partnership) or not set(seats) <= {
            0,
            1,
            2,
            3,
        }:
            raise ConfigError(
                f"learner_seats={self.learner_seats!r}: expected all four seats (self-play), "
                "one seat, or a partnership ((0, 2) or (1, 3))"
            )
        if self.learner_decides == "bids" and seats == SelfPlay:
            raise ConfigError(
                "learner_decides='bids' needs opponents to play the cards: give learner_seats "
                "fewer than all four seats"
            )
        opponents = self.opponents
        if len(opponents) != 4 or not all(isinstance(o, str) or callable(o) for o in opponents):
            raise ConfigError(
                f"opponents={opponents!r}: expected one agent spec (like 'random') or factory, "
                "or four, one per seat 0-3"
            )

    @property
    def self_play(self) -> bool:
        """True when the learner makes every decision at every seat."""
        return self.learner_seats == SelfPlay

    @property
    def team_reward(self) -> bool:
        """True when both seats of a team always share one reward."""
        return self.reward != "hand_points"

    @classmethod
    def build(cls, config: EnvConfig | None = None, **options: Any) -> EnvConfig:
        """`config` (default: all defaults) with `options` replacing fields; unknown names raise."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise FourHundredError(
                f"unknown environment option(s) {unknown}: expected some of {sorted(known)}"
            )
        base = config if config is not None else cls()
        if not isinstance(base, EnvConfig):
            raise FourHundredError(f"config={config!r}: expected an EnvConfig")
        return dataclasses.replace(base, **options) if options else base
