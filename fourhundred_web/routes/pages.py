"""The page (package data: ``static/``) and what it offers: ``GET /``, ``/static/*`` and
``GET /api/options``."""

from __future__ import annotations

from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from fourhundred_env.rules import PRESETS
from fourhundred_web.answers import api
from fourhundred_web.bots import default_bot, public_text
from fourhundred_web.records import MAX_RECORD_UPLOAD
from fourhundred_web.server import server

__all__ = ["ROUTES", "STATIC", "index", "options"]

STATIC = resources.files("fourhundred_web") / "static"


async def index(request: Request) -> Response:
    """The page."""
    return FileResponse(str(STATIC / "index.html"), media_type="text/html")


async def options(request: Request) -> dict[str, Any]:
    """The bots to choose from, the rules presets, and what the server has open."""
    s = server(request)
    return {
        "agents": [  # "spec" is the name to send: the public name, never the server's spec
            {
                "spec": name,
                "label": c.label,
                "description": public_text(c.description),
                "note": c.note,
            }
            for name, c in s.choices.items()
        ],
        "default_bot": default_bot(s.choices),
        "presets": sorted(PRESETS),
        "watch": s.watch is not None,
        "record": None if s.opened is None else s.opened["file"],
        "max_record_bytes": MAX_RECORD_UPLOAD,
    }


ROUTES: list[BaseRoute] = [
    Route("/", index),
    Route("/api/options", api(options)),
    Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
]
