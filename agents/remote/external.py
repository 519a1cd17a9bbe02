"""`cmd:COMMAND`: a bot in any language, a program speaking the JSON-lines bot protocol.

The protocol (``docs/bot-protocol.md``, version :data:`PROTOCOL_VERSION`): the bot reads one
JSON object per line on stdin and answers one per line on stdout; it logs to stderr.

- ``hello`` (protocol name and version, the rules, the time limits, a seed) -> ``ready``
  (the bot's name and the protocol version it speaks);
- ``act`` (a request id, the game's key, the seat's view: the facts of
  :class:`~fourhundred_env.view.SeatView` as text, and the legal actions) -> ``action``
  (the same id and one of the legal actions as text: ``"4"``, ``"AH"``, ``"redeal"``);
- ``bye``: the games are over; the bot exits (its stdin is closed next).

Each seat gets its own bot process; each decision is one ``act`` that must be answered
within the hard limit. A bot that answers late, dies, or writes anything but the one answer
line forfeits that move (docs/rules.md, timing and conduct) and is killed and started again for the
next one; an illegal action forfeits the move and the bot goes on. Outside a tournament a
failure is a FourHundredError.

The bot runs in a sandbox (:mod:`fourhundred_agents.remote.sandbox`): ``cmd:COMMAND,sandbox=MODE`` with
MODE ``auto`` (the default, or the environment's ``FOURHUNDRED_BOT_SANDBOX``), ``require`` or
``off``. With a runner's secret (:attr:`ExternalAgent.game_secret`) the ``game`` key and the
``seed`` a bot is told are keyed hashes of the tournament's, so they give back neither the
tournament's seed nor its deals.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_agents.remote import sandbox as _sandbox
from fourhundred_agents.remote.process import BotFailure, BotProcess, Reply, SupervisedAgent
from fourhundred_env.cards import SUIT_LETTERS, action_text, card_text, parse_action, set_to_cards
from fourhundred_env.engine import Phase
from fourhundred_env.errors import CardError, ConfigError
from fourhundred_env.registry import register_agent
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

__all__ = [
    "BOT_ENV",
    "PROTOCOL",
    "PROTOCOL_VERSION",
    "ExternalAgent",
    "bot_environment",
    "bot_seed",
    "game_key",
    "hello_message",
    "split_command",
    "view_message",
]

PROTOCOL = "fourhundred-bot"
PROTOCOL_VERSION = 1
BOT_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ")
"""The runner's environment variables a bot gets (and every ``LC_*``); nothing else of it,
so no token of the runner's reaches a bot (the protocol passes everything in ``hello``)."""


def bot_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `environ` (default ``os.environ``): :data:`BOT_ENV` and
    ``LC_*``."""
    environ = dict(os.environ) if environ is None else environ
    return {k: v for k, v in environ.items() if k in BOT_ENV or k.startswith("LC_")}


_PHASES = {int(Phase.BID): "bid", int(Phase.PLAY): "play"}
_SETTING = re.compile(r"(?s)(.*),sandbox=(\w*)\s*")


def split_command(text: str) -> tuple[str, str | None]:
    """``"python my_bot.py,sandbox=off"`` -> (``"python my_bot.py"``, ``"off"``); a text
    without the trailing setting -> (text, None)."""
    found = _SETTING.fullmatch(text or "")
    return (found[1], found[2]) if found else (text or "", None)


def _keyed(value: int, secret: bytes, person: bytes) -> bytes:
    data = (int(value) & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little")
    return hashlib.blake2b(data, key=secret[:64], digest_size=8, person=person).digest()


def game_key(stream: int, secret: bytes | None = None) -> str:
    """The ``game`` key (16 hex digits) of the game whose stream key is `stream`: with a
    runner's `secret`, a keyed BLAKE2b of it (one way: it gives back neither the stream nor the
    tournament's seed); without one, the stream key itself."""
    if secret is None:
        return f"{int(stream):016x}"
    return _keyed(stream, secret, b"fh-game-key").hex()


def bot_seed(seed: int, secret: bytes | None = None) -> int:
    """The ``seed`` told to a bot seeded `seed` (63 bits, keyed like :func:`game_key`)."""
    if secret is None:
        return int(seed)
    return int.from_bytes(_keyed(seed, secret, b"fh-bot-seed"), "little") >> 1


def hello_message(rules: Rules, seed: int) -> dict[str, Any]:
    """The first message to a bot: the protocol, the rules and conduct, its seed."""
    return {
        "type": "hello", "protocol": PROTOCOL, "version": PROTOCOL_VERSION,
        "rules": rules.to_dict(), "time_limit_s": float(rules.move_time_limit_s),
        "hard_limit_s": float(rules.move_hard_limit_s), "seed": int(seed),
    }  # fmt: skip


