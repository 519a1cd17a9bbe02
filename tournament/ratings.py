"""Rating math for tournaments: Wilson intervals, Bradley-Terry fits on the Elo scale, bootstrap.

Results are scores in [0, 1] per game (1 win, 0.5 draw, 0 loss); a draw here is a match stopped
unfinished at the `max_hands` cap. The Bradley-Terry model says ``P(i beats j) = 1 / (1 +
exp(theta_j - theta_i))``; on the Elo scale ``elo = 400 / ln(10) * theta``, so a 75% expected
score is a 190.8-point gap. Fits are maximum likelihood (MAP with `prior` virtual draws per
pairing that was played, which keeps ratings finite when one side won every game).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ELO_PER_NAT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


def wilson_interval(score: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion: `score` successes (may be fractional) out of `n`.

    Returns (low, high); (0, 1) when n == 0.
    """
    if n <= 0:
        return 0.0, 1.0
    p = min(max(score / n, 0.0), 1.0)
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    # the interval always holds p; rounding would otherwise leave 0 or 1 just outside it
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def fit_bradley_terry(
    wins: np.ndarray,
    games: np.ndarray,
    prior: float = 0.0,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> np.ndarray:
    """Bradley-Terry log-strengths by Newton's method, batched.

    wins: (..., A, A) float, ``wins[i, j]`` = score of i against j (draws count half);
    games: (..., A, A) float, games between i and j (symmetric). `prior` adds that many
    virtual draws to every pairing with games. Returns theta (..., A) float64, centred to mean 0
    over the agents that played. Agents that never played get 0.
    """
    wins = np.asarray(wins, np.float64)
    games = np.asarray(games, np.float64)
    a = wins.shape[-1]
    played = games > 0
    wins = wins + 0.5 * prior * played
    games = games + prior * played
    total = wins.sum(axis=-1)  # (..., A)
    active = games.sum(axis=-1) > 0
    theta = np.zeros(wins.shape[:-1], np.float64)
    eye = np.eye(a)
    for _ in range(max_iter):
        diff = theta[..., :, None] - theta[..., None, :]
        p = 1.0 / (1.0 + np.exp(-diff))  # P(i beats j)
        grad = total - (games * p).sum(axis=-1)
        w = games * p * (1.0 - p)
        hess = w - eye * w.sum(axis=-1)[..., None]  # negative semidefinite, null space ones
        # Fix the gauge (and isolated agents) by adding the all-ones / identity directions.
        ones = active[..., :, None] & active[..., None, :]
        system = -hess + ones / max(a, 1) + eye * (~active)[..., None]
        step = np.linalg.solve(system, grad[..., None])[..., 0]
        step = np.clip(step, -3.0, 3.0)  # damp the first steps on lopsided data
        theta = theta + step
        if np.max(np.abs(step)) < tol:
            break
    theta = np.where(active, theta, 0.0)
    num = np.maximum(active.sum(axis=-1, keepdims=True), 1)
    return np.where(active, theta - theta.sum(axis=-1, keepdims=True) / num, 0.0)


def elo_from_theta(
    theta: np.ndarray, anchor: int | None = None, base: float = 1500.0
) -> np.ndarray:
    """Elo-scale ratings (..., A): mean `base`, or agent `anchor` pinned at `base`."""
    elo = ELO_PER_NAT * np.asarray(theta, np.float64)
    if anchor is None:
        return elo - elo.mean(axis=-1, keepdims=True) + base
    return elo - elo[..., anchor : anchor + 1] + base


def expected_score(elo_a: float, elo_b: float) -> float:
    """Expected score of a against b from Elo ratings."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def pair_tables(
    num_agents: int, results: Sequence[tuple[int, int, float]]
) -> tuple[np.ndarray, np.ndarray]:
    """(wins (A, A), games (A, A)) from (i, j, score of i) game results."""
    wins = np.zeros((num_agents, num_agents))
    games = np.zeros((num_agents, num_agents))
    for i, j, s in results:
        wins[i, j] += s
        wins[j, i] += 1.0 - s
        games[i, j] += 1
        games[j, i] += 1
    return wins, games


def bootstrap_bradley_terry(
    groups: Sequence[tuple[int, int, np.ndarray, np.ndarray]],
    num_agents: int,
    num_samples: int,
    rng: np.random.Generator,
    prior: float = 0.0,
) -> np.ndarray:
    """Bradley-Terry log-strengths on bootstrap resamples: (num_samples, A) float64.

    groups: per pairing ``(i, j, scores, games)``, `scores` (n,) float the score of i in each
    resampling unit (a duplicate match: its two games) and `games` (n,) the games in it.
    Units are resampled with replacement within each pairing, so both games of a deal sequence
    move together and the duplicate structure is kept.
    """
    wins = np.zeros((num_samples, num_agents, num_agents))
    games = np.zeros((num_samples, num_agents, num_agents))
    for i, j, unit_scores, unit_games in groups:
        n = len(unit_scores)
        if n == 0:
            continue
        units = np.stack(
            [np.asarray(unit_scores, np.float64), np.asarray(unit_games, np.float64)], 1
        )
        # Resampling n units with replacement = multinomial counts over the distinct outcomes.
        outcomes, inverse = np.unique(units, axis=0, return_inverse=True)
        freq = np.bincount(inverse.reshape(-1), minlength=len(outcomes)) / n
        draws = rng.multinomial(n, freq, size=num_samples).astype(np.float64)  # (S, outcomes)
        s = draws @ outcomes[:, 0]
        g = draws @ outcomes[:, 1]
        wins[:, i, j] += s
        wins[:, j, i] += g - s
        games[:, i, j] += g
        games[:, j, i] += g
    return fit_bradley_terry(wins, games, prior=prior)
