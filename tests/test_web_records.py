"""Game records in the web app, through the API: the Play page's download of the
match played (the finished hands only, to the table's token holder, seats by public name),
and Watch's upload of a record file (parsed and replayed; a malformed one refused in one line;
capped in size); ``fourhundred serve --record FILE``. The page itself:
tests/test_web_browser_watch.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from fourhundred_cli import main
from fourhundred_env.errors import RecordError
from fourhundred_env.game_records.files import parse_record
from fourhundred_web.app import create_app
from fourhundred_web.records import MAX_RECORD_UPLOAD
from tests.web import one_line as _one_line

ROOT = Path(__file__).resolve().parents[1]
SEED = 11  # with three heuristics and the lowest legal action, hand 1 of seed 11 is played
BOTS = {"partner": "neural:selfplay.pt", "right": "heuristic", "left": "minbid"}
NAMES = ["you", "heuristic", "neural:selfplay.pt", "minbid"]  # seat 0: right S1, left S3


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(max_tables=100, max_per_client=100), base_url="http://localhost")


def _play_hand(client: TestClient, table: str, token: str, state: dict[str, Any]) -> dict:
    """Play the person's lowest legal action until the hand is over; the last state."""
    while state["phase"] in ("bid", "play"):
        r = client.post(f"/api/tables/{table}/act", json={"action": state["legal"][0]},
                        headers={"X-Table-Token": token})  # fmt: skip
        assert r.status_code == 200, r.text
        state = r.json()["state"]
    return state


@pytest.fixture(scope="module")
def played(client: TestClient) -> dict[str, Any]:
    """A table whose first hand is over and whose second is dealt (in progress)."""
    r = client.post("/api/tables", json={"seed": SEED, "seat": 0, **BOTS})
    table, token, state = r.json()["id"], r.json()["token"], r.json()["state"]
    first = state
    before = client.get(f"/api/tables/{table}/record", headers={"X-Table-Token": token})
    state = _play_hand(client, table, token, state)
    assert state["phase"] == "hand_over" and not state["last_hand"]["thrown_in"]
    after_one = state
    r = client.post(f"/api/tables/{table}/deal", headers={"X-Table-Token": token})
    return {"id": table, "token": token, "before": before, "first": first, "hand_over": after_one,
            "now": r.json()["state"]}  # fmt: skip


def _download(client: TestClient, played: dict[str, Any], token: str | None = "") -> Any:
    headers = {} if token is None else {"X-Table-Token": token or played["token"]}
    return client.get(f"/api/tables/{played['id']}/record", headers=headers)


# -- the download ------------------------------------------------------------------------------
def test_the_record_of_the_hands_played_is_a_text_file_for_the_token_holder(
    client: TestClient, played: dict[str, Any]
) -> None:
    assert "no hand is finished yet" in _one_line(played["before"], 409)
    r = _download(client, played)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert re.fullmatch(r'attachment; filename="400-match-\d{8}-\d{6}\.400"',
                        r.headers["content-disposition"])  # fmt: skip
    assert "/" not in r.text and "\\" not in r.text  # no path, the bundled network's included
    record = parse_record(r.text)
    assert record.seats == tuple(NAMES) and record.rules.name == "wiki"
    # the finished hand, as the page's score sheet has it; the one in progress is left out,
    # since its deal would show the bots' cards
    assert played["now"]["phase"] in ("bid", "play") and played["now"]["hand_number"] == 2
    assert len(record.hands) == 1 and "hand 2" not in r.text
    sheet = played["hand_over"]["last_hand"]
    hand = record.hands[0]
    assert list(hand.tricks) == sheet["tricks"] and list(hand.scores) == sheet["scores"]
    held = [c for g in played["first"]["hand"] for c in g["cards"]]  # before any card
    assert hand.deal[0].replace("|", " ").split() == held and len(hand.cards) == 52
    assert r.text.startswith("fourhundred-record 1\n")


def test_only_the_table_s_token_holder_gets_its_record(
    client: TestClient, played: dict[str, Any]
) -> None:
    assert "no X-Table-Token header" in _one_line(_download(client, played, None), 401)
    assert "wrong X-Table-Token" in _one_line(_download(client, played, "forged"), 403)
    r = client.get("/api/tables/nope/record", headers={"X-Table-Token": played["token"]})
    assert "unknown table" in _one_line(r, 404)
    r = client.get(f"/api/tables/{played['id']}/record", params={"path": "/etc/passwd"},
                   headers={"X-Table-Token": played["token"]})  # fmt: skip
    assert "unknown field(s) ['path']" in _one_line(r, 400)