def _cards(card_set: int) -> list[str]:
    return [card_text(c) for c in set_to_cards(int(card_set))]


def view_message(
    view: SeatView, j: int, request_id: int, secret: bytes | None = None
) -> dict[str, Any]:
    """The ``act`` message for row `j` of `view`: what that seat may know, as text (seats
    absolute 0-3, cards like ``"10S"``), and its legal actions; the game's key by
    :func:`game_key` with `secret`."""
    seat = int(view.seat[j])
    leader = int(view.trick_leader[j])
    trick = []
    for k in range(int(view.trick_size[j])):
        s = (leader + k) % 4
        trick.append({"seat": s, "card": card_text(int(view.trick_cards[j, s]))})
    voids = [[SUIT_LETTERS[u] for u in range(4) if int(view.shown_void[j, s]) >> u & 1]
             for s in range(4)]  # fmt: skip
    bids = [int(b) if b > 0 else None for b in view.bids[j].tolist()]
    return {
        "type": "act",
        "id": request_id,
        "game": game_key(int(view.stream[j]), secret),
        "view": {
            "seat": seat,
            "phase": _PHASES.get(int(view.phase[j]), "over"),
            "dealer": int(view.dealer[j]),
            "hand": _cards(view.hand_set[j]),
            "bids": bids,
            "min_bids": view.min_bid[j].tolist(),
            "required_total": int(view.required_total[j]),
            "scores": view.scores_before[j].tolist(),
            "target": int(view.target[j]),
            "tricks_won": view.tricks_won[j].tolist(),
            "num_tricks": int(view.num_tricks[j]),
            "trick": trick,
            "played": [_cards(view.played_set[j, s]) for s in range(4)],
            "void_suits": voids,
        },
        "legal": [action_text(a) for a in np.flatnonzero(view.legal_mask[j])],
    }


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def _parse(raw: bytes, what: str) -> dict[str, Any]:
    """The JSON object of one line from the bot, or BotFailure saying what was wrong."""
    shown = raw[:120].decode(errors="replace")
    try:
        message = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BotFailure("error", f"answered {shown!r}: expected {what} as one JSON line") from None
    if not isinstance(message, dict):
        raise BotFailure("error", f"answered {shown!r}: expected {what} as a JSON object")
    return message


