"""Agent names and specs: ``make_agent("pimc:worlds=32,bids=1", rules, seed)``.

The registry lives in the core so that environments and tournaments can turn a spec into a
bot without importing any bot's code: bots register themselves. The bundled ones (package
``agents``) and any installed package that declares an entry point in the group
``fourhundred.agents`` are loaded the first time a name is looked up; ``--agent-module``
modules register theirs on import.

A spec is a name, optionally followed by a colon and settings: ``random``, ``random:any``,
``heuristic:sigma=1.2,epsilon=0.05``, ``neural:PATH``, ``neural:PATH,sample=true``. Each bot
declares its settings as a config dataclass (see :mod:`fourhundred_env.configs`), optionally
with one *positional* field that a bare first item fills (``random:3`` is ``max_bid=3``,
``neural:PATH`` is ``path=PATH``; a settings text with no ``=`` at all is that field whole,
commas included). One parser turns every spec into its bot's settings: an unknown setting,
a value of the wrong type or out of range is one clear line naming the spec.

Any spec may end with a display name, ``name=NAME`` as its last item: ``heuristic-v1:name=h1``,
``random:3,name=r3``, ``sb3:runs/x/model.zip,name=mine``, ``cmd:python bot.py,name=mybot``,
``compose:bid=minbid,play=pimc:worlds=16,name=mix`` (the whole composition's name). The name is
cut off before anything else reads the spec (:func:`split_name`), so it changes no setting,
seed or game: it is only what reports, tables and plots show for that agent
(:func:`display_name`). A name is 1 to :data:`MAX_NAME_LENGTH` letters, digits and
``- _ . + @`` (:func:`check_name`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from fourhundred_env.configs import build
from fourhundred_env.errors import ConfigError, FourHundredError, did_you_mean
from fourhundred_env.rules import Rules

ENTRY_POINT_GROUP = "fourhundred.agents"
NAME_KEY = "name"
"""The setting that gives an agent its display name (the last item of any spec)."""
MAX_NAME_LENGTH = 40
"""The longest display name, in characters."""
NAME_CHARACTERS = "letters, digits and - _ . + @"
_NAME = re.compile(r"[A-Za-z0-9_.+@-]+")
_NAME_RULE = (
    f"expected a display name of 1 to {MAX_NAME_LENGTH} {NAME_CHARACTERS} as the spec's last "
    "item (SPEC,name=NAME or BOT:name=NAME)"
)


class AgentLike(Protocol):
    """What the core and the environments need of a bot (``fourhundred_agents.protocol.Agent`` is one)."""

    def reset(self, num_tables: int) -> None:
        """Start new matches on a batch of `num_tables` tables."""

    def act(self, view: Any) -> np.ndarray:
        """(K,) int64 legal actions, one per table of `view` (a SeatView of K tables)."""


@dataclass(frozen=True)
class AgentEntry:
    """One registered bot: its factory and how its spec's settings are read."""

    name: str
    factory: Callable[..., Any]
    """``factory(rules, seed, settings)`` -> agent; with no `settings` class, the third
    argument is the raw text after the colon (or None), as older plugins expect."""
    description: str = ""
    settings: type | None = None
    """Config dataclass of the bot's settings (None: see `factory`)."""
    positional: str | None = None
    """The settings field a bare first item fills (``neural:PATH``), if any."""


@dataclass(frozen=True)
class NoSettings:
    """The settings of a bot that takes none (``heuristic-v1``, ``minbid``, ``human``)."""


_REGISTRY: dict[str, AgentEntry] = {}
_LOADED = False


def register_agent(
    name: str,
    factory: Callable[..., Any],
    description: str = "",
    settings: type | None = None,
    positional: str | None = None,
) -> None:
    """Register a bot under `name` (see :class:`AgentEntry`); registering a name again
    replaces it."""
    if not name or ":" in name or "," in name:
        raise FourHundredError(f"agent name {name!r}: expected a name without ':' or ','")
    if settings is not None and not dataclasses.is_dataclass(settings):
        raise FourHundredError(f"agent {name!r}: settings={settings!r} is not a dataclass")
    if settings is not None and NAME_KEY in {f.name for f in dataclasses.fields(settings)}:
        raise FourHundredError(
            f"agent {name!r}: settings {settings.__name__} have a field {NAME_KEY!r}: expected "
            f"another name for it ({NAME_KEY}= is every spec's display name)"
        )
    _REGISTRY[name] = AgentEntry(name, factory, description, settings, positional)


