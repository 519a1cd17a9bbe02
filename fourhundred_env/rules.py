"""The rules of 400 as a frozen config, and the pure scoring functions of the rules page.

Every flag of the rules (docs/rules.md, the manual's rules page) is a field of
:class:`Rules`. The scalar functions here (`bid_value`, `min_bid`, `required_total`,
`bids_total`, `hand_is_played`, `team_qualifies`, `end_of_game`) are the source of truth of
the scoring rules, written from the rules page and tested against its tables
(tests/test_rules_table.py); bots, the table and the web read them. The compiled kernels
(:mod:`fourhundred_env.kernels`) keep their own copies, built from the same tables
(`value_table`, `total_weights`), and tests/test_rules_kernels.py checks those copies against
these functions for every preset and for random profiles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from fourhundred_env.configs import check_fields, short
from fourhundred_env.errors import ConfigError, RulesError

ScoreTable = Literal["wiki", "pagat"]
TotalCountedIn = Literal["tricks", "points"]
SimultaneousFinish = Literal["extend", "highest_player", "highest_team_total"]

CONDUCT_FLAGS: tuple[str, ...] = ("auto_claim", "move_time_limit_s", "move_hard_limit_s")
"""Flags that do not change the game being played: the tournament's conduct (time limits) and
a play-out convenience (`auto_claim` must give exactly the tricks playing out gives). A policy
trained under other values of these still plays this game (:meth:`Rules.game_differences`)."""

# Value of a made or missed bid of 0..13 under each table (index = bid; 0 is never bid).
_WIKI_VALUES = (0, 1, 2, 3, 4, 10, 12, 14, 16, 27, 40, 40, 40, 40)
_PAGAT_VALUES = tuple(b if b <= 6 else 2 * b for b in range(14))
MAX_MOVE_LIMIT_S = 86_400.0
"""The longest per-move time limit a `Rules` takes (a day): a limit beyond what a clock or a
timer can represent (``1e10``, ``.inf``) would make every move fail."""


@dataclass(frozen=True)
class Rules:
    """One rules profile. Defaults are the Lebanese ("wiki") profile of docs/rules.md."""

    no_face_redeal: bool = True
    """A player whose hand holds no A, K, Q or J may ask for a redeal at their bidding turn."""
    min_bid_base: int = 2
    """Lowest bid anyone may make (1 in the pagat preset)."""
    min_bid_escalates: bool = True
    """Minimum bid rises with the bidder's own score: ``min(13, max(base, score // 10))``."""
    min_total_bids: int = 11
    """The four bids must add up to at least this, or the hand is thrown in."""
    escalate_total: bool = True
    """Required total rises with the top score at the table: ``+ max(0, top // 10 - 2)``."""
    total_counted_in: TotalCountedIn = "tricks"
    """"tricks": bids add as they are; "points" (pagat): bids of 7 or more count double."""
    five_to_run: bool = False
    """Play the hand iff some player bid 5 or more; the total test is not applied."""
    score_table: ScoreTable = "wiki"
    """"wiki": 2,3,4,10,12,14,16,27,40 for bids 2..10+; "pagat": bid for 1-6, 2*bid from 7."""
    five_six_face_value_from: int | None = 30
    """Thirty rule: from this pre-hand score, bids of 5 and 6 are worth 5 and 6. None: off."""
    target: int = 41
    """Score a player needs (with the partner above zero) for the team to win."""
    target_step: int = 10
    """How far the target rises when both teams qualify after the same hand ("extend")."""
    partner_must_be_positive: bool = True
    """A team qualifies only if the partner of the player at the target is above zero."""
    simultaneous_finish: SimultaneousFinish = "extend"
    """Both teams qualify after one hand: raise the target, or higher player/team total wins."""
    auto_claim: bool = False
    """Fast-forward a hand when the player on lead is certain to take every remaining trick."""
    move_time_limit_s: float = 10.0
    """Soft per-move time limit for bots in tournaments (reported, not enforced)."""
    move_hard_limit_s: float = 20.0
    """Hard per-move limit: a bot slower than this has its contract scored as missed."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Rules:
        """Rules with the given flags; a keyword that is no rules flag raises RulesError."""
        unknown = sorted(set(kwargs) - {f.name for f in fields(cls)})
        if unknown:
            raise RulesError(
                f"unknown rules flag(s) {unknown}: expected some of {sorted(f.name for f in fields(cls))}"
            )
        return super().__new__(cls)

    def __post_init__(self) -> None:
        def bad(name: str, expected: str) -> RulesError:
            value = getattr(self, name)
            return RulesError(f"Rules.{name}={short(value)} is invalid: expected {expected}")

        try:
            check_fields(self)  # types, from the annotations (the project's one config loader)
        except ConfigError as e:
            raise RulesError(f"Rules.{e}") from None
        if not 1 <= self.min_bid_base <= 13:
            raise bad("min_bid_base", "an integer from 1 to 13")
        if not 4 <= self.min_total_bids <= 104:
            raise bad("min_total_bids", "an integer from 4 to 104 (a reachable total)")
        if not 1 <= self.target <= 1000:
            raise bad("target", "an integer from 1 to 1000")
        if not 1 <= self.target_step <= 1000:
            raise bad("target_step", "an integer from 1 to 1000")
        for name in ("move_time_limit_s", "move_hard_limit_s"):
            if not 0 < getattr(self, name) <= MAX_MOVE_LIMIT_S:  # NaN and inf fail too
                raise bad(name, f"a positive number of seconds, at most {MAX_MOVE_LIMIT_S:,}")
        if self.move_hard_limit_s < self.move_time_limit_s:
            raise bad("move_hard_limit_s", f"at least move_time_limit_s={self.move_time_limit_s}")

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """The named preset ("wiki" or "pagat"), with optional flag overrides."""
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesError(
                f"unknown rules preset {short(name)}: expected one of {sorted(PRESETS)}"
            )
        return cls.from_dict({**PRESETS[name], **overrides})

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Rules:
        """Build from a mapping (a YAML section, say); an unknown key names itself in the error.

        A key ``preset`` selects the starting preset; other keys override its flags.
        """
        if not isinstance(values, Mapping):
            raise RulesError(
                f"rules {short(values)}: expected a mapping of rules flags (and a preset)"
            )
        values = dict(values)
        preset = values.pop("preset", None)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known, key=short)
        if unknown:
            raise RulesError(
                f"unknown rules flag(s) {short(unknown)}: expected some of {sorted(known)}"
            )
        if preset is not None:
            return cls.preset(preset, **values)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """All flags as a plain dict (round-trips through `from_dict`)."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some flags changed (validated like the constructor)."""
        return Rules.from_dict({**self.to_dict(), **changes})

    def game_differences(self, other: Rules) -> dict[str, tuple[Any, Any]]:
        """{flag: (self's value, other's value)} for the flags of the game itself (all but
        :data:`CONDUCT_FLAGS`) on which the two profiles differ; empty for the same game."""
        mine, theirs = self.to_dict(), other.to_dict()
        return {
            k: (v, theirs[k]) for k, v in mine.items() if k not in CONDUCT_FLAGS and theirs[k] != v
        }

    @property
    def name(self) -> str:
        """The preset this profile equals, or "custom"."""
        for preset_name, values in PRESETS.items():
            if Rules(**values) == self:
                return preset_name
        return "custom"

    # -- tables the engine vectorises -----------------------------------------------------------
    def value_table(self) -> np.ndarray:
        """Values of bids 0..13, shape (2, 14) int32: row 0 below the thirty rule, row 1 at or above."""
        base = np.array(_WIKI_VALUES if self.score_table == "wiki" else _PAGAT_VALUES, np.int32)
        table = np.stack([base, base.copy()])
        if self.five_six_face_value_from is not None:
            table[1, 5], table[1, 6] = 5, 6
        return table

    def total_weights(self) -> np.ndarray:
        """How much a bid of 0..13 adds to the bids total, shape (14,) int32."""
        bids = np.arange(14, dtype=np.int32)
        if self.total_counted_in == "points":
            return np.where(bids >= 7, 2 * bids, bids).astype(np.int32)
        return bids


