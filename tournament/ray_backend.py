"""Tournament jobs as Ray tasks (``backend: ray``, the ``ray`` extra).

The jobs are :func:`fourhundred_tournament.planning.plan_jobs`'s, played by the same function as the local
backend's (:func:`fourhundred_tournament.runner.job_records`): each job is one Ray task, a streaming
generator whose yields are the job's rows as they are produced (every `flush_seconds`). This
process waits on all the jobs at once and hands each batch of rows to the one SQLite writer as
it arrives; nothing is written anywhere else. A local Ray instance with `workers` CPUs is
started for the run when no address is given (and stopped after it); with `ray_address` the
run joins that cluster, whose nodes must have the same fourhundred installed (README).

Failures. Ray's own task retries are off (``max_retries=0``): a job yields its rows by the
clock, so a generator run again would not yield the same batches, and Ray's replay, which
skips the yields it already delivered by their index, could lose rows or double them.
Instead, when a job's worker or node dies (any Ray system error: WorkerCrashedError,
NodeDiedError, ...), this process deletes what the job wrote of the games it had in flight
(:meth:`~fourhundred_tournament.db.ResultsDB.drop_partial_games`) and starts a new task for the job's
games that have no match row yet: finished games are kept, the others are played again from
their start. An agent's seed depends on the pairing, side and seat, and its draws on the
game's stream key, never on the job or the batch, so the games played again are the games a
straight run plays (tests/test_tournament_ray.py kills a worker to check it). After
`ray_retries` deaths of one job the run stops, saying so; rerunning the command resumes it.
An error raised by the job's own code (a bot, a missing checkpoint) is not retried: it would
fail again.

If this process dies, Ray ends the tasks it started; rerunning the command resumes from the
database like the local backend (the writer lock of a dead run is taken over).
"""

from __future__ import annotations

import collections
import logging
import os
import signal
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fourhundred_env.errors import FourHundredError
from fourhundred_tournament.config import TournamentConfig
from fourhundred_tournament.db import ResultsDB
from fourhundred_tournament.planning import Job
from fourhundred_tournament.runner import Records, job_records

__all__ = ["RayCluster", "connect", "probe_address", "run_jobs"]

KILL_AFTER_YIELDS: dict[int, int] = {}
"""Test hook: job id -> number of yields after which the job's first attempt kills its own
worker process with SIGKILL (a worker that dies mid-job, for real). Empty in normal runs."""


@dataclass
class RayCluster:
    """The Ray instance a run plays on; `started`: this run started it (and stops it)."""

    ray: Any  # the ray module
    started: bool
    address: str

    def close(self) -> None:
        """Shut Ray down if this process started it (a cluster it joined keeps running)."""
        if self.started:
            self.ray.shutdown()


def connect(cfg: TournamentConfig) -> RayCluster:
    """Join the cluster at `cfg.ray_address`, or start a local Ray instance with `cfg.workers`
    CPUs; a Ray already initialised in this process (a script's, the tests') is used as it
    is. FourHundredError when Ray is not installed or the cluster cannot be reached."""
    try:
        import ray
    except ImportError:
        raise FourHundredError(
            "backend 'ray' needs Ray: expected it installed (pip install 'fourhundred[ray]')"
        ) from None
    if ray.is_initialized():
        return RayCluster(ray, False, ray.get_runtime_context().gcs_address)
    # A local instance's start-up notes (its token, its address) are noise on the command's
    # stderr; a cluster's warnings are kept.
    level = logging.ERROR if cfg.ray_address is None else logging.WARNING
    kwargs: dict[str, Any] = dict(include_dashboard=False, logging_level=level)
    if cfg.ray_address is None:
        kwargs["num_cpus"] = cfg.workers
    else:
        probe_address(cfg.ray_address)
    try:
        ray.init(address=cfg.ray_address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {cfg.ray_address!r}" if cfg.ray_address else "local Ray"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise FourHundredError(
            f"cannot start or join {where} ({first}): expected the address of a running Ray "
            "head (`ray start --head` prints it), or no address for a local instance"
        ) from None
    return RayCluster(ray, True, ray.get_runtime_context().gcs_address)


