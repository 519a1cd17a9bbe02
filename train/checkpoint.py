"""Writing checkpoints: a policy checkpoint (what agents load, :mod:`fourhundred_agents.neural.checkpoint`) and
the trainer's own, written atomically so that a crash never leaves half a file, and always
with CPU tensors (:func:`on_cpu`), whatever device trained them: a checkpoint loads anywhere."""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

import fourhundred_env
from fourhundred_agents.neural.checkpoint import (
    FORMAT,
    CheckpointError,
    load_policy,
    read_checkpoint,
)
from fourhundred_agents.neural.network import PolicyValueNet
from fourhundred_env.observation import OBS_VERSION
from fourhundred_env.rules import Rules

__all__ = [
    "FORMAT",
    "CheckpointError",
    "atomic_save",
    "load_policy",
    "on_cpu",
    "policy_record",
    "read_checkpoint",
    "save_policy",
]


def on_cpu(obj: Any) -> Any:
    """`obj` with every tensor in it (through dicts, lists and tuples) on the CPU: `obj`
    itself when they all are already (a CPU run's checkpoint is written as it always was),
    else a copy of the containers that hold moved tensors (a state_dict stays an OrderedDict
    with its ``_metadata``)."""
    if isinstance(obj, torch.Tensor):
        return obj if obj.device.type == "cpu" else obj.cpu()
    if isinstance(obj, dict):
        moved = {k: on_cpu(v) for k, v in obj.items()}
        if all(moved[k] is v for k, v in obj.items()):
            return obj
        out = copy.copy(obj)  # the same class, attributes and key order
        out.update(moved)
        return out
    if isinstance(obj, (list, tuple)):
        moved_items = [on_cpu(v) for v in obj]
        if all(a is b for a, b in zip(moved_items, obj, strict=True)):
            return obj
        return type(obj)(*moved_items) if hasattr(obj, "_fields") else type(obj)(moved_items)
    return obj


def atomic_save(obj: Any, path: str | Path) -> None:
    """torch.save of `obj` with its tensors on the CPU (:func:`on_cpu`) to a temporary file
    in the same folder, then rename: never a half file."""
    obj = on_cpu(obj)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def policy_record(
    net: PolicyValueNet, rules: Rules, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A policy checkpoint's contents (weights, net config, rules, OBS_VERSION, version)."""
    return {
        "format": FORMAT,
        "state_dict": net.state_dict(),
        "net": net.config.to_dict(),
        "rules": rules.to_dict(),
        "obs_version": OBS_VERSION,
        "package_version": fourhundred_env.__version__,
        "extra": dict(extra or {}),
    }


def save_policy(
    path: str | Path, net: PolicyValueNet, rules: Rules, extra: dict[str, Any] | None = None
) -> None:
    """Write a policy checkpoint (weights, net config, rules, OBS_VERSION, version)."""
    atomic_save(policy_record(net, rules, extra), path)
