"""What the rows' digests cost (tournament/db/digests.py): a tournament's results written and
checked on read, with and without them, side by side in one process.

    .venv/bin/python benchmarks/db_digests.py --matches 400 --repeats 5

Plays one small tournament, then for each repeat copies its rows into two fresh databases (one
writer sealing every row, one with sealing switched off) and times the writes and
`check_values` (the report's and the replay's check on read); then times whole tournaments
(heuristic vs heuristic, one worker, in this process) with and without sealing, alternately;
medians are printed.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from fourhundred_tournament.config import load_config
from fourhundred_tournament.db import ReadOnlyResults, ResultsDB, check_values
from fourhundred_tournament.db import results as results_module
from fourhundred_tournament.db.schema import EVENT_COLUMNS, HAND_COLUMNS, MATCH_COLUMNS
from fourhundred_tournament.tournament import run_tournament


def _rows(path: Path) -> tuple[list, list, list]:
    con = sqlite3.connect(path)
    try:
        return tuple(
            con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()
            for table, cols in (("hands", HAND_COLUMNS), ("matches", MATCH_COLUMNS),
                                ("events", EVENT_COLUMNS))
        )  # fmt: skip
    finally:
        con.close()


def _write_and_check(path: Path, rows: tuple, fp: dict, seal: bool) -> tuple[float, float]:
    hands, matches, events = rows
    patch = None
    if not seal:  # the rows left with a NULL digest, as before rows carried one
        patch = mock.patch.object(results_module, "seal", lambda *a: None)
    if patch:
        patch.start()
    try:
        t0 = time.perf_counter()
        with ResultsDB(path, fp) as db:
            for i in range(0, len(matches), 50):  # as a tournament writes: a chunk at a time
                keys = {tuple(m[:4]) for m in matches[i : i + 50]}
                db.write([h for h in hands if tuple(h[:4]) in keys],
                         matches[i : i + 50], [e for e in events if tuple(e[:4]) in keys])  # fmt: skip
            write = time.perf_counter() - t0
            if not seal:  # read as a database written before rows carried digests
                with db.con:
                    db.con.execute("DELETE FROM meta WHERE key = 'digests'")
    finally:
        if patch:
            patch.stop()
    with ReadOnlyResults(path) as db:
        t0 = time.perf_counter()
        check_values(db)
        check = time.perf_counter() - t0
    return write, check


def _tournament(out: Path, matches: int, seal: bool) -> float:
    cfg = load_config(None, {"agents": ["heuristic"], "mirror": True, "matches": matches, "seed": 2, "workers": 1, "progress": False,
                             "bootstrap": 0, "deals": "public", "out_dir": str(out)})  # fmt: skip
    patch = None if seal else mock.patch.object(results_module, "seal", lambda *a: None)
    if patch:
        patch.start()
    try:
        t0 = time.perf_counter()
        run_tournament(cfg)
        return time.perf_counter() - t0
    finally:
        if patch:
            patch.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cfg = load_config(None, {"agents": ["heuristic", "random"], "matches": args.matches,
                                 "seed": 1, "workers": 1, "progress": False, "bootstrap": 0,
                                 "deals": "public", "out_dir": str(tmp / "t")})  # fmt: skip
        run_tournament(cfg)
        rows = _rows(cfg.db_path)
        fp = {"agents": ["x"], "rules": {}, "seed": 0, "max_hands": 1}
        times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for r in range(args.repeats):
            for seal in (True, False):
                times[seal].append(_write_and_check(tmp / f"{r}-{seal}.sqlite", rows, fp, seal))
        tours: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.repeats):
            for seal in (True, False):
                tours[seal].append(_tournament(tmp / f"t{r}-{seal}", args.matches, seal))
    print(f"{len(rows[0]):,} hands, {len(rows[1]):,} games, {len(rows[2]):,} events; medians of "
          f"{args.repeats}")  # fmt: skip
    for seal in (True, False):
        w = statistics.median(t[0] for t in times[seal])
        c = statistics.median(t[1] for t in times[seal])
        print(f"  {'with digests   ' if seal else 'without digests'}  write {w * 1000:8.1f} ms"
              f"   check on read {c * 1000:8.1f} ms")  # fmt: skip
    for seal in (True, False):
        t = statistics.median(tours[seal])
        print(f"  tournament of {args.matches} matches, heuristic mirror, 1 worker, "
              f"{'with' if seal else 'without'} digests: {t:.2f} s ({args.matches / t:,.0f} matches/s)")  # fmt: skip


if __name__ == "__main__":
    main()
