"""The web server: a Starlette app serving the page (package data) and a JSON API.

Routes (every answer is JSON; a refused request is ``{"error": "..."}`` with a 4xx status and
changes nothing)::

    GET  /                         the page (static/index.html); /static/* its CSS and JS
    GET  /api/options              bots to choose from, rules presets, whether a database is open
    POST /api/tables               {"seat", "partner", "right", "left", "rules", "seed"?}: a new
                                   table, first hand dealt; answers {"id", "state"}
    GET  /api/tables/{id}          the table as the person sees it
    POST /api/tables/{id}/act      {"action": "4" | "redeal" | "AH", "seat"?, "moves"?}
    POST /api/tables/{id}/deal     the next hand
    GET  /api/watch                the tournament of the database given to the server
    GET  /api/watch/matches        ?pair=I&sort=S&min_bid=N&offset=N&limit=N
    GET  /api/watch/match          ?pair=I&match=M: both twins, replayed where exact

Statuses: 400 a malformed request (not JSON, wrong fields or types, a bot or preset the
server does not offer), 404 an unknown table, game or route, 409 out of turn (a hand in
progress, the match over, a stale page), 413 a body over 64 KiB, 422 an illegal action.

Tables live in memory, each behind its own lock (several tabs play separate tables at
once); the oldest idle ones go when there are more than `max_tables`. The only file the
server reads besides its own package data is the results database it was started with (and
the checkpoints of the bots it offers or that database names); a browser names bots and
games, never paths.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import PRESETS
from fourhundred_web.play import (
    AgentChoice,
    IllegalMoveError,
    OutOfTurnError,
    PlaySession,
    agent_choices,
    default_bot,
    new_session,
)
from fourhundred_web.watch import SORTS, Watch

__all__ = ["MAX_BODY", "create_app"]

MAX_BODY = 64 * 1024
"""Largest request body accepted (bytes); the API's bodies are a few dozen."""
STATIC = resources.files("fourhundred_web") / "static"


class ApiError(Exception):
    """A refused request: its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Tables:
    """The open tables by id, at most `capacity` (the least recently used go first)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._tables: OrderedDict[str, PlaySession] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session: PlaySession) -> str:
        table_id = secrets.token_urlsafe(9)
        with self._lock:
            self._tables[table_id] = session
            while len(self._tables) > self.capacity:
                self._tables.popitem(last=False)
        return table_id

    def get(self, table_id: str) -> PlaySession:
        with self._lock:
            session = self._tables.get(table_id)
            if session is None:
                raise ApiError(
                    404, f"unknown table {table_id!r}: it never existed or was closed (start a "
                    "new game)"
                )  # fmt: skip
            self._tables.move_to_end(table_id)
            return session


# -- reading requests --------------------------------------------------------------------------
async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object (400 if it is not one, 413 if too large)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise ApiError(413, f"request body over {MAX_BODY} bytes: expected a small JSON object")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(413, f"request body over {MAX_BODY} bytes: expected a small JSON object")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"malformed JSON in the request body ({e})") from None
    if not isinstance(value, dict):
        raise ApiError(
            400, f"expected a JSON object in the request body, got {type(value).__name__}"
        )
    return value


