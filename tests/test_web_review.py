"""Engine analysis in the web app, through the API, fourhundred_web.reviews and
fourhundred_web.hints: a game's review as a background job (one at a time, a capped queue,
progress, cached, stopped on request or when abandoned; its values those of `fourhundred
analyse`), a Play table's finished hands reviewed by its token holder, and the hint at a
person's turn (their own view only: the same whatever the other seats hold; only for the seat
to play). The page itself:
tests/test_web_browser_review.py."""

from __future__ import annotations

import dataclasses
import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")

from starlette.testclient import TestClient

from fourhundred_agents.analysis import ActionValues, analyse_decisions
from fourhundred_env.cards import parse_action
from fourhundred_env.game_records.files import decisions, parse_record
from fourhundred_env.table import Table
from fourhundred_web.app import create_app
from fourhundred_web.hints import Hints
from fourhundred_web.play import OutOfTurnError
from fourhundred_web.requests import ApiError
from fourhundred_web.reviews import Reviews
from tests.web import one_line as _one_line

SMALL = "search:worlds=4,candidates=16,bid_worlds=4"
"""The valuer of these tests: a few worlds (the server's own are heavier)."""
SEED = 11  # hand 1 of seed 11 is played out with the person's lowest legal actions
BOTS = {"partner": "heuristic", "right": "heuristic", "left": "minbid"}
TOKEN = "X-Table-Token"

# One deal, and another that agrees with it on S0's hand (and so on everything S0 has seen
# before any card is played): S1 and S3 swap hands, S2 and the new S1 swap AD and JH.
HEAD = "fourhundred-record 1\nseat S0: ann\nseat S1: bob\nseat S2: cy\nseat S3: di\n" \
       "dealer: S3\nhand 1\n"  # fmt: skip
S0 = "S0: QH 7C 9C JS 8H 9S 3C 10C JD 2S AS KS 2C\n"
DEAL_A = S0 + (
    "S1: 3H 6H 8S JC 5C 6S 4S 3S AH 2H AC KC QC\n"
    "S2: 7H 5H QS AD 9D 10S 5S 6C 2D KD 3D 4D 5D\n"
    "S3: JH 4C 4H 10H 7S 10D KH 8C 9H QD 6D 7D 8D\n"
)
DEAL_B = S0 + (
    "S1: AD 4C 4H 10H 7S 10D KH 8C 9H QD 6D 7D 8D\n"
    "S2: 7H 5H QS JH 9D 10S 5S 6C 2D KD 3D 4D 5D\n"
    "S3: 3H 6H 8S JC 5C 6S 4S 3S AH 2H AC KC QC\n"
)
PLAYED = "bids: 4 3 2 2\nplay: 9S 4S 10S 7S  QS JH JS 6S\n"
"""Twelve decisions of DEAL_A: four bids, then two tricks."""