class ExternalAgent(SupervisedAgent):
    """A bot process speaking the JSON-lines protocol (see the module docstring)."""

    game_secret: bytes | None = None
    """A runner's secret (bytes, kept from every bot): when set, the ``game`` keys and the
    ``seed`` this bot is told are keyed hashes (:func:`game_key`, :func:`bot_seed`)."""

    def __init__(self, command: str, rules: Rules | None = None, seed: int = 0,
                 transcript: Any = None, sandbox: str | None = None) -> None:  # fmt: skip
        """`command`: the bot's command line (split as a shell would, run in the current
        folder), optionally ended by ``,sandbox=MODE``. `sandbox`: ``auto``, ``require`` or
        ``off`` (None: the command's setting, else the environment's FOURHUNDRED_BOT_SANDBOX,
        else ``auto``). `transcript`: a callable receiving each line sent ("> ...") and
        received ("< ..."), for `fourhundred bot-check --transcript`."""
        super().__init__(rules, seed)
        text, setting = split_command(command or "")
        try:
            self.argv = shlex.split(text)
        except ValueError as e:
            raise ConfigError(f"agent 'cmd:{command}': {e}: expected a command line") from None
        if not self.argv:
            raise ConfigError("agent 'cmd:': expected a command line, as in cmd:python my_bot.py")
        exe = self.argv[0]
        if shutil.which(exe) is None and not Path(exe).is_file():
            raise ConfigError(
                f"agent 'cmd:{command}': cannot find {exe!r}: expected a program on the PATH or "
                "a file (the command runs in the current folder)"
            )
        try:
            self.sandbox_mode = _sandbox.resolve_mode(sandbox if sandbox is not None else setting)
        except ConfigError as e:
            raise ConfigError(f"agent 'cmd:{command}': {e}") from None
        # "bwrap", "unshare" or None (not sandboxed)
        self.sandbox_kind = None if self.sandbox_mode == "off" else _sandbox.mechanism()
        if self.sandbox_kind is None and self.sandbox_mode == "require":
            raise ConfigError(
                f"agent 'cmd:{command}': sandbox=require, but neither bubblewrap (bwrap) nor "
                "unprivileged user namespaces (unshare) work here: expected the package "
                "bubblewrap installed, or sandbox=auto to run the bot unconfined"
            )
        if self.sandbox_kind is None and self.sandbox_mode == "auto":
            _sandbox.warn_unconfined()
        self.command = text
        self.name = f"cmd:{command}"
        self.transcript = transcript
        self._next_id = 0

    def _argv(self) -> list[str]:
        return self.argv

    def _env(self) -> dict[str, str]:
        return bot_environment()

    def _launch(self) -> BotProcess:
        if self.sandbox_kind is None:
            return BotProcess(self.argv, self._env())
        box = _sandbox.sandbox(self.argv, self.sandbox_kind)
        return BotProcess(box.argv, self._env(), cleanup=box.cleanup, pass_fds=box.pass_fds)

    def _send(self, bot: BotProcess, message: dict[str, Any], deadline: float) -> None:
        data = _line(message)
        if self.transcript is not None:
            self.transcript("> " + data.decode().rstrip("\n"))
        bot.write(data, deadline)

    def _receive(self, bot: BotProcess, deadline: float, what: str) -> dict[str, Any]:
        raw = bot.read_line(deadline)
        if self.transcript is not None:
            self.transcript("< " + raw.decode(errors="replace"))
        return _parse(raw, what)

    def _handshake(self, bot: BotProcess, deadline: float) -> None:
        seed = bot_seed(self.seed, self.game_secret)
        self._send(bot, hello_message(self.rules, seed), deadline)
        ready = self._receive(bot, deadline, '{"type": "ready", ...}')
        if ready.get("type") != "ready":
            raise BotFailure("error", f"answered hello with {ready!r}: expected type 'ready'")
        if ready.get("version") != PROTOCOL_VERSION:
            raise BotFailure(
                "error",
                f"speaks protocol version {ready.get('version')!r}: expected {PROTOCOL_VERSION}",
            )
        self.bot_name = str(ready.get("name", ""))[:100] or None

    def _goodbye(self, bot: BotProcess) -> None:
        self._send(bot, {"type": "bye"}, time.monotonic() + 1.0)

    def _exchange(self, bot: BotProcess | None, view: SeatView, hard: float) -> Reply:
        """One ``act`` per table, in order, each answered within `hard` seconds."""
        k = view.size
        actions = np.full(k, -1, np.int64)
        seconds = np.zeros(k)
        failures: dict[int, tuple[str, str]] = {}
        for j in range(k):
            try:
                bot = self._running(hard)  # (re)starting is not the move's time
            except BotFailure as e:
                failures[j] = (e.kind, e.detail)
                continue
            t0 = time.monotonic()
            try:
                self._next_id += 1
                actions[j] = self._ask(bot, view, j, self._next_id, t0 + hard)
            except BotFailure as e:
                seconds[j] = time.monotonic() - t0
                detail = e.detail
                if e.kind == "timeout":
                    detail = f"{detail}: {seconds[j]:.3f} s (hard limit {hard} s)"
                if e.restart:
                    detail += "; the bot was restarted"
                    self._restart()
                failures[j] = (e.kind, detail)
                continue
            seconds[j] = time.monotonic() - t0
        return Reply(actions, seconds, failures, elapsed=float(seconds.sum()))

    def _ask(self, bot: BotProcess, view: SeatView, j: int, request_id: int,
             deadline: float) -> int:  # fmt: skip
        """The bot's action for row `j`: a legal one or not (the caller checks), or
        BotFailure for anything that is not an answer to this request."""
        what = f'{{"type": "action", "id": {request_id}, "action": ...}}'
        self._send(bot, view_message(view, j, request_id, self.game_secret), deadline)
        answer = self._receive(bot, deadline, what)
        if answer.get("id") != request_id or "action" not in answer:
            raise BotFailure("error", f"answered {json.dumps(answer)[:160]}: expected {what}")
        text = answer["action"]
        if not isinstance(text, str):
            raise BotFailure(
                "error", f"answered action {text!r}: expected text such as '4', 'AH' or 'redeal'"
            )
        try:
            return parse_action(text)
        except CardError as e:
            raise BotFailure("error", f"answered action {text!r}: {e}", restart=False) from None


def _cmd_factory(rules: Rules, seed: int, text: str | None) -> ExternalAgent:
    return ExternalAgent(text or "", rules, seed)


register_agent(
    "cmd",
    _cmd_factory,
    "a program speaking the JSON-lines bot protocol (cmd:python my_bot.py; docs/bot-protocol.md)",
)
