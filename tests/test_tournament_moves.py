"""Every hand's moves kept in the results database: any game shown, exported and checked
without its bots (fourhundred_tournament.db.moves, fourhundred_tournament.replay), and databases of schema 1 (no
moves) still read, resumed and replayed by their bots."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fourhundred_cli import main as cli_main
from fourhundred_env.engine import deal_sets
from fourhundred_env.game_records.files import read_record
from fourhundred_env.table import Table
from fourhundred_tournament.config import load_config
from fourhundred_tournament.db import (
    DEALT_BYTES,
    MAX_HAND_MOVES,
    SCHEMA_VERSION,
    DatabaseDamagedError,
    DatabaseMismatchError,
    ReadOnlyResults,
    ResultsDB,
    check_values,
    decode_moves,
    encode_moves,
)
from fourhundred_tournament.replay import label_blockers, replay_game
from fourhundred_tournament.tournament import run_tournament
from tests.dbedit import reseal, to_schema_1
from tests.test_tournament_resume import same_rows, table_rows

SAMPLING = "neural:agents/pretrained/selfplay.pt,sample=true"  # not replayable, and quick
SEARCH = "search:worlds=2,candidates=4,bid_worlds=2"  # not replayable, the cheapest
BASE = {"matches": 2, "seed": 3, "max_hands": 4, "workers": 1, "chunk_matches": 2,
        "table_batch": 3, "progress": False, "bootstrap": 0, "deals": "public"}  # fmt: skip


def _run(path: Path, agents: list[str], **kw) -> Path:
    run_tournament(load_config(None, {**BASE, "agents": agents, "db": str(path), **kw}))
    return path


def _keys(path: Path) -> list[tuple[str, str, int, int]]:
    with ReadOnlyResults(path) as db:
        rows = db.query("SELECT pair_a, pair_b, match_id, orientation FROM matches ORDER BY 3, 4")
    return [tuple(r) for r in rows]  # type: ignore[misc]


def _to_schema_1(path: Path) -> None:
    """Make `path` what a version without moves wrote: no ``moves`` column, schema 1."""
    to_schema_1(path)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament of heuristic-v1 v a sampling bot (not replayable): its database."""
    return _run(tmp_path_factory.mktemp("moves") / "results.sqlite", ["heuristic-v1", SAMPLING])


def test_every_hand_keeps_its_deal_and_each_decision(sampled: Path) -> None:
    with ReadOnlyResults(sampled) as db:
        rows = db.query("SELECT match_id, hand_index, moves, thrown_in, claim_seat, decisions0 "
                        "+ decisions1 + decisions2 + decisions3 FROM hands")  # fmt: skip
    assert len(rows) >= 8
    for match_id, hand_index, moves, thrown_in, claim_seat, decisions in rows:
        dealt, actions = decode_moves(moves)
        assert dealt == deal_sets(3, np.array([match_id]), np.array([hand_index]))[0].tolist()
        assert len(actions) == decisions  # one decision a move, every one of them
        cards = [a for a in actions if a < 52]
        if not thrown_in and claim_seat < 0:
            assert sorted(cards) == list(range(52))


