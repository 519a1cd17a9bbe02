"""Rating math for tournaments: Wilson intervals, Bradley-Terry fits on the Elo scale, bootstrap.

Results are scores in [0, 1] per game (1 win, 0.5 draw, 0 loss); a draw here is a match stopped
unfinished at the `max_hands` cap. The Bradley-Terry model says ``P(i beats j) = 1 / (1 +
exp(theta_j - theta_i))``; on the Elo scale ``elo = 400 / ln(10) * theta``, so a 75% expected
score is a 190.8-point gap. Fits are maximum likelihood (MAP with `prior` virtual draws per
pairing that was played, which keeps ratings finite when one side won every game).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

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


def posterior_covariance(theta: np.ndarray, games: np.ndarray, prior: float = 0.0) -> np.ndarray:
    """(A, A) covariance of the Bradley-Terry log-strengths `theta` (A,) under the normal
    approximation of their posterior at the fit (the inverse of the log-posterior's curvature,
    with the `prior` virtual draws per pairing played that the fit used; BayesElo's
    "covariance"). The gauge is the fit's: strengths centred to mean 0 over the agents that
    played (the Moore-Penrose inverse of the curvature, whose null space is that shift)."""
    games = np.asarray(games, np.float64)
    games = games + prior * (games > 0)
    diff = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    w = games * p * (1.0 - p)
    info = np.diag(w.sum(axis=1)) - w  # the negative Hessian: a weighted graph Laplacian
    return np.linalg.pinv(info, hermitian=True)


def rate_agents(
    labels: Sequence[str],
    pair_games: Mapping[tuple[str, str], Sequence[tuple[int, float]]],
    *,
    prior: float,
    bootstrap: int,
    seed: int,
    anchor: str | None = None,
) -> dict[str, dict[str, float]]:
    """Bradley-Terry Elo of each of `labels` ("elo") with its 95% interval ("low", "high");
    NaN for an agent without games.

    `pair_games`: per pairing (a, b), the (match_id, score of a) of each game; pairings may
    hold different numbers of games. The interval is the wider, at each end, of two:
    percentiles of `bootstrap` resamples of duplicate matches within each pairing (which
    keeps the two games of a deal together), and the normal approximation of the posterior
    with the `prior` virtual draws per pairing (:func:`posterior_covariance`). The bootstrap
    alone collapses when every resampled match has the same result (a sweep: ``[1823,
    1823]``); the posterior's width is then set by the few games there are. `anchor`: the
    agent pinned at 1500 (its interval is then 0 wide); None: the mean is 1500.
    """
    index = {a: i for i, a in enumerate(labels)}
    n = len(labels)
    wins = np.zeros((n, n))
    games = np.zeros((n, n))
    groups = []
    for (a, b), results in sorted(pair_games.items()):
        i, j = index[a], index[b]
        s = sum(x for _, x in results)
        wins[i, j] += s
        wins[j, i] += len(results) - s
        games[i, j] += len(results)
        games[j, i] += len(results)
        by_match: dict[int, list[float]] = {}
        for m, x in results:
            by_match.setdefault(m, []).append(x)
        groups.append((i, j, np.array([sum(v) for v in by_match.values()]),
                       np.array([len(v) for v in by_match.values()], np.float64)))  # fmt: skip
    at = index[anchor] if anchor is not None and anchor in index else None
    played = games.sum(axis=1) > 0
    theta = fit_bradley_terry(wins, games, prior=prior)
    elo = elo_from_theta(theta, at)
    cov = posterior_covariance(theta, games, prior)
    if at is None:  # the mean over all labels is the base: Var(theta_i - mean) in nats^2
        centre = np.eye(n) - np.full((n, n), 1.0 / n)
    else:
        centre = np.eye(n) - np.eye(n)[at][None, :]
    sd = ELO_PER_NAT * np.sqrt(np.maximum(np.diag(centre @ cov @ centre.T), 0.0))
    low, high = elo - Z95 * sd, elo + Z95 * sd
    if bootstrap > 0 and groups:
        rng = np.random.default_rng([seed, 0xE10])
        boot = elo_from_theta(bootstrap_bradley_terry(groups, n, bootstrap, rng, prior=prior), at)
        low = np.minimum(low, np.percentile(boot, 2.5, axis=0))
        high = np.maximum(high, np.percentile(boot, 97.5, axis=0))
    nan = float("nan")

    def col(x: np.ndarray) -> dict[str, float]:
        return {a: float(x[i]) if played[i] else nan for a, i in index.items()}

    return {"elo": col(elo), "low": col(low), "high": col(high), "sd": col(sd)}


RATING_METHOD = (
    "Bradley-Terry MLE with {prior:g} virtual draw(s) per pairing played, {per_nat:.1f} Elo "
    "per nat; 95% intervals: the wider, at each end, of {bootstrap} bootstrap resamples of "
    "duplicate matches within pairings (2.5/97.5 percentiles) and the posterior's normal "
    "approximation (as BayesElo), so that a sweep of few matches keeps a wide interval"
)
"""The footnote that says how :func:`rate_agents` rates (``.format(prior=, per_nat=,
bootstrap=)``)."""
