"""Self-play throughput with rollouts in this process and on 1 and 2 Ray rollout actors.

    python benchmarks/ray_rollouts.py                          # selfplay.yaml, smaller updates
    python benchmarks/ray_rollouts.py --updates 5 --set num_tables=256 rollout_steps=64

Runs a few PPO updates of the shipped self-play config (network, opponents, objectives) at
`--set` sizes in a temporary folder, once per backend: ``local`` (the trainer collects),
``ray`` with 1 actor and with 2 (a local Ray instance with as many CPUs; each actor one torch
thread). The learner uses one torch thread throughout, so the only difference is where the
rollouts are played. Per update: the rollout's time (collection, weights broadcast and the
parts' transfer included), the learning step's time and learner decisions/s in all; medians
over the updates after the first (which pays for start-up: Ray, imports, compiled code).
Prints a Markdown table and the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from fourhundred_train.config import load_config
from fourhundred_train.ppo import Trainer


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def run(config_path: str, sets: list[str], updates: int, backend: list[str]) -> dict[str, float]:
    """Median seconds per update of the rollout and the learning, and decisions/s."""
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(
            config_path,
            [*sets, *backend, "torch_threads=1", "eval_every=0", "checkpoint_every=1000000"],
        )
        trainer = Trainer(config, Path(tmp) / "run")
        n = trainer.decisions_per_update
        trainer.num_updates = updates
        history = trainer.train(progress=False)
    rollout_s = [n / h["charts/rollout_decisions_per_s"] for h in history[1:]]
    total_s = [n / h["charts/decisions_per_s"] for h in history[1:]]
    return {
        "decisions": n,
        "rollout_s": statistics.median(rollout_s),
        "learn_s": statistics.median(t - r for t, r in zip(total_s, rollout_s, strict=True)),
        "rollout_dps": n / statistics.median(rollout_s),
        "dps": n / statistics.median(total_s),
    }


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", default="configs/selfplay.yaml")
    p.add_argument("--updates", type=int, default=5, help="updates per backend (first dropped)")
    p.add_argument("--set", nargs="*", default=["num_tables=128", "rollout_steps=64"],
                   metavar="KEY=VALUE", help="config overrides")  # fmt: skip
    args = p.parse_args()
    print(_load())
    rows = []
    for name, backend in (
        ("local (this process)", ["backend=local"]),
        ("ray, 1 rollout actor", ["backend=ray", "rollout_actors=1"]),
        ("ray, 2 rollout actors", ["backend=ray", "rollout_actors=2"]),
    ):
        r = run(args.config, args.set, args.updates, backend)
        rows.append((name, r))
        print(f"{name}: {r}  ({_load()})", flush=True)
    n = rows[0][1]["decisions"]
    print(f"\n{n} learner decisions per update, {args.config} with {' '.join(args.set)}\n")
    print("| rollouts | rollout s | learn s | rollout decisions/s | decisions/s in all |")
    print("|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['rollout_s']:.2f} | {r['learn_s']:.2f} | "
              f"{r['rollout_dps']:,.0f} | {r['dps']:,.0f} |")  # fmt: skip
    print(_load())


if __name__ == "__main__":
    main()
