"""The web server: a Starlette app serving the page (package data) and a JSON API, its
handlers in :mod:`fourhundred_web.routes` (one module per concern), the state they share a
:class:`fourhundred_web.server.Server` on ``app.state.server``.

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
                                   engine analysis: fourhundred_web.routes.analysis

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

from collections.abc import Iterable
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware

from fourhundred_env.game_records.files import read_record
from fourhundred_web.answers import EXCEPTION_HANDLERS
from fourhundred_web.bots import agent_choices
from fourhundred_web.guard import LOCAL_HOSTS, Guard
from fourhundred_web.hints import Hints
from fourhundred_web.records import record_json
from fourhundred_web.requests import MAX_BODY
from fourhundred_web.reviews import Reviews
from fourhundred_web.routes import analysis, pages, records, tables, watch
from fourhundred_web.server import Server
from fourhundred_web.tables import TOKEN_HEADER, Tables
from fourhundred_web.watch import Watch

__all__ = ["LOCAL_HOSTS", "MAX_BODY", "TOKEN_HEADER", "create_app"]


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
    choices = agent_choices(agents)
    db_watch = Watch(db) if db is not None else None
    served = opened = None
    if record is not None:
        served = read_record(record)
        opened = record_json(served, Path(record).name)
    state = Server(
        choices=choices, watch=db_watch, served=served, opened=opened,
        tables=Tables(max_tables, max_per_client, idle_seconds), reviews=Reviews(), hints=Hints(),
    )  # fmt: skip
    routes = [*pages.ROUTES, *tables.ROUTES, *watch.ROUTES, *records.ROUTES, *analysis.ROUTES]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, allowed_hosts=tuple(allowed_hosts))],
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.server = state  # the handlers' (fourhundred_web.server.server) and the tests'
    return app
