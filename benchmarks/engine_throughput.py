"""Engine throughput: random legal play, whole hands and whole matches, B = 1, 256, 4096.

    python benchmarks/engine_throughput.py                 # all batch sizes, both modes
    python benchmarks/engine_throughput.py --batch 4096 --repeats 7 --seconds 2

Random players bid uniformly among their legal bids up to 4 (uniform bids up to 13 never
finish a match) and play uniformly random legal cards; every step is validated. "hands":
each table plays one hand from zero scores, then starts a new match; "matches": tables play
whole matches to 41, dealing again after each hand. Reports the median of several runs.

When `open_spiel` is installed (`pip install -e '.[bench]'`), the same run measures
OpenSpiel's Spades with uniformly random players, through its Python API and through its
C++ `evaluate_bots`, and prints our throughput as a ratio of those.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from fourhundred_env import Engine, Phase, Rules

sys.path.insert(0, str(Path(__file__).parent))  # the sibling scripts, however this one is run
from yardsticks import SPADES_DECISIONS_PER_HAND, Step, spiel_cpp_fn, spiel_python_fn, timed

HAND_OVER, MATCH_OVER = int(Phase.HAND_OVER), int(Phase.MATCH_OVER)


def run_engine(batch: int, seconds: float, mode: str, seed: int) -> dict[str, float]:
    """One timed run; returns decisions/s, hands/s and matches/s."""
    engine = Engine(Rules())
    rng = np.random.default_rng(seed)
    state = engine.init(batch, seed=seed)
    engine.deal(state)
    next_match = batch
    decisions = hands = matches = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(16):
            actions = engine.random_actions(state, rng, max_bid=4)
            decisions += batch  # every table has a decision pending: hands are dealt at once
            if engine.step(state, actions):  # some hands ended
                done = (state.phase >= HAND_OVER).nonzero()[0]
                hands += done.size
                restart = done if mode == "hands" else done[state.phase[done] == MATCH_OVER]
                matches += int(np.count_nonzero(state.phase[done] == MATCH_OVER))
                if restart.size:
                    engine.new_match(
                        state, restart, np.arange(next_match, next_match + restart.size)
                    )
                    next_match += restart.size
                engine.deal(state, done)
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {
        "decisions/s": decisions / elapsed,
        "hands/s": hands / elapsed,
        "matches/s": matches / elapsed,
    }


def run_open_spiel(
    make: Callable[[int], Step], seconds: float, seed: int
) -> dict[str, float] | None:
    """OpenSpiel Spades through a yardstick step function (None without open_spiel)."""
    try:
        rate = timed(make(seed), seconds)
    except ImportError:
        return None
    return {"decisions/s": rate, "hands/s": rate / SPADES_DECISIONS_PER_HAND}


def median_of(runs: int, fn: Callable[[int], dict[str, float] | None]) -> dict[str, float] | None:
    results = [fn(i) for i in range(runs)]
    if results[0] is None:
        return None
    return {k: statistics.median(r[k] for r in results) for k in results[0]}  # type: ignore[index]


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--batch", type=int, nargs="+", default=[1, 256, 4096])
    p.add_argument("--modes", nargs="+", default=["hands", "matches"], choices=["hands", "matches"])
    p.add_argument("--seconds", type=float, default=1.5, help="length of one timed run")
    p.add_argument("--repeats", type=int, default=5, help="runs per figure (the median is shown)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    print(f"# engine throughput, {time.strftime('%Y-%m-%d')}, numpy {np.__version__}, "
          f"Python {platform.python_version()}, {platform.machine()}; "
          f"median of {args.repeats} runs of {args.seconds}s")  # fmt: skip
    rows = []
    for mode in args.modes:
        for b in args.batch:
            r = median_of(
                args.repeats,
                lambda i, b=b, mode=mode: run_engine(b, args.seconds, mode, args.seed + i),
            )
            assert r is not None
            rows.append((f"fourhundred {mode}", b, r))
            print(f"{'fourhundred ' + mode:<28} B={b:<5} {r['decisions/s']:>12,.0f} decisions/s "
                  f"{r['hands/s']:>10,.0f} hands/s {r['matches/s']:>8,.1f} matches/s", flush=True)  # fmt: skip
    py = median_of(
        args.repeats, lambda i: run_open_spiel(spiel_python_fn, args.seconds, args.seed + i)
    )
    if py is None:
        print(
            "open_spiel not installed: pip install -e '.[bench]' to compare with OpenSpiel Spades"
        )
        return
    cpp = median_of(
        args.repeats, lambda i: run_open_spiel(spiel_cpp_fn, args.seconds, args.seed + i)
    )
    assert cpp is not None
    for name, r in (("OpenSpiel spades, Python", py), ("OpenSpiel spades, C++ bots", cpp)):
        print(
            f"{name:<28} {'':<7} {r['decisions/s']:>12,.0f} decisions/s {r['hands/s']:>10,.0f} hands/s"
        )
    print("\nratio of our decisions/s to OpenSpiel's (same run):")
    for name, b, r in rows:
        print(f"  {name:<20} B={b:<5} x{r['decisions/s'] / py['decisions/s']:>7.2f} vs Python loop, "
              f"x{r['decisions/s'] / cpp['decisions/s']:>6.2f} vs C++ bots")  # fmt: skip


if __name__ == "__main__":
    main()
