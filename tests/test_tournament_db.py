"""One writer per results database, and damaged files refused unchanged: the writer lock
(held, stale), SQLite's integrity check on open, a write a killed run left half done, and
the command line's one-line errors. (Two real runs at once: tests/test_tournament_kill.py.)"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from fourhundred_cli import main as cli_main
from fourhundred_tournament.config import TournamentConfig, load_config
from fourhundred_tournament.db import (
    DatabaseBusyError,
    DatabaseDamagedError,
    ReadOnlyResults,
    WriterLock,
    lock_path,
)
from fourhundred_tournament.tournament import run_tournament

ARGS = ["--agents", "heuristic", "minbid", "--matches", "2", "--max-hands", "3", "--workers",
        "1", "--no-progress", "--bootstrap", "0"]  # fmt: skip


def _cfg(tmp_path: Path, **kw) -> TournamentConfig:
    values = dict(agents=["heuristic", "minbid"], matches=2, max_hands=3, workers=1,
                  progress=False, bootstrap=0, out_dir=str(tmp_path))  # fmt: skip
    values.update(kw)
    return load_config(None, values)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_second_writer_is_refused_naming_the_first(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    run_tournament(cfg)
    before = _digest(cfg.db_path)
    more = _cfg(tmp_path, matches=3)  # would add games, were it allowed
    with WriterLock(cfg.db_path):
        for overwrite in (False, True):
            with pytest.raises(DatabaseBusyError) as err:
                run_tournament(more, overwrite=overwrite)
            message = str(err.value)
            assert "\n" not in message
            assert f"pid {os.getpid()}" in message and "being written by another run" in message
        assert _digest(cfg.db_path) == before  # not resumed, not discarded
    assert not lock_path(cfg.db_path).exists()  # released: the file goes with the lock
    run_tournament(more)  # free again


def test_a_stale_lock_of_a_killed_run_is_taken_over(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    stale = {"pid": 999999, "host": "elsewhere", "started": "2026-11-30 10:00:00",
             "command": "fourhundred tournament"}  # fmt: skip
    lock_path(cfg.db_path).write_text(json.dumps(stale))  # the file, without the lock held
    summary = run_tournament(cfg)
    assert summary.games_played == 4
    assert "took over the writer lock" in summary.lock_note and "pid 999999" in summary.lock_note
    assert not lock_path(cfg.db_path).exists()


def test_the_lock_holder_is_written_into_the_lock_file(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    lock = WriterLock(db)
    assert lock.acquire() is None
    try:
        info = json.loads(lock_path(db).read_text())
        assert info["pid"] == os.getpid() and info["started"]
        with pytest.raises(DatabaseBusyError, match=f"pid {os.getpid()}"):
            WriterLock(db).acquire()
    finally:
        lock.release()
    assert WriterLock(db).acquire() is None


def _damage_mid_file(db: Path) -> None:
    """Overwrite one page in the middle of the file with garbage (the header stays valid)."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    n_pages = len(data) // page
    assert n_pages >= 4
    k = n_pages // 2
    data[k * page : (k + 1) * page] = bytes((i * 37 + 11) % 251 for i in range(page))
    db.write_bytes(bytes(data))


