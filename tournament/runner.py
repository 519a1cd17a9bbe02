"""One job played on up to `table_batch` tables in lockstep, under the conduct rules.

Each seat of each side is served by its own agent instance (8 per job), which only ever sees
:class:`~fourhundred_env.view.SeatView` s of its seat. At each step every instance gets one
batched call for the tables where its seat is to act (or a few parts of it, sized by
:mod:`fourhundred_tournament.pacing`); finished matches are replaced by the job's next game.

Conduct (docs/rules.md, :mod:`fourhundred_tournament.conduct`): a call that raises, exceeds
``move_hard_limit_s`` or returns an illegal action has the seat's contract scored as missed at
those tables (`Engine.forfeit`), the lowest legal action is played for it, and an event is
recorded; calls slower than ``move_time_limit_s`` are recorded as slow. A match that reaches
`max_hands` hands without a winner is stopped and recorded as unfinished (a draw in the
ratings).

Each hand's row keeps its moves (the dealt hands and every action in order,
:mod:`fourhundred_tournament.db.moves`), recorded at each step for all tables at once.

Rows go to a sink as they are produced (:class:`Records`, the columns of :mod:`fourhundred_tournament.db`);
:mod:`fourhundred_tournament.tournament` streams them into SQLite, so rerunning the same tournament resumes
it, and a database from another tournament is refused unchanged.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_agents.registry import make_agent
from fourhundred_agents.remote.isolated import IsolatedAgent
from fourhundred_agents.remote.modules import import_agent_modules
from fourhundred_env.engine import Engine, Phase, State, mix64
from fourhundred_env.errors import FourHundredError
from fourhundred_env.loop import GameLoop
from fourhundred_env.rules import Rules
from fourhundred_env.streams import GAME_STREAM_SALTS
from fourhundred_env.view import seat_view
from fourhundred_tournament.conduct import Conduct, Refereed
from fourhundred_tournament.db import (
    MAX_HAND_MOVES,
    EventRow,
    HandRow,
    MatchRow,
    encode_moves,
    rows_from_columns,
    seat_columns,
    time_bin,
)
from fourhundred_tournament.deals import give_bot_key
from fourhundred_tournament.pacing import PART_SHARE, Pacing
from fourhundred_tournament.planning import Job

__all__ = [
    "LockstepRunner",
    "Records",
    "close_agents",
    "game_streams",
    "import_agent_modules",
    "job_records",
    "make_job_agents",
    "run_job",
]


@dataclass
class Records:
    """Rows a runner produced since its last flush, a list per table of :mod:`fourhundred_tournament.db`.

    The runner makes named rows (HandRow, MatchRow, EventRow); Records sent from a worker
    process arrive holding plain tuples of the same values in the same column order, which
    the database and positional readers take alike.
    """

    hands: list[HandRow] = field(default_factory=list)
    matches: list[MatchRow] = field(default_factory=list)
    events: list[EventRow] = field(default_factory=list)
    move_times: list[tuple[str, str, str, int, int]] = field(default_factory=list)
    """Rows of the time histogram (TIME_COLUMNS): decisions added per (agent, bin)."""

    def __bool__(self) -> bool:
        return bool(self.hands or self.matches or self.events or self.move_times)

    def __reduce__(self) -> tuple[Any, ...]:
        # Workers send the parent tens of thousands of rows a second: plain tuples pickle five
        # times faster than named ones (unpickling those calls a Python-level __new__ per
        # row), and the parent, which writes every row of every worker, only inserts them.
        tables = (self.hands, self.matches, self.events, self.move_times)
        return Records, tuple(list(map(tuple, rows)) for rows in tables)


def game_streams(seed: int, match_id: np.ndarray, orientation: np.ndarray) -> np.ndarray:
    """(n,) uint64 stream keys of games (match id, orientation) of a tournament seeded `seed`:
    what the agents' random draws in that game hang on (see fourhundred_agents.draws), fixed by the game
    alone, never by the batch, the worker or a resume. A sum of two hashes, so that a key
    does not give back the deal stream."""
    key = mix64(
        np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
        ^ mix64(
            np.asarray(match_id).astype(np.uint64) * np.uint64(2)
            + np.asarray(orientation).astype(np.uint64)
        )
        ^ GAME_STREAM_SALTS[0]
    )
    return mix64(key ^ GAME_STREAM_SALTS[1]) + mix64(key ^ GAME_STREAM_SALTS[2])


_BID, _PLAY = int(Phase.BID), int(Phase.PLAY)
_HAND_OVER, _MATCH_OVER = int(Phase.HAND_OVER), int(Phase.MATCH_OVER)


@dataclass
class _Tables:
    """A runner's tables: the engine state and what the runner tracks beside it, per table
    (arrays with the batch axis first)."""

    state: State
    orient: np.ndarray  # (B,) int8: 0 when pair[0] holds team 0 (seats 0 and 2)
    first_dealer: np.ndarray  # (B,) dealer of the first hand of the table's game
    hand_secs: np.ndarray  # (B, 4) float64 agent seconds per seat, in the hand in progress
    hand_decs: np.ndarray  # (B, 4) int32 agent calls per seat, in the hand in progress
    match_secs: np.ndarray  # (B,) float64 agent seconds of all seats, in the game so far
    match_played: np.ndarray  # (B,) int32 hands played (not thrown in), in the game so far
    match_forfeits: np.ndarray  # (B,) int32 forfeited contracts, in the game so far
    moves: np.ndarray  # (B, MAX_HAND_MOVES) int8 action ids played in the hand in progress
    num_moves: np.ndarray  # (B,) int64 how many of them


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
        soft = float(rules.move_time_limit_s)
        # (the runner's clock, read at each call: a caller may replace it)
        self.conduct = Conduct(soft, float(rules.move_hard_limit_s), lambda: self.clock())
        # each agent under the conduct rules, its calls cut into parts by its pacing
        self.refereed = [
            [Refereed(agent, self.conduct, Pacing(soft * PART_SHARE)) for agent in side]
            for side in agents
        ]

    def run(self, games: Sequence[tuple[int, int]]) -> None:
        """Play `games` ((match_id, orientation) each) to the end, feeding rows to the sink."""
        for rec in self.records(games):
            self.sink(rec)

    def records(self, games: Sequence[tuple[int, int]]) -> Iterator[Records]:
        """Play `games` to the end, yielding rows as they are produced: every `flush_s`
        seconds (checked whenever a hand ends) and at the end. The hard limit's SIGALRM is
        armed only around agent calls; the consumer runs between yields without it."""
        with self.conduct.armed() as use_alarm:
            yield from self._run(list(games), use_alarm)

    def _run(self, games: list[tuple[int, int]], use_alarm: bool) -> Iterator[Records]:
        """Step every table with a decision pending, until no game is left."""
        if not games:
            return
        loop, tables = self._start(deque(games))
        self._times: dict[tuple[int, int], int] = {}  # (side, time bin) -> decisions
        self._out = Records()
        last_flush = self.clock()
        while True:
            pending = loop.pending()
            if not pending.any():
                break
            actions = self._decide(tables, pending, use_alarm)
            at = np.flatnonzero(pending)  # every pending table takes its action: the hand's next
            tables.moves[at, tables.num_moves[at]] = actions[at]
            tables.num_moves[at] += 1
            ended = loop.step(actions, pending, validate=False)  # rows: the loop's hooks
            if ended.size == 0:
                continue
            now = self.clock()  # checked only when a hand ends: rows come in hands
            if now - last_flush >= self.flush_s:
                self._out.move_times = self._time_rows()
                yield self._out
                self._out = Records()
                last_flush = now
        self._out.move_times = self._time_rows()
        if self._out:
            yield self._out

    def _time_rows(self) -> list[tuple[str, str, str, int, int]]:
        """The time histogram's rows since the last flush (and the counts emptied)."""
        rows = [(*self.pair, self.pair[sd], b, n) for (sd, b), n in sorted(self._times.items())]
        self._times.clear()
        return rows

    def _start(self, todo: deque[tuple[int, int]]) -> tuple[GameLoop, _Tables]:
        """The first `table_batch` games of `todo` (taken from it) dealt on fresh tables, in
        a loop that takes the rest of `todo` as games end."""
        b = min(self.table_batch, len(todo))
        first = [todo.popleft() for _ in range(b)]
        state = self.engine.init(
            b, seed=self.seed, match_id=np.array([m for m, _ in first], np.int64)
        )
        orient = np.array([o for _, o in first], np.int8)
        state.stream = game_streams(self.seed, state.match_id, orient)
        tables = _Tables(
            state, orient, first_dealer=state.dealer.copy(),
            hand_secs=np.zeros((b, 4)), hand_decs=np.zeros((b, 4), np.int32),
            match_secs=np.zeros(b), match_played=np.zeros(b, np.int32),
            match_forfeits=np.zeros(b, np.int32), moves=np.zeros((b, MAX_HAND_MOVES), np.int8),
            num_moves=np.zeros(b, np.int64),
        )  # fmt: skip
        for side in self.agents:
            for agent in side:
                agent.reset(b)
        loop = GameLoop(
            self.engine, state, max_hands=self.max_hands, matches=iter(todo),
            on_hand_end=lambda t: self._hands_ended(tables, t),
            on_match_end=lambda t: self._out.matches.extend(self._match_rows(tables, t)),
            on_match_start=lambda t, games: self._games_started(tables, t, games),
        )  # fmt: skip
        loop.deal()
        return loop, tables

    def _decide(self, tables: _Tables, pending: np.ndarray, use_alarm: bool) -> np.ndarray:
        """(B,) int64 actions at every `pending` table (-1 elsewhere): one call per agent
        instance, for the tables where its seat of its side is to act."""
        state = tables.state
        mask = self.engine.legal_mask(state)
        to_play = state.to_play
        side_of = (to_play.astype(np.int8) & 1) ^ tables.orient  # side of the seat to play
        group = np.where(pending, side_of * 4 + to_play, -1)
        actions = np.full(pending.size, -1, np.int64)
        for g in np.unique(group[pending]):
            side, seat = divmod(int(g), 4)
            idx = np.flatnonzero(group == g)
            actions[idx] = self._ask(tables, side, seat, idx, mask, self._out, use_alarm)
        return actions

    def _ask(
        self, tables: _Tables, side: int, seat: int, idx: np.ndarray, mask: np.ndarray,
        out: Records, use_alarm: bool,
    ) -> np.ndarray:  # fmt: skip
        """(K,) int64 actions of `side`'s agent at `seat` for tables `idx`, its turn under the
        conduct rules (:class:`~fourhundred_tournament.conduct.Refereed`): a failed call or an
        illegal action forfeits the contract at that table and plays the lowest legal action
        instead; a slow call is recorded."""
        state = tables.state
        seats = np.full(idx.size, seat, np.int8)
        turn = self.refereed[side][seat].turn(
            state.phase[idx] == _BID,
            lambda at: seat_view(self.engine, state, idx[at], seats[at], mask),
            use_alarm,
        )  # fmt: skip
        for at, n, seconds in turn.parts:
            rows = idx[at]
            tables.hand_secs[rows, seat] += seconds / n  # a part's time split evenly
            tables.hand_decs[rows, seat] += 1
            tb = (side, time_bin(seconds / n))
            self._times[tb] = self._times.get(tb, 0) + n
        acts, bad, why, move_s = turn.actions, turn.bad, turn.why, turn.move_seconds
        label = self.pair[side]
        for j, kind, d, dt in self.conduct.events(bad, why, move_s):
            out.events.append(self._event(tables, int(idx[j]), seat, label, kind, d, dt))
        if np.count_nonzero(bad):
            acts = np.where(bad, np.argmax(mask[idx], axis=1), acts)
            t_bad = idx[bad]
            self.engine.forfeit(state, t_bad, np.full(t_bad.size, seat))
            tables.match_forfeits[t_bad] += 1
        return acts

    def _hands_ended(self, tables: _Tables, ended: np.ndarray) -> None:
        """Record the hands that just ended at tables `ended`; their counts start afresh."""
        state = tables.state
        tables.match_played[ended] += ~state.thrown_in[ended]
        tables.match_secs[ended] += tables.hand_secs[ended].sum(axis=1)
        self._out.hands.extend(self._hand_rows(tables, ended))
        tables.hand_secs[ended] = 0
        tables.hand_decs[ended] = 0
        tables.num_moves[ended] = 0

    def _games_started(self, tables: _Tables, fresh: np.ndarray, games: list) -> None:
        """The job's next games (match_id, orientation) have just started at tables `fresh`
        (their games ended): their orientation, stream and counts."""
        state = tables.state
        tables.orient[fresh] = [o for _, o in games]
        state.stream[fresh] = game_streams(self.seed, state.match_id[fresh], tables.orient[fresh])
        tables.first_dealer[fresh] = state.dealer[fresh]
        tables.match_played[fresh] = 0
        tables.match_forfeits[fresh] = 0
        tables.match_secs[fresh] = 0.0

    # -- rows -------------------------------------------------------------------------------
    def _labels(self, orient: np.ndarray) -> tuple[list[str], list[str]]:
        """Labels of the agents holding team 0 and team 1 at tables of orientations `orient`."""
        a, b = self.pair
        team0 = [a if o == 0 else b for o in orient.tolist()]
        team1 = [b if o == 0 else a for o in orient.tolist()]
        return team0, team1

    def _event(
        self, tables: _Tables, t: int, seat: int, label: str, kind: str, detail: str, dt: float
    ) -> EventRow:
        """The conduct event of `label`'s agent at `seat` of table `t`, in its current hand."""
        state = tables.state
        return EventRow(
            pair_a=self.pair[0], pair_b=self.pair[1], match_id=int(state.match_id[t]),
            orientation=int(tables.orient[t]), hand_index=int(state.hand_index[t]) - 1,
            seat=seat, agent=label, kind=kind, detail=detail, seconds=float(dt),
        )  # fmt: skip

    def _hand_rows(self, tables: _Tables, t: np.ndarray) -> list[HandRow]:
        """Rows of the hands that just ended at tables `t` (the state is past their end)."""
        state, orient = tables.state, tables.orient
        team0, team1 = self._labels(orient[t])
        n = t.size
        return rows_from_columns(HandRow, {
            "pair_a": [self.pair[0]] * n, "pair_b": [self.pair[1]] * n,
            "match_id": state.match_id[t].tolist(), "orientation": orient[t].tolist(),
            "hand_index": (state.hand_index[t] - 1).tolist(), "team0": team0, "team1": team1,
            "dealer": ((state.dealer[t] - 1) & 3).tolist(),  # the deal has passed on already
            "required_total": state.required_total[t].tolist(),
            "thrown_in": state.thrown_in[t].astype(int).tolist(),
            "redeal_seat": state.redeal_seat[t].tolist(),
            "claim_seat": state.claim_seat[t].tolist(),
            **seat_columns("bid", state.bids[t]),
            **seat_columns("tricks", state.tricks_won[t]),
            **seat_columns("points", state.hand_points[t]),
            **seat_columns("score", state.scores[t]),
            **seat_columns("forfeit", state.forfeit[t].astype(int)),
            **seat_columns("decisions", tables.hand_decs[t]),
            **seat_columns("seconds", tables.hand_secs[t]),
            "moves": encode_moves(state.dealt_set[t], tables.moves[t], tables.num_moves[t]),
        })  # fmt: skip

    def _match_rows(self, tables: _Tables, t: np.ndarray) -> list[MatchRow]:
        """Rows of the games that just ended at tables `t`."""
        state, orient = tables.state, tables.orient
        team0, team1 = self._labels(orient[t])
        winner_team = state.winner[t].tolist()
        winner = [None if w < 0 else (t0 if w == 0 else t1)
                  for w, t0, t1 in zip(winner_team, team0, team1, strict=True)]  # fmt: skip
        n_hands = state.hand_index[t].tolist()
        n_played = tables.match_played[t].tolist()
        n = t.size
        return rows_from_columns(MatchRow, {
            "pair_a": [self.pair[0]] * n, "pair_b": [self.pair[1]] * n,
            "match_id": state.match_id[t].tolist(), "orientation": orient[t].tolist(),
            "team0": team0, "team1": team1, "first_dealer": tables.first_dealer[t].tolist(),
            "finished": [int(w >= 0) for w in winner_team], "winner_team": winner_team,
            "winner": winner, "num_hands": n_hands, "num_played": n_played,
            "num_thrown_in": [h - p for h, p in zip(n_hands, n_played, strict=True)],
            **seat_columns("score", state.scores[t]), "target": state.target[t].tolist(),
            "forfeits": tables.match_forfeits[t].tolist(),
            "decision_seconds": tables.match_secs[t].tolist(),
        })  # fmt: skip


