"""The conduct of a bot (docs/rules.md): every batched call timed and judged against the limits.

A call that raises, exceeds ``move_hard_limit_s`` or returns an illegal action is a forfeit at
each of its tables; a call slower than ``move_time_limit_s`` is a slow move at each of them.
A call's time is charged to every table in it, each of which waited that long for its move.

The hard limit is enforced two ways. A bot in its own process (``Agent.times_itself``:
:mod:`fourhundred_agents.remote.process`, a ``cmd:`` bot or a Python bot isolated by the config's
``isolation``) is waited for at most that long, then killed and restarted; the timeout is
recorded and the match goes on, whatever the bot does with signals and in whatever thread the
runner runs. A bot in this process (the bundled ones, trusted) is interrupted by SIGALRM, which
works in the main thread only and which a bot can swallow: that is why custom bots are isolated
by default.

Numba compiling (or loading compiled code from its cache) inside a call of a bot in this
process is not counted as the move's time, as a bot process's start is not, and the hard
limit's alarm waits while it lasts (:class:`_CompileTime`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba.core import event as numba_event

from fourhundred_agents.protocol import Agent
from fourhundred_env.cards import NUM_ACTIONS, action_text
from fourhundred_env.view import SeatView
from fourhundred_tournament.pacing import Pacing

__all__ = ["Conduct", "Outcome", "Refereed", "Turn", "check_actions"]


@dataclass
class Outcome:
    """One batched agent call under the conduct rules."""

    actions: Any  # what the agent returned (checked by check_actions)
    seconds: float  # wall time of the call
    move_seconds: np.ndarray  # (K,) float64: the time charged to each table's move
    failures: dict[int, tuple[str, str]]  # row -> (kind, detail): timeout, error, illegal


class _MoveTimeout(BaseException):
    """Raised by SIGALRM inside an agent call that passed the hard limit (not an Exception,
    so an agent's own ``except Exception`` cannot swallow it)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _MoveTimeout


class _CompileTime(numba_event.Listener):
    """Numba compiling, or loading compiled code from its cache, inside an agent call of the
    runner's thread (numba's compiler-lock events, which cover both): that is not the move's
    time, as starting a bot's process is not, and the hard limit's alarm is paused while it
    lasts, so that it never interrupts the compiler."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.thread: int | None = None  # the thread of the call being timed, None between
        self.alarm = False
        self.depth = 0
        self.seconds = 0.0  # compiling in the call being timed (or the last one)
        self._t0 = 0.0
        self._left = 0.0

    def start(self, alarm: bool) -> None:
        self.thread, self.alarm, self.depth, self.seconds = threading.get_ident(), alarm, 0, 0.0

    def stop(self) -> None:
        self.thread = None

    def on_start(self, event: object) -> None:
        if self.thread != threading.get_ident():
            return
        if self.depth == 0:
            self._t0 = self.clock()
            if self.alarm:  # paused: the seconds it had left are given back at the end
                self._left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        self.depth += 1

    def on_end(self, event: object) -> None:
        if self.thread != threading.get_ident() or self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            self.seconds += self.clock() - self._t0
            if self.alarm and self._left > 0:
                signal.setitimer(signal.ITIMER_REAL, self._left)


_COMPILING = "numba:compiler_lock"


class Conduct:
    """The conduct rules of one runner: `soft` (``move_time_limit_s``) and `hard`
    (``move_hard_limit_s``) seconds, calls timed by `clock`."""

    def __init__(self, soft: float, hard: float, clock: Callable[[], float]) -> None:
        self.soft = soft
        self.hard = hard
        self.clock = clock
        self._compiling = _CompileTime(clock)

    @contextmanager
    def armed(self) -> Iterator[bool]:
        """While it lasts, agent calls may be interrupted by SIGALRM at the hard limit (in the
        main thread, where the system has interval timers) and numba's compiling is not
        counted; yields whether the alarm is in use (`use_alarm` of :meth:`call`). The alarm
        is armed only inside calls; the old SIGALRM handler is restored at the end."""
        use_alarm = (
            hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        old = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
        numba_event.register(_COMPILING, self._compiling)
        try:
            yield use_alarm
        finally:
            numba_event.unregister(_COMPILING, self._compiling)
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)

    def call(self, agent: Agent, view: SeatView, use_alarm: bool) -> Outcome:
        """One batched call of `agent` under the conduct rules (see the module docstring)."""
        if agent.times_itself:
            reply = agent.act_timed(view, self.hard)
            return Outcome(reply.actions, reply.elapsed, reply.seconds, reply.failures)
        out, dt, kind, detail = self._call_here(agent, view, use_alarm)
        k = view.size
        failures = {} if kind is None else {j: (kind, detail) for j in range(k)}
        return Outcome(out, dt, np.full(k, dt), failures)

    def _call_here(
        self, agent: Agent, view: SeatView, use_alarm: bool
    ) -> tuple[Any, float, str | None, str]:
        """(output, seconds, failure kind or None, detail) of a call in this process."""
        compiling = self._compiling
        t0 = self.clock()
        compiling.start(use_alarm)
        try:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, self.hard)
            try:
                out = agent.act(view)
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                compiling.stop()
        except _MoveTimeout:
            dt = self.clock() - t0 - compiling.seconds
            return None, dt, "timeout", f"interrupted after {dt:.3f} s (hard limit {self.hard} s)"
        except Exception as e:
            dt = self.clock() - t0 - compiling.seconds
            return None, dt, "error", f"raised {type(e).__name__}: {e}"[:500]
        dt = self.clock() - t0 - compiling.seconds
        if dt > self.hard:
            return None, dt, "timeout", f"took {dt:.3f} s (hard limit {self.hard} s)"
        return out, dt, None, ""

    def judge(
        self, res: Outcome, legal_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[str, str]]]:
        """(actions (n,) int64, bad (n,) bool, reasons) of a call's outcome at n tables whose
        (n, 66) legal masks are `legal_mask`: `reasons` maps each bad row to (kind, detail),
        the call's failure there (timeout, error) or else the illegal action it returned."""
        n = legal_mask.shape[0]
        if len(res.failures) == n:  # the whole call failed (always so in this process)
            return np.zeros(n, np.int64), np.ones(n, bool), dict(res.failures)
        acts, bad, kind, detail = check_actions(res.actions, legal_mask)
        reasons = {
            j: (kind, detail(j) if callable(detail) else detail)
            for j in np.flatnonzero(bad).tolist()
            if j not in res.failures
        }
        for j, failure in res.failures.items():
            bad[j] = True
            reasons[j] = failure
        return acts, bad, reasons

    def events(
        self, bad: np.ndarray, why: dict[int, tuple[str, str]], move_s: np.ndarray
    ) -> list[tuple[int, str, str, float]]:
        """(position, kind, detail, seconds) of the conduct events of one agent's turn at K
        tables: a forfeit at each `bad` position (its kind and detail in `why`), then a slow
        move at each other position whose (K,) `move_s` passed the soft limit."""
        found = []
        for j in np.flatnonzero(bad).tolist() if np.count_nonzero(bad) else ():
            kind, detail = why[j]
            found.append((j, kind, detail, float(move_s[j])))
        slow = ~bad & (move_s > self.soft)
        for j in np.flatnonzero(slow) if np.count_nonzero(slow) else ():
            dt = float(move_s[j])
            found.append((int(j), "slow", f"took {dt:.3f} s (time limit {self.soft} s)", dt))
        return found


@dataclass
class Turn:
    """One agent's turn at K tables under the conduct rules."""

    actions: np.ndarray  # (K,) int64: what it played (judged; where bad, nothing yet)
    bad: np.ndarray  # (K,) bool: a forfeit at that table
    why: dict[int, tuple[str, str]]  # position -> (kind, detail) where bad
    move_seconds: np.ndarray  # (K,) float64: the time charged to each table's move
    parts: list[tuple[np.ndarray | slice, int, float]]  # (positions, how many, seconds) a call


class Refereed:
    """An agent under the conduct rules, asked at many tables in the parts its pacing gives
    (:mod:`fourhundred_tournament.pacing`), each call timed and judged by `conduct`."""

    def __init__(self, agent: Agent, conduct: Conduct, pacing: Pacing) -> None:
        self.agent = agent
        self.conduct = conduct
        self.pacing = pacing

    def turn(
        self, bidding: np.ndarray, view_of: Callable[[np.ndarray | slice], SeatView],
        use_alarm: bool,
    ) -> Turn:  # fmt: skip
        """The agent's turn at K tables (`bidding` (K,) bool: whether each bids), whose views
        `view_of(positions)` gives. After a part passes the hard limit, the rest of the turn
        is charged the same timeout without being asked (a hanging bot costs one hard limit
        a turn, as in one piece)."""
        pacing, k = self.pacing, bidding.size
        turn = Turn(np.zeros(k, np.int64), np.zeros(k, bool), {}, np.zeros(k), [])
        left = np.arange(k)  # positions not asked yet
        while left.size:
            part, quick = pacing.next_part(bidding, left)
            whole = part is left  # (the usual case: every table in one call)
            left = left[:0] if whole else np.setdiff1d(left, part, assume_unique=True)
            at = slice(None) if whole and part.size == k else part
            view = view_of(at)
            res = self.conduct.call(self.agent, view, use_alarm)
            if not quick or res.seconds * 16 > pacing.budget:
                pacing.learn(bidding[at], res.seconds)
            turn.parts.append((at, part.size, res.seconds))
            turn.move_seconds[at] = res.move_seconds
            got, wrong, reasons = self.conduct.judge(res, view.legal_mask)
            turn.actions[at], turn.bad[at] = got, wrong
            if not reasons:
                continue
            for j, reason in reasons.items():
                turn.why[int(part[j])] = reason
            if len(res.failures) == part.size and all(
                f[0] == "timeout" for f in res.failures.values()
            ):
                first = turn.why[int(part[0])][1]
                note = f"not asked: it passed the hard limit earlier in this call ({first})"
                for j in left.tolist():
                    turn.why[j] = ("timeout", note)
                turn.bad[left] = True
                break
        return turn


def check_actions(result: Any, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, str, Any]:
    """(actions (K,) int64, bad (K,) bool, kind, detail) for an agent's output against `mask`
    (K, 66): `detail` is a text, or a function of a bad position giving its text."""
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
    if arr.shape != (k,) or arr.dtype.kind not in "iub":  # integers (or bools)
        detail = f"returned {arr.dtype} array of shape {arr.shape}: expected ({k},) int64 actions"
        return np.zeros(k, np.int64), np.ones(k, bool), "illegal", detail
    acts = arr.astype(np.int64)
    in_range = (acts >= 0) & (acts < NUM_ACTIONS)
    ok = in_range & mask[np.arange(k), np.where(in_range, acts, 0)]

    def detail(j: int) -> str:
        a = int(acts[j])
        given = action_text(a) if 0 <= a < NUM_ACTIONS else "out of range"
        legal = " ".join(action_text(x) for x in np.flatnonzero(mask[j]))
        return f"returned illegal action {a} ({given}); legal: {legal}"

    return acts, ~ok, "illegal", detail
