"""How a route's answer or refusal becomes the server's response: :func:`api` wraps every
handler of the JSON API, :data:`EXCEPTION_HANDLERS` answer Starlette's own refusals (no such
route, a method not allowed, a crash) as the same one-line JSON errors, and
:func:`public_json` cuts the paths out of an answer's text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from fourhundred_env.errors import FourHundredError
from fourhundred_web.bots import public_text
from fourhundred_web.play import IllegalMoveError, OutOfTurnError
from fourhundred_web.requests import ApiError, error_response

__all__ = ["EXCEPTION_HANDLERS", "Handler", "api", "public_json"]

Handler = Callable[[Request], Awaitable[Any]]
"""A route's handler: its answer is JSON data or a Response."""


def api(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """`handler` as an endpoint: its answer as JSON (a Response as it is), and its refusals as
    ``{"error"}`` with their status (ApiError's own, 409 out of turn, 422 an illegal action,
    400 any other FourHundredError), paths cut to file names."""

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


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error_response(404, f"no such page or API route: {request.url.path[:100]}")
    if exc.status_code == 405:
        return error_response(405, f"{request.method} is not allowed on {request.url.path[:100]}")
    return error_response(exc.status_code, str(exc.detail))


async def _server_error(request: Request, exc: Exception) -> Response:
    return error_response(500, f"internal error ({type(exc).__name__}); see the server's log")


EXCEPTION_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    HTTPException: _http_error,
    500: _server_error,
}
"""The app's answers to Starlette's refusals and to a crash."""


def public_json(value: Any) -> Any:
    """`value` (JSON data) with every string's file paths cut to file names (public_text),
    keys too (two keys cut to one name keep the value that is not None)."""
    if isinstance(value, str):
        return public_text(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = public_text(k) if isinstance(k, str) else k
            if out.get(key) is None:
                out[key] = public_json(v)
        return out
    if isinstance(value, list):
        return [public_json(v) for v in value]
    return value
