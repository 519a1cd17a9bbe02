"""The web server's open tables: each with a token per person's seat, the client that made
it, its own thread (a slow bot never holds the event loop) and a cap on the requests waiting
on it; caps per client and per server that refuse a new table rather than close another.

A token is 192 bits from :mod:`secrets`, one per seat a person holds: it answers for that
seat alone (:meth:`Tables.get_seat`), compared in constant time with every seat's token."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from fourhundred_web.play import PlaySession
from fourhundred_web.requests import ApiError, show

MAX_PENDING = 8
"""Requests that may wait on one table at once (a page sends one at a time; a table has up
to four people's pages)."""
TOKEN_HEADER = "X-Table-Token"
"""The header carrying a table's token on every call after its creation."""
T = TypeVar("T")


@dataclass(eq=False)
class OpenTable:
    """One open table: its session (None while it is being made), the token of its maker's
    seat (`token`, at `seat`) and of every seat a person holds (`seat_tokens`, by seat), the
    client address that made it, its own thread, when it was last used and how many
    requests wait."""

    table_id: str
    token: str
    client: str
    executor: ThreadPoolExecutor
    used: float
    session: PlaySession | None = None
    pending: int = 0
    seat: int = 0
    seat_tokens: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.seat_tokens.setdefault(self.seat, self.token)


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
        self._tables: dict[str, OpenTable] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    def open(self, client: str, seat: int = 0, invited: tuple[int, ...] = ()) -> OpenTable:
        """A new table's slot for `client`, with a token for its maker's `seat` and one for
        each seat in `invited`; 429/503 when the client or the server holds enough."""
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
            table = OpenTable(
                table_id, secrets.token_urlsafe(24), client,
                ThreadPoolExecutor(1, thread_name_prefix=f"table-{table_id}"), self.clock(),
                seat=seat,
            )  # fmt: skip
            for s in invited:
                table.seat_tokens[s] = secrets.token_urlsafe(24)
            self._tables[table_id] = table
            return table

    def get(self, table_id: str, token: str | None) -> OpenTable:
        """The table `table_id` if `token` is the token of one of its seats (404, 401, 403
        otherwise)."""
        return self.get_seat(table_id, token)[0]

    def get_seat(self, table_id: str, token: str | None) -> tuple[OpenTable, int]:
        """(table `table_id`, the seat `token` is the token of): 404 for a table that is not
        open, 401 without a token, 403 for a token of none of its seats."""
        with self._lock:
            self._close_idle()
            table = self._tables.get(table_id)
            if table is None or table.session is None:
                raise ApiError(
                    404, f"unknown table {show(table_id)}: it never existed or was closed "
                    "(start a new game)"
                )  # fmt: skip
            if token is None:
                raise ApiError(
                    401, f"table {table_id!r}: no {TOKEN_HEADER} header: send the token the "
                    "table was created with"
                )  # fmt: skip
            given = token.encode("latin-1")
            # every seat's token is compared, whichever matches: the time taken tells nothing
            matches = [s for s, t in table.seat_tokens.items()
                       if secrets.compare_digest(given, t.encode())]  # fmt: skip
            if not matches:
                raise ApiError(
                    403, f"table {table_id!r}: wrong {TOKEN_HEADER}: a table answers only the "
                    "tokens of its people's seats (the page that made it and its join links)"
                )  # fmt: skip
            table.used = self.clock()
            return table, matches[0]

    def close(self, table: OpenTable) -> None:
        """Forget `table` and shut its thread down, cancelling the work still waiting."""
        with self._lock:
            self._drop(table)

    def _drop(self, table: OpenTable) -> None:
        if self._tables.get(table.table_id) is table:
            del self._tables[table.table_id]
        table.executor.shutdown(wait=False, cancel_futures=True)

    def _close_idle(self) -> None:
        now = self.clock()
        for table in [t for t in self._tables.values() if t.pending == 0
                      and now - t.used > self.idle_seconds]:  # fmt: skip
            self._drop(table)

    async def run(self, table: OpenTable, work: Callable[[], T]) -> T:
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
