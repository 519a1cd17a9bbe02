"""Names and specs to agents: ``make_agent("heuristic", rules=..., seed=...)``.

A spec is a registered name, optionally with an argument after a colon: ``neural:PATH``.
"""

from __future__ import annotations

from collections.abc import Callable

from agents.base import Agent, RandomAgent
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules

AgentFactory = Callable[[Rules, int, str | None], Agent]
_REGISTRY: dict[str, tuple[AgentFactory, str]] = {}


def register_agent(name: str, factory: AgentFactory, description: str = "") -> None:
    """Register `factory(rules, seed, argument) -> Agent` under `name`."""
    _REGISTRY[name] = (factory, description)


def available_agents() -> dict[str, str]:
    """Registered names and their one-line descriptions."""
    _load_builtin()
    return {name: desc for name, (_, desc) in sorted(_REGISTRY.items())}


def make_agent(spec: str, rules: Rules | None = None, seed: int = 0) -> Agent:
    """A new agent instance for `spec` (``"random"``, ``"heuristic"``, ``"neural:PATH"``...)."""
    _load_builtin()
    name, _, arg = spec.partition(":")
    if name not in _REGISTRY:
        raise FourHundredError(
            f"unknown agent {spec!r}: expected one of {sorted(_REGISTRY)} "
            "(with an argument after ':' where the agent takes one, as in neural:PATH)"
        )
    factory, _ = _REGISTRY[name]
    return factory(rules if rules is not None else Rules(), seed, arg or None)


def _random_factory(rules: Rules, seed: int, arg: str | None) -> Agent:
    if arg is None:
        return RandomAgent(rules, seed)
    if arg == "any":
        return RandomAgent(rules, seed, max_bid=None)
    try:
        return RandomAgent(rules, seed, max_bid=int(arg))
    except ValueError:
        raise FourHundredError(
            f"agent 'random:{arg}': expected random, random:N (bids capped at N) or random:any"
        ) from None


_LOADED = False


def _load_builtin() -> None:
    """Import the modules that register the bundled agents (once)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib

    for module in (
        "agents.heuristic", "agents.heuristic_v1", "agents.human", "agents.neural", "agents.pimc",
    ):  # fmt: skip
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise


register_agent(
    "random",
    _random_factory,
    "uniformly random legal play, bids capped at 4 (random:N, random:any)",
)
