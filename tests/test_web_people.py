"""Several people at one web table, through the API: one to four people's seats,
bots in the others, a token per seat that acts and sees for that seat alone; another seat's
cards in no answer to a token over a whole match; out of turn, foreign, expired and wrong
tokens refused with nothing changed. The pages: tests/test_web_browser_people.py."""

from __future__ import annotations

import base64
import re
import time
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")

from starlette.testclient import TestClient

from fourhundred_web.app import TOKEN_HEADER, create_app
from tests.web import one_line as _one_line

CARD = re.compile(r"(?<![0-9A-Za-z])((?:10|[2-9JQKA])[CDSH])(?![0-9A-Za-z])")
SECRETS = re.compile(r'"(?:id|token)":"[^"]*"|join=[\w.-]*')
SEED = 11


@pytest.fixture()
def app() -> Any:
    return create_app(max_tables=50, max_per_client=50)


@pytest.fixture()
def client(app: Any) -> TestClient:
    return TestClient(app, base_url="http://localhost")


class Person:
    """One person's page: their seat's token, and every answer it got checked to hold no
    card another seat holds now (the server's own truth) but the ones the request named."""

    def __init__(self, app: Any, client: TestClient, table: str, token: str, seat: int) -> None:
        self.app, self.client, self.table, self.token, self.seat = app, client, table, token, seat
        self.answers = 0

    def call(self, method: str, path: str = "", **kw: Any) -> Any:
        r = self.client.request(method, f"/api/tables/{self.table}{path}",
                                headers={TOKEN_HEADER: self.token}, **kw)  # fmt: skip
        self.check(r, str(kw.get("json", "")))
        return r

    def check(self, r: Any, request: str) -> None:
        """No card another seat holds now is in the answer `r` (unless `request` named it),
        and a state holds this seat's hand exactly."""
        self.answers += 1
        tables = self.app.state.server.tables
        open_table = tables._tables.get(self.table)
        if open_table is None:  # closed: nobody holds anything
            return
        truth = open_table.session.table
        if r.headers["content-type"].startswith("text/plain"):  # a record: finished hands only
            assert truth.phase not in ("bid", "play") or (f"hand {truth.hand_number}" not in r.text)
            return
        others = {c for s in range(4) if s != self.seat for c in truth.hand(s)}
        # random tokens and ids (letters, digits, - and _) may hold a card's text by chance
        text = SECRETS.sub("", r.text)
        leaked = set(CARD.findall(text)) & others - set(CARD.findall(request))
        assert not leaked, (self.seat, leaked, r.text[:300])
        if r.status_code == 200 and "state" in r.json():
            state = r.json()["state"]
            assert state["seat"] == self.seat
            assert [c for g in state["hand"] for c in g["cards"]] == truth.hand(self.seat)

    def state(self, since: int | None = None) -> dict[str, Any]:
        params = {} if since is None else {"since": since}
        r = self.call("GET", params=params)
        assert r.status_code == 200, r.text
        return r.json()["state"]

    def act(self, action: str, **body: Any) -> Any:
        return self.call("POST", "/act", json={"action": action, **body})


def _table(app: Any, client: TestClient, **body: Any) -> tuple[dict[str, Any], list[Person]]:
    """A new table (seed SEED unless `body` says otherwise); its people by seat order."""
    r = client.post("/api/tables", json={"seed": SEED, **body})
    assert r.status_code == 200, r.text
    answer = r.json()
    maker = Person(app, client, answer["id"], answer["token"], answer["state"]["seat"])
    maker.check(r, "")
    people = [maker] + [Person(app, client, answer["id"], i["token"], i["seat"])
                        for i in answer.get("invites", [])]  # fmt: skip
    return answer, sorted(people, key=lambda p: p.seat)


def _without_frames(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "frames"}


def _views(people: list[Person]) -> list[dict[str, Any]]:
    return [_without_frames(p.state()) for p in people]


def _turn(people: list[Person]) -> tuple[Person, dict[str, Any]] | None:
    """The person to act now and their state, or None between hands."""
    for p in people:
        state = p.state()
        if state["your_turn"]:
            return p, state
    return None


def _play_hand(people: list[Person], card: int = 0) -> dict[str, Any]:
    """Each person plays the lowest legal bid and their legal card at `card` until the hand is
    over; the last state."""
    while (turn := _turn(people)) is not None:
        p, state = turn
        action = state["legal"][0 if state["phase"] == "bid" else card]
        r = p.act(action, seat=p.seat, moves=state["moves"])
        assert r.status_code == 200, r.text
    return people[0].state()