# -- the upload --------------------------------------------------------------------------------
def _upload(client: TestClient, text: Any, **extra: Any) -> Any:
    return client.post("/api/records", json={"text": text, **extra})


def test_an_uploaded_record_is_replayed_card_by_card(
    client: TestClient, played: dict[str, Any]
) -> None:
    text = _download(client, played).text
    record = parse_record(text)
    for form in (text, record.to_json()):  # the text form and the JSON form
        r = _upload(client, form, name="mine.400")
        assert r.status_code == 200, r.text
        game = r.json()["game"]
        assert game["file"] == "mine.400" and game["seats"] == NAMES and game["exact"]
        (hand,) = game["hands"]
        assert hand["finished"] and hand["replayed"]
        assert [p["card"] for p in hand["plays"]] == list(record.hands[0].cards)
        assert len(hand["plays"]) == 52 and len(hand["trick_winners"]) == 13
        assert [hand["trick_winners"].count(s) for s in range(4)] == list(record.hands[0].tricks)
        assert hand["scores"] == list(record.hands[0].scores) == game["scores"]
        dealt = {c: s for s, cards in enumerate(hand["deal"]) for c in cards}
        assert len(dealt) == 52 and all(dealt[p["card"]] == p["seat"] for p in hand["plays"])
        assert [c["seat"] for c in hand["calls"]] == [1, 2, 3, 0]  # S0 deals hand 1


def test_a_record_that_stops_inside_a_hand_shows_the_moves_so_far(client: TestClient) -> None:
    text = (
        "fourhundred-record 1\nseat S0: ann\nseat S1: bob\nseat S2: cy\nseat S3: di\n"
        "dealer: S3\nhand 1\n"
        "S0: AH KH QH JH 10H 9H 8H 7H 6H 5H 4H 3H 2H\n"
        "S1: AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S\n"
        "S2: AD KD QD JD 10D 9D 8D 7D 6D 5D 4D 3D 2D\n"
        "S3: AC KC QC JC 10C 9C 8C 7C 6C 5C 4C 3C 2C\n"
        "bids: 13 2 2 2\nplay: AH 2S 2D\n"
    )
    r = _upload(client, text)
    assert r.status_code == 200, r.text
    game = r.json()["game"]
    assert game["file"] == "record" and game["seats"] == ["ann", "bob", "cy", "di"]
    (hand,) = game["hands"]
    assert hand["finished"] is False and hand["points"] is None
    assert [(c["seat"], c["bid"]) for c in hand["calls"]] == [(0, 13), (1, 2), (2, 2), (3, 2)]
    assert [(p["seat"], p["card"]) for p in hand["plays"]] == [(0, "AH"), (1, "2S"), (2, "2D")]
    assert hand["trick_winners"] == [] and game["winner"] is None


GOOD = (
    "fourhundred-record 1\ndealer: S0\nhand 1\n"
    "S0: AH KH QH JH 10H 9H 8H 7H 6H 5H 4H 3H 2H\nS1: AS KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S 2S\n"
    "S2: AD KD QD JD 10D 9D 8D 7D 6D 5D 4D 3D 2D\nS3: AC KC QC JC 10C 9C 8C 7C 6C 5C 4C 3C 2C\n"
    "bids: 2 2 2 13\nplay: AS 2D 2C AH\n"
)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "garbage",
            "record line 1: 'garbage': expected the record to open with the line "
            "'fourhundred-record 1'",
        ),
        ("fourhundred-record 2\n", "version"),
        (GOOD.replace("AS 2D 2C AH", "AS 2H 2C AH"), "record hand 1, move 6"),  # not held
        (GOOD.replace("S3: AC", "S3: AS"), "card AS is dealt to S1 and to S3"),
        (GOOD.replace("bids: 2 2 2 13", "bids: 1 2 2 13"), "record hand 1, move 1"),
        ('{"format": "fourhundred-record", "version": 1', "record: not valid JSON"),
        (
            '{"format": "fourhundred-record", "version": 1, "dealer": ' + "9" * 5000 + "}",
            "record: not valid JSON",
        ),
        ("{" * 100_000, "record: not valid JSON"),
    ],
)
def test_a_malformed_record_is_refused_in_one_line(
    client: TestClient, text: str, expected: str
) -> None:
    error = _one_line(_upload(client, text), 400)
    assert expected in error, error
    with pytest.raises(RecordError, match=re.escape(expected)):
        parse_record(text)


