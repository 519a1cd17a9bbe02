"""Training runs read from their folders: the TensorBoard scalars of each run (`Series`, read
with TensorBoard's own `EventAccumulator`, which also drops the events a resumed run purged)
and what its config.yaml says (`Run`, `load_runs`).

Runs of other trainers read the same: a CleanRL-style run logs the tags ``fourhundred train``
logs (``charts/*``, ``losses/*``); a Stable-Baselines3 run's tags are read under ours too
(`SB3_TAGS`), so that ``fourhundred plot`` draws both."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.errors import FourHundredError


class NoRunsError(FourHundredError):
    """No TensorBoard event files where run folders were expected."""


@dataclass
class Series:
    """One scalar tag of one run: `steps` (N,) int64 TensorBoard steps (learner decisions;
    the update number in runs logged before that), `values` (N,) float64."""

    steps: np.ndarray
    values: np.ndarray


@dataclass
class Run:
    """The scalars of one run folder and what its config.yaml says (empty if absent)."""

    path: Path
    label: str
    scalars: dict[str, Series]
    config: dict[str, Any] = field(default_factory=dict)

    def has(self, tag: str) -> bool:
        """Whether the run logged `tag` with at least one finite value."""
        s = self.scalars.get(tag)
        return s is not None and bool(np.isfinite(s.values).any())


SB3_TAGS: dict[str, tuple[str, float]] = {
    "rollout/success_rate": ("charts/win_rate", 1.0),
    "rollout/ep_rew_mean": ("charts/episodic_return", 1.0),
    "train/policy_gradient_loss": ("losses/policy_loss", 1.0),
    "train/value_loss": ("losses/value_loss", 1.0),
    "train/entropy_loss": ("losses/entropy", -1.0),  # SB3 logs minus the entropy
    "train/approx_kl": ("losses/approx_kl", 1.0),
    "train/clip_fraction": ("losses/clipfrac", 1.0),
    "train/explained_variance": ("losses/explained_variance", 1.0),
}
"""An SB3 tag -> (the tag our figures read, the factor): added to a run's scalars when it
logged the first and not the second. ``rollout/success_rate`` is the share of the last 100
episodes won (``info["is_success"]``); SB3's value loss is not halved as CleanRL's is."""


def _has_events(path: Path) -> bool:
    return path.is_dir() and any(path.glob("events.out.tfevents.*"))


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run folders among `paths`: a folder with event files is a run; a folder without any
    stands for the run folders below it (e.g. ``runs/``). Raises NoRunsError if none."""
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise NoRunsError(f"run folder {str(p)!r} does not exist")
        if _has_events(p):
            found.append(p)
            continue
        below = sorted({f.parent for f in p.rglob("events.out.tfevents.*")}) if p.is_dir() else []
        if not below:
            raise NoRunsError(
                f"{str(p)!r} holds no TensorBoard event files (events.out.tfevents.*): "
                "expected a run folder written by `fourhundred train` (any trainer), or a "
                "folder of them"
            )
        found.extend(below)
    return list(dict.fromkeys(found))


def read_scalars(run_dir: str | Path) -> dict[str, Series]:
    """Every scalar tag of one run folder, all events kept (no reservoir sampling)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags().get("scalars", []):
        events = acc.Scalars(tag)
        steps = np.array([e.step for e in events], np.int64)
        values = np.array([e.value for e in events], np.float64)
        order = np.argsort(steps, kind="stable")
        out[tag] = Series(steps[order], values[order])
    sb3 = [tag for tag in SB3_TAGS if tag in out]
    for theirs in sb3:
        ours, factor = SB3_TAGS[theirs]
        if ours not in out:
            out[ours] = Series(out[theirs].steps, factor * out[theirs].values)
    if sb3 and "charts/decisions" not in out:  # SB3's step is its num_timesteps: decisions
        steps = np.unique(np.concatenate([s.steps for s in out.values()]))
        out["charts/decisions"] = Series(steps, steps.astype(np.float64))
    return out


def _read_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "config.yaml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def load_runs(paths: Iterable[str | Path]) -> list[Run]:
    """Runs (see :func:`find_runs`) with their scalars, labelled "name (seed s)" from their
    config.yaml, or by folder name when that is missing or not unique."""
    dirs = find_runs(paths)
    runs = [Run(d, d.name, read_scalars(d), _read_config(d)) for d in dirs]
    labels = [
        f"{r.config['name']} (seed {r.config['seed']})"
        if {"name", "seed"} <= r.config.keys()
        else r.path.name
        for r in runs
    ]
    for r, label in zip(runs, labels, strict=True):
        r.label = label if labels.count(label) == 1 else r.path.name
    return runs
