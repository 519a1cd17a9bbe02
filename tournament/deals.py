"""Secret deals: the cards of a tournament or a ladder come from a secret no bot can learn.

With public deals the engine deals hand k of match m from ``(seed, m, k)``: anyone who knows
the seed (a small number, on the command line) and the project's code knows every hand. So by
default (``deals: secret``) the runner deals from a *secret* instead:

    secret    = BLAKE2b(seed, key = the user's deal key)          (32 bytes)
    deal seed = BLAKE2b("deal seed", key = secret) (63 bits)      what the engine deals from
    bot key   = BLAKE2b("bot keys", key = secret)                 what ``cmd:`` bots' keys hang on

The user's deal key is 32 random bytes (:mod:`secrets`) in a file of their own outside the
project (:func:`key_file`: ``$FOURHUNDRED_DEAL_KEY``, else ``~/.config/fourhundred/deal.key``),
made on first use, readable by its owner only. The same seed on the same account gives the same
deals (a reproducible run for its owner); without the key the seed tells nothing. A sandboxed
bot cannot read the file (the sandbox binds the system, the interpreter and the bot's own
folder, and the runner hides the file even there, :func:`fourhundred_agents.remote.sandbox.protect_paths`).

The secret is stored in the results database (meta ``deals``), so that a resume or a replay
deals the same cards on any machine; it is never sent to a bot or a browser and never put on
a command line (jobs reach workers through a queue or Ray's object store). Whoever holds the
database holds the secret: share a database only once its tournament is over. The key itself
is never stored there, so a shared database tells nothing of its owner's other tournaments.

``deals: public`` deals from the seed alone, as before (every database made before secret
deals, which records no ``deals`` row, is public): for bots you trust, or to compare with a
record of the same seed elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fourhundred_agents.protocol import Agent
from fourhundred_agents.remote.external import ExternalAgent
from fourhundred_env.errors import FourHundredError

__all__ = [
    "KEY_ENV",
    "DealSecret",
    "deals_row",
    "deals_scheme",
    "give_bot_key",
    "key_file",
    "read_deals",
    "user_key",
    "with_real_paths",
]

KEY_ENV = "FOURHUNDRED_DEAL_KEY"
"""The environment variable naming the deal key's file (default :func:`key_file`)."""
MODES = ("secret", "public")
_KEY_BYTES = 32
_warned = False


def key_file() -> Path:
    """The file of the user's deal key: ``$FOURHUNDRED_DEAL_KEY``, else
    ``$XDG_CONFIG_HOME/fourhundred/deal.key`` (``~/.config/...`` by default)."""
    named = os.environ.get(KEY_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "fourhundred" / "deal.key"


def user_key() -> bytes | None:
    """The user's 32-byte deal key, made (owner-only) on first use; None when the file can be
    neither read nor made (then each new tournament draws a secret of its own)."""
    path = key_file()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError:
        return None
    if len(data) >= _KEY_BYTES:
        return data[:_KEY_BYTES]
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another run made it meanwhile: read that one
        data = path.read_bytes()
        return data[:_KEY_BYTES] if len(data) >= _KEY_BYTES else None
    except OSError:
        return None
    key = secrets.token_bytes(_KEY_BYTES)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def _hash(data: bytes, key: bytes, size: int, person: bytes) -> bytes:
    return hashlib.blake2b(data, key=key, digest_size=size, person=person).digest()


@dataclass(frozen=True)
class DealSecret:
    """A tournament's secret (32 bytes) and what is derived from it, one way."""

    secret: bytes

    @property
    def deal_seed(self) -> int:
        """The seed the engine deals from (63 bits: no search over seeds finds it)."""
        return int.from_bytes(_hash(b"deal seed", self.secret, 8, b"fh-deal-seed"), "little") >> 1

    @property
    def bot_key(self) -> bytes:
        """The key of the ``game`` keys and ``hello`` seeds told to ``cmd:`` bots
        (`fourhundred_agents.remote.external.ExternalAgent.game_secret`)."""
        return _hash(b"bot keys", self.secret, 32, b"fh-bot-keys")

    @classmethod
    def for_seed(cls, seed: int) -> DealSecret:
        """The secret of a tournament seeded `seed`: keyed by the user's deal key, or drawn
        afresh (one warning line) when there is none."""
        key = user_key()
        if key is None:
            _warn_no_key()
            return cls(secrets.token_bytes(_KEY_BYTES))
        data = int(seed).to_bytes(16, "little", signed=True)
        return cls(_hash(data, key, _KEY_BYTES, b"fh-deals"))


def _warn_no_key() -> None:
    global _warned
    if not _warned:
        _warned = True
        print(
            f"fourhundred: warning: cannot read or make the deal key {str(key_file())!r}: this "
            f"tournament's deals are secret but not reproducible from its seed (set {KEY_ENV} "
            "to a writable file)",
            file=sys.stderr,
        )


def deals_row(mode: str, seed: int) -> dict[str, Any]:
    """The meta ``deals`` row a new database records: ``{"scheme": "public"}`` or
    ``{"scheme": "secret", "secret": HEX}``."""
    if mode not in MODES:
        raise FourHundredError(f"deals={mode!r}: expected one of {list(MODES)}")
    if mode == "public":
        return {"scheme": "public"}
    return {"scheme": "secret", "secret": DealSecret.for_seed(seed).secret.hex()}


def read_deals(meta: Mapping[str, str], where: str = "database") -> DealSecret | None:
    """The secret a database's meta records (None: public deals, also for a database made
    before secret deals); FourHundredError in one line for a damaged row."""
    text = meta.get("deals")
    if text is None:
        return None
    try:
        row = json.loads(text)
        if row.get("scheme") == "public":
            return None
        secret = bytes.fromhex(row["secret"])
        if row.get("scheme") != "secret" or len(secret) != _KEY_BYTES:
            raise ValueError("expected a scheme and a 32-byte secret")
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise FourHundredError(
            f"{where}: its meta 'deals' row is damaged ({e}): expected "
            '{"scheme": "secret", "secret": HEX} or {"scheme": "public"}'
        ) from None
    return DealSecret(secret)


def deals_scheme(meta: Mapping[str, str]) -> str:
    """``secret`` or ``public``: how a database's games were dealt (a damaged row raises)."""
    return "public" if read_deals(meta) is None else "secret"


def give_bot_key(agent: Agent, key: bytes | None) -> Agent:
    """`agent` with `key` set as the ``game_secret`` of every ``cmd:`` bot in it (itself, or
    a part of a composed agent); unchanged when `key` is None."""
    if key is not None:
        for part in (agent, *vars(agent).values()):
            if isinstance(part, ExternalAgent):
                part.game_secret = key
    return agent


def with_real_paths(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """`paths` and the files they name through symbolic links (what a sandbox must hide)."""
    out = []
    for path in paths:
        for name in (os.path.abspath(path), os.path.realpath(path)):
            if name not in out:
                out.append(name)
    return out
