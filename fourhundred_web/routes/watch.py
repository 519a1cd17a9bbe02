"""Watch's routes over the results database given to the server (:mod:`fourhundred_web.watch`):
``/api/watch`` (the tournament), ``/api/watch/matches``, ``/api/watch/match`` and
``/api/watch/ladder``. The database is read on a worker thread, never the event loop, and
every answer has its paths cut to file names."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from fourhundred_web.answers import api, public_json
from fourhundred_web.bots import public_text
from fourhundred_web.requests import ApiError, check_fields, int_field, text_field
from fourhundred_web.server import server
from fourhundred_web.watch import SORTS, Watch

__all__ = ["ROUTES", "pairing", "watch_ladder", "watch_match", "watch_matches", "watch_summary"]


def pairing(watch: Watch, value: Any) -> tuple[str, str]:
    """The pairing of `watch`'s database at index `value` (400 not an index of one, 404 no
    finished games yet)."""
    pairs = watch.pairs()
    if not pairs:
        raise ApiError(404, "the database holds no finished games yet")
    return pairs[int_field(value, "pair", 0, len(pairs) - 1)]


def _pair(watch: Watch, value: Any) -> tuple[str, str] | None:
    return None if value in (None, "") else pairing(watch, value)


async def watch_summary(request: Request) -> dict[str, Any]:
    """The tournament: its agents, pairings and standings."""
    return public_json(await run_in_threadpool(server(request).open_watch().summary))


async def watch_matches(request: Request) -> dict[str, Any]:
    """A page of matches, of one pairing or all, sorted and filtered."""
    w = server(request).open_watch()
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
    return public_json({**page, "matches": rows})


async def watch_match(request: Request) -> dict[str, Any]:
    """One duplicate match: both twins, replayed where exact."""
    w = server(request).open_watch()
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
    return public_json(result)


async def watch_ladder(request: Request) -> dict[str, Any]:
    """A ladder's ratings now and after each event, and its pairings (404 a tournament's
    database)."""
    w = server(request).open_watch()
    check_fields(request.query_params, ())
    result = await run_in_threadpool(w.ladder)
    if result is None:
        raise ApiError(
            404, f"{w.path.name} is a tournament's database, not a ladder (fourhundred "
            "ladder add --db FILE makes one)"
        )  # fmt: skip
    return public_json(result)


ROUTES: list[BaseRoute] = [
    Route("/api/watch", api(watch_summary)),
    Route("/api/watch/matches", api(watch_matches)),
    Route("/api/watch/match", api(watch_match)),
    Route("/api/watch/ladder", api(watch_ladder)),
]
