"""Options shared by every environment: one frozen dataclass, :class:`EnvConfig`.

Environments take ``config=EnvConfig(...)`` and/or the same fields as keyword arguments
(``gym.make("FourHundred-v0", episode="hand", reward="team_points")``); an unknown keyword is
an error that names it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules

Episode = Literal["hand", "match"]
Reward = Literal["hand_points", "team_points", "match_result"]
LearnerDecides = Literal["all", "bids"]
IllegalAction = Literal["raise", "penalize"]
ObservationDtype = Literal["float32", "int8"]
SelfPlay = (0, 1, 2, 3)


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
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise FourHundredError(f"ScoreDistribution.{name}={value!r}: expected an integer")
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
    opponents: str | tuple[str, ...] = "random"
    """Agent spec for the seats the learner does not hold (``agents.make_agent``), one for all
    of them or one per seat 0-3 (entries for learner seats are ignored). Each seat gets its own
    agent instance, seeded from the environment seed, fed only that seat's view."""
    illegal_action: IllegalAction = "raise"
    """"raise": an illegal action raises IllegalActionError; "penalize": the acting seat gets
    `illegal_penalty`, a uniformly random legal action is played instead, and
    ``info["illegal_action"]`` flags it (for libraries that sample without masks)."""
    illegal_penalty: float = -1.0
    """Reward added to the acting seat for an illegal action, with illegal_action="penalize"."""
    observation_dtype: ObservationDtype = "float32"
    """"float32": the scaled encoding; "int8": the same facts as raw integers, a quarter of the
    bytes and a faster step (``int8_obs * observation.OBS_SCALE`` is the float32 encoding)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        rules = self.rules
        if isinstance(rules, str):
            rules = Rules.preset(rules)
        elif isinstance(rules, Mapping):
            rules = Rules.from_dict(rules)
        elif not isinstance(rules, Rules):
            raise FourHundredError(
                f"rules={rules!r}: expected a Rules, a preset name or a mapping of rules flags"
            )
        set_(self, "rules", rules)
        _choice("episode", self.episode, ("hand", "match"))
        _choice("reward", self.reward, ("hand_points", "team_points", "match_result"))
        _choice("learner_decides", self.learner_decides, ("all", "bids"))
        _choice("illegal_action", self.illegal_action, ("raise", "penalize"))
        _choice("observation_dtype", self.observation_dtype, ("float32", "int8"))
        if isinstance(self.max_hands, bool) or not isinstance(self.max_hands, int):
            raise FourHundredError(f"max_hands={self.max_hands!r}: expected a positive integer")
        if self.max_hands < 1:
            raise FourHundredError(f"max_hands={self.max_hands!r}: expected a positive integer")
        scores = self.hand_scores
        if isinstance(scores, Mapping):
            scores = ScoreDistribution(**scores)
        elif isinstance(scores, Sequence) and not isinstance(scores, str):
            scores = ScoreDistribution(*scores)
        elif scores is not None and not isinstance(scores, ScoreDistribution):
            raise FourHundredError(
                f"hand_scores={scores!r}: expected a ScoreDistribution, (low, high[, zero_prob]), "
                "a mapping of its fields, or None"
            )
        if scores is not None and scores.low >= rules.target and scores.low > 0:
            raise FourHundredError(
                f"hand_scores={scores}: every draw has a team that has already won "
                f"(all scores >= the target {rules.target}): expected low below the target"
            )
        set_(self, "hand_scores", scores)
        seats = self.learner_seats
        if isinstance(seats, int):
            seats = (seats,)
        try:
            seats = tuple(sorted(int(s) for s in seats))
        except (TypeError, ValueError):
            raise FourHundredError(
                f"learner_seats={self.learner_seats!r}: expected seats 0 to 3"
            ) from None
        partnership = len(seats) == 2 and seats[1] == seats[0] + 2
        if not (seats == SelfPlay or len(seats) == 1 or partnership) or not set(seats) <= {
            0,
            1,
            2,
            3,
        }:
            raise FourHundredError(
                f"learner_seats={self.learner_seats!r}: expected all four seats (self-play), "
                "one seat, or a partnership ((0, 2) or (1, 3))"
            )
        set_(self, "learner_seats", seats)
        if self.learner_decides == "bids" and seats == SelfPlay:
            raise FourHundredError(
                "learner_decides='bids' needs opponents to play the cards: give learner_seats "
                "fewer than all four seats"
            )
        opponents = self.opponents
        opponents = (opponents,) * 4 if isinstance(opponents, str) else tuple(opponents)
        if len(opponents) != 4 or not all(isinstance(o, str) for o in opponents):
            raise FourHundredError(
                f"opponents={self.opponents!r}: expected one agent spec (like 'random') or "
                "four, one per seat 0-3"
            )
        set_(self, "opponents", opponents)
        penalty = self.illegal_penalty
        if isinstance(penalty, bool) or not isinstance(penalty, int | float):
            raise FourHundredError(f"illegal_penalty={penalty!r}: expected a number")
        set_(self, "illegal_penalty", float(penalty))

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


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise FourHundredError(f"{name}={value!r}: expected one of {', '.join(map(repr, allowed))}")