def test_a_damaged_database_is_refused_in_one_line_and_left_unchanged(
    tmp_path: Path, capsys
) -> None:
    cfg = _cfg(tmp_path, matches=6)
    run_tournament(cfg)
    _damage_mid_file(cfg.db_path)
    before = _digest(cfg.db_path)
    with pytest.raises(DatabaseDamagedError, match="is damaged"):
        run_tournament(cfg)
    with pytest.raises(DatabaseDamagedError, match="is damaged"):
        ReadOnlyResults(cfg.db_path)
    args = [*ARGS, "--matches", "6", "--out", str(tmp_path)]
    for extra in ([], ["--report-only"]):
        capsys.readouterr()
        assert cli_main(["tournament", *args, *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(cfg.db_path) in err[0] and "damaged" in err[0], err
    assert _digest(cfg.db_path) == before
    assert not lock_path(cfg.db_path).exists()


def _edited_copy(db: Path, path: Path, sql: str) -> Path:
    path.write_bytes(db.read_bytes())
    con = sqlite3.connect(path)
    con.executescript(sql)
    con.close()
    return path


@pytest.mark.parametrize(
    "sql, message",
    [
        ("UPDATE meta SET value = '{not json' WHERE key = 'fingerprint'",
         "no readable tournament fingerprint"),
        ("UPDATE meta SET value = '{}' WHERE key = 'fingerprint'",
         "no readable tournament fingerprint (missing agents"),
        ("DROP TABLE hands", "is damaged (no such table: hands)"),
    ],
)  # fmt: skip
def test_a_database_with_a_damaged_fingerprint_or_a_lost_table_is_refused_by_every_command(
    tmp_path: Path, capsys, sql: str, message: str
) -> None:
    """The writer (a resume, a ladder) refuses what the reports refuse, before writing."""
    cfg = _cfg(tmp_path)
    run_tournament(cfg)
    db = _edited_copy(cfg.db_path, tmp_path / "edited.sqlite", sql)
    before = _digest(db)
    out = str(tmp_path / "out")
    for argv in (
        ["tournament", *ARGS, "--db", str(db), "--out", out],
        ["tournament", "--report-only", "--db", str(db), "--out", out],
        ["ladder", "add", "random", "--db", str(db), "--matches", "1", "--workers", "1",
         "--no-progress", "--bootstrap", "0"],
        ["ladder", "report", "--db", str(db)],
        ["ladder", "remove", "--db", str(db), "minbid"],
        ["plot", str(db), "--out", out],
    ):  # fmt: skip
        capsys.readouterr()
        assert cli_main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (argv, err)
    assert _digest(db) == before


def test_a_ladder_add_on_a_damaged_deals_row_writes_nothing(tmp_path: Path, capsys) -> None:
    """It was refused only after the tournament had been made a ladder."""
    cfg = _cfg(tmp_path)
    run_tournament(cfg)
    db = _edited_copy(cfg.db_path, tmp_path / "deals.sqlite",
                      """INSERT OR REPLACE INTO meta VALUES ('deals', '{"scheme": "nosuch"}')""")  # fmt: skip
    before = _digest(db)
    argv = ["ladder", "add", "random", "--db", str(db), "--matches", "1", "--workers", "1",
            "--no-progress", "--bootstrap", "0"]  # fmt: skip
    assert cli_main(argv) == 2
    assert "its meta 'deals' row is damaged" in capsys.readouterr().err
    assert _digest(db) == before


def test_another_programs_database_is_not_taken_for_a_new_one(tmp_path: Path, capsys) -> None:
    db = tmp_path / "theirs.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE foo (x INTEGER)")
    con.commit()
    con.close()
    before = _digest(db)
    for argv in (
        ["tournament", *ARGS, "--db", str(db), "--out", str(tmp_path / "out")],
        ["ladder", "add", "random", "--db", str(db), "--matches", "1", "--workers", "1",
         "--no-progress", "--bootstrap", "0"],
        ["ladder", "remove", "--db", str(db), "random"],
    ):  # fmt: skip
        capsys.readouterr()
        assert cli_main(argv) == 2, argv
        assert "not a fourhundred tournament database" in capsys.readouterr().err
    assert _digest(db) == before
    blank = tmp_path / "blank.sqlite"  # a file with no tables: no ladder to retire from
    sqlite3.connect(blank).execute("VACUUM").connection.close()
    assert cli_main(["ladder", "remove", "--db", str(blank), "random"]) == 2
    assert "no ladder at" in capsys.readouterr().err
    assert not sqlite3.connect(blank).execute("SELECT name FROM sqlite_master").fetchall()


def test_a_write_left_half_done_by_a_killed_run_is_rolled_back_by_the_next_writer(
    tmp_path: Path,
) -> None:
    cfg = _cfg(tmp_path)
    run_tournament(cfg)
    rows = sqlite3.connect(cfg.db_path).execute("SELECT count(*) FROM hands").fetchone()[0]
    # a process that dies in the middle of a write, after SQLite spilled pages to the file
    code = (
        "import os, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1]); con.execute('PRAGMA cache_size=1')\n"
        "con.execute('BEGIN IMMEDIATE'); con.execute('UPDATE hands SET bid0 = bid0 + 1')\n"
        "con.execute('DELETE FROM matches')\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(cfg.db_path)], check=False, timeout=60)
    assert Path(str(cfg.db_path) + "-journal").stat().st_size > 0
    with pytest.raises(DatabaseDamagedError, match="left unfinished"):
        ReadOnlyResults(cfg.db_path)  # a reader cannot repair it, and says what to do
    summary = run_tournament(cfg)  # the writer rolls it back and finds every game done
    assert summary.games_played == 0 and summary.games_resumed == 4
    with ReadOnlyResults(cfg.db_path) as db:
        assert db.query("SELECT count(*) FROM hands")[0][0] == rows


def test_an_unwritable_output_folder_is_one_line(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for out in ("/proc/nope", str(blocker / "sub")):
        assert cli_main(["tournament", *ARGS, "--out", out]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and out in err[0] and "writable" in err[0], err
