"""Reading policy checkpoints safely: weights plus everything needed to refuse a mismatched one.

A checkpoint is a dict of tensors and plain values written by ``torch.save`` (by the trainer,
:mod:`train.checkpoint`) and read here with ``torch.load(..., weights_only=True)``, which
never executes pickled code. It records the network config, the rules, ``OBS_VERSION`` and
the package version. Every file that cannot be played is refused in one line naming the file
and the problem, in our words (never torch's): missing, empty, truncated or not a torch file,
holding more than tensors and plain values, missing keys, a network config with fields this
version does not know, an input size other than the encoder's ``OBS_SIZE``, another
observation layout, weights that do not fit or are not finite, or rules of another game (the
conduct flags, time limits and ``auto_claim``, are not compared: ``Rules.game_differences``).
It lives beside the agent that plays it. A network config that records ``bid_features``
is a bidding network (agents/neural/bid_net.py, another feature layout refused too); everything
else is a PolicyValueNet.
"""

from __future__ import annotations

import dataclasses
import pickle
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from agents.neural.files import model_file_kind
from agents.neural.network import NetConfig, PolicyValueNet
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_SIZE, require_obs_version
from fourhundred_env.rules import Rules

FORMAT = "fourhundred-policy-v1"


class CheckpointError(FourHundredError):
    """A checkpoint that cannot be used: unreadable, corrupt, or made for something else."""


PRETRAINED = Path(__file__).resolve().parents[1] / "pretrained"
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
    where = f"checkpoint {str(path)!r}"
    if not path.is_file():
        raise CheckpointError(f"{where} does not exist: expected a file")
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"{where} is empty (0 bytes): expected a file written by fourhundred")
    kind = model_file_kind(path)
    if kind in ("sb3", "manifest"):
        spec = "sb3" if kind == "sb3" else "torch"
        what = "a Stable-Baselines3 model zip" if kind == "sb3" else "a torch: policy manifest"
        raise CheckpointError(
            f"{where} is {what}, not a fourhundred checkpoint: play it as {spec}:{path}"
        )
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        # torch's message suggests turning safe loading off: never pass that on
        if "Unsupported global" in str(e):
            raise CheckpointError(
                f"{where} holds Python objects other than tensors and plain values, and was not "
                "loaded (loading them could run code): expected a file written by fourhundred"
            ) from None
        raise CheckpointError(
            f"{where} is unreadable or corrupt ({size} bytes, not a file torch wrote): expected "
            "a file written by fourhundred"
        ) from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as e:
        kind = "truncated or corrupt" if _is_zip(path) else "unreadable or corrupt"
        raise CheckpointError(
            f"{where} is {kind} ({size} bytes; {_first_line(e)}): expected a whole file "
            "written by fourhundred"
        ) from None
    except Exception as e:  # torch raises many kinds for corrupt or foreign files
        raise CheckpointError(
            f"{where} is unreadable or corrupt ({type(e).__name__}: {_first_line(e)}): "
            "expected a file written by fourhundred"
        ) from None
    if not isinstance(data, dict) or data.get("format") not in (FORMAT, "fourhundred-train-v1"):
        hint = ""
        if path.with_suffix(".json").is_file():  # save_torch_policy's weights and manifest
            hint = f" (a torch: policy with its manifest? play it as torch:{path})"
        raise CheckpointError(
            f"{where} is not a fourhundred checkpoint{hint}: expected format {FORMAT!r}"
        )
    return data


