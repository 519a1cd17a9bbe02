"""Playing a whole tournament: its database, its jobs on a backend, the progress bar.

:func:`run_tournament` opens (or resumes) the results database, plans the jobs still to play
and hands them to a backend; finished rows come back as they are produced and are written by
this process alone, as they arrive. Backends (the config's `backend`): "local" plays in this
process (`workers` 1) or in `workers` spawned processes fed through a queue
(:mod:`fourhundred_tournament.parallel`), "ray" as Ray tasks
(:mod:`fourhundred_tournament.ray_backend`). Every backend runs the same jobs with the same job
function (:func:`fourhundred_tournament.runner.job_records`), so the rows do not depend on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fourhundred_agents.registry import make_agent
from fourhundred_agents.remote.isolated import IsolatedAgent
from fourhundred_agents.remote.modules import import_agent_modules
from fourhundred_agents.remote.sandbox import protect_paths
from fourhundred_tournament.config import TournamentConfig
from fourhundred_tournament.db import DatabaseMismatchError, MatchRow, ResultsDB
from fourhundred_tournament.db.ladder import pairing_secrets
from fourhundred_tournament.deals import deals_row, deals_scheme, read_deals, with_real_paths
from fourhundred_tournament.parallel import run_parallel
from fourhundred_tournament.planning import Job, Pairing, plan_jobs, seeding_meta
from fourhundred_tournament.runner import Records, run_job

__all__ = ["RunSummary", "check_agents", "connect_backend", "play_pairings", "run_tournament"]


@dataclass
class RunSummary:
    """What one call of :func:`run_tournament` did."""

    db_path: Path
    games_total: int
    games_resumed: int  # already finished before this run
    games_played: int
    hands_dropped: int  # hands of games in flight when an earlier run stopped
    seconds: float
    lock_note: str | None = None  # set when the lock of a run that died was taken over
    jobs_restarted: int = 0  # Ray backend: jobs started again after their worker died


def run_tournament(
    cfg: TournamentConfig,
    overwrite: bool = False,
    on_records: Callable[[Records], None] | None = None,
    accept_unchecked: bool = False,
) -> RunSummary:
    """Play what is left of the tournament `cfg` into its database.

    Validates the agent specs and the database before anything is written: an unknown agent,
    a database of another tournament, a damaged one or one that another run is writing
    raises FourHundredError and changes nothing. `overwrite` discards an existing database
    first (once this run holds its writer lock). `accept_unchecked`: resume a database whose
    row checks were switched off (refused otherwise).
    """
    # a sandboxed bot cannot read the results (which hold the deal secret), even in its own
    # folder; hidden before the check, so that a bot is checked in the very sandbox it plays in
    protect_paths(with_real_paths([cfg.out_dir, cfg.db_path]))
    check_agents(cfg)
    fingerprint = cfg.fingerprint()
    t0 = time.perf_counter()
    deals = {"deals": deals_row(cfg.deals)}  # a fresh secret, recorded by a new database only
    # Ray is joined before the database is opened: an unreachable cluster changes nothing.
    cluster = connect_backend(cfg)
    try:
        with ResultsDB(cfg.db_path, fingerprint, overwrite=overwrite, create_meta=deals,
                       accept_unchecked=accept_unchecked) as db:  # fmt: skip
            _check_deals(cfg, db)
            # what a replay needs beyond the fingerprint to seed the agents as the jobs did
            db.record_meta("seeding", seeding_meta(cfg))
            # what reports show: this run's names (a name is no part of the fingerprint, so
            # a resume may rename its agents, or drop their names)
            if cfg.names or "names" in db.meta():
                db.set_meta("names", cfg.names)
            summary = play_pairings(cfg, db, None, on_records, cluster)
    finally:
        if cluster is not None:
            cluster.close()
    summary.seconds = time.perf_counter() - t0
    summary.lock_note = db.lock_note
    return summary


def _check_deals(cfg: TournamentConfig, db: ResultsDB) -> None:
    """Refuse a database dealt otherwise than `cfg.deals` asks (one made before secret
    deals, which records none, is resumed as it was dealt: from the seed)."""
    meta = db.meta()
    if "deals" in meta and deals_scheme(meta) != cfg.deals:
        raise DatabaseMismatchError(
            f"database {str(db.path)!r} holds a tournament of {deals_scheme(meta)} deals, this "
            f"run asks for {cfg.deals} deals: expected the same deals to resume it; choose "
            "another --db, or --overwrite to discard it"
        )


def connect_backend(cfg: TournamentConfig) -> Any:
    """The Ray cluster a run with ``backend: ray`` plays on (joined before its database is
    opened, so that an unreachable cluster changes nothing), else None."""
    return _ray_backend().connect(cfg) if cfg.backend == "ray" else None


def play_pairings(
    cfg: TournamentConfig,
    db: ResultsDB,
    pairings: tuple[Pairing, ...] | None,
    on_records: Callable[[Records], None] | None = None,
    cluster: Any = None,
    desc: str = "tournament",
) -> RunSummary:
    """Play the games of `pairings` (default: every pairing of `cfg`) that `db`, open for
    writing, does not hold yet, on the config's backend (`cluster`: from
    :func:`connect_backend`), every row written here as it arrives; games a killed run left
    unfinished are dropped and played again. The progress bar (ETA) is labelled `desc`."""
    t0 = time.perf_counter()
    if pairings is None:
        pairings = tuple(Pairing(p, cfg.matches) for p in cfg.pairings())
    dropped = db.drop_unfinished()
    # the database's own deals (fourhundred_tournament.deals): a resume deals what the first run
    # dealt; a ladder's pairing deals from its event's secret
    secret = read_deals(db.meta(), f"database {str(db.path)!r}")
    jobs = plan_jobs(cfg, db.finished_games(), pairings, secret, pairing_secrets(db))
    total = 2 * sum(p.matches for p in pairings)
    todo = sum(len(j.games) for j in jobs)
    bar = _progress(cfg, total, total - todo, desc)
    played = 0

    def write(rec: Records) -> None:
        nonlocal played
        db.write(rec.hands, rec.matches, rec.events, rec.move_times)
        played += len(rec.matches)
        if bar is not None:
            bar.update(rec)
        if on_records is not None:
            on_records(rec)

    try:
        restarted = _play_jobs(cfg, jobs, db, write, cluster)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    return RunSummary(db.path, total, total - todo, played, dropped, seconds, None, restarted)


def _ray_backend() -> Any:
    from fourhundred_tournament import ray_backend  # Ray is imported only when a run asks for it

    return ray_backend


def _play_jobs(
    cfg: TournamentConfig,
    jobs: Sequence[Job],
    db: ResultsDB,
    write: Callable[[Records], None],
    cluster: Any,
) -> int:
    """Play `jobs` on the config's backend, every row through `write` (see the module
    docstring). Returns how many jobs the Ray backend started again after a worker died."""
    if cluster is not None:
        return _ray_backend().run_jobs(cluster, cfg, jobs, db, write)
    # the jobs of cmd: bots, one orientation each, one after another in one worker: no two
    # processes of such a bot that hold cards of one deal are alive at once (docs/security.md)
    tasks = [[job] for job in jobs if not job.apart]
    apart = [job for job in jobs if job.apart]
    if apart:
        tasks.insert(0, apart)
    if cfg.workers == 1 or len(tasks) <= 1 or cfg.interactive:
        for job in jobs:
            run_job(job, write)
    else:
        run_parallel(tasks, min(cfg.workers, len(tasks)), write)
    return 0


def check_agents(cfg: TournamentConfig, specs: tuple[str, ...] | None = None) -> None:
    """Make each agent of `specs` (default the config's) once, so that an unknown name, bad
    settings or an unreadable checkpoint raise FourHundredError here, before anything is
    written, rather than in a worker; a bot process must start and answer."""
    rules = cfg.effective_rules
    import_agent_modules(cfg.agent_modules)
    specs = cfg.labels if specs is None else specs
    isolated = cfg.isolated_agents(specs)
    for spec in specs:
        if spec in isolated:  # its code runs in its own process, even to be checked
            agent = IsolatedAgent(spec, rules, 0, cfg.agent_modules)
        else:
            agent = make_agent(spec, rules, seed=0)
        try:
            check = getattr(agent, "check", None)
            if check is not None:  # a bot process: it starts and answers, or the run stops here
                check()
        finally:
            agent.close()


def _progress(cfg: TournamentConfig, total: int, initial: int, desc: str) -> GameProgress | None:
    """A progress bar of the games on stderr (with its ETA), or None when `cfg.progress` is
    off."""
    if not cfg.progress:
        return None
    return GameProgress(total, initial, desc)


class GameProgress:
    """A tqdm bar of the games that also counts the hands of games still in play.

    Games played side by side in a batch finish together, so a bar of finished games alone
    stands still (and has no ETA) until a whole batch ends. Each finished hand moves the bar
    by a share of a game, one over the mean hands a game (13 until a game of this run has
    finished), at most `HAND_CAP` of a game before the game ends; the game's end adds the rest.
    The ETA is the remaining games at the run's average rate since it started (or resumed):
    jobs end in bursts, and a rate smoothed over the latest updates swings with each burst.
    """

    HAND_CAP = 0.9
    PRIOR_HANDS = 13.0

    def __init__(self, total: int, initial: int, desc: str) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=total, initial=initial, unit="game", desc=desc, smoothing=0,
                         dynamic_ncols=True, bar_format=_BAR_FORMAT)  # fmt: skip
        self._credit: dict[tuple, float] = {}  # game -> share of a game its hands moved the bar
        self._hands = 0
        self._games = 0

    def update(self, rec: Records) -> None:
        """Move the bar by the hands and games of `rec` (rows as tuples or named rows)."""
        step = 0.0
        share = 1.0 / (self._hands / self._games if self._games else self.PRIOR_HANDS)
        for row in rec.hands:
            key = tuple(row[:4])  # pair_a, pair_b, match_id, orientation
            got = self._credit.get(key, 0.0)
            add = min(share, self.HAND_CAP - got)
            if add > 0:
                self._credit[key] = got + add
                step += add
        for row in rec.matches:
            step += 1.0 - self._credit.pop(tuple(row[:4]), 0.0)
            self._hands += row[_NUM_HANDS]
            self._games += 1
        step = min(step, self._bar.total - self._bar.n)  # sums of shares round past the total
        if step > 0:
            self._bar.update(step)

    @property
    def games(self) -> float:
        """Where the bar stands, in games."""
        return self._bar.n

    def close(self) -> None:
        self._bar.close()


_NUM_HANDS = MatchRow._fields.index("num_hands")  # rows from workers arrive as plain tuples
_BAR_FORMAT = "{l_bar}{bar}| {n:.0f}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