# -- seats and tokens -------------------------------------------------------------------------
def test_two_people_and_two_bots_each_token_sees_and_plays_its_own_seat(
    app: Any, client: TestClient
) -> None:
    answer, people = _table(app, client, seat=1, left="person", partner="random",
                            right="random", name="Ann")  # fmt: skip
    assert [p.seat for p in people] == [0, 1] and answer["state"]["people"] == [0, 1]
    assert [i["link"] for i in answer["invites"]] == [
        f"/#join={answer['id']}.{people[0].token}"
    ]  # the token rides in the link's fragment, which a browser never sends
    hands = [[c for g in p.state()["hand"] for c in g["cards"]] for p in people]
    assert len(hands[0]) == len(hands[1]) == 13 and not set(hands[0]) & set(hands[1])
    state = people[1].state()
    assert state["names"] == ["person 1", "Ann", "random", "random"]
    assert state["joined"] == [1] and state["maker"] == 1
    r = people[0].call("POST", "/join", json={"name": "Bob"})
    assert r.status_code == 200 and r.json()["state"]["names"][0] == "Bob"
    assert people[1].state()["joined"] == [0, 1]
    last = _play_hand(people)
    assert last["phase"] == "hand_over" and last["sheet"]
    # any person deals the next hand; the bots move until a person is to act
    r = people[0].call("POST", "/deal")
    assert r.status_code == 200 and r.json()["state"]["hand_number"] == 2
    assert people[1].state()["hand_number"] == 2
    # the record labels the seats by the people's names and the bots' (any person's token)
    r = people[0].call("GET", "/record")
    assert r.status_code == 200 and "Bob" in r.text and "Ann" in r.text


def test_four_people_and_no_bot(app: Any, client: TestClient) -> None:
    answer, people = _table(app, client, seat=2, partner="person", right="person", left="person")
    assert [p.seat for p in people] == [0, 1, 2, 3]
    assert answer["state"]["names"] == [f"person {k}" for k in (1, 2, 3, 4)]
    assert answer["state"]["frames"] == []  # no bot moved: seat 1 bids first
    tokens = {p.token for p in people}
    assert len(tokens) == 4
    first = _turn(people)
    assert first is not None and first[0].seat == 1
    held = [set(c for g in p.state()["hand"] for c in g["cards"]) for p in people]
    assert sum(len(h) for h in held) == 52 and len(set().union(*held)) == 52
    last = _play_hand(people, card=-1)
    assert last["phase"] == "hand_over"


def test_every_answer_to_a_token_holds_only_its_seat_s_cards_over_a_whole_match(
    app: Any, client: TestClient
) -> None:
    _, people = _table(app, client, seat=0, partner="heuristic", right="person",
                       left="heuristic")  # fmt: skip
    moves = [0, 0]
    dealer = 0
    while True:
        states = []
        for k, p in enumerate(people):  # each page polls for what it has not seen yet
            states.append(p.state(since=moves[k]))
            assert all(f["move"] > moves[k] for f in states[-1]["frames"])
            moves[k] = states[-1]["moves"]
        state = states[0]
        if state["phase"] == "match_over" or state["stopped"]:
            break
        if state["phase"] == "hand_over":
            people[dealer].call("POST", "/deal")
            dealer = 1 - dealer
            continue
        k = next(k for k in (0, 1) if states[k]["your_turn"])
        p, mine, other = people[k], states[k], people[1 - k]
        action = mine["legal"][0 if mine["phase"] == "bid" else -1]
        # the other person may not act now, nor play this seat's card: refused, nothing changed
        r = other.act(action)
        assert r.status_code == 409, r.text
        r = p.act(action, seat=p.seat, moves=mine["moves"])
        assert r.status_code == 200, r.text
    assert state["winner"] in (0, 1) and state["phase"] == "match_over"
    assert sum(p.answers for p in people) > 200


# -- refused, nothing changed -------------------------------------------------------------------
def test_acting_out_of_turn_or_for_another_seat_is_refused_without_change(
    app: Any, client: TestClient
) -> None:
    _, people = _table(app, client, seat=0, partner="person", right="random", left="random")
    turn = _turn(people)
    assert turn is not None
    p, state = turn
    other = people[1 - people.index(p)]
    before = _views(people)
    for who, body, status, match in [
        (other, {"action": state["legal"][0]}, 409, rf"it is S{p.seat}'s turn .*not yours"),
        (other, {"action": state["legal"][0], "seat": p.seat}, 409,
         rf"seat {p.seat} is not yours: you play seat {other.seat}"),
        (p, {"action": state["legal"][0], "seat": other.seat}, 409, r"is not yours"),
    ]:  # fmt: skip
        _one_line(who.call("POST", "/act", json=body), status, match)
        assert _views(people) == before
    _one_line(other.call("POST", "/deal"), 409, r"a hand is in progress")
    # another seat's view cannot be asked for: the seat is the token's
    _one_line(other.call("GET", params={"seat": p.seat}), 400, r"unknown field\(s\) \['seat'\]")
    _one_line(other.call("POST", "/join", json={"name": "x/y"}), 400, r"name='x/y': expected")
    # an invited person cannot close the table for everyone
    _one_line(people[1].call("DELETE"), 403, r"only its maker \(S0\) may close it")
    assert _views(people) == before


