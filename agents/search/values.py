"""What a finished play-out is worth to the searching seat's team (compiled): its points in
the hand, or the match-win estimate of the scores after it (1 or 0 when the hand ends the
match), plus `per_point` times the points; and the same for each made/missed pattern of the
four contracts, the leaves of the exact endgame."""

from __future__ import annotations

import numpy as np

from fourhundred_agents.search.endgame import LEAF_PATTERNS
from fourhundred_agents.value.matchwin import first_team_wins, write_features
from fourhundred_env import kernels as K
from fourhundred_env._jit import helper, kernel


@helper
def team_value(t: np.ndarray, seat: int, points: bool, per_point: float, w1: np.ndarray,
               b1: np.ndarray, w2: np.ndarray, b2: np.ndarray, w3: np.ndarray, b3: float,
               x: np.ndarray, h1: np.ndarray, h2: np.ndarray) -> float:  # fmt: skip
    """What the table record t, its hand over, is worth to `seat`'s team: its points in the
    hand (`points`), else 1 or 0 if the match is over, else the match-win estimate; plus
    `per_point` times its points in the hand."""
    team = seat & 1
    pts = np.float64(t["hand_points"][team] + t["hand_points"][team + 2])
    if points:
        return pts
    if t["phase"] == K.MATCH_OVER:
        return (1.0 if t["winner"] == team else 0.0) + per_point * pts
    dealer = np.int64(t["dealer"])
    write_features(t["scores"], np.int64(t["target"]), dealer, x)
    p = first_team_wins(x, w1, b1, w2, b2, w3, b3, h1, h2)
    return (p if ((dealer + 1) & 1) == team else 1.0 - p) + per_point * pts


@kernel
def playout_values(s: np.ndarray, seats: np.ndarray, points: bool, per_point: float,
                   w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray,
                   w3: np.ndarray, b3: float, out: np.ndarray) -> None:  # fmt: skip
    """`out` (n,): `team_value` of each finished table of s for seats (n,)."""
    x = np.empty(w1.shape[0], np.float32)
    h1 = np.empty(w1.shape[1], np.float32)
    h2 = np.empty(w2.shape[1], np.float32)
    for j in range(s.shape[0]):
        out[j] = team_value(s[j], seats[j], points, per_point, w1, b1, w2, b2, w3, b3, x, h1, h2)


@kernel
def pattern_values(s: np.ndarray, seats: np.ndarray, points: bool, per_point: float,
                   rules: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray,
                   w3: np.ndarray, b3: float, out: np.ndarray) -> None:  # fmt: skip
    """`out` (n, 16): for table record j of s (in card play) and seats[j], the value to its team
    of each made/missed pattern of the four contracts (bit s: seat s makes it), as the hand
    would end: the scores, the end of the match and the match-win estimate after it, plus
    `per_point` times the team's points (or those points alone, `points`)."""
    r = rules[0]
    x = np.empty(w1.shape[0], np.float32)
    h1 = np.empty(w1.shape[1], np.float32)
    h2 = np.empty(w2.shape[1], np.float32)
    scores = np.zeros(4, np.int64)
    for j in range(s.shape[0]):
        t = s[j]
        team = np.int64(seats[j]) & 1
        dealer = (np.int64(t["dealer"]) + 1) & 3
        for p in range(LEAF_PATTERNS):
            pts = 0
            for k in range(4):
                before = np.int64(t["scores_before"][k])
                value = K.bid_value(np.int64(t["bids"][k]), before, r)
                made = (p >> k) & 1 == 1 and not t["forfeit"][k]
                delta = value if made else -value
                scores[k] = before + delta
                if (k & 1) == team:
                    pts += delta
            if points:
                out[j, p] = pts
                continue
            winner, target = K.end_of_game(scores, np.int64(t["target"]), r)
            if winner >= 0:
                out[j, p] = (1.0 if winner == team else 0.0) + per_point * pts
            else:
                write_features(scores, target, dealer, x)
                v = first_team_wins(x, w1, b1, w2, b2, w3, b3, h1, h2)
                out[j, p] = (v if ((dealer + 1) & 1) == team else 1.0 - v) + per_point * pts
