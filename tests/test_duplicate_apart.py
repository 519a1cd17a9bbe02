"""Duplicate play without a shared table: the two orientations of a match, and the jobs of
other pairings that deal the same cards, never have processes of one ``cmd:`` bot alive at
the same time; the processes of such a bot alive at once are partners at one table (what
timing between processes on one machine can still carry: docs/security.md)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from fourhundred_tournament.config import load_config
from fourhundred_tournament.planning import plan_jobs
from fourhundred_tournament.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]

LOGGING_BOT = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[2])
import simple_bot

log = open(sys.argv[1], "a")
pid = os.getpid()
log.write(f"start {pid} {time.monotonic()}\n"); log.flush()
for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "bye":
        break
    if message.get("type") == "act":
        log.write(f"seat {pid} {message['view']['seat']}\n"); log.flush()
    reply = simple_bot.answer(message)
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n"); sys.stdout.flush()
log.write(f"end {pid} {time.monotonic()}\n"); log.flush()
"""


def _lives(log: Path) -> dict[int, tuple[float, float, set[int]]]:
    """Each process of the bot: (started, ended, the seats it was asked to play)."""
    start: dict[int, float] = {}
    end: dict[int, float] = {}
    seats: dict[int, set[int]] = {}
    for line in log.read_text().splitlines():
        kind, pid, value = line.split()
        if kind == "start":
            start[int(pid)] = float(value)
        elif kind == "end":
            end[int(pid)] = float(value)
        else:
            seats.setdefault(int(pid), set()).add(int(value))
    assert set(end) == set(start), "a process of the bot did not end by itself"
    return {p: (start[p], end[p], seats.get(p, set())) for p in start}


def test_no_two_processes_of_a_cmd_bot_that_hold_one_deal_live_at_once(tmp_path: Path) -> None:
    log = tmp_path / "lives.txt"
    bot = tmp_path / "logging_bot.py"
    bot.write_text(LOGGING_BOT)
    spec = f"cmd:{sys.executable} {bot} {log} {ROOT / 'examples' / 'bots'},sandbox=off"
    cfg = load_config(None, {"agents": [spec, "random", "minbid"], "matches": 4, "max_hands": 2,
                             "seed": 3, "workers": 2, "chunk_matches": 2,
                             "out_dir": str(tmp_path / "out"), "progress": False})  # fmt: skip
    jobs = plan_jobs(cfg)
    mine = [j for j in jobs if spec in j.pair]
    # a job for each orientation of each chunk, played apart; the other pairing's are not
    assert mine and all(j.apart and len({o for _, o in j.games}) == 1 for j in mine)
    assert all(not j.apart for j in jobs if spec not in j.pair)
    summary = run_tournament(cfg)
    assert summary.games_played == 2 * 4 * 3
    lives = _lives(log)
    assert len(lives) >= 8  # two seats a job, at least four jobs
    for a, (s1, e1, seats1) in lives.items():
        for b, (s2, e2, seats2) in lives.items():
            if a < b and s1 < e2 and s2 < e1:  # alive at once: partners of one table only
                assert (seats1 | seats2) in ({0, 2}, {1, 3}, {0}, {1}, {2}, {3}), (
                    seats1,
                    seats2,
                )
    con = sqlite3.connect(summary.db_path)
    try:
        games = con.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    finally:
        con.close()
    assert games == 2 * 4 * 3
