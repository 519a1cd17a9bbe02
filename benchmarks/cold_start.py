"""The first start after an install, when numba compiles every kernel, and a start after it.

    python benchmarks/cold_start.py                 # one cold start, then two warm ones
    python benchmarks/cold_start.py --warm 3

Each start is a fresh Python process, timed in three parts: the import of the engine; a
`Table` dealt and played through one hand (at each decision the middle one of its legal
actions, so that the hand is bid and played out, not thrown in); then
`gym.make("FourHundred-v0", opponents="heuristic")` with a reset and a step. The first start
gets an empty numba cache (`NUMBA_CACHE_DIR`, a new temporary folder), so it compiles what
it runs, as a first start after an install does; the next ones load that cache. The
kernels cached next to the modules are neither read nor touched. Prints each start's parts
and `uptime` before and after (other load on the machine slows every figure).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, time
t0 = time.perf_counter()
from fourhundred_env import Table
t1 = time.perf_counter()
table = Table(seed=1)
table.deal()
while table.legal_ids():
    legal = table.legal_ids()
    table.act(legal[len(legal) // 2])
t2 = time.perf_counter()
import gymnasium as gym
import fourhundred_env.envs
env = gym.make("FourHundred-v0", opponents="heuristic")
obs, info = env.reset(seed=1)
env.step(int(obs["action_mask"].nonzero()[0][0]))
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def start(cache_dir: str) -> list[float]:
    """One fresh process with `cache_dir` as numba's cache: seconds of its three parts."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the timed start failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "(no uptime)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warm", type=int, default=2, help="warm starts after the cold one")
    args = parser.parse_args()
    print(uptime())
    with tempfile.TemporaryDirectory(prefix="numba_cache_") as cache:
        for i in range(1 + args.warm):
            t = time.perf_counter()
            parts = start(cache)
            wall = time.perf_counter() - t
            kind = "cold" if i == 0 else "warm"
            print(
                f"{kind}: {sum(parts):.2f} s (import {parts[0]:.2f} + hand {parts[1]:.2f} "
                f"+ env {parts[2]:.2f}); process {wall:.2f} s"
            )
    print(uptime())


if __name__ == "__main__":
    main()
