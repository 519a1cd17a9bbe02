"""The Ray backend of the tournament (`backend: ray`): the rows of the local backend's
`--workers 2`, row for row; a worker killed mid-job (SIGKILL, for real) is played again
with nothing lost or doubled; a driver killed mid-run resumes like the local backend.

All tests share one local Ray instance (the session fixture `ray_instance` in conftest.py:
Ray takes seconds to start)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fourhundred_tournament import ray_backend
from fourhundred_tournament.config import load_config
from fourhundred_tournament.runner import Records
from fourhundred_tournament.tournament import run_tournament
from tests.test_tournament_kill import _finished, _wait_for_rows
from tests.test_tournament_resume import STOCHASTIC, same_rows, table_rows

FOURHUNDRED = str(Path(sys.executable).with_name("fourhundred"))


def _cfg(folder: Path, **kw):
    # public deals: a Ray run and the local one are two tournaments, which deal alike only
    # from the seed (each secret-dealt one draws its own secret)
    values = dict(agents=STOCHASTIC, matches=4, seed=23, max_hands=3, workers=2, progress=False,
                  out_dir=str(folder), bootstrap=0, chunk_matches=2, table_batch=3,
                  deals="public")  # fmt: skip
    values.update(kw)
    return load_config(None, values)


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory) -> Path:
    """The local backend's run with two worker processes: the rows every Ray run must give."""
    cfg = _cfg(tmp_path_factory.mktemp("local"))
    run_tournament(cfg)
    assert len(table_rows(cfg.db_path, "matches")) == 6 * 4 * 2
    return cfg.db_path


def test_ray_gives_the_rows_of_the_local_backend(ray_instance, local_rows, tmp_path) -> None:
    cfg = _cfg(tmp_path, backend="ray")
    summary = run_tournament(cfg)
    assert (summary.games_played, summary.jobs_restarted) == (48, 0)
    same_rows(local_rows, cfg.db_path)
    # The same Ray instance is still up: the run used it and left it running.
    assert ray_instance.is_initialized()


def test_a_worker_killed_mid_job_is_played_again_without_loss_or_double(
    ray_instance, local_rows, tmp_path, monkeypatch
) -> None:
    # rows flushed at every hand's end, so the killed job has sent rows of games in flight
    cfg = _cfg(tmp_path, backend="ray", flush_seconds=0.0)
    monkeypatch.setitem(ray_backend.KILL_AFTER_YIELDS, 1, 4)
    monkeypatch.setitem(ray_backend.KILL_AFTER_YIELDS, 6, 2)
    received = {"hands": 0, "matches": 0}

    def count(rec: Records) -> None:
        received["hands"] += len(rec.hands)
        received["matches"] += len(rec.matches)

    summary = run_tournament(cfg, on_records=count)
    assert summary.jobs_restarted == 2
    same_rows(local_rows, cfg.db_path)
    # Every game's match row arrived once; the hands of the games the killed workers had in
    # flight arrived twice, the first copy deleted before the games were played again.
    assert received["matches"] == summary.games_played == 48
    assert received["hands"] > len(table_rows(cfg.db_path, "hands"))


def test_a_job_whose_worker_keeps_dying_stops_the_run_and_resumes(
    ray_instance, local_rows, tmp_path, monkeypatch
) -> None:
    from fourhundred_env.errors import FourHundredError

    cfg = _cfg(tmp_path, backend="ray", flush_seconds=0.0, ray_retries=0)
    monkeypatch.setitem(ray_backend.KILL_AFTER_YIELDS, 2, 1)
    with pytest.raises(
        FourHundredError, match=r"job 2 .*worker died 1 time\(s\), more than ray_retries=0.*rerun"
    ):
        run_tournament(cfg)
    monkeypatch.delitem(ray_backend.KILL_AFTER_YIELDS, 2)
    summary = run_tournament(cfg)
    assert summary.games_resumed + summary.games_played == 48
    same_rows(local_rows, cfg.db_path)


def test_a_killed_driver_resumes_with_the_rows_of_a_straight_run(
    ray_instance, local_rows, tmp_path
) -> None:
    """The `fourhundred tournament` command on the shared instance (--address), killed with
    SIGKILL once some games are saved, then rerun to the end."""
    cfg = _cfg(tmp_path, backend="ray", matches=4, flush_seconds=0.05)
    address = ray_instance.get_runtime_context().gcs_address
    args = [FOURHUNDRED, "tournament", "--agents", *STOCHASTIC, "--matches", "4", "--seed",
            "23", "--max-hands", "3", "--chunk-matches", "2", "--table-batch", "3",
            "--backend", "ray", "--address", address, "--db", str(cfg.db_path), "--out",
            str(tmp_path / "out"), "--no-progress", "--bootstrap", "0",
            "--set", "flush_seconds=0.05", "--deals", "public"]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_rows(proc, cfg.db_path, 1)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    saved = _finished(cfg.db_path)
    assert 0 < saved < 48
    rerun = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"({saved} already in" in rerun.stdout
    same_rows(local_rows, cfg.db_path)


def test_a_bad_ray_setting_is_one_line_and_changes_nothing(tmp_path) -> None:
    out = tmp_path / "out"
    base = [FOURHUNDRED, "tournament", "--agents", "heuristic", "random", "--matches", "1",
            "--out", str(out), "--no-progress"]  # fmt: skip
    for extra, expected in [
        (["--address", "127.0.0.1:1"], "expected backend 'ray' with an address"),
        (["--backend", "ray", "--address", "127.0.0.1:1"], "nothing answers there"),
    ]:
        res = subprocess.run(base + extra, capture_output=True, text=True, timeout=60)
        assert res.returncode == 2, res.stderr
        assert expected in res.stderr and "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    assert not (out / "results.sqlite").exists()
