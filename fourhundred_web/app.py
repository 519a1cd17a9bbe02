"""The web server: a Starlette app serving the page (package data) and a JSON API.

Routes (every answer is JSON; a refused request is ``{"error": "..."}`` with a 4xx status and
changes nothing)::

    GET    /                       the page (static/index.html); /static/* its CSS and JS
    GET    /api/options            bots to choose from (public names, strongest first, with a
                                   note on strength and speed), rules presets, whether a
                                   database is open
    POST   /api/tables             {"seat", "partner", "right", "left", "rules", "seed"?,
                                   "name"?}: a new table, first hand dealt; a role given as
                                   "person" is a seat for a person invited by a link; answers
                                   {"id", "token", "state"}, "invites" [{"seat", "token",
                                   "link"}] when a seat is a person's, and "seed" when the
                                   request gave one
    GET    /api/tables/{id}        ?since=N: the table as the token's seat sees it (frames:
                                   this hand's moves after the first N of the match)
    POST   /api/tables/{id}/join   {"name"?}: the token's person has opened the table
    POST   /api/tables/{id}/act    {"action": "4" | "redeal" | "AH", "seat"?, "moves"?}
    POST   /api/tables/{id}/deal   the next hand (any person at the table)
    GET    /api/tables/{id}/record the record of the table's finished hands, as a text file
                                   (fourhundred_web.records; 409 before the first is over)
    DELETE /api/tables/{id}        close the table (its maker's token only)
    GET    /api/watch              the tournament of the database given to the server
    GET    /api/watch/matches      ?pair=I&sort=S&min_bid=N&offset=N&limit=N
    GET    /api/watch/match        ?pair=I&match=M: both twins, replayed where exact
    GET    /api/watch/ladder       a ladder's ratings now and after each event, its pairings
                                   (404 for a tournament's database)
    POST   /api/records            {"text", "name"?}: a record file's text (or JSON) parsed
                                   and replayed: {"game"} for the viewer (400 a malformed
                                   record, with its one-line reason; 413 over 1 MiB)
    GET    /api/watch/record       the record file the server was started with (--record)
    POST   /api/review, GET|DELETE /api/review/{job}, GET /api/tables/{id}/hint
                                   engine analysis: fourhundred_web.review

Every answer is JSON but a record's download (``text/plain``, as an attachment).

Statuses: 400 a malformed request (not JSON, wrong fields or types, a bot or preset the
server does not offer) or a foreign ``Host``, 401/403 a table's token missing/wrong, 403 a
cross-origin write, 404 an unknown table, game or route, 409 out of turn (a hand in
progress, the match over, a stale page, no hand to record yet), 413 a body over 64 KiB (a
record's upload: 1 MiB), 415 a body that is not
``application/json``, 422 an illegal action, 429 too many tables for one client (or too many
requests waiting on one table), 503 the server full.

Fair and safe:

- **Secret deals.** Unless the page asks for a seed, a table's deal and its bots' seeds are
  secrets the server draws (:func:`fourhundred_web.play.new_session`) and never sends; the
  browser gets the person's view only. A seed asked for is a reproducible table for the
  person who chose it, and is answered back to them.
- **Tokens.** Creating a table answers a token (``secrets``) for the maker's seat and one for
  each invited person's; every later call on that table sends one in the ``X-Table-Token``
  header, and acts and sees for that token's seat alone (a seat's hand is in no other
  token's answer). A custom header also means no other site's page
  can send the call without the browser asking this server first (CORS), which it refuses.
- **Nothing evicts another client's table.** Each client address may hold `max_per_client`
  tables and the server `max_tables`; past either a new table is refused (429, 503) and
  nothing is closed. A table untouched for `idle_seconds` is closed.
- **The event loop never waits on a table.** Each table's work (the bots thinking, its
  state) runs on that table's own thread, one request after another; the loop only awaits
  it, so other tables and ``/api/options`` answer while a slow bot thinks.
- **Only this machine's names.** Requests are answered only for a ``Host`` of localhost,
  127.0.0.1, [::1], the address the server listens on, or `allowed_hosts` (DNS rebinding);
  writes carrying another ``Origin`` or ``Sec-Fetch-Site`` are refused, and a body must be
  ``application/json`` (so no HTML form or ``text/plain`` fetch of another site gets in).
- **Bounds before work.** A body is read in chunks and refused at `MAX_BODY` (whatever its
  ``Content-Length`` says), integers at 30 digits, nesting at the JSON reader's depth.

The only files the server reads besides its own package data are the results database and
the record file it was started with (and the checkpoints of the bots it offers or that
database names, and the programs of its ``cmd:`` bots, which Watch runs to replay their
games while their files are the ones the database fingerprinted); a browser
names bots and games, never paths, and is never told one: bots go by public names
(``neural:selfplay.pt``), and every answer's text (errors, the database's agent specs and
replay notes) has its paths cut to file names (:func:`fourhundred_web.bots.public_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import PRESETS
from fourhundred_web.bots import AgentChoice, agent_choices, default_bot, public_text
from fourhundred_web.guard import LOCAL_HOSTS, Guard
from fourhundred_web.hints import Hints
from fourhundred_web.play import (
    PERSON,
    IllegalMoveError,
    OutOfTurnError,
    PlaySession,
    new_session,
)
from fourhundred_web.records import MAX_RECORD_UPLOAD, read_upload, record_json, table_record
from fourhundred_web.requests import (
    MAX_BODY,
    ApiError,
    check_fields,
    error_response,
    int_field,
    read_body,
    show,
    text_field,
)
from fourhundred_web.review import review_routes
from fourhundred_web.reviews import Reviews
from fourhundred_web.tables import TOKEN_HEADER, OpenTable, Tables
from fourhundred_web.watch import SORTS, Watch

__all__ = ["LOCAL_HOSTS", "MAX_BODY", "TOKEN_HEADER", "create_app"]

STATIC = resources.files("fourhundred_web") / "static"


def _public(value: Any) -> Any:
    """`value` (JSON data) with every string's file paths cut to file names (public_text),
    keys too (two keys cut to one name keep the value that is not None)."""
    if isinstance(value, str):
        return public_text(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = public_text(k) if isinstance(k, str) else k
            if out.get(key) is None:
                out[key] = _public(v)
        return out
    if isinstance(value, list):
        return [_public(v) for v in value]
    return value


def create_app(
    db: str | Path | None = None,
    agents: Iterable[str] = (),
    record: str | Path | None = None,
    max_tables: int = 64,
    max_per_client: int = 16,
    idle_seconds: float = 3600.0,
    allowed_hosts: Iterable[str] = (),
) -> Starlette:
    """The app: play against the bots (`agents`: extra bot specs to offer), and watch the
    tournament or ladder of results database `db` (None: none), and the game record file
    `record` (None: none; a malformed one raises RecordError here, in one line).

    At most `max_tables` open tables, `max_per_client` of them made from one client address;
    a table unused for `idle_seconds` is closed. `allowed_hosts`: names besides localhost,
    127.0.0.1, [::1] and the listening address that the ``Host`` header may carry (``"*"``:
    any, for a server behind a proxy that checks it)."""
    choices: dict[str, AgentChoice] = agent_choices(agents)
    watch = Watch(db) if db is not None else None
    opened = served = None
    if record is not None:
        from fourhundred_env.game_record import read_record

        served = read_record(record)
        opened = record_json(served, Path(record).name)
    tables = Tables(max_tables, max_per_client, idle_seconds)
    reviews, hints = Reviews(), Hints()

    def _watch() -> Watch:
        if watch is None:
            raise ApiError(
                404,
                "no results database is open: start the server with fourhundred serve --db PATH",
            )
        return watch

    def _table(request: Request) -> tuple[OpenTable, int]:
        """The request's table and its token's seat (404, 401, 403 refused)."""
        return tables.get_seat(request.path_params["table_id"], request.headers.get(TOKEN_HEADER))

    # -- play ----------------------------------------------------------------------------------
    async def options(request: Request) -> dict[str, Any]:
        return {
            "agents": [  # "spec" is the name to send: the public name, never the server's spec
                {
                    "spec": name,
                    "label": c.label,
                    "description": public_text(c.description),
                    "note": c.note,
                }
                for name, c in choices.items()
            ],
            "default_bot": default_bot(choices),
            "presets": sorted(PRESETS),
            "watch": watch is not None,
            "record": None if opened is None else opened["file"],
            "max_record_bytes": MAX_RECORD_UPLOAD,
        }

    async def create_table(request: Request) -> dict[str, Any]:
        body = await read_body(request)
        check_fields(body, ("seat", "partner", "right", "left", "rules", "seed", "name"))
        seat = int_field(body.get("seat"), "seat", 0, 3, default=0)
        default = default_bot(choices)
        specs = {r: text_field(body.get(r), r, default) for r in ("partner", "right", "left")}
        rules = text_field(body.get("rules"), "rules", "wiki")
        seed = None if body.get("seed") is None else int_field(body["seed"], "seed", 0, 2**31 - 1)
        name = None if body.get("name") is None else text_field(body["name"], "name")
        offset = {"right": 1, "partner": 2, "left": 3}
        invited = tuple(sorted((seat + offset[r]) % 4 for r, v in specs.items() if v == PERSON))
        table = tables.open(request.client.host if request.client else "", seat, invited)

        def make() -> tuple[PlaySession, dict[str, Any]]:
            session = new_session(
                seat, specs["partner"], specs["right"], specs["left"], rules, seed, choices,
                name,
            )  # fmt: skip
            with session.lock:
                return session, session.state()

        try:
            table.session, state = await tables.run(table, make)
        except BaseException:
            tables.close(table)
            raise
        answer: dict[str, Any] = {"id": table.table_id, "token": table.token, "state": state}
        if invited:  # the links the maker hands on: the token in the fragment, never sent
            answer["invites"] = [
                {"seat": s, "token": table.seat_tokens[s],
                 "link": f"/#join={table.table_id}.{table.seat_tokens[s]}"}
                for s in invited
            ]  # fmt: skip
        if seed is not None:  # the owner's own reproducible table: nothing secret in it
            answer["seed"] = seed
        return answer

    def _on_table(
        request: Request, change: Callable[[PlaySession, int], None] | None,
        since: int | None = None,
    ) -> Any:  # fmt: skip
        """Run `change` (None: nothing) on the request's table for its token's seat, answer
        the state that seat sees, with the frames after the first `since` moves (None: the
        moves this request made)."""
        table, seat = _table(request)
        session = table.session
        assert session is not None  # Tables.get answers only tables made

        def run() -> dict[str, Any]:
            with session.lock:
                before = session.moves if since is None else since
                if change is not None:
                    change(session, seat)
                return {"id": table.table_id, "state": session.state(seat, before)}

        return tables.run(table, run)

    async def table_state(request: Request) -> dict[str, Any]:
        if request.method == "DELETE":
            table, seat = _table(request)
            if seat != table.seat:
                raise ApiError(
                    403, f"table {table.table_id!r}: only its maker (S{table.seat}) may close it; "
                    "a person invited leaves by closing the page"
                )  # fmt: skip
            tables.close(table)
            return {"id": request.path_params["table_id"], "closed": True}
        q = request.query_params
        check_fields(q, ("since",))
        since = None if q.get("since") is None else int_field(q["since"], "since", 0, 10**6)
        return await _on_table(request, None, since)

    async def join(request: Request) -> dict[str, Any]:
        _table(request)  # 404/401/403 before the body is read
        body = await read_body(request)
        check_fields(body, ("name",))
        name = None if body.get("name") is None else text_field(body["name"], "name")
        return await _on_table(request, lambda s, seat: s.join(seat, name))

    async def act(request: Request) -> dict[str, Any]:
        _table(request)  # 404/401/403 before the body is read
        body = await read_body(request)
        check_fields(body, ("action", "seat", "moves"))
        action = text_field(body.get("action"), "action", ascii=True)  # "4", "redeal", "AH"
        seat = None if body.get("seat") is None else int_field(body["seat"], "seat", 0, 3)
        moves = None if body.get("moves") is None else int_field(body["moves"], "moves", 0, 10**6)
        return await _on_table(request, lambda s, by: s.act(action, seat=seat, moves=moves, by=by))

    async def deal(request: Request) -> dict[str, Any]:
        _table(request)
        check_fields(await read_body(request), ())
        return await _on_table(request, lambda s, by: s.deal())

    async def download_record(request: Request) -> Response:
        table, _ = _table(request)
        check_fields(request.query_params, ())
        session = table.session
        assert session is not None

        def run() -> tuple[str, str]:
            with session.lock:
                return table_record(session)

        name, text = await tables.run(table, run)
        return Response(
            text, media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )  # fmt: skip

    # -- watch ---------------------------------------------------------------------------------
    def _pair(w: Watch, value: Any) -> tuple[str, str] | None:
        if value in (None, ""):
            return None
        pairs = w.pairs()
        if not pairs:
            raise ApiError(404, "the database holds no finished games yet")
        return pairs[int_field(value, "pair", 0, len(pairs) - 1)]

    async def watch_summary(request: Request) -> dict[str, Any]:
        return _public(await run_in_threadpool(_watch().summary))

    async def watch_matches(request: Request) -> dict[str, Any]:
        w = _watch()
        q = request.query_params
        check_fields(q, ("pair", "sort", "min_bid", "offset", "limit"))
        sort = text_field(q.get("sort"), "sort", "match")
        if sort not in SORTS:
            raise ApiError(400, f"sort={sort!r}: expected one of {list(SORTS)}")
        pair = _pair(w, q.get("pair"))
        min_bid = int_field(q.get("min_bid"), "min_bid", 0, 13, default=0)
        offset = int_field(q.get("offset"), "offset", 0, 10**9, default=0)
        limit = int_field(q.get("limit"), "limit", 1, 500, default=50)
        page = await run_in_threadpool(w.matches, pair, sort, min_bid, offset, limit)
        index = {p: k for k, p in enumerate(w.pairs())}
        # each match names its pairing by index too: two specs may share a public name
        rows = [{**m, "pair": index.get((m["pair_a"], m["pair_b"]))} for m in page["matches"]]
        return _public({**page, "matches": rows})

    async def watch_match(request: Request) -> dict[str, Any]:
        w = _watch()
        q = request.query_params
        check_fields(q, ("pair", "match"))
        pair = _pair(w, q.get("pair"))
        if pair is None:
            raise ApiError(400, "pair is missing: expected the index of a pairing")
        match_id = int_field(q.get("match"), "match", 0, 2**62)
        result = await run_in_threadpool(w.match, pair, match_id)
        if result["twins"] == [None, None]:
            raise ApiError(
                404, public_text(f"no finished game of match {match_id} for {pair[0]} v {pair[1]}")
            )
        return _public(result)

    async def watch_ladder(request: Request) -> dict[str, Any]:
        w = _watch()
        check_fields(request.query_params, ())
        result = await run_in_threadpool(w.ladder)
        if result is None:
            raise ApiError(
                404, f"{w.path.name} is a tournament's database, not a ladder (fourhundred "
                "ladder add --db FILE makes one)"
            )  # fmt: skip
        return _public(result)

    async def open_record(request: Request) -> dict[str, Any]:
        body = await read_body(request, MAX_RECORD_UPLOAD, "a record of at most 1 MiB")
        check_fields(body, ("text", "name"))
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, f"text={show(text)}: expected the text of a record file")
        name = text_field(body.get("name"), "name", "record")

        def parse() -> dict[str, Any]:
            return record_json(read_upload(text), name)

        return {"game": _public(await run_in_threadpool(parse))}

    async def watch_record(request: Request) -> dict[str, Any]:
        check_fields(request.query_params, ())
        if opened is None:
            raise ApiError(
                404, "no record file is open: start the server with fourhundred serve --record "
                "FILE, or open one in Watch"
            )  # fmt: skip
        return {"game": _public(opened)}

    # -- wiring --------------------------------------------------------------------------------
    def api(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                answer = await handler(request)
                return answer if isinstance(answer, Response) else JSONResponse(answer)
            except ApiError as e:
                return error_response(e.status, e.message)  # about the request itself
            except OutOfTurnError as e:
                return error_response(409, public_text(str(e)))
            except IllegalMoveError as e:
                return error_response(422, public_text(str(e)))
            except FourHundredError as e:  # RequestError and the core's checks of input
                return error_response(400, public_text(str(e)))

        return endpoint

    async def index(request: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return error_response(404, f"no such page or API route: {request.url.path[:100]}")
        if exc.status_code == 405:
            return error_response(
                405, f"{request.method} is not allowed on {request.url.path[:100]}"
            )
        return error_response(exc.status_code, str(exc.detail))

    async def server_error(request: Request, exc: Exception) -> Response:
        return error_response(500, f"internal error ({type(exc).__name__}); see the server's log")

    routes = [
        Route("/", index),
        Route("/api/options", api(options)),
        Route("/api/tables", api(create_table), methods=["POST"]),
        Route("/api/tables/{table_id}", api(table_state), methods=["GET", "DELETE"]),
        Route("/api/tables/{table_id}/join", api(join), methods=["POST"]),
        Route("/api/tables/{table_id}/act", api(act), methods=["POST"]),
        Route("/api/tables/{table_id}/deal", api(deal), methods=["POST"]),
        Route("/api/tables/{table_id}/record", api(download_record)),
        Route("/api/watch", api(watch_summary)),
        Route("/api/watch/matches", api(watch_matches)),
        Route("/api/watch/match", api(watch_match)),
        Route("/api/watch/ladder", api(watch_ladder)),
        Route("/api/watch/record", api(watch_record)),
        Route("/api/records", api(open_record), methods=["POST"]),
        *review_routes(api, tables, reviews, hints, _watch, served),  # fourhundred_web.review
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, allowed_hosts=tuple(allowed_hosts))],
        exception_handlers={HTTPException: http_error, 500: server_error},
    )
    app.state.tables = tables  # for tests: what the server holds (the browser never sees it)
    app.state.reviews, app.state.hints = reviews, hints  # for tests: their valuers
    return app
