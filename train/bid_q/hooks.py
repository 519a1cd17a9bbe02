"""Your own reward for the bid trainers, without editing the source.

``fourhundred train bidding_q reward=mypackage.rewards:bonus`` values every play-out by
``bonus(outcome)`` instead of the trainer's own value. `outcome` is a :class:`BidOutcome`:
the hand as it ended after the bid being valued (n play-outs at once), with the trainer's
own value of it (``value``: the match-win change in percentage points, plus ``per_point``,
or the team's points). The function returns an (n,) array of numbers, the value each
play-out is fitted to (larger is better for the bidding seat); the network then learns to
bid what your reward pays for. Name it ``package.module:function`` (or
``package.module.function``; a module of the current folder is found, as ``python -m``
finds it), ``path/to/file.py:function``, or by the name of an entry point in the group
``fourhundred.bid_rewards``.

PPO bidding (``fourhundred train bidding reward=mypackage.rewards:bonus``) takes the same
function: there each outcome is a hand of a learner's bid as it was played in the rollout
(and each play-out of the rollout values, ``rollout_share``), and ``value`` is what the
trainer would have paid for it (``match_value_points`` x the change of the team's match-win
estimate when ``match_value_points`` > 0, else the team's points); what the function returns
is the bidding seat's reward for the hand, before ``reward_scale`` (train/objectives.py,
``BidReward``).

The reward is checked before any work: it must import, be callable, and give n finite
numbers for a sample of n outcomes; anything else is one line, a ``sys.exit`` in it and a
check longer than ``CHECK_SECONDS`` too (agents/hooks.py's `guarded`). It values the play-outs on
the true deal (``worlds: 0``) and, with ``worlds > 0``, every play-out of every world of
the bid search (the bid's value is then the mean of your reward over the worlds, weighted
as the search weights them); ``value`` is the same in both (the match-win change, not the
estimate after the hand the search itself uses).

An example, ``examples/bid_reward.py``, pays a bonus for bold bids made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fourhundred_agents.hooks import first_line, guarded, import_named
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules

ENTRY_POINT_GROUP = "fourhundred.bid_rewards"
"""The entry-point group of installed packages' bid rewards (``reward=NAME``)."""


@dataclass(frozen=True)
class BidOutcome:
    """n play-outs, each a hand played to its end after one bid of the bidding seat."""

    rules: Rules
    seat: np.ndarray
    """(n,) int64: the bidding seat (its team: seat and seat + 2)."""
    bid: np.ndarray
    """(n,) int64: the bid being valued (1 to 13; 0: asking for a redeal)."""
    bids: np.ndarray
    """(n, 4) int64: every seat's bid as the hand was played (by seat)."""
    tricks: np.ndarray
    """(n, 4) int64: tricks each seat took."""
    made: np.ndarray
    """(n, 4) bool: each seat made its bid (False in a hand thrown in)."""
    hand_points: np.ndarray
    """(n, 4) int64: each seat's score change in the hand."""
    thrown_in: np.ndarray
    """(n,) bool: the hand was thrown in (no one scored)."""
    scores_before: np.ndarray
    """(n, 4) int64: the scores before the hand, by seat."""
    target: np.ndarray
    """(n,) int64: the target in force."""
    value: np.ndarray
    """(n,) float64: the trainer's own value of the play-out (its ``value`` setting)."""


Reward = Callable[[BidOutcome], np.ndarray]


def load_reward(text: str) -> Reward:
    """The reward named `text` (see the module docstring), checked on a sample of outcomes;
    ConfigError in one line when it does not import, is not callable or answers wrongly."""
    fn = _import(text)
    if not callable(fn):
        raise ConfigError(f"reward={text!r} is a {type(fn).__name__}: expected a function")
    sample = sample_outcome()
    try:
        with guarded("reward", text, "on its sample"):  # sys.exit, or an endless loop
            out = np.asarray(fn(sample), np.float64)
    except ConfigError:
        raise
    except Exception as e:  # the user's code: any failure is one line naming it
        raise ConfigError(
            f"reward={text!r} failed on a sample of {sample.seat.size} outcomes "
            f"({type(e).__name__}: {first_line(e)}): expected "
            "a function of a BidOutcome"
        ) from None
    check_values(text, out, sample.seat.size)
    return fn


def hand_outcome(
    rules: Rules,
    seat: np.ndarray,
    bids: np.ndarray,
    tricks: np.ndarray,
    hand_points: np.ndarray,
    thrown_in: np.ndarray,
    scores_before: np.ndarray,
    target: np.ndarray,
    value: np.ndarray,
) -> BidOutcome:
    """The outcome of n hands played to their end, valued for the bidding `seat` (n,) of
    each: every seat's `bids`, `tricks` and `hand_points` (n, 4), `thrown_in` (n,), the
    `scores_before` (n, 4) and `target` (n,) of the hand, and the trainer's own `value` (n,)."""
    bids = np.asarray(bids, np.int64)
    tricks = np.asarray(tricks, np.int64)
    thrown = np.asarray(thrown_in, np.bool_)
    seat = np.asarray(seat, np.int64)
    return BidOutcome(
        rules=rules, seat=seat, bid=bids[np.arange(seat.size), seat], bids=bids, tricks=tricks,
        made=(tricks >= bids) & ~thrown[:, None], hand_points=np.asarray(hand_points, np.int64),
        thrown_in=thrown, scores_before=np.asarray(scores_before, np.int64),
        target=np.asarray(target, np.int64), value=np.asarray(value, np.float64),
    )  # fmt: skip


def reward_values(text: str, fn: Reward, outcome: BidOutcome) -> np.ndarray:
    """(n,) float64: the reward `fn` (named `text`) of the n outcomes, checked as at the
    start (ConfigError in one line unless n finite numbers)."""
    out = np.asarray(fn(outcome), np.float64)
    check_values(text, out, outcome.seat.size)
    return out


def check_values(text: str, out: np.ndarray, n: int) -> None:
    """ConfigError unless `out` is n finite numbers (what a reward must return)."""
    if out.shape != (n,) or not np.isfinite(out).all():
        what = f"shape {out.shape}" if out.shape != (n,) else "values that are not finite"
        raise ConfigError(
            f"reward={text!r} returned {what} for {n} outcomes: expected ({n},) finite numbers, "
            "one value per play-out"
        )


def _import(text: str) -> object:
    return import_named(text, "reward", ENTRY_POINT_GROUP)


def sample_outcome(rules: Rules | None = None) -> BidOutcome:
    """Two play-outs of made-up values, to check a reward before any work."""
    bids = np.array([[4, 3, 2, 3], [6, 2, 3, 2]], np.int64)
    tricks = np.array([[5, 3, 1, 4], [4, 3, 4, 2]], np.int64)
    made = tricks >= bids
    points = np.where(made, bids, -bids)
    return BidOutcome(
        rules=rules or Rules(), seat=np.array([0, 0], np.int64), bid=bids[:, 0].copy(),
        bids=bids, tricks=tricks, made=made, hand_points=points,
        thrown_in=np.zeros(2, np.bool_), scores_before=np.zeros((2, 4), np.int64),
        target=np.full(2, 41, np.int64), value=np.array([1.5, -2.0]),
    )  # fmt: skip
