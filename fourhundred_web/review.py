"""Engine analysis in the browser (:mod:`fourhundred_agents.analysis`): a game's review in Watch, and a
hint at a person's turn on the Play page.

A **review** values every decision of a game record (one hand, or the whole game) as
``fourhundred analyse`` does: each legal action's match-win chance for the deciding seat's
team, from that seat's view only, the best action, and what the action taken lost. It is
slow (seconds a hand), so it is a job: :class:`Reviews` runs one at a time on a thread of its
own (never the event loop), keeps at most `max_jobs` waiting or running, reports the
decisions valued so far (the page polls them and shows them as they come), and keeps the
finished ones by (record digest, agent, seed, hand): the same review asked for again is
answered at once. A job nobody has asked about for `abandon_seconds` is stopped.

What can be reviewed is what the page can already see: a record opened in Watch (uploaded,
or the server's ``--record``), a tournament game Watch replays card by card, and the
finished hands of a Play table (to the holder of one of its seats' tokens, as its download).

A **hint** is the values of the legal actions of the seat to play, computed from that seat's
:class:`~fourhundred_env.view.SeatView` alone, never from the other seats' cards, with light
settings (:data:`HINT_AGENT`) so that a person waits a second or two. It answers only the
token of the seat to play.

Routes (added to :func:`fourhundred_web.app.create_app`'s)::

    POST   /api/review              {source, "hand"?}: a review job; source is one of
                                    {"text"} a record's text, {"served": true} the
                                    server's --record, {"pair", "match", "twin"} a tournament
                                    game, {"table"} a Play table's finished hands (with its
                                    X-Table-Token; the answer adds the "game" for the viewer)
    GET    /api/review/{job}        ?since=N: its status, progress and decisions from the N-th
    DELETE /api/review/{job}        stop it
    GET    /api/tables/{id}/hint    ?moves=N&seat=S: the values of the person's legal actions
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import math
import queue
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import Route

from fourhundred_agents.analysis import NOISE, ActionValuer, analyse_decisions, make_valuer
from fourhundred_env.cards import action_text
from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_record import GameRecord, decisions, parse_record
from fourhundred_env.phases import phase_name
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view
from fourhundred_web.bots import public_text
from fourhundred_web.play import OutOfTurnError, PlaySession
from fourhundred_web.records import MAX_RECORD_UPLOAD, read_upload, record_json, table_record
from fourhundred_web.requests import (
    ApiError,
    check_fields,
    int_field,
    read_body,
    show,
    text_field,
)
from fourhundred_web.tables import TOKEN_HEADER, Tables

__all__ = [
    "HINT_AGENT",
    "HINT_AGENT_ANY_RULES",
    "MAX_DECISIONS",
    "MAX_JOBS",
    "REVIEW_AGENT",
    "Hints",
    "ReviewJob",
    "Reviews",
    "review_routes",
]

REVIEW_AGENT = "search:worlds=16,bid_worlds=16"
"""The valuer of a review: the search with 16 worlds a decision (docs/web.md has its speed)."""
HINT_AGENT = "search:worlds=16,bid_worlds=8,candidates=64"
"""The valuer of a hint: fewer worlds, so that a person waits a second or two."""
HINT_AGENT_ANY_RULES = (
    "search:worlds=16,bid_worlds=8,candidates=64,models=heuristic-v1,own=heuristic-v1,"
    "matchwin=matchwin_h1.npz"
)
"""The valuer of a hint under rules that no bundled network was trained under (pagat): the
same search with ``heuristic-v1`` at every seat of its worlds, valued by the match-win
estimate of those rules."""
SEED = 0
"""The seed of the valuers' worlds: the same position gets the same values."""
MAX_JOBS = 4
"""Reviews waiting or running at once, the server's whole queue."""
MAX_DECISIONS = 3000
"""Most decisions in one review (a long match has about 2,900)."""
KEEP = 16
"""Finished reviews kept (the oldest is forgotten first)."""
ABANDON_SECONDS = 120.0
"""A review nobody has asked about for this long is stopped."""
BATCH = 8
"""Decisions valued in one call (the search's values do not depend on the batch)."""
_LIVE = ("queued", "running")
_log = logging.getLogger(__name__)


_OPEN: weakref.WeakSet[Reviews] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for reviews in list(_OPEN):
        reviews.close()


class _Stopped(Exception):
    """A review stopped (cancelled or abandoned) while it ran."""


