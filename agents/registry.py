"""The bundled bots' registrations, and the registry functions re-exported for convenience.

The registry itself is :mod:`fourhundred_env.registry` (so that environments and tournaments
resolve specs without importing bot code); this package's bots are registered through the
``fourhundred.agents`` entry point (pyproject.toml), which calls :func:`register_builtin`
the first time a name is looked up.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Literal

from fourhundred_agents.protocol import Agent, as_agent
from fourhundred_env import registry as _core
from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError
from fourhundred_env.registry import (
    DECIDES,
    ENTRY_POINT_GROUP,
    NoSettings,
    available_agents,
    parse_spec,
    register_agent,
    spec_settings,
)
from fourhundred_env.rules import Rules

__all__ = [
    "DECIDES",
    "ENTRY_POINT_GROUP",
    "NoSettings",
    "RandomSettings",
    "available_agents",
    "make_agent",
    "parse_spec",
    "register_agent",
    "register_builtin",
    "spec_settings",
]


def make_agent(spec: str, rules: Rules | None = None, seed: int = 0, *,
               decides: str = "both") -> Agent:  # fmt: skip
    """A new agent for `spec` (``"random"``, ``"heuristic"``, ``"neural:PATH"``...), as
    :func:`fourhundred_env.registry.make_agent` makes it (`decides`: what it will be asked,
    "both", "bid" or "play"; a bot that cannot is refused), always an :class:`Agent`: a
    plugin's bot of another class is wrapped (:func:`fourhundred_agents.protocol.as_agent`)."""
    return as_agent(_core.make_agent(spec, rules, seed, decides=decides))


_MODULES = ("fourhundred_agents.remote.external", "fourhundred_agents.scripted.heuristic", "fourhundred_agents.scripted.heuristic_v1",
            "fourhundred_agents.human", "fourhundred_agents.neural.agent", "fourhundred_agents.search.pimc", "fourhundred_agents.search.agent",
            "fourhundred_agents.compose", "fourhundred_agents.libraries.agent")  # fmt: skip


@dataclass(frozen=True)
class RandomSettings:
    """``random``, ``random:N`` (bids capped at N), ``random:any`` (any legal bid)."""

    max_bid: int | Literal["any"] = 4
    """Highest bid made (a seat whose minimum is higher bids its minimum), or "any"."""

    def __post_init__(self) -> None:
        check_fields(self)
        if self.max_bid != "any" and not 1 <= self.max_bid <= 13:
            raise ConfigError(f"max_bid={self.max_bid!r}: expected a bid from 1 to 13, or 'any'")


def _random_factory(rules: Rules, seed: int, settings: RandomSettings):
    from fourhundred_agents.scripted.random import RandomAgent

    return RandomAgent(rules, seed, max_bid=None if settings.max_bid == "any" else settings.max_bid)


def register_builtin() -> None:
    """Register the bundled bots (the entry point of this package; harmless to call again)."""
    register_agent(
        "random",
        _random_factory,
        "uniformly random legal play, bids capped at 4 (random:N, random:any)",
        settings=RandomSettings,
        positional="max_bid",
    )
    for module in _MODULES:
        importlib.import_module(module)