def load_plugins() -> None:
    """Load the bots that installed packages declare (entry points), once."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        register = ep.load()
        if callable(register):
            register()


def available_agents() -> dict[str, str]:
    """Registered names and their one-line descriptions."""
    load_plugins()
    return {name: e.description for name, e in sorted(_REGISTRY.items())}


def entry(name: str) -> AgentEntry:
    """The registered bot `name`; an unknown name raises FourHundredError listing the known."""
    if name not in _REGISTRY:
        load_plugins()
    if name not in _REGISTRY:
        hint = did_you_mean(name, _REGISTRY)
        raise FourHundredError(
            f"unknown agent {name!r}: "
            + (f"{hint} " if hint else "")
            + f"expected one of {sorted(_REGISTRY)} (with settings after "
            "':' where the agent takes some, as in neural:PATH or pimc:worlds=32)"
        )
    return _REGISTRY[name]


def check_name(name: str, source: str) -> str:
    """`name` if it is a display name (see :data:`NAME_CHARACTERS`, :data:`MAX_NAME_LENGTH`),
    else ConfigError naming `source` (the spec it came from), what was wrong and what is
    expected."""
    if not name:
        raise ConfigError(f"{source}: {NAME_KEY}= is empty: {_NAME_RULE}")
    if len(name) > MAX_NAME_LENGTH:
        raise ConfigError(
            f"{source}: {NAME_KEY} {name!r} is {len(name)} characters long: {_NAME_RULE}"
        )
    if not _NAME.fullmatch(name):
        bad = next(c for c in name if not _NAME.fullmatch(c))
        raise ConfigError(f"{source}: {NAME_KEY} {name!r} holds {bad!r}: {_NAME_RULE}")
    return name


_CMD = r"cmd\s*:"
_PROGRAM = re.compile(rf"(?i){_CMD}|(?:^|[:,])\s*features\s*=")
_PROCESSES = re.compile(rf"(?i){_CMD}")


def starts_processes(spec: str) -> bool:
    """Whether the agent of `spec` plays in processes of the bot's own: a ``cmd:`` bot, alone
    or as a part of another spec (judged from the text, as :func:`starts_program`)."""
    return bool(_PROCESSES.search(str(spec)))


def starts_program(spec: str) -> bool:
    """Whether the agent of `spec` may start a program or run code the spec names: it is a
    ``cmd:`` bot, or names one in its settings (a ``compose:`` part, a base or partner bot),
    or names bid features of its owner to import (``features=``,
    agents/neural/extra_features.py). Judged from the text alone, before anything is made; a
    spec read from data (a database, a record, a request, a checkpoint) that does is never
    run (docs/security.md)."""
    return bool(_PROGRAM.search(str(spec)))


def split_name(spec: str) -> tuple[str, str | None]:
    """(`spec` without its display name, the name or None): ``"random:3,name=r3"`` ->
    ``("random:3", "r3")``, ``"heuristic-v1:name=h1"`` -> ``("heuristic-v1", "h1")``; a spec
    without a name comes back as it is. The name is the last comma-separated item of the
    settings (so a ``compose:`` part or a ``cmd:`` command line keeps a ``name=`` of its own
    elsewhere; a bot with settings refuses one there, :func:`spec_settings`); a name that
    :func:`check_name` refuses is a ConfigError naming the spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise FourHundredError(f"agent spec {spec!r}: expected a name such as 'heuristic'")
    bot, sep, rest = spec.strip().partition(":")
    items = rest.split(",") if sep else []
    if not items or items[-1].partition("=")[0].strip() != NAME_KEY:
        return spec, None
    name = check_name(items[-1].partition("=")[2].strip(" "), f"agent spec {spec!r}")
    return (f"{bot}:{','.join(items[:-1])}" if len(items) > 1 else bot), name


def with_name(spec: str, name: str | None) -> str:
    """`spec` (without a name) given the display name `name` (None: `spec` as it is); the
    inverse of :func:`split_name`."""
    if name is None:
        return spec
    return f"{spec}{',' if ':' in spec else ':'}{NAME_KEY}={name}"


