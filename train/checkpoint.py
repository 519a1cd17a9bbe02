"""Checkpoints: weights plus everything needed to refuse a mismatched one, written atomically.

A checkpoint is a dict of tensors and plain values saved with ``torch.save`` and read with
``torch.load(..., weights_only=True)``, which never executes pickled code. It records the
network config, the rules, ``OBS_VERSION`` and the package version; loading refuses another
observation layout, other rules (when rules are given) or a corrupt file with a clear error.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

import fourhundred_env
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_VERSION, require_obs_version
from fourhundred_env.rules import Rules
from train.network import NetConfig, PolicyValueNet

FORMAT = "fourhundred-policy-v1"


class CheckpointError(FourHundredError):
    """A checkpoint that cannot be used: unreadable, corrupt, or made for something else."""


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


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The raw checkpoint dict, loaded without executing code; CheckpointError if unusable."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist: expected a file")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for corrupt or foreign files
        raise CheckpointError(
            f"checkpoint {str(path)!r} is unreadable or corrupt ({type(e).__name__}: "
            f"{str(e).splitlines()[0][:200]}): expected a file written by fourhundred"
        ) from None
    if not isinstance(data, dict) or data.get("format") not in (FORMAT, "fourhundred-train-v1"):
        raise CheckpointError(
            f"checkpoint {str(path)!r} is not a fourhundred checkpoint: expected format {FORMAT!r}"
        )
    return data


def load_policy(
    path: str | Path, rules: Rules | None = None, device: str | torch.device = "cpu"
) -> tuple[PolicyValueNet, Rules, dict[str, Any]]:
    """(net in eval mode, the checkpoint's rules, its metadata) from a checkpoint file.

    Refuses a checkpoint for another observation layout, or for rules other than `rules`.
    """
    data = read_checkpoint(path)
    policy = data["policy"] if data["format"] == "fourhundred-train-v1" else data
    try:
        require_obs_version(int(policy["obs_version"]), f"checkpoint {str(path)!r}")
    except FourHundredError as e:
        raise CheckpointError(str(e)) from None
    saved_rules = Rules.from_dict(policy["rules"])
    if rules is not None and saved_rules != rules:
        diff = {
            k: (v, getattr(rules, k))
            for k, v in saved_rules.to_dict().items()
            if getattr(rules, k) != v
        }
        raise CheckpointError(
            f"checkpoint {str(path)!r} was trained under other rules: (checkpoint, wanted) {diff}"
        )
    net = PolicyValueNet(NetConfig(**policy["net"]))
    try:
        net.load_state_dict(policy["state_dict"])
    except RuntimeError as e:
        raise CheckpointError(
            f"checkpoint {str(path)!r} weights do not fit its network config: {str(e)[:300]}"
        ) from None
    net.to(device).eval()
    meta = {k: policy[k] for k in ("package_version", "obs_version", "extra", "net")}
    return net, saved_rules, meta
