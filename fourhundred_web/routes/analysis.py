"""Engine analysis's routes.

A game's review in Watch (a job of :mod:`fourhundred_web.reviews`) and a hint at a person's
turn on the Play page (:mod:`fourhundred_web.hints`)::

    POST   /api/review              {source, "hand"?}: a review job; source is one of
                                    {"text"} a record's text, {"served": true} the
                                    server's --record, {"pair", "match", "twin"} a tournament
                                    game, {"table"} a Play table's finished hands (with its
                                    X-Table-Token; the answer adds the "game" for the viewer)
    GET    /api/review/{job}        ?since=N: its status, progress and decisions from the N-th
    DELETE /api/review/{job}        stop it
    GET    /api/tables/{id}/hint    ?moves=N&seat=S: the values of the person's legal actions
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_records.files import GameRecord, parse_record
from fourhundred_web.answers import api
from fourhundred_web.bots import public_text
from fourhundred_web.play import OutOfTurnError
from fourhundred_web.records import MAX_RECORD_UPLOAD, read_upload, record_json, table_record
from fourhundred_web.requests import (
    ApiError,
    check_fields,
    int_field,
    read_body,
    show,
    text_field,
)
from fourhundred_web.routes.watch import pairing
from fourhundred_web.server import server
from fourhundred_web.tables import TOKEN_HEADER
from fourhundred_web.watch import Watch

__all__ = ["ROUTES", "hint", "review", "start_review"]


def _tournament_record(w: Watch, pair: tuple[str, str], match_id: int, twin: int) -> GameRecord:
    """Game `twin` of duplicate match `match_id` of `pair` as a record: its hands replayed
    card by card (a game that cannot be is refused, with the reason)."""
    from fourhundred_tournament.replay import ReplayError

    try:
        game = w.game((*pair, match_id, twin))
    except ReplayError:
        raise ApiError(
            404, public_text(f"no finished game of match {match_id}, twin {twin + 1}, for "
                             f"{pair[0]} v {pair[1]}")
        ) from None  # fmt: skip
    if not game.exact:
        raise FourHundredError(
            public_text(f"match {match_id}, twin {twin + 1} cannot be valued: {game.reason}")
        )
    seats = [public_text(pair[(seat & 1) ^ twin]) for seat in range(4)]
    history = [h.record for h in game.hands if h.record is not None]
    return GameRecord.from_history(history, w.info.rules, seats, int(game.match.first_dealer))


async def start_review(request: Request) -> dict[str, Any]:
    """A review job of the game the body names: its first answer (as ``GET /api/review/{job}``),
    with the "game" for the viewer when it is a table's."""
    s = server(request)
    body = await read_body(request, MAX_RECORD_UPLOAD, "a record of at most 1 MiB")
    check_fields(body, ("text", "served", "pair", "match", "twin", "table", "hand"))
    hand = None if body.get("hand") is None else int_field(body["hand"], "hand", 1, 10**6)
    sources = [k for k in ("text", "served", "pair", "table") if body.get(k) is not None]
    if len(sources) != 1:
        raise ApiError(
            400, f"{'no' if not sources else 'more than one'} game to review "
            f"({sources or 'none'}): expected one of text, served, pair (with match and "
            "twin) or table"
        )  # fmt: skip
    source = sources[0]
    if source != "pair" and (body.get("match") is not None or body.get("twin") is not None):
        raise ApiError(400, "match and twin: expected only with pair (a tournament game)")
    extra: dict[str, Any] = {}
    if source == "text":
        text = body["text"]
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, f"text={show(text)}: expected the text of a record file")
        record = await run_in_threadpool(read_upload, text)
    elif source == "served":
        if body["served"] is not True:
            raise ApiError(400, f"served={show(body['served'])}: expected true")
        if s.served is None:
            raise ApiError(404, "no record file is open: start the server with "
                           "fourhundred serve --record FILE")  # fmt: skip
        record = s.served
    elif source == "pair":
        w = s.open_watch()
        pair = pairing(w, body["pair"])
        match_id = int_field(body.get("match"), "match", 0, 2**62)
        twin = int_field(body.get("twin"), "twin", 0, 1)
        record = await run_in_threadpool(_tournament_record, w, pair, match_id, twin)
    else:
        table_id = text_field(body["table"], "table", ascii=True)
        table = s.tables.get(table_id, request.headers.get(TOKEN_HEADER))
        session = table.session
        assert session is not None

        def finished() -> tuple[str, GameRecord]:
            with session.lock:
                name, text = table_record(session)  # the finished hands: all may see them
            return name, parse_record(text)

        name, record = await s.tables.run(table, finished)
        extra["game"] = await run_in_threadpool(record_json, record, name)
    job = s.reviews.submit(record, hand)
    return {**s.reviews.answer(job), **extra}


async def review(request: Request) -> dict[str, Any]:
    """GET: a review job's status, progress and decisions from the `since`-th; DELETE: stop
    it."""
    reviews = server(request).reviews
    job_id = request.path_params["job_id"]
    if request.method == "DELETE":
        check_fields(await read_body(request), ())
        return reviews.cancel(job_id)
    check_fields(request.query_params, ("since",))
    since = int_field(request.query_params.get("since"), "since", 0, 10**6, default=0)
    return reviews.poll(job_id, since)


async def hint(request: Request) -> dict[str, Any]:
    """The values of the legal actions of the token's seat, when it is to play."""
    s = server(request)
    table, seat = s.table_seat(request)  # a person's token answers for their seat alone
    q = request.query_params
    check_fields(q, ("moves", "seat"))
    moves = None if q.get("moves") is None else int_field(q["moves"], "moves", 0, 10**6)
    asked = None if q.get("seat") is None else int_field(q["seat"], "seat", 0, 3)
    if asked is not None and asked != seat:
        raise OutOfTurnError(f"seat {asked} is not yours: a hint is for your own seat, {seat}")
    session = table.session
    assert session is not None

    def run() -> dict[str, Any]:
        with session.lock:
            return {**s.hints.hint(session, seat, moves), "moves": session.moves}

    return await s.tables.run(table, run)


ROUTES: list[BaseRoute] = [
    Route("/api/review", api(start_review), methods=["POST"]),
    Route("/api/review/{job_id}", api(review), methods=["GET", "DELETE"]),
    Route("/api/tables/{table_id}/hint", api(hint)),
]