def display_name(spec: str) -> str:
    """What reports show for the agent of `spec`: its ``name=``, else the spec without it."""
    label, name = split_name(spec)
    return label if name is None else name


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"name:settings"`` -> (name, settings text or None), the display name cut off
    (:func:`split_name`): what the bot is made from."""
    name, sep, rest = split_name(spec)[0].strip().partition(":")
    return name, (rest if sep else None)


def spec_settings(spec: str) -> Any:
    """The settings dataclass instance a spec describes (None for a bot without settings)."""
    name, text = parse_spec(spec)
    e = entry(name)
    if e.settings is None:
        return text
    for item in (text or "").split(","):  # split_name took a last one: this one is not last
        if item.partition("=")[0].strip() == NAME_KEY:
            raise ConfigError(f"agent {spec!r}: {item.strip()!r} is not last: {_NAME_RULE}")
    if e.settings is NoSettings:
        if text is not None:
            raise ConfigError(f"agent {spec!r}: {name!r} takes no settings: expected {name!r}")
        return NoSettings()
    values: dict[str, str] = {}
    if text:
        if e.positional is not None and "=" not in text:
            values[e.positional] = text
        else:
            for k, item in enumerate(text.split(",")):
                key, sep, value = item.partition("=")
                if not sep:
                    if k == 0 and e.positional is not None:
                        values[e.positional] = item
                        continue
                    raise ConfigError(
                        f"agent {spec!r}: setting {item!r}: expected name=value with a name "
                        f"among {_field_names(e.settings)}"
                    )
                values[key.strip()] = value.strip()
    elif text == "":
        raise ConfigError(f"agent {spec!r}: nothing after ':': expected settings or no colon")
    return build(e.settings, values, f"agent {spec!r}", text=values.keys())


def _field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]


DECIDES = ("both", "bid", "play")
"""What a bot can decide (its ``decides``) and what a caller asks of it (`make_agent`'s
`decides`): bids and cards, bids only, cards only."""


def make_agent(spec: str, rules: Rules | None = None, seed: int = 0, *,
               decides: str = "both") -> Any:  # fmt: skip
    """A new agent instance for `spec` (``"random"``, ``"heuristic"``, ``"neural:PATH"``...).

    `decides` is what the caller will ask of it: "both" (a player: a seat of a game, an
    opponent), "bid" (only its bids: a bidder in ``compose:``, the bidding benchmark) or
    "play" (only its cards). A bot that cannot make those decisions (its ``decides``, e.g.
    a bidding-only checkpoint named as a player) is refused in one line (ConfigError) that
    says how to name it instead. Every command resolves its specs here, so all behave alike.
    """
    if decides not in DECIDES:
        raise FourHundredError(f"decides={decides!r}: expected one of {list(DECIDES)}")
    name, text = parse_spec(spec)
    e = entry(name)
    if e.settings is None:
        agent = e.factory(rules if rules is not None else Rules(), seed, text or None)
    else:
        agent = e.factory(rules if rules is not None else Rules(), seed, spec_settings(spec))
    can = getattr(agent, "decides", "both")
    if can != "both" and can != decides:
        close = getattr(agent, "close", None)
        if close is not None:
            close()
        raise ConfigError(_refusal(spec, can, getattr(agent, "bid_spec", None)))
    return agent


def _refusal(spec: str, can: str, bid_spec: str | None) -> str:
    """The one line refusing the bot of `spec`, which only makes `can` decisions ("bid" or
    "play"), where it would make others too: the specs that name it for what it does."""
    label = split_name(spec)[0]
    if can == "bid":
        ways = [f"{bid_spec} (its bids, the cards by its play policy)"] if bid_spec else []
        ways.append(f"compose:bid={label},play=SPEC (its bids, the cards by SPEC)")
        return (f"agent {spec!r} only bids (a bidding-only bot cannot play the cards): "
                f"expected {' or '.join(ways)}")  # fmt: skip
    return (f"agent {spec!r} only plays the cards (it cannot bid): expected "
            f"compose:bid=SPEC,play={label} (the bids by SPEC, its cards)")  # fmt: skip
