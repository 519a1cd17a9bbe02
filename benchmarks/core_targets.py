"""The compiled core's targets, each measured beside its yardstick in the same process.

    python benchmarks/core_targets.py                       # every row, 5 runs of 1.5 s each
    python benchmarks/core_targets.py --rows engine-4096 engine-1 --repeats 7

Rows (medians of `--repeats` runs of `--seconds`, after a warm-up):

- ``engine-4096`` / ``engine-1``: random legal play with masks, one ``Engine.step`` per
  decision round: a uniformly random legal action per table drawn from the mask
  (``sample_legal_actions``) -> ``step`` (validated), which also writes the next mask
  (``mask_out=``), dealing again after each hand, restarting finished matches and taking the
  new hands' masks with ``legal_mask``. Compared with OpenSpiel Spades: its C++
  ``evaluate_bots`` with uniform random bots (B = 4096 row) and its Python loop over C++
  states (B = 1 row: ``legal_actions``, a draw, ``apply_action``).
- ``engine-1-calls``: the same at B = 1 with the mask taken by its own ``legal_mask`` call
  before each decision (three calls a decision, as before ``mask_out``).
- ``engine-1-floor``: a diagnostic, not a way to use the engine: the ``engine-1`` loop with
  the draw (``rng.random(1)``) kept but every Python check skipped, the compiled entry points
  of the sampler and the step called directly. What one table costs with no argument checks
  at all: the ceiling of any loop that draws with numpy and steps from Python.
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
import sys
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np

import fourhundred_env.envs  # noqa: F401 - registers the Gymnasium ids
from fourhundred_env import Engine, Phase, Rules
from fourhundred_env.engine import State
from fourhundred_env.envs import FourHundredVectorEnv
from fourhundred_env.envs.vector import sample_legal_actions

sys.path.insert(0, str(Path(__file__).parent))  # the sibling scripts, however this one is run
from env_throughput import aec_step_fn, single_step_fn
from yardsticks import Step, spiel_cpp_fn, spiel_python_fn, spiel_rl_fn, timed


def next_hands(engine: Engine, state: State, mask: np.ndarray, next_match: list[int]) -> None:
    """After some hands ended: deal the next ones, restart finished matches (new match ids
    from `next_match`), and take the new hands' masks."""
    done = np.flatnonzero(state.phase >= Phase.HAND_OVER)
    over = done[state.phase[done] == Phase.MATCH_OVER]
    if over.size:
        engine.new_match(state, over, np.arange(next_match[0], next_match[0] + over.size))
        next_match[0] += over.size
    engine.deal(state, done)
    engine.legal_mask(state, out=mask)


def engine_fn(batch: int, seed: int, mask_out: bool = True) -> Step:
    engine = Engine(Rules())
    rng = np.random.default_rng(seed)
    state = engine.init(batch, seed=seed)
    engine.deal(state)
    next_match = [batch]
    mask = engine.legal_mask(state)

    def step() -> int:
        if not mask_out:
            engine.legal_mask(state, out=mask)
        actions = sample_legal_actions(mask, rng)
        if engine.step(state, actions, mask_out=mask if mask_out else None):  # hands ended
            next_hands(engine, state, mask, next_match)
        return batch

    return step


def engine_floor_fn(seed: int) -> Step:
    from fourhundred_env import engine as E  # the private entry points: a diagnostic only

    engine = Engine(Rules())
    rng = np.random.default_rng(seed)
    state = engine.init(1, seed=seed)
    engine.deal(state)
    next_match = [1]
    mask = engine.legal_mask(state)
    engine.step(state, sample_legal_actions(mask, rng), mask_out=mask)  # fills the tables
    sample, step_fn = E._SAMPLE[mask.dtype], E._STEP[mask.dtype]
    records, rules = state.records, engine._r

    def step() -> int:
        actions = np.empty(1, np.int64)
        sample(mask, rng.random(1), 0, actions)
        if step_fn(records, actions, E._ALL, True, rules, mask) < -1:  # hands ended
            next_hands(engine, state, mask, next_match)
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


# name -> (our step factory, unit, yardstick name, yardstick factory, target ratio)
ROWS: dict[str, tuple[Callable[[int], Step], str, str | None, Callable[[int], Step] | None, float]] = {
    "engine-4096": (lambda s: engine_fn(4096, s), "decisions/s", "OpenSpiel Spades C++ evaluate_bots", spiel_cpp_fn, 8.0),
    "engine-1": (lambda s: engine_fn(1, s), "decisions/s", "OpenSpiel Spades Python loop", spiel_python_fn, 2.0),
    "engine-1-floor": (engine_floor_fn, "decisions/s", "OpenSpiel Spades Python loop", spiel_python_fn, 2.0),
    "engine-1-calls": (lambda s: engine_fn(1, s, mask_out=False), "decisions/s", "OpenSpiel Spades Python loop", spiel_python_fn, 2.0),
    "single-heuristic": (lambda s: single_step_fn(s, False, opponents="heuristic"), "learner steps/s", "OpenSpiel rl_environment Spades", spiel_rl_fn, 1.0),
    "vector-f32": (lambda s: vector_fn(s, "float32"), "decisions/s", None, None, 0.0),
    "vector-i8": (lambda s: vector_fn(s, "int8"), "decisions/s", None, None, 0.0),
    "bid-single": (bid_single_fn, "episodes/s", None, None, 0.0),
    "aec": (aec_step_fn, "agent steps/s", None, None, 0.0),
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
