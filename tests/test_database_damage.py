"""Damaged or edited databases: every row of a ladder's own tables is checked on read (one
line naming the row, nothing written, by `ladder add`, `report` and `remove` alike); every
row carries a digest, so that an edit the value checks cannot see (a score 9 made -95) is
refused; and the writer lock holds against a second name of the same file (a hard link)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from fourhundred_cli import main
from fourhundred_tournament.db import DatabaseBusyError, WriterLock
from fourhundred_tournament.ladder.play import add_bots
from fourhundred_tournament.tournament import run_tournament
from tests.test_tournament_resume import _cfg

PLAY = {"workers": 1, "progress": False, "chunk_matches": 2, "table_batch": 8}


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("ladder") / "ladder.sqlite"
    add_bots(db, ["random", "heuristic"], 1, max_hands=4, play=PLAY)
    add_bots(db, ["minbid"], 1, play=PLAY)
    return db


# (the edit, what the one line says); from a hostile probe's list of damaged rows
DAMAGE = [
    ("UPDATE ladder_events SET labels = '[bad' WHERE event = 1", "labels='[bad' (expected a JSON list"),
    ("UPDATE ladder_events SET retired = '{}' WHERE event = 1", "retired='{}'"),
    ("UPDATE ladder_events SET labels = '[1, 2]' WHERE event = 1", "expected a JSON list of labels"),
    ("UPDATE ladder_events SET matches = -3 WHERE event = 1", "matches=-3"),
    ("UPDATE ladder_events SET matches = 'x' WHERE event = 1", "matches='x'"),
    ("UPDATE ladder_events SET kind = 'zap' WHERE event = 2", "kind='zap'"),
    ("UPDATE ladder_events SET event = 7 WHERE event = 2", "event=7"),
    ("UPDATE ladder_bots SET version = 'two' WHERE label = 'random'", "version='two'"),
    ("UPDATE ladder_bots SET version = -1 WHERE label = 'random'", "version=-1"),
    ("UPDATE ladder_bots SET info = '[' WHERE label = 'random'", "info='['"),
    ("UPDATE ladder_bots SET added = 'x' WHERE label = 'random'", "added='x'"),
    ("UPDATE ladder_bots SET label = 'randomX' WHERE label = 'random'", "label='randomX'"),
    ("UPDATE ladder_bots SET files = 5 WHERE label = 'random'", "files='5'"),
    ("UPDATE ladder_pairings SET matches = -2", "matches=-2"),
    ("UPDATE ladder_pairings SET event = 9", "event=9"),
    ("UPDATE ladder_pairings SET pair_a = 'nobody' WHERE pair_a = 'heuristic' AND pair_b = 'random'", "pair_a='nobody'"),
    ("UPDATE meta SET value = json_set(value, '$.seed', 'x') WHERE key = 'ladder'", "seed='x'"),
    ("UPDATE meta SET value = json_set(value, '$.max_hands', -5) WHERE key = 'ladder'", "max_hands=-5"),
    ("UPDATE meta SET value = json_set(value, '$.rules', 'x') WHERE key = 'ladder'", "rules='x'"),
    ("UPDATE meta SET value = json_set(value, '$.anchor', 5) WHERE key = 'ladder'", "anchor=5"),
    ("UPDATE meta SET value = '[1]' WHERE key = 'ladder'", "ladder of format"),
    # in range, so only the digests see them
    ("UPDATE ladder_pairings SET matches = 50", "do not match its checksum"),
    ("UPDATE ladder_events SET finished = '2030-01-01 00:00:00' WHERE event = 1", "do not match its checksum"),
    ("UPDATE hands SET score0 = -95 WHERE rowid = 3", "hands row"),
    ("UPDATE matches SET score0 = score0 + 1 WHERE rowid = 1", "matches row"),
    ("UPDATE hands SET digest = NULL WHERE rowid = 2", "do not match its checksum"),
    # the ladder's meta row: settings in range, only its checksum sees them (issue 67)
    ("UPDATE meta SET value = json_set(value, '$.max_hands', 7) WHERE key = 'ladder'", "meta row (key='ladder') holds values that do not match its checksum"),
    ("UPDATE meta SET value = json_set(value, '$.anchor', 'random') WHERE key = 'ladder'", "meta row (key='ladder') holds values that do not match"),
]  # fmt: skip
COMMANDS = {
    "report": ["ladder", "report", "--bootstrap", "0"],
    "add": ["ladder", "add", "heuristic-v1", "--matches", "1", "--no-progress", "--workers", "1"],
    "remove": ["ladder", "remove", "heuristic"],
}


@pytest.mark.parametrize(("edit", "said"), DAMAGE, ids=[d[1][:30] for d in DAMAGE])
def test_a_damaged_ladder_row_is_one_line_and_nothing_written(
    ladder: Path, tmp_path: Path, capsys, edit: str, said: str
) -> None:
    db = tmp_path / "damaged.sqlite"
    shutil.copy(ladder, db)
    con = sqlite3.connect(db)
    with con:
        assert con.execute(edit).rowcount >= 1, edit
    con.close()
    before = db.read_bytes()
    for name, argv in COMMANDS.items():
        capsys.readouterr()
        code = main([*argv, "--db", str(db), *(["--out", str(tmp_path / "o")] if name != "remove" else [])])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2, (name, err)
        assert said in err and err.count("\n") == 1 and "Traceback" not in err, (name, err)
        assert db.read_bytes() == before, name
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


# the ways to switch a database's row checks off, each refused unless accepted by name
SWITCHED_OFF = [
    ("DELETE FROM meta WHERE key = 'digests'", "meta 'digests' is gone"),
    ("DELETE FROM meta WHERE key = 'digests'; UPDATE hands SET digest = NULL WHERE rowid = "
     "(SELECT MAX(rowid) FROM hands)", "a row of hands without its checksum"),
    ("DELETE FROM meta WHERE key = 'digests'; ALTER TABLE events DROP COLUMN digest",
     "digest column of events is gone"),
    ("UPDATE meta SET value = json_remove(value, '$.digest') WHERE key = 'ladder'",
     "meta row 'ladder' has lost its checksum"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "said"), SWITCHED_OFF, ids=[s[1] for s in SWITCHED_OFF])
def test_a_ladder_whose_checks_were_switched_off_is_refused_unless_accepted(
    ladder: Path, tmp_path: Path, capsys, edit: str, said: str
) -> None:
    db = tmp_path / "unchecked.sqlite"
    shutil.copy(ladder, db)
    con = sqlite3.connect(db)
    con.executescript(edit)
    con.close()
    before = db.read_bytes()
    out = ["--out", str(tmp_path / "o")]
    commands = {**COMMANDS, "tournament": ["tournament", "--report-only", "--bootstrap", "0"]}
    for name, argv in commands.items():
        capsys.readouterr()
        code = main([*argv, "--db", str(db), *(out if name != "remove" else [])])
        err = capsys.readouterr().err
        assert code == 2, (name, err)
        assert said in err and "--accept-unchecked" in err, (name, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (name, err)
        assert db.read_bytes() == before, name
    for name in ("report", "tournament", "add", "remove"):  # its owner reads it, by name
        argv = [*commands[name], "--db", str(db), *(out if name != "remove" else [])]
        assert main([*argv, "--accept-unchecked"]) == 0, (name, capsys.readouterr().err)


def test_an_in_range_change_of_a_score_is_refused_by_the_report_and_the_export(
    tmp_path: Path, capsys
) -> None:
    cfg = _cfg(tmp_path, "t", agents=["heuristic", "random"], matches=1, max_hands=4)
    run_tournament(cfg)
    con = sqlite3.connect(cfg.db_path)
    with con:  # 9 made -95: a score the value checks take
        (score,) = con.execute("SELECT score0 FROM hands WHERE rowid = 1").fetchone()
        con.execute("UPDATE hands SET score0 = ? WHERE rowid = 1", (-95 if score != -95 else 9,))
    con.close()
    before = cfg.db_path.read_bytes()
    capsys.readouterr()
    assert main(["tournament", "--report-only", "--db", str(cfg.db_path)]) == 2
    err = capsys.readouterr().err
    assert "hands row" in err and "do not match its checksum" in err and err.count("\n") == 1
    out = tmp_path / "m.400"
    assert main(["record", "export", str(cfg.db_path), "--match", "0", "-o", str(out)]) == 2
    assert "do not match its checksum" in capsys.readouterr().err and not out.exists()
    assert cfg.db_path.read_bytes() == before


def test_the_writer_lock_holds_against_a_hard_link(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite"
    link = tmp_path / "elsewhere" / "b.sqlite"
    link.parent.mkdir()
    db.write_bytes(b"")
    os.link(db, link)
    held = WriterLock(db.resolve(), shown=db)
    assert held.acquire() is None
    try:
        with pytest.raises(DatabaseBusyError, match="by another name"):
            WriterLock(link.resolve(), shown=link).acquire()
        with pytest.raises(DatabaseBusyError):  # a ladder add by the link: refused too
            add_bots(link, ["random", "minbid"], 1, max_hands=2, play=PLAY)
    finally:
        held.release()
    lock = WriterLock(link.resolve(), shown=link)  # released: the other name writes
    assert lock.acquire() is None
    lock.release()
