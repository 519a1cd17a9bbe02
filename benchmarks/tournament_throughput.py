"""Tournament throughput: heuristic vs heuristic matches to 41 per second, end to end.

    python benchmarks/tournament_throughput.py                    # 2 workers, 5 repeats
    python benchmarks/tournament_throughput.py --workers 1 --matches 500 --repeats 3
    python benchmarks/tournament_throughput.py --backend ray      # the same jobs as Ray tasks

Each repeat runs a fresh tournament of the pairing heuristic vs heuristic (a mirror pairing:
two separate sets of four instances) through `fourhundred_tournament.tournament.run_tournament`, exactly as
`fourhundred tournament` does: duplicate matches, lockstep tables (all 1,000 games of a job at
once by default: refilling a smaller batch lengthens the job), worker processes, every
hand and match written to a fresh SQLite database, conduct checks on every move. Reported:
matches (games to 41) per second over the whole run, process start-up included, and the
decisions per second; medians over the repeats. Other load on the machine lowers the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from fourhundred_tournament.config import load_config
from fourhundred_tournament.tournament import run_tournament


def run_once(
    matches: int, workers: int, table_batch: int, chunk: int, seed: int, backend: str = "local"
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(
            None,
            {
                "agents": ["heuristic"], "mirror": True, "matches": matches, "seed": seed,
                "workers": workers, "table_batch": table_batch, "chunk_matches": chunk,
                "out_dir": tmp, "progress": False, "bootstrap": 0, "backend": backend,
            },
        )  # fmt: skip
        start = time.perf_counter()
        summary = run_tournament(cfg, overwrite=True)
        elapsed = time.perf_counter() - start
        con = sqlite3.connect(Path(tmp) / "results.sqlite")
        hands, decisions, unfinished = con.execute(
            "SELECT (SELECT COUNT(*) FROM hands), (SELECT SUM(decisions0 + decisions1 + "
            "decisions2 + decisions3) FROM hands), (SELECT COUNT(*) FROM matches WHERE finished = 0)"
        ).fetchone()
        con.close()
    return {
        "games": summary.games_played,
        "seconds": elapsed,
        "matches_per_s": summary.games_played / elapsed,
        "hands_per_s": hands / elapsed,
        "decisions_per_s": decisions / elapsed,
        "unfinished": unfinished,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=1000, help="duplicate matches (2x games)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--table-batch", type=int, default=1000)
    p.add_argument("--chunk-matches", type=int, default=500)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="ray: one local Ray instance of `workers` CPUs, started before the "
                   "runs (its start-up is printed, not counted)")  # fmt: skip
    args = p.parse_args()
    if args.backend == "ray":
        import logging

        import ray

        start = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, logging_level=logging.WARNING)
        print(f"# Ray started in {time.perf_counter() - start:.2f} s")
    print(
        f"# tournament throughput: heuristic v heuristic, {args.matches} duplicate matches "
        f"({2 * args.matches} games), backend={args.backend}, workers={args.workers}, "
        f"table_batch={args.table_batch}, "
        f"chunk={args.chunk_matches}; {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{platform.processor() or platform.machine()}"
    )
    runs = []
    for r in range(args.repeats):
        res = run_once(
            args.matches,
            args.workers,
            args.table_batch,
            args.chunk_matches,
            args.seed + r,
            args.backend,
        )
        runs.append(res)
        print(
            f"run {r + 1}: {res['games']} games in {res['seconds']:.2f} s: "
            f"{res['matches_per_s']:.1f} matches/s, {res['hands_per_s']:.0f} hands/s, "
            f"{res['decisions_per_s']:.0f} decisions/s, {res['unfinished']} unfinished"
        )
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(
        f"median of {len(runs)}: {med['matches_per_s']:.1f} matches/s "
        f"({med['hands_per_s']:.0f} hands/s, {med['decisions_per_s']:.0f} decisions/s; "
        f"{med['seconds']:.2f} s per run)"
    )


if __name__ == "__main__":
    main()
