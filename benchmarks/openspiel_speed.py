"""400 inside OpenSpiel against OpenSpiel's Spades, in the same process: random simulations
(whole games, a hand each) per second.

    python benchmarks/openspiel_speed.py --repeats 5 --seconds 3

Both games are played by the same two loops, uniformly random over chance outcomes and legal
actions: OpenSpiel's Python API (``state.chance_outcomes``, ``legal_actions``,
``apply_action``), and OpenSpiel's C++ ``evaluate_bots`` with its uniform random bots (for
400, a Python game, C++ calls back into our Python state at every step). A game of
``fourhundred`` is one hand (the default ``episode=hand``): 52 chance nodes and up to 56
decisions, as a game of ``spades``. Reports the median of the runs. Needs the ``openspiel``
extra.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import pyspiel

import fourhundred_env.envs.openspiel  # noqa: F401 - registers "fourhundred"

sys.path.insert(0, str(Path(__file__).parent))
from yardsticks import spiel_python_fn, timed

GAMES = ("fourhundred", "spades")


def python_loop(name: str, seed: int, games: list[int]):
    play = spiel_python_fn(seed, name)  # the yardstick's loop, on either game

    def step() -> int:  # one whole game
        games[0] += 1
        return play()

    return step


def cpp_loop(name: str, seed: int, games: list[int]):
    game = pyspiel.load_game(name)
    bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(4)]

    def step() -> int:
        pyspiel.evaluate_bots(game.new_initial_state(), bots, seed + games[0])
        games[0] += 1
        return 1

    return step


def measure(make, name: str, seconds: float, seed: int) -> tuple[float, float]:
    """(games/s, decisions/s) of one timed run (decisions/s: the Python loop only)."""
    games = [0]
    step = make(name, seed, games)
    for _ in range(5):
        step()
    games[0] = 0
    start = time.perf_counter()
    units = timed(step, seconds, warmup=0)
    elapsed = time.perf_counter() - start
    return games[0] / elapsed, units


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per row (default: 5)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds a run (default: 3.0)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first run (default: 0)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, open_spiel {pyspiel.__version__ if hasattr(pyspiel, '__version__') else '?'}")  # fmt: skip
    print("| loop | game | games/s (median) | decisions/s | runs |")
    print("|---|---|---:|---:|---|")
    for label, make in (("Python API", python_loop), ("C++ evaluate_bots", cpp_loop)):
        for name in GAMES:
            runs = [measure(make, name, args.seconds, args.seed + i) for i in range(args.repeats)]
            games = statistics.median(r[0] for r in runs)
            decisions = statistics.median(r[1] for r in runs) if make is python_loop else None
            shown = f"{decisions:,.0f}" if decisions is not None else ""
            print(f"| {label} | {name} | {games:,.1f} | {shown} | "
                  f"{', '.join(f'{r[0]:,.0f}' for r in runs)} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
