"""What every route of the web server shares: the :class:`Server`, held on the app as
``app.state.server`` and reached from a request by :func:`server`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from fourhundred_env.game_records.files import GameRecord
from fourhundred_web.bots import AgentChoice
from fourhundred_web.hints import Hints
from fourhundred_web.requests import ApiError
from fourhundred_web.reviews import Reviews
from fourhundred_web.tables import TOKEN_HEADER, OpenTable, Tables
from fourhundred_web.watch import Watch

__all__ = ["Server", "server"]


@dataclass(frozen=True, eq=False)
class Server:
    """The server's state, made once by :func:`fourhundred_web.app.create_app`."""

    choices: dict[str, AgentChoice]
    """The bots a person may choose, by public name, strongest first."""
    watch: Watch | None
    """The results database given to the server (None: none)."""
    served: GameRecord | None
    """The record file the server was started with (None: none)."""
    opened: dict[str, Any] | None
    """`served` as the viewer shows it (``record_json``; None: none)."""
    tables: Tables
    """The open Play tables."""
    reviews: Reviews
    """The review jobs."""
    hints: Hints
    """The hints' valuer."""

    def open_watch(self) -> Watch:
        """`watch`; ApiError 404 when the server has no database."""
        if self.watch is None:
            raise ApiError(
                404,
                "no results database is open: start the server with fourhundred serve --db PATH",
            )
        return self.watch

    def table_seat(self, request: Request) -> tuple[OpenTable, int]:
        """The request's table and its token's seat (404, 401, 403 refused)."""
        return self.tables.get_seat(
            request.path_params["table_id"], request.headers.get(TOKEN_HEADER)
        )


def server(request: Request) -> Server:
    """The server that `request` came to."""
    state: Server = request.app.state.server
    return state