def test_games_of_a_bot_that_does_not_replay_are_shown_and_exported(
    sampled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ReadOnlyResults(sampled) as db:
        assert label_blockers(db) == {"heuristic-v1": None, SAMPLING: None}
        for key in _keys(sampled):
            game = replay_game(db, key)
            assert game.exact and all(h.exact for h in game.hands), game.reason
            assert len(game.hands) == game.match.num_hands
        stored = db.query("SELECT match_id, orientation, score0, score1, score2, score3 "
                          "FROM matches")  # fmt: skip
    for match_id in (0, 1):
        out = tmp_path / f"m{match_id}.400"
        argv = ["record", "export", str(sampled), "--match", str(match_id), "-o", str(out)]
        assert cli_main(argv) == 0  # both games of the match
    for match_id, game, *scores in stored:
        record = read_record(tmp_path / f"m{match_id}.game{game}.400")
        assert list(Table.from_record(record).scores) == scores
    assert capsys.readouterr().out.count("wrote ") == 4


def test_a_search_bot_s_match_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _run(tmp_path / "search.sqlite", ["heuristic-v1", SEARCH], matches=1, max_hands=1)
    assert cli_main(["record", "export", str(path), "--match", "0", "-o", str(tmp_path / "s.json")]) == 0  # fmt: skip
    with ReadOnlyResults(path) as db:
        stored = db.query("SELECT orientation, score0, score1, score2, score3 FROM matches")
    for game, *scores in stored:
        record = read_record(tmp_path / f"s.game{game}.json")
        assert list(Table.from_record(record).scores) == scores
    assert capsys.readouterr().out.count(", 1 hands, scores") == 2  # max_hands 1


def test_the_moves_are_the_same_whatever_the_batch(sampled: Path, tmp_path: Path) -> None:
    other = _run(
        tmp_path / "one.sqlite", ["heuristic-v1", SAMPLING], table_batch=1, chunk_matches=1
    )
    same_rows(sampled, other)  # every column but the seconds: the moves too


def test_a_database_of_schema_1_reads_resumes_and_replays_by_its_bots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = ["heuristic-v1", "minbid"]  # both replayable
    old = _run(tmp_path / "old.sqlite", agents, matches=1)
    _to_schema_1(old)
    with ReadOnlyResults(old) as db:
        assert not db.has_moves
        assert label_blockers(db) == {"heuristic-v1": None, "minbid": None}
        assert all(replay_game(db, key).exact for key in _keys(old))
    assert cli_main(["tournament", "--report-only", "--db", str(old)]) == 0
    assert cli_main(["record", "export", str(old), "--match", "0", "-o", str(tmp_path / "o.400")]) == 0  # fmt: skip
    capsys.readouterr()

    _run(old, agents)  # resumed with a second match: the columns added, the old rows NULL
    straight = _run(tmp_path / "straight.sqlite", agents)
    with ReadOnlyResults(old) as db:
        assert db.meta()["schema"] == str(SCHEMA_VERSION) and db.has_moves
        stored = db.query("SELECT match_id, moves IS NULL FROM hands GROUP BY 1, 2")
        assert sorted(stored) == [(0, 1), (1, 0)]
        # the rows written since carry a digest, the old ones none (and are read as they are)
        sealed = db.query("SELECT match_id, digest IS NULL FROM hands GROUP BY 1, 2")
        assert sorted(sealed) == [(0, 1), (1, 0)] and "digests" not in db.meta()
        check_values(db)
        assert all(replay_game(db, key).exact for key in _keys(old))  # by bots, then by moves
    # every column but the moves (the last: the old rows have none) as in a straight run
    assert [r[:-1] for r in table_rows(old, "hands")] == [
        r[:-1] for r in table_rows(straight, "hands")
    ]
    for table in ("matches", "events"):
        assert table_rows(old, table) == table_rows(straight, table)


def test_a_database_of_schema_1_of_a_bot_that_does_not_replay_says_why(
    sampled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(sampled, path)
    _to_schema_1(path)
    with ReadOnlyResults(path) as db:
        assert "not replayable" in (label_blockers(db)[SAMPLING] or "")
    assert cli_main(["record", "export", str(path), "--match", "0", "-o", str(tmp_path / "x.400")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be exported" in err and "not replayable" in err
    assert not list(tmp_path.glob("x*.400"))


def test_a_database_of_a_newer_schema_is_refused(sampled: Path, tmp_path: Path) -> None:
    path = tmp_path / "newer.sqlite"
    shutil.copy(sampled, path)
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    con.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseMismatchError, match=f"has schema {SCHEMA_VERSION + 1}, newer than"):
        ReadOnlyResults(path)
    with pytest.raises(DatabaseMismatchError, match=f"has schema {SCHEMA_VERSION + 1}, newer than"):
        ResultsDB(path, {"agents": []})
    assert path.read_bytes() == before


_PLAYED = "thrown_in = 0 AND claim_seat = -1"  # a hand played to its last card


def _swap_first_bids(m: bytes) -> bytes:
    return m[:32] + m[33:36] + m[32:33] + m[36:]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m: m[:20], "moves of 20 bytes, expected 33 to 88 bytes"),
        ("moves = 'abc'", "moves of type text"),
        (lambda m: bytes(8) + m[8:], "dealt hands of [0, 13, 13, 13] cards"),
        (lambda m: m[:32] + b"\x00" + m[33:], "move 1 cannot be played"),
        (lambda m: m[:-1], "stop before the hand ends"),
        (_swap_first_bids, "moves"),
        ("score0 = score0 + 5", "give another hand than the row's (scores: database"),
    ],
)  # fmt: skip
def test_damaged_moves_are_refused_in_one_line(
    sampled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change, said: str
) -> None:
    path = tmp_path / "damaged.sqlite"
    shutil.copy(sampled, path)
    con = sqlite3.connect(path)
    with con:
        match_id, orientation, hand, moves = con.execute(
            f"SELECT match_id, orientation, hand_index, moves FROM hands WHERE {_PLAYED} "
            "ORDER BY 1, 2, 3 LIMIT 1"
        ).fetchone()
        where = "WHERE match_id = ? AND orientation = ? AND hand_index = ?"
        if isinstance(change, str):
            con.execute(f"UPDATE hands SET {change} {where}", (match_id, orientation, hand))
        else:
            con.execute(f"UPDATE hands SET moves = ? {where}",
                        (change(moves), match_id, orientation, hand))  # fmt: skip
        reseal(con)  # past the row's digest, to the check of its moves
    con.close()
    key = next(k for k in _keys(path) if k[2:] == (match_id, orientation))
    with ReadOnlyResults(path) as db, pytest.raises(DatabaseDamagedError) as e:
        replay_game(db, key)
    line = str(e.value)
    assert "\n" not in line and said in line, line
    assert "hands row (pair_a='heuristic-v1'" in line and f"hand_index={hand})" in line, line
    argv = ["record", "export", str(path), "--match", str(match_id), "--game", str(orientation),
            "-o", str(tmp_path / "x.400")]  # fmt: skip
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "edited or damaged" in err, err
    assert not (tmp_path / "x.400").exists()


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, MAX_HAND_MOVES), min_size=1, max_size=5))
def test_moves_values_round_trip(seed: int, lengths: list[int]) -> None:
    rng = np.random.default_rng(seed)
    n = len(lengths)
    dealt = deal_sets(seed, np.arange(n), np.zeros(n, np.int64))
    moves = rng.integers(0, 66, (n, MAX_HAND_MOVES)).astype(np.int8)
    values = encode_moves(dealt, moves, np.array(lengths))
    assert [len(v) for v in values] == [DEALT_BYTES + k for k in lengths]
    for v, d, m, k in zip(values, dealt, moves, lengths, strict=True):
        assert decode_moves(v) == (d.tolist(), m[:k].tolist())
