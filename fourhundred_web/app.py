"""The web server: a Starlette app serving the page (package data) and a JSON API.

Routes (every answer is JSON; a refused request is ``{"error": "..."}`` with a 4xx status and
changes nothing)::

    GET    /                       the page (static/index.html); /static/* its CSS and JS
    GET    /api/options            bots to choose from, rules presets, whether a database is open
    POST   /api/tables             {"seat", "partner", "right", "left", "rules", "seed"?}: a new
                                   table, first hand dealt; answers {"id", "token", "state"}
                                   (and "seed" when the request gave one)
    GET    /api/tables/{id}        the table as the person sees it
    POST   /api/tables/{id}/act    {"action": "4" | "redeal" | "AH", "seat"?, "moves"?}
    POST   /api/tables/{id}/deal   the next hand
    DELETE /api/tables/{id}        close the table
    GET    /api/watch              the tournament of the database given to the server
    GET    /api/watch/matches      ?pair=I&sort=S&min_bid=N&offset=N&limit=N
    GET    /api/watch/match        ?pair=I&match=M: both twins, replayed where exact

Statuses: 400 a malformed request (not JSON, wrong fields or types, a bot or preset the
server does not offer) or a foreign ``Host``, 401/403 a table's token missing/wrong, 403 a
cross-origin write, 404 an unknown table, game or route, 409 out of turn (a hand in
progress, the match over, a stale page), 413 a body over 64 KiB, 415 a body that is not
``application/json``, 422 an illegal action, 429 too many tables for one client (or too many
requests waiting on one table), 503 the server full.

Fair and safe (issue 40):

- **Secret deals.** Unless the page asks for a seed, a table's deal and its bots' seeds are
  secrets the server draws (:func:`fourhundred_web.play.new_session`) and never sends; the
  browser gets the person's view only. A seed asked for is a reproducible table for the
  person who chose it, and is answered back to them.
- **Tokens.** Creating a table answers a token (``secrets``); every later call on that table
  sends it in the ``X-Table-Token`` header. A custom header also means no other site's page
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

The only file the server reads besides its own package data is the results database it was
started with (and the checkpoints of the bots it offers or that database names); a browser
names bots and games, never paths.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

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

__all__ = ["LOCAL_HOSTS", "MAX_BODY", "TOKEN_HEADER", "create_app"]

MAX_BODY = 64 * 1024
"""Largest request body accepted (bytes); the API's bodies are a few dozen."""
MAX_DIGITS = 30
"""Longest integer accepted in a JSON body (digits); every number of the API is far shorter."""
MAX_PENDING = 4
"""Requests that may wait on one table at once (one page sends one at a time)."""
TOKEN_HEADER = "X-Table-Token"
"""The header carrying a table's token on every call after its creation."""
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
"""Names the server always answers to (the ``Host`` header, without its port)."""
STATIC = resources.files("fourhundred_web") / "static"
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_INTEGER = re.compile(r"-?[0-9]{1,19}", re.ASCII)
T = TypeVar("T")


class ApiError(Exception):
    """A refused request: its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    # one line of text that encodes whatever the request held (a lone surrogate, a newline)
    line = message.encode("utf-8", "backslashreplace").decode().replace("\n", " ")
    return JSONResponse({"error": line}, status_code=status)


def _show(value: Any, width: int = 40) -> str:
    """`value` for an error message: short, one line, whatever the request held."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**width:
        return f"a {len(str(abs(value)))}-digit number"
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 3]}..."


# -- the tables --------------------------------------------------------------------------------
@dataclass(eq=False)
class _Table:
    """One open table: its session (None while it is being made), its token, the client
    address that made it, its own thread, when it was last used and how many requests wait."""

    table_id: str
    token: str
    client: str
    executor: ThreadPoolExecutor
    used: float
    session: PlaySession | None = None
    pending: int = 0


