"""What a custom bid reward costs in the bid search's worlds: `world_values` of the same
positions with the preset's settings, with and without ``reward=`` (the example's bonus),
alternating in one process; medians of 3 (BENCHMARKS.md, "Training a bidder in ten minutes").

    .venv/bin/python experiments/bid_reward_cost.py [--positions 6144] [--config bidding_q_short]
"""

import argparse
import time

import numpy as np

from fourhundred_env import Engine, Rules
from fourhundred_train.bid_q import QBidder, load_bid_q_config, record_positions, world_values

REWARD = "reward=examples/bid_reward.py:big_bid_bonus"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=6144)
    p.add_argument("--config", default="configs/bidding_q_short.yaml")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    engine = Engine(Rules())
    positions = record_positions(engine, QBidder(engine), args.positions, 7, 512, 200, 0)
    seconds: dict[str, list[float]] = {"search": [], "reward": []}
    for _ in range(args.repeats):
        for name, extra in (("search", []), ("reward", [REWARD])):
            config = load_bid_q_config(args.config, extra)
            start = time.perf_counter()
            world_values(engine, positions, config)
            seconds[name].append(time.perf_counter() - start)
            print(f"{name:7s} {seconds[name][-1]:6.2f} s", flush=True)
    med = {name: float(np.median(v)) for name, v in seconds.items()}
    print(f"medians: search {med['search']:.1f} s, with the reward {med['reward']:.1f} s "
          f"(x{med['reward'] / med['search']:.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
