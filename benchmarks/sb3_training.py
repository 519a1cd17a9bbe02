"""MaskablePPO (sb3-contrib) on 400: decisions/s through DummyVecEnv and through the batched
adapter, and a short learning curve on the adapter.

    python benchmarks/sb3_training.py                      # both parts, ~15 min on 2 cores
    python benchmarks/sb3_training.py --part speed --repeats 3
    python benchmarks/sb3_training.py --part curve --minutes 8 --checkpoints 4

Speed: the same MaskablePPO settings (2,048 decisions per rollout, minibatches of 256, 4
epochs) learn `--timesteps` decisions on FourHundred-v0 and FourHundredBid-v0 (defaults:
learner at seat 0, random opponents), stepped by SB3's ``DummyVecEnv`` of 8 single-table
envs (``make_vec_env``) or by :class:`~fourhundred_env.envs.sb3.FourHundredSB3VecEnv` over
64 tables. Whole ``learn`` calls are timed: rollouts and updates.

Curve: MaskablePPO on the adapter (64 tables, one-hand episodes, learner at seat 0 against
`--opponents`) trains for `--minutes` of wall time; at 0 and at each of `--checkpoints`
evenly spaced times the policy (greedy, masked) plays `--matches` whole matches as the
partnership of seats 0 and 2 against ``random`` and against ``heuristic``
(:func:`~fourhundred_env.envs.sb3.match_results`, the same deals for every checkpoint).
Evaluation time is not counted as training time. Prints a Markdown table and the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import fourhundred_env.envs  # noqa: F401 - registers the ids
from fourhundred_env.envs.sb3 import make_sb3_vec_env, match_results

PPO = {"batch_size": 256, "n_epochs": 4, "seed": 0, "device": "cpu", "verbose": 0}


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def speed(env_id: str, timesteps: int) -> dict[str, float]:
    """Decisions per second of MaskablePPO.learn through DummyVecEnv(8) and the adapter(64)."""
    out = {}
    dummy = make_vec_env(env_id, n_envs=8, seed=0)
    batched = make_sb3_vec_env(env_id, num_envs=64, seed=0)
    for name, env, n_steps in (("DummyVecEnv x8", dummy, 256), ("adapter x64", batched, 32)):
        model = MaskablePPO("MultiInputPolicy", env, n_steps=n_steps, **PPO)
        model.learn(n_steps * env.num_envs)  # warm-up: compiled kernels, torch
        start = time.perf_counter()
        model.learn(timesteps, reset_num_timesteps=True)
        seconds = time.perf_counter() - start
        out[name] = model.num_timesteps / seconds
        env.close()
    return out


def curve(minutes: float, checkpoints: int, opponents: str, matches: int) -> list[dict]:
    """Win rates against random and heuristic at 0 and after each training period."""
    env = make_sb3_vec_env("FourHundred-v0", num_envs=64, seed=0, opponents=opponents,
                           episode="hand")  # fmt: skip
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, **PPO)
    rows = []
    trained = 0.0
    period = minutes * 60.0 / checkpoints
    for k in range(checkpoints + 1):
        if k:
            start = time.perf_counter()
            while time.perf_counter() - start < period:
                model.learn(64 * 32 * 4, reset_num_timesteps=False)
            trained += time.perf_counter() - start
        row = {"minutes": trained / 60.0, "decisions": model.num_timesteps}
        for opponent in ("random", "heuristic"):
            r = match_results(model, opponent, num_matches=matches, seed=10_000)
            row[opponent] = r["win_rate"]
            row[f"{opponent}_draws"] = r["draw_rate"]
        print(row, _load(), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--part", choices=("speed", "curve", "both"), default="both")
    p.add_argument("--timesteps", type=int, default=8192, help="decisions timed per run")
    p.add_argument("--repeats", type=int, default=3, help="speed runs; the median is shown")
    p.add_argument("--minutes", type=float, default=8.0, help="training time of the curve")
    p.add_argument("--checkpoints", type=int, default=4)
    p.add_argument("--opponents", default="heuristic", help="opponents while training")
    p.add_argument("--matches", type=int, default=200, help="evaluation matches per opponent")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch intra-op threads (1: on a busy 2-core machine, two threads made "
                        "MaskablePPO's updates 20x slower)")  # fmt: skip
    args = p.parse_args()
    torch.set_num_threads(args.torch_threads)
    print(time.strftime("%Y-%m-%d %H:%M"), _load(), f"{os.cpu_count()} cores,",
          f"torch threads {torch.get_num_threads()}", flush=True)  # fmt: skip
    if args.part in ("speed", "both"):
        print("| env | DummyVecEnv x8 | adapter x64 | speed-up |\n|---|---|---|---|")
        for env_id in ("FourHundred-v0", "FourHundredBid-v0"):
            runs = [speed(env_id, args.timesteps) for _ in range(args.repeats)]
            a = statistics.median(r["DummyVecEnv x8"] for r in runs)
            b = statistics.median(r["adapter x64"] for r in runs)
            print(f"| {env_id} | {a:,.0f} | {b:,.0f} | {b / a:.1f}x |", _load(), flush=True)
    if args.part in ("curve", "both"):
        rows = curve(args.minutes, args.checkpoints, args.opponents, args.matches)
        print("| training minutes | decisions | win vs random | win vs heuristic |")
        print("|---|---|---|---|")
        for r in rows:
            print(f"| {r['minutes']:.1f} | {r['decisions']:,} | {r['random']:.1%} "
                  f"| {r['heuristic']:.1%} |")  # fmt: skip
    print(time.strftime("%Y-%m-%d %H:%M"), _load(), flush=True)


if __name__ == "__main__":
    main()
