"""Expert iteration's config (``mode: exit``): `ExitConfig`, loading it, and what a resume may
change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fourhundred_agents.neural.device import check_device
from fourhundred_agents.neural.files import PRETRAINED
from fourhundred_env.configs import (
    asdict_shallow,
    build,
    check_fields,
    check_numbers,
    config_path,
    load_yaml,
    parse_overrides,
)
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules
from fourhundred_train.run_data import check_run_fields

DEFAULT_INIT = str(PRETRAINED / "selfplay.pt")
AGENT_KEYS = ("eval_opponent",)
"""The config's agent specs (`init` and `bidder` are checkpoints: data)."""
RESUMABLE = ("workers", "backend", "ray_address", "eval_matches", "progress", "device")
"""Keys a resumed run may change: they do not change the labels or the weights (the device
changes the weights only in their last bits on a GPU, see `device`)."""


@dataclass(frozen=True)
class ExitConfig:
    """An expert-iteration run (see the module docstring)."""

    name: str = "exit"
    """Name of the run (its folder is runs_dir/name__seed__time)."""
    mode: Literal["exit"] = "exit"
    """This trainer (``fourhundred train`` picks it by this key)."""
    seed: int = 1
    """Seed of everything: the matches, the worlds, the fit."""
    rules: str = "wiki"
    """Rules preset."""
    init: str = DEFAULT_INIT
    """The policy checkpoint the first iteration searches over and the fit starts from."""
    bidder: str = ""
    """A bidding network's checkpoint (``net: bid_features``, such as
    agents/pretrained/bidder.pt) that bids for the network: the run's checkpoints hold both
    networks (agents/neural/bid_play.py; an `init` that holds both keeps its own) and the
    iterations fit the card play only (bid_share 0). '': the network's own bid head bids."""
    iterations: int = 4
    """Rounds of (play, value by search, fit)."""
    positions: int = 20000
    """Positions valued per iteration."""
    bid_share: float = 0.2
    """Share of those positions that are bids (the rest: card play)."""
    num_tables: int = 256
    """Matches played side by side while positions are recorded."""
    max_hands: int = 200
    """A match still running after this many hands is abandoned (a new one starts)."""
    sample: bool = True
    """The recorded matches sample the network's actions (False: its most likely one)."""
    worlds: int = 16
    """Worlds per card-play position (two halves of worlds/2, see the module docstring)."""
    bid_worlds: int = 32
    """Worlds per bidding position."""
    candidates: int = 64
    """Deals drawn per card-play position before weighting and resampling to `worlds`."""
    chunk: int = 64
    """Positions per labelling task (the unit of work written to the run folder)."""
    workers: int = 2
    """Processes (or Ray tasks at once) that value the positions."""
    backend: Literal["local", "ray"] = "local"
    """Where positions are valued: "local" processes, or Ray tasks (the ``ray`` extra)."""
    ray_address: str | None = None
    """backend ray: the cluster to join (HOST:PORT or "auto"); None starts a local Ray with
    `workers` CPUs."""
    prior: bool = True
    """The policy target is the searched network's own policy times exp(value / temperature)
    (a KL-regularised improvement of it: where the values cannot tell actions apart, the
    prior stays); False: the softmax of the values alone."""
    temperature: float | None = None
    """Softmax temperature of the policy target, in match-win chance; None: fitted (see
    `temperature_by`)."""
    temperature_by: Literal["trick", "all"] = "trick"
    """What a fitted temperature is fitted for: "trick", one for the bids and one for each
    trick of the hand (the values' noise falls as the hand goes on), each fitted on that
    group's fitted positions; "all", one for every position, fitted on the held-out ones."""
    objective: Literal["value", "cross_entropy"] = "value"
    """How the policy is fitted to its target (prior x exp(value / temperature)): "value",
    by the policy's expected value by the search's values less its KL divergence from the
    prior times the temperature (where the network cannot reach the target, its errors go
    where they cost least); "cross_entropy", by the cross-entropy to the target."""
    symmetry: Literal["suits", "none"] = "none"
    """What the fit makes of the game's symmetry. "suits": the three plain suits are equal
    (fourhundred_env/symmetry.py), so the targets' prior is the network's policy averaged over
    the six renamings of those suits, and the fit shows each position under a renaming drawn
    anew for every pass (the network learns one policy for all six). "none": the positions as
    played and the network's own policy."""
    distill: int = 0
    """Positions of the start network's own matches at which, before the first iteration, its
    card network is fitted to its own policy averaged over the six renamings of the plain
    suits (cross-entropy, each position shown in a renaming drawn anew for every pass): one
    network that plays as the average does, at one network's cost. The iterations then search
    over that network. 0: none."""
    distill_epochs: int = 8
    """Passes over the `distill` positions."""
    holdout: float = 0.1
    """Share of each iteration's positions held out of the fit (temperature, agreement), and
    of the `distill` positions."""
    window: int = 2
    """Iterations of positions the fit uses (the newest ones)."""
    epochs: int = 4
    """Passes over the window's positions per iteration."""
    batch_size: int = 256
    """Positions per gradient step."""
    learning_rate: float = 0.0001
    """Adam's learning rate."""
    value_coef: float = 0.25
    """Weight of the value head's squared error (match-win chance units) beside the policy's
    cross-entropy."""
    eval_matches: int = 100
    """Duplicate match pairs per evaluation (2 matches each; 0: none)."""
    eval_opponent: str = "heuristic-v1"
    """The fixed opponent of the evaluations."""
    gate: float | None = None
    """An iteration's network is kept only if it wins at least this share of its evaluation
    against the network it was fitted from (AlphaGo Zero's gate, 0.55); if not, the next
    iteration searches over and fits that network again, and policy.pt stays the newest one
    kept (the run's start if none is). None: every iteration's network is kept."""
    torch_threads: int = 2
    """torch.set_num_threads of the fit."""
    device: str = "auto"
    """Where the fit runs: "auto" (a CUDA GPU if torch finds one, else the CPU), "cpu",
    "cuda" or "cuda:N". The matches and the search's labels are played on the CPU, and the
    checkpoints hold CPU tensors; a resume may change it. On the CPU a seed gives the same
    weights bit for bit; on a GPU not quite (docs/training.md, "Training on a GPU")."""
    progress: bool = True
    """Progress bars."""
    runs_dir: str = "runs"
    """Folder of run folders."""

    def __post_init__(self) -> None:
        check_fields(self)
        Rules.preset(self.rules)
        check_device(self.device)  # its form; whether this machine has it, when a run starts
        check_numbers(self)  # no nan or inf; the seed's range
        for name in ("iterations", "positions", "num_tables", "max_hands", "bid_worlds",
                     "candidates", "chunk", "workers", "window", "epochs", "batch_size",
                     "distill_epochs", "torch_threads"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)}: expected at least 1")
        for name in ("worlds", "bid_worlds"):  # two halves of the worlds
            if getattr(self, name) < 2 or getattr(self, name) % 2:
                raise ConfigError(
                    f"{name}={getattr(self, name)}: expected an even number, at least 2"
                )
        if self.window > self.iterations:
            raise ConfigError(
                f"window={self.window}: expected at most iterations={self.iterations} "
                "(the fit cannot keep more iterations than the run stores)"
            )
        if self.distill < 0:
            raise ConfigError(f"distill={self.distill}: expected 0 (none) or more positions")
        if not 0.0 <= self.bid_share <= 1.0:
            raise ConfigError(f"bid_share={self.bid_share}: expected a share from 0 to 1")
        if self.bidder and self.bid_share:
            raise ConfigError(
                f"bid_share={self.bid_share} with bidder={self.bidder!r}: expected bid_share 0 "
                "(the bidding network bids; the iterations fit the card play only)"
            )
        if not 0.0 < self.holdout < 0.5:
            raise ConfigError(f"holdout={self.holdout}: expected a share above 0 and below 0.5")
        if self.temperature is not None and not self.temperature > 0:
            raise ConfigError(
                f"temperature={self.temperature}: expected a value > 0, or null to fit it"
            )
        for name in ("learning_rate",):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name}={getattr(self, name)}: expected a value > 0")
        if not self.value_coef >= 0:
            raise ConfigError(f"value_coef={self.value_coef}: expected 0 or more")
        if self.eval_matches < 0:
            raise ConfigError(f"eval_matches={self.eval_matches}: expected 0 (none) or more")
        if self.gate is not None:
            if not 0.0 < self.gate < 1.0:
                raise ConfigError(f"gate={self.gate}: expected a win rate above 0 and below 1")
            if not self.eval_matches:
                raise ConfigError(
                    f"gate={self.gate} with eval_matches=0: expected eval_matches of 1 or more "
                    "(the gate is the evaluation against the network fitted from)"
                )
        if self.ray_address is not None and self.backend != "ray":
            raise ConfigError(
                f"ray_address={self.ray_address!r}: expected backend 'ray' with an address"
            )

    def to_dict(self) -> dict:
        """The init fields as a dict (values as they are), as saved in config.yaml."""
        return asdict_shallow(self)