@dataclass(eq=False)
class ReviewJob:
    """One review: what it values (`hand`: a hand's number from 1, None: the whole game),
    how far it got (`decisions`: each valued decision as ``DecisionAnalysis.to_dict()``, in
    the game's order), and its `status`: ``queued``, ``running``, ``done``, ``failed`` (with
    `error`) or ``cancelled``."""

    job_id: str
    key: tuple[str, str, int, int | None]
    record: GameRecord | None = field(repr=False)
    total: int
    hand: int | None
    status: str = "queued"
    decisions: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    unit: str = "match-win"
    polled: float = 0.0
    stop: bool = False


class Reviews:
    """The server's review jobs (see the module docstring): valued by `agent` with worlds
    from `seed`, one at a time on a daemon thread; at most `max_jobs` waiting or running,
    `max_decisions` in one job, `keep` finished ones remembered."""

    def __init__(
        self,
        agent: str = REVIEW_AGENT,
        seed: int = SEED,
        max_jobs: int = MAX_JOBS,
        max_decisions: int = MAX_DECISIONS,
        keep: int = KEEP,
        abandon_seconds: float = ABANDON_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agent = agent
        self.seed = seed
        self.max_jobs = max_jobs
        self.max_decisions = max_decisions
        self.keep = keep
        self.abandon_seconds = abandon_seconds
        self.clock = clock
        self._jobs: OrderedDict[str, ReviewJob] = OrderedDict()
        self._by_key: dict[tuple[str, str, int, int | None], str] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[ReviewJob | None] = queue.Queue()
        self._valuers: dict[Rules, ActionValuer] = {}  # the worker's own
        self._worker: threading.Thread | None = None
        _OPEN.add(self)

    # -- asked by the event loop (each call quick) ---------------------------------------------
    def submit(self, record: GameRecord, hand: int | None = None) -> ReviewJob:
        """The review of `record` (hand `hand`, from 1; None: every hand): the job already
        asked for if there is one, else a new one queued. FourHundredError for a hand the
        record does not have or nothing to value; ApiError 413 past `max_decisions`, 503 when
        `max_jobs` wait or run."""
        hands = len(record.hands)
        if hand is not None and not 1 <= hand <= hands:
            raise FourHundredError(
                f"hand={hand}: expected a hand of the game, 1 to {hands}"
                if hands else "the game has no hand to review"
            )  # fmt: skip
        chosen = record.hands if hand is None else (record.hands[hand - 1],)
        total = sum(len(h.moves) for h in chosen)
        if total == 0:
            raise FourHundredError("the game has no decision to review: no bid or card was made")
        if total > self.max_decisions:
            raise ApiError(
                413, f"the game has {total} decisions: expected at most {self.max_decisions} "
                "in one review (review it hand by hand)"
            )  # fmt: skip
        digest = hashlib.sha256(record.to_json().encode()).hexdigest()
        key = (digest, self.agent, self.seed, hand)
        with self._lock:
            known = self._by_key.get(key)
            if known is not None:
                job = self._jobs[known]
                job.polled = self.clock()
                return job
            live = sum(j.status in _LIVE for j in self._jobs.values())
            if live >= self.max_jobs:
                raise ApiError(
                    503, f"the server is busy with {live} reviews, the most it queues: try "
                    "again when one is done"
                )  # fmt: skip
            job = ReviewJob(secrets.token_urlsafe(9), key, record, total, hand,
                            polled=self.clock())  # fmt: skip
            self._jobs[job.job_id] = job
            self._by_key[key] = job.job_id
            self._forget_old()
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="review", daemon=True)
                self._worker.start()
        self._queue.put(job)
        return job

    def poll(self, job_id: str, since: int = 0) -> dict[str, Any]:
        """Job `job_id` as the page shows it (:meth:`answer`); 404 for one not known."""
        with self._lock:
            job = self._job(job_id)
            job.polled = self.clock()
            return self._answer(job, since)

    def answer(self, job: ReviewJob, since: int = 0) -> dict[str, Any]:
        """`job`'s status, progress (``done`` of ``total`` decisions; ``ahead``: reviews to
        run before it) and its decisions from the `since`-th on."""
        with self._lock:
            return self._answer(job, since)

    def cancel(self, job_id: str) -> dict[str, Any]:
        """Stop job `job_id` (a finished one is left as it is); 404 for one not known."""
        with self._lock:
            job = self._job(job_id)
            if job.status in _LIVE:
                job.stop = True
                if job.status == "queued":
                    self._end(job, "cancelled", None)
            return self._answer(job, len(job.decisions))

    def _job(self, job_id: str) -> ReviewJob:
        job = self._jobs.get(job_id)
        if job is None:
            raise ApiError(
                404, f"unknown review {show(job_id)}: it was never asked for or is forgotten "
                "(ask for it again)"
            )  # fmt: skip
        return job

    def _answer(self, job: ReviewJob, since: int) -> dict[str, Any]:
        ahead = 0
        if job.status == "queued":  # the jobs still to run that were asked for before it
            ids = list(self._jobs)
            ahead = sum(self._jobs[i].status in _LIVE for i in ids[: ids.index(job.job_id)])
        return {
            "job": job.job_id, "status": job.status, "done": len(job.decisions),
            "total": job.total, "ahead": ahead, "hand": job.hand, "agent": self.agent,
            "seed": self.seed, "noise": NOISE, "unit": job.unit, "error": job.error,
            "decisions": job.decisions[since:],
        }  # fmt: skip

    def _end(self, job: ReviewJob, status: str, error: str | None) -> None:
        """Finish `job` (under the lock); a failed or stopped one is asked for afresh."""
        job.status, job.error, job.record = status, error, None
        if status != "done" and self._by_key.get(job.key) == job.job_id:
            del self._by_key[job.key]

    def _forget_old(self) -> None:
        ended = [j for j in self._jobs.values() if j.status not in _LIVE]
        for job in ended[: max(len(ended) - self.keep, 0)]:
            del self._jobs[job.job_id]
            if self._by_key.get(job.key) == job.job_id:
                del self._by_key[job.key]

    def close(self, wait: float = 10.0) -> None:
        """Stop every review and the thread (waiting up to `wait` seconds for the batch it
        values): at the interpreter's exit, a thread killed inside the network aborts it."""
        with self._lock:
            for job in self._jobs.values():
                job.stop = True
            worker = self._worker
        self._queue.put(None)
        if worker is not None:
            worker.join(wait)

    # -- the review thread ---------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            with self._lock:
                if job.status != "queued":
                    continue
                job.status = "running"
                record = job.record
            assert record is not None
            try:
                self._run(job, record)
                status, error = "done", None
            except _Stopped as e:
                status, error = "cancelled", str(e)
            except FourHundredError as e:  # a record the valuer cannot take, in one line
                status, error = "failed", public_text(str(e)).replace("\n", " ")
            except Exception as e:  # a bug must not stop the reviews after it
                _log.exception("review %s failed", job.job_id)
                status, error = (
                    "failed",
                    f"internal error ({type(e).__name__}); see the server's log",
                )
            with self._lock:
                self._end(job, status, error)
                self._forget_old()

    def _valuer(self, rules: Rules) -> ActionValuer:
        if rules not in self._valuers:
            self._valuers = {rules: make_valuer(self.agent, rules, self.seed)}  # one kept
        return self._valuers[rules]

    def _run(self, job: ReviewJob, record: GameRecord) -> None:
        valuer = self._valuer(record.rules)
        job.unit = str(getattr(valuer, "unit", "match-win"))
        batch: list[Any] = []
        for d in decisions(record):
            if job.hand is not None and d.hand != job.hand:
                if d.hand > job.hand:
                    break
                continue
            batch.append(d)
            if len(batch) == BATCH:
                self._value(job, batch, valuer)
                batch = []
        if batch:
            self._value(job, batch, valuer)

    def _value(self, job: ReviewJob, batch: list[Any], valuer: ActionValuer) -> None:
        with self._lock:
            if job.stop:
                raise _Stopped("stopped at the page's request")
            if self.clock() - job.polled > self.abandon_seconds:
                raise _Stopped(f"stopped: nobody asked about it for {self.abandon_seconds:g} s")
        done = analyse_decisions(batch, valuer, self.seed, noise=NOISE)
        with self._lock:
            job.decisions.extend(d.to_dict() for d in done.decisions)


