"""``compose:bid=SPEC,play=SPEC``: one agent that bids as one bot and plays the cards as another.

A trained bidder is only half a player: ``compose:bid=neural-bid:PATH,play=heuristic-v1``
bids with the checkpoint and plays every card as ``heuristic-v1`` does, so that a tournament
against ``heuristic-v1`` measures the bids alone (duplicate deals, identical card play). Any
two registered specs compose (``bid=heuristic-v1,play=neural:selfplay.pt``...): the bidder
is asked only for decisions where a bid (or the redeal request) is legal, the player for the
cards. The parts may have settings of their own, commas included
(``compose:bid=minbid,play=pimc:worlds=16,bids=1``): the text is cut at ``bid=`` and
``play=`` only, each given once.
"""

from __future__ import annotations

import re

from fourhundred_agents.protocol import as_agent
from fourhundred_env.errors import ConfigError
from fourhundred_env.registry import make_agent, register_agent
from fourhundred_env.rules import Rules

PARTS = ("bid", "play")
_PART = re.compile(r"(?:^|,)\s*([A-Za-z_][\w-]*)\s*=")


def parse_parts(text: str | None) -> dict[str, str]:
    """{"bid": spec, "play": spec} from ``bid=SPEC,play=SPEC`` (either order); one clear
    ConfigError for a missing, repeated, unknown or empty part."""
    spec = f"compose:{text or ''}"
    if not text:
        raise ConfigError(f"agent {spec!r}: expected compose:bid=SPEC,play=SPEC")
    # a part starts at the text's start or after a comma, and names bid or play; a setting
    # of the parts themselves (``worlds=16``) is part of the spec before it
    starts = [m for m in _PART.finditer(text) if m.group(1) in PARTS or m.start() == 0]
    if not starts or starts[0].start() != 0:
        raise ConfigError(f"agent {spec!r}: expected compose:bid=SPEC,play=SPEC")
    parts: dict[str, str] = {}
    for k, m in enumerate(starts):
        name = m.group(1)
        if name not in PARTS:
            raise ConfigError(
                f"agent {spec!r}: unknown part {name!r}: expected bid=SPEC and play=SPEC"
            )
        if name in parts:
            raise ConfigError(f"agent {spec!r}: part {name!r} given twice: expected it once")
        stop = starts[k + 1].start() if k + 1 < len(starts) else len(text)
        value = text[m.end() : stop].strip()
        if not value:
            raise ConfigError(f"agent {spec!r}: {name}= is empty: expected an agent spec")
        head, comma, rest = value.partition(",")
        if comma and ":" not in head:  # a bare name takes no settings: this is another part
            other = rest.split("=", 1)[0].strip()
            raise ConfigError(
                f"agent {spec!r}: unknown part {other!r}: expected bid=SPEC and play=SPEC"
            )
        parts[name] = value
    missing = [p for p in PARTS if p not in parts]
    if missing:
        raise ConfigError(
            f"agent {spec!r}: no {missing[0]}= part: expected compose:bid=SPEC,play=SPEC"
        )
    return parts


def _compose_factory(rules: Rules, seed: int, text: str | None):
    from fourhundred_agents.neural.agent import BidPlayAgent

    parts = parse_parts(text)
    for name, part in parts.items():
        if part.split(":", 1)[0].strip() == "compose":
            raise ConfigError(
                f"agent 'compose:{text}': {name}={part!r}: expected a bot that is not itself "
                "a composition"
            )
    # each part is asked for its own decisions only: a bidding-only checkpoint may bid here
    bidder = as_agent(make_agent(parts["bid"], rules, seed, decides="bid"))
    player = as_agent(make_agent(parts["play"], rules, seed + 1, decides="play"))
    agent = BidPlayAgent(bidder, player, f"compose:{text}")
    agent.stateless = bidder.stateless and player.stateless
    agent.replayable = bidder.replayable and player.replayable
    return agent


register_agent(
    "compose",
    _compose_factory,
    "bids as one bot and plays the cards as another (compose:bid=SPEC,play=SPEC)",
)
