"""Training throughput: learner decisions per second of self-play PPO, learning included.

    python benchmarks/train_throughput.py                    # configs/selfplay.yaml sizes
    python benchmarks/train_throughput.py --updates 6 --set num_tables=256

Runs a few PPO updates of the shipped self-play config (tables, rollout length, network,
opponents) in a temporary folder and reports, per update, decisions/s including learning
and of the rollout alone (environment + inference), as the median over the updates after
the first (which pays for imports and start-up). The bare environment is measured in the
same process for the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from fourhundred_env.envs.vector import FourHundredVectorEnv
from fourhundred_train.config import load_config
from fourhundred_train.ppo import Trainer


def bare_env_rate(num_tables: int, seconds: float = 3.0) -> float:
    """Random masked self-play through FourHundredVectorEnv, decisions/s."""
    env = FourHundredVectorEnv(num_tables, episode="hand")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        mask = obs["action_mask"].astype(bool)
        k = (rng.random(num_tables) * mask.sum(1)).astype(np.int64)
        actions = (np.cumsum(mask, axis=1) <= k[:, None]).sum(axis=1)
        obs, *_ = env.step(actions)
        steps += 1
    return steps * num_tables / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", default="configs/selfplay.yaml")
    p.add_argument("--updates", type=int, default=6, help="updates to time (the first is dropped)")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config overrides")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(args.config, [*args.set, "eval_every=0", "checkpoint_every=1000000"])
        trainer = Trainer(config, Path(tmp) / "run")
        per_update = trainer.decisions_per_update
        trainer.num_updates = args.updates
        history = trainer.train(progress=False)
    total = [h["charts/decisions_per_s"] for h in history[1:]]
    rollout = [h["charts/rollout_decisions_per_s"] for h in history[1:]]
    env = bare_env_rate(config.num_tables)
    print(f"# training throughput, {time.strftime('%Y-%m-%d')}, {args.config} "
          f"({config.num_tables} tables x {config.rollout_steps} steps = {per_update:,} "
          f"decisions per update, net {config.layers}x{config.hidden}, "
          f"{config.update_epochs} epochs, torch threads {config.torch_threads})")  # fmt: skip
    print(f"PPO, learning included : median {statistics.median(total):>9,.0f} decisions/s "
          f"(updates 2-{args.updates}: {', '.join(f'{x:,.0f}' for x in total)})")  # fmt: skip
    print(f"rollout only           : median {statistics.median(rollout):>9,.0f} decisions/s")
    print(f"bare env, random play  :        {env:>9,.0f} decisions/s "
          f"(PPO is {statistics.median(total) / env:.3f} of it)")  # fmt: skip


if __name__ == "__main__":
    main()
