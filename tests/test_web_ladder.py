"""Watch on a ladder, through the JSON API: the rating list with intervals, the
ratings after each event, each pairing's matches, and a ``cmd:`` bot's games replayed card by
card while its program is the one the ladder fingerprinted, refused with the file's name when
it changed. The page itself: tests/test_web_browser_watch.py."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")

from starlette.testclient import TestClient

from fourhundred_tournament.ladder.play import add_bots
from fourhundred_web.app import create_app
from tests.dbedit import to_schema_1

ROOT = Path(__file__).resolve().parents[1]
SIMPLE = ROOT / "examples" / "bots" / "simple_bot.py"
BOT = f"cmd:{sys.executable} {SIMPLE}"
SHOWN = "cmd:python simple_bot.py"  # its public name: no path
# public deals: the cards these tests were written for (secret deals: test_tournament_safety)
PLAY = {"workers": 1, "progress": False, "chunk_matches": 2, "table_batch": 8, "deals": "public"}


def build_ladder(path: Path, bot: str = BOT) -> Path:
    """A ladder of three events: random and `bot`, then heuristic, then minbid (one
    duplicate match per pairing, games capped at 4 hands so that they are quick)."""
    add_bots(path, ["random", bot], 1, max_hands=4, play=PLAY)
    add_bots(path, ["heuristic"], 1, play=PLAY, run=[bot])  # its program, named again
    add_bots(path, ["minbid"], 1, play=PLAY, run=[bot])
    return path


@pytest.fixture(scope="module")
def ladder_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_ladder(tmp_path_factory.mktemp("ladder") / "ladder.sqlite")


@pytest.fixture(scope="module")
def client(ladder_db: Path) -> TestClient:
    return TestClient(create_app(db=ladder_db), base_url="http://localhost")


def _no_path(text: str, *paths: Path | str) -> None:
    for p in (*paths, ROOT, sys.executable, Path(sys.executable).parent):
        assert str(p) not in text, (p, text[:300])


def _pair(client: TestClient, a: str, b: str) -> int:
    pairs = client.get("/api/watch").json()["pairs"]
    return pairs.index(sorted([a, b]))


def test_the_rating_list_history_and_pairings_of_a_ladder(
    client: TestClient, ladder_db: Path
) -> None:
    summary = client.get("/api/watch")
    assert summary.json()["ladder"] is True and summary.json()["file"] == "ladder.sqlite"
    assert summary.json()["replay"] == {SHOWN: None, "heuristic": None, "minbid": None,
                                        "random": None}  # fmt: skip
    r = client.get("/api/watch/ladder")
    assert r.status_code == 200, r.text
    _no_path(summary.text + r.text, ladder_db.parent)
    ladder = r.json()
    bots = ladder["bots"]
    assert ladder["file"] == "ladder.sqlite" and ladder["max_hands"] == 4
    assert sorted(b["label"] for b in bots) == sorted([SHOWN, "heuristic", "minbid", "random"])
    assert [b["rank"] for b in bots] == [1, 2, 3, 4]
    elos = [b["elo"] for b in bots]
    assert elos == sorted(elos, reverse=True)  # best first
    for b in bots:
        assert b["low"] <= b["elo"] <= b["high"] and b["version"] == 1 and b["active"]
        assert b["games"] == 6  # three pairings of one duplicate match: 2 games each
    # the history: the ratings after each event, aligned with the rating list
    events = ladder["events"]
    assert [(e["event"], e["kind"], e["pairings"]) for e in events] == [
        (1, "add", 1),
        (2, "add", 2),
        (3, "add", 3),
    ]
    index = {b["label"]: i for i, b in enumerate(bots)}
    first = events[0]["ratings"]
    assert first[index["heuristic"]] is None and first[index["minbid"]] is None
    assert first[index["random"]] is not None and first[index[SHOWN]] is not None
    assert all(r is not None for r in events[-1]["ratings"])
    assert [r["elo"] for r in events[-1]["ratings"]] == elos  # the list is the last event's
    # each pairing: its matches and games, and the index of its match list
    pairings = ladder["pairings"]
    assert len(pairings) == 6
    pairs = summary.json()["pairs"]
    for p in pairings:
        assert (p["matches"], p["games"], p["games_expected"]) == (1, 2, 2)
        assert pairs[p["pair"]] == sorted([bots[p["a"]]["label"], bots[p["b"]]["label"]])
        listed = client.get("/api/watch/matches", params={"pair": p["pair"]}).json()
        assert listed["total"] == p["matches"]
    assert [p["event"] for p in pairings] == [1, 2, 2, 3, 3, 3]


def test_watch_replays_a_cmd_bot_s_game_card_by_card(client: TestClient) -> None:
    r = client.get("/api/watch/match", params={"pair": _pair(client, SHOWN, "random"), "match": 0})
    assert r.status_code == 200, r.text
    _no_path(r.text)
    twins = r.json()["twins"]
    assert {t["team0"] for t in twins} == {SHOWN, "random"}
    played = 0
    for twin in twins:
        assert twin["exact"] and twin["reason"] is None, twin["reason"]
        for hand in twin["hands"]:
            assert hand["replayed"] and hand["problem"] is None
            assert [c["bid"] for c in hand["calls"] if c["bid"] != "redeal"] == [
                hand["bids"][c["seat"]] for c in hand["calls"] if c["bid"] != "redeal"
            ]
            if not hand["thrown_in"]:
                played += 1
                assert len(hand["plays"]) == 52 and len(hand["trick_winners"]) == 13
                assert [hand["trick_winners"].count(s) for s in range(4)] == hand["tricks"]
                # every card played once, each from the hand it was dealt to
                dealt = {c: s for s, cards in enumerate(hand["deal"]) for c in cards}
                assert all(dealt[p["card"]] == p["seat"] for p in hand["plays"])
    assert played >= 1


def test_a_bot_program_without_moves_is_never_run_and_the_reason_says_so(
    tmp_path: Path,
) -> None:
    program = tmp_path / "bot.py"
    shutil.copy(SIMPLE, program)
    marker = tmp_path / "ran"
    program.write_text(f"open({str(marker)!r}, 'w').close()\n" + program.read_text())
    spec = f"cmd:{sys.executable} {program},sandbox=off"  # unconfined: it could write the marker
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", spec], 1, max_hands=3, play=PLAY)
    marker.unlink()
    to_schema_1(db)  # schema 1, no moves: a program is never run to show them
    client = TestClient(create_app(db=db), base_url="http://localhost")
    shown = "cmd:python bot.py,sandbox=off"
    query = {"pair": _pair(client, shown, "random"), "match": 0}
    replay = client.get("/api/watch").json()["replay"]
    why = replay[shown]
    assert why.startswith(f"{shown}: it starts a program, which a database's spec never")
    assert replay["random"] is None
    r = client.get("/api/watch/match", params=query)
    assert r.status_code == 200
    _no_path(r.text, tmp_path)
    for twin in r.json()["twins"]:
        assert not twin["exact"] and twin["reason"] == f"cannot replay the cards: {why}"
        # the stored bids and scores are still shown, no card
        assert twin["hands"] and not any(h["replayed"] or "plays" in h for h in twin["hands"])
    assert not marker.exists()  # a spec read from the database starts no program


def test_a_tournament_database_has_no_ladder_view(results_db: Path) -> None:
    client = TestClient(create_app(db=results_db), base_url="http://localhost")
    assert client.get("/api/watch").json()["ladder"] is False
    r = client.get("/api/watch/ladder")
    assert r.status_code == 404
    assert r.json()["error"] == (
        "results.sqlite is a tournament's database, not a ladder (fourhundred ladder add "
        "--db FILE makes one)"
    )


@pytest.mark.parametrize(
    "params, status, match",
    [
        ({"bot": "x"}, 400, r"unknown field\(s\) \['bot'\]"),
        ({"path": "/etc/passwd"}, 400, r"unknown field\(s\) \['path'\]"),
    ],
)
def test_the_ladder_route_refuses_bad_queries(
    client: TestClient, params: dict[str, Any], status: int, match: str
) -> None:
    r = client.get("/api/watch/ladder", params=params)
    assert r.status_code == status and re.search(match, r.json()["error"]), r.text
    assert "\n" not in r.json()["error"]


def test_without_a_database_there_is_no_ladder() -> None:
    r = TestClient(create_app(), base_url="http://localhost").get("/api/watch/ladder")
    assert r.status_code == 404 and "fourhundred serve --db PATH" in r.json()["error"]