class Hints:
    """A person's hint (see the module docstring): the values of the legal actions at their
    view by `agent`, worlds from `seed`; one valuer, shared by the tables one at a time."""

    def __init__(self, agent: str = HINT_AGENT, seed: int = SEED) -> None:
        self.agent = agent
        self.seed = seed
        self._lock = threading.Lock()
        self._valuers: dict[Rules, tuple[str, ActionValuer]] = {}

    def _valuer(self, rules: Rules) -> tuple[str, ActionValuer]:
        """(its spec, the valuer) of the hints under `rules`: `agent`, or, where the default's
        network was trained under other rules, HINT_AGENT_ANY_RULES."""
        from fourhundred_agents.neural.checkpoint import CheckpointError

        try:
            return self.agent, make_valuer(self.agent, rules, self.seed)
        except CheckpointError:
            if self.agent != HINT_AGENT:  # a valuer the owner chose: its refusal stands
                raise
            return HINT_AGENT_ANY_RULES, make_valuer(HINT_AGENT_ANY_RULES, rules, self.seed)

    def hint(self, session: PlaySession, seat: int, moves: int | None = None) -> dict[str, Any]:
        """The hint for the person at `seat` of `session` (called on the table's thread with
        its lock held). OutOfTurnError when `seat` is not to play or the page is stale
        (`moves`: the moves it has seen)."""
        table = session.table
        if seat not in session.people:
            raise OutOfTurnError(f"seat {seat} is a bot's: a hint is for a person's own turn")
        if moves is not None and moves != session.moves:
            raise OutOfTurnError(
                f"the page is out of date (it has seen {moves} moves, the table has made "
                f"{session.moves}): reload the table"
            )
        if table.phase not in ("bid", "play"):
            raise OutOfTurnError(
                f"no decision is pending ({table.phase.replace('_', ' ')}): a hint is for your turn"
            )
        if table.to_play != seat:
            raise OutOfTurnError(
                f"it is S{table.to_play}'s turn, not yours: a hint answers only the seat to play"
            )
        view = seat_view(table.engine, table.state, np.array([0]), np.int8(seat))
        return self.values(view, table.rules)

    def values(self, view: SeatView, rules: Rules) -> dict[str, Any]:
        """The hint at `view` (one table, the seat to play's own view): ``actions`` (each legal
        action with its value and error, in action-id order; no values where only one is
        legal), ``best``, ``worlds``, ``unit``, ``agent`` and ``seconds`` taken."""
        legal = [int(a) for a in np.flatnonzero(view.legal_mask[0])]
        phase = phase_name(int(view.phase[0]))
        seat = int(view.seat[0])
        if len(legal) == 1:
            only = action_text(legal[0])
            return {"seat": seat, "phase": phase, "best": only, "worlds": 0, "seconds": 0.0,
                    "unit": "match-win", "agent": self.agent,
                    "actions": [{"action": only, "value": None, "stderr": None}]}  # fmt: skip
        start = time.perf_counter()
        with self._lock:
            if rules not in self._valuers:
                self._valuers = {rules: self._valuer(rules)}
            agent, valuer = self._valuers[rules]
            values = valuer.value_actions(view)
        seconds = time.perf_counter() - start
        v, se = values.value[0], values.stderr[0]
        best = max(legal, key=lambda a: -math.inf if math.isnan(v[a]) else v[a])
        return {
            "seat": seat, "phase": phase, "best": action_text(best),
            "worlds": int(values.worlds[0]), "seconds": round(seconds, 3),
            "unit": values.unit, "agent": agent,
            "actions": [{"action": action_text(a), "value": _num(v[a]), "stderr": _num(se[a])}
                        for a in legal],
        }  # fmt: skip


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


