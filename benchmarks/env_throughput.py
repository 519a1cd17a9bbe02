"""Environment throughput: FourHundredVectorEnv against the bare engine, in one process.

    python benchmarks/env_throughput.py                    # B = 4096 and 256, every env
    python benchmarks/env_throughput.py --batch 4096 --repeats 7 --seconds 2

Every figure is the median of `--repeats` timed runs of `--seconds` each, after a warm-up.
Rows (whole matches, self-play, every step validated by the engine, uniformly random legal
actions everywhere so that every row plays the same kind of game):

- engine: ``Engine.random_actions`` (uniform over the legal actions, as the env rows) +
  ``Engine.step``, dealing again after each hand and restarting finished matches: the
  ceiling.
- engine + observations: the same, plus ``seat_view`` and ``encode_observation`` of the
  seat to play at every table: what the observations cost.
- FourHundredVectorEnv: ``env.step`` with observations, random masked actions drawn from
  ``observation["action_mask"]`` by ``sample_legal_actions`` (uniform over legal actions,
  bids included), autoreset NEXT_STEP; a decision is one table's action. Again with
  ``copy=False`` (one observation buffer that every step overwrites), and with
  ``observation_dtype="int8"`` (the same facts unscaled, a quarter of the bytes).
- FourHundred-v0 (``gym.make``, wrappers included) and its unwrapped env: steps/s of the
  learner at seat 0, three random opponents answering inside each step.
- FourHundredBid-v0 vector: bidding episodes/s (one learner bid, the hand played out by the
  random policy).
- PettingZoo AEC env: agent steps/s through ``agent_iter``/``last``/``step``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import fourhundred_env.envs  # noqa: F401 - registers the Gymnasium ids
from fourhundred_env import Engine, Phase, Rules
from fourhundred_env.envs import FourHundredBidVectorEnv, FourHundredVectorEnv
from fourhundred_env.envs.vector import sample_legal_actions
from fourhundred_env.observation import encode_observation
from fourhundred_env.view import seat_view


def timed(step: Callable[[], int], seconds: float, warmup: int = 20) -> float:
    """Calls `step` (returns units done) for `seconds` after `warmup` calls: units per second."""
    for _ in range(warmup):
        step()
    units = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        units += step()
    return units / (time.perf_counter() - start)


def engine_step_fn(batch: int, seed: int, observe: bool) -> Callable[[], int]:
    engine = Engine(Rules())
    rng = np.random.default_rng(seed)
    state = engine.init(batch, seed=seed)
    engine.deal(state)
    next_match = [batch]

    def step() -> int:
        if observe:
            mask = engine.legal_mask(state)
            encode_observation(seat_view(engine, state, legal_mask=mask))
        actions = engine.random_actions(state, rng)  # uniform, as sample_legal_actions
        engine.step(state, actions)
        done = np.flatnonzero(state.phase >= Phase.HAND_OVER)
        if done.size:
            over = done[state.phase[done] == Phase.MATCH_OVER]
            if over.size:
                ids = np.arange(next_match[0], next_match[0] + over.size)
                engine.new_match(state, over, ids)
                next_match[0] += over.size
            engine.deal(state, done)
        return int(np.count_nonzero(actions >= 0))

    return step


def vector_step_fn(
    batch: int, seed: int, copy: bool = True, dtype: str = "float32"
) -> Callable[[], int]:
    env = FourHundredVectorEnv(batch, copy=copy, observation_dtype=dtype)
    rng = np.random.default_rng(seed)
    obs = [env.reset(seed=seed)[0]]

    def step() -> int:
        o, _, _, _, _ = env.step(sample_legal_actions(obs[0]["action_mask"], rng))
        obs[0] = o
        return batch

    return step


def single_step_fn(seed: int, unwrapped: bool, **options: object) -> Callable[[], int]:
    """FourHundred-v0 (`options` for gym.make), random legal learner actions: 1 per step."""
    env = gym.make("FourHundred-v0", **options)
    if unwrapped:
        env = env.unwrapped
    rng = np.random.default_rng(seed)
    obs = [env.reset(seed=seed)[0]]

    def step() -> int:
        legal = np.flatnonzero(obs[0]["action_mask"])
        o, _, terminated, truncated, _ = env.step(int(legal[int(rng.random() * legal.size)]))
        obs[0] = env.reset()[0] if terminated or truncated else o
        return 1

    return step


def bid_step_fn(batch: int, seed: int) -> Callable[[], int]:
    env = FourHundredBidVectorEnv(batch)
    rng = np.random.default_rng(seed)
    obs = [env.reset(seed=seed)[0]]

    def step() -> int:
        o, _, terminated, _, _ = env.step(sample_legal_actions(obs[0]["action_mask"], rng))
        obs[0] = o
        return int(terminated.sum())

    return step


def aec_step_fn(seed: int) -> Callable[[], int] | None:
    try:
        from fourhundred_env.envs.pettingzoo_env import env as aec_env
    except ImportError:
        return None
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


def median_rate(
    make: Callable[[int], Callable[[], int] | None], args: argparse.Namespace
) -> float | None:
    rates = []
    for i in range(args.repeats):
        step = make(args.seed + i)
        if step is None:
            return None
        rates.append(timed(step, args.seconds))
    return statistics.median(rates)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--batch", type=int, nargs="+", default=[4096, 256])
    p.add_argument("--seconds", type=float, default=1.5, help="length of one timed run")
    p.add_argument("--repeats", type=int, default=5, help="runs per figure (the median is shown)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-single", action="store_true", help="only the batched rows")
    args = p.parse_args()

    print(
        f"# env throughput, {time.strftime('%Y-%m-%d')}, numpy {np.__version__}, "
        f"gymnasium {gym.__version__}, Python {platform.python_version()}, {platform.machine()}; "
        f"median of {args.repeats} runs of {args.seconds}s"
    )
    print("| what | B | rate | vs engine |")
    print("|---|---:|---:|---:|")
    for b in args.batch:
        bare = median_rate(lambda s, b=b: engine_step_fn(b, s, observe=False), args)
        with_obs = median_rate(lambda s, b=b: engine_step_fn(b, s, observe=True), args)
        env = median_rate(lambda s, b=b: vector_step_fn(b, s), args)
        reused = median_rate(lambda s, b=b: vector_step_fn(b, s, copy=False), args)
        raw = median_rate(lambda s, b=b: vector_step_fn(b, s, dtype="int8"), args)
        assert bare and with_obs and env and reused and raw
        rows = [
            ("engine (random_actions + step)", bare),
            ("engine + observations (seat_view + encode)", with_obs),
            ("FourHundredVectorEnv, random masked actions", env),
            ("FourHundredVectorEnv, same, copy=False", reused),
            ('FourHundredVectorEnv, same, observation_dtype="int8"', raw),
        ]
        for name, rate in rows:
            print(f"| {name} | {b} | {rate:,.0f} decisions/s | {rate / bare:.2f} |")
        bid = median_rate(lambda s, b=b: bid_step_fn(b, s), args)
        print(f"| FourHundredBid-v0 vector (SAME_STEP) | {b} | {bid:,.0f} bidding episodes/s | |")
    if args.skip_single:
        return
    wrapped = median_rate(lambda s: single_step_fn(s, unwrapped=False), args)
    raw = median_rate(lambda s: single_step_fn(s, unwrapped=True), args)
    print(f"| FourHundred-v0 (gym.make, wrappers) | 1 | {wrapped:,.0f} learner steps/s | |")
    print(f"| FourHundred-v0 unwrapped | 1 | {raw:,.0f} learner steps/s | |")
    aec = median_rate(aec_step_fn, args)
    if aec is not None:
        print(f"| PettingZoo AEC env | 1 | {aec:,.0f} agent steps/s | |")


if __name__ == "__main__":
    main()
