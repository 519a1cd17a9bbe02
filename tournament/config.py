"""The tournament config: one frozen dataclass, loaded from YAML files and overrides.

    cfg = load_config("configs/tournament_default.yaml", {"matches": 500, "workers": None})

YAML keys are the fields of :class:`TournamentConfig`; an unknown key is an error that names
it, and so is a value that does not fit its field.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import Rules

__all__ = ["TournamentConfig", "TournamentConfigError", "config_from_mapping", "load_config"]


class TournamentConfigError(FourHundredError):
    """A tournament config with an unknown key or an invalid value."""


@dataclass(frozen=True)
class TournamentConfig:
    """One tournament. YAML files in ``configs/`` load into it (:func:`load_config`)."""

    agents: tuple[str, ...]
    """Agent specs (``heuristic``, ``random:any``, ``neural:PATH``...); each is also its label."""
    matches: int = 100
    """Duplicate matches per pairing; each is played twice, partnerships swapped (2x games)."""
    rules: Rules = field(default_factory=Rules)
    """Rules profile (YAML: a preset name, or a mapping of flags with an optional ``preset``)."""
    seed: int = 0
    """Seed of the deals (and of the agents' own randomness)."""
    max_hands: int = 200
    """Hands after which an unfinished match is stopped and recorded as a draw."""
    mirror: bool | tuple[str, ...] = False
    """Also play agents against a copy of themselves (a check: 50%): true for all, or a list."""
    workers: int = 2
    """Processes playing jobs in parallel; 1 plays in this process."""
    table_batch: int = 512
    """Tables each job plays in lockstep (one batched call per agent instance per step). Fastest
    at ``2 * chunk_matches`` or more: all games of a job at once, no refills."""
    chunk_matches: int = 256
    """Duplicate matches per job; fixes the job split, hence results, whatever `workers` is."""
    move_time_limit_s: float | None = None
    """Soft per-move limit (slow moves are recorded); None: the rules' own value."""
    move_hard_limit_s: float | None = None
    """Hard per-move limit (the contract is forfeited); None: the rules' own value."""
    db: str | None = None
    """SQLite results file; None: ``<out_dir>/results.sqlite``."""
    out_dir: str = "runs/tournament"
    """Where the report (JSON, CSV) and, by default, the database go."""
    tensorboard: str | None = None
    """Directory for TensorBoard scalars of the report; None: no TensorBoard logging."""
    bootstrap: int = 1000
    """Bootstrap resamples for the Elo intervals (0: none)."""
    bt_prior: float = 1.0
    """Virtual draws added per pairing in the Bradley-Terry fit (keeps ratings finite)."""
    elo_anchor: str | None = None
    """Agent whose Elo is pinned at 1500; None: the mean rating is 1500."""
    progress: bool = True
    """Show a progress bar with ETA on stderr."""
    agent_modules: tuple[str, ...] = ()
    """Extra modules to import (in every worker) before making agents: they register their own
    agents with `agents.register_agent`."""
    flush_seconds: float = 0.5
    """How often a job sends finished rows to the database while it runs."""

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
        return any(spec.partition(":")[0] == "human" for spec in self.agents)

    @property
    def db_path(self) -> Path:
        return Path(self.db) if self.db else Path(self.out_dir) / "results.sqlite"

    def pairings(self) -> list[tuple[str, str]]:
        """(a, b) label pairs, sorted within and across; (a, a) mirrors when `mirror`."""
        labels = sorted(self.agents)
        pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
        mirrored = labels if self.mirror is True else sorted(self.mirror or ())
        pairs += [(a, a) for a in mirrored]
        return sorted(pairs)

    def fingerprint(self) -> dict[str, Any]:
        """What a results database must agree on to be resumed: agents, rules, seed, max_hands."""
        files = {}
        for spec in self.agents:
            arg = spec.partition(":")[2]
            if arg and Path(arg).is_file():
                files[spec] = hashlib.sha256(Path(arg).read_bytes()).hexdigest()
        return {
            "agents": sorted(self.agents),
            "agent_files": files,
            "rules": self.effective_rules.to_dict(),
            "seed": self.seed,
            "max_hands": self.max_hands,
        }


_INT_FIELDS = (
    "matches",
    "seed",
    "max_hands",
    "workers",
    "table_batch",
    "chunk_matches",
    "bootstrap",
)
_POSITIVE = ("matches", "max_hands", "workers", "table_batch", "chunk_matches")


def config_from_mapping(values: Mapping[str, Any]) -> TournamentConfig:
    """Build and validate a config from a mapping (YAML); unknown keys are an error."""
    known = {f.name for f in fields(TournamentConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise TournamentConfigError(
            f"unknown tournament config key(s) {unknown}: expected some of {sorted(known)}"
        )
    values = dict(values)
    if "agents" not in values:
        raise TournamentConfigError(
            "tournament config has no 'agents': expected a list of agent specs"
        )
    agents = values["agents"]
    if isinstance(agents, str):
        agents = agents.replace(",", " ").split()
    if not isinstance(agents, list | tuple) or not all(isinstance(a, str) and a for a in agents):
        raise TournamentConfigError(f"agents={agents!r}: expected a list of agent specs")
    values["agents"] = tuple(agents)
    rules = values.get("rules", "wiki")
    if isinstance(rules, str):
        values["rules"] = Rules.preset(rules)
    elif isinstance(rules, Mapping):
        values["rules"] = Rules.from_dict(rules)
    elif not isinstance(rules, Rules):
        raise TournamentConfigError(
            f"rules={rules!r}: expected a preset name or a mapping of flags"
        )
    for name in _INT_FIELDS:
        if name in values:
            v = values[name]
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise TournamentConfigError(f"{name}={v!r}: expected an integer")
            values[name] = int(v)
    if "progress" in values and not isinstance(values["progress"], bool):
        raise TournamentConfigError(f"progress={values['progress']!r}: expected true or false")
    mirror = values.get("mirror", False)
    if isinstance(mirror, str):
        mirror = mirror.replace(",", " ").split()
    if isinstance(mirror, list | tuple):
        mirror = tuple(mirror)
        if not all(isinstance(m, str) for m in mirror):
            raise TournamentConfigError(f"mirror={mirror!r}: expected true, false or agent specs")
    elif not isinstance(mirror, bool):
        raise TournamentConfigError(f"mirror={mirror!r}: expected true, false or a list of agents")
    values["mirror"] = mirror
    for name in ("move_time_limit_s", "move_hard_limit_s", "bt_prior", "flush_seconds"):
        v = values.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise TournamentConfigError(f"{name}={v!r}: expected a number")
    mods = values.get("agent_modules", ())
    if isinstance(mods, str):
        mods = mods.replace(",", " ").split()
    if not isinstance(mods, list | tuple) or not all(isinstance(m, str) for m in mods):
        raise TournamentConfigError(f"agent_modules={mods!r}: expected a list of module names")
    values["agent_modules"] = tuple(mods)
    for name in ("db", "out_dir", "tensorboard", "elo_anchor"):
        v = values.get(name)
        if v is not None and not isinstance(v, str):
            raise TournamentConfigError(f"{name}={v!r}: expected a string")
    cfg = TournamentConfig(**values)
    _validate(cfg)
    return cfg


def _validate(cfg: TournamentConfig) -> None:
    if len(set(cfg.agents)) != len(cfg.agents):
        raise TournamentConfigError(
            f"agents={list(cfg.agents)}: an agent is listed twice; expected distinct specs "
            "(use mirror: true to play an agent against itself)"
        )
    if isinstance(cfg.mirror, tuple):
        unknown = [m for m in cfg.mirror if m not in cfg.agents]
        if unknown:
            raise TournamentConfigError(
                f"mirror={list(cfg.mirror)}: {unknown} not among the agents {list(cfg.agents)}"
            )
    if len(cfg.agents) < 2 and not cfg.mirror:
        raise TournamentConfigError(
            f"agents={list(cfg.agents)}: expected at least 2 agents (or mirror: true)"
        )
    for name in _POSITIVE:
        if getattr(cfg, name) < 1:
            raise TournamentConfigError(f"{name}={getattr(cfg, name)!r}: expected at least 1")
    if cfg.bootstrap < 0:
        raise TournamentConfigError(f"bootstrap={cfg.bootstrap!r}: expected 0 or more")
    if cfg.flush_seconds < 0:
        raise TournamentConfigError(f"flush_seconds={cfg.flush_seconds!r}: expected 0 or more")
    if cfg.bt_prior < 0:
        raise TournamentConfigError(f"bt_prior={cfg.bt_prior!r}: expected 0 or more")
    if cfg.elo_anchor is not None and cfg.elo_anchor not in cfg.agents:
        raise TournamentConfigError(
            f"elo_anchor={cfg.elo_anchor!r}: expected one of the agents {list(cfg.agents)}"
        )
    cfg.effective_rules  # noqa: B018  (validates the time limits)


def load_config(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> TournamentConfig:
    """A config from a YAML file (optional) with `overrides` (None values ignored) on top."""
    values: dict[str, Any] = {}
    if path is not None:
        import yaml

        p = Path(path)
        if not p.is_file():
            raise TournamentConfigError(f"tournament config {str(p)!r} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as e:
            raise TournamentConfigError(
                f"tournament config {str(p)!r} is not valid YAML: {e}"
            ) from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise TournamentConfigError(
                f"tournament config {str(p)!r} holds {type(loaded).__name__}: expected a mapping"
            )
        values.update(loaded)
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "rules" and isinstance(value, str) and isinstance(values.get("rules"), dict):
            values["rules"] = {**values["rules"], "preset": value}
        else:
            values[key] = value
    return config_from_mapping(values)


def replace(cfg: TournamentConfig, **changes: Any) -> TournamentConfig:
    """A validated copy of `cfg` with some fields changed."""
    new = dataclasses.replace(cfg, **changes)
    _validate(new)
    return new
