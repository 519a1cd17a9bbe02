"""OpenSpiel Spades as the yardstick of the throughput benchmarks, and the timing loop they share.

Each ``*_fn(seed)`` returns a step function that does some work and returns how many units
(decisions, steps) it did; :func:`timed` runs one for a number of seconds. Needs the
``bench`` extra (``pip install -e '.[bench]'``); the factories raise ImportError without it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

Step = Callable[[], int]
SPADES_DECISIONS_PER_HAND = 56  # 4 bids and 52 cards


def timed(step: Step, seconds: float, warmup: int = 50) -> float:
    """Units per second of `step` (which returns the units it did) over `seconds`."""
    for _ in range(warmup):
        step()
    units = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(8):
            units += step()
        if time.perf_counter() >= deadline:
            break
    return units / (time.perf_counter() - start)


def spiel_python_fn(seed: int, name: str = "spades") -> Step:
    """Random games of OpenSpiel's game `name` (Spades: one hand) through its Python API."""
    import pyspiel

    game = pyspiel.load_game(name)
    rng = np.random.default_rng(seed)

    def step() -> int:  # one whole game
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
                n += 1
        return n

    return step


def spiel_cpp_fn(seed: int) -> Step:
    import pyspiel

    game = pyspiel.load_game("spades")
    bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(4)]
    count = [0]

    def step() -> int:  # one whole hand: 4 bids and 52 cards
        pyspiel.evaluate_bots(game.new_initial_state(), bots, seed + count[0])
        count[0] += 1
        return SPADES_DECISIONS_PER_HAND

    return step


def spiel_rl_fn(seed: int) -> Step:
    from open_spiel.python import rl_environment

    env = rl_environment.Environment("spades")
    rng = np.random.default_rng(seed)
    ts = [env.reset()]

    def step() -> int:
        t = ts[0]
        if t.last():
            ts[0] = env.reset()
            return 0
        legal = t.observations["legal_actions"][t.observations["current_player"]]
        ts[0] = env.step([legal[int(rng.random() * len(legal))]])
        return 1

    return step
