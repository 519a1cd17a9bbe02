"""The web server's JSON API (fourhundred_web): play, watch, and every bad request refused.

Every call on a table after its creation carries the table's token: `_new` keeps
it and `_auth` sends it. The hostile cases (tokens, hosts, origins, bodies, a slow bot, secret
deals, fuzzed requests) are in tests/test_web_safety.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")

from starlette.testclient import TestClient

from fourhundred_cli import main
from fourhundred_env.cards import card_text, set_to_cards
from fourhundred_env.engine import deal_sets
from fourhundred_env.errors import FourHundredError
from fourhundred_web.app import MAX_BODY, create_app
from fourhundred_web.play import DEFAULT_BOTS

CARD = re.compile(r'"((?:10|[2-9JQKA])[CDSH])"')
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def client(results_db: Path) -> TestClient:
    # the server answers to this machine's names only, not TestClient's "testserver"
    app = create_app(db=results_db, max_tables=500, max_per_client=500)  # tests make many
    return TestClient(app, base_url="http://localhost")


TOKENS: dict[str, str] = {}
"""The token of every table these tests made, by id."""


def _auth(table: str) -> dict[str, str]:
    return {"X-Table-Token": TOKENS.get(table, "")}


def _new(client: TestClient, **body: Any) -> tuple[str, dict[str, Any]]:
    r = client.post("/api/tables", json={"seed": 3, **body})
    assert r.status_code == 200, r.json()
    TOKENS[r.json()["id"]] = r.json()["token"]
    return r.json()["id"], r.json()["state"]


def _act(client: TestClient, table: str, **body: Any) -> dict[str, Any]:
    r = client.post(f"/api/tables/{table}/act", json=body, headers=_auth(table))
    assert r.status_code == 200, r.json()
    return r.json()["state"]


def _deal(client: TestClient, table: str) -> Any:
    return client.post(f"/api/tables/{table}/deal", headers=_auth(table))


def _state(client: TestClient, table: str) -> dict[str, Any]:
    return client.get(f"/api/tables/{table}", headers=_auth(table)).json()["state"]


def _without_frames(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "frames"}


# -- play --------------------------------------------------------------------------------------
def test_options_offer_the_registered_bots_and_the_bundled_networks(client: TestClient) -> None:
    options = client.get("/api/options").json()
    specs = {a["spec"] for a in options["agents"]}
    labels = {a["label"] for a in options["agents"]}
    assert {"heuristic", "heuristic-v1", "minbid", "random", "pimc"} <= specs
    assert "human" not in specs
    assert {"neural:selfplay.pt", "neural-bid:bidder.pt"} <= labels
    assert options["presets"] == ["pagat", "wiki"] and options["watch"] is True
    # the seats a person leaves unnamed get the strongest bot that answers at once
    default = next(a for a in options["agents"] if a["spec"] == options["default_bot"])
    assert default["label"] == DEFAULT_BOTS[0] == "search:fast"
    table = client.post("/api/tables", json={"seat": 0}).json()
    assert table["state"]["names"] == ["you", *[default["label"]] * 3]


def test_options_name_no_file_and_offer_no_bot_that_can_only_fail(client: TestClient) -> None:
    """Bots go by public names (a checkpoint's file name, never its path), strongest
    first with a note on speed; `cmd` and `compose` need a command or parts: not offered."""
    r = client.get("/api/options")
    assert "/" not in r.text and "\\\\" not in r.text, r.text  # no path, POSIX or Windows
    agents = r.json()["agents"]
    names = [a["spec"] for a in agents]
    assert "cmd" not in names and "compose" not in names
    assert names[:5] == ["search", "search:fast", "neural:exit.pt,symmetric=true",
                         "neural:exit.pt", "neural:selfplay.pt"]  # fmt: skip
    assert names.index("heuristic") < names.index("minbid") < names.index("random")
    assert "strongest" in agents[0]["note"] and "quick" in agents[1]["note"]
    assert "fast" in agents[2]["note"]
    _, state = _new(client, partner="neural:exit.pt,symmetric=true", right="neural-bid:bidder.pt",
                    left="minbid")  # fmt: skip
    assert state["names"] == ["you", "neural-bid:bidder.pt", "neural:exit.pt,symmetric=true",
                              "minbid"]  # fmt: skip
    r = client.post("/api/tables", json={"partner": "neural:agents/pretrained/selfplay.pt"})
    assert r.status_code == 400 and "/" not in r.json()["error"], r.text


def test_a_whole_hand_through_the_api_shows_only_what_the_seat_may_know(
    client: TestClient,
) -> None:
    table, state = _new(client, seat=1, partner="minbid", right="random", left="heuristic")
    assert state["names"] == ["heuristic", "you", "random", "minbid"]
    played_hands = 0
    while played_hands == 0:  # hands thrown in (bids short of the total) are dealt again
        dealt = deal_sets(3, np.array([0]), np.array([state["hand_number"] - 1]))[0]
        mine = {card_text(c) for c in set_to_cards(dealt[1])}
        played = {f["action"] for f in state["frames"] if f["kind"] == "play"}
        while state["phase"] in ("bid", "play"):
            assert state["your_turn"] and state["legal"]
            # every card the browser is told of is its own or one already played
            assert set(CARD.findall(json.dumps(state))) <= mine | played
            if state["phase"] == "bid":
                assert state["legal"][0] == str(state["min_bids"][1])
            state = _act(client, table, action=state["legal"][0], seat=1, moves=state["moves"])
            played |= {f["action"] for f in state["frames"] if f["kind"] == "play"}
        assert state["phase"] == "hand_over" and state["last_hand"] == state["sheet"][-1]
        if not state["last_hand"]["thrown_in"]:
            played_hands += 1
            assert len(played) == 52
            row = state["last_hand"]
            assert sum(row["tricks"]) == 13 and row["scores"] == state["scores"]
        # the next hand is dealt on request; the bots move up to the person's first decision
        number = state["hand_number"]
        state = _deal(client, table).json()["state"]
        assert state["hand_number"] == number + 1


def test_a_whole_match_to_the_end(client: TestClient) -> None:
    table, state = _new(client, seat=0, partner="heuristic", right="random", left="random")
    while state["phase"] != "match_over":
        if state["phase"] == "hand_over":
            state = _deal(client, table).json()["state"]
        else:
            state = _act(
                client, table, action=state["legal"][-1 if state["phase"] == "play" else 0]
            )
    assert state["winner"] in (0, 1)
    last = state["sheet"][-1]
    assert last["winner"] == state["winner"] and len(state["sheet"]) == state["hand_number"]
    r = _deal(client, table)
    assert r.status_code == 409 and "match is over" in r.json()["error"]


REDEAL_SEED = 22  # seat 0's first hand of seed 22 holds no A, K, Q or J


def test_the_redeal_offer(client: TestClient) -> None:
    table, state = _new(client, seed=REDEAL_SEED)
    held = [c for g in state["hand"] for c in g["cards"]]
    assert not any(c[:-1] in "AKQJ" for c in held)
    assert state["phase"] == "bid" and state["redeal_allowed"] and "redeal" in state["legal"]
    state = _act(client, table, action="redeal")
    assert state["phase"] == "hand_over" and state["frames"][-1]["kind"] == "redeal"
    assert state["last_hand"]["note"] == "S0 asked for a redeal"
    other, state = _new(client, seed=3)
    assert not state["redeal_allowed"]
    _refused(client, other, 422, r"a redeal needs a hand without A, K, Q or J", "POST",
             f"/api/tables/{other}/act", json={"action": "redeal"})  # fmt: skip


def test_separate_tables_do_not_touch_each_other(client: TestClient) -> None:
    a, state_a = _new(client)
    b, state_b = _new(client)
    assert a != b
    _act(client, a, action=state_a["legal"][0])
    assert _without_frames(_state(client, b)) == _without_frames(state_b)


# -- bad requests: a clear error, nothing changed ----------------------------------------------
def _refused(
    client: TestClient, table: str, status: int, match: str, method: str, path: str, **kw: Any
) -> None:
    before = _without_frames(_state(client, table))
    r = client.request(method, path, **{**kw, "headers": {**kw.get("headers", {}), **_auth(table)}})
    assert r.status_code == status, r.text
    assert re.search(match, r.json()["error"]), r.json()
    assert _without_frames(_state(client, table)) == before


def test_an_illegal_card_or_bid_is_refused_with_the_reason(client: TestClient) -> None:
    table, state = _new(client, seed=5)
    url = f"/api/tables/{table}/act"
    assert state["phase"] == "bid"
    _refused(
        client, table, 422, r"this is the bidding.*legal: ", "POST", url, json={"action": "AH"}
    )
    _refused(client, table, 422, r"minimum bid is", "POST", url, json={"action": "1"})
    _refused(client, table, 400, r"not understood", "POST", url, json={"action": "XZ"})
    state = _act(client, table, action=state["legal"][0])

    def held() -> list[str]:
        return [c for g in state["hand"] for c in g["cards"]]

    # on to a trick another seat led, where some card held must not be played
    while not (state["phase"] == "play" and set(held()) - set(state["legal"])):
        if state["phase"] == "hand_over":
            state = _deal(client, table).json()["state"]
        else:
            state = _act(client, table, action=state["legal"][0])
    assert state["trick"]
    not_held = next(f"{r}{s}" for s in "CDSH" for r in "AKQJ" if f"{r}{s}" not in held())
    _refused(client, table, 422, r"you do not hold", "POST", url, json={"action": not_held})
    illegal = sorted(set(held()) - set(state["legal"]))[0]
    _refused(client, table, 422, r"must follow the suit led", "POST", url,
             json={"action": illegal})  # fmt: skip
    _refused(client, table, 422, r"this is the card play", "POST", url, json={"action": "3"})


def test_out_of_turn_is_refused(client: TestClient) -> None:
    table, state = _new(client, seat=2)
    url = f"/api/tables/{table}/act"
    legal = state["legal"][0]
    _refused(client, table, 409, r"seat 0 is not yours", "POST", url,
             json={"action": legal, "seat": 0})  # fmt: skip
    _refused(client, table, 409, r"out of date", "POST", url,
             json={"action": legal, "moves": state["moves"] + 3})  # fmt: skip
    _refused(client, table, 409, r"a hand is in progress", "POST", f"/api/tables/{table}/deal")
    while state["phase"] in ("bid", "play"):
        state = _act(client, table, action=state["legal"][0])
    _refused(client, table, 409, r"no decision is pending.*deal the next hand", "POST", url,
             json={"action": "2"})  # fmt: skip


@pytest.mark.parametrize(
    "kw, status, match",
    [
        ({"content": b"{not json", "headers": JSON}, 400, r"malformed JSON"),
        ({"content": b"\xff\xfe", "headers": JSON}, 400, r"malformed JSON"),
        ({"json": ["AH"]}, 400, r"expected a JSON object"),
        ({"json": {"action": 65}}, 400, r"action=65: expected text"),
        ({"json": {"action": "AH", "cheat": 1}}, 400, r"unknown field\(s\) \['cheat'\]"),
        ({"json": {"action": "2", "seat": "x"}}, 400, r"seat='x': expected an integer"),
        ({"content": b" " * (MAX_BODY + 1), "headers": JSON}, 413, r"over 65536 bytes"),
    ],
    ids=["malformed", "not-utf8", "list", "int-action", "unknown-field", "bad-seat", "too-big"],
)
def test_malformed_requests_are_refused(
    client: TestClient, kw: dict[str, Any], status: int, match: str
) -> None:
    table, _ = _new(client)
    _refused(client, table, status, match, "POST", f"/api/tables/{table}/act", **kw)


def test_unknown_tables_routes_and_methods_answer_json(client: TestClient) -> None:
    for method, path, status, match in [
        ("GET", "/api/tables/nope", 404, r"unknown table 'nope'"),
        ("POST", "/api/tables/nope/act", 404, r"unknown table 'nope'"),
        ("POST", "/api/tables/nope/deal", 404, r"unknown table 'nope'"),
        ("GET", "/api/nothing", 404, r"no such page or API route"),
        ("DELETE", "/api/tables", 405, r"DELETE is not allowed"),
    ]:
        r = client.request(method, path, json={"action": "2"})
        assert r.status_code == status and re.search(match, r.json()["error"]), (path, r.text)


@pytest.mark.parametrize(
    "body, match",
    [
        ({"partner": "neural:/etc/passwd"}, r"not a bot this server offers"),
        ({"right": "human"}, r"not a bot this server offers"),
        ({"rules": "bogus"}, r"rules='bogus': expected one of \['pagat', 'wiki'\]"),
        ({"seat": 4}, r"seat=4: expected an integer from 0 to 3"),
        ({"seed": -1}, r"seed=-1"),
    ],
)
def test_a_table_is_only_made_of_what_the_server_offers(
    client: TestClient, body: dict[str, Any], match: str
) -> None:
    r = client.post("/api/tables", json=body)
    assert r.status_code == 400 and re.search(match, r.json()["error"]), r.text


def test_static_files_stay_in_the_package(client: TestClient) -> None:
    assert "<title>400" in client.get("/").text
    assert "const Play" in client.get("/static/play.js").text
    for path in ("/static/../pyproject.toml", "/static/%2e%2e/pyproject.toml",
                 "/static/..%2f..%2fpyproject.toml", "/static//etc/passwd"):  # fmt: skip
        r = client.get(path)
        assert r.status_code == 404 and "[project]" not in r.text, path


# -- watch -------------------------------------------------------------------------------------
def test_watch_lists_matches_by_pairing_and_order(client: TestClient) -> None:
    summary = client.get("/api/watch").json()
    assert summary["file"] == "results.sqlite" and summary["games"] == 12
    assert summary["pairs"] == [
        ["heuristic", "minbid"],
        ["heuristic", "random"],
        ["minbid", "random"],
    ]
    assert summary["replay"] == {"heuristic": None, "minbid": None, "random": None}
    everything = client.get("/api/watch/matches").json()
    assert everything["total"] == 6
    assert all(len(m["games"]) == 2 for m in everything["matches"])
    surprising = client.get("/api/watch/matches", params={"sort": "surprise"}).json()["matches"]
    bids = [m["max_bid"] for m in surprising]
    assert bids == sorted(bids, reverse=True)
    margins = [abs(m["margin"]) for m in client.get(
        "/api/watch/matches", params={"sort": "margin"}).json()["matches"]]  # fmt: skip
    assert margins == sorted(margins, reverse=True)
    one = client.get("/api/watch/matches", params={"pair": 1}).json()["matches"]
    assert {(m["pair_a"], m["pair_b"]) for m in one} == {("heuristic", "random")}
    high = client.get("/api/watch/matches", params={"min_bid": 6}).json()["matches"]
    assert all(m["max_bid"] >= 6 for m in high)


def test_watch_replays_both_twins_card_by_card(client: TestClient) -> None:
    match = client.get("/api/watch/match", params={"pair": 0, "match": 1}).json()
    assert match["pair"] == ["heuristic", "minbid"]
    twins = match["twins"]
    assert [t["orientation"] for t in twins] == [0, 1]
    assert twins[0]["team0"] == "heuristic" and twins[1]["team0"] == "minbid"
    for twin in twins:
        assert twin["exact"] and twin["reason"] is None
        for hand in twin["hands"]:
            assert hand["replayed"]
            assert [c["bid"] for c in hand["calls"] if c["bid"] != "redeal"] == [
                hand["bids"][c["seat"]] for c in hand["calls"] if c["bid"] != "redeal"
            ]
            if not hand["thrown_in"]:
                assert len(hand["plays"]) == 52 and len(hand["trick_winners"]) == 13
                assert [hand["trick_winners"].count(s) for s in range(4)] == hand["tricks"]
    # duplicate: both twins' first hands are dealt the same cards by seat
    assert twins[0]["hands"][0]["deal"] == twins[1]["hands"][0]["deal"]


@pytest.mark.parametrize(
    "params, status, match",
    [
        ({"pair": 0, "match": 99}, 404, r"no finished game of match 99"),
        ({"pair": 7, "match": 0}, 400, r"pair=7: expected an integer from 0 to 2"),
        ({"pair": "x", "match": 0}, 400, r"pair='x'"),
        ({"match": 0}, 400, r"pair is missing"),
        ({"pair": 0, "match": 0, "path": "/etc/passwd"}, 400, r"unknown field\(s\) \['path'\]"),
    ],
)
def test_watch_refuses_bad_queries(
    client: TestClient, params: dict[str, Any], status: int, match: str
) -> None:
    r = client.get("/api/watch/match", params=params)
    assert r.status_code == status and re.search(match, r.json()["error"]), r.text
    r = client.get("/api/watch/matches", params={"sort": "bogus"})
    assert r.status_code == 400 and "sort='bogus'" in r.json()["error"]


def test_without_a_database_watch_says_how_to_open_one() -> None:
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    assert client.get("/api/options").json()["watch"] is False
    r = client.get("/api/watch")
    assert r.status_code == 404 and "fourhundred serve --db PATH" in r.json()["error"]


def test_serve_refuses_bad_arguments_in_one_line(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--db", str(tmp_path / "missing.sqlite")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port 70000" in capsys.readouterr().err
    with pytest.raises(FourHundredError, match="unknown agent 'nobody'"):
        create_app(agents=["nobody"])


def test_serve_lets_the_browser_reach_it_by_its_host_and_allowed_names(monkeypatch) -> None:
    import uvicorn

    import fourhundred_web.app as web

    made: list[Any] = []

    def capture(**kw):
        made.append(create_app(**kw))
        return made[-1]

    monkeypatch.setattr(web, "create_app", capture)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: None)
    assert main(["serve", "--host", "box.lan", "--allowed-host", "table.example"]) == 0
    for host, status in (("box.lan", 200), ("table.example", 200), ("evil.example", 400)):
        r = TestClient(made[0], base_url=f"http://{host}").get("/api/options")
        assert r.status_code == status, host


def test_a_refused_bot_names_a_short_menu_however_many_bots_are_offered() -> None:
    """A server offering many bots (plugins, --agent checkpoints) still refuses an unknown
    one in one short line: the strongest few named, the rest counted."""
    from fourhundred_web.bots import AgentChoice
    from fourhundred_web.play import MENU_IN_ERROR, RequestError, new_session

    choices = {f"bot-number-{k:02d}": AgentChoice(f"bot-number-{k:02d}", "") for k in range(40)}
    with pytest.raises(RequestError) as info:
        new_session(0, "x" * 500, "bot-number-00", "bot-number-01", "wiki", 1, choices)
    error = str(info.value)
    assert "\n" not in error and len(error) < 400, error
    assert f"and {40 - MENU_IN_ERROR} more" in error and "bot-number-00" in error
    assert "bot-number-39" not in error and "'person'" in error
