"""A Play table's routes: ``/api/tables`` (make one) and ``/api/tables/{id}`` with its
``join``, ``act``, ``deal`` and ``record``. Each table's work runs on its own thread
(:meth:`fourhundred_web.tables.Tables.run`), for the seat of the request's token alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from fourhundred_web.answers import api
from fourhundred_web.bots import default_bot
from fourhundred_web.play import PERSON, PlaySession, new_session
from fourhundred_web.records import table_record
from fourhundred_web.requests import ApiError, check_fields, int_field, read_body, text_field
from fourhundred_web.server import server

__all__ = ["ROUTES", "act", "create_table", "deal", "download_record", "join", "table_state"]


async def create_table(request: Request) -> dict[str, Any]:
    """A new table, its first hand dealt: its id, the maker's token, the state, and the
    invitations of the seats given to a person."""
    s = server(request)
    body = await read_body(request)
    check_fields(body, ("seat", "partner", "right", "left", "rules", "seed", "name"))
    seat = int_field(body.get("seat"), "seat", 0, 3, default=0)
    default = default_bot(s.choices)
    specs = {r: text_field(body.get(r), r, default) for r in ("partner", "right", "left")}
    rules = text_field(body.get("rules"), "rules", "wiki")
    seed = None if body.get("seed") is None else int_field(body["seed"], "seed", 0, 2**31 - 1)
    name = None if body.get("name") is None else text_field(body["name"], "name")
    offset = {"right": 1, "partner": 2, "left": 3}
    invited = tuple(sorted((seat + offset[r]) % 4 for r, v in specs.items() if v == PERSON))
    table = s.tables.open(request.client.host if request.client else "", seat, invited)

    def make() -> tuple[PlaySession, dict[str, Any]]:
        session = new_session(
            seat, specs["partner"], specs["right"], specs["left"], rules, seed, s.choices, name
        )
        with session.lock:
            return session, session.state()

    try:
        table.session, state = await s.tables.run(table, make)
    except BaseException:
        s.tables.close(table)
        raise
    answer: dict[str, Any] = {"id": table.table_id, "token": table.token, "state": state}
    if invited:  # the links the maker hands on: the token in the fragment, never sent
        answer["invites"] = [
            {"seat": i, "token": table.seat_tokens[i],
             "link": f"/#join={table.table_id}.{table.seat_tokens[i]}"}
            for i in invited
        ]  # fmt: skip
    if seed is not None:  # the owner's own reproducible table: nothing secret in it
        answer["seed"] = seed
    return answer


def _on_table(
    request: Request, change: Callable[[PlaySession, int], None] | None,
    since: int | None = None,
) -> Awaitable[dict[str, Any]]:  # fmt: skip
    """Run `change` (None: nothing) on the request's table for its token's seat, answer
    the state that seat sees, with the frames after the first `since` moves (None: the
    moves this request made)."""
    s = server(request)
    table, seat = s.table_seat(request)
    session = table.session
    assert session is not None  # Tables.get answers only tables made

    def run() -> dict[str, Any]:
        with session.lock:
            before = session.moves if since is None else since
            if change is not None:
                change(session, seat)
            return {"id": table.table_id, "state": session.state(seat, before)}

    return s.tables.run(table, run)


async def table_state(request: Request) -> dict[str, Any]:
    """GET: the table as the token's seat sees it; DELETE: close it (its maker only)."""
    s = server(request)
    if request.method == "DELETE":
        table, seat = s.table_seat(request)
        if seat != table.seat:
            raise ApiError(
                403, f"table {table.table_id!r}: only its maker (S{table.seat}) may close it; "
                "a person invited leaves by closing the page"
            )  # fmt: skip
        s.tables.close(table)
        return {"id": request.path_params["table_id"], "closed": True}
    q = request.query_params
    check_fields(q, ("since",))
    since = None if q.get("since") is None else int_field(q["since"], "since", 0, 10**6)
    return await _on_table(request, None, since)


async def join(request: Request) -> dict[str, Any]:
    """The token's person has opened the table."""
    server(request).table_seat(request)  # 404/401/403 before the body is read
    body = await read_body(request)
    check_fields(body, ("name",))
    name = None if body.get("name") is None else text_field(body["name"], "name")
    return await _on_table(request, lambda s, seat: s.join(seat, name))


async def act(request: Request) -> dict[str, Any]:
    """A bid, a redeal or a card of the token's seat (or of the seat it plays for)."""
    server(request).table_seat(request)  # 404/401/403 before the body is read
    body = await read_body(request)
    check_fields(body, ("action", "seat", "moves"))
    action = text_field(body.get("action"), "action", ascii=True)  # "4", "redeal", "AH"
    seat = None if body.get("seat") is None else int_field(body["seat"], "seat", 0, 3)
    moves = None if body.get("moves") is None else int_field(body["moves"], "moves", 0, 10**6)
    return await _on_table(request, lambda s, by: s.act(action, seat=seat, moves=moves, by=by))


async def deal(request: Request) -> dict[str, Any]:
    """The next hand."""
    server(request).table_seat(request)
    check_fields(await read_body(request), ())
    return await _on_table(request, lambda s, by: s.deal())


async def download_record(request: Request) -> Response:
    """The record of the table's finished hands, as a text file."""
    s = server(request)
    table, _ = s.table_seat(request)
    check_fields(request.query_params, ())
    session = table.session
    assert session is not None

    def run() -> tuple[str, str]:
        with session.lock:
            return table_record(session)

    name, text = await s.tables.run(table, run)
    return Response(
        text, media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )  # fmt: skip


ROUTES: list[BaseRoute] = [
    Route("/api/tables", api(create_table), methods=["POST"]),
    Route("/api/tables/{table_id}", api(table_state), methods=["GET", "DELETE"]),
    Route("/api/tables/{table_id}/join", api(join), methods=["POST"]),
    Route("/api/tables/{table_id}/act", api(act), methods=["POST"]),
    Route("/api/tables/{table_id}/deal", api(deal), methods=["POST"]),
    Route("/api/tables/{table_id}/record", api(download_record)),
]
