"""Fair and safe tournaments: secret deals a bot cannot recompute, results hidden
from sandboxed bots, databases that run no code, writes whole or not at all, rows checked on
read, and sizes bounded before anything is played."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fourhundred_cli import main as cli_main
from fourhundred_env.engine import deal_sets
from fourhundred_tournament.config import load_config, spec_files
from fourhundred_tournament.db import (
    DatabaseBusyError,
    DatabaseDamagedError,
    ReadOnlyResults,
    ResultsDB,
)
from fourhundred_tournament.deals import read_deals
from fourhundred_tournament.replay import label_blockers, replay_game, tournament_info
from fourhundred_tournament.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"agents": ["heuristic", "random"], "matches": 2, "seed": 5, "max_hands": 3,
         "workers": 1, "progress": False, "bootstrap": 0}  # fmt: skip


def _rows(path: Path, table: str = "hands") -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
    finally:
        con.close()


def _results(path: Path) -> list[list[tuple]]:
    """The rows a straight run and a resumed one share (times, and the digests that cover
    them, excluded)."""
    # hands: ..., seconds0-3, moves, digest; matches: ..., decision_seconds, digest
    hands = [r[:-6] + r[-2:-1] for r in _rows(path, "hands")]
    matches = [r[:-2] for r in _rows(path, "matches")]
    return [hands, matches]


def _cfg(tmp_path: Path, name: str, **values):
    return load_config(None, {**SMALL, "db": str(tmp_path / name / "results.sqlite"),
                              "out_dir": str(tmp_path / name), **values})  # fmt: skip


# -- secret deals ----------------------------------------------------------------------------
CHEATER = textwrap.dedent('''
    """A bot that knows the project's code, the public seed and all it is told, and tries to
    find its deal: every seed it can think of, every match id and hand index."""
    import json, os, random, sys
    import numpy as np
    from fourhundred_env.cards import parse_card
    from fourhundred_env.engine import deal_sets

    out, public_seed, matches, hands = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    told = []
    ids = np.repeat(np.arange(matches), hands)
    index = np.tile(np.arange(hands), matches)
    seen_hands = set()
    for line in sys.stdin:
        msg = json.loads(line)
        told.append(line)
        if msg["type"] == "hello":
            seeds = sorted({public_seed, int(msg["seed"]), *range(64),
                            int(msg["seed"]) & (2**63 - 1)})
            print(json.dumps({"type": "ready", "name": "cheater", "version": 1}), flush=True)
        elif msg["type"] == "act":
            view = msg["view"]
            mine = sum(1 << parse_card(c) for c in view["hand"])
            if len(view["hand"]) == 13 and (view["seat"], mine) not in seen_hands:
                seen_hands.add((view["seat"], mine))
                found = None
                for s in seeds:
                    for key in {s, int(msg["game"], 16)}:
                        deals = deal_sets(key, ids, index)
                        hit = np.flatnonzero(deals[:, view["seat"]] == np.uint64(mine))
                        if hit.size:
                            found = [int(x) for x in deals[hit[0]]]
                if found is None:  # nothing to go by: each unseen card to one of the others
                    rng = random.Random(mine)
                    others = [s for s in range(4) if s != view["seat"]]
                    found = [0, 0, 0, 0]
                    found[view["seat"]] = mine
                    for card in range(52):
                        if not mine >> card & 1:
                            found[rng.choice(others)] |= 1 << card
                    hit = None
                with open(out, "a") as f:
                    f.write(json.dumps({"seat": view["seat"], "hand": mine, "pred": found,
                                        "found": hit is not None}) + "\\n")
            print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}),
                  flush=True)
        else:
            break
    with open(out + ".told", "a") as f:
        f.writelines(told)
''')


def _cheat(tmp_path: Path, deals: str) -> tuple[list[dict], Path, str]:
    bot = tmp_path / "cheater.py"
    bot.write_text(CHEATER)
    out = tmp_path / f"seen-{deals}.jsonl"
    spec = f"cmd:{sys.executable} {bot} {out} 5 2 3,sandbox=off"
    cfg = _cfg(tmp_path, deals, agents=[spec, "random"], deals=deals)
    run_tournament(cfg)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    return lines, cfg.db_path, (tmp_path / f"seen-{deals}.jsonl.told").read_text()


def _accuracy(lines: list[dict], deal_seed: int) -> float:
    """The share of the cards the bot had not seen that it put in the right hand."""
    ids = np.repeat(np.arange(2), 3)
    deals = deal_sets(deal_seed, ids, np.tile(np.arange(3), 2))
    right = total = 0
    for line in lines:
        seat, mine = line["seat"], np.uint64(line["hand"])
        (row,) = np.flatnonzero(deals[:, seat] == mine)  # the hand it was dealt
        truth = deals[row]
        for other in range(4):
            if other != seat:
                right += int(np.bitwise_count(np.uint64(line["pred"][other]) & truth[other]))
                total += 13
    return right / total


def test_a_cheating_bot_predicts_the_unseen_cards_at_chance_with_secret_deals(
    tmp_path: Path,
) -> None:
    lines, db, told = _cheat(tmp_path, "secret")
    assert len(lines) >= 16
    with ReadOnlyResults(db) as results:
        info = tournament_info(results)
        secret = read_deals(results.meta())
    assert secret is not None and info.public_seed == 5 and info.seed != 5
    assert not any(line["found"] for line in lines)  # no seed, match or hand fits its cards
    accuracy = _accuracy(lines, info.seed)
    assert 0.22 < accuracy < 0.45, accuracy  # chance: a third
    # nothing it was told holds the secret or what is derived from it
    for value in (secret.secret.hex(), secret.bot_key.hex(), str(info.seed), f"{info.seed:x}"):
        assert value not in told

    # the control: the same bot against public deals knows every card
    lines, db, _ = _cheat(tmp_path, "public")
    assert all(line["found"] for line in lines)
    assert _accuracy(lines, 5) == 1.0


def test_the_same_seed_deals_otherwise_and_the_database_keeps_its_secret(
    tmp_path: Path,
) -> None:
    first, again = _cfg(tmp_path, "first"), _cfg(tmp_path, "again")
    run_tournament(first)
    run_tournament(again)
    # each tournament draws its own secret: the same seed deals otherwise
    assert _results(first.db_path) != _results(again.db_path)
    with ReadOnlyResults(first.db_path) as a, ReadOnlyResults(again.db_path) as b:
        assert read_deals(a.meta()) != read_deals(b.meta())
    public = _cfg(tmp_path, "public", deals="public")
    run_tournament(public)
    assert _results(public.db_path) != _results(first.db_path)  # not the seed's own deals
    # a database resumes with its own secret: a resumed run's rows are a straight run's
    straight = _results(again.db_path)
    con = sqlite3.connect(again.db_path)
    with con:
        con.execute("DELETE FROM matches WHERE match_id = 1")
    con.close()
    run_tournament(again)
    assert _results(again.db_path) == straight
    # and it refuses a run asking for other deals, in one line
    assert cli_main(["tournament", "--agents", "heuristic", "random", "--matches", "2",
                     "--seed", "5", "--max-hands", "3", "--workers", "1", "--db",
                     str(again.db_path), "--out", str(tmp_path / "x")]) == 0  # fmt: skip
    assert _results(again.db_path) == straight
    with pytest.raises(Exception, match="secret deals, this run asks for public deals"):
        run_tournament(_cfg(tmp_path, "again", deals="public"))


# -- the sandbox's view of a tournament --------------------------------------------------------
def test_a_tournament_hides_its_files_from_sandboxed_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOURHUNDRED_SANDBOX_HIDE", "")
    cfg = _cfg(tmp_path, "hidden")
    run_tournament(cfg)
    hidden = os.environ["FOURHUNDRED_SANDBOX_HIDE"].split(os.pathsep)
    for path in (cfg.db_path, Path(cfg.out_dir)):
        assert str(path.resolve()) in hidden


def test_the_sandbox_setting_is_no_part_of_a_bots_files(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("print()\n")
    assert spec_files(f"cmd:python {bot},sandbox=require") == [bot]
    assert spec_files(f"cmd:python {bot}") == [bot]


# -- data never runs code --------------------------------------------------------------------
def test_a_database_naming_a_module_imports_nothing(results_db: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    planted = tmp_path / "planted.py"
    planted.write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    path = tmp_path / "planted.sqlite"
    shutil.copy(results_db, path)
    con = sqlite3.connect(path)
    with con:
        seeding = {"scheme": "pairing-seat", "agent_modules": [str(planted), "planted"]}
        con.execute("UPDATE meta SET value = ? WHERE key = 'seeding'", (json.dumps(seeding),))
        fp = json.loads(con.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()[0])
        fp["agents"].append("planted-bot")
        con.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (json.dumps(fp),))
    con.close()
    with ReadOnlyResults(path) as db:
        blockers = label_blockers(db)
        key = db.query("SELECT pair_a, pair_b, match_id, orientation FROM matches LIMIT 1")[0]
        assert replay_game(db, key).exact  # what it can replay, it replays
    assert blockers["heuristic"] is None
    assert "does not import" in (blockers["planted-bot"] or "")
    pytest.importorskip("starlette")
    from fourhundred_web.watch import Watch

    watch = Watch(path)
    summary = watch.summary()
    assert "does not import" in summary["replay"]["planted-bot"]
    assert summary["seed"] == 7  # the public seed, never the deals' secret
    assert not marker.exists()


# -- writes whole or not at all ------------------------------------------------------------
KILLER = textwrap.dedent("""
    import os, signal, sqlite3, sys
    kill_at = int(sys.argv[2])
    connect = sqlite3.connect
    def killing_connect(*a, **k):
        con = connect(*a, **k)
        count = [0]
        def trace(statement):
            count[0] += 1
            if count[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        con.set_trace_callback(trace)
        return con
    sqlite3.connect = killing_connect
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.db import ResultsDB
    cfg = load_config(None, {"agents": ["heuristic", "random"], "matches": 2, "seed": 5,
                             "max_hands": 3, "db": sys.argv[1]})
    ResultsDB(cfg.db_path, cfg.fingerprint(), create_meta={"deals": {"scheme": "public"}})
    print("not killed")
""")


def test_a_run_killed_as_it_creates_the_database_leaves_one_a_rerun_accepts(
    tmp_path: Path,
) -> None:
    # public deals: the rows of separate runs compare (secret ones draw a secret each)
    straight = _cfg(tmp_path, "straight", deals="public")
    run_tournament(straight)
    killed = 0
    for at in range(1, 12):  # each statement of the creation in turn
        cfg = _cfg(tmp_path, f"killed{at}", deals="public")
        cfg.db_path.parent.mkdir(parents=True)
        proc = subprocess.run([sys.executable, "-c", KILLER, str(cfg.db_path), str(at)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
        if proc.returncode == 0:
            assert "not killed" in proc.stdout, proc.stderr
            continue
        assert proc.returncode == -9, proc.stderr
        killed += 1
        run_tournament(cfg)  # accepted (or made anew), never refused
        assert _results(cfg.db_path) == _results(straight.db_path), at
    assert killed >= 5


def test_a_file_an_earlier_version_left_without_its_fingerprint_is_made_anew(
    tmp_path: Path,
) -> None:
    straight = _cfg(tmp_path, "straight", deals="public")  # (separate runs compare)
    run_tournament(straight)
    empty = _cfg(tmp_path, "empty", deals="public")
    empty.db_path.parent.mkdir(parents=True)
    empty.db_path.write_bytes(b"")
    run_tournament(empty)
    half = _cfg(tmp_path, "half", deals="public")
    half.db_path.parent.mkdir(parents=True)
    from fourhundred_tournament.db.schema import SCHEMA

    con = sqlite3.connect(half.db_path)
    con.executescript(SCHEMA)
    con.close()
    run_tournament(half)
    assert _results(empty.db_path) == _results(half.db_path) == _results(straight.db_path)


def test_the_writer_lock_holds_through_a_symbolic_link(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, "locked")
    link = tmp_path / "link.sqlite"
    with ResultsDB(cfg.db_path, cfg.fingerprint()):
        link.symlink_to(cfg.db_path)
        with pytest.raises(DatabaseBusyError, match="being written by another run"):
            ResultsDB(link, cfg.fingerprint())


def test_a_report_that_cannot_be_written_whole_leaves_the_previous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fourhundred_tournament import files
    from fourhundred_tournament.report import write_report

    report = {"leaderboard": [], "pairwise": [], "games": 1}
    paths = write_report(report, tmp_path)
    before = paths["json"].read_text()

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_report({**report, "games": 2}, tmp_path)
    assert paths["json"].read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths.values())


@pytest.mark.parametrize(("column", "value"), [("bid2", 60), ("bid0", -99), ("dealer", 7),
                                               ("score1", "'lots'")])  # fmt: skip
def test_a_row_out_of_range_is_refused_in_one_line_naming_it(
    results_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, value
) -> None:
    path = tmp_path / "tampered.sqlite"
    shutil.copy(results_db, path)
    con = sqlite3.connect(path)
    with con:
        con.execute(f"UPDATE hands SET {column} = {value} WHERE match_id = 1 AND hand_index = 0")
    con.close()
    assert cli_main(["tournament", "--report-only", "--db", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "hands row" in err[0] and f"{column}=" in err[0] and "match_id=1" in err[0], err[0]
    with ReadOnlyResults(path) as db:
        key = db.query("SELECT pair_a, pair_b, match_id, orientation FROM hands "
                       "WHERE match_id = 1 LIMIT 1")[0]  # fmt: skip
        with pytest.raises(DatabaseDamagedError, match=column):
            replay_game(db, key)


# -- bounds before work ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--matches", str(10**12)], "matches=1000000000000: expected at most 1,000,000"),
        (["--bootstrap", str(10**12)], "bootstrap=1000000000000: expected at most 100,000"),
        (["--move-hard-limit", "1e10"], "move_hard_limit_s=10000000000.0: expected a finite"),
        (["--move-hard-limit", "inf"], "move_hard_limit_s=inf"),
        (["--move-time-limit", "nan"], "move_time_limit_s=nan"),
        (["--move-time-limit", "0"], "move_time_limit_s=0.0"),
    ],
)
def test_sizes_and_limits_out_of_bounds_are_one_line_before_anything_is_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], said: str
) -> None:
    out = tmp_path / "out"
    argv = ["tournament", "--agents", "heuristic", "random", "--out", str(out), *flags]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
    assert not out.exists()


@pytest.mark.parametrize(
    "values",
    [{"table_batch": 10**9}, {"chunk_matches": 10**9}, {"move_hard_limit_s": float("inf")},
     {"bt_prior": float("nan")}, {"max_hands": 10**9}, {"seed": 2**64}],
)  # fmt: skip
def test_the_config_bounds_every_size(values: dict) -> None:
    from fourhundred_tournament.config import TournamentConfigError

    with pytest.raises(TournamentConfigError, match=next(iter(values))):
        load_config(None, {**SMALL, **values})
