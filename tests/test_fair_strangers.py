"""Fair among strangers: a fresh deal secret for every tournament and every ladder
event, so that published games tell nothing of any other event's cards; and no spec read from
data (a database, a record) ever starts a program."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from fourhundred_cli import main
from fourhundred_tournament.config import files_digest, load_config
from fourhundred_tournament.db import DatabaseDamagedError, ReadOnlyResults, decode_moves
from fourhundred_tournament.ladder.play import LadderError, add_bots
from fourhundred_tournament.replay import label_blockers, replay_game
from fourhundred_tournament.tournament import run_tournament
from tests.dbedit import reseal
from tests.test_tournament_resume import same_rows, table_rows

ROOT = Path(__file__).resolve().parents[1]
PLAY = {"workers": 1, "progress": False, "chunk_matches": 2, "table_batch": 8}
CHANCE = 0.25  # a guessed 13-card hand holds a quarter of another seat's cards


# -- a fresh secret for every event ------------------------------------------------------------
def _deals(db: Path) -> dict[tuple[str, str, int, int, int], list[int]]:
    """Every hand's cards as dealt, by seat: (pair_a, pair_b, match, orientation, hand)."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT pair_a, pair_b, match_id, orientation, hand_index, moves FROM hands"
        ).fetchall()
    finally:
        con.close()
    return {tuple(r[:5]): decode_moves(r[5])[0] for r in rows}  # type: ignore[misc]


def _predicted(truth: list[int], guess: list[int], seats: tuple[int, ...]) -> tuple[int, int]:
    """(cards of the seats other than `seats` that `guess` puts in the right hand, cards)."""
    others = [s for s in range(4) if s not in seats]
    right = sum(int(np.bitwise_count(np.uint64(guess[s] & truth[s]))) for s in others)
    return right, 13 * len(others)


def _later_bot_predicts(db: Path, old: tuple[str, str], new: str) -> tuple[int, int]:
    """What the bot `new`, added after the pairing `old` was published, predicts of the other
    seats' cards in its own games by taking each hand to be the published one of the same
    match, orientation and hand index: (right, total)."""
    deals = _deals(db)
    published = {k[2:]: v for k, v in deals.items() if k[:2] == old}
    right = total = 0
    for key, truth in deals.items():
        if new not in key[:2] or key[2:] not in published:
            continue
        side = key[:2].index(new)
        seats = (0, 2) if side == key[3] else (1, 3)  # pair_a holds seats 0 and 2 in game 0
        r, t = _predicted(truth, published[key[2:]], seats)
        right, total = right + r, total + t
    return right, total


def test_a_bot_added_later_predicts_the_published_events_cards_at_chance(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "minbid"], 3, max_hands=4, play=PLAY)
    add_bots(db, ["heuristic"], 3, play=PLAY)
    right, total = _later_bot_predicts(db, ("minbid", "random"), "heuristic")
    assert total >= 300, total
    # chance, not 1.0 as when every event shared one secret
    assert right / total < CHANCE + 0.08, (right, total)
    # the control: a ladder of public deals (asked for by name) gives every card away
    public = tmp_path / "public.sqlite"
    add_bots(public, ["random", "minbid"], 3, max_hands=4, play=PLAY, deals="public")
    add_bots(public, ["heuristic"], 3, play=PLAY, deals="public")
    right, total = _later_bot_predicts(public, ("minbid", "random"), "heuristic")
    assert right == total >= 300


def test_two_tournaments_of_the_same_seed_deal_unlike(tmp_path: Path) -> None:
    def run(name: str, deals: str) -> Path:
        cfg = load_config(None, {"agents": ["heuristic", "random"], "matches": 3, "seed": 0,
                                 "max_hands": 4, "workers": 1, "progress": False,
                                 "bootstrap": 0, "deals": deals,
                                 "db": str(tmp_path / name / "results.sqlite"),
                                 "out_dir": str(tmp_path / name)})  # fmt: skip
        run_tournament(cfg)
        return cfg.db_path

    first, second = _deals(run("a", "secret")), _deals(run("b", "secret"))
    right = total = 0
    for key, truth in second.items():
        if key in first:
            r, t = _predicted(truth, first[key], (0,))  # seat 0 predicts the others
            right, total = right + r, total + t
    assert total >= 300 and right / total < CHANCE + 0.08, (right, total)
    # public deals stay reproducible: the same seed deals the same cards
    assert _deals(run("c", "public")) == _deals(run("d", "public"))


