"""Game records (fourhundred_env.game_records.files, docs/records.md): the text and JSON forms round
trip played games, a record replays to the same match, a hand-written record loads, a game
continues from any decision, bad records are one line naming the hand and the move, and
`fourhundred record` shows, checks, converts and exports tournament matches."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fourhundred_agents.registry import make_agent
from fourhundred_cli import main
from fourhundred_cli.match import play_random_match
from fourhundred_env.errors import FourHundredError, RecordError
from fourhundred_env.game_records.files import (
    GameRecord,
    decisions,
    parse_record,
    read_record,
    write_record,
)
from fourhundred_env.rules import Rules
from fourhundred_env.table import Table
from fourhundred_env.view import seat_view
from tests.dbedit import to_schema_1

ROOT = Path(__file__).resolve().parents[1]

# A hand written by hand: S0 bids 7 with six hearts and the clubs king, and the match ends.
GOLDEN = """\
fourhundred-record 1
rules: wiki
scores: 34 30 28 25     # the match begun elsewhere
dealer: s1

hand 1
S0: AH KH QH 8H 5H 2H | KS 3S | 10D 6D | KC 7C 6C
S1: 9H 4H 3H   AS 8S 6S 4S   AD JD 8D 3D   JC 9C
S2: jh 7h qs js 5s 9d 7d 4d 2d ac 8c 3c 2c
S3: 10H,6H,10S,9S,7S,2S,KD,QD,5D,QC,10C,5C,4C
bids: 2 2 7 3
play: AC 4C 6C 9C 2C 5C KC JC AH 3H 7H 6H KH 4H JH 10H QH 9H 3C 5D 8H 3D 8C QD
play: 5H 8D 5S KD 2H 4S JS 2S 7C 6S QS 10C QC 3S 8S 2D 7S KS AS 4D AD 7D 9S 6D
play: JD 9D 10S 10D
tricks: 7 3 1 2
points: +14 +3 -2 +2
scores: 48 33 26 27
"""


def _heuristic_game(seed: int, scores=(20, 20, 20, 20), max_hands: int = 30) -> Table:
    """A match of four seeded heuristic bots through Table, from `scores`."""
    rules = Rules()
    table = Table(rules=rules, dealer=seed % 4, scores=scores, seed=seed)
    agents = [make_agent("heuristic", rules, seed=seed * 4 + s) for s in range(4)]
    for agent in agents:
        agent.reset(1)
    while table.phase != "match_over" and table.hand_number < max_hands:
        table.deal()
        while table.phase in ("bid", "play"):
            seat = int(table.to_play)  # type: ignore[arg-type]
            view = seat_view(table.engine, table.state, np.array([0]), np.int8(seat))
            table.act(int(np.asarray(agents[seat].act(view))[0]))
    return table


def _same_game(a: Table, b: Table) -> None:
    assert a.history == b.history
    assert (a.scores, a.winner, a.target, a.phase) == (b.scores, b.winner, b.target, b.phase)
    # every field of the state (the seed of the table's own deals is no part of a record)
    x, y = a.state.records, b.state.records
    assert all(np.array_equal(x[name], y[name]) for name in x.dtype.names)


# -- round trips ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2])
def test_heuristic_games_round_trip_as_text_and_json(seed: int) -> None:
    table = _heuristic_game(seed)
    record = table.record(seats=("heuristic", "h1", "heuristic", "h3"))
    assert record == GameRecord.from_history(table.history, table.rules, record.seats)
    for text in (record.to_text(), record.to_json()):
        again = parse_record(text)
        assert again == record
        _same_game(Table.from_record(again), table)
    json.loads(record.to_json())


def test_a_random_match_round_trips_and_replays_to_the_same_sheet() -> None:
    table = play_random_match(Rules.preset("pagat"), seed=5)
    record = table.record()
    assert record.rules == Rules.preset("pagat") and record.seats is None
    replayed = Table.from_record(parse_record(record.to_text()))
    assert replayed.score_sheet() == table.score_sheet()
    assert replayed.winner == table.winner is not None


def _random_game(seed: int, extra: int, rules: Rules, scores: tuple[int, ...]) -> Table:
    """Up to 3 hands of random legal play, then `extra` moves into the next hand."""
    table = Table(rules=rules, dealer=seed % 4, scores=scores, seed=seed)
    rng = np.random.default_rng(seed)
    while table.phase != "match_over" and table.hand_number < 3:
        table.deal()
        while table.phase in ("bid", "play"):
            table.act(int(table.engine.random_actions(table.state, rng, max_bid=6)[0]))
    if table.phase == "hand_over":
        table.deal()
        for _ in range(extra):
            if table.phase not in ("bid", "play"):
                break
            table.act(int(table.engine.random_actions(table.state, rng, max_bid=6)[0]))
    return table


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    extra=st.integers(0, 40),
    rules=st.sampled_from([Rules(), Rules.preset("pagat"), Rules(auto_claim=True, target=31)]),
    scores=st.tuples(*[st.integers(-30, 40)] * 4),
)
def test_any_random_legal_game_replays_from_its_text_and_json(seed, extra, rules, scores) -> None:
    table = _random_game(seed, extra, rules, scores)
    record = table.record()
    for text in (record.to_text(), record.to_json()):
        again = Table.from_record(parse_record(text))
        _same_game(again, table)
        assert again.plays == table.plays and again.to_play == table.to_play


def test_forfeits_are_recorded_and_score_the_contract_missed() -> None:
    table = Table(dealer=0, seed=3)
    table.deal()
    table.forfeit(2)
    while table.phase in ("bid", "play"):
        table.act(table.legal()[0])
    record = table.record()
    assert record.hands[0].forfeits == (2,)
    assert "forfeit: S2" in record.to_text()
    _same_game(Table.from_record(parse_record(record.to_text())), table)
    no_forfeit = dataclasses.replace(record.hands[0], forfeits=(), points=None, scores=None)
    other = Table.from_record(dataclasses.replace(record, hands=(no_forfeit,)))
    if table.history[0].bids[2] is not None and not table.history[0].thrown_in:
        assert other.scores[2] != table.scores[2]


# -- a record written by hand -----------------------------------------------------------------
def test_a_hand_written_record_loads_and_gives_its_scores() -> None:
    record = parse_record(GOLDEN)
    table = Table.from_record(record)
    assert table.scores == (48, 33, 26, 27) and table.winner == 0
    hand = record.hands[0]
    assert hand.dealer == 1 and hand.bids == ("2", "2", "7", "3") and len(hand.cards) == 52
    assert hand.deal[2] == "JH 7H | QS JS 5S | 9D 7D 4D 2D | AC 8C 3C 2C"
    assert table.history[0].bids == (7, 3, 2, 2)  # by seat: S2 bid first
    assert [w for _, w in hand.tricks_played()][:3] == [2, 0, 0]


def test_the_manual_s_example_loads_and_gives_its_stated_scores() -> None:
    page = (ROOT / "docs/records.md").read_text()
    blocks = [b for b in re.findall(r"```text\n(.*?)```", page, re.S) if b.startswith("fourhundred-record")]  # fmt: skip
    assert len(blocks) == 1
    record = parse_record(blocks[0])
    table = Table.from_record(record)
    assert record.seats == ("alice", "heuristic", "bob", "heuristic")
    assert table.history[0].thrown_in and table.scores == (48, 33, 26, 27) and table.winner == 0
    assert record.hands[1].points == (14, 3, -2, 2)  # left to the replay, filled in
    # the README's example file is this record, as written
    assert (ROOT / "examples/records/evening.400").read_text() == blocks[0]


def test_hand_record_hands_deal_again() -> None:
    table = _random_game(11, 0, Rules(), (0, 0, 0, 0))
    for hand in table.history:
        fresh = Table(dealer=hand.dealer)
        fresh.deal(hands=hand.hands)
        assert tuple(fresh.hand_text(s) for s in range(4)) == hand.hands
    empty = Table(dealer=0)
    empty.deal(seed=1)
    while empty.phase in ("bid", "play"):
        empty.act(empty.legal()[0])
    if not empty.history[0].thrown_in:
        assert empty.hand_text(0) == "-"
    from fourhundred_env.cards import parse_hand

    assert parse_hand("-", expected=0) == [] and parse_hand("AH | KS", expected=2) == [51, 37]
    with pytest.raises(FourHundredError, match="has 0 cards: expected 13"):
        parse_hand("-")


# -- continuing from a decision ---------------------------------------------------------------
def test_from_record_upto_continues_to_the_same_game() -> None:
    table = _random_game(4, 25, Rules(), (0, 10, 0, 10))
    record = table.record()
    moves = [(n, m) for n, h in enumerate(record.hands, 1) for m in h.moves]
    steps = list(decisions(record))
    assert len(steps) == len(moves) == record.num_decisions
    for k in (0, 1, 4, 17, len(moves) // 2, len(moves) - 1):
        cut = Table.from_record(record, upto=k)
        d = steps[k]
        assert (d.index, d.hand, d.action) == (k, *moves[k]) and cut.to_play == d.seat
        assert cut.state.equals(d.table.state) and cut.history == d.table.history
        for n, move in moves[k:]:  # play on from there with the record's moves
            if cut.phase == "hand_over":
                cut.deal(hands=record.hands[n - 1].deal)
            cut.act(move)
        if cut.hand_number < len(record.hands):
            cut.deal(hands=record.hands[-1].deal)
        _same_game(cut, table)
        assert cut.plays == table.plays
    assert Table.from_record(record, upto=len(moves)).state.equals(Table.from_record(record).state)
    with pytest.raises(RecordError, match=f"upto={len(moves) + 1}: the record has only"):
        Table.from_record(record, upto=len(moves) + 1)


def test_each_decision_s_table_is_its_own() -> None:
    record = parse_record(GOLDEN)
    first, second, third = itertools.islice(decisions(record), 3)
    assert (first.seat, first.action, second.seat, third.move) == (2, "2", 3, 3)
    first.table.act(first.action)
    assert first.table.state.equals(second.table.state)
    second.table.act("13")
    assert third.table.bids == (None, None, 2, 2) and third.table.to_play == 0


def test_clone_is_independent_and_plays_the_same() -> None:
    table = _random_game(8, 9, Rules(), (0, 0, 0, 0))
    copy = table.clone()
    assert copy.state.equals(table.state) and copy.history == table.history
    copy.act(copy.legal()[0])
    assert copy.plays != table.plays or copy.bids != table.bids
    table.act(table.legal()[0])
    assert copy.state.equals(table.state) and copy.plays == table.plays


# -- bad records: one line naming the hand and the move ---------------------------------------
def _golden(old: str, new: str) -> str:
    assert old in GOLDEN
    return GOLDEN.replace(old, new, 1)


# fmt: off
BAD = {
    "wrong card count": (
        _golden("S0: AH KH QH 8H 5H 2H | KS 3S | 10D 6D | KC 7C 6C", "S0: AH KH QH 8H 5H 2H | KS 3S | 10D 6D | KC 7C"),
        "record hand 1, deal of S0: hand .* has 12 cards: expected 13",
    ),
    "duplicate card": (
        _golden("S0: AH KH QH 8H 5H 2H | KS 3S | 10D 6D | KC 7C 6C", "S0: AH KH QH 8H 5H 2H | KS 3S | 10D 6D | KC 7C JC"),
        "record hand 1, deal: card JC is dealt to S0 and to S1: expected every card exactly once",
    ),
    "illegal bid": (
        _golden("bids: 2 2 7 3", "bids: 2 1 7 3"),
        r"record hand 1, move 2 \(seat 3, bid\): illegal bid 1 \(minimum bid of seat 3 is 2\)",
    ),
    "illegal card": (
        _golden("play: AC 4C 6C 9C", "play: AC 4C 6C 4H"),
        r"record hand 1, move 8 \(seat 1, play\): illegal card 4H \(must follow the suit led\); legal: 9C JC",
    ),
    "a card not held": (
        _golden("play: AC 4C 6C 9C", "play: AC 4C 6C KD"),
        r"record hand 1, move 8 \(seat 1, play\): illegal card KD \(seat 1 does not hold KD\)",
    ),
    "malformed card": (
        _golden("play: AC 4C", "play: AC 4X"),
        r"record hand 1, move 6 \(seat 3, play\): unknown suit 'X' in card '4X'",
    ),
    "wrong version": (_golden("fourhundred-record 1", "fourhundred-record 2"), "record line 1: version '2' of fourhundred-record: expected version 1"),
    "result mismatch": (
        _golden("scores: 48 33 26 27", "scores: 48 33 26 37"),
        "record hand 1: the record gives scores 48 33 26 37, the replay 48 33 26 27",
    ),
    "wrong dealer": (_golden("hand 1\n", "hand 1\ndealer: S2\n"), "record hand 1: dealer S2 in the record, S1 by the rules"),
    "garbage text": ("this is not a record\n", "record line 1: 'this is not a record': expected the record to open with the line 'fourhundred-record 1'"),
    "unknown key": (_golden("bids:", "bidz:"), "record line 11: unknown key 'bidz' in hand 1: expected one of dealer, s0"),
    "a hand after the match": (GOLDEN + GOLDEN[GOLDEN.index("hand 1") :].replace("hand 1", "hand 2").replace("scores: 48 33 26 27", ""),
                               r"record hand 2: the match was over after hand 1 \(team 0 won\)"),
    "moves after the hand": (_golden("play: JD 9D 10S 10D", "play: JD 9D 10S 10D 2C"), "record hand 1, move 57: the hand is over after move 56 .13 tricks played.: expected no more moves"),
    "wrong JSON": ('{"format": "fourhundred-record", "version": 1, "dealer": 0, "hands": [{"deal": "AH"}]}', "record hand 1, deal: 'AH': expected the 4 hands of S0 to S3 as text"),
    "broken JSON": ('{"format": "fourhundred-record", "version": 1,', r"record: not valid JSON \(Expecting property name"),
    "JSON number of 5000 digits": ('{"format": "fourhundred-record", "version": ' + "9" * 5000 + "}", r"record: not valid JSON \('Exceeds the limit"),
    "JSON of another version": ('{"format": "fourhundred-record", "version": 3}', "record: version 3 of fourhundred-record: expected version 1"),
    "JSON of another format": ('{"format": "pbn", "version": 1}', "record: format 'pbn': expected 'fourhundred-record'"),
    "unknown JSON key": ('{"format": "fourhundred-record", "version": 1, "dealer": 0, "handz": []}', r"record: unknown key\(s\) \['handz'\]"),
}
# fmt: on


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_record_is_one_line_naming_what_is_wrong(case: str) -> None:
    text, message = BAD[case]
    with pytest.raises(RecordError) as e:
        parse_record(text)
    assert "\n" not in str(e.value)
    assert re.match(message, str(e.value)), str(e.value)


@settings(max_examples=150, deadline=None)
@given(
    json_form=st.booleans(),
    edits=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(" :#|,-SHDCAKQJT1234\n{}[]\"x")), min_size=1, max_size=4),
)  # fmt: skip
def test_any_edit_of_a_record_loads_or_is_one_line(json_form: bool, edits) -> None:
    chars = list(_GOLDEN_JSON if json_form else GOLDEN)
    for where, char in edits:
        chars[int(where * (len(chars) - 1))] = char
    try:
        parse_record("".join(chars))
    except RecordError as e:
        assert "\n" not in str(e)


_GOLDEN_JSON = parse_record(GOLDEN).to_json()


def test_a_bad_json_move_names_the_hand_and_the_move() -> None:
    data = json.loads(parse_record(GOLDEN).to_json())
    data["hands"][0]["cards"][20] = "2C"
    with pytest.raises(
        RecordError,
        match=r"^record hand 1, move 25 \(seat 0, play\): illegal card 2C \(seat 0 does not hold 2C\)",
    ):
        parse_record(json.dumps(data))
    data["rules"] = {"preset": "wiki", "targett": 31}
    with pytest.raises(RecordError, match=r"record rules: unknown rules flag\(s\) \['targett'\]"):
        parse_record(json.dumps(data))


def test_rules_in_text_take_the_differing_flags() -> None:
    rules = Rules.preset("pagat", target=31, auto_claim=True, move_time_limit_s=2.5)
    record = dataclasses.replace(parse_record(GOLDEN), rules=rules, hands=(), scores=(0, 0, 0, 0))
    text = record.to_text()
    assert "rules: pagat target=31 auto_claim=true move_time_limit_s=2.5" in text
    assert parse_record(text).rules == rules == parse_record(record.to_json()).rules
    with pytest.raises(RecordError, match="record line 2: rules: target='x': expected an integer"):
        parse_record("fourhundred-record 1\nrules: wiki target=x\ndealer: S0\n")


# -- files ------------------------------------------------------------------------------------
def test_a_record_saved_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    """Some editors (Windows Notepad) start UTF-8 text with a BOM; it was refused."""
    record = parse_record(GOLDEN)
    for text in (record.to_text(), record.to_json()):
        path = tmp_path / "bom.400"
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert read_record(path) == record
        assert parse_record("\ufeff" + text) == record


def test_files_by_suffix_and_errors_name_the_file(tmp_path: Path) -> None:
    record = parse_record(GOLDEN)
    text_path = write_record(record, tmp_path / "game.400")
    json_path = write_record(record, tmp_path / "game.json")
    assert text_path.read_text().startswith("fourhundred-record 1")
    assert json.loads(json_path.read_text())["format"] == "fourhundred-record"
    assert read_record(text_path) == read_record(json_path) == record
    assert not list(tmp_path.glob(".*part"))
    (tmp_path / "bad.400").write_text(_golden("bids: 2 2 7 3", "bids: 2 2 7 1"))
    with pytest.raises(RecordError, match=r"bad.400: record hand 1, move 4 \(seat 1, bid\)"):
        read_record(tmp_path / "bad.400")
    with pytest.raises(RecordError, match="does not exist"):
        read_record(tmp_path / "nothing.400")


def test_a_record_is_not_written_over_what_is_not_a_record(tmp_path: Path) -> None:
    """A results database, a checkpoint, a folder or a pipe given as a record's name is
    refused in one line and left as it was; a record (or an empty file) is replaced, and a
    link is written through, staying a link."""
    import os
    import sqlite3

    record = parse_record(GOLDEN)
    db = tmp_path / "results.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE meta (key TEXT)").connection.commit()
    weights = tmp_path / "policy.pt"
    weights.write_bytes(b"PK\x03\x04" + bytes(range(256)))
    for path in (db, weights):
        before = path.read_bytes()
        with pytest.raises(RecordError, match="exists and is not a game record"):
            write_record(record, path)
        assert path.read_bytes() == before
    with pytest.raises(RecordError, match="it is a folder"):
        write_record(record, tmp_path)
    os.mkfifo(tmp_path / "pipe.400")
    with pytest.raises(RecordError, match="not a regular file"):
        write_record(record, tmp_path / "pipe.400")
    (tmp_path / "empty.400").write_text("")
    old = write_record(
        parse_record(_golden("bids: 2 2 7 3", "bids: 2 2 7 3")), tmp_path / "old.400"
    )
    for path in (tmp_path / "empty.400", old):
        write_record(record, path)
        assert read_record(path) == record
    (tmp_path / "link.400").symlink_to(tmp_path / "real.400")
    write_record(record, tmp_path / "link.400")
    assert (tmp_path / "link.400").is_symlink() and read_record(tmp_path / "real.400") == record
    assert not list(tmp_path.glob(".*part"))


# -- the command line -------------------------------------------------------------------------
def test_cli_check_show_and_convert(tmp_path: Path, capsys) -> None:
    path = tmp_path / "golden.400"
    path.write_text(GOLDEN)
    assert main(["record", "check", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "ok: 1 hand, scores 48 33 26 27, team 0 won"
    assert main(["record", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Score sheet" in out and "team 0 wins" in out
    assert main(["record", "show", str(path), "--hand", "1"]) == 0
    out = capsys.readouterr().out
    assert "bids: S2 2, S3 2, S0 7, S1 3" in out
    assert "trick  1: S2 AC  S3 4C  S0 6C  S1 9C  -> S2" in out
    assert "trick 13: S1 JD  S2 9D  S3 10S  S0 10D  -> S1" in out
    assert main(["record", "convert", str(path), str(tmp_path / "golden.json")]) == 0
    assert read_record(tmp_path / "golden.json") == read_record(path)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["record", "check", "{dir}/bad.400"], "bad.400: record hand 1, move 2 (seat 3, bid): illegal bid 1"),
        (["record", "check", "{dir}/none.400"], "record file"),
        (["record", "show", "{dir}/good.400", "--hand", "5"], "--hand 5: the record has hands 1 to 1"),
        (["record", "export", "{dir}/none.sqlite", "--match", "0"], "results database"),
    ],
)  # fmt: skip
def test_cli_bad_input_is_one_line_and_exit_code_2(tmp_path: Path, capsys, argv, message) -> None:
    (tmp_path / "bad.400").write_text(_golden("bids: 2 2 7 3", "bids: 2 1 7 3"))
    (tmp_path / "good.400").write_text(GOLDEN)
    assert main([a.replace("{dir}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fourhundred: error: ") and message in err


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament of two replayable bots, one duplicate match, public deals."""
    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.tournament import run_tournament

    path = tmp_path_factory.mktemp("records") / "results.sqlite"
    cfg = load_config(None, {
        "agents": ["heuristic", "minbid"], "matches": 1, "seed": 5, "workers": 1,
        "chunk_matches": 1, "table_batch": 2, "db": str(path), "progress": False,
        "bootstrap": 0, "deals": "public",
    })  # fmt: skip
    run_tournament(cfg)
    return path