PRESETS: dict[str, dict[str, Any]] = {
    "wiki": {},
    "pagat": {
        "min_bid_base": 1,
        "min_bid_escalates": False,
        # "required total 11 counted in points": a fixed 11, as in pagat's "41" rules.
        "escalate_total": False,
        "total_counted_in": "points",
        "score_table": "pagat",
        "five_six_face_value_from": None,
        "simultaneous_finish": "highest_team_total",
    },
}


def bid_value(bid: int, score_before: int, rules: Rules) -> int:
    """Points a bid of `bid` wins when made (and loses when missed), from the bidder's pre-hand score."""
    if not 1 <= bid <= 13:
        raise RulesError(f"bid {bid!r} is out of range: expected 1 to 13")
    thirty = rules.five_six_face_value_from
    if (
        rules.score_table == "wiki"
        and thirty is not None
        and score_before >= thirty
        and bid in (5, 6)
    ):
        return bid
    return (_WIKI_VALUES if rules.score_table == "wiki" else _PAGAT_VALUES)[bid]


def min_bid(score: int, rules: Rules) -> int:
    """Lowest bid allowed to a player whose score before the hand is `score`."""
    if not rules.min_bid_escalates:
        return rules.min_bid_base
    return min(13, max(rules.min_bid_base, score // 10))


def required_total(scores: Sequence[int], rules: Rules) -> int:
    """Total the four bids must reach (in tricks or points), from the four pre-hand scores."""
    if len(scores) != 4:
        raise RulesError(f"required_total needs 4 scores, got {len(scores)}")
    if not rules.escalate_total:
        return rules.min_total_bids
    return rules.min_total_bids + max(0, max(scores) // 10 - 2)


def bids_total(bids: Sequence[int], rules: Rules) -> int:
    """The four bids added up as the rules count them (bids of 7+ double when counted in points)."""
    weights = rules.total_weights()
    return int(sum(int(weights[b]) for b in bids))


def hand_is_played(bids: Sequence[int], scores: Sequence[int], rules: Rules) -> bool:
    """True if the hand is played after these four bids, False if it is thrown in."""
    if rules.five_to_run:
        return max(bids) >= 5
    return bids_total(bids, rules) >= required_total(scores, rules)


def team_qualifies(scores: Sequence[int], team: int, target: int, rules: Rules) -> bool:
    """A player of `team` (0: seats 0, 2; 1: seats 1, 3) has `target` and the partner is above 0."""
    a, b = scores[team], scores[team + 2]
    if rules.partner_must_be_positive:
        return (a >= target and b > 0) or (b >= target and a > 0)
    return a >= target or b >= target


def end_of_game(scores: Sequence[int], target: int, rules: Rules) -> tuple[int | None, int]:
    """Decide the game after a played hand, on the new scores.

    `target` is the target in force before this check (41, or raised by earlier simultaneous
    finishes). Returns ``(winner, target)``: winner 0 or 1 (team) or None to play on, and the
    target for the next hand.
    """
    base = rules.target
    q = [team_qualifies(scores, t, target, rules) for t in (0, 1)]
    if q[0] != q[1]:
        return (0 if q[0] else 1), target
    if q[0] and q[1]:
        if rules.simultaneous_finish == "extend":
            return None, target + rules.target_step
        if rules.simultaneous_finish == "highest_player":
            a, b = max(scores[0], scores[2]), max(scores[1], scores[3])
        else:
            a, b = scores[0] + scores[2], scores[1] + scores[3]
        return (None if a == b else (0 if a > b else 1)), target
    if target == base:
        return None, target
    # Raised target and nobody qualifies at it: fall back to the base target.
    q = [team_qualifies(scores, t, base, rules) for t in (0, 1)]
    if q[0] != q[1]:
        return (0 if q[0] else 1), target
    if q[0]:
        return None, target
    return None, base