class Tables:
    """The open tables by id: at most `capacity`, at most `per_client` for one client
    address; a table unused for `idle_seconds` is closed. Used from the event loop only,
    except for the work `run` hands to a table's own thread."""

    def __init__(
        self,
        capacity: int,
        per_client: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.per_client = per_client
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._tables: dict[str, _Table] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    def open(self, client: str) -> _Table:
        """A new table's slot for `client`, or 429/503 when it or the server holds enough."""
        with self._lock:
            self._close_idle()
            mine = sum(t.client == client for t in self._tables.values())
            if mine >= self.per_client:
                raise ApiError(
                    429, f"this client has {mine} open tables, the most one may hold: finish "
                    "or close one (New match closes the table shown)"
                )  # fmt: skip
            if len(self._tables) >= self.capacity:
                raise ApiError(
                    503, f"the server holds {len(self._tables)} tables, the most it keeps: try "
                    "again later"
                )  # fmt: skip
            table_id = secrets.token_urlsafe(9)
            table = _Table(
                table_id, secrets.token_urlsafe(24), client,
                ThreadPoolExecutor(1, thread_name_prefix=f"table-{table_id}"), self.clock(),
            )  # fmt: skip
            self._tables[table_id] = table
            return table

    def get(self, table_id: str, token: str | None) -> _Table:
        """The table `table_id` if `token` is its token (404, 401, 403 otherwise)."""
        with self._lock:
            self._close_idle()
            table = self._tables.get(table_id)
            if table is None or table.session is None:
                raise ApiError(
                    404, f"unknown table {_show(table_id)}: it never existed or was closed "
                    "(start a new game)"
                )  # fmt: skip
            if token is None:
                raise ApiError(
                    401, f"table {table_id!r}: no {TOKEN_HEADER} header: send the token the "
                    "table was created with"
                )  # fmt: skip
            if not secrets.compare_digest(token.encode("latin-1"), table.token.encode()):
                raise ApiError(
                    403, f"table {table_id!r}: wrong {TOKEN_HEADER}: a table answers only the "
                    "page that created it"
                )  # fmt: skip
            table.used = self.clock()
            return table

    def close(self, table: _Table) -> None:
        with self._lock:
            self._drop(table)

    def _drop(self, table: _Table) -> None:
        if self._tables.get(table.table_id) is table:
            del self._tables[table.table_id]
        table.executor.shutdown(wait=False, cancel_futures=True)

    def _close_idle(self) -> None:
        now = self.clock()
        for table in [t for t in self._tables.values() if t.pending == 0
                      and now - t.used > self.idle_seconds]:  # fmt: skip
            self._drop(table)

    async def run(self, table: _Table, work: Callable[[], T]) -> T:
        """`work()` on the table's own thread, after the requests before it (429 if too
        many wait); the event loop only awaits it."""
        if table.pending >= MAX_PENDING:
            raise ApiError(
                429, f"table {table.table_id!r} is busy with {table.pending} earlier requests: "
                "wait for their answers"
            )  # fmt: skip
        table.pending += 1
        try:
            future = table.executor.submit(work)
        except RuntimeError:  # shut down: closed in the meantime
            table.pending -= 1
            raise ApiError(404, f"table {table.table_id!r} was closed (start a new game)") from None
        try:
            return await asyncio.wrap_future(future)
        finally:
            table.pending -= 1
            table.used = self.clock()


# -- who may ask ---------------------------------------------------------------------------------
def _host_name(host: str) -> str:
    """A ``Host`` header's name without its port, lower case (``[::1]:8400`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _listening_address(scope: Scope) -> str | None:
    """The IP address the connection came in on, if it is one (uvicorn's ``server``)."""
    server = scope.get("server")
    if not server or not isinstance(server[0], str):
        return None
    try:
        address = ipaddress.ip_address(server[0])
    except ValueError:
        return None
    return None if address.is_unspecified else str(address)


class _Guard:
    """ASGI middleware: a foreign ``Host`` (400) and a cross-origin write (403) are refused
    before the app sees them."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {_host_name(h) for h in (*LOCAL_HOSTS, *allowed_hosts)}

    def problem(self, scope: Scope) -> tuple[int, str] | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is None:
            return 400, "no Host header: expected the address of this server"
        name = _host_name(host)
        if (
            "*" not in self.allowed
            and name not in self.allowed
            and (name != _listening_address(scope))
        ):
            return 400, (
                f"Host {_show(host)} is not a name of this server: it answers to "
                f"{sorted(self.allowed)} and the address it listens on (fourhundred_web "
                "create_app(allowed_hosts=...) adds names)"
            )
        if scope.get("method", "GET") in _SAFE_METHODS:
            return None
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return 403, f"a {site} request may not change tables: use this server's own page"
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).netloc.lower() != host.strip().lower():
            return 403, (
                f"Origin {_show(origin)} is not this server ({_show(host)}): a page of another "
                "site may not change tables"
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = self.problem(scope)
            if problem is not None:
                await _error(*problem)(scope, receive, send)
                return
        await self.app(scope, receive, send)


# -- reading requests --------------------------------------------------------------------------
def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ApiError(
            400, f"a number of {len(text.lstrip('-'))} digits in the request body: expected at "
            f"most {MAX_DIGITS}"
        )  # fmt: skip
    return int(text)


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object: 413 past MAX_BODY (counted while reading), 415 if it is not
    ``application/json``, 400 if it is not one JSON object. An empty body is ``{}``."""
    too_big = f"request body over {MAX_BODY} bytes: expected a small JSON object"
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise ApiError(413, too_big)
    content_type = request.headers.get("content-type")
    media = None if content_type is None else content_type.split(";")[0].strip().lower()
    if media is not None and media != "application/json":
        raise ApiError(415, f"Content-Type {_show(content_type)}: expected application/json")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise ApiError(413, too_big)
            chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError(400, "the request body was cut off") from None
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    if media is None:
        raise ApiError(415, "a request body without Content-Type: expected application/json")
    try:
        value = json.loads(raw, parse_int=_json_int)
    except RecursionError:
        raise ApiError(400, "the JSON in the request body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"malformed JSON in the request body ({_show(str(e), 80)})") from None
    if not isinstance(value, dict):
        raise ApiError(
            400, f"expected a JSON object in the request body, got {type(value).__name__}"
        )
    return value


def _fields(body: Mapping[str, Any], allowed: Iterable[str]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        shown = [_show(k, 20) for k in unknown[:5]] + (["..."] if len(unknown) > 5 else [])
        raise ApiError(
            400, f"unknown field(s) [{', '.join(shown)}]: expected some of {sorted(allowed)}"
        )


def _int(value: Any, name: str, low: int, high: int, default: int | None = None) -> int:
    """An integer field in [low, high] (JSON numbers and, for query strings, digit text)."""
    if value is None and default is not None:
        return default
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ApiError(400, f"{name}={_show(value)}: expected an integer from {low} to {high}")
    return value


def _text(value: Any, name: str, default: str | None = None, ascii: bool = False) -> str:
    """A text field: printable, at most 200 characters (`ascii`: ASCII only)."""
    if value is None and default is not None:
        return default
    if (
        not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable()
        or (ascii and not value.isascii())
    ):  # fmt: skip
        kind = "text of ASCII characters" if ascii else "text"
        raise ApiError(400, f"{name}={_show(value)}: expected {kind}")
    return value


def create_app(
    db: str | Path | None = None,
    agents: Iterable[str] = (),
    max_tables: int = 64,
    max_per_client: int = 16,
    idle_seconds: float = 3600.0,
    allowed_hosts: Iterable[str] = (),
) -> Starlette:
    """The app: play against the bots (`agents`: extra bot specs to offer), and watch the
    tournament of results database `db` (None: no Watch view).

    At most `max_tables` open tables, `max_per_client` of them made from one client address;
    a table unused for `idle_seconds` is closed. `allowed_hosts`: names besides localhost,
    127.0.0.1, [::1] and the listening address that the ``Host`` header may carry (``"*"``:
    any, for a server behind a proxy that checks it)."""
    choices: dict[str, AgentChoice] = agent_choices(agents)
    watch = Watch(db) if db is not None else None
    tables = Tables(max_tables, max_per_client, idle_seconds)

    def _watch() -> Watch:
        if watch is None:
            raise ApiError(
                404,
                "no results database is open: start the server with fourhundred serve --db PATH",
            )
        return watch

    def _table(request: Request) -> _Table:
        return tables.get(request.path_params["table_id"], request.headers.get(TOKEN_HEADER))

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
        seed = None if body.get("seed") is None else _int(body["seed"], "seed", 0, 2**31 - 1)
        table = tables.open(request.client.host if request.client else "")

        def make() -> tuple[PlaySession, dict[str, Any]]:
            session = new_session(
                seat, specs["partner"], specs["right"], specs["left"], rules, seed, choices
            )
            with session.lock:
                return session, session.state()

        try:
            table.session, state = await tables.run(table, make)
        except BaseException:
            tables.close(table)
            raise
        answer = {"id": table.table_id, "token": table.token, "state": state}
        if seed is not None:  # the owner's own reproducible table: nothing secret in it
            answer["seed"] = seed
        return answer

    def _on_table(request: Request, change: Callable[[PlaySession], None] | None) -> Any:
        """Run `change` (None: nothing) on the request's table, answer its state."""
        table = _table(request)
        session = table.session
        assert session is not None  # Tables.get answers only tables made

        def run() -> dict[str, Any]:
            with session.lock:
                if change is not None:
                    change(session)
                return {"id": table.table_id, "state": session.state()}

        return tables.run(table, run)

    async def table_state(request: Request) -> dict[str, Any]:
        if request.method == "DELETE":
            tables.close(_table(request))
            return {"id": request.path_params["table_id"], "closed": True}
        return await _on_table(request, None)

    async def act(request: Request) -> dict[str, Any]:
        _table(request)  # 404/401/403 before the body is read
        body = await _body(request)
        _fields(body, ("action", "seat", "moves"))
        action = _text(body.get("action"), "action", ascii=True)  # "4", "redeal", "AH"
        seat = None if body.get("seat") is None else _int(body["seat"], "seat", 0, 3)
        moves = None if body.get("moves") is None else _int(body["moves"], "moves", 0, 10**6)
        return await _on_table(request, lambda s: s.act(action, seat=seat, moves=moves))

    async def deal(request: Request) -> dict[str, Any]:
        _table(request)
        _fields(await _body(request), ())
        return await _on_table(request, lambda s: s.deal())

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
            return _error(404, f"no such page or API route: {request.url.path[:100]}")
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path[:100]}")
        return _error(exc.status_code, str(exc.detail))

    async def server_error(request: Request, exc: Exception) -> Response:
        return _error(500, f"internal error ({type(exc).__name__}); see the server's log")

    routes = [
        Route("/", index),
        Route("/api/options", api(options)),
        Route("/api/tables", api(create_table), methods=["POST"]),
        Route("/api/tables/{table_id}", api(table_state), methods=["GET", "DELETE"]),
        Route("/api/tables/{table_id}/act", api(act), methods=["POST"]),
        Route("/api/tables/{table_id}/deal", api(deal), methods=["POST"]),
        Route("/api/watch", api(watch_summary)),
        Route("/api/watch/matches", api(watch_matches)),
        Route("/api/watch/match", api(watch_match)),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(_Guard, allowed_hosts=tuple(allowed_hosts))],
        exception_handlers={HTTPException: http_error, 500: server_error},
    )
    app.state.tables = tables  # for tests: what the server holds (the browser never sees it)
    return app
