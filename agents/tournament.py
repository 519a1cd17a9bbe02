"""Tournaments of bots: every pairing played duplicate, many tables in lockstep, across processes.

A tournament plays each pairing of its agents (X on seats 0 and 2 against Y on 1 and 3) for
`matches` **duplicate matches**: match id m is played twice, once with X holding team 0
(orientation 0) and once with the partnerships swapped (orientation 1). The engine deals hand
k of match m from ``(seed, m, k)`` and draws the first dealer from ``(seed, m)``, so both games
of a duplicate match get the same cards by seat, hand by hand, for as long as both last; card
luck cancels. Every pairing uses the same match ids, so all pairings see the same deals.

Each seat of each side is served by its own agent instance (8 per job), which only ever sees
:class:`~fourhundred_env.view.SeatView` s of its seat. A job runs up to `table_batch` tables in
lockstep: at each step every instance gets one batched call for the tables where its seat is
to act; finished matches are replaced by the job's next game. Jobs (one pairing, a chunk of
match ids) are spread over `workers` processes; their split depends only on the config, so a
tournament gives the same results whatever the number of workers.

Conduct (RULES.md): a call that raises, exceeds ``move_hard_limit_s`` or returns an illegal
action has the seat's contract scored as missed at those tables (`Engine.forfeit`), the lowest
legal action is played for it, and an event is recorded; calls slower than
``move_time_limit_s`` are recorded as slow. A match that reaches `max_hands` hands without a
winner is stopped and recorded as unfinished (a draw in the ratings).

Results stream into SQLite (:mod:`agents.db`) as they are produced; rerunning the same
tournament resumes it, and a database from another tournament is refused unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
import traceback
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.db import ResultsDB, check_fingerprint, time_bin
from agents.registry import make_agent
from fourhundred_env.cards import NUM_ACTIONS, action_text
from fourhundred_env.engine import Engine, Phase, mix64
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view

__all__ = [
    "Job",
    "LockstepRunner",
    "Records",
    "TournamentConfig",
    "TournamentConfigError",
    "load_config",
    "plan_jobs",
    "run_tournament",
]


class TournamentConfigError(FourHundredError):
    """A tournament config with an unknown key or an invalid value."""


@dataclass(frozen=True)
class TournamentConfig:
    """One tournament. YAML files in ``configs/`` load into it (:func:`load_config`)."""

    agents: tuple[str, ...]
    """Agent specs (``heuristic``, ``random:any``, ``neural:PATH``...); each is also its label."""
    matches: int = 100
    """Duplicate matches per pairing; each is played twice, partnerships swapped (2x games)."""
    rules: Rules = field(default_factory=Rules)
    """Rules profile (YAML: a preset name, or a mapping of flags with an optional ``preset``)."""
    seed: int = 0
    """Seed of the deals (and of the agents' own randomness)."""
    max_hands: int = 200
    """Hands after which an unfinished match is stopped and recorded as a draw."""
    mirror: bool | tuple[str, ...] = False
    """Also play agents against a copy of themselves (a check: 50%): true for all, or a list."""
    workers: int = 2
    """Processes playing jobs in parallel; 1 plays in this process."""
    table_batch: int = 512
    """Tables each job plays in lockstep (one batched call per agent instance per step). Fastest
    at ``2 * chunk_matches`` or more: all games of a job at once, no refills."""
    chunk_matches: int = 256
    """Duplicate matches per job; fixes the job split, hence results, whatever `workers` is."""
    move_time_limit_s: float | None = None
    """Soft per-move limit (slow moves are recorded); None: the rules' own value."""
    move_hard_limit_s: float | None = None
    """Hard per-move limit (the contract is forfeited); None: the rules' own value."""
    db: str | None = None
    """SQLite results file; None: ``<out_dir>/results.sqlite``."""
    out_dir: str = "runs/tournament"
    """Where the report (JSON, CSV) and, by default, the database go."""
    tensorboard: str | None = None
    """Directory for TensorBoard scalars of the report; None: no TensorBoard logging."""
    bootstrap: int = 1000
    """Bootstrap resamples for the Elo intervals (0: none)."""
    bt_prior: float = 1.0
    """Virtual draws added per pairing in the Bradley-Terry fit (keeps ratings finite)."""
    elo_anchor: str | None = None
    """Agent whose Elo is pinned at 1500; None: the mean rating is 1500."""
    progress: bool = True
    """Show a progress bar with ETA on stderr."""
    agent_modules: tuple[str, ...] = ()
    """Extra modules to import (in every worker) before making agents: they register their own
    agents with `agents.register_agent`."""
    flush_seconds: float = 0.5
    """How often a job sends finished rows to the database while it runs."""

    @property
    def effective_rules(self) -> Rules:
        """`rules` with the time-limit overrides applied."""
        changes: dict[str, Any] = {}
        if self.move_time_limit_s is not None:
            changes["move_time_limit_s"] = float(self.move_time_limit_s)
        if self.move_hard_limit_s is not None:
            changes["move_hard_limit_s"] = float(self.move_hard_limit_s)
        if "move_time_limit_s" in changes and "move_hard_limit_s" not in changes:
            changes["move_hard_limit_s"] = max(
                self.rules.move_hard_limit_s, changes["move_time_limit_s"]
            )
        if "move_hard_limit_s" in changes and "move_time_limit_s" not in changes:
            changes["move_time_limit_s"] = min(
                self.rules.move_time_limit_s, changes["move_hard_limit_s"]
            )
        return self.rules.replace(**changes) if changes else self.rules

    @property
    def interactive(self) -> bool:
        """A person plays (agent `human`): games one at a time, in this process."""
        return any(spec.partition(":")[0] == "human" for spec in self.agents)

    @property
    def db_path(self) -> Path:
        return Path(self.db) if self.db else Path(self.out_dir) / "results.sqlite"

    def pairings(self) -> list[tuple[str, str]]:
        """(a, b) label pairs, sorted within and across; (a, a) mirrors when `mirror`."""
        labels = sorted(self.agents)
        pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
        mirrored = labels if self.mirror is True else sorted(self.mirror or ())
        pairs += [(a, a) for a in mirrored]
        return sorted(pairs)

    def fingerprint(self) -> dict[str, Any]:
        """What a results database must agree on to be resumed: agents, rules, seed, max_hands."""
        files = {}
        for spec in self.agents:
            arg = spec.partition(":")[2]
            if arg and Path(arg).is_file():
                files[spec] = hashlib.sha256(Path(arg).read_bytes()).hexdigest()
        return {
            "agents": sorted(self.agents),
            "agent_files": files,
            "rules": self.effective_rules.to_dict(),
            "seed": self.seed,
            "max_hands": self.max_hands,
        }


_INT_FIELDS = (
    "matches",
    "seed",
    "max_hands",
    "workers",
    "table_batch",
    "chunk_matches",
    "bootstrap",
)
_POSITIVE = ("matches", "max_hands", "workers", "table_batch", "chunk_matches")


def config_from_mapping(values: Mapping[str, Any]) -> TournamentConfig:
    """Build and validate a config from a mapping (YAML); unknown keys are an error."""
    known = {f.name for f in fields(TournamentConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise TournamentConfigError(
            f"unknown tournament config key(s) {unknown}: expected some of {sorted(known)}"
        )
    values = dict(values)
    if "agents" not in values:
        raise TournamentConfigError(
            "tournament config has no 'agents': expected a list of agent specs"
        )
    agents = values["agents"]
    if isinstance(agents, str):
        agents = agents.replace(",", " ").split()
    if not isinstance(agents, list | tuple) or not all(isinstance(a, str) and a for a in agents):
        raise TournamentConfigError(f"agents={agents!r}: expected a list of agent specs")
    values["agents"] = tuple(agents)
    rules = values.get("rules", "wiki")
    if isinstance(rules, str):
        values["rules"] = Rules.preset(rules)
    elif isinstance(rules, Mapping):
        values["rules"] = Rules.from_dict(rules)
    elif not isinstance(rules, Rules):
        raise TournamentConfigError(
            f"rules={rules!r}: expected a preset name or a mapping of flags"
        )
    for name in _INT_FIELDS:
        if name in values:
            v = values[name]
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise TournamentConfigError(f"{name}={v!r}: expected an integer")
            values[name] = int(v)
    if "progress" in values and not isinstance(values["progress"], bool):
        raise TournamentConfigError(f"progress={values['progress']!r}: expected true or false")
    mirror = values.get("mirror", False)
    if isinstance(mirror, str):
        mirror = mirror.replace(",", " ").split()
    if isinstance(mirror, list | tuple):
        mirror = tuple(mirror)
        if not all(isinstance(m, str) for m in mirror):
            raise TournamentConfigError(f"mirror={mirror!r}: expected true, false or agent specs")
    elif not isinstance(mirror, bool):
        raise TournamentConfigError(f"mirror={mirror!r}: expected true, false or a list of agents")
    values["mirror"] = mirror
    for name in ("move_time_limit_s", "move_hard_limit_s", "bt_prior", "flush_seconds"):
        v = values.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise TournamentConfigError(f"{name}={v!r}: expected a number")
    mods = values.get("agent_modules", ())
    if isinstance(mods, str):
        mods = mods.replace(",", " ").split()
    if not isinstance(mods, list | tuple) or not all(isinstance(m, str) for m in mods):
        raise TournamentConfigError(f"agent_modules={mods!r}: expected a list of module names")
    values["agent_modules"] = tuple(mods)
    for name in ("db", "out_dir", "tensorboard", "elo_anchor"):
        v = values.get(name)
        if v is not None and not isinstance(v, str):
            raise TournamentConfigError(f"{name}={v!r}: expected a string")
    cfg = TournamentConfig(**values)
    _validate(cfg)
    return cfg


def _validate(cfg: TournamentConfig) -> None:
    if len(set(cfg.agents)) != len(cfg.agents):
        raise TournamentConfigError(
            f"agents={list(cfg.agents)}: an agent is listed twice; expected distinct specs "
            "(use mirror: true to play an agent against itself)"
        )
    if isinstance(cfg.mirror, tuple):
        unknown = [m for m in cfg.mirror if m not in cfg.agents]
        if unknown:
            raise TournamentConfigError(
                f"mirror={list(cfg.mirror)}: {unknown} not among the agents {list(cfg.agents)}"
            )
    if len(cfg.agents) < 2 and not cfg.mirror:
        raise TournamentConfigError(
            f"agents={list(cfg.agents)}: expected at least 2 agents (or mirror: true)"
        )
    for name in _POSITIVE:
        if getattr(cfg, name) < 1:
            raise TournamentConfigError(f"{name}={getattr(cfg, name)!r}: expected at least 1")
    if cfg.bootstrap < 0:
        raise TournamentConfigError(f"bootstrap={cfg.bootstrap!r}: expected 0 or more")
    if cfg.flush_seconds < 0:
        raise TournamentConfigError(f"flush_seconds={cfg.flush_seconds!r}: expected 0 or more")
    if cfg.bt_prior < 0:
        raise TournamentConfigError(f"bt_prior={cfg.bt_prior!r}: expected 0 or more")
    if cfg.elo_anchor is not None and cfg.elo_anchor not in cfg.agents:
        raise TournamentConfigError(
            f"elo_anchor={cfg.elo_anchor!r}: expected one of the agents {list(cfg.agents)}"
        )
    cfg.effective_rules  # noqa: B018  (validates the time limits)


def load_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> TournamentConfig:
    """A config from a YAML file (optional) with `overrides` (None values ignored) on top."""
    values: dict[str, Any] = {}
    if path is not None:
        import yaml

        p = Path(path)
        if not p.is_file():
            raise TournamentConfigError(f"tournament config {str(p)!r} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as e:
            raise TournamentConfigError(
                f"tournament config {str(p)!r} is not valid YAML: {e}"
            ) from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise TournamentConfigError(
                f"tournament config {str(p)!r} holds {type(loaded).__name__}: expected a mapping"
            )
        values.update(loaded)
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "rules" and isinstance(value, str) and isinstance(values.get("rules"), dict):
            values["rules"] = {**values["rules"], "preset": value}
        else:
            values[key] = value
    return config_from_mapping(values)


# -- jobs ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    """One pairing and a chunk of its games, played by one process."""

    job_id: int
    pair: tuple[str, str]
    chunk: int
    games: tuple[tuple[int, int], ...]  # (match_id, orientation)
    rules: dict[str, Any]
    seed: int
    max_hands: int
    table_batch: int
    agent_modules: tuple[str, ...] = ()
    flush_seconds: float = 0.5

    def agent_seed(self, side: int, seat: int) -> int:
        """Seed of the instance of `side` (0: pair[0]) at `seat`, fixed by the config."""
        key = [self.seed, zlib.crc32(self.pair[0].encode()), zlib.crc32(self.pair[1].encode())]
        ss = np.random.SeedSequence([*key, self.chunk, side, seat])
        return int(ss.generate_state(1, np.uint32)[0])


def plan_jobs(
    cfg: TournamentConfig, done: set[tuple[str, str, int, int]] = frozenset()
) -> list[Job]:
    """The jobs still to play: chunks of match ids per pairing, without the finished games.

    Jobs are ordered chunk by chunk across pairings, so early results cover every pairing.
    """
    rules = cfg.effective_rules.to_dict()
    # A person plays one game at a time (in this process: see `run_tournament`).
    table_batch = 1 if cfg.interactive else cfg.table_batch
    jobs: list[Job] = []
    num_chunks = math.ceil(cfg.matches / cfg.chunk_matches)
    for chunk in range(num_chunks):
        ids = range(chunk * cfg.chunk_matches, min(cfg.matches, (chunk + 1) * cfg.chunk_matches))
        for pair in cfg.pairings():
            games = tuple(
                (m, o) for m in ids for o in (0, 1) if (pair[0], pair[1], m, o) not in done
            )
            if games:
                jobs.append(
                    Job(len(jobs), pair, chunk, games, rules, cfg.seed, cfg.max_hands,
                        table_batch, cfg.agent_modules, cfg.flush_seconds)
                )  # fmt: skip
    return jobs


# -- the lockstep runner ------------------------------------------------------------------------
@dataclass
class Records:
    """Rows produced by a runner since its last flush (see :mod:`agents.db` for the columns)."""

    hands: list[tuple] = field(default_factory=list)
    matches: list[tuple] = field(default_factory=list)
    events: list[tuple] = field(default_factory=list)
    move_times: list[tuple] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.hands or self.matches or self.events or self.move_times)


_STREAM_SALTS = np.array([0x6C62272E07BB0142, 0x62B821756295C58D, 0x9E3779B97F4A7C15], np.uint64)


def game_streams(seed: int, match_id: np.ndarray, orientation: np.ndarray) -> np.ndarray:
    """(n,) uint64 stream keys of games (match id, orientation) of a tournament seeded `seed`:
    what the agents' random draws in that game hang on (see agents.base), fixed by the game
    alone, never by the batch, the worker or a resume. A sum of two hashes, so that a key
    does not give back the deal stream."""
    key = mix64(
        np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
        ^ mix64(
            np.asarray(match_id).astype(np.uint64) * np.uint64(2)
            + np.asarray(orientation).astype(np.uint64)
        )
        ^ _STREAM_SALTS[0]
    )
    return mix64(key ^ _STREAM_SALTS[1]) + mix64(key ^ _STREAM_SALTS[2])


class _MoveTimeout(BaseException):
    """Raised by SIGALRM inside an agent call that passed the hard limit (not an Exception,
    so an agent's own ``except Exception`` cannot swallow it)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _MoveTimeout


_HAND_OVER, _PLAY, _MATCH_OVER = int(Phase.HAND_OVER), int(Phase.PLAY), int(Phase.MATCH_OVER)


class LockstepRunner:
    """Plays games of one pairing on up to `table_batch` tables in lockstep.

    agents[side][seat]: the instance serving `seat` for side 0 (label ``pair[0]``) or side 1.
    `sink(records)` receives rows as they are produced: every `flush_s` seconds (checked
    whenever a hand ends) and at the end.
    """

    def __init__(
        self,
        rules: Rules,
        pair: tuple[str, str],
        agents: Sequence[Sequence[Agent]],
        seed: int,
        max_hands: int,
        table_batch: int,
        sink: Callable[[Records], None],
        flush_s: float = 0.5,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if len(agents) != 2 or any(len(side) != 4 for side in agents):
            raise FourHundredError(
                "LockstepRunner: expected agents[side][seat] for 2 sides x 4 seats"
            )
        self.rules = rules
        self.engine = Engine(rules)
        self.pair = pair
        self.agents = agents
        self.seed = seed
        self.max_hands = max_hands
        self.table_batch = table_batch
        self.sink = sink
        self.flush_s = flush_s
        self.clock = clock
        self.soft = float(rules.move_time_limit_s)
        self.hard = float(rules.move_hard_limit_s)

    # -- one agent call under the conduct rules ---------------------------------------------
    def _call(
        self, agent: Agent, view: SeatView, use_alarm: bool
    ) -> tuple[Any, float, str | None, str]:
        """(output, seconds, failure kind or None, detail)."""
        t0 = self.clock()
        try:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, self.hard)
            try:
                out = agent.act(view)
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except _MoveTimeout:
            dt = self.clock() - t0
            return None, dt, "timeout", f"interrupted after {dt:.3f} s (hard limit {self.hard} s)"
        except Exception as e:
            dt = self.clock() - t0
            return None, dt, "error", f"raised {type(e).__name__}: {e}"[:500]
        dt = self.clock() - t0
        if dt > self.hard:
            return None, dt, "timeout", f"took {dt:.3f} s (hard limit {self.hard} s)"
        return out, dt, None, ""

    def run(self, games: Sequence[tuple[int, int]]) -> None:
        """Play `games` ((match_id, orientation) each) to the end, feeding rows to the sink."""
        use_alarm = (
            hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        old = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
        try:
            self._run(list(games), use_alarm)
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)

    def _run(self, games: list[tuple[int, int]], use_alarm: bool) -> None:
        if not games:
            return
        eng = self.engine
        todo = deque(games)
        b = min(self.table_batch, len(todo))
        first = [todo.popleft() for _ in range(b)]
        state = eng.init(b, seed=self.seed, match_id=np.array([m for m, _ in first], np.int64))
        orient = np.array([o for _, o in first], np.int8)
        state.stream = game_streams(self.seed, state.match_id, orient)
        active = np.ones(b, bool)
        hand_secs = np.zeros((b, 4))
        hand_decs = np.zeros((b, 4), np.int32)
        match_secs = np.zeros(b)
        match_played = np.zeros(b, np.int32)
        match_forfeits = np.zeros(b, np.int32)
        first_dealer = state.dealer.copy()
        for side in self.agents:
            for agent in side:
                agent.reset(b)
        eng.deal(state)
        out = Records()
        times: dict[tuple[int, int], int] = {}  # (side, time bin) -> decisions
        last_flush = self.clock()
        while True:
            pending = active & (state.phase <= _PLAY)
            if not pending.any():
                break
            mask = eng.legal_mask(state)
            to_play = state.to_play
            side_of = (to_play.astype(np.int8) & 1) ^ orient  # side of the seat to play
            group = np.where(pending, side_of * 4 + to_play, -1)
            actions = np.full(b, -1, np.int64)
            for g in np.unique(group[pending]):
                sd, seat = divmod(int(g), 4)
                idx = np.flatnonzero(group == g)
                view = seat_view(eng, state, idx, np.int8(seat), mask)
                agent = self.agents[sd][seat]
                result, dt, kind, detail = self._call(agent, view, use_alarm)
                k = idx.size
                hand_secs[idx, seat] += dt / k
                hand_decs[idx, seat] += 1
                tb = (sd, time_bin(dt / k))
                times[tb] = times.get(tb, 0) + k
                bad = np.ones(k, bool)
                acts = np.zeros(k, np.int64)
                if kind is None:
                    acts, bad, kind, detail = _check_actions(result, view.legal_mask)
                if bad.any():
                    fallback = np.argmax(view.legal_mask, axis=1)
                    acts = np.where(bad, fallback, acts)
                    t_bad = idx[bad]
                    eng.forfeit(state, t_bad, np.full(t_bad.size, seat))
                    match_forfeits[t_bad] += 1
                    label = self.pair[sd]
                    for j in np.flatnonzero(bad):
                        t = int(idx[j])
                        d = detail(j) if callable(detail) else detail
                        out.events.append(self._event(state, orient, t, seat, label, kind, d, dt))
                elif dt > self.soft:
                    label = self.pair[sd]
                    for t in idx.tolist():
                        d = f"took {dt:.3f} s (time limit {self.soft} s)"
                        out.events.append(self._event(state, orient, t, seat, label, "slow", d, dt))
                actions[idx] = acts
            eng.step(state, actions, validate=False)
            ended = np.flatnonzero(pending & (state.phase >= _HAND_OVER))
            if ended.size == 0:
                continue
            played = ~state.thrown_in[ended]
            match_played[ended] += played
            match_secs[ended] += hand_secs[ended].sum(axis=1)
            out.hands.extend(self._hand_rows(state, ended, orient, hand_secs, hand_decs))
            hand_secs[ended] = 0
            hand_decs[ended] = 0
            over = (state.phase[ended] == _MATCH_OVER) | (state.hand_index[ended] >= self.max_hands)
            going = ended[~over]
            done = ended[over]
            if done.size:
                out.matches.extend(
                    self._match_rows(state, done, orient, first_dealer, match_played,
                                     match_forfeits, match_secs)
                )  # fmt: skip
                n_new = min(done.size, len(todo))
                refill = done[:n_new]
                active[done[n_new:]] = False
                if n_new:
                    nxt = [todo.popleft() for _ in range(n_new)]
                    eng.new_match(state, refill, np.array([m for m, _ in nxt], np.int64))
                    orient[refill] = [o for _, o in nxt]
                    state.stream[refill] = game_streams(
                        self.seed, state.match_id[refill], orient[refill]
                    )
                    first_dealer[refill] = state.dealer[refill]
                    match_played[refill] = 0
                    match_forfeits[refill] = 0
                    match_secs[refill] = 0.0
                    going = np.concatenate([going, refill])
            if going.size:
                eng.deal(state, np.sort(going))
            now = self.clock()
            if now - last_flush >= self.flush_s:
                out.move_times = self._time_rows(times)
                self.sink(out)
                out = Records()
                last_flush = now
        out.move_times = self._time_rows(times)
        if out:
            self.sink(out)

    def _time_rows(self, times: dict[tuple[int, int], int]) -> list[tuple]:
        """The time histogram's rows since the last flush (and `times` emptied)."""
        rows = [(*self.pair, self.pair[sd], b, n) for (sd, b), n in sorted(times.items())]
        times.clear()
        return rows

    # -- rows -------------------------------------------------------------------------------
    def _labels(self, orient: np.ndarray) -> tuple[list[str], list[str]]:
        a, b = self.pair
        team0 = [a if o == 0 else b for o in orient.tolist()]
        team1 = [b if o == 0 else a for o in orient.tolist()]
        return team0, team1

    def _event(
        self, state: Any, orient: np.ndarray, t: int, seat: int, label: str, kind: str,
        detail: str, dt: float,
    ) -> tuple:  # fmt: skip
        return (
            self.pair[0], self.pair[1], int(state.match_id[t]), int(orient[t]),
            int(state.hand_index[t]) - 1, seat, label, kind, detail, float(dt),
        )  # fmt: skip

    def _hand_rows(self, state: Any, t: np.ndarray, orient: np.ndarray, secs: np.ndarray,
                   decs: np.ndarray) -> list[tuple]:  # fmt: skip
        team0, team1 = self._labels(orient[t])
        n = t.size
        cols = [
            [self.pair[0]] * n, [self.pair[1]] * n, state.match_id[t].tolist(),
            orient[t].tolist(), (state.hand_index[t] - 1).tolist(), team0, team1,
            ((state.dealer[t] - 1) & 3).tolist(), state.required_total[t].tolist(),
            state.thrown_in[t].astype(int).tolist(), state.redeal_seat[t].tolist(),
            state.claim_seat[t].tolist(),
        ]  # fmt: skip
        for arr in (state.bids, state.tricks_won, state.hand_points, state.scores):
            cols.extend(arr[t].T.tolist())
        cols.extend(state.forfeit[t].T.astype(int).tolist())
        cols.extend(decs[t].T.tolist())
        cols.extend(secs[t].T.tolist())
        return list(zip(*cols, strict=True))

    def _match_rows(self, state: Any, t: np.ndarray, orient: np.ndarray, first_dealer: np.ndarray,
                    played: np.ndarray, forfeits: np.ndarray, secs: np.ndarray) -> list[tuple]:  # fmt: skip
        team0, team1 = self._labels(orient[t])
        winner_team = state.winner[t].tolist()
        winner = [None if w < 0 else (t0 if w == 0 else t1)
                  for w, t0, t1 in zip(winner_team, team0, team1, strict=True)]  # fmt: skip
        n_hands = state.hand_index[t].tolist()
        n_played = played[t].tolist()
        rows = []
        for j, tt in enumerate(t.tolist()):
            rows.append(
                (
                    self.pair[0], self.pair[1], int(state.match_id[tt]), int(orient[tt]),
                    team0[j], team1[j], int(first_dealer[tt]), int(winner_team[j] >= 0),
                    winner_team[j], winner[j], n_hands[j], n_played[j], n_hands[j] - n_played[j],
                    *state.scores[tt].tolist(), int(state.target[tt]), int(forfeits[tt]),
                    float(secs[tt]),
                )
            )  # fmt: skip
        return rows


def _check_actions(result: Any, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, str, Any]:
    """(actions (K,) int64, bad (K,) bool, kind, detail) for an agent's output against `mask`."""
    k = mask.shape[0]
    try:
        arr = np.asarray(result)
    except Exception as e:  # an object numpy cannot even look at
        return (
            np.zeros(k, np.int64),
            np.ones(k, bool),
            "illegal",
            f"returned {type(result).__name__}: {e}",
        )
    if arr.shape != (k,) or not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
        detail = f"returned {arr.dtype} array of shape {arr.shape}: expected ({k},) int64 actions"
        return np.zeros(k, np.int64), np.ones(k, bool), "illegal", detail
    acts = arr.astype(np.int64)
    in_range = (acts >= 0) & (acts < NUM_ACTIONS)
    ok = in_range & mask[np.arange(k), np.clip(acts, 0, NUM_ACTIONS - 1)]

    def detail(j: int) -> str:
        a = int(acts[j])
        given = action_text(a) if 0 <= a < NUM_ACTIONS else "out of range"
        legal = " ".join(action_text(x) for x in np.flatnonzero(mask[j]))
        return f"returned illegal action {a} ({given}); legal: {legal}"

    return acts, ~ok, "illegal", detail


def import_agent_modules(modules: Sequence[str]) -> None:
    """Import modules that register agents; a missing one is a clear error."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise TournamentConfigError(
                f"agent module {name!r} cannot be imported ({e}): expected an importable module "
                "that registers agents"
            ) from None


def make_job_agents(job: Job) -> list[list[Agent]]:
    """The 2 x 4 agent instances of a job, each seeded from the config."""
    import_agent_modules(job.agent_modules)
    rules = Rules.from_dict(job.rules)
    return [
        [make_agent(job.pair[side], rules, seed=job.agent_seed(side, seat)) for seat in range(4)]
        for side in (0, 1)
    ]


def run_job(job: Job, sink: Callable[[Records], None]) -> None:
    """Play one job in this process."""
    runner = LockstepRunner(
        Rules.from_dict(job.rules), job.pair, make_job_agents(job), job.seed, job.max_hands,
        job.table_batch, sink, job.flush_seconds,
    )  # fmt: skip
    runner.run(job.games)


def _worker(tasks: Any, results: Any, parent: int) -> None:
    """Process entry point: play jobs from `tasks` until None, stream records to `results`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us

    def send(rec: Records, job_id: int) -> None:
        if os.getppid() != parent:  # the parent was killed: nobody will write these rows
            os._exit(1)
        results.put(("records", job_id, rec))

    while True:
        job = tasks.get()
        if job is None:
            return
        try:
            run_job(job, lambda rec, j=job.job_id: send(rec, j))
            results.put(("done", job.job_id, None))
        except BaseException:
            results.put(("error", job.job_id, traceback.format_exc()))
            return


# -- orchestration ------------------------------------------------------------------------------
@dataclass
class RunSummary:
    """What one call of :func:`run_tournament` did."""

    db_path: Path
    games_total: int
    games_resumed: int  # already finished before this run
    games_played: int
    hands_dropped: int  # hands of games in flight when an earlier run stopped
    seconds: float


def run_tournament(
    cfg: TournamentConfig,
    overwrite: bool = False,
    on_records: Callable[[Records], None] | None = None,
) -> RunSummary:
    """Play what is left of the tournament `cfg` into its database.

    Validates the agent specs and the database before anything is written: an unknown agent
    or a database of another tournament raises FourHundredError and changes nothing.
    `overwrite` discards an existing database first.
    """
    rules = cfg.effective_rules
    import_agent_modules(cfg.agent_modules)
    for spec in cfg.agents:  # unknown names and unreadable checkpoints fail here, not in a worker
        make_agent(spec, rules, seed=0)
    path = cfg.db_path
    fingerprint = cfg.fingerprint()
    if overwrite:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    else:
        check_fingerprint(path, fingerprint)
    t0 = time.perf_counter()
    with ResultsDB(path, fingerprint) as db:
        dropped = db.drop_unfinished()
        done = db.finished_games()
        jobs = plan_jobs(cfg, done)
        total = len(cfg.pairings()) * cfg.matches * 2
        todo = sum(len(j.games) for j in jobs)
        resumed = total - todo
        bar = _progress(cfg, total, resumed)
        played = 0

        def write(rec: Records) -> None:
            nonlocal played
            db.write(rec.hands, rec.matches, rec.events, rec.move_times)
            played += len(rec.matches)
            if bar is not None:
                bar.update(len(rec.matches))
            if on_records is not None:
                on_records(rec)

        try:
            if cfg.workers == 1 or len(jobs) <= 1 or cfg.interactive:
                for job in jobs:
                    run_job(job, write)
            else:
                _run_parallel(jobs, min(cfg.workers, len(jobs)), write)
        finally:
            if bar is not None:
                bar.close()
    return RunSummary(path, total, resumed, played, dropped, time.perf_counter() - t0)


def _progress(cfg: TournamentConfig, total: int, initial: int) -> Any:
    if not cfg.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="game", desc="tournament", dynamic_ncols=True)


def _run_parallel(jobs: Sequence[Job], workers: int, write: Callable[[Records], None]) -> None:
    ctx = mp.get_context("spawn")
    tasks = ctx.Queue()
    results = ctx.Queue()
    for job in jobs:
        tasks.put(job)
    for _ in range(workers):
        tasks.put(None)
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
    remaining = len(jobs)
    try:
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
        for p in procs:
            p.join(timeout=10)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
        tasks.close()
        results.close()


def replace(cfg: TournamentConfig, **changes: Any) -> TournamentConfig:
    """A validated copy of `cfg` with some fields changed."""
    new = dataclasses.replace(cfg, **changes)
    _validate(new)
    return new
