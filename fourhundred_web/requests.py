"""Reading the API's requests and answering its refusals: a JSON body read in chunks and
capped at `MAX_BODY`, integers capped at `MAX_DIGITS` digits, typed fields, and
:class:`ApiError`, a refused request's status and one-line message."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

MAX_BODY = 64 * 1024
"""Largest request body accepted (bytes); the API's bodies are a few dozen."""
MAX_DIGITS = 30
"""Longest integer accepted in a JSON body (digits); every number of the API is far shorter."""
_INTEGER = re.compile(r"-?[0-9]{1,19}", re.ASCII)


class ApiError(Exception):
    """A refused request: its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(status: int, message: str) -> JSONResponse:
    """The JSON response ``{"error": message}`` with `status`, the message made one line."""
    # one line of text that encodes whatever the request held (a lone surrogate, a newline)
    line = message.encode("utf-8", "backslashreplace").decode().replace("\n", " ")
    return JSONResponse({"error": line}, status_code=status)


def show(value: Any, width: int = 40) -> str:
    """`value` for an error message: short, one line, whatever the request held."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**width:
        return f"a {len(str(abs(value)))}-digit number"
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 3]}..."


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ApiError(
            400, f"a number of {len(text.lstrip('-'))} digits in the request body: expected at "
            f"most {MAX_DIGITS}"
        )  # fmt: skip
    return int(text)


async def read_body(
    request: Request, limit: int = MAX_BODY, expected: str = "a small JSON object"
) -> dict[str, Any]:
    """The request's JSON object: 413 past `limit` bytes (counted while reading; the message
    says what was `expected`), 415 if it is not ``application/json``, 400 if it is not one
    JSON object. An empty body is ``{}``."""
    too_big = f"request body over {limit} bytes: expected {expected}"
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise ApiError(413, too_big)
    content_type = request.headers.get("content-type")
    media = None if content_type is None else content_type.split(";")[0].strip().lower()
    if media is not None and media != "application/json":
        raise ApiError(415, f"Content-Type {show(content_type)}: expected application/json")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
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
        raise ApiError(400, f"malformed JSON in the request body ({show(str(e), 80)})") from None
    if not isinstance(value, dict):
        raise ApiError(
            400, f"expected a JSON object in the request body, got {type(value).__name__}"
        )
    return value


def check_fields(body: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """ApiError (400) naming the keys of `body` not in `allowed`, if there are any."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        shown = [show(k, 20) for k in unknown[:5]] + (["..."] if len(unknown) > 5 else [])
        raise ApiError(
            400, f"unknown field(s) [{', '.join(shown)}]: expected some of {sorted(allowed)}"
        )


def int_field(value: Any, name: str, low: int, high: int, default: int | None = None) -> int:
    """An integer field in [low, high] (JSON numbers and, for query strings, digit text)."""
    if value is None and default is not None:
        return default
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ApiError(400, f"{name}={show(value)}: expected an integer from {low} to {high}")
    return value


def text_field(value: Any, name: str, default: str | None = None, ascii: bool = False) -> str:
    """A text field: printable, at most 200 characters (`ascii`: ASCII only)."""
    if value is None and default is not None:
        return default
    if (
        not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable()
        or (ascii and not value.isascii())
    ):  # fmt: skip
        kind = "text of ASCII characters" if ascii else "text"
        raise ApiError(400, f"{name}={show(value)}: expected {kind}")
    return value
