"""The local worker pool shared by the trainers that value positions in other processes
(train/bid_q/, train/exit/).

A worker whose set-up fails (a checkpoint of other rules, a missing file) fails the run in
one line naming the cause: the set-up's error is kept in the worker and raised by its first
task, so the pool never starts one worker after another that dies at start."""

from __future__ import annotations

import functools

from fourhundred_env.errors import FourHundredError

_START_ERROR: str | None = None
"""In a worker process: why its set-up failed (None: it did not)."""


class WorkerStartError(FourHundredError):
    """A worker process could not be set up; the run stops."""


def _start(start, args: tuple) -> None:
    global _START_ERROR
    try:
        start(*args)
    except Exception as e:  # any failure: reported by the worker's first task
        text = str(e).splitlines()[0] if str(e) else ""
        _START_ERROR = text if isinstance(e, FourHundredError) else f"{type(e).__name__}: {text}"


def _work(work, item):
    if _START_ERROR is not None:
        raise WorkerStartError(f"a worker process failed to start: {_START_ERROR}")
    return work(item)


def in_processes(items, count: int, workers: int, start, args: tuple, work):
    """work(item) of each of `count` items, in order: in min(workers, count) spawned processes
    each set up by start(*args), or here (start called here) for 1 worker or 1 item.
    WorkerStartError (one line, its cause) when a worker's set-up fails."""
    if workers > 1 and count > 1:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        with context.Pool(min(workers, count), initializer=_start, initargs=(start, args)) as pool:
            yield from pool.imap(functools.partial(_work, work), items)
    else:
        start(*args)
        yield from map(work, items)