# -- routes ---------------------------------------------------------------------------------------
def _tournament_record(w: Any, pair: tuple[str, str], match_id: int, twin: int) -> GameRecord:
    """Game `twin` of duplicate match `match_id` of `pair` as a record: its hands replayed
    card by card (a game that cannot be is refused, with the reason)."""
    from fourhundred_tournament.replay import ReplayError

    try:
        game = w.game((*pair, match_id, twin))
    except ReplayError:
        raise ApiError(
            404, public_text(f"no finished game of match {match_id}, twin {twin + 1}, for "
                             f"{pair[0]} v {pair[1]}")
        ) from None  # fmt: skip
    if not game.exact:
        raise FourHundredError(
            public_text(f"match {match_id}, twin {twin + 1} cannot be valued: {game.reason}")
        )
    seats = [public_text(pair[(seat & 1) ^ twin]) for seat in range(4)]
    history = [h.record for h in game.hands if h.record is not None]
    return GameRecord.from_history(history, w.info.rules, seats, int(game.match.first_dealer))


def review_routes(
    api: Callable[[Callable[[Request], Any]], Callable[[Request], Any]],
    tables: Tables,
    reviews: Reviews,
    hints: Hints,
    watch: Callable[[], Any],
    served: GameRecord | None = None,
) -> list[Route]:
    """The review and hint routes (see the module docstring), each wrapped by `api` (the
    app's refusals as one-line JSON errors). `watch()` is the server's Watch (ApiError 404
    without a database); `served` the record the server was started with (None: none)."""

    async def start(request: Request) -> dict[str, Any]:
        body = await read_body(request, MAX_RECORD_UPLOAD, "a record of at most 1 MiB")
        check_fields(body, ("text", "served", "pair", "match", "twin", "table", "hand"))
        hand = None if body.get("hand") is None else int_field(body["hand"], "hand", 1, 10**6)
        sources = [k for k in ("text", "served", "pair", "table") if body.get(k) is not None]
        if len(sources) != 1:
            raise ApiError(
                400, f"{'no' if not sources else 'more than one'} game to review "
                f"({sources or 'none'}): expected one of text, served, pair (with match and "
                "twin) or table"
            )  # fmt: skip
        source = sources[0]
        if source != "pair" and (body.get("match") is not None or body.get("twin") is not None):
            raise ApiError(400, "match and twin: expected only with pair (a tournament game)")
        extra: dict[str, Any] = {}
        if source == "text":
            text = body["text"]
            if not isinstance(text, str) or not text.strip():
                raise ApiError(400, f"text={show(text)}: expected the text of a record file")
            record = await run_in_threadpool(read_upload, text)
        elif source == "served":
            if body["served"] is not True:
                raise ApiError(400, f"served={show(body['served'])}: expected true")
            if served is None:
                raise ApiError(404, "no record file is open: start the server with "
                               "fourhundred serve --record FILE")  # fmt: skip
            record = served
        elif source == "pair":
            w = watch()
            pairs = w.pairs()
            if not pairs:
                raise ApiError(404, "the database holds no finished games yet")
            pair = pairs[int_field(body["pair"], "pair", 0, len(pairs) - 1)]
            match_id = int_field(body.get("match"), "match", 0, 2**62)
            twin = int_field(body.get("twin"), "twin", 0, 1)
            record = await run_in_threadpool(_tournament_record, w, pair, match_id, twin)
        else:
            table_id = text_field(body["table"], "table", ascii=True)
            table = tables.get(table_id, request.headers.get(TOKEN_HEADER))
            session = table.session
            assert session is not None

            def finished() -> tuple[str, GameRecord]:
                with session.lock:
                    name, text = table_record(session)  # the finished hands: all may see them
                return name, parse_record(text)

            name, record = await tables.run(table, finished)
            extra["game"] = await run_in_threadpool(record_json, record, name)
        job = reviews.submit(record, hand)
        return {**reviews.answer(job), **extra}

    async def job(request: Request) -> dict[str, Any]:
        job_id = request.path_params["job_id"]
        if request.method == "DELETE":
            check_fields(await read_body(request), ())
            return reviews.cancel(job_id)
        check_fields(request.query_params, ("since",))
        since = int_field(request.query_params.get("since"), "since", 0, 10**6, default=0)
        return reviews.poll(job_id, since)

    async def hint(request: Request) -> dict[str, Any]:
        # the seat is the token's: a person's token answers for their seat alone
        table, seat = tables.get_seat(request.path_params["table_id"],
                                      request.headers.get(TOKEN_HEADER))  # fmt: skip
        q = request.query_params
        check_fields(q, ("moves", "seat"))
        moves = None if q.get("moves") is None else int_field(q["moves"], "moves", 0, 10**6)
        asked = None if q.get("seat") is None else int_field(q["seat"], "seat", 0, 3)
        if asked is not None and asked != seat:
            raise OutOfTurnError(f"seat {asked} is not yours: a hint is for your own seat, {seat}")
        session = table.session
        assert session is not None

        def run() -> dict[str, Any]:
            with session.lock:
                return {**hints.hint(session, seat, moves), "moves": session.moves}

        return await tables.run(table, run)

    return [
        Route("/api/review", api(start), methods=["POST"]),
        Route("/api/review/{job_id}", api(job), methods=["GET", "DELETE"]),
        Route("/api/tables/{table_id}/hint", api(hint)),
    ]
