"""Reading policy checkpoints safely: weights plus everything needed to refuse a mismatched one.

A checkpoint is a dict of tensors and plain values written by ``torch.save`` (by the trainer,
:mod:`train.checkpoint`) and read here with ``torch.load(..., weights_only=True)``, which
never executes pickled code. It records the network config, the rules, ``OBS_VERSION`` and
the package version; loading refuses another observation layout, other rules (when rules
are given) or a corrupt file with a clear error. It lives beside the agent that plays it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from agents.network import NetConfig, PolicyValueNet
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import require_obs_version
from fourhundred_env.rules import Rules

FORMAT = "fourhundred-policy-v1"


class CheckpointError(FourHundredError):
    """A checkpoint that cannot be used: unreadable, corrupt, or made for something else."""


PRETRAINED = Path(__file__).resolve().parent / "pretrained"
"""The bundled checkpoints (package data of ``agents``)."""


def resolve_checkpoint(path: str | Path) -> Path:
    """`path` as given when it is a file; else ``agents/pretrained/NAME`` (as the bundled
    configs write it) is the installed package's copy, so those configs work from any
    directory."""
    path = Path(path)
    if path.is_file() or path.is_absolute() or path.parent != Path("agents/pretrained"):
        return path
    bundled = PRETRAINED / path.name
    return bundled if bundled.is_file() else path


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The raw checkpoint dict, loaded without executing code; CheckpointError if unusable."""
    path = resolve_checkpoint(path)
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