def test_cli_export_writes_records_that_give_the_stored_scores(small_db: Path, tmp_path: Path, capsys) -> None:  # fmt: skip
    from fourhundred_tournament.db import ReadOnlyResults

    out = tmp_path / "m.400"
    assert main(["record", "export", str(small_db), "--match", "0", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    with ReadOnlyResults(small_db) as db:
        rows = db.query("SELECT orientation, score0, score1, score2, score3, num_hands, team0 "
                        "FROM matches WHERE match_id = 0 ORDER BY orientation")  # fmt: skip
    for game, *scores, num_hands, team0 in rows:
        record = read_record(tmp_path / f"m.game{game}.400")
        table = Table.from_record(record)
        assert list(table.scores) == scores and len(record.hands) == num_hands
        assert record.seats is not None and record.seats[0] == record.seats[2] == team0
        assert f"m.game{game}.400" in printed
    assert main(["record", "export", str(small_db), "--match", "0", "--pair", "minbid", "heuristic",
                 "--game", "1", "-o", str(tmp_path / "one.json")]) == 0  # fmt: skip
    assert read_record(tmp_path / "one.json") == read_record(tmp_path / "m.game1.400")
    assert main(["record", "export", str(small_db), "--match", "7"]) == 2
    assert "0 pairings have a finished match 7" in capsys.readouterr().err
    before = small_db.read_bytes()  # the database given as the record's name
    argv = ["record", "export", str(small_db), "--match", "0", "--game", "0", "-o", str(small_db)]
    assert main(argv) == 2
    assert "exists and is not a game record" in capsys.readouterr().err
    assert small_db.read_bytes() == before


def test_cli_export_into_a_folder_writes_in_it(small_db: Path, tmp_path: Path) -> None:
    """-o DIR/ (made if missing) or an existing folder: the default names in it; the records
    were written beside the folder, as DIR.game0 and DIR.game1."""
    for out, folder in ((f"{tmp_path / 'new'}/", tmp_path / "new"), (str(tmp_path), tmp_path)):
        assert main(["record", "export", str(small_db), "--match", "0", "-o", out]) == 0
        assert sorted(p.name for p in folder.glob("match0.game*.400")) == [
            "match0.game0.400", "match0.game1.400"]  # fmt: skip
    assert not list(tmp_path.parent.glob(f"{tmp_path.name}.game*"))
    assert not list(tmp_path.glob("new.game*"))


def test_cli_export_of_a_match_that_does_not_replay_says_why(small_db: Path, tmp_path: Path, capsys) -> None:  # fmt: skip
    import shutil
    import sqlite3

    path = tmp_path / "tampered.sqlite"
    shutil.copy(small_db, path)
    con = sqlite3.connect(path)
    with con:  # a database of schema 1 (no moves): its bots play the match again
        to_schema_1(path, con)
        con.execute("UPDATE hands SET score0 = score0 + 5 WHERE match_id = 0 AND orientation = 1 "
                    "AND hand_index = 0")  # fmt: skip
    con.close()
    assert main(["record", "export", str(path), "--match", "0", "--game", "1", "-o", str(tmp_path / "x.400")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "game 1 cannot be exported: hand 1 replays differently" in err
    assert not (tmp_path / "x.400").exists()