def _wait(client: TestClient, job: dict[str, Any]) -> dict[str, Any]:
    """Poll `job` until it ends; its last answer, with every decision gathered."""
    decisions = list(job["decisions"])
    deadline = time.monotonic() + 600
    while job["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job  # a wait, not a timing assertion
        time.sleep(0.1)
        r = client.get(f"/api/review/{job['job']}", params={"since": len(decisions)})
        assert r.status_code == 200, r.text
        job = r.json()
        assert job["done"] == len(decisions) + len(job["decisions"]) <= job["total"]
        decisions += job["decisions"]
    return {**job, "decisions": decisions}


@pytest.fixture(scope="module")
def app() -> Any:
    app = create_app(max_tables=100, max_per_client=100)
    app.state.server.reviews.agent = SMALL
    app.state.server.hints.agent = SMALL
    return app


@pytest.fixture(scope="module")
def client(app: Any) -> TestClient:
    return TestClient(app, base_url="http://localhost")


@pytest.fixture(scope="module")
def played(client: TestClient) -> dict[str, Any]:
    """A table of seed 11 whose first hand the person played with their lowest legal
    actions, the hints asked for on the way (at a bid and at a card)."""
    r = client.post("/api/tables", json={"seed": SEED, "seat": 0, **BOTS})
    table, token, state = r.json()["id"], r.json()["token"], r.json()["state"]
    fresh = client.post("/api/tables", json={"seed": SEED, "seat": 0, **BOTS}).json()
    hints = []
    while state["phase"] in ("bid", "play"):
        r = client.get(f"/api/tables/{table}/hint", params={"moves": state["moves"]},
                       headers={TOKEN: token})  # fmt: skip
        assert r.status_code == 200, r.text
        hints.append((state, r.json()))
        r = client.post(f"/api/tables/{table}/act", json={"action": state["legal"][0]},
                        headers={TOKEN: token})  # fmt: skip
        assert r.status_code == 200, r.text
        state = r.json()["state"]
    assert state["phase"] == "hand_over"
    return {"id": table, "token": token, "state": state, "hints": hints, "fresh": fresh}


# -- hints -------------------------------------------------------------------------------------
def test_a_hint_values_the_person_s_legal_actions(played: dict[str, Any]) -> None:
    phases = {h["phase"] for _, h in played["hints"]}
    assert phases == {"bid", "play"}
    for state, hint in played["hints"]:
        assert hint["seat"] == 0 and hint["moves"] == state["moves"]
        assert [a["action"] for a in hint["actions"]] == state["legal"]  # action-id order
        assert hint["agent"] == SMALL and hint["unit"] == "match-win"
        if len(state["legal"]) == 1:
            assert hint["best"] == state["legal"][0] and hint["actions"][0]["value"] is None
            continue
        values = {a["action"]: a["value"] for a in hint["actions"]}
        assert all(0.0 <= v <= 1.0 for v in values.values()), values
        assert values[hint["best"]] == max(values.values())
        assert hint["worlds"] >= 1 and hint["seconds"] >= 0


def test_a_hint_is_only_for_the_seat_to_play(client: TestClient, played: dict[str, Any]) -> None:
    table, token = played["id"], played["token"]
    url = f"/api/tables/{table}/hint"
    before = client.get(f"/api/tables/{table}", headers={TOKEN: token}).json()["state"]
    assert "no decision is pending (hand over)" in _one_line(
        client.get(url, headers={TOKEN: token}), 409
    )
    fresh = played["fresh"]  # the person to bid: a hint for another seat, a stale page
    furl, ftoken = f"/api/tables/{fresh['id']}/hint", fresh["token"]
    r = client.get(furl, params={"seat": 2}, headers={TOKEN: ftoken})
    assert "seat 2 is not yours" in _one_line(r, 409)
    r = client.get(furl, params={"moves": fresh["state"]["moves"] + 1}, headers={TOKEN: ftoken})
    assert "the page is out of date" in _one_line(r, 409)
    assert "no X-Table-Token header" in _one_line(client.get(url), 401)
    assert "wrong X-Table-Token" in _one_line(client.get(url, headers={TOKEN: "forged"}), 403)
    assert "unknown field(s) ['cards']" in _one_line(
        client.get(url, params={"cards": "all"}, headers={TOKEN: token}), 400
    )
    after = client.get(f"/api/tables/{table}", headers={TOKEN: token}).json()["state"]
    assert after == before  # nothing changed


def test_a_hint_does_not_depend_on_the_cards_the_person_cannot_see() -> None:
    """Two deals that agree on S0's hand and the public history: the same hint, at a bid and
    at a card; the tables differ (the other seats' cards), the views do not."""
    hints = Hints(SMALL)
    for played in ("", "bids: 4 3 2 2\n"):
        a = Table.from_record(parse_record(HEAD + DEAL_A + played))
        b = Table.from_record(parse_record(HEAD + DEAL_B + played))
        assert a.to_play == b.to_play == 0
        assert not np.array_equal(a.state.hand_set, b.state.hand_set)  # other cards
        answers = []
        for table in (a, b):
            session = SimpleNamespace(table=table, people=(0,), moves=len(played), seat=0)
            answers.append(hints.hint(session, 0, len(played)))  # type: ignore[arg-type]
        for answer in answers:
            answer.pop("seconds")
        assert answers[0] == answers[1]
        assert answers[0]["phase"] == ("play" if played else "bid")
        assert len(answers[0]["actions"]) > 1 and answers[0]["worlds"] >= 1
        with pytest.raises(OutOfTurnError, match="S0's turn, not yours"):
            hints.hint(SimpleNamespace(table=a, people=(0, 1), moves=len(played)), 1)  # type: ignore[arg-type]


def test_a_hint_under_rules_no_bundled_network_was_trained_under() -> None:
    """Under pagat the default hint's network (trained under the default rules) cannot search:
    the hint is valued by the same search with heuristic-v1 at every seat of its worlds (it
    answered 400); a valuer the owner chose keeps its one-line refusal."""
    from fourhundred_agents.neural.checkpoint import CheckpointError
    from fourhundred_web.hints import HINT_AGENT_ANY_RULES

    hints = Hints()
    pagat = "fourhundred-record 1\nrules: pagat\n" + HEAD.split("\n", 1)[1]
    for played in ("", "bids: 4 3 2 2\n"):
        table = Table.from_record(parse_record(pagat + DEAL_A + played))
        assert table.rules.score_table == "pagat" and table.to_play == 0
        session = SimpleNamespace(table=table, people=(0,), moves=len(played), seat=0)
        answer = hints.hint(session, 0, len(played))  # type: ignore[arg-type]
        assert answer["agent"] == HINT_AGENT_ANY_RULES and answer["unit"] == "match-win"
        assert answer["phase"] == ("play" if played else "bid")
        values = [a["value"] for a in answer["actions"]]
        assert len(values) > 1 and all(0.0 <= v <= 1.0 for v in values), answer
    table = Table.from_record(parse_record(pagat + DEAL_A))
    session = SimpleNamespace(table=table, people=(0,), moves=0, seat=0)
    with pytest.raises(CheckpointError, match="trained under other rules"):
        Hints(SMALL).hint(session, 0, 0)  # type: ignore[arg-type]


# -- reviews through the API --------------------------------------------------------------------
def test_a_record_s_review_is_fourhundred_analyse_s_and_cached(client: TestClient) -> None:
    text = HEAD + DEAL_A + PLAYED
    r = client.post("/api/review", json={"text": text})
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["status"] in ("queued", "running", "done") and first["total"] == 12
    assert first["hand"] is None and first["agent"] == SMALL and first["seed"] == 0
    done = _wait(client, first)
    assert done["status"] == "done" and done["done"] == 12 and done["error"] is None
    record = parse_record(text)
    expected = analyse_decisions(decisions(record), SMALL, 0)  # as `fourhundred analyse`
    assert done["decisions"] == [d.to_dict() for d in expected.decisions]
    assert [(d["move"], d["seat"], d["taken"]) for d in done["decisions"][:5]] == [
        (1, 0, "4"), (2, 1, "3"), (3, 2, "2"), (4, 3, "2"), (5, 0, "9S")
    ]  # fmt: skip
    again = client.post("/api/review", json={"text": text}).json()  # cached: done at once
    assert again["job"] == first["job"] and again["status"] == "done"
    assert again["decisions"] == done["decisions"]
    one = _wait(client, client.post("/api/review", json={"text": text, "hand": 1}).json())
    assert one["job"] != first["job"] and one["hand"] == 1  # another review: one hand


def test_a_played_table_s_finished_hands_are_reviewed_for_its_token_holder(
    client: TestClient, played: dict[str, Any]
) -> None:
    table, token = played["id"], played["token"]
    r = client.post("/api/review", json={"table": table, "hand": 1}, headers={TOKEN: token})
    assert r.status_code == 200, r.text
    answer = r.json()
    game = answer["game"]  # for the viewer: the finished hand, every seat's cards
    assert game["seats"] == ["you", "heuristic", "heuristic", "minbid"]
    (hand,) = game["hands"]
    assert len(hand["plays"]) == 52 and hand["finished"]
    done = _wait(client, answer)
    assert done["status"] == "done" and done["total"] == len(hand["calls"]) + 52
    assert {d["seat"] for d in done["decisions"]} == {0, 1, 2, 3}
    assert [d["taken"] for d in done["decisions"] if d["phase"] == "play"] == [
        p["card"] for p in hand["plays"]
    ]
    assert "wrong X-Table-Token" in _one_line(
        client.post("/api/review", json={"table": table}, headers={TOKEN: "forged"}), 403
    )
    fresh = played["fresh"]
    r = client.post("/api/review", json={"table": fresh["id"]}, headers={TOKEN: fresh["token"]})
    assert "no hand is finished yet" in _one_line(r, 409)


def test_a_review_that_cannot_be_made_is_refused_in_one_line(client: TestClient) -> None:
    text = HEAD + DEAL_A + PLAYED
    cases = [
        ({}, 400, "no game to review"),
        ({"text": text, "served": True}, 400, "more than one game to review"),
        ({"text": text, "hand": 2}, 400, "hand=2: expected a hand of the game, 1 to 1"),
        ({"text": text, "hand": 0}, 400, "hand=0: expected an integer from 1"),
        ({"text": "fourhundred-record 1\nhand 2\n"}, 400, "hand"),
        ({"text": HEAD + DEAL_A}, 400, "no decision to review"),
        ({"served": True}, 404, "no record file is open"),
        ({"pair": 0, "match": 0, "twin": 0}, 404, "no results database is open"),
        ({"text": text, "twin": 1}, 400, "expected only with pair"),
        ({"text": text, "agent": "random"}, 400, "unknown field(s) ['agent']"),
    ]
    live = len(client.app.state.server.reviews._jobs)  # type: ignore[attr-defined]
    for body, status, words in cases:
        assert words in _one_line(client.post("/api/review", json=body), status), body
    assert len(client.app.state.server.reviews._jobs) == live  # type: ignore[attr-defined]
    assert "unknown review 'nope'" in _one_line(client.get("/api/review/nope"), 404)
    assert "unknown review" in _one_line(client.delete("/api/review/nope"), 404)


# -- the queue ----------------------------------------------------------------------------------
class _Held:
    """A valuer whose every call waits for `go` (0.5 for every legal action, plus the
    action's id in thousandths: the highest legal id is best)."""

    unit = "match-win"

    def __init__(self) -> None:
        self.go = threading.Event()
        self.calls = 0

    def value_actions(self, view: Any) -> ActionValues:
        self.calls += 1
        assert self.go.wait(60)
        legal = view.legal_mask
        value = np.where(legal, 0.5 + np.arange(legal.shape[1]) / 1000, np.nan)
        stderr = np.where(legal, 0.0001, np.nan)
        return ActionValues(value, stderr, np.full(view.size, 4, np.int64))


def _ended(reviews: Reviews, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while (answer := reviews.poll(job_id))["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, answer
        time.sleep(0.02)
    return answer


def test_one_review_at_a_time_in_a_capped_queue_stopped_on_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = _Held()
    reviews = Reviews(max_jobs=2)
    monkeypatch.setattr(reviews, "_valuer", lambda rules: held)
    base = parse_record(HEAD + DEAL_A + PLAYED)
    a, b, c = (dataclasses.replace(base, seats=(n, "bob", "cy", "di")) for n in "xyz")
    first = reviews.submit(a)
    second = reviews.submit(b)
    with pytest.raises(ApiError, match="busy with 2 reviews") as refused:
        reviews.submit(c)
    assert refused.value.status == 503
    assert reviews.submit(a) is first  # asked again: the same job
    deadline = time.monotonic() + 60
    while held.calls == 0:  # the first is running, the second waits for it
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert reviews.poll(first.job_id)["status"] == "running"
    assert reviews.poll(second.job_id)["status"] == "queued"
    assert reviews.poll(second.job_id)["ahead"] == 1
    assert reviews.cancel(second.job_id)["status"] == "cancelled"
    third = reviews.submit(c)  # room again
    held.go.set()
    done = _ended(reviews, first.job_id)
    assert done["status"] == "done" and done["done"] == done["total"] == 12
    lead = done["decisions"][4]  # S0's lead: the best is its highest legal action id
    assert lead["best"] == max((a["action"] for a in lead["actions"]), key=parse_action)
    assert _ended(reviews, third.job_id)["status"] == "done"
    assert reviews.poll(second.job_id)["status"] == "cancelled"  # never ran
    assert held.calls == 2 * 2  # two jobs of twelve decisions, in batches of eight


def test_a_review_nobody_asks_about_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    held = _Held()
    reviews = Reviews(abandon_seconds=120, clock=lambda: now[0])
    monkeypatch.setattr(reviews, "_valuer", lambda rules: held)
    job = reviews.submit(parse_record(HEAD + DEAL_A + PLAYED))
    deadline = time.monotonic() + 60
    while held.calls == 0:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    now[0] = 121.0  # the page is gone: the batch after this one is not valued
    held.go.set()
    deadline = time.monotonic() + 60
    while job.status == "running":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    answer = reviews.answer(job)
    assert answer["status"] == "cancelled" and answer["done"] == 8
    assert "nobody asked about it for 120 s" in answer["error"]
    assert reviews.submit(parse_record(HEAD + DEAL_A + PLAYED)) is not job  # asked afresh


def test_a_tournament_game_shown_in_watch_is_reviewed(results_db: Any) -> None:
    app = create_app(db=results_db)
    app.state.server.reviews.agent = SMALL
    client = TestClient(app, base_url="http://localhost")
    row = client.get("/api/watch/matches", params={"limit": 1}).json()["matches"][0]
    match = client.get("/api/watch/match", params={"pair": row["pair"], "match": row["match_id"]})
    twin = match.json()["twins"][1]
    assert twin["exact"]
    body = {"pair": row["pair"], "match": row["match_id"], "twin": 1, "hand": 1}
    done = _wait(client, client.post("/api/review", json=body).json())
    assert done["status"] == "done", done
    hand = twin["hands"][0]
    moves = [str(c["bid"]) for c in hand["calls"]] + [p["card"] for p in hand["plays"]]
    assert [d["taken"] for d in done["decisions"]] == moves  # the game Watch shows
    assert [d["seat"] for d in done["decisions"][: len(hand["calls"])]] == [
        c["seat"] for c in hand["calls"]
    ]
    r = client.post("/api/review", json={**body, "match": 10**6})
    assert "no finished game of match 1000000, twin 2" in _one_line(r, 404)
    assert "pair=99: expected an integer" in _one_line(
        client.post("/api/review", json={**body, "pair": 99}), 400
    )