def test_foreign_expired_and_wrong_tokens_are_refused_without_change(
    app: Any, client: TestClient
) -> None:
    _, people = _table(app, client, seat=0, partner="person", right="random", left="random")
    _, elsewhere = _table(app, client, seat=0, partner="person", right="random", left="random")
    before = _views(people)
    url = f"/api/tables/{people[0].table}"
    for token, status, match in [
        (elsewhere[0].token, 403, r"wrong X-Table-Token"),  # another table's seats
        (elsewhere[1].token, 403, r"wrong X-Table-Token"),
        (people[1].token[:-1], 403, r"wrong X-Table-Token"),
        (people[1].token + "x", 403, r"wrong X-Table-Token"),
    ]:
        for method, path, body in [("GET", "", None), ("POST", "/act", {"action": "2"}),
                                   ("POST", "/deal", None), ("POST", "/join", {}),
                                   ("DELETE", "", None)]:  # fmt: skip
            r = client.request(method, url + path, json=body, headers={TOKEN_HEADER: token})
            _one_line(r, status, match)
    _one_line(client.get(url), 401, r"no X-Table-Token header")
    assert _views(people) == before
    # closed by its maker: every seat's token answers 404 in one line
    assert people[0].call("DELETE").json()["closed"] is True
    for p in people:
        _one_line(p.call("GET"), 404, r"unknown table")
        _one_line(p.act("2"), 404, r"unknown table")
    # left idle: expired for every seat's token
    tables = app.state.server.tables
    now = [time.monotonic()]
    tables.clock = lambda: now[0]
    assert elsewhere[1].call("GET").status_code == 200
    now[0] += tables.idle_seconds + 1
    for p in elsewhere:
        _one_line(p.call("GET"), 404, r"unknown table")


def test_tokens_are_long_distinct_and_of_one_seat_only(app: Any, client: TestClient) -> None:
    seen: set[str] = set()
    for seat in range(4):
        answer, people = _table(app, client, seat=seat, partner="person", right="person",
                                left="person")  # fmt: skip
        for p in people:
            raw = base64.urlsafe_b64decode(p.token + "=" * (-len(p.token) % 4))
            assert len(raw) * 8 >= 128 and re.fullmatch(r"[A-Za-z0-9_-]+", p.token)
            assert p.token not in seen
            seen.add(p.token)
            # each token sees its own seat only, whichever seat made the table
            assert p.state()["seat"] == p.seat
        assert answer["id"] not in seen
    assert len(seen) == 16


def test_a_bad_table_is_refused_and_leaves_no_table_open(app: Any, client: TestClient) -> None:
    for body, match in [
        ({"partner": "person", "name": "a" * 30}, r"name='a+\.*': expected 1 to 24"),
        ({"partner": "persons"}, r"not a bot this server offers.*'person'"),
        ({"partner": "person", "name": 3}, r"name=3: expected text"),
    ]:
        r = client.post("/api/tables", json=body)
        _one_line(r, 400, match)
    assert len(app.state.server.tables) == 0


def test_a_page_polling_gets_the_moves_it_has_not_seen(app: Any, client: TestClient) -> None:
    _, people = _table(app, client, seat=0, partner="person", right="random", left="random")
    waiting = people[1].state()
    seen = waiting["moves"]
    assert people[1].state(since=seen)["frames"] == []
    while (turn := _turn(people)) is not None and turn[0] is not people[0]:
        p, state = turn
        p.act(state["legal"][0])
        seen = people[1].state()["moves"]
    assert turn is not None
    state = turn[1]
    r = people[0].act(state["legal"][0], moves=state["moves"])
    made = r.json()["state"]["frames"]
    assert made and made[0]["seat"] == 0 and made[0]["move"] == state["moves"] + 1
    polled = people[1].state(since=seen)["frames"]
    assert [f["move"] for f in polled] == list(range(seen + 1, r.json()["state"]["moves"] + 1))
    assert polled[-len(made) :] == made
