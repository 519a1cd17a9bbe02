"""Rating math against known values: Wilson intervals, Bradley-Terry fits, Elo scale, bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fourhundred_tournament.ratings import (
    ELO_PER_NAT,
    bootstrap_bradley_terry,
    elo_from_theta,
    expected_score,
    fit_bradley_terry,
    pair_tables,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("score", "n", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),  # the textbook example (Wilson 1927; Newcombe 1998, table I)
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (81, 263, 0.2553, 0.3662),  # Newcombe 1998, example (81/263)
    ],
)
def test_wilson_interval_known_values(score: float, n: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(score, n)
    assert lo == pytest.approx(low, abs=1e-4)
    assert hi == pytest.approx(high, abs=1e-4)


def test_wilson_interval_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(5.5, 11)  # a draw counts half: 50%
    assert lo < 0.5 < hi and lo == pytest.approx(1 - hi)


def test_bradley_terry_recovers_exact_strengths() -> None:
    """Counts that are exactly expected under strengths 4:2:1 have that MLE."""
    # A beats B 2 of 3, B beats C 2 of 3, A beats C 4 of 5: E[wins] equal the wins at 4:2:1.
    wins, games = pair_tables(3, [(0, 1, 1), (0, 1, 1), (0, 1, 0), (1, 2, 1), (1, 2, 1),
                                  (1, 2, 0)] + [(0, 2, 1)] * 4 + [(0, 2, 0)])  # fmt: skip
    theta = fit_bradley_terry(wins, games)
    assert np.exp(theta - theta[2]) == pytest.approx([4.0, 2.0, 1.0], rel=1e-9)
    elo = elo_from_theta(theta)
    assert elo.mean() == pytest.approx(1500.0)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(2), rel=1e-9)  # 120.41


def test_elo_scale_of_a_75_percent_score() -> None:
    wins = np.array([[0.0, 75.0], [25.0, 0.0]])
    games = np.array([[0.0, 100.0], [100.0, 0.0]])
    theta = fit_bradley_terry(wins, games)
    gap = ELO_PER_NAT * (theta[0] - theta[1])
    assert gap == pytest.approx(400 * math.log10(3), rel=1e-9)  # 190.85 Elo
    elo = elo_from_theta(theta, anchor=1, base=1000.0)
    assert elo[1] == 1000.0
    assert expected_score(elo[0], elo[1]) == pytest.approx(0.75)


def test_prior_keeps_a_clean_sweep_finite_and_symmetric() -> None:
    wins = np.array([[0.0, 10.0], [0.0, 0.0]])
    games = np.array([[0.0, 10.0], [10.0, 0.0]])
    theta = fit_bradley_terry(wins, games, prior=1.0)
    # 10.5 of 11 with the virtual draw: theta gap = ln(10.5 / 0.5)
    assert theta[0] - theta[1] == pytest.approx(math.log(21.0), rel=1e-9)
    assert theta.sum() == pytest.approx(0.0, abs=1e-12)


def test_agents_without_games_get_zero_and_batching_matches_single_fits() -> None:
    w1, g1 = pair_tables(3, [(0, 1, 1.0), (0, 1, 0.5), (0, 1, 0.0), (0, 1, 1.0)])
    w2, g2 = pair_tables(3, [(0, 2, 1.0), (2, 1, 1.0), (0, 1, 0.0), (1, 2, 0.5)])
    single = [fit_bradley_terry(w, g, prior=0.5) for w, g in ((w1, g1), (w2, g2))]
    batched = fit_bradley_terry(np.stack([w1, w2]), np.stack([g1, g2]), prior=0.5)
    np.testing.assert_allclose(batched, np.stack(single), atol=1e-10)
    assert single[0][2] == 0.0  # agent 2 never played in the first set


def test_bootstrap_resamples_whole_duplicate_matches() -> None:
    """Units are resampled whole: a pairing of only split duplicate matches never moves."""
    rng = np.random.default_rng(0)
    splits = (0, 1, np.full(50, 1.0), np.full(50, 2.0))  # every duplicate match 1-1
    theta = bootstrap_bradley_terry([splits], 2, 200, rng)
    np.testing.assert_allclose(theta, 0.0, atol=1e-12)
    mixed = (0, 1, np.array([2.0] * 30 + [1.0] * 15 + [0.0] * 5), np.full(50, 2.0))
    theta = bootstrap_bradley_terry([mixed], 2, 500, rng)
    point = fit_bradley_terry(*pair_tables(2, [(0, 1, 1.0)] * 75 + [(0, 1, 0.0)] * 25))
    gaps = theta[:, 0] - theta[:, 1]
    lo, hi = np.percentile(gaps, [2.5, 97.5])
    assert lo < point[0] - point[1] < hi
    assert hi - lo > 0.2  # real spread


@pytest.mark.parametrize(("score", "n"), [(0, 1200), (1200, 1200), (0, 400), (400, 400), (3, 7)])
def test_wilson_interval_always_holds_the_rate(score: int, n: int) -> None:
    """A perfect or null record: the bound is exactly the rate, never rounded past it."""
    low, high = wilson_interval(score, n)
    assert low <= score / n <= high
    assert (low == 0.0) if score == 0 else (high == 1.0) if score == n else low < score / n < high
