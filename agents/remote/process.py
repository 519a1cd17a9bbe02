"""Bots in their own processes: a child process the caller can always get an answer from, or
give up on, within a deadline, then kill and start again.

:class:`BotProcess` runs one command with pipes to its stdin and stdout; reads take a
deadline (``select``, so a bot that never answers, or swallows every signal, cannot hold the
caller); its stderr is drained in blocks by a thread into a short tail (a bot that logs a lot
never blocks, and a crash can be reported with its last words). The child runs in its own
session (a Ctrl-C at the terminal reaches the tournament, which stops it, not the bot) and, on
Linux, is killed by the system if the process that started it dies (``PR_SET_PDEATHSIG``).
Killing it kills its whole process group, even after the bot itself has exited; a child that
left the group (``setsid``) is caught only by a sandbox's PID namespace
(:mod:`fourhundred_agents.remote.sandbox`).

:class:`SupervisedAgent` is the base of the agents served this way (:mod:`fourhundred_agents.remote.external`
for any program speaking the JSON-lines bot protocol, :mod:`fourhundred_agents.remote.isolated` for a Python
bot): `act_timed` returns a :class:`Reply` with a failure per table that failed (timeout,
crash, garbage) instead of raising, the process is killed and restarted after a timeout or a
broken exchange, and it gives up (every later move fails at once) after a few starts in a
row that fail.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

__all__ = ["BotFailure", "BotGaveUpError", "BotProcess", "Reply", "SupervisedAgent"]

MAX_FAILED_STARTS = 3
"""Starts in a row that fail before a supervised agent gives up on its bot."""
MIN_START_S = 10.0
"""A bot has at least this long to start and answer its first message (or the hard limit)."""
LINE_CHARS = 300
"""Characters kept of each line of a bot's stderr (its tail is shown when it fails)."""


class BotFailure(Exception):
    """One exchange with a bot process failed: `kind` is "timeout" or "error" (the conduct
    event), `detail` what happened; `restart`: the process must be killed and started again."""

    def __init__(self, kind: str, detail: str, restart: bool = True) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.restart = kind, detail, restart


class BotGaveUpError(FourHundredError):
    """A supervised bot failed to start MAX_FAILED_STARTS times in a row: the run stops (what
    it finished is kept) rather than forfeit every move the bot has left."""


