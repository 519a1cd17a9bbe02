"""Real interruptions of the `fourhundred tournament` command: killed mid-run (SIGKILL, and
Ctrl-C's SIGINT) and rerun, a tournament's database holds every row of an uninterrupted run,
for stochastic bots and deterministic ones; and two runs started on one database: the second
is refused naming the first, which finishes as if alone."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fourhundred_tournament.config import load_config
from fourhundred_tournament.db import lock_path
from fourhundred_tournament.tournament import run_tournament
from tests.test_tournament_resume import same_rows

FOURHUNDRED = str(Path(sys.executable).with_name("fourhundred"))
ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "stochastic": ["heuristic:epsilon=0.2", "random"],
    "deterministic": ["heuristic-v1", "minbid"],
}
MATCHES = {"stochastic": 30, "deterministic": 40}
MAX_HANDS = 30


def _args(agents: list[str], matches: int, db: Path) -> list[str]:
    """The command line of the run that is interrupted: two workers, small jobs and tables,
    rows flushed often, so that a kill lands mid-run with games in flight. Public deals: the
    straight run is another tournament, which deals alike only from the seed (a secret-dealt
    resume: tests/test_fair_strangers.py)."""
    return [FOURHUNDRED, "tournament", "--deals", "public", "--agents", *agents, "--matches", str(matches),
            "--max-hands", str(MAX_HANDS), "--seed", "5", "--db", str(db), "--out",
            str(db.parent / "out"), "--workers", "2", "--table-batch", "4", "--chunk-matches",
            "2", "--no-progress", "--bootstrap", "0", "--set", "flush_seconds=0.05"]  # fmt: skip


def _finished(db: Path) -> int:
    """Match rows so far (0 while the file or its tables do not exist yet). Read-write, not
    read-only: a run killed inside a write leaves a hot journal that only a connection that may
    write can roll back (as the resumed run does); a read-only one fails on it."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=rw", uri=True, timeout=0.2)
        try:
            return con.execute("SELECT count(*) FROM matches").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _wait_for_rows(proc: subprocess.Popen, db: Path, at_least: int) -> int:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        n = _finished(db)
        if n >= at_least:
            return n
        time.sleep(0.05)
    raise AssertionError(f"the run ended or stalled before {at_least} games: {proc.poll()}")


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> dict[str, Path]:
    """The uninterrupted runs, in this process, one table at a time and one worker: results
    must not depend on the batch, the chunking or the workers either."""
    out = {}
    for name, agents in SETS.items():
        folder = tmp_path_factory.mktemp(f"straight-{name}")
        cfg = load_config(None, dict(agents=agents, matches=MATCHES[name], max_hands=MAX_HANDS,
                                     seed=5, workers=1, table_batch=3, chunk_matches=7,
                                     progress=False, bootstrap=0, out_dir=str(folder),
                                     deals="public"))  # fmt: skip
        run_tournament(cfg)
        out[name] = cfg.db_path
    return out


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("name", list(SETS))
def test_a_killed_run_resumed_equals_the_straight_run_row_for_row(
    name: str, sig: signal.Signals, straight: dict[str, Path], tmp_path: Path
) -> None:
    db = tmp_path / "k.sqlite"
    total = 2 * MATCHES[name]
    args = _args(SETS[name], MATCHES[name], db)
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        _wait_for_rows(proc, db, total // 4)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert "rerun the same command to resume" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    done = _finished(db)
    assert total // 4 <= done < total  # stopped mid-run, with games in flight
    resumed = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({done} already in {db}" in resumed.stdout
    if sig == signal.SIGKILL:  # its lock file stayed behind; the rerun took it over
        assert "took over the writer lock" in resumed.stderr
    assert not lock_path(db).exists()
    same_rows(straight[name], db)


def test_a_second_run_on_a_busy_database_is_refused_and_the_first_is_unharmed(
    straight: dict[str, Path], tmp_path: Path
) -> None:
    db = tmp_path / "busy.sqlite"
    args = _args(SETS["stochastic"], MATCHES["stochastic"], db)
    first = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        _wait_for_rows(first, db, 4)
        first.send_signal(signal.SIGSTOP)  # paused, so that it cannot finish before the others
        try:
            for extra in ([], ["--overwrite"]):
                second = subprocess.run([*args, *extra], cwd=ROOT, capture_output=True,
                                        text=True, timeout=300)  # fmt: skip
                err = second.stderr.strip().splitlines()
                assert second.returncode == 2 and len(err) == 1, second.stderr
                assert f"pid {first.pid}" in err[0] and "being written by another run" in err[0]
        finally:
            first.send_signal(signal.SIGCONT)
        out, err = first.communicate(timeout=600)
    finally:
        first.kill()
    assert first.returncode == 0, err
    assert f"{2 * MATCHES['stochastic']} games played" in out and "dropped" not in out
    same_rows(straight["stochastic"], db)
    assert os.path.exists(db) and not lock_path(db).exists()