def _is_zip(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"PK\x03\x04"


def _first_line(e: BaseException) -> str:
    """The first line of an exception's message (or its type), cut short, without torch's
    advice to load unsafely."""
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    text = lines[0] if lines else type(e).__name__
    return text.split("weights_only")[0].rstrip(" ,;(").strip()[:160] or type(e).__name__


_POLICY_KEYS = ("state_dict", "net", "rules", "obs_version")


def load_policy(
    path: str | Path, rules: Rules | None = None, device: str | torch.device = "cpu"
) -> tuple[PolicyValueNet, Rules, dict[str, Any]]:
    """(net in eval mode, the checkpoint's rules, its metadata) from a checkpoint file.

    Refuses (CheckpointError, one line) a malformed checkpoint (see the module docstring)
    and one trained for another game than `rules`.
    """
    data = read_checkpoint(path)
    where = f"checkpoint {str(path)!r}"
    policy = data.get("policy") if data["format"] == "fourhundred-train-v1" else data
    if not isinstance(policy, Mapping):
        raise CheckpointError(f"{where} has no policy: expected a 'policy' entry holding one")
    missing = [k for k in _POLICY_KEYS if k not in policy]
    if missing:
        raise CheckpointError(f"{where} lacks {missing}: expected the keys {list(_POLICY_KEYS)}")
    try:
        require_obs_version(int(policy["obs_version"]), where)
    except (FourHundredError, TypeError, ValueError) as e:
        raise CheckpointError(str(e) if isinstance(e, FourHundredError) else (
            f"{where}: obs_version={policy['obs_version']!r}: expected an integer"
        )) from None  # fmt: skip
    try:
        saved_rules = Rules.from_dict(policy["rules"])
    except (FourHundredError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"{where} records rules this version cannot read ({e}): expected the rules flags of "
            "fourhundred (a checkpoint from a newer version?)"
        ) from None
    if rules is not None:
        diff = saved_rules.game_differences(rules)
        if diff:
            listed = ", ".join(f"{k}={a!r} (here {b!r})" for k, a, b in _items(diff))
            raise CheckpointError(
                f"{where} was trained under other rules: {listed}: expected a checkpoint trained "
                "for these rules (time limits and auto_claim are not compared)"
            )
    net = _build_net(policy["net"], where)
    _check_weights(policy["state_dict"], where)
    try:
        net.load_state_dict(policy["state_dict"])
    except (RuntimeError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"{where}: its weights do not fit its network config ({_first_line(e)}): expected "
            "the weights the trainer saved with that config"
        ) from None
    net.to(device).eval()
    meta = {k: policy.get(k) for k in ("package_version", "obs_version", "extra", "net")}
    meta["extra"] = meta["extra"] or {}
    return net, saved_rules, meta


def require_card_player(net: Any, path: str | Path) -> PolicyValueNet:
    """`net` if it is a policy network that plays cards; a bidding network (agents/neural/bid_net.py,
    which only bids) is refused in one line (CheckpointError)."""
    if not isinstance(net, PolicyValueNet):
        raise CheckpointError(
            f"checkpoint {str(path)!r} is a bidding network (it only bids): expected a policy "
            "that plays the cards too, such as agents/pretrained/selfplay.pt"
        )
    return net


def _items(diff: Mapping[str, tuple[Any, Any]]) -> list[tuple[str, Any, Any]]:
    return [(k, a, b) for k, (a, b) in sorted(diff.items())]


def _build_net(values: Any, where: str) -> Any:
    """The network a checkpoint's ``net`` config describes: a PolicyValueNet, or a BidNet
    (agents/neural/bid_net.py) when it records ``bid_features``."""
    if isinstance(values, Mapping) and "bid_features" in values:
        from agents.neural.bid_net import PER_BID_SIZES, BidNet, BidNetConfig

        config = _shape(BidNetConfig, values, where, "bidding network")
        if config.obs_size != OBS_SIZE or config.bid_features not in PER_BID_SIZES:
            versions = " or ".join(map(str, PER_BID_SIZES))
            raise CheckpointError(
                f"{where}: its bidding network reads observation size {config.obs_size} and "
                f"bid features version {config.bid_features}: expected {OBS_SIZE} and "
                f"{versions}, this version's (retrain, or use the release it was made with)"
            )
        try:
            return BidNet(config)
        except ValueError as e:  # a head it cannot build
            raise CheckpointError(
                f"{where}: its bidding network has {e} (retrain, or use the release it was "
                "made with)"
            ) from None
    return PolicyValueNet(_net_config(values, where))


def _shape(cls: type, values: Any, where: str, what: str = "network") -> Any:
    """`cls` (a dataclass of positive integer sizes) from a checkpoint's config mapping; an
    unknown field or a size that is not a positive integer is refused."""
    known = [f.name for f in dataclasses.fields(cls)]
    if not isinstance(values, Mapping):
        raise CheckpointError(f"{where}: net={values!r}: expected a mapping of {known}")
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise CheckpointError(
            f"{where}: its {what} config has field(s) {unknown} this version does not know (a "
            f"checkpoint from a newer fourhundred?): expected some of {known}"
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values.values()):
        raise CheckpointError(f"{where}: net={dict(values)!r}: expected positive integers")
    return cls(**values)


def _net_config(values: Any, where: str) -> NetConfig:
    """The NetConfig a checkpoint records; an unknown field, a missing shape or an input size
    other than the encoder's is refused."""
    config = _shape(NetConfig, values, where)
    if config.obs_size != OBS_SIZE:
        raise CheckpointError(
            f"{where}: its network reads {config.obs_size} inputs: expected {OBS_SIZE}, the "
            "size of this version's observation (retrain, or use the release it was made with)"
        )
    return config


def _check_weights(state_dict: Any, where: str) -> None:
    """Every weight a tensor of finite numbers."""
    if not isinstance(state_dict, Mapping):
        raise CheckpointError(
            f"{where}: state_dict is not a mapping: expected the network's weights"
        )
    for name, tensor in state_dict.items():
        if not isinstance(tensor, torch.Tensor):
            raise CheckpointError(f"{where}: weight {name!r} is not a tensor: expected tensors")
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise CheckpointError(
                f"{where}: weight {name!r} holds {bad} non-finite value(s) (NaN or infinity): "
                "expected finite weights (a diverged run?)"
            )
