"""The web's review jobs (:mod:`fourhundred_agents.analysis`): a game's review in Watch,
valued off the event loop, one job at a time.

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
Its routes are :mod:`fourhundred_web.routes.analysis`'s.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import queue
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fourhundred_agents.analysis import NOISE, ActionValuer, analyse_decisions, make_valuer
from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_records.files import GameRecord, decisions
from fourhundred_env.rules import Rules
from fourhundred_web.bots import public_text
from fourhundred_web.requests import ApiError, show

__all__ = ["MAX_DECISIONS", "MAX_JOBS", "REVIEW_AGENT", "ReviewJob", "Reviews"]

REVIEW_AGENT = "search:worlds=16,bid_worlds=16"
"""The valuer of a review: the search with 16 worlds a decision (docs/web.md has its speed)."""
SEED = 0
"""The seed of a review's worlds: the same game gets the same values."""
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