@pytest.mark.parametrize(
    "body, expected",
    [
        ({}, "text=None: expected the text of a record file"),
        ({"text": ""}, "text='': expected the text of a record file"),
        ({"text": 4}, "text=4: expected the text of a record file"),
        ({"text": GOOD, "path": "/etc/passwd"}, "unknown field(s) ['path']"),
        ({"text": GOOD, "name": "x" * 300}, "name='xxx"),
    ],
)
def test_an_upload_that_is_not_a_record_s_text_is_refused(
    client: TestClient, body: dict[str, Any], expected: str
) -> None:
    assert expected in _one_line(client.post("/api/records", json=body), 400)


def test_the_upload_is_capped_in_size_not_at_the_small_body_cap(client: TestClient) -> None:
    padding = "# a long comment\n" * 20_000  # about 340 KB: past the API's 64 KiB, under 1 MiB
    r = _upload(client, GOOD + padding)
    assert r.status_code == 200, r.text[:300]
    r = _upload(client, GOOD + "#" * MAX_RECORD_UPLOAD)
    error = _one_line(r, 413)
    assert (
        error == f"request body over {MAX_RECORD_UPLOAD} bytes: expected a record of at most 1 MiB"
    )
    # a body that says it is small and is not: counted while read
    big = b'{"text": "' + b"#" * (MAX_RECORD_UPLOAD + 10) + b'"}'
    r = client.post("/api/records", content=iter([big]),
                    headers={"Content-Type": "application/json"})  # fmt: skip
    _one_line(r, 413)


def test_one_upload_is_read_at_a_time(client: TestClient) -> None:
    """Replaying a big record keeps a core busy: while one is read, another upload (or review
    of a text) is refused in one line, 503, and nothing is queued; then it goes through."""
    from fourhundred_web import records

    assert records._READING.acquire(blocking=False)  # an upload being read
    try:
        error = _one_line(_upload(client, GOOD), 503)
        assert error == "the server is reading another record: try again in a moment"
        r = client.post("/api/review", json={"text": GOOD})
        assert "reading another record" in _one_line(r, 503)
    finally:
        records._READING.release()
    assert _upload(client, GOOD).status_code == 200


def test_the_upload_is_a_write_this_server_s_page_alone_may_send(client: TestClient) -> None:
    r = client.post("/api/records", json={"text": GOOD}, headers={"Origin": "http://evil.example"})
    assert "Origin" in _one_line(r, 403)
    r = client.post("/api/records", content=GOOD, headers={"Content-Type": "text/plain"})
    assert "expected application/json" in _one_line(r, 415)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(st.one_of(
    st.sampled_from(GOOD.splitlines()), st.text(max_size=40),
    st.sampled_from(["hand 2", "dealer: S9", "bids: 13 13 13 13", "play: AH AH", "seat S0: x",
                     "scores: 1 2 3", "target: -5", "rules: pagat", "forfeit: S4", "{", "}"]),
), max_size=14))  # fmt: skip
def test_fuzzed_records_never_get_a_5xx(client: TestClient, lines: list[str]) -> None:
    r = _upload(client, "\n".join(lines) or "x")
    assert r.status_code in (200, 400), r.text[:300]
    if r.status_code == 400:
        _one_line(r, 400)


# -- fourhundred serve --record FILE -----------------------------------------------------------
def test_serve_opens_a_record_file(tmp_path: Path, capsys) -> None:
    path = tmp_path / "game.400"
    path.write_text(GOOD)
    client = TestClient(create_app(record=path), base_url="http://localhost")
    assert client.get("/api/options").json()["record"] == "game.400"
    r = client.get("/api/watch/record")
    assert r.status_code == 200 and str(tmp_path) not in r.text
    game = r.json()["game"]
    assert game["file"] == "game.400" and len(game["hands"][0]["plays"]) == 4
    none = TestClient(create_app(), base_url="http://localhost")
    assert none.get("/api/options").json()["record"] is None
    assert "fourhundred serve --record FILE" in _one_line(none.get("/api/watch/record"), 404)
    bad = tmp_path / "bad.400"
    bad.write_text(GOOD.replace("AS 2D 2C AH", "AS 2H 2C AH"))
    assert main(["serve", "--record", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.400: record hand 1, move 6" in err and "\n" not in err
    assert main(["serve", "--record", str(tmp_path / "missing.400")]) == 2
    assert "does not exist" in capsys.readouterr().err
