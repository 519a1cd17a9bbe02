"""A benchmark script under two checkouts, run in turn on the same machine: before and after.

    python experiments/compare_revisions.py --before /tmp/base --rounds 3 -- \\
        benchmarks/env_throughput.py --batch 4096 --repeats 3

`--before` is another checkout of the repository with its own `.venv` (``git worktree add
/tmp/base REV`` then ``make .venv/.installed`` there); "after" is this one. The script runs
in each checkout with that checkout's Python, alternately (after, before, after, ...), so
both see the same load. Each output line's rate (its first number before ".../s", else its
largest) is collected; the table shows, per line, the median of each side over the rounds
and their ratio (after / before).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
RATE = re.compile(r"(?<![\w.])(-?\d[\d,]*(?:\.\d+)?)\s*[\w ]*?/s\b")


def run(checkout: Path, argv: list[str]) -> list[str]:
    """The output lines of the script `argv[0]` (with its arguments) run in `checkout`."""
    python = checkout / ".venv" / "bin" / "python"
    out = subprocess.run([str(python), *argv], cwd=checkout, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return [
        line for line in out.stdout.splitlines()
        if NUMBER.search(line) and not line.startswith("#") and not line.startswith("|---")
    ]  # fmt: skip


def rate(line: str) -> float:
    """The line's first rate (a number before ".../s"), else its largest number."""
    found = RATE.search(line)
    if found:
        return float(found.group(1).replace(",", ""))
    return max(float(x.replace(",", "")) for x in NUMBER.findall(line))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", type=Path, required=True, help="the other checkout")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT ARGS...")
    args = p.parse_args()
    argv = [a for a in args.script if a != "--"]
    after = Path(__file__).resolve().parents[1]
    runs: dict[str, list[list[str]]] = {"after": [], "before": []}
    for r in range(args.rounds):
        for side, where in (("after", after), ("before", args.before)):
            t0 = time.perf_counter()
            runs[side].append(run(where, argv))
            print(f"# round {r + 1} {side}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"# {' '.join(argv)}; {args.rounds} rounds each, alternating; medians")
    print("| line | before | after | after / before |")
    print("|---|---:|---:|---:|")
    for i, line in enumerate(runs["after"][0]):
        cells = [c.strip() for c in line.strip("| ").split("|")]
        label = (f"{cells[0]} (B {cells[1]})" if len(cells) > 2 else NUMBER.sub("#", line))[:70]
        try:
            ma = statistics.median(rate(rounds[i]) for rounds in runs["after"])
            mb = statistics.median(rate(rounds[i]) for rounds in runs["before"])
        except IndexError:
            continue
        ratio = ma / mb if mb else float("nan")
        print(f"| {label} | {mb:,.0f} | {ma:,.0f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
