"""A benchmark script under two checkouts, run in turn on the same machine: before and after.

    python experiments/compare_revisions.py --before /tmp/base --rounds 3 -- \\
        benchmarks/env_throughput.py --batch 4096 --repeats 3

`--before` is another checkout of the repository with its own `.venv` (``git worktree add
/tmp/base REV`` then ``make .venv/.installed`` there); "after" is this one. The script runs
in each checkout with that checkout's Python, alternately (after, before, after, ...), so
both see the same load. Every number of each output line is collected; the table shows, per
line, the median of each side over the rounds and their ratio (after / before).
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


def run(checkout: Path, argv: list[str]) -> list[str]:
    """The output lines of the script `argv[0]` (with its arguments) run in `checkout`."""
    python = checkout / ".venv" / "bin" / "python"
    out = subprocess.run([str(python), *argv], cwd=checkout, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return [
        line for line in out.stdout.splitlines()
        if NUMBER.search(line) and not line.startswith("#") and not line.startswith("|---")
    ]  # fmt: skip


def figures(line: str) -> list[float]:
    return [float(x.replace(",", "")) for x in NUMBER.findall(line)]


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
            a = [figures(rounds[i]) for rounds in runs["after"]]
            b = [figures(rounds[i]) for rounds in runs["before"]]
        except IndexError:
            continue
        # the line's largest figure is its rate (a row's other numbers are sizes, ratios)
        k = max(range(len(a[0])), key=lambda j: a[0][j])
        ma = statistics.median(x[k] for x in a if len(x) > k)
        mb = statistics.median(x[k] for x in b if len(x) > k)
        ratio = ma / mb if mb else float("nan")
        print(f"| {label} | {mb:,.0f} | {ma:,.0f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
