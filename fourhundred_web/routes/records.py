"""The routes of a record file opened in Watch (:mod:`fourhundred_web.records`):
``POST /api/records`` (a record's text, uploaded) and ``GET /api/watch/record`` (the file the
server was started with)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from fourhundred_web.answers import api, public_json
from fourhundred_web.records import MAX_RECORD_UPLOAD, read_upload, record_json
from fourhundred_web.requests import ApiError, check_fields, read_body, show, text_field
from fourhundred_web.server import server

__all__ = ["ROUTES", "open_record", "watch_record"]


async def open_record(request: Request) -> dict[str, Any]:
    """A record file's text (or JSON) parsed and replayed for the viewer: {"game"}."""
    body = await read_body(request, MAX_RECORD_UPLOAD, "a record of at most 1 MiB")
    check_fields(body, ("text", "name"))
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, f"text={show(text)}: expected the text of a record file")
    name = text_field(body.get("name"), "name", "record")

    def parse() -> dict[str, Any]:
        return record_json(read_upload(text), name)

    return {"game": public_json(await run_in_threadpool(parse))}


async def watch_record(request: Request) -> dict[str, Any]:
    """The record file the server was started with (--record), for the viewer: {"game"}."""
    check_fields(request.query_params, ())
    opened = server(request).opened
    if opened is None:
        raise ApiError(
            404, "no record file is open: start the server with fourhundred serve --record "
            "FILE, or open one in Watch"
        )  # fmt: skip
    return {"game": public_json(opened)}


ROUTES: list[BaseRoute] = [
    Route("/api/watch/record", api(watch_record)),
    Route("/api/records", api(open_record), methods=["POST"]),
]
