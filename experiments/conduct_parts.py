"""Asking slow agents in parts: what it costs in time and what it saves in conduct events.

    python experiments/conduct_parts.py                   # search:bidder v heuristic-v1
    python experiments/conduct_parts.py --agents heuristic --matches 500 --max-hands 200 --repeats 9

The tournament runner charges a call's time to every table in it, so it asks an agent slow
enough to need it in parts sized by its time per move (`fourhundred_tournament.pacing.Pacing`).
After one small untimed run (kernels and models loaded), each repeat runs the same tournament
(one worker, in this process) twice, in alternating order: as shipped ("parts") and with every
call of an agent made over all its tables at once ("one piece", as before 2026-12-01).
Reported per run: wall seconds, the longest call (the time charged to each of its tables), the
slow and timeout events, and whether the two runs' hands agree outside their times; then the
medians and the median ratio of seconds (parts / one piece).
Other load on the machine changes the seconds, not the events' count here.
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

from fourhundred_tournament.conduct import Conduct
from fourhundred_tournament.config import load_config
from fourhundred_tournament.pacing import Pacing
from fourhundred_tournament.tournament import run_tournament

_SHIPPED_PART = Pacing.next_part
_SHIPPED_CALL = Conduct.call
_SHIPPED_LEARN = Pacing.learn


def _one_piece(self, bidding, left):
    return left, True


def _no_learning(self, bidding, seconds):
    pass


def run_once(
    agents: list[str], matches: int, seed: int, table_batch: int, max_hands: int, parts: bool
) -> dict:
    longest = [0.0]

    def timed_call(self, agent, view, use_alarm):
        res = _SHIPPED_CALL(self, agent, view, use_alarm)
        longest[0] = max(longest[0], float(res.seconds))
        return res

    Pacing.next_part = _SHIPPED_PART if parts else _one_piece
    Pacing.learn = _SHIPPED_LEARN if parts else _no_learning
    Conduct.call = timed_call
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = load_config(None, {
                "agents": agents, "matches": matches, "seed": seed, "workers": 1,
                "table_batch": table_batch, "chunk_matches": matches, "out_dir": tmp,
                "progress": False, "bootstrap": 0, "mirror": len(agents) == 1,
                "max_hands": max_hands,
            })  # fmt: skip
            start = time.perf_counter()
            run_tournament(cfg, overwrite=True)
            elapsed = time.perf_counter() - start
            con = sqlite3.connect(Path(tmp) / "results.sqlite")
            cols = [r[1] for r in con.execute("PRAGMA table_info(hands)")]
            keep = ", ".join(c for c in cols if "seconds" not in c and c != "id")
            hands = con.execute(f"SELECT {keep} FROM hands ORDER BY {keep}").fetchall()
            events = dict(con.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind"))
            con.close()
    finally:
        Pacing.next_part, Conduct.call = _SHIPPED_PART, _SHIPPED_CALL
        Pacing.learn = _SHIPPED_LEARN
    return {"seconds": elapsed, "longest": longest[0], "slow": events.get("slow", 0),
            "timeout": events.get("timeout", 0), "hands": hands}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", nargs="+",
                   default=["compose:bid=search:bidder,play=heuristic-v1", "heuristic-v1"],
                   help="two agents, or one for a mirror pairing")  # fmt: skip
    p.add_argument("--matches", type=int, default=256, help="duplicate matches (2x games)")
    p.add_argument("--max-hands", type=int, default=2,
                   help="hands per game (then stopped unfinished): the first hands of many "
                   "games at once are what a batched call is largest for")  # fmt: skip
    p.add_argument("--table-batch", type=int, default=512)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(
        f"# conduct parts: {' v '.join(args.agents)}, {args.matches} duplicate matches of "
        f"{args.max_hands} hands, table_batch={args.table_batch}, one worker; "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    # untimed: loads (or compiles) every kernel and model once, so that no run pays for it
    run_once(args.agents, min(args.matches, 8), args.seed, args.table_batch, 1, True)
    runs: dict[bool, list[dict]] = {True: [], False: []}
    ratios = []
    for r in range(args.repeats):
        order = (True, False) if r % 2 == 0 else (False, True)
        got = {parts: run_once(args.agents, args.matches, args.seed + r, args.table_batch,
                               args.max_hands, parts)
               for parts in order}  # fmt: skip
        for parts in order:
            res = got[parts]
            runs[parts].append(res)
            print(
                f"run {r + 1} {'parts    ' if parts else 'one piece'}: {res['seconds']:8.2f} s, "
                f"longest call {res['longest']:6.2f} s, {res['slow']} slow, "
                f"{res['timeout']} timeouts"
            )
        ratios.append(got[True]["seconds"] / got[False]["seconds"])
        print(
            f"run {r + 1}: hands agree outside times: {got[True]['hands'] == got[False]['hands']}"
        )
    for parts in (True, False):
        med = {k: statistics.median(x[k] for x in runs[parts]) for k in ("seconds", "longest")}
        print(f"median {'parts    ' if parts else 'one piece'}: {med['seconds']:.2f} s, "
              f"longest call {med['longest']:.2f} s")  # fmt: skip
    print(f"median ratio of seconds, parts / one piece: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