def test_a_resumed_ladder_event_deals_from_its_own_secret(tmp_path: Path) -> None:
    straight = tmp_path / "straight.sqlite"
    add_bots(straight, ["random", "minbid"], 2, max_hands=4, play=PLAY)
    add_bots(straight, ["heuristic"], 2, play=PLAY)
    stopped = tmp_path / "stopped.sqlite"
    shutil.copy(straight, stopped)
    con = sqlite3.connect(stopped)
    with con:  # event 2 stopped half way: its games of match 1 never written
        con.execute("DELETE FROM matches WHERE pair_a = 'heuristic' AND match_id = 1")
        con.execute("UPDATE ladder_events SET finished = NULL WHERE event = 2")
        reseal(con)  # as the stopped run left it: every row its writer's
    con.close()
    assert len(table_rows(stopped, "matches")) < len(table_rows(straight, "matches"))
    s = add_bots(stopped, ["heuristic"], 2, play=PLAY)
    assert s.resumed == ["heuristic"] and s.games_played == 4
    same_rows(straight, stopped)
    con = sqlite3.connect(straight)
    try:
        secrets = [r[0] for r in con.execute("SELECT secret FROM ladder_deals ORDER BY event")]
    finally:
        con.close()
    assert len(secrets) == 2 and secrets[0] != secrets[1]


