"""The tournament config: a frozen dataclass filled by the project's one config loader.

    cfg = load_config("configs/tournament_default.yaml", {"matches": 500, "workers": None})

YAML keys are the fields of :class:`TournamentConfig`. :mod:`fourhundred_env.configs` checks
each value against its field's annotation (an unknown key, or a value that does not fit, is
an error naming it); ``__post_init__`` then checks the ranges and how the fields agree. Two
shapes are accepted beyond the annotations: a list (`agents`, `mirror`, `agent_modules`) may
be one text of names separated by commas or spaces, and a rules preset given as an override
on top of a file's rules mapping replaces only its ``preset``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fourhundred_agents.remote.modules import resolve_module
from fourhundred_env.configs import build, check_fields, config_path, load_yaml
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.registry import entry, parse_spec, split_name, starts_program
from fourhundred_env.rules import Rules
from fourhundred_tournament.identity import files_digest, named_files, spec_files

__all__ = [
    "TournamentConfig",
    "TournamentConfigError",
    "config_from_mapping",
    "files_digest",
    "load_config",
    "named_files",
    "spec_files",
    "starts_program",
]

_SOURCE = "tournament config"
_TEXT_LISTS = ("agents", "mirror", "agent_modules")
_POSITIVE = ("matches", "max_hands", "workers", "table_batch", "chunk_matches")
_NON_NEGATIVE = ("bootstrap", "flush_seconds", "bt_prior", "ray_retries")
MAX_MATCHES = 1_000_000
"""Most duplicate matches per pairing (`matches`, `chunk_matches`): checked before anything is
allocated or played."""
MAX_BOOTSTRAP = 100_000
"""Most bootstrap resamples (`bootstrap`): checked before the first game, not after the last."""
MAX_TABLE_BATCH = 65_536
"""Most tables a job plays in lockstep (`table_batch`)."""
MAX_HANDS = 100_000
"""Most hands of one match (`max_hands`)."""
MAX_WORKERS = 1_024
"""Most worker processes (`workers`)."""
MAX_MOVE_SECONDS = 3_600.0
"""Longest per-move time limit, soft or hard (`move_time_limit_s`, `move_hard_limit_s`): an
hour; a limit must be finite and above 0 (``1e10`` or ``.inf`` is refused)."""
_AT_MOST = {
    "matches": MAX_MATCHES, "chunk_matches": MAX_MATCHES, "bootstrap": MAX_BOOTSTRAP,
    "table_batch": MAX_TABLE_BATCH, "max_hands": MAX_HANDS, "workers": MAX_WORKERS,
}  # fmt: skip
_FINITE = ("flush_seconds", "bt_prior")
_BUNDLED = "fourhundred_agents"  # the bundled bots' package: trusted in the tournament's process
_IN_PROCESS = ("human", "cmd")  # a person plays here; a cmd bot is its own process already


class TournamentConfigError(ConfigError):
    """A tournament config with an unknown key or an invalid value."""


@dataclass(frozen=True)
class TournamentConfig:
    """One tournament. YAML files in ``configs/`` load into it (:func:`load_config`)."""

    agents: tuple[str, ...]
    """Agent specs (``heuristic``, ``random:any``, ``neural:PATH``...); each, without its
    display name, is its label in the database. A spec ending in ``name=NAME``
    (``neural:PATH,name=mine``) is shown as NAME in the report, tables and plots; the name
    changes no game."""
    matches: int = 100
    """Duplicate matches per pairing; each is played twice, partnerships swapped (2x games).
    At most 1,000,000."""
    rules: Rules = field(default_factory=Rules)
    """Rules profile (YAML: a preset name, or a mapping of flags with an optional ``preset``)."""
    seed: int = 0
    """Seed of the agents' own randomness, and of the deals with ``deals: public``. With
    ``deals: secret`` the cards come from a secret drawn afresh for the tournament, so the
    seed tells a bot nothing of them (docs/tournaments.md, "Secret deals")."""
    deals: Literal["secret", "public"] = "secret"
    """"secret": dealt from a secret drawn from the operating system's randomness for this
    tournament and kept in its database (a resume deals the same cards; another tournament,
    of any seed, others), unknowable to the bots; "public": dealt from `seed` alone, so anyone
    who knows it predicts every card (reproducible research with bots you trust). A database
    keeps its own."""
    max_hands: int = 200
    """Hands after which an unfinished match is stopped and recorded as a draw."""
    mirror: bool | tuple[str, ...] = False
    """Also play agents against a copy of themselves (a check: 50%): true for all, or a list
    (of specs, or their names)."""
    workers: int = 2
    """Processes playing jobs in parallel; 1 plays in this process (the local backend)."""
    backend: Literal["local", "ray"] = "local"
    """Where jobs run: "local" in `workers` processes of this machine, "ray" as Ray tasks
    (the ``ray`` extra) on a local Ray instance or the cluster at `ray_address`. The rows
    are the same either way; this process writes them all."""
    ray_address: str | None = None
    """The Ray cluster to run on (``HOST:PORT`` of its head, or ``auto``); None starts a local
    Ray instance for the run. Only with ``backend: ray``."""
    ray_retries: int = 3
    """How often a job whose Ray worker or node died is played again (its finished games are
    kept, its unfinished ones played from their start) before the run stops."""
    table_batch: int = 512
    """Tables each job plays in lockstep (one batched call per agent instance per step). Fastest
    at ``2 * chunk_matches`` or more: all games of a job at once, no refills. At most 65,536."""
    chunk_matches: int = 256
    """Duplicate matches per job; fixes the job split, hence results, whatever `workers` is.
    At most 1,000,000."""
    move_time_limit_s: float | None = None
    """Soft per-move limit (slow moves are recorded); None: the rules' own value. Finite,
    above 0 and at most 3,600 s."""
    move_hard_limit_s: float | None = None
    """Hard per-move limit (the contract is forfeited); None: the rules' own value. Finite,
    above 0 and at most 3,600 s."""
    db: str | None = None
    """SQLite results file; None: ``<out_dir>/results.sqlite``."""
    out_dir: str = "runs/tournament"
    """Where the report (JSON, CSV) and, by default, the database go."""
    tensorboard: str | None = None
    """Directory for TensorBoard scalars of the report; None: no TensorBoard logging."""
    bootstrap: int = 1000
    """Bootstrap resamples for the Elo intervals (0: none; at most 100,000)."""
    bt_prior: float = 1.0
    """Virtual draws added per pairing in the Bradley-Terry fit (keeps ratings finite)."""
    elo_anchor: str | None = None
    """Agent whose Elo is pinned at 1500 (its spec or its name); None: the mean rating is
    1500."""
    progress: bool = True
    """Show a progress bar with ETA on stderr."""
    agent_modules: tuple[str, ...] = ()
    """Extra modules to import (in every worker) before making agents: they register their own
    agents with `fourhundred_agents.register_agent`. A module name (found from the current folder too) or
    the path of a ``.py`` file."""
    isolation: Literal["auto", "all", "none"] = "auto"
    """Which Python bots play in their own processes, killed and restarted when they pass the
    hard limit: "auto" the custom ones (registered outside the bundled `fourhundred_agents`
    package), "all" every one, "none" none (a bot that swallows the timeout can then hang the run).
    A person plays in this process; ``cmd:`` bots are always processes of their own."""
    flush_seconds: float = 0.5
    """How often a job sends finished rows to the database while it runs."""

    def __post_init__(self) -> None:
        """Convert and check each field by its annotation, then the ranges."""
        check_fields(self)
        object.__setattr__(
            self, "agent_modules", tuple(resolve_module(m) for m in self.agent_modules)
        )
        self._check_agents()
        if isinstance(self.mirror, tuple):
            object.__setattr__(self, "mirror", tuple(self._label(m, "mirror") for m in self.mirror))
        if self.elo_anchor is not None:
            object.__setattr__(self, "elo_anchor", self._label(self.elo_anchor, "elo_anchor"))
        for name in _POSITIVE:
            if getattr(self, name) < 1:
                raise TournamentConfigError(f"{name}={getattr(self, name)!r}: expected at least 1")
        if not 0 <= self.seed < 2**63:
            raise TournamentConfigError(
                f"seed={self.seed}: expected a seed of 0 or more, below 2**63"
            )
        for name in _NON_NEGATIVE:
            if getattr(self, name) < 0:
                raise TournamentConfigError(f"{name}={getattr(self, name)!r}: expected 0 or more")
        self._check_bounds()
        if self.ray_address is not None and self.backend != "ray":
            raise TournamentConfigError(
                f"ray_address={self.ray_address!r}: expected backend 'ray' with an address "
                f"(backend is {self.backend!r})"
            )
        if self.backend == "ray" and self.interactive:
            raise TournamentConfigError(
                "backend 'ray' with agent 'human': a person plays in this process; "
                "expected backend 'local'"
            )
        self.effective_rules  # noqa: B018  (Rules checks the time limits)

    def _check_bounds(self) -> None:
        """Sizes and time limits within their documented bounds (the MAX_* constants), checked
        before anything is allocated or played."""
        for name, most in _AT_MOST.items():
            if getattr(self, name) > most:
                raise TournamentConfigError(
                    f"{name}={getattr(self, name)!r}: expected at most {most:,}"
                )
        for name in _FINITE:
            if not math.isfinite(getattr(self, name)):
                raise TournamentConfigError(
                    f"{name}={getattr(self, name)!r}: expected a finite number"
                )
        for name in ("move_time_limit_s", "move_hard_limit_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and 0 < value <= MAX_MOVE_SECONDS):
                raise TournamentConfigError(
                    f"{name}={value!r}: expected a finite number of seconds above 0 and at most "
                    f"{MAX_MOVE_SECONDS:,.0f}"
                )

    def _check_agents(self) -> None:
        """The agents are distinct non-empty specs (the same bot under two names is one
        bot), two or more unless mirrored, and no display name is another agent's."""
        agents = list(self.agents)
        if not all(agents):
            raise TournamentConfigError(f"agents={agents!r}: expected a list of agent specs")
        labels = self.labels  # a bad name: one line naming the spec
        twice = sorted({a for a in labels if labels.count(a) > 1})
        if twice:
            raise TournamentConfigError(
                f"agents={agents}: {twice[0]!r} is listed twice (a name does not make another "
                "bot); expected distinct specs (use mirror: true to play an agent against itself)"
            )
        shown: dict[str, str] = {}
        for label in labels:
            for text in dict.fromkeys((label, self.display(label))):
                if text in shown:
                    raise TournamentConfigError(
                        f"agents={agents}: {text!r} would stand for two agents, "
                        f"{shown[text]!r} and {label!r}: expected a distinct name for each "
                        "(and none that is another agent's spec)"
                    )
                shown[text] = label
        if len(agents) < 2 and not self.mirror:
            raise TournamentConfigError(
                f"agents={agents}: expected at least 2 agents (or mirror: true)"
            )

    @property
    def labels(self) -> tuple[str, ...]:
        """The agents' labels in the database: their specs without ``name=``, in order."""
        return tuple(split_name(spec)[0] for spec in self.agents)

    @property
    def names(self) -> dict[str, str]:
        """The display names given (``name=``), by label."""
        pairs = (split_name(spec) for spec in self.agents)
        return {label: name for label, name in pairs if name is not None}

    def display(self, label: str) -> str:
        """What the report shows for the agent labelled `label`: its name, else the label."""
        return self.names.get(label, label)

    def _label(self, text: str, key: str) -> str:
        """The label of the agent `text` stands for (its label, its spec as given, or its
        name); TournamentConfigError naming `key` when none."""
        for spec, label in zip(self.agents, self.labels, strict=True):
            if text in (spec, label, self.display(label)):
                return label
        raise TournamentConfigError(
            f"{key}={text!r}: not among the agents {list(self.agents)}: expected one of them "
            "(its spec or its name)"
        )

    @property
    def effective_rules(self) -> Rules:
        """`rules` with the time-limit overrides applied."""
        changes: dict[str, Any] = {}
        if self.move_time_limit_s is not None:
            changes["move_time_limit_s"] = float(self.move_time_limit_s)
        if self.move_hard_limit_s is not None:
            changes["move_hard_limit_s"] = float(self.move_hard_limit_s)
        if "move_time_limit_s" in changes and "move_hard_limit_s" not in changes:
            changes["move_hard_limit_s"] = max(
                self.rules.move_hard_limit_s, changes["move_time_limit_s"]
            )
        if "move_hard_limit_s" in changes and "move_time_limit_s" not in changes:
            changes["move_time_limit_s"] = min(
                self.rules.move_time_limit_s, changes["move_hard_limit_s"]
            )
        return self.rules.replace(**changes) if changes else self.rules

    @property
    def interactive(self) -> bool:
        """A person plays (agent `human`): games one at a time, in this process."""
        return any(parse_spec(spec)[0] == "human" for spec in self.labels)

    def isolated_agents(self, specs: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """The agents (of `specs`, default the `labels`) played in processes of their own under
        `isolation` (cmd bots, which are such processes by nature, and a person, who plays
        here, are not listed)."""
        if self.isolation == "none":
            return ()
        out = []
        for spec in self.labels if specs is None else specs:
            name = parse_spec(spec)[0]
            if name in _IN_PROCESS:
                continue
            try:
                module = getattr(entry(name).factory, "__module__", None) or ""
            except FourHundredError:  # unknown (yet): refused when agents are made
                module = ""
            if self.isolation == "all" or module.partition(".")[0] != _BUNDLED:
                out.append(spec)
        return tuple(out)

    @property
    def db_path(self) -> Path:
        """The SQLite results file: `db`, or ``results.sqlite`` in `out_dir`."""
        return Path(self.db) if self.db else Path(self.out_dir) / "results.sqlite"

    def pairings(self) -> list[tuple[str, str]]:
        """(a, b) label pairs, sorted within and across; (a, a) mirrors when `mirror`."""
        labels = sorted(self.labels)
        pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
        mirrored = labels if self.mirror is True else sorted(self.mirror or ())
        pairs += [(a, a) for a in mirrored]
        return sorted(pairs)

    def fingerprint(self) -> dict[str, Any]:
        """What a results database must agree on to be resumed: agents (their labels: a
        name is no part of a bot), rules, seed, max_hands."""
        files = {}
        for spec in self.labels:
            digest = files_digest(spec)
            if digest is not None:
                files[spec] = digest
        return {
            "agents": sorted(self.labels),
            "agent_files": files,
            "rules": self.effective_rules.to_dict(),
            "seed": self.seed,
            "max_hands": self.max_hands,
        }


def config_from_mapping(values: Mapping[str, Any], source: str = _SOURCE) -> TournamentConfig:
    """A checked config from a mapping (YAML); unknown keys and misfits raise
    TournamentConfigError naming them, prefixed by `source`."""
    try:
        known = {f.name for f in fields(TournamentConfig)}
        if isinstance(values, Mapping) and "agents" not in values and set(values) <= known:
            # the one field without a default: say so rather than let __init__ raise TypeError
            raise ConfigError(f"{source} has no 'agents': expected a list of agent specs")
        return build(TournamentConfig, _loose_values(values), source)
    except ConfigError as e:  # the loader's own errors, and the range checks of __post_init__
        raise TournamentConfigError(str(e)) from None


def _loose_values(values: Any) -> Any:
    """`values` with the shapes the annotations do not take made into ones they do: a list
    written as one text (``agents: heuristic, random``) split on commas and spaces, and numpy
    integers (a seed computed with numpy, say) made Python ints."""
    if not isinstance(values, Mapping):
        return values  # build() refuses it, naming what it got
    out = dict(values)
    for key, value in values.items():
        if key in _TEXT_LISTS and isinstance(value, str):
            out[key] = value.replace(",", " ").split()
        elif isinstance(value, np.integer):
            out[key] = int(value)
    return out


def load_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> TournamentConfig:
    """A config from a YAML file or a bundled config's name (``"default"`` for
    configs/tournament_default.yaml, see :func:`~fourhundred_env.configs.config_path`;
    optional) with `overrides` (None values ignored) on top."""
    try:
        if path is not None:
            path = config_path(path, kind="tournament")
        values = load_yaml(path, _SOURCE) if path is not None else {}
    except ConfigError as e:
        raise TournamentConfigError(str(e)) from None
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "rules" and isinstance(value, str) and isinstance(values.get("rules"), dict):
            values["rules"] = {**values["rules"], "preset": value}
        else:
            values[key] = value
    return config_from_mapping(values)
