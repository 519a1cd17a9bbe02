"""Who may ask: the ``Host`` names the server answers to (no DNS rebinding) and the refusal
of cross-origin writes, as ASGI middleware in front of the app."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from fourhundred_web.requests import error_response, show

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
"""Names the server always answers to (the ``Host`` header, without its port)."""
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_name(host: str) -> str:
    """A ``Host`` header's name without its port, lower case (``[::1]:8400`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def listening_address(scope: Scope) -> str | None:
    """The IP address the connection came in on, if it is one (uvicorn's ``server``)."""
    server = scope.get("server")
    if not server or not isinstance(server[0], str):
        return None
    try:
        address = ipaddress.ip_address(server[0])
    except ValueError:
        return None
    return None if address.is_unspecified else str(address)


class Guard:
    """ASGI middleware: a foreign ``Host`` (400) and a cross-origin write (403) are refused
    before the app sees them."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {host_name(h) for h in (*LOCAL_HOSTS, *allowed_hosts)}

    def problem(self, scope: Scope) -> tuple[int, str] | None:
        """(status, message) refusing the request in `scope`: 400 for a missing or foreign
        ``Host``, 403 for a cross-origin write; None if it may pass."""
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is None:
            return 400, "no Host header: expected the address of this server"
        name = host_name(host)
        if (
            "*" not in self.allowed
            and name not in self.allowed
            and (name != listening_address(scope))
        ):
            return 400, (
                f"Host {show(host)} is not a name of this server: it answers to "
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
                f"Origin {show(origin)} is not this server ({show(host)}): a page of another "
                "site may not change tables"
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a refused HTTP request with its error; pass everything else to the app."""
        if scope["type"] == "http":
            problem = self.problem(scope)
            if problem is not None:
                await error_response(*problem)(scope, receive, send)
                return
        await self.app(scope, receive, send)
