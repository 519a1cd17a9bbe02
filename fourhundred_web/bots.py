"""The bots a person may seat at the web table: fixed by the server (:func:`agent_choices`),
chosen by public name.

Registered agents that can be made from their bare name (not ``cmd`` or ``compose``, which
need a command or their parts), the presets of PRESET_BOTS, the bundled checkpoints, and the
specs given to ``fourhundred serve --agent``. A browser picks among them by a public name
(``neural:selfplay.pt``, never the file's path: :func:`public_text`), which the server maps
back to the spec, so it can never make the server open a file of its choosing nor learn
where the server keeps its files.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

from fourhundred_agents.registry import available_agents, make_agent, parse_spec
from fourhundred_env.errors import FourHundredError
from fourhundred_env.registry import entry, split_name, with_name
from fourhundred_env.rules import Rules

__all__ = ["DEFAULT_BOTS", "PRESET_BOTS", "STRENGTH", "AgentChoice", "agent_choices",
           "default_bot", "public_text"]  # fmt: skip

_PRETRAINED = {"selfplay.pt": "neural", "exit.pt": "neural", "bidder.pt": "neural-bid"}
_SYMMETRIC = ("exit.pt",)
"""Bundled networks also offered with ``symmetric=true`` (their policy averaged over the six
renamings of the plain suits: stronger, at six evaluations a decision in one call)."""
PRESET_BOTS = {
    "search:fast": "search over exit.pt for the cards of the last six tricks; bidder.pt bids "
    "and exit.pt's network plays the earlier cards",
}
"""Settings of a registered bot offered beside its bare name, with a line describing each."""
DEFAULT_BOTS = ("search:fast", "neural:exit.pt,symmetric=true", "neural:exit.pt",
                "neural:selfplay.pt", "heuristic-v1", "heuristic")  # fmt: skip
"""The bot a seat gets when the browser names none: the first of these offered, by name.
The strongest bot that answers a person at once comes first; the full search bot is stronger
still but is not a default, since a person waits for up to three bots a turn (BENCHMARKS.md
gives each bot's strength and speed)."""
STRENGTH = {
    "search": "strongest · slower: a turn may take seconds",
    "search:fast": "strong · quick: searches the last six tricks",
    "neural:exit.pt,symmetric=true": "the strongest network · fast",
    "neural:exit.pt": "strong network · fast",
    "neural:selfplay.pt": "strong · fast",
    "neural-bid:bidder.pt": "network bidder · fast",
    "pimc": "search over heuristic-v1 · slower",
    "heuristic": "rule-based · fast",
    "heuristic-v1": "rule-based, frozen yardstick · fast",
    "minbid": "weak: bids its minimum · fast",
    "random": "weakest: random legal play · fast",
}
"""The menu's order (strongest first) and each bot's line on strength and speed
(BENCHMARKS.md); a bot not named here comes after them, in the registry's order."""
_PATH = re.compile(
    r"(?:(?<![\w-])[A-Za-z]:|[^\s:,=;'\"()\[\]{}/\\]*)"  # a drive, or the first segment
    r"(?P<dirs>(?:[/\\][^\s:,=;'\"()\[\]{}/\\]*)*)[/\\]"
    r"(?P<name>[^\s:,=;'\"()\[\]{}/\\]+)"
)


def _cut(match: re.Match[str]) -> str:
    """A path's file name; a word pair like ``text/plain`` (no root, no dot) is kept."""
    whole, name = match.group(0), match.group("name")
    rooted = whole[0] in "/\\.~" or whole[1:2] == ":" or match.group("dirs")
    return name if rooted or "." in name else whole


def public_text(text: str) -> str:
    """`text` with every file path cut to its file name (``neural:/srv/x/selfplay.pt`` ->
    ``neural:selfplay.pt``): what the server may say to a browser about its files."""
    return _PATH.sub(_cut, text)


@dataclass(frozen=True)
class AgentChoice:
    """A bot a person may seat at the table: its spec (the server's: it may name a file), a
    line describing it, its public name (`label`: what the browser sends and is shown; no
    path) and a line on its strength and speed (`note`)."""

    spec: str
    description: str
    label: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", public_text(self.spec))


def _bundled_checkpoints() -> list[AgentChoice]:
    """The pretrained checkpoints shipped in ``agents/pretrained`` (package data)."""
    out = []
    try:
        folder = resources.files("fourhundred_agents") / "pretrained"
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - agents is always installed
        return out
    for name, kind in _PRETRAINED.items():
        path = folder / name
        if path.is_file():
            what = "bids and plays" if kind == "neural" else "bids (cards by its play policy)"
            out.append(
                AgentChoice(f"{kind}:{path}", f"bundled network {name}: {what}", f"{kind}:{name}")
            )
            if name in _SYMMETRIC:
                line = f"bundled network {name}, its policy averaged over the renamed suits"
                spec, label = f"{kind}:{path},symmetric=true", f"{kind}:{name},symmetric=true"
                out.append(AgentChoice(spec, line, label))
    return out


def _playable_by_name(name: str) -> bool:
    """Whether agent `name` can be made from its bare name: no required setting (a
    checkpoint path) and, for a bot that reads its own text (``cmd:COMMAND``,
    ``compose:bid=...,play=...``), a bare name its factory accepts."""
    settings = entry(name).settings
    if settings is None:  # the factory parses its own text: ask it (these refuse at once)
        try:
            make_agent(name, Rules(), seed=0)
        except FourHundredError:
            return False
        return True
    if not dataclasses.is_dataclass(settings):
        return True
    return not any(
        f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        for f in dataclasses.fields(settings)
    )


def agent_choices(extra: Iterable[str] = ()) -> dict[str, AgentChoice]:
    """The bots a browser may choose, by public name (:attr:`AgentChoice.label`), strongest
    first (STRENGTH): every registered agent that can be made from its bare name (not
    ``human``), the presets of PRESET_BOTS, the bundled checkpoints, then `extra` specs
    (checked by making one; two that would share a name are told apart by a number). An
    extra spec's ``name=`` is its public name, refused when another bot has it."""
    found: list[AgentChoice] = []
    for name, description in available_agents().items():
        if name != "human" and _playable_by_name(name):
            found.append(AgentChoice(name, description))
    found += [AgentChoice(spec, line) for spec, line in PRESET_BOTS.items()]
    found += _bundled_checkpoints()
    rank = {label: k for k, label in enumerate(STRENGTH)}
    found.sort(key=lambda c: rank.get(c.label, len(rank)))  # stable: the rest keep their order
    out = {c.label: dataclasses.replace(c, note=STRENGTH.get(c.label, "")) for c in found}
    for spec in extra:
        if parse_spec(spec)[0] == "human":
            raise FourHundredError(f"--agent {spec!r}: the person is you; expected a bot")
        make_agent(spec, Rules(), seed=0)  # an unknown name or a bad checkpoint fails here
        spec, name = split_name(spec)
        if name is not None:
            if name in out:
                raise FourHundredError(
                    f"--agent {with_name(spec, name)!r}: the name {name!r} is taken by "
                    f"{public_text(out[name].spec)!r}: expected a name no other bot has"
                )
            out[name] = AgentChoice(spec, "given to fourhundred serve --agent", name)
            continue
        if any(c.spec == spec for c in out.values()):
            continue
        label = public_text(spec)
        k = 2
        while label in out:
            label = f"{public_text(spec)} ({k})"
            k += 1
        out[label] = AgentChoice(spec, "given to fourhundred serve --agent", label)
    return out


def default_bot(choices: Mapping[str, AgentChoice]) -> str:
    """The public name of the first of DEFAULT_BOTS among `choices`, else the first."""
    for label in DEFAULT_BOTS:
        if label in choices:
            return label
    return next(iter(choices))
