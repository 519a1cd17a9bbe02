"""The web server, fair and safe.

Secret deals (the cheating strategy: everything the browser is sent, dealt with the project's
own functions, predicts the bots' cards no better than chance), tokens, no eviction of
another client's tables, foreign Host headers and cross-origin writes refused, the body
capped while it is read, a slow bot that blocks no other request, and a fuzz of malformed
requests that must all get a 4xx with one line.
"""

from __future__ import annotations

import base64
import json
import re
import select
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from fourhundred_agents.protocol import Agent
from fourhundred_env.cards import card_text, set_to_cards
from fourhundred_env.engine import deal_sets
from fourhundred_env.registry import register_agent
from fourhundred_web.app import MAX_BODY, TOKEN_HEADER, create_app
from tests.web import one_line as _one_line
from tests.web import served

BOTS = {"partner": "random", "right": "random", "left": "random"}
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def app(results_db: Path) -> Any:
    return create_app(db=results_db, max_tables=400, max_per_client=400)


@pytest.fixture(scope="module")
def client(app: Any) -> TestClient:
    return TestClient(app, base_url="http://localhost")


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/tables", json={**BOTS, **body})
    assert r.status_code == 200, r.text
    return r.json()


# -- item 1: secret deals ------------------------------------------------------------------------
def _integers(value: Any) -> Iterator[int]:
    """Every integer a cheater could read out of an answer: numbers, and the id's and token's
    bytes (base64url) read as integers, whole and 8 bytes at a time."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _integers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _integers(v)
    elif isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_-]{8,}", value):
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        yield int.from_bytes(raw, "big")
        for k in range(0, len(raw) - 7):
            yield int.from_bytes(raw[k : k + 8], "big")
            yield int.from_bytes(raw[k : k + 8], "little")


def _cheat(seen: list[dict[str, Any]], seat: int, rng: np.random.Generator) -> dict:
    """The cheating strategy: find a seed among what the browser saw (and every small one)
    that deals the person's own cards, and read the bots' cards off it; else guess."""
    state = seen[-1]["state"]
    mine = {c for g in state["hand"] for c in g["cards"]}
    candidates = {n for answer in seen for n in _integers(answer)} | set(range(4096))
    number = np.array([state["hand_number"] - 1])
    for seed in candidates:
        dealt = deal_sets(seed & (2**64 - 1), np.array([0]), number)[0]
        if {card_text(c) for c in set_to_cards(dealt[seat])} == mine:
            return {"found": True, "hands": dealt}
    unseen = [c for c in range(52) if card_text(c) not in mine]
    guess = np.zeros(4, np.uint64)
    seats = rng.choice([x for x in range(4) if x != seat], len(unseen))
    for card, s in zip(unseen, seats, strict=True):
        guess[s] |= np.uint64(1) << np.uint64(card)
    return {"found": False, "hands": guess}


def _predicted(app: Any, answer: dict[str, Any], cheat: dict) -> tuple[int, int]:
    """(bots' cards the cheat placed right, bots' cards) at the table of `answer`."""
    table = app.state.server.tables.get(answer["id"], answer["token"])  # the server's own truth
    state = answer["state"]
    truth = deal_sets(table.session.seed, np.array([0]), np.array([state["hand_number"] - 1]))[0]
    assert {card_text(c) for c in set_to_cards(truth[state["seat"]])} == {
        c for g in state["hand"] for c in g["cards"]
    }
    bots = [s for s in range(4) if s != state["seat"]]
    right = sum(int(np.bitwise_count(truth[s] & cheat["hands"][s])) for s in bots)
    return right, 39


def test_a_secret_table_tells_the_browser_nothing_of_the_bots_cards(
    app: Any, client: TestClient
) -> None:
    rng = np.random.default_rng(0)
    right = total = found = 0
    for k in range(8):
        answer = _new(client, seat=k % 4)
        assert "seed" not in answer and set(answer) == {"id", "token", "state"}
        if answer["state"]["phase"] != "bid":  # a bot asked for a redeal: no cards to read
            continue
        seen = [answer, client.get(f"/api/tables/{answer['id']}",
                                   headers={TOKEN_HEADER: answer["token"]}).json()]  # fmt: skip
        cheat = _cheat(seen, k % 4, rng)
        found += cheat["found"]
        r, n = _predicted(app, answer, cheat)
        right, total = right + r, total + n
    assert total >= 5 * 39
    assert found == 0
    assert right / total < 1 / 3 + 0.15  # chance is 1/3 a card


def test_the_cheat_works_where_the_owner_asked_for_a_seed(app: Any, client: TestClient) -> None:
    """An explicit seed is answered back (the owner's reproducible table): from it the cheat
    reads every card, which is what makes the test above able to fail."""
    answer = _new(client, seat=1, seed=3)
    assert answer["seed"] == 3 and answer["state"]["phase"] == "bid"
    cheat = _cheat([answer], 1, np.random.default_rng(0))
    assert cheat["found"] and _predicted(app, answer, cheat) == (39, 39)
    # the same seed gives the same table again
    again = _new(client, seat=1, seed=3)
    assert again["state"]["hand"] == answer["state"]["hand"]


# -- tokens --------------------------------------------------------------------------------------
def test_every_call_on_a_table_needs_its_token(client: TestClient) -> None:
    a, b = _new(client, seed=3), _new(client, seed=3)
    assert a["token"] != b["token"] and len(a["token"]) >= 24
    for method, path, body in [
        ("GET", "", None),
        ("POST", "/act", {"action": a["state"]["legal"][0]}),
        ("POST", "/deal", None),
        ("DELETE", "", None),
    ]:
        url = f"/api/tables/{a['id']}{path}"
        for headers, status, match in [
            ({}, 401, rf"no {TOKEN_HEADER} header"),
            ({TOKEN_HEADER: b["token"]}, 403, r"wrong X-Table-Token"),
            ({TOKEN_HEADER: "\xe9\xff".encode("latin-1") * 3}, 403, r"wrong"),  # not ASCII
        ]:
            r = client.request(method, url, json=body, headers=headers)
            _one_line(r, status, match)
    # nothing changed; with the token the table answers, and DELETE closes it
    auth = {TOKEN_HEADER: a["token"]}
    state = client.get(f"/api/tables/{a['id']}", headers=auth).json()["state"]
    assert state["moves"] == a["state"]["moves"] and state["hand"] == a["state"]["hand"]
    assert client.delete(f"/api/tables/{a['id']}", headers=auth).json()["closed"] is True
    _one_line(client.get(f"/api/tables/{a['id']}", headers=auth), 404, r"unknown table")


# -- tables of other clients ---------------------------------------------------------------------
def test_making_many_tables_closes_no_other_clients_table() -> None:
    app = create_app(max_tables=5, max_per_client=3)
    at = {ip: TestClient(app, base_url="http://localhost", client=(ip, 1000))
          for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3")}  # fmt: skip
    mine = _new(at["10.0.0.1"], seed=3)
    made = [_new(at["10.0.0.2"], seed=3) for _ in range(3)]
    _one_line(at["10.0.0.2"].post("/api/tables", json=BOTS), 429, r"3 open tables")
    _new(at["10.0.0.3"], seed=3)
    _one_line(at["10.0.0.3"].post("/api/tables", json=BOTS), 503, r"holds 5 tables")
    auth = {TOKEN_HEADER: mine["token"]}
    assert at["10.0.0.1"].get(f"/api/tables/{mine['id']}", headers=auth).status_code == 200
    # a client's own table closed makes room for it
    at["10.0.0.2"].delete(f"/api/tables/{made[0]['id']}", headers={TOKEN_HEADER: made[0]["token"]})
    _new(at["10.0.0.3"], seed=3)
    # tables untouched for idle_seconds are closed, and only those
    tables = app.state.server.tables
    now = [time.monotonic()]
    tables.clock = lambda: now[0]
    assert at["10.0.0.1"].get(f"/api/tables/{mine['id']}", headers=auth).status_code == 200
    now[0] += tables.idle_seconds - 1
    assert at["10.0.0.1"].get(f"/api/tables/{mine['id']}", headers=auth).status_code == 200
    now[0] += 2  # the others are idle for longer than idle_seconds now, mine is not
    _new(at["10.0.0.2"], seed=3)
    assert len(tables) == 2
    assert at["10.0.0.1"].get(f"/api/tables/{mine['id']}", headers=auth).status_code == 200


# -- hosts and origins ---------------------------------------------------------------------------
def test_foreign_hosts_are_refused(results_db: Path) -> None:
    app = create_app(db=results_db, allowed_hosts=["box.lan"])
    for base, status in [
        ("http://localhost:8400", 200), ("http://127.0.0.1", 200), ("http://[::1]:9", 200),
        ("http://box.lan:8400", 200), ("http://10.1.2.3:8400", 200),  # the listening address
        ("http://evil.example", 400), ("http://localhost.evil.example", 400),
    ]:  # fmt: skip
        c = TestClient(app, base_url=base)
        for path in ("/api/options", "/api/watch", "/"):
            r = c.get(path)
            assert r.status_code == status, (base, path, r.text)
        if status == 400:
            _one_line(r, 400, r"is not a name of this server")
    # DNS rebinding: a name that resolves to this machine, sent to its address
    c = TestClient(app, base_url="http://127.0.0.1")
    _one_line(c.get("/api/watch", headers={"Host": "rebound.example:8400"}), 400, r"Host")
    everyone = TestClient(create_app(allowed_hosts=["*"]), base_url="http://anything.example")
    assert everyone.get("/api/options").status_code == 200


def test_cross_origin_writes_are_refused(client: TestClient) -> None:
    table = _new(client, seed=3)
    auth = {TOKEN_HEADER: table["token"]}
    url = f"/api/tables/{table['id']}/act"
    action = {"action": table["state"]["legal"][0]}
    for headers, status, match in [
        ({"Origin": "http://evil.example"}, 403, r"another site"),
        ({"Origin": "null"}, 403, r"another site"),
        ({"Origin": "http://localhost:8400"}, 403, r"not this server"),  # another port
        ({"Sec-Fetch-Site": "cross-site"}, 403, r"cross-site request"),
        ({"Sec-Fetch-Site": "same-site"}, 403, r"same-site request"),
    ]:
        _one_line(client.post(url, json=action, headers={**auth, **headers}), status, match)
        _one_line(client.post("/api/tables", json=BOTS, headers=headers), status, match)
    # what a form or a text/plain fetch of another page sends
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        r = client.post(url, content=json.dumps(action), headers={**auth,
                                                                 "Content-Type": content_type})  # fmt: skip
        _one_line(r, 415, r"expected application/json")
    _one_line(client.post(url, content=json.dumps(action), headers=auth), 415,
              r"without Content-Type")  # fmt: skip
    # the same page is welcome
    ok = {**auth, "Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    assert client.post(url, json=action, headers=ok).status_code == 200
    assert client.get("/api/options", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 200


# -- a real server: the body cap while reading, a slow bot ---------------------------------------


def test_a_chunked_body_is_refused_at_the_cap_not_read_first() -> None:
    with served(create_app()) as port, socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(
            f"POST /api/tables HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b"%x\r\n%s\r\n" % (MAX_BODY // 4, b" " * (MAX_BODY // 4))
        sent, offset, answer = 0, 0, b""
        sock.setblocking(False)
        while sent < 200 * 2**20:  # the body goes on until the server answers
            readable, writable, _ = select.select([sock], [sock], [], 30)
            assert readable or writable, "the server neither answered nor read for 30 s"
            if readable:
                break
            try:
                n = sock.send(chunk[offset:])
            except (BrokenPipeError, ConnectionResetError):
                break
            sent, offset = sent + n, (offset + n) % len(chunk)
        sock.settimeout(30)
        while b"\r\n\r\n" not in answer or b"}" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"over 65536 bytes" in answer
    assert sent < 50 * 2**20  # what the socket buffers took, not 200 MiB


class _SlowBot(Agent):
    """A bot that, once `armed`, says it has started (`entered`) and thinks until `release`."""

    name = "slow-test"
    armed = threading.Event()
    entered = threading.Event()
    release = threading.Event()

    def act(self, view: Any) -> np.ndarray:
        if self.armed.is_set():
            self.entered.set()
            self.release.wait(60)
        return np.array([int(np.flatnonzero(view.legal_mask[0])[0])])


def _call(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {**JSON, **({TOKEN_HEADER: token} if token else {})}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, headers,
                                     method=method)  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def test_a_slow_bot_blocks_no_other_request() -> None:
    register_agent("slow-test", lambda rules, seed, text: _SlowBot(rules, seed), "test: thinks")
    bots = {"partner": "slow-test", "right": "slow-test", "left": "slow-test", "seed": 3}
    with served(create_app(agents=["slow-test"])) as port:
        first = _call(port, "POST", "/api/tables", bots)["state"]["first_bidder"]
        slow = _call(port, "POST", "/api/tables", {**bots, "seat": first})
        other = _call(port, "POST", "/api/tables", bots)
        assert slow["state"]["your_turn"] and slow["state"]["phase"] == "bid"
        answers: dict[str, Any] = {}

        def call(name: str, *args: Any) -> None:
            answers[name] = _call(port, *args)

        _SlowBot.armed.set()
        url = f"/api/tables/{slow['id']}"
        try:
            acting = threading.Thread(target=call, args=("act", "POST", f"{url}/act",
                                      {"action": slow["state"]["legal"][0]}, slow["token"]))  # fmt: skip
            acting.start()
            assert _SlowBot.entered.wait(30)
            # the old server took the table's lock on the event loop here, and froze
            reading = threading.Thread(target=call, args=("state", "GET", url, None, slow["token"]))
            reading.start()
            options = _call(port, "GET", "/api/options")
            other_state = _call(port, "GET", f"/api/tables/{other['id']}", None, other["token"])
            assert "slow-test" in {a["spec"] for a in options["agents"]}
            assert other_state["state"]["moves"] == other["state"]["moves"]
            assert acting.is_alive() and reading.is_alive()  # still thinking: nothing answered
        finally:
            _SlowBot.armed.clear()
            _SlowBot.release.set()
        acting.join(30)
        reading.join(30)
    # the table's requests were answered in order: the state after the bots' moves
    assert answers["act"]["state"]["moves"] > slow["state"]["moves"]
    assert answers["state"]["state"]["moves"] == answers["act"]["state"]["moves"]


# -- malformed requests: always a 4xx, one line --------------------------------------------------
DEEP = "[" * 30_000 + "]" * 30_000  # under MAX_BODY
BIG = "5" * 5000
BAD_VALUES = [None, True, -1, 2**70, 1.5, 1e308, "", "--5", "5-", "²", "٣", "3 x", BIG, "x" * 300,
              "\ud800", "a\nb", "\x00", [], [1], {}, {"a": 1}, [[[[[]]]]]]  # fmt: skip


def _json(body: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A JSON body as bytes (json.dumps escapes a lone surrogate, which the server decodes)."""
    return {"content": json.dumps(body).encode(), "headers": {**JSON, **(headers or {})}}


def _malformed(table: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, path, request keyword arguments) of malformed requests."""
    auth = {TOKEN_HEADER: table["token"]}
    act = f"/api/tables/{table['id']}/act"
    for field in ("seat", "partner", "right", "left", "rules", "seed"):
        for value in BAD_VALUES:
            if field in ("partner", "right", "left", "rules") and value is None:
                continue  # a default
            if field in ("seat", "seed") and value is None:
                continue
            yield "POST", "/api/tables", _json({**BOTS, field: value})
    for field in ("action", "seat", "moves"):
        for value in BAD_VALUES:
            if value is not None:
                yield "POST", act, _json({"action": "AH", field: value}, auth)
    for raw in (f'{{"seed": {BIG}}}', f'{{"seed": -{BIG}}}', f'{{"seed": {BIG}.5}}',
                '{"seed": 1e99999}', '{"seed": NaN}', '{"seed": "--5"}', DEEP,
                '{"action": ' + DEEP[:20_000] + "}", "{" * 30_000, '{"a": 1,}', "[]", "3",
                '"x"', "null", '{"seat": 0, "seat": "x"}', "{}" * 10):  # fmt: skip
        for path in ("/api/tables", act):
            yield "POST", path, {"content": raw.encode("utf-8", "surrogatepass"),
                                 "headers": {**JSON, **auth}}  # fmt: skip
    for query in ({"pair": "--5"}, {"pair": BIG}, {"pair": "²"}, {"min_bid": "-0x1"},
                  {"offset": BIG}, {"limit": "0"}, {"sort": "\x00"}, {"sort": "x" * 5000},
                  {"pair": "0", "match": BIG}, {"pair": "0", "match": "--5"},
                  {"pair": "0", "match": "-1"}, {BIG: "1"}):  # fmt: skip
        yield "GET", "/api/watch/matches", {"params": query}
        yield "GET", "/api/watch/match", {"params": query}
    for path in (f"/api/tables/{'x' * 5000}", "/api/tables/%00", "/api/tables/%ff%fe",
                 "/api/tables/\u00e9", "/static/%00", "/api/" + "a/" * 2000):  # fmt: skip
        yield "GET", path, {"headers": auth}
    yield "PUT", "/api/tables", {}
    yield "PATCH", act, {"headers": auth}
    yield "POST", "/api/options", {}
    yield "POST", "/api/tables", {"content": b"{}", "headers": {"Content-Type": "\x7f;;;"}}
    yield "POST", act, {"content": b"{}", "headers": {**auth, "Content-Type": "application/xml"}}


def test_malformed_requests_get_a_4xx_with_one_line(client: TestClient) -> None:
    table = _new(client, seed=5)
    seen = 0
    for method, path, kw in _malformed(table):
        r = client.request(method, path, **kw)
        assert 400 <= r.status_code < 500, (method, path, str(kw)[:200], r.text[:300])
        _one_line(r, r.status_code)
        seen += 1
    assert seen > 200
    state = client.get(f"/api/tables/{table['id']}", headers={TOKEN_HEADER: table["token"]})
    assert state.json()["state"]["moves"] == table["state"]["moves"]  # nothing was played


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.dictionaries(st.sampled_from(["action", "seat", "moves", "x"]), JSON_VALUES),
       query=st.dictionaries(st.sampled_from(["pair", "match", "sort", "min_bid", "limit"]),
                             st.text(max_size=12)))  # fmt: skip
def test_fuzzed_requests_never_get_a_5xx(
    client: TestClient, body: dict[str, Any], query: dict[str, str]
) -> None:
    table = _fuzz_table(client)
    url = f"/api/tables/{table['id']}/act"
    r = client.post(url, **_json(body, {TOKEN_HEADER: table["token"]}))
    assert r.status_code < 500, (body, r.text)
    if r.status_code >= 400:
        _one_line(r, r.status_code)
    for path in ("/api/watch/matches", "/api/watch/match"):
        r = client.get(path, params=query)
        assert r.status_code < 500, (query, r.text)
        if r.status_code >= 400:
            _one_line(r, r.status_code)


_FUZZ: dict[str, Any] = {}


def _fuzz_table(client: TestClient) -> dict[str, Any]:
    """One table for the fuzzed calls, made again when a legal action finished its match."""
    table = _FUZZ.get("table")
    if table is not None:
        r = client.get(f"/api/tables/{table['id']}", headers={TOKEN_HEADER: table["token"]})
        if r.status_code == 200 and r.json()["state"]["phase"] in ("bid", "play"):
            return table
    _FUZZ["table"] = _new(client, seed=5)
    return _FUZZ["table"]
