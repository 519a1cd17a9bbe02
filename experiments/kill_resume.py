"""Kill a tournament with SIGKILL at random moments, again and again, then let it finish:
its database must hold the rows of a straight run (timing columns aside).

    .venv/bin/python experiments/kill_resume.py --kills 100 --seed 1

Each round starts ``fourhundred tournament`` on the same out folder (a rerun resumes) and
kills it after a random delay; rounds that finish before the kill count as finished, not as
kills. The comparison is row by row over every table but the timing columns.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "fourhundred_cli"]
TABLES = ("matches", "hands")


def tournament(out: Path, matches: int) -> list[str]:
    """The command line of the tournament under test, writing to `out`."""
    return [*CLI, "tournament", "--agents", "heuristic", "minbid", "random", "--matches",
            str(matches), "--seed", "5", "--workers", "1", "--chunk-matches", "2", "--out",
            str(out), "--no-progress"]  # fmt: skip


def rows(db: Path) -> dict[str, list[tuple]]:
    """Every row of the result tables, without the timing columns, in a fixed order."""
    con = sqlite3.connect(db)
    try:
        out = {}
        for table in TABLES:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
            keep = [c for c in cols if "seconds" not in c]
            out[table] = con.execute(
                f"SELECT {', '.join(keep)} FROM {table} ORDER BY {', '.join(keep)}"
            ).fetchall()
        return out
    finally:
        con.close()


def main() -> int:
    """Run the straight tournament, then the killed one; print the comparison."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=100, help="SIGKILLs to deliver (default 100)")
    p.add_argument("--matches", type=int, default=12, help="duplicate matches per pairing")
    p.add_argument("--max-delay", type=float, default=3.0, help="longest delay before a kill, s")
    p.add_argument("--seed", type=int, default=1, help="seed of the delays")
    args = p.parse_args()
    rng = random.Random(args.seed)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        straight, killed = Path(tmp) / "straight", Path(tmp) / "killed"
        t0 = time.perf_counter()
        subprocess.run(tournament(straight, args.matches), check=True, env=env, cwd=ROOT,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        print(f"straight run: {time.perf_counter() - t0:.1f} s")
        expected = rows(straight / "results.sqlite")
        db = killed / "results.sqlite"
        kills = verified = pending = 0
        while True:
            proc = subprocess.Popen(tournament(killed, args.matches), env=env, cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
            try:
                if kills >= args.kills:
                    raise subprocess.TimeoutExpired(proc.args, 0)  # the last rerun: no kill
                proc.wait(timeout=rng.uniform(0.05, args.max_delay))
            except subprocess.TimeoutExpired:
                if kills < args.kills:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    kills += 1
                    pending += 1
                    continue
                proc.wait()
            if proc.returncode != 0:
                print(f"a rerun after {kills} kills failed: {proc.stderr.read()[-500:]}")
                return 1
            if rows(db) != expected:
                print(f"after {kills} kills the rows DIFFER from the straight run's")
                return 1
            verified += pending
            pending = 0
            if kills >= args.kills:
                break
            db.unlink()  # finished: the next kills land in a new run
        counts = ", ".join(f"{len(expected[t])} {t}" for t in TABLES)
        print(f"{verified} SIGKILLs, each followed by a rerun: every finished run holds the "
              f"rows of the straight run ({counts})")  # fmt: skip
        return 0


if __name__ == "__main__":
    sys.exit(main())