def probe_address(address: str) -> None:
    """Fail fast on a HOST:PORT where nothing listens (Ray itself keeps retrying for a minute
    or more); other forms (``auto``, ``ray://...``) are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise FourHundredError(
            f"Ray address {address!r}: nothing answers there ({e.strerror or e}); expected the "
            "address of a running Ray head (`ray start --head` prints it)"
        ) from None


def _job_task(job: Job, kill_after: int | None) -> Iterator[Records]:
    """The Ray task of one job: its rows as they are produced (`kill_after`: the test hook)."""
    for n, rec in enumerate(job_records(job), 1):
        yield rec
        if kill_after is not None and n >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)


def run_jobs(
    cluster: RayCluster,
    cfg: TournamentConfig,
    jobs: Sequence[Job],
    db: ResultsDB,
    write: Callable[[Records], None],
) -> int:
    """Play `jobs` as Ray tasks, handing their rows to `write` as they arrive; a job whose
    worker or node died is played again for its unfinished games (see the module docstring).
    Returns how many times a job was started again. Tasks still running when this returns or
    raises (Ctrl-C, a failed job) are cancelled."""
    ray = cluster.ray
    task = ray.remote(num_cpus=1, max_retries=0)(_job_task)
    running: dict[Any, Job] = {}  # generator -> the job it plays
    deaths: dict[int, int] = {}
    retried = 0

    def start(job: Job, attempt: int) -> None:
        kill_after = KILL_AFTER_YIELDS.get(job.job_id) if attempt == 0 else None
        running[task.remote(job, kill_after)] = job

    # the jobs of cmd: bots one after another, as the local backend plays them
    apart = collections.deque(job for job in jobs if job.apart)

    def next_apart(ended: Job) -> None:
        if ended.apart and apart:
            start(apart.popleft(), 0)

    for job in jobs:
        if not job.apart:
            start(job, 0)
    if apart:
        start(apart.popleft(), 0)
    try:
        while running:
            pending = list(running)
            ready, _ = ray.wait(pending, num_returns=1, timeout=1.0)
            if ready:  # and every other job with rows waiting, in one pass
                ready, _ = ray.wait(pending, num_returns=len(pending), timeout=0)
            for gen in ready:
                job = running[gen]
                try:
                    rec = ray.get(next(gen))
                except StopIteration:
                    del running[gen]
                    next_apart(job)
                    continue
                except ray.exceptions.RayTaskError as e:  # the job's own code raised
                    raise RuntimeError(
                        f"tournament job {job.job_id} failed in a Ray worker:\n{e}"
                    ) from None
                except ray.exceptions.RayError as e:  # its worker or node died
                    del running[gen]
                    ray.cancel(gen, force=True)  # in case only a row batch was lost
                    deaths[job.job_id] = deaths.get(job.job_id, 0) + 1
                    if deaths[job.job_id] > cfg.ray_retries:
                        first = str(e).strip().splitlines()[0]
                        raise FourHundredError(
                            f"tournament job {job.job_id} ({job.pair[0]} vs {job.pair[1]}): "
                            f"its Ray worker died {deaths[job.job_id]} time(s), more than "
                            f"ray_retries={cfg.ray_retries} (last: {first}); rerun the same "
                            "command to resume"
                        ) from None
                    db.drop_partial_games(job.pair, job.games)
                    done = db.finished_games()
                    rest = tuple(g for g in job.games if (*job.pair, *g) not in done)
                    if rest:
                        start(replace(job, games=rest), deaths[job.job_id])
                        retried += 1
                    else:
                        next_apart(job)
                    continue
                write(rec)
    finally:
        for gen in running:
            ray.cancel(gen, force=True)
    return retried
