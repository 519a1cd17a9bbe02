"""The compiled core's targets, each measured beside its yardstick in the same process.

    python benchmarks/core_targets.py                       # every row, 5 runs of 1.5 s each
    python benchmarks/core_targets.py --rows engine-4096 engine-1 --repeats 7

Rows (medians of `--repeats` runs of `--seconds`, after a warm-up):

- ``engine-4096`` / ``engine-1``: random legal play with masks, one ``Engine.step`` per
  decision round: ``legal_mask`` -> a uniformly random legal action per table drawn from the
  mask (``sample_legal_actions``) -> ``step`` (validated), dealing again after each hand and
  restarting finished matches. Compared with OpenSpiel Spades: its C++ ``evaluate_bots`` with
  uniform random bots (B = 4096 row) and its Python loop over C++ states (B = 1 row).
- ``single-heuristic``: ``gym.make("FourHundred-v0", opponents="heuristic")``, the learner at
  seat 0 drawing random legal actions from the observation's mask, learner steps/s (three
  heuristic decisions and one observation per step). Compared with OpenSpiel's
  ``rl_environment.Environment("spades")`` stepping random legal actions, observations
  (``info_state``) included, steps/s.
- ``vector-f32`` / ``vector-i8``: ``FourHundredVectorEnv(4096)`` self-play, float32 or int8
  observations, actions from the returned masks: decisions/s.
- ``bid-single``: ``gym.make("FourHundredBid-v0")``, episodes/s (one bid, the hand played
  out by the default random policy).
- ``aec``: the PettingZoo AEC env, agent steps/s through ``last``/``step``.

The tournament row is ``benchmarks/tournament_throughput.py``; training is
``benchmarks/train_throughput.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import fourhundred_env.envs  # noqa: F401 - registers the Gymnasium ids
from fourhundred_env import Engine, Phase, Rules
from fourhundred_env.envs import FourHundredVectorEnv
from fourhundred_env.envs.vector import sample_legal_actions

Step = Callable[[], int]


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


def engine_fn(batch: int, seed: int) -> Step:
    engine = Engine(Rules())
    rng = np.random.default_rng(seed)
    state = engine.init(batch, seed=seed)
    engine.deal(state)
    next_match = [batch]

    def step() -> int:
        mask = engine.legal_mask(state)
        actions = sample_legal_actions(mask, rng)
        if engine.step(state, actions):  # some hands ended
            done = np.flatnonzero(state.phase >= Phase.HAND_OVER)
            over = done[state.phase[done] == Phase.MATCH_OVER]
            if over.size:
                engine.new_match(state, over, np.arange(next_match[0], next_match[0] + over.size))
                next_match[0] += over.size
            engine.deal(state, done)
        return batch

    return step


def single_fn(seed: int, env_id: str, **kwargs: object) -> Step:
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(seed)
    obs = [env.reset(seed=seed)[0]]

    def step() -> int:
        legal = np.flatnonzero(obs[0]["action_mask"])
        o, _, terminated, truncated, _ = env.step(int(legal[int(rng.random() * legal.size)]))
        obs[0] = env.reset()[0] if terminated or truncated else o
        return 1

    return step


def bid_single_fn(seed: int) -> Step:
    env = gym.make("FourHundredBid-v0")
    rng = np.random.default_rng(seed)
    obs = [env.reset(seed=seed)[0]]

    def step() -> int:
        legal = np.flatnonzero(obs[0]["action_mask"])
        env.step(int(legal[int(rng.random() * legal.size)]))  # one bid: the episode is over
        obs[0] = env.reset()[0]
        return 1

    return step


def vector_fn(seed: int, dtype: str) -> Step:
    env = FourHundredVectorEnv(4096, observation_dtype=dtype)
    rng = np.random.default_rng(seed)
    obs = [env.reset(seed=seed)[0]]

    def step() -> int:
        obs[0] = env.step(sample_legal_actions(obs[0]["action_mask"], rng))[0]
        return 4096

    return step


def aec_fn(seed: int) -> Step:
    from fourhundred_env.envs.pettingzoo_env import env as aec_env

    aec = aec_env()
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def step() -> int:
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.reset()
            return 0
        legal = np.flatnonzero(obs["action_mask"])
        aec.step(int(legal[int(rng.random() * legal.size)]))
        return 1

    return step


def spiel_python_fn(seed: int) -> Step:
    import pyspiel

    game = pyspiel.load_game("spades")
    rng = np.random.default_rng(seed)

    def step() -> int:  # one whole hand
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
        return 56

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


# name -> (our step factory, unit, yardstick name, yardstick factory, target ratio)
ROWS: dict[str, tuple[Callable[[int], Step], str, str | None, Callable[[int], Step] | None, float]] = {
    "engine-4096": (lambda s: engine_fn(4096, s), "decisions/s", "OpenSpiel Spades C++ evaluate_bots", spiel_cpp_fn, 8.0),
    "engine-1": (lambda s: engine_fn(1, s), "decisions/s", "OpenSpiel Spades Python loop", spiel_python_fn, 2.0),
    "single-heuristic": (lambda s: single_fn(s, "FourHundred-v0", opponents="heuristic"), "learner steps/s", "OpenSpiel rl_environment Spades", spiel_rl_fn, 1.0),
    "vector-f32": (lambda s: vector_fn(s, "float32"), "decisions/s", None, None, 0.0),
    "vector-i8": (lambda s: vector_fn(s, "int8"), "decisions/s", None, None, 0.0),
    "bid-single": (bid_single_fn, "episodes/s", None, None, 0.0),
    "aec": (aec_fn, "agent steps/s", None, None, 0.0),
}  # fmt: skip


def median_rate(make: Callable[[int], Step], args: argparse.Namespace) -> float:
    return statistics.median(timed(make(args.seed + i), args.seconds) for i in range(args.repeats))


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    p.add_argument("--seconds", type=float, default=1.5, help="length of one timed run")
    p.add_argument("--repeats", type=int, default=5, help="runs per figure (the median is shown)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    load = os.getloadavg()
    print(
        f"# core targets, {time.strftime('%Y-%m-%d %H:%M')}, numpy {np.__version__}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{load[0]:.2f}; median of {args.repeats} runs of {args.seconds} s"
    )
    print("| what | fourhundred | yardstick (same run) | ratio | target |")
    print("|---|---:|---|---:|---:|")
    for name in args.rows:
        ours_fn, unit, ref_name, ref_fn, target = ROWS[name]
        ours = median_rate(ours_fn, args)
        if ref_fn is None:
            print(f"| {name} | {ours:,.0f} {unit} | | | |", flush=True)
            continue
        try:
            ref = median_rate(ref_fn, args)
        except ImportError:
            print(f"| {name} | {ours:,.0f} {unit} | (open_spiel not installed) | | |", flush=True)
            continue
        print(
            f"| {name} | {ours:,.0f} {unit} | {ref_name} {ref:,.0f} | x{ours / ref:.2f} "
            f"| x{target:g} |",
            flush=True,
        )
    load = os.getloadavg()
    print(f"# load average at the end {load[0]:.2f}")


if __name__ == "__main__":
    main()