def load_exit_config(path, overrides=()) -> ExitConfig:
    """ExitConfig from a YAML file (or bundled name) plus ``key=value`` overrides."""
    values = load_yaml(config_path(path)) if path is not None else {}
    texts = parse_overrides(overrides)
    values.update(texts)
    return build(ExitConfig, values, str(path) if path is not None else "config", text=texts)


def resume_config(run_dir: Path, overrides=()) -> ExitConfig:
    """The config of the run in `run_dir` with `overrides`, which may change only the keys
    of RESUMABLE (the others would give other labels or weights than a straight run). Its
    eval_opponent, if it starts a program, is refused unless an override names it again: a
    run folder is data (`check_run_fields`)."""
    saved = load_exit_config(run_dir / "config.yaml")
    config = load_exit_config(run_dir / "config.yaml", overrides)
    check_run_fields(config.to_dict(), parse_overrides(overrides), AGENT_KEYS,
                     where=f"--resume {str(run_dir)!r}: ")  # fmt: skip
    new, old = config.to_dict(), saved.to_dict()
    changed = sorted(k for k in new if new[k] != old[k] and k not in RESUMABLE)
    if changed:
        raise ConfigError(
            f"--resume {run_dir}: overrides change {', '.join(changed)}: expected only "
            f"{', '.join(RESUMABLE)} to differ from the run's config.yaml (start a new run)"
        )
    return config


def is_exit(path) -> bool:
    """The YAML at `path` (or bundled name) is a ``mode: exit`` config."""
    if path is None:
        return False
    values = load_yaml(config_path(path))
    return isinstance(values, dict) and values.get("mode") == "exit"
