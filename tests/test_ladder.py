"""The living ladder: an add plays only the missing pairings, and the rows are a
tournament's; a stopped add resumes; ratings after every event; remove keeps the games; a
changed checkpoint is a new version; the report from the database alone; honest intervals
for tiny samples; one line for each kind of bad input."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from fourhundred_cli import main
from fourhundred_tournament.db import ReadOnlyResults
from fourhundred_tournament.db.ladder import read_ladder
from fourhundred_tournament.ladder.history import format_ladder, ladder_report
from fourhundred_tournament.ladder.play import LadderError, add_bots, remove_bots
from fourhundred_tournament.ratings import rate_agents
from fourhundred_tournament.replay import label_blockers, replay_game
from fourhundred_tournament.runner import Records
from fourhundred_tournament.tournament import run_tournament
from tests.test_tournament_resume import same_rows, table_rows

ROOT = Path(__file__).resolve().parents[1]
# public deals: the cards these tests were written for (secret deals: test_tournament_safety)
PLAY = {"workers": 1, "progress": False, "chunk_matches": 2, "table_batch": 8, "deals": "public"}
SMALL = {"matches": 2, "max_hands": 6, "play": PLAY}


def _pairs(db: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    try:
        return [tuple(r) for r in con.execute("SELECT DISTINCT pair_a, pair_b FROM matches")]
    finally:
        con.close()


def test_an_add_plays_only_the_missing_pairings_and_holds_a_tournament_s_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "minbid", "heuristic"], **SMALL)
    assert len(_pairs(db)) == 3
    seen: list[tuple[str, str]] = []
    s = add_bots(db, ["heuristic-v1"], **SMALL, on_records=lambda r: seen.extend(
        (m[0], m[1]) for m in r.matches))  # fmt: skip
    assert set(seen) == {("heuristic", "heuristic-v1"), ("heuristic-v1", "minbid"),
                         ("heuristic-v1", "random")}  # fmt: skip
    assert (s.event, s.games_played, s.games_resumed) == (2, 12, 12)
    from fourhundred_tournament.config import load_config

    cfg = load_config(None, {"agents": ["random", "minbid", "heuristic", "heuristic-v1"],
                             "matches": 2, "max_hands": 6, "out_dir": str(tmp_path / "t"),
                             "bootstrap": 0, **PLAY})  # fmt: skip
    run_tournament(cfg)
    same_rows(db, cfg.db_path)


def test_a_stopped_add_is_resumed_by_the_same_command(tmp_path: Path) -> None:
    straight = tmp_path / "straight.sqlite"
    add_bots(straight, ["random", "minbid"], **SMALL)
    add_bots(straight, ["heuristic"], **SMALL)
    db = tmp_path / "stopped.sqlite"
    add_bots(db, ["random", "minbid"], **SMALL)
    got: list[int] = []

    def stop(rec: Records) -> None:
        got.append(len(rec.matches))
        if sum(got) >= 3:
            raise KeyboardInterrupt

    play = {**PLAY, "flush_seconds": 0.0, "table_batch": 2}
    with pytest.raises(KeyboardInterrupt):
        add_bots(db, ["heuristic"], 2, max_hands=6, play=play, on_records=stop)
    with ReadOnlyResults(db) as r:
        assert read_ladder(r).events[-1].finished is None
        assert "NOT FINISHED" in format_ladder(ladder_report(r, bootstrap=0))
    with pytest.raises(LadderError, match="stopped with --matches 2"):
        add_bots(db, ["heuristic"], 5, play=PLAY)
    s = add_bots(db, ["heuristic"], 2, play=PLAY)
    assert s.event is None and s.resumed == ["heuristic"] and s.games_resumed >= 3
    same_rows(straight, db)
    with ReadOnlyResults(db) as r:
        assert all(e.finished for e in read_ladder(r).events)
    with pytest.raises(LadderError, match="already on the ladder"):
        add_bots(db, ["heuristic"], **SMALL)


def test_ratings_after_each_event_and_per_pairing_counts(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "heuristic"], 3, max_hands=30, play=PLAY)
    add_bots(db, ["minbid"], 1, play=PLAY, anchor="random")
    with ReadOnlyResults(db) as r:
        rep = ladder_report(r, bootstrap=50)
    first, second = rep["events"]
    assert set(first["ratings"]) == {"random", "heuristic"}
    assert set(second["ratings"]) == {"random", "heuristic", "minbid"}
    assert second["ratings"]["random"]["elo"] == pytest.approx(1500)
    counts = {(p["pair_a"], p["pair_b"]): p["games"] for p in rep["pairings"]}
    assert counts == {("heuristic", "random"): 6, ("heuristic", "minbid"): 2,
                      ("minbid", "random"): 2}  # fmt: skip
    board = {b["label"]: b for b in rep["bots"]}
    assert board["heuristic"]["games"] == 8 and board["minbid"]["games"] == 4
    # the bot with fewer games has the wider interval
    width = {a: b["high"] - b["low"] for a, b in board.items()}
    assert width["minbid"] > width["heuristic"] > 0
    assert rep["bots"][0]["label"] == "heuristic"


def test_remove_keeps_the_games_and_plays_no_more(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "minbid"], **SMALL)
    before = table_rows(db, "matches")
    assert remove_bots(db, ["random"]) == 2
    assert table_rows(db, "matches") == before
    add_bots(db, ["heuristic"], **SMALL)
    assert ("heuristic", "random") not in _pairs(db)
    with ReadOnlyResults(db) as r:
        rep = ladder_report(r, bootstrap=0)
    gone = next(b for b in rep["bots"] if b["label"] == "random")
    assert not gone["active"] and gone["retired"] == 2 and gone["games"] == 4
    assert gone["elo"] == gone["elo"]  # still rated from its games
    with pytest.raises(LadderError, match="retired already"):
        remove_bots(db, ["random"])
    with pytest.raises(LadderError, match="expected one of the bots"):
        remove_bots(db, ["nobody"])


def test_a_changed_bot_file_is_a_new_version(tmp_path: Path) -> None:
    program = tmp_path / "bot.py"
    shutil.copy(ROOT / "examples/bots/simple_bot.py", program)
    spec = f"cmd:{sys.executable} {program}"
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", spec], 1, max_hands=3, play=PLAY)
    program.write_text(program.read_text() + "\n# changed\n")  # a new version of the bot
    s = add_bots(db, [spec], 1, play=PLAY)
    assert s.added == [f"{spec}@v2"] and s.retired == [spec]
    assert ("random", f"{spec}@v2") in _pairs(db) or (f"{spec}@v2", "random") in _pairs(db)
    with ReadOnlyResults(db) as r:
        text = format_ladder(ladder_report(r, bootstrap=0))
        old = replay_game(r, (*sorted((spec, "random")), 0, 0))
        new = replay_game(r, (*sorted((f"{spec}@v2", "random")), 0, 0))
    assert "version 2" in text and "retired at #2 (files changed)" in text
    # the retired version's games come back from their stored moves, its program changed or not
    assert old.exact, old.reason
    assert new.exact, new.reason  # played with the spec, under its own label
    with ReadOnlyResults(db) as r:
        assert label_blockers(r) == {"random": None, spec: None, f"{spec}@v2": None}


def test_the_report_needs_the_database_alone(tmp_path: Path, capsys) -> None:
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "minbid"], **SMALL)
    add_bots(db, ["heuristic"], **SMALL)
    capsys.readouterr()
    assert main(["ladder", "report", "--db", str(db), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert "3 bots on it" in out and "Elo after each event" in out
    assert "heuristic v minbid: 4/4 games" in out
    saved = json.loads((tmp_path / "ladder.ladder.json").read_text())
    assert len(saved["events"]) == 2
    assert (tmp_path / "ladder.history.png").stat().st_size > 10_000
    # the tournament's own report of the same file, with no other flag
    assert main(["tournament", "--report-only", "--db", str(db), "--bootstrap", "0"]) == 0
    assert "2 duplicate matches per pairing (12 of 12 games played)" in capsys.readouterr().out


def test_report_only_of_a_tournament_needs_no_other_flag(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t"
    args = ["tournament", "--agents", "random", "minbid", "--matches", "3", "--max-hands", "5",
            "--workers", "1", "--no-progress", "--bootstrap", "0", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    db = str(out / "results.sqlite")
    assert main(["tournament", "--report-only", "--db", db]) == 0
    assert "3 duplicate matches per pairing (6 of 6 games played)" in capsys.readouterr().out
    assert main(["tournament", "--report-only", "--db", db, "--agents", "random", "minbid"]) == 0
    assert "(6 of 6 games played)" in capsys.readouterr().out
    assert main(["tournament", "--report-only", "--db", db, "--seed", "9"]) == 2
    assert "seed: database 0, flags 9" in capsys.readouterr().err
    assert main(["ladder", "report", "--db", db]) == 0
    assert "read as a ladder of one event" in capsys.readouterr().out


def test_a_sweep_of_few_matches_keeps_a_wide_interval() -> None:
    sweep = {("a", "b"): [(m, 1.0) for m in range(10) for _ in range(2)]}
    r = rate_agents(["a", "b"], sweep, prior=1.0, bootstrap=200, seed=0)
    assert r["elo"]["a"] > r["elo"]["b"]
    assert r["high"]["a"] - r["low"]["a"] > 300  # the bootstrap alone gave 0 (all the same)
    assert r["low"]["a"] < r["elo"]["a"] < r["high"]["a"]
    many = {("a", "b"): [(m, float(m % 3 != 0)) for m in range(2000) for _ in range(2)]}
    big = rate_agents(["a", "b"], many, prior=1.0, bootstrap=200, seed=0)
    assert big["high"]["a"] - big["low"]["a"] < 40


def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, capsys) -> None:
    db = tmp_path / "ladder.sqlite"
    assert main(["ladder", "add", "no-such-bot", "random", "--db", str(db)]) == 2
    assert not db.exists()
    add_bots(db, ["random", "minbid"], **SMALL)
    before = db.read_bytes()
    public = ["--deals", "public"]  # its deals, named
    cases = [
        (["ladder", "add", "random", "--db", str(db), *public], "already on the ladder"),
        (
            ["ladder", "add", "heuristic", "--db", str(db), "--seed", "3", *public],
            "is a ladder of seed 0",
        ),
        (["ladder", "add", "heuristic:nope=1", "--db", str(db)], "nope"),
        (["ladder", "add", "heuristic", "--db", str(db)], "expected --deals public"),
        (
            ["ladder", "add", "heuristic", "--db", str(db), "--deals", "secret"],
            "predicts every card",
        ),
        (["ladder", "remove", "heuristic", "--db", str(db)], "expected one of the bots"),
        (["tournament", "--agents", "random", "minbid", "--db", str(db)], "is a ladder"),
    ]
    for argv, text in cases:
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert text in err and err.count("\n") == 1, err
    assert db.read_bytes() == before
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    con.commit()
    con.close()
    newer = db.read_bytes()
    assert main(["ladder", "add", "heuristic", "--db", str(db)]) == 2
    assert "newer than this fourhundred" in capsys.readouterr().err
    assert db.read_bytes() == newer
    assert main(["ladder", "report", "--db", str(tmp_path / "none.sqlite")]) == 2


def test_two_adds_at_once_the_second_is_refused(tmp_path: Path) -> None:
    from fourhundred_tournament.db import DatabaseBusyError, WriterLock

    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "minbid"], **SMALL)
    busy = pytest.raises(DatabaseBusyError, match="being written by another run")
    with WriterLock(db), busy:  # another run holding the file
        add_bots(db, ["heuristic"], **SMALL)
    with ReadOnlyResults(db) as r:
        assert len(read_ladder(r).events) == 1


def test_a_cmd_bot_s_games_replay_card_by_card(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    bot = f"cmd:{sys.executable} examples/bots/simple_bot.py"
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", bot], 1, max_hands=3, play=PLAY)
    with ReadOnlyResults(db) as r:
        game = replay_game(r, (bot, "random", 0, 1))
    assert game.exact, game.reason
    assert game.hands and all(h.record is not None for h in game.hands)


def test_evaluate_run_puts_a_run_s_snapshots_on_a_ladder(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from fourhundred_train.config import load_config
    from fourhundred_train.ppo import Trainer

    config = load_config("configs/tiny.yaml", ["eval_every=0"])
    run = tmp_path / "run"
    Trainer(config, run).train(progress=False)
    db = tmp_path / "ladder.sqlite"
    argv = ["evaluate-run", str(run), "--opponent", "random", "--matches", "1",
            "--workers", "1", "--ladder", str(db)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "step       2048: Elo" in out and "step       4096: Elo" in out
    events = EventAccumulator(str(run))
    events.Reload()
    assert [e.step for e in events.Scalars("ladder/elo")] == [2048, 4096]
    assert (run / "plots" / "ladder_elo.png").stat().st_size > 10_000
    with ReadOnlyResults(db) as r:
        rep = ladder_report(r, bootstrap=0)
    assert rep["events"][0]["labels"] == ["random"] and len(rep["events"]) == 3
    assert rep["anchor"] == "random"
    assert main(argv) == 0  # again: every snapshot is on the ladder already, nothing played
    assert len(read_ladder(ReadOnlyResults(db)).events) == 3
