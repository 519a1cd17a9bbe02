"""Writing checkpoints: a policy checkpoint (what agents load, :mod:`fourhundred_agents.neural.checkpoint`) and
the trainer's own, written atomically so that a crash never leaves half a file."""

from __future__ import annotations

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
    "policy_record",
    "read_checkpoint",
    "save_policy",
]


def atomic_save(obj: Any, path: str | Path) -> None:
    """torch.save to a temporary file in the same folder, then rename: never a half file."""
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
