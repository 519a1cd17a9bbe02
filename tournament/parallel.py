"""The local backend's worker processes: jobs played in spawned processes fed through a queue.

:func:`run_parallel` starts the workers (one numpy/torch thread each), hands them the jobs and
passes their rows, as they arrive, to the caller's `write` (in
:mod:`fourhundred_tournament.tournament`, the one process that writes the database). A worker
whose parent was killed exits rather than play rows nobody will write.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from fourhundred_tournament.planning import Job
from fourhundred_tournament.runner import Records, run_job

__all__ = ["run_parallel"]


def _worker(tasks: Any, results: Any, parent: int) -> None:
    """Process entry point: play jobs from `tasks` until None, stream records to `results`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us

    def send(rec: Records, job_id: int) -> None:
        if os.getppid() != parent:  # the parent was killed: nobody will write these rows
            os._exit(1)
        results.put(("records", job_id, rec))

    while True:
        task = tasks.get()
        if task is None:
            return
        for job in task:  # one after another: each job's bot processes end with it
            try:
                run_job(job, lambda rec, j=job.job_id: send(rec, j))
                results.put(("done", job.job_id, None))
            except BaseException:
                results.put(("error", job.job_id, traceback.format_exc()))
                return


def run_parallel(
    tasks: Sequence[Sequence[Job]], workers: int, write: Callable[[Records], None]
) -> None:
    """Play the jobs of `tasks` in `workers` spawned processes, those of one task one after
    another in one process; `write` receives their rows here."""
    ctx = mp.get_context("spawn")
    queue_ = ctx.Queue()
    results = ctx.Queue()
    for task in tasks:
        queue_.put(list(task))
    for _ in range(workers):
        queue_.put(None)
    procs = _start_workers(ctx, queue_, results, workers)
    try:
        _collect(results, procs, sum(len(task) for task in tasks), write)
        for p in procs:
            p.join(timeout=10)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
        queue_.close()
        results.close()


def _start_workers(ctx: Any, tasks: Any, results: Any, workers: int) -> list[Any]:
    """Start `workers` processes playing jobs from `tasks`, each with one numpy/torch thread."""
    procs = [
        ctx.Process(target=_worker, args=(tasks, results, os.getpid()), daemon=True)
        for _ in range(workers)
    ]
    env_threads = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    for k in env_threads:  # one numpy/torch thread per worker: the workers are the parallelism
        os.environ[k] = "1"
    try:
        for p in procs:
            p.start()
    finally:
        for k, v in env_threads.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return procs


def _collect(
    results: Any, procs: Sequence[Any], remaining: int, write: Callable[[Records], None]
) -> None:
    """Hand the workers' rows to `write` until `remaining` jobs are done; a failed job or a
    dead worker raises RuntimeError."""
    while remaining:
        try:
            kind, job_id, payload = results.get(timeout=1.0)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(
                    f"tournament worker died (exit code {dead[0].exitcode}); "
                    "rerun the same command to resume"
                ) from None
            continue
        if kind == "records":
            write(payload)
        elif kind == "done":
            remaining -= 1
        else:
            raise RuntimeError(f"tournament job {job_id} failed in a worker:\n{payload}")