@dataclass
class Reply:
    """What a supervised agent did with a batched call of K tables."""

    actions: np.ndarray
    """(K,) int64: the bot's answer per table, -1 where it failed."""
    seconds: np.ndarray
    """(K,) float64: the time each table's move took (for the time limits)."""
    failures: dict[int, tuple[str, str]] = field(default_factory=dict)
    """row -> (kind, detail) of the tables where the bot failed (kind "timeout" or "error")."""
    elapsed: float = 0.0
    """The bot's time for the whole call (starting a process not included)."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to kill this process when the one that started it dies (PR_SET_PDEATHSIG)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)


try:  # looked up before any fork: the child only calls it
    _PRCTL = ctypes.CDLL("libc.so.6", use_errno=True).prctl if sys.platform == "linux" else None
except OSError:  # pragma: no cover
    _PRCTL = None


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


class BotProcess:
    """One running child process (see the module docstring). `argv` is started at once;
    FourHundredError if it cannot be."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        stderr_lines: int = 20,
        cleanup: Callable[[], None] | None = None,
        pass_fds: Sequence[int] = (),
    ) -> None:
        """`cleanup`: called once the process is gone (a sandbox's scratch folder); `pass_fds`:
        descriptors the child inherits (a sandbox's seccomp filter), closed here once it started."""
        self.argv = list(argv)
        self._cleanup = cleanup
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None, start_new_session=True,
                preexec_fn=_die_with_parent if _PRCTL is not None else None, bufsize=0,
                pass_fds=tuple(pass_fds),
            )  # fmt: skip
        except OSError as e:
            _close(pass_fds)
            if cleanup is not None:
                cleanup()
            raise FourHundredError(
                f"cannot start the bot {' '.join(self.argv)!r} ({e.strerror or e}): expected a "
                "command that runs a bot"
            ) from None
        _close(pass_fds)
        os.set_blocking(self.proc.stdin.fileno(), False)  # a write never waits past a deadline
        self._buffer = bytearray()
        self._tail: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._stop = threading.Event()
        self._stderr = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr.start()

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.proc.pid

    def _drain_stderr(self) -> None:
        """Keep the last lines of stderr (each cut to its first LINE_CHARS characters), reading
        blocks of 64 KiB: a bot that logs megabytes a move costs a few dozen reads, not one
        system call per byte. Stops at end of file or once the process is killed (a child
        that escaped with the pipe cannot hold the thread)."""
        fd = self.proc.stderr.fileno()
        head = bytearray()  # the start of the line being read
        keep = self._tail.maxlen or 1
        with contextlib.suppress(OSError, ValueError):
            while not self._stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                *complete, rest = chunk.split(b"\n")
                if len(complete) > keep:  # only the last lines can be in the tail
                    complete, head = complete[-keep:], bytearray()
                for part in complete:
                    head += part[: max(0, LINE_CHARS - len(head))]
                    self._tail.append(head.decode(errors="replace").rstrip()[:LINE_CHARS])
                    head = bytearray()
                head += rest[: max(0, LINE_CHARS - len(head))]
        if head:
            self._tail.append(head.decode(errors="replace").rstrip()[:LINE_CHARS])

    def stderr_tail(self, lines: int = 3) -> str:
        """The last `lines` lines the bot wrote to stderr, joined with ' | ' ('' if none)."""
        return " | ".join(list(self._tail)[-lines:])

    def exit_code(self) -> int | None:
        """The exit code once the process has ended, else None."""
        return self.proc.poll()

    def write(self, data: bytes, deadline: float) -> None:
        """Write all of `data` to the bot's stdin before `deadline` (time.monotonic()), or raise
        BotFailure (a bot that stops reading cannot block the caller)."""
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotFailure("timeout", "did not read its input in time")
            _, ready, _ = select.select([], [fd], [], left)
            if not ready:
                continue
            try:
                n = os.write(fd, view[: 1 << 16])
            except BlockingIOError:
                continue  # the pipe filled up between select and write
            except OSError:  # a broken pipe: the bot is gone
                raise BotFailure("error", self._ended("closed its input")) from None
            view = view[n:]

    def _fill(self, deadline: float) -> None:
        """Read what the bot has written so far into the buffer, waiting until `deadline`."""
        fd = self.proc.stdout.fileno()
        left = deadline - time.monotonic()
        if left <= 0:
            raise BotFailure("timeout", "no answer in time")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            raise BotFailure("timeout", "no answer in time")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise BotFailure("error", self._ended("closed its output"))
        self._buffer += chunk

    def read_line(self, deadline: float, limit: int = 1 << 20) -> bytes:
        """One line from the bot's stdout (without the newline) before `deadline`."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > limit:
                raise BotFailure("error", f"wrote a line longer than {limit} bytes")
            self._fill(deadline)

    def read_exact(self, n: int, deadline: float) -> bytes:
        """Exactly `n` bytes from the bot's stdout before `deadline`."""
        while len(self._buffer) < n:
            self._fill(deadline)
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    def _ended(self, what: str) -> str:
        """What to say when the bot's pipe closed: its exit code and last stderr lines."""
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            code = None
        self._stderr.join(timeout=0.5)
        said = self.stderr_tail()
        status = f"exited with code {code}" if code is not None else what
        return status + (f"; stderr: {said}" if said else "")

    def kill(self) -> None:
        """Kill the process and everything in its process group, even once the process itself
        has exited (its children may not have), reap it and release its pipes. A sandboxed
        bot's whole PID namespace dies with its first process (fourhundred_agents.remote.sandbox)."""
        with contextlib.suppress(OSError):  # ESRCH: the group is empty
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self._stop.set()
        self._stderr.join(timeout=1)
        with contextlib.suppress(OSError):
            self.proc.stderr.close()
        cleanup, self._cleanup = self._cleanup, None
        if cleanup is not None:
            cleanup()

    def close(self, grace_s: float = 1.0) -> None:
        """Close the bot's stdin, give it `grace_s` to exit, then kill it."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace_s)
        self.kill()


class SupervisedAgent(Agent):
    """An agent whose bot runs in a child process (see the module docstring).

    Subclasses implement `_argv` (the command), `_handshake` (the first exchange after a
    start) and `_exchange` (one batched call: actions and per-row failures and seconds; it
    calls `_restart` when the process must go, and `_running` to get a fresh one).
    """

    stateless = False
    times_itself = True

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed)
        self._bot: BotProcess | None = None
        self._failed_starts = 0
        self._num_tables = 1
        self.restarts = 0
        self.bot_name: str | None = None
        self._last_stderr = ""

    # -- subclass hooks ---------------------------------------------------------------------
    def _argv(self) -> list[str]:
        raise NotImplementedError

    def _env(self) -> dict[str, str] | None:
        return None

    def _launch(self) -> BotProcess:
        """A new process of the bot (FourHundredError if it cannot start)."""
        return BotProcess(self._argv(), self._env())

    def _handshake(self, bot: BotProcess, deadline: float) -> None:
        raise NotImplementedError

    def _exchange(self, bot: BotProcess, view: SeatView, hard: float) -> Reply:
        raise NotImplementedError

    def _goodbye(self, bot: BotProcess) -> None:
        """Tell a running bot that the games are over (before its stdin is closed)."""

    # -- the process ------------------------------------------------------------------------
    def _running(self, hard: float) -> BotProcess:
        """The bot process, started (and greeted) if it is not running; BotFailure if it
        cannot be (the table's move is forfeited), BotGaveUpError once starting has failed
        MAX_FAILED_STARTS times in a row."""
        if self._bot is not None:
            return self._bot
        try:
            bot = self._launch()
        except FourHundredError as e:
            raise self._failed_start(BotFailure("error", str(e))) from None
        try:
            self._handshake(bot, time.monotonic() + max(hard, MIN_START_S))
        except BotFailure as e:
            bot.kill()
            self._last_stderr = bot.stderr_tail()
            raise self._failed_start(BotFailure(e.kind, f"did not start: {e.detail}")) from None
        self._bot = bot
        self._failed_starts = 0
        return bot

    def _failed_start(self, failure: BotFailure) -> Exception:
        """`failure`, or BotGaveUpError when it is the last start in a row allowed."""
        self._failed_starts += 1
        if self._failed_starts < MAX_FAILED_STARTS:
            return failure
        tail = self.stderr_tail().strip().splitlines()
        said = f"; its stderr ended: {tail[-1][:200]!r}" if tail else ""
        return BotGaveUpError(
            f"agent {self.name!r} failed to start {MAX_FAILED_STARTS} times in a row (last: "
            f"{failure.detail}){said}: the run stopped, keeping every game it finished; expected "
            "a bot that starts: fix it and rerun the same command to resume"
        )

    def _restart(self) -> None:
        """Kill the bot; the next call starts a fresh one."""
        if self._bot is not None:
            self._bot.kill()
            self._last_stderr = self._bot.stderr_tail()
            self._bot = None
            self.restarts += 1

    def stderr_tail(self) -> str:
        """The last lines the bot wrote to stderr (its current process, else the last one)."""
        return self._bot.stderr_tail() if self._bot is not None else self._last_stderr

    def check(self) -> None:
        """Start the bot and greet it, then stop it; FourHundredError naming the problem if it
        cannot start or answer (a tournament checks its agents before playing)."""
        try:
            self._running(float(self.rules.move_hard_limit_s))
            self._failed_starts = 0
        except BotFailure as e:
            raise FourHundredError(f"agent {self.name!r}: {e.detail}") from None
        finally:
            self.close()

    # -- the agent protocol -----------------------------------------------------------------
    def reset(self, num_tables: int) -> None:
        """Record `num_tables` for the handshake of the next process start."""
        self._num_tables = num_tables

    def act_timed(self, view: SeatView, hard: float) -> Reply:
        """The bot's actions for the K tables of `view`, never raising for what the bot does:
        failed tables are in the reply's `failures`, and the bot is restarted after one."""
        k = view.size
        try:
            bot = self._running(hard)
        except BotFailure as e:
            return Reply(np.full(k, -1, np.int64), np.zeros(k),
                         {j: (e.kind, e.detail) for j in range(k)})  # fmt: skip
        self._failed_starts = 0
        return self._exchange(bot, view, hard)

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 actions; FourHundredError naming the first failure (outside a
        tournament, which uses `act_timed`, a failure is an error)."""
        reply = self.act_timed(view, float(self.rules.move_hard_limit_s))
        if reply.failures:
            j, (kind, detail) = min(reply.failures.items())
            raise FourHundredError(f"agent {self.name!r} at table {j}: {kind}: {detail}")
        return reply.actions

    def close(self) -> None:
        """Stop the bot process (if running): a goodbye, its stdin closed, killed if it lingers."""
        bot, self._bot = self._bot, None
        if bot is None:
            return
        with contextlib.suppress(BotFailure, OSError):
            self._goodbye(bot)
        bot.close()
        self._last_stderr = bot.stderr_tail()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if self._bot is not None:
                self._bot.kill()
