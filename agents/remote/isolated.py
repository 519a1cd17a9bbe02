"""A Python bot in its own process: :class:`IsolatedAgent` plays any registered agent spec in
a child Python process (``python -m fourhundred_agents.remote.isolated``), so that one that hangs, swallows the
timeout or crashes the interpreter costs a forfeited move, not the tournament.

The parent sends pickled requests (length-prefixed frames) on the child's stdin: ``init``
(the spec, the rules, the seed, the modules that register agents), then ``act`` with a
SeatView's records (and the batch size after a reset). The child answers each with one
JSON line: ``{"ok": name}``, ``{"actions": [...]}`` or ``{"error": "..."}``. Its own stdout
is moved to stderr, so a bot that prints cannot garble the answers. The whole batched call
must be answered within the hard limit (as in process); past it the child is killed and a
fresh one serves the next call.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fourhundred_agents.remote.process import BotFailure, BotProcess, Reply, SupervisedAgent
from fourhundred_env.registry import entry, parse_spec, spec_settings
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

__all__ = ["IsolatedAgent", "serve"]


def _frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(8, "big") + data


class IsolatedAgent(SupervisedAgent):
    """The agent `spec` played in a child process (see the module docstring).

    `modules`: modules the child imports first (``--agent-module``: they register agents);
    the module that registered `spec`'s name here is imported too.
    """

    def __init__(
        self, spec: str, rules: Rules | None = None, seed: int = 0, modules: Sequence[str] = ()
    ) -> None:
        super().__init__(rules, seed)
        self.spec = spec
        self.name = spec
        self.modules = tuple(modules)
        spec_settings(spec)  # an unknown name or bad settings: refused here, at once
        module = getattr(entry(parse_spec(spec)[0]).factory, "__module__", None)
        self.factory_module = module if module not in (None, "__main__") else None
        self._pending_reset: int | None = None

    def _argv(self) -> list[str]:
        return [sys.executable, "-m", "fourhundred_agents.remote.isolated"]

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # the child finds what this process finds (the current folder, test folders...)
        env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)
        return env

    def _handshake(self, bot: BotProcess, deadline: float) -> None:
        init = ("init", self.spec, self.rules.to_dict(), self.seed, self.modules,
                self.factory_module, self._num_tables)  # fmt: skip
        bot.write(_frame(init), deadline)
        answer = _answer(bot, deadline)
        if "error" in answer:
            raise BotFailure("error", str(answer["error"])[:500], restart=True)
        self.bot_name = str(answer.get("ok", self.spec))
        self._pending_reset = None

    def reset(self, num_tables: int) -> None:
        """Record `num_tables`; the child resets its agent with the next ``act`` it is sent."""
        super().reset(num_tables)
        self._pending_reset = num_tables

    def _exchange(self, bot: BotProcess, view: SeatView, hard: float) -> Reply:
        """One batched call in the child, answered within `hard` seconds."""
        k = view.size
        t0 = time.monotonic()
        failures: dict[int, tuple[str, str]] = {}
        actions = np.full(k, -1, np.int64)
        try:
            bot.write(_frame(("act", view.records, self._pending_reset)), t0 + hard)
            self._pending_reset = None
            answer = _answer(bot, t0 + hard)
        except BotFailure as e:
            dt = time.monotonic() - t0
            if e.kind == "timeout":
                detail = f"no answer after {dt:.3f} s (hard limit {hard} s); its process was " \
                         "killed and restarted"  # fmt: skip
            else:
                detail = f"its process failed ({e.detail}); restarted"
            self._restart()
            return Reply(actions, np.full(k, dt), {j: (e.kind, detail) for j in range(k)}, dt)
        dt = time.monotonic() - t0
        if "error" in answer:
            failures = {j: ("error", str(answer["error"])[:500]) for j in range(k)}
        else:
            got = answer.get("actions")
            arr = np.asarray(got) if isinstance(got, list) else np.asarray([])
            if arr.shape != (k,) or arr.dtype.kind not in "iu":
                detail = f"returned {arr.dtype} array of shape {arr.shape}: expected ({k},) int64"
                failures = {j: ("illegal", detail) for j in range(k)}
            else:
                actions = arr.astype(np.int64)
        return Reply(actions, np.full(k, dt), failures, dt)


def _answer(bot: BotProcess, deadline: float) -> dict[str, Any]:
    raw = bot.read_line(deadline)
    try:
        answer = json.loads(raw)
    except ValueError:
        raise BotFailure("error", f"garbled answer {raw[:80]!r}") from None
    if not isinstance(answer, dict):
        raise BotFailure("error", f"garbled answer {raw[:80]!r}")
    return answer


# -- the child ----------------------------------------------------------------------------------
def serve() -> None:
    """The child's loop: read frames from stdin, answer JSON lines (see the module docstring)."""
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # the bot's prints go to stderr, never into the answers
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the tournament stops us
    inp = sys.stdin.buffer
    agent = None

    def say(message: dict[str, Any]) -> None:
        out.write((json.dumps(message) + "\n").encode())

    while True:
        header = inp.read(8)
        if len(header) < 8:
            return
        request = pickle.loads(inp.read(int.from_bytes(header, "big")))
        try:
            if request[0] == "init":
                agent = _make(*request[1:])
                say({"ok": getattr(agent, "name", request[1])})
            elif request[0] == "act":
                _, records, reset = request
                if reset is not None:
                    agent.reset(reset)
                out_actions = agent.act(SeatView.from_records(records))
                say({"actions": np.asarray(out_actions).tolist()})
        except Exception as e:
            say({"error": f"raised {type(e).__name__}: {e}"[:500]})


def _make(spec: str, rules: dict[str, Any], seed: int, modules: Sequence[str],
          factory_module: str | None, num_tables: int) -> Any:  # fmt: skip
    """The agent `spec`, once the modules that register agents are imported."""
    from fourhundred_agents.remote.modules import import_agent_modules
    from fourhundred_env.registry import make_agent

    import_agent_modules(modules)
    if factory_module is not None:
        importlib.import_module(factory_module)
    agent = make_agent(spec, Rules.from_dict(rules), seed=seed)
    agent.reset(num_tables)
    return agent


if __name__ == "__main__":
    serve()
