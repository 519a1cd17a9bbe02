"""The match-win estimate's compiled network against two baselines, side by side.

    python experiments/matchwin_speed.py --repeats 30

The estimate (agents/value/matchwin.py) is a small ReLU MLP (17 -> 64 -> 64 -> 1) that the
search's play-outs and the bidder's features read many times a decision. Timed here, on the
same rows in one process (median of the repeats): the kernel `first_team_wins_many`; the same
MLP compiled one hidden unit at a time (each unit's sum over its inputs in the inner loop, the
plain way to write it); and numpy's float32 matmul. The kernel and the one-unit loop must give
the same bits (each unit sums its bias and then its inputs in order in both); numpy's matmul
sums in another order, so it is a yardstick of speed, not a drop-in.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numba import njit

from fourhundred_agents.value.matchwin import NUM_FEATURES, MatchWin, features, first_team_wins_many


@njit(cache=False, nogil=True)
def _one_unit_at_a_time(x, w1, b1, w2, b2, w3, b3, out):
    h1 = np.empty(w1.shape[1], np.float32)
    h2 = np.empty(w2.shape[1], np.float32)
    for j in range(x.shape[0]):
        for k in range(h1.shape[0]):
            acc = b1[k]
            for i in range(x.shape[1]):
                acc += x[j, i] * w1[i, k]
            h1[k] = acc if acc > 0 else 0.0
        for k in range(h2.shape[0]):
            acc = b2[k]
            for i in range(h1.shape[0]):
                acc += h1[i] * w2[i, k]
            h2[k] = acc if acc > 0 else 0.0
        z = b3
        for i in range(h2.shape[0]):
            z += h2[i] * w3[i]
        out[j] = 1.0 / (1.0 + np.exp(-z))


def _numpy(x, w1, b1, w2, b2, w3, b3, out):
    h = np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0)
    out[:] = 1.0 / (1.0 + np.exp(-(h @ w3 + b3)))


def _median_s(fn, args, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="timings per size (median)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    model = MatchWin()
    rng = np.random.default_rng(args.seed)
    print(f"load {os.getloadavg()[0]:.2f}; {args.repeats} repeats, medians")
    print(
        f"{'rows':>8} {'kernel':>10} {'one unit':>10} {'numpy':>10} {'x one unit':>10} {'x numpy':>8}"
    )
    for rows in (13, 208, 1_664, 100_000):  # a bid's own rows; a bid's joint rows; a batch
        scores = rng.integers(-80, 70, size=(rows, 4))
        x = features(scores, rng.choice([41, 51, 61], rows), rng.integers(0, 4, rows))
        assert x.shape == (rows, NUM_FEATURES)
        out = {name: np.empty(rows) for name in ("kernel", "unit", "numpy")}
        call = (x, *model.weights)
        first_team_wins_many(*call, out["kernel"])  # compiled before timing
        _one_unit_at_a_time(*call, out["unit"])
        if not np.array_equal(out["kernel"], out["unit"]):
            raise SystemExit(
                "the kernel and the one-unit loop differ: they should give the same bits"
            )
        repeats = args.repeats if rows < 10_000 else max(3, args.repeats // 10)
        t_kernel = _median_s(first_team_wins_many, (*call, out["kernel"]), repeats)
        t_unit = _median_s(_one_unit_at_a_time, (*call, out["unit"]), repeats)
        t_numpy = _median_s(_numpy, (*call, out["numpy"]), repeats)
        print(f"{rows:>8} {t_kernel * 1e6:>8.1f}us {t_unit * 1e6:>8.1f}us {t_numpy * 1e6:>8.1f}us "
              f"{t_unit / t_kernel:>10.2f} {t_numpy / t_kernel:>8.2f}")  # fmt: skip
    print("the kernel and the one-unit loop: the same bits at every size")


if __name__ == "__main__":
    main()