def make_job_agents(job: Job) -> list[list[Agent]]:
    """The 2 x 4 agent instances of a job, each seeded from the config; the agents listed in
    `job.isolated` each in a process of its own (started at its first move); ``cmd:`` bots
    get the job's bot key (:mod:`fourhundred_tournament.deals`)."""
    import_agent_modules(job.agent_modules)
    rules = Rules.from_dict(job.rules)

    def make(side: int, seed: int) -> Agent:
        spec = job.spec(side)
        if job.pair[side] in job.isolated:
            return IsolatedAgent(spec, rules, seed, job.agent_modules)
        return give_bot_key(make_agent(spec, rules, seed=seed), job.bot_key)

    return [[make(side, job.agent_seed(side, seat)) for seat in range(4)] for side in (0, 1)]


def close_agents(agents: Sequence[Sequence[Agent]]) -> None:
    """Release what each agent holds (`Agent.close`: the processes of the bots that have them)."""
    for side in agents:
        for agent in side:
            agent.close()


def run_job(job: Job, sink: Callable[[Records], None]) -> None:
    """Play one job in this process (its bot processes are stopped at the end)."""
    for rec in job_records(job):
        sink(rec)


def job_records(job: Job) -> Iterator[Records]:
    """Play one job in this process, yielding its rows as they are produced (every
    `job.flush_seconds`); its bot processes are stopped when the generator ends or is closed."""
    agents = make_job_agents(job)
    try:
        runner = LockstepRunner(
            Rules.from_dict(job.rules), job.pair, agents, job.engine_seed, job.max_hands,
            job.table_batch, lambda rec: None, job.flush_seconds,
        )  # fmt: skip
        yield from runner.records(job.games)
    finally:
        close_agents(agents)