def _fields(body: Mapping[str, Any], allowed: Iterable[str]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {unknown}: expected some of {sorted(allowed)}")


def _int(value: Any, name: str, low: int, high: int, default: int | None = None) -> int:
    """An integer field in [low, high] (JSON numbers and, for query strings, digit text)."""
    if value is None and default is not None:
        return default
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ApiError(400, f"{name}={value!r}: expected an integer from {low} to {high}")
    return value


def _text(value: Any, name: str, default: str | None = None) -> str:
    if value is None and default is not None:
        return default
    if not isinstance(value, str) or not value or len(value) > 200:
        raise ApiError(400, f"{name}={value!r}: expected text")
    return value


def create_app(
    db: str | Path | None = None,
    agents: Iterable[str] = (),
    max_tables: int = 64,
) -> Starlette:
    """The app: play against the bots (`agents`: extra bot specs to offer), and watch the
    tournament of results database `db` (None: no Watch view)."""
    choices: dict[str, AgentChoice] = agent_choices(agents)
    watch = Watch(db) if db is not None else None
    tables = Tables(max_tables)

    def _watch() -> Watch:
        if watch is None:
            raise ApiError(
                404,
                "no results database is open: start the server with fourhundred serve --db PATH",
            )
        return watch

    # -- play ----------------------------------------------------------------------------------
    async def options(request: Request) -> dict[str, Any]:
        return {
            "agents": [
                {"spec": c.spec, "label": c.label, "description": c.description}
                for c in choices.values()
            ],
            "default_bot": default_bot(choices),
            "presets": sorted(PRESETS),
            "watch": watch is not None,
        }

    async def create_table(request: Request) -> dict[str, Any]:
        body = await _body(request)
        _fields(body, ("seat", "partner", "right", "left", "rules", "seed"))
        seat = _int(body.get("seat"), "seat", 0, 3, default=0)
        default = default_bot(choices)
        specs = {r: _text(body.get(r), r, default) for r in ("partner", "right", "left")}
        rules = _text(body.get("rules"), "rules", "wiki")
        seed = body.get("seed")
        seed = secrets.randbelow(2**31) if seed is None else _int(seed, "seed", 0, 2**31 - 1)
        session = await run_in_threadpool(
            new_session, seat, specs["partner"], specs["right"], specs["left"], rules, seed,
            choices,
        )  # fmt: skip
        table_id = tables.add(session)
        with session.lock:
            return {"id": table_id, "seed": seed, "state": session.state()}

    async def table_state(request: Request) -> dict[str, Any]:
        session = tables.get(request.path_params["table_id"])
        with session.lock:
            return {"id": request.path_params["table_id"], "state": session.state()}

    async def act(request: Request) -> dict[str, Any]:
        session = tables.get(request.path_params["table_id"])
        body = await _body(request)
        _fields(body, ("action", "seat", "moves"))
        action = _text(body.get("action"), "action")
        seat = None if body.get("seat") is None else _int(body["seat"], "seat", 0, 3)
        moves = None if body.get("moves") is None else _int(body["moves"], "moves", 0, 10**6)

        def run() -> dict[str, Any]:
            with session.lock:
                session.act(action, seat=seat, moves=moves)
                return session.state()

        return {"id": request.path_params["table_id"], "state": await run_in_threadpool(run)}

    async def deal(request: Request) -> dict[str, Any]:
        session = tables.get(request.path_params["table_id"])
        _fields(await _body(request), ())

        def run() -> dict[str, Any]:
            with session.lock:
                session.deal()
                return session.state()

        return {"id": request.path_params["table_id"], "state": await run_in_threadpool(run)}

    # -- watch ---------------------------------------------------------------------------------
    def _pair(w: Watch, value: Any) -> tuple[str, str] | None:
        if value in (None, ""):
            return None
        pairs = w.pairs()
        if not pairs:
            raise ApiError(404, "the database holds no finished games yet")
        return pairs[_int(value, "pair", 0, len(pairs) - 1)]

    async def watch_summary(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(_watch().summary)

    async def watch_matches(request: Request) -> dict[str, Any]:
        w = _watch()
        q = request.query_params
        _fields(q, ("pair", "sort", "min_bid", "offset", "limit"))
        sort = _text(q.get("sort"), "sort", "match")
        if sort not in SORTS:
            raise ApiError(400, f"sort={sort!r}: expected one of {list(SORTS)}")
        pair = _pair(w, q.get("pair"))
        min_bid = _int(q.get("min_bid"), "min_bid", 0, 13, default=0)
        offset = _int(q.get("offset"), "offset", 0, 10**9, default=0)
        limit = _int(q.get("limit"), "limit", 1, 500, default=50)
        return await run_in_threadpool(w.matches, pair, sort, min_bid, offset, limit)

    async def watch_match(request: Request) -> dict[str, Any]:
        w = _watch()
        q = request.query_params
        _fields(q, ("pair", "match"))
        pair = _pair(w, q.get("pair"))
        if pair is None:
            raise ApiError(400, "pair is missing: expected the index of a pairing")
        match_id = _int(q.get("match"), "match", 0, 2**62)
        result = await run_in_threadpool(w.match, pair, match_id)
        if result["twins"] == [None, None]:
            raise ApiError(404, f"no finished game of match {match_id} for {pair[0]} v {pair[1]}")
        return result

    # -- wiring --------------------------------------------------------------------------------
    def api(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except ApiError as e:
                return _error(e.status, e.message)
            except OutOfTurnError as e:
                return _error(409, str(e))
            except IllegalMoveError as e:
                return _error(422, str(e))
            except FourHundredError as e:  # RequestError and the core's checks of input
                return _error(400, str(e))

        return endpoint

    async def index(request: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return _error(404, f"no such page or API route: {request.url.path}")
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    async def server_error(request: Request, exc: Exception) -> Response:
        return _error(500, f"internal error ({type(exc).__name__}); see the server's log")

    routes = [
        Route("/", index),
        Route("/api/options", api(options)),
        Route("/api/tables", api(create_table), methods=["POST"]),
        Route("/api/tables/{table_id}", api(table_state)),
        Route("/api/tables/{table_id}/act", api(act), methods=["POST"]),
        Route("/api/tables/{table_id}/deal", api(deal), methods=["POST"]),
        Route("/api/watch", api(watch_summary)),
        Route("/api/watch/matches", api(watch_matches)),
        Route("/api/watch/match", api(watch_match)),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, 500: server_error},
    )
