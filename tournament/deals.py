"""Secret deals: the cards of a tournament or a ladder event come from a secret no bot can learn.

With public deals the engine deals hand k of match m from ``(seed, m, k)``: anyone who knows
the seed (a small number, on the command line) and the project's code knows every hand. So by
default (``deals: secret``) the runner deals from a *secret* instead:

    secret    = 32 bytes from the operating system's randomness (:mod:`secrets`), drawn afresh
                for every tournament and every ladder event
    deal seed = BLAKE2b("deal seed", key = secret) (63 bits)      what the engine deals from
    bot key   = BLAKE2b("bot keys", key = secret)                 what ``cmd:`` bots' keys hang on

No seed, no account and no earlier event gives a secret: two tournaments of the same seed deal
differently, and the published games of one event (``record export``, the web's Watch view)
tell nothing of any other's cards. All pairings of one event share its secret (duplicate play
needs the same deals across pairings).

The secret is stored in the results database (meta ``deals``; a ladder event's own in the
table ``ladder_deals``, :mod:`fourhundred_tournament.db.ladder`), so that a resume or a replay
deals the same cards on any machine; it is never sent to a bot or a browser and never put on
a command line (jobs reach workers through a queue or Ray's object store). Whoever holds the
database holds the secrets of its events: share a database only once its events are over.

``deals: public`` deals from the seed alone, as before (every database made before secret
deals, which records no ``deals`` row, is public): anyone who knows the seed predicts every
card. It is for reproducible research with bots you trust, or to compare with a record of the
same seed elsewhere; a ladder takes it only when asked for by name (``--deals public``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fourhundred_agents.protocol import Agent
from fourhundred_agents.remote.external import ExternalAgent
from fourhundred_env.errors import FourHundredError

__all__ = [
    "DealSecret",
    "deals_row",
    "deals_scheme",
    "give_bot_key",
    "read_deals",
    "with_real_paths",
]

MODES = ("secret", "public")
_SECRET_BYTES = 32


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
    def fresh(cls) -> DealSecret:
        """A new secret from the operating system's randomness (one per event)."""
        return cls(secrets.token_bytes(_SECRET_BYTES))


def deals_row(mode: str) -> dict[str, Any]:
    """The meta ``deals`` row a new database records: ``{"scheme": "public"}`` or
    ``{"scheme": "secret", "secret": HEX}`` with a fresh secret (:meth:`DealSecret.fresh`)."""
    if mode not in MODES:
        raise FourHundredError(f"deals={mode!r}: expected one of {list(MODES)}")
    if mode == "public":
        return {"scheme": "public"}
    return {"scheme": "secret", "secret": DealSecret.fresh().secret.hex()}


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
        if row.get("scheme") != "secret" or len(secret) != _SECRET_BYTES:
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