def test_a_ladder_takes_public_deals_only_by_name(tmp_path: Path, capsys) -> None:
    db = tmp_path / "public.sqlite"
    cfg = load_config(None, {"agents": ["heuristic", "random"], "matches": 1, "max_hands": 2,
                             "workers": 1, "progress": False, "bootstrap": 0,
                             "deals": "public", "db": str(db), "out_dir": str(tmp_path)})  # fmt: skip
    run_tournament(cfg)
    before = db.read_bytes()
    assert main(["ladder", "add", "minbid", "--db", str(db), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "anyone who knows the seed predicts every card" in err and err.count("\n") == 1
    assert db.read_bytes() == before
    s = add_bots(db, ["minbid"], 1, play=PLAY, deals="public")
    assert s.games_played == 4


# -- data never starts a program -----------------------------------------------------------------
def _planted_spec(tmp_path: Path) -> tuple[str, Path]:
    """A ``cmd:`` spec that would create a marker file, unconfined, naming a public file (so
    that its digest can be planted beside it)."""
    marker = tmp_path / "ran"
    public = tmp_path / "public.txt"
    public.write_text("anyone's file\n")
    code = f'import pathlib; pathlib.Path("{marker}").touch()'  # (inside single quotes)
    return f"cmd:{sys.executable} -c '{code}' {public},sandbox=off", marker


def _plant(results_db: Path, tmp_path: Path) -> tuple[Path, str, Path]:
    """A copy of the results database whose bot ``random`` is a planted program without
    moves."""
    spec, marker = _planted_spec(tmp_path)
    path = tmp_path / "planted.sqlite"
    shutil.copy(results_db, path)
    con = sqlite3.connect(path)
    with con:
        fp = json.loads(con.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()[0])
        fp["agents"] = [spec if a == "random" else a for a in fp["agents"]]
        fp.setdefault("agent_files", {})[spec] = files_digest(spec)
        con.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (json.dumps(fp),))
        for table, columns in (("hands", ("pair_b",)), ("events", ("pair_b",)),
                               ("matches", ("pair_b", "team0", "team1", "winner"))):  # fmt: skip
            for column in columns:
                con.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = 'random'", (spec,))
        con.execute("UPDATE hands SET moves = NULL")
        reseal(con)  # the planter recomputes the rows' digests: they prove nothing
    con.close()
    return path, spec, marker


def test_a_planted_program_in_a_database_runs_nowhere(
    results_db: Path, tmp_path: Path, capsys
) -> None:
    path, spec, marker = _plant(results_db, tmp_path)
    key = ("heuristic", spec, 0, 0)
    with ReadOnlyResults(path) as db:
        game = replay_game(db, key)
        blockers = label_blockers(db)
    assert not game.exact and "starts a program" in (game.reason or "")
    assert "starts a program" in (blockers[spec] or "")
    assert blockers["heuristic"] is None  # what it can replay, it replays
    # record export: refused in one line
    capsys.readouterr()
    out = tmp_path / "m.400"
    assert main(["record", "export", str(path), "--match", "0", "--pair", "heuristic", spec,
                 "-o", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "starts a program" in err and err.count("\n") == 1
    # ladder add plays nothing with it, unless its spec is named again; report runs nothing
    with pytest.raises(LadderError, match="starts a program"):
        add_bots(path, ["heuristic-v1"], 1, play=PLAY)
    assert main(["ladder", "report", "--db", str(path), "--bootstrap", "0",
                 "--out", str(tmp_path / "report")]) == 0  # fmt: skip
    # the web's Watch view
    pytest.importorskip("starlette")
    from fourhundred_web.watch import Watch

    watch = Watch(path)
    assert "starts a program" in watch.summary()["replay"][spec]
    twins = watch.match(("heuristic", spec), 0)["twins"]
    assert all(t is not None and not t["exact"] for t in twins)
    assert not marker.exists()


def test_a_ladder_row_shown_as_another_bot_runs_nothing(tmp_path: Path) -> None:
    spec, marker = _planted_spec(tmp_path)
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", "minbid"], 1, max_hands=2, play=PLAY)
    con = sqlite3.connect(db)
    with con:  # shown as `random`, its spec a program
        con.execute("UPDATE ladder_bots SET spec = ? WHERE label = 'random'", (spec,))
        reseal(con)  # the planter recomputes the rows' digests: they prove nothing
    con.close()
    before = db.read_bytes()
    with pytest.raises(DatabaseDamagedError, match="for its spec and version"):
        add_bots(db, ["heuristic"], 1, play=PLAY)
    assert db.read_bytes() == before
    assert not marker.exists()


def test_a_cmd_bot_s_stored_games_export_and_replay_from_their_moves(
    tmp_path: Path, capsys
) -> None:
    bot = tmp_path / "bot.py"
    shutil.copy(ROOT / "examples" / "bots" / "simple_bot.py", bot)
    spec = f"cmd:{sys.executable} {bot},sandbox=off"
    cfg = load_config(None, {"agents": [spec, "random"], "matches": 1, "max_hands": 2,
                             "workers": 1, "progress": False, "bootstrap": 0,
                             "db": str(tmp_path / "r.sqlite"), "out_dir": str(tmp_path)})  # fmt: skip
    run_tournament(cfg)
    bot.unlink()  # the program is gone: its games come back from their moves alone
    with ReadOnlyResults(cfg.db_path) as db:
        assert replay_game(db, (spec, "random", 0, 1)).exact
    out = tmp_path / "m.json"
    assert main(["record", "export", str(cfg.db_path), "--match", "0", "-o", str(out)]) == 0
    assert (tmp_path / "m.game0.json").is_file() and (tmp_path / "m.game1.json").is_file()
    con = sqlite3.connect(cfg.db_path)
    with con:  # without its moves, the game is refused, not played again
        con.execute("UPDATE hands SET moves = NULL WHERE orientation = 1")
        reseal(con)  # past the rows' digests, to the refusal of a game without its moves
    con.close()
    with ReadOnlyResults(cfg.db_path) as db:
        game = replay_game(db, (spec, "random", 0, 1))
    assert not game.exact and "stored moves only" in (game.reason or "")
    capsys.readouterr()
    assert main(["record", "export", str(cfg.db_path), "--match", "0", "--game", "1"]) == 2
    err = capsys.readouterr().err
    assert "stored moves only" in err and err.count("\n") == 1


def test_a_checkpoint_that_names_a_program_as_its_card_player_runs_nothing(
    tmp_path: Path, capsys
) -> None:
    """A bidding checkpoint is a file someone may hand you: its recorded play policy is a spec
    read from data, and one that starts a program is refused in one line, never run."""
    torch = pytest.importorskip("torch")
    spec, marker = _planted_spec(tmp_path)
    checkpoint = torch.load(ROOT / "agents" / "pretrained" / "bidder.pt", weights_only=False)
    checkpoint["extra"]["play_policy"] = spec
    planted = tmp_path / "bidder.pt"
    torch.save(checkpoint, planted)
    capsys.readouterr()
    assert main(["tournament", "--agents", f"neural-bid:{planted}", "heuristic-v1",
                 "--matches", "1", "--workers", "1", "--no-progress",
                 "--out", str(tmp_path / "t")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names a play policy that starts a program" in err, err
    assert not marker.exists()
