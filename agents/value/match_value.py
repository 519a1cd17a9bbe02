"""What a hand did to each team's chance of winning the match, by the match-win estimate.

:func:`team_values` reads the estimate (:mod:`fourhundred_agents.value.matchwin`) for every seat's team, and
:func:`hand_value_change` the change a hand made: V(after) - V(before), where V(before) is
the estimate with this hand's dealer to deal and V(after) the estimate after it (the deal
passed on, the target of the next hand), or 1 and 0 when the hand ended the match. A hand
thrown in changes only the dealer. The bidding trainer's ``match_value_points`` reward
(train/objectives.py) and the bidding report (``fourhundred bid-eval --report``) use it.
"""

from __future__ import annotations

import numpy as np

from fourhundred_agents.value.matchwin import MatchWin
from fourhundred_env.engine import Engine


def team_values(
    model: MatchWin,
    scores: np.ndarray,
    target: np.ndarray,
    dealer: np.ndarray,
    winner: np.ndarray | None = None,
) -> np.ndarray:
    """(n, 4) float64: for each seat, the estimated chance that its team wins the match from
    scores (n, 4) with `dealer` (n,) to deal next and `target` (n,) in force; where
    `winner` (n,) int is a team (not -1), the match is over and the value is 1 or 0."""
    dealer = np.asarray(dealer, np.int64) % 4
    first = model.first_team(scores, target, dealer)  # the team of seat dealer + 1
    team = np.arange(4)[None, :] % 2
    first_team = ((dealer + 1) % 2)[:, None]
    p = np.where(team == first_team, first[:, None], 1.0 - first[:, None])
    if winner is not None:
        winner = np.asarray(winner)[:, None]
        p = np.where(winner < 0, p, (team == winner).astype(np.float64))
    return p


def hand_value_change(
    engine: Engine,
    model: MatchWin,
    before: np.ndarray,
    points: np.ndarray,
    target: np.ndarray,
    dealer: np.ndarray,
    played: np.ndarray,
) -> np.ndarray:
    """(n, 4) float64: V(after) - V(before) of each seat's team for n hands: pre-hand scores
    `before` (n, 4), the hand's `points` (n, 4) (0 for a hand thrown in), the `target` (n,)
    in force, the hand's `dealer` (n,) and whether it was `played` (n,) bool."""
    before = np.asarray(before, np.int64).reshape(-1, 4)
    after = before + np.asarray(points, np.int64).reshape(-1, 4)
    target = np.asarray(target, np.int64)
    dealer = np.asarray(dealer, np.int64)
    winner, next_target = engine.end_of_game(after, target)
    played = np.asarray(played, bool)
    winner = np.where(played, winner, -1)
    next_target = np.where(played, next_target, target)
    v_after = team_values(model, after, next_target, dealer + 1, winner)
    return v_after - team_values(model, before, target, dealer)
