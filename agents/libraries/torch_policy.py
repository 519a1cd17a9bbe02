"""``torch:PATH``: any torch module ``policy(obs, mask) -> logits``, saved as weights plus a
manifest, from any trainer (the CleanRL example saves one).

The contract of the module: ``forward(obs, mask)`` with `obs` (K, 588) float32 (the one
encoder's observation) and `mask` (K, 66) bool (the legal actions), returning (K, 66) logits
(higher is better; the agent masks them again, so a module may ignore `mask`). Its class is
registered under a name (:func:`register_torch_policy`; :class:`MLPPolicy` is "mlp"), and
the manifest names it: loading a manifest never imports a module it names, so a file can
make only the classes already registered (a module of your own, imported with
``--agent-module``, registers yours).

The files, written by :func:`save_torch_policy`: ``policy.pt`` (``torch.save`` of the
module's ``state_dict``, read back with ``weights_only=True``: tensors only) and
``policy.json`` beside it, the manifest::

    {"format": "fourhundred-torch-policy-v1", "policy": "mlp",
     "kwargs": {"hidden": [256, 256], "activation": "tanh"},
     "obs_version": 1, "obs_size": 588, "num_actions": 66,
     "rules": {...every Rules flag...}, "library": "cleanrl"}

Every key but ``library`` is required and no other is accepted; the observation version,
sizes and rules are checked as the neural agent checks a checkpoint's.

Bounds before work, as for ``neural:`` checkpoints: the manifest's size
(:data:`MAX_MANIFEST_BYTES`) and nesting, the weights file's size (``MAX_CHECKPOINT_BYTES``)
and archive (stored members only, CRC-32 checked), the kwargs (a class's ``kwargs_problem``,
when it has one: "mlp" takes at most ``MAX_LAYERS`` hidden layers of at most ``MAX_HIDDEN``,
agents/neural/network.py), the number of weights of the module built on torch's ``meta``
device (no memory; at most ``MAX_PARAMETERS``), and the weights' dtypes (``WEIGHT_DTYPES``)
are checked before the module is built; each refusal is one line.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from fourhundred_agents.neural.checkpoint import (
    MAX_CHECKPOINT_BYTES,
    CheckpointError,
    check_dtypes,
    check_finite,
    read_checkpoint,
    read_torch_file,
    require_same_game,
    resolve_checkpoint,
)
from fourhundred_agents.neural.files import MetadataError, model_file_kind, parse_json
from fourhundred_agents.neural.network import MAX_PARAMETERS, MLPShape
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_SIZE, OBS_VERSION, require_obs_version
from fourhundred_env.rules import Rules

FORMAT = "fourhundred-torch-policy-v1"
MANIFEST_KEYS = ("format", "policy", "kwargs", "obs_version", "obs_size", "num_actions", "rules")
OPTIONAL_KEYS = ("library",)
MAX_MANIFEST_BYTES = 2**20
"""The largest manifest read (1 MiB; save_torch_policy writes about 2 KB)."""

TORCH_POLICIES: dict[str, type[nn.Module]] = {}
"""Name -> module class of the policies a manifest may name."""


def register_torch_policy(name: str) -> Callable[[type[nn.Module]], type[nn.Module]]:
    """Class decorator: make an ``nn.Module`` class with ``forward(obs, mask) -> logits``
    loadable as ``torch:`` under `name` (a manifest's ``"policy"``)."""

    def register(cls: type[nn.Module]) -> type[nn.Module]:
        if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
            raise FourHundredError(f"register_torch_policy({name!r}): expected an nn.Module class")
        TORCH_POLICIES[name] = cls
        cls.policy_name = name  # type: ignore[attr-defined]
        return cls

    return register


_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


@register_torch_policy("mlp")
class MLPPolicy(nn.Module):
    """An MLP over the observation: `hidden` layers of `activation` ("tanh" or "relu"), then
    one logit per action; illegal actions' logits are set to -1e8 (CleanRL's masked
    Categorical: not -inf, whose entropy is NaN). ``net`` is the ``nn.Sequential``."""

    def __init__(
        self,
        obs_size: int = OBS_SIZE,
        num_actions: int = NUM_ACTIONS,
        hidden: Sequence[int] = (256, 256),
        activation: str = "tanh",
    ) -> None:
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation={activation!r}: expected one of {list(_ACTIVATIONS)}")
        sizes = [obs_size, *hidden]
        layers: list[nn.Module] = []
        for a, b in itertools.pairwise(sizes):
            layers += [nn.Linear(a, b), _ACTIVATIONS[activation]()]
        layers.append(nn.Linear(sizes[-1], num_actions))
        self.net = nn.Sequential(*layers)
        self.kwargs = {"hidden": [int(h) for h in hidden], "activation": activation}

    @staticmethod
    def kwargs_problem(kwargs: Mapping[str, Any]) -> str | None:
        """Why a manifest's `kwargs` build no MLPPolicy of this game within the bounds of
        agents/neural/network.py, in one phrase, or None (checked before building)."""
        unknown = sorted(set(kwargs) - {"obs_size", "num_actions", "hidden", "activation"})
        if unknown:
            return f"unknown keyword(s) {unknown[:3]}"
        for key, size in (("obs_size", OBS_SIZE), ("num_actions", NUM_ACTIONS)):
            if key in kwargs and (kwargs[key] != size or isinstance(kwargs[key], bool)):
                return f"{key}={str(kwargs[key])[:40]}: expected {size}"
        if kwargs.get("activation", "tanh") not in _ACTIVATIONS:
            return f"activation={str(kwargs['activation'])[:40]!r}: expected {list(_ACTIVATIONS)}"
        return MLPShape(OBS_SIZE, kwargs.get("hidden", [256, 256]), NUM_ACTIONS).size_problem()

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(K, obs_size) float32, (K, num_actions) bool -> (K, num_actions) masked logits."""
        return torch.where(
            mask, self.net(obs), torch.tensor(-1e8, dtype=obs.dtype, device=obs.device)
        )


def save_torch_policy(
    path: str | Path,
    module: nn.Module,
    kwargs: Mapping[str, Any] | None = None,
    rules: Rules | None = None,
    library: str = "",
) -> tuple[Path, Path]:
    """Write `module`'s weights to `path` (``policy.pt``) and its manifest beside it
    (``policy.json``). `module`'s class must be registered (:func:`register_torch_policy`);
    `kwargs` rebuild it (default: its ``kwargs`` attribute, as :class:`MLPPolicy` keeps);
    `rules` the game it was trained for (default: the standard rules). Returns both paths."""
    name = getattr(type(module), "policy_name", None)
    if TORCH_POLICIES.get(name) is not type(module):
        raise FourHundredError(
            f"{type(module).__name__} is not a registered torch policy: decorate it with "
            "@register_torch_policy(NAME)"
        )
    kwargs = dict(kwargs if kwargs is not None else getattr(module, "kwargs", {}))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.detach().cpu() for k, v in module.state_dict().items()}, path)
    manifest = {
        "format": FORMAT, "policy": name, "kwargs": kwargs, "obs_version": OBS_VERSION,
        "obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS,
        "rules": (rules if rules is not None else Rules()).to_dict(), "library": library,
    }  # fmt: skip
    manifest_path = path.with_suffix(".json")
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path, manifest_path


@dataclass
class TorchPolicy:
    """A loaded ``torch:`` policy: `scores` (obs (K, 588), mask (K, 66) bool) -> (K, 66),
    the module run on `device`."""

    module: nn.Module
    meta: dict[str, Any] = field(default_factory=dict)
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    def scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(K, 66) float32 module output at obs (K, 588) float32 and mask (K, 66) bool."""
        with torch.no_grad():
            out = self.module(
                torch.from_numpy(np.ascontiguousarray(obs, np.float32)).to(self.device),
                torch.from_numpy(np.ascontiguousarray(mask, bool)).to(self.device),
            )
        return out.float().cpu().numpy()


def load_torch_policy(
    path: str | Path, rules: Rules | None = None, device: str = "cpu"
) -> TorchPolicy:
    """The policy at `path` (the weights or the manifest) in eval mode on `device` (a device
    setting, agents/neural/device.py); CheckpointError (one line) for a missing or unreadable
    manifest, unknown or missing keys, an unregistered class, another observation version,
    size, action count or rules, or weights that do not fit; ConfigError for a device this
    machine lacks."""
    from fourhundred_agents.neural.device import torch_device

    where_to = torch_device(device)
    path = resolve_checkpoint(path)
    manifest_path = path if path.suffix == ".json" else path.with_suffix(".json")
    weights_path = manifest_path.with_suffix(".pt") if path.suffix == ".json" else path
    where = f"torch policy {str(manifest_path)!r}"
    if not manifest_path.is_file():
        kind = model_file_kind(path)
        hint = {"sb3": f" ({path} is an SB3 model zip: play it as sb3:{path})"}.get(kind, "")
        if kind == "torch" and _is_fourhundred_checkpoint(path):
            hint = f" ({path} is a fourhundred checkpoint: play it as neural:{path})"
        raise CheckpointError(
            f"{where} does not exist{hint}: expected the manifest save_torch_policy writes "
            "beside the weights"
        )
    manifest = _read_manifest(manifest_path, where)
    saved_rules = _check_manifest(manifest, rules, where)
    cls = TORCH_POLICIES[manifest["policy"]]
    kwargs = manifest["kwargs"]
    check = getattr(cls, "kwargs_problem", None)
    problem = check(kwargs) if check is not None else None
    if problem is not None:
        raise CheckpointError(
            f"{where}: its kwargs ask {cls.__name__} for {problem}: expected the keywords it "
            "was saved with, within the bounds of agents/neural/network.py"
        )
    shapes = {k: tuple(v.shape) for k, v in _build(cls, kwargs, where, meta=True)
              .state_dict().items()}  # fmt: skip  # the weights counted on no memory
    state = _read_weights(weights_path, where, shapes, f"{cls.__name__}({manifest['kwargs']})")
    module = _build(cls, kwargs, where)
    try:
        module.load_state_dict(state)
    except RuntimeError as e:
        first = (str(e).splitlines()[1:2] or [str(e)[:160]])[0].strip()[:160]
        raise CheckpointError(
            f"{where}: the weights {str(weights_path)!r} do not fit {cls.__name__}"
            f"({manifest['kwargs']}) ({first}): expected the weights saved with the manifest"
        ) from None
    module.to(where_to).eval()
    meta = {"library": manifest.get("library", ""), "policy": manifest["policy"],
            "obs_version": manifest["obs_version"], "rules": saved_rules.to_dict()}  # fmt: skip
    return TorchPolicy(module, meta, where_to)


def _build(cls: type[nn.Module], kwargs: dict[str, Any], where: str, meta: bool = False) -> Any:
    """`cls(**kwargs)`, on the meta device when `meta` (refused above MAX_PARAMETERS weights);
    CheckpointError (one line) for kwargs that do not build it."""
    try:
        if not meta:
            return cls(**kwargs)
        with torch.device("meta"):
            module = cls(**kwargs)
    except (TypeError, ValueError, RuntimeError, OverflowError, RecursionError) as e:
        text = repr(kwargs) if len(repr(kwargs)) <= 120 else repr(kwargs)[:117] + "..."
        first = (str(e).splitlines() or [type(e).__name__])[0][:160]
        raise CheckpointError(
            f"{where}: kwargs {text} do not build {cls.__name__} ({first}): expected the "
            "keywords it was saved with"
        ) from None
    count = sum(p.numel() for p in module.parameters()) + sum(b.numel() for b in module.buffers())
    if count > MAX_PARAMETERS:
        raise CheckpointError(
            f"{where}: its kwargs build {cls.__name__} with {count:,} weights: expected at most "
            f"{MAX_PARAMETERS:,} (MAX_PARAMETERS, agents/neural/network.py)"
        )
    return module


def _is_fourhundred_checkpoint(path: Path) -> bool:
    try:
        read_checkpoint(path)
    except CheckpointError:
        return False
    return True


def _read_manifest(path: Path, where: str) -> dict[str, Any]:
    try:
        size = path.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            raise CheckpointError(
                f"{where} is {size:,} bytes: expected at most {MAX_MANIFEST_BYTES:,} "
                "(MAX_MANIFEST_BYTES), a manifest save_torch_policy writes"
            )
        manifest = parse_json(path.read_bytes())
    except MetadataError as e:
        raise CheckpointError(f"{where} is refused ({e}): expected a manifest") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{where} is not readable JSON ({e}): expected a manifest") from None
    if not isinstance(manifest, dict):
        raise CheckpointError(f"{where} holds {type(manifest).__name__}: expected a JSON object")
    return manifest


def _check_manifest(manifest: dict[str, Any], rules: Rules | None, where: str) -> Rules:
    unknown = sorted(set(manifest) - set(MANIFEST_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise CheckpointError(
            f"{where} has unknown key(s) {unknown}: expected {list(MANIFEST_KEYS)} and "
            f"optionally {list(OPTIONAL_KEYS)}"
        )
    missing = [k for k in MANIFEST_KEYS if k not in manifest]
    if missing:
        raise CheckpointError(f"{where} lacks {missing}: expected the keys {list(MANIFEST_KEYS)}")
    if manifest["format"] != FORMAT:
        raise CheckpointError(f"{where}: format={manifest['format']!r}: expected {FORMAT!r}")
    if manifest["policy"] not in TORCH_POLICIES:
        raise CheckpointError(
            f"{where} names the policy class {manifest['policy']!r}, which is not registered: "
            f"expected one of {sorted(TORCH_POLICIES)} (register yours with "
            "@register_torch_policy in a module given to --agent-module)"
        )
    if not isinstance(manifest["kwargs"], dict):
        raise CheckpointError(f"{where}: kwargs={manifest['kwargs']!r}: expected a JSON object")
    version = manifest["obs_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise CheckpointError(f"{where}: obs_version={str(version)[:40]}: expected an integer")
    try:
        require_obs_version(version, where)
    except FourHundredError as e:
        raise CheckpointError(str(e)) from None
    for key, size in (("obs_size", OBS_SIZE), ("num_actions", NUM_ACTIONS)):
        if manifest[key] != size:
            raise CheckpointError(
                f"{where}: {key}={manifest[key]!r}: expected {size}, this version's (a policy "
                "for another observation or game?)"
            )
    try:
        saved = Rules.from_dict(manifest["rules"])
    except (FourHundredError, TypeError, AttributeError) as e:
        raise CheckpointError(f"{where} records rules this version cannot read ({e})") from None
    require_same_game(saved, rules, where, "a policy")
    return saved


def _read_weights(
    path: Path, where: str, shapes: Mapping[str, tuple[int, ...]], module: str
) -> dict[str, torch.Tensor]:
    """The state dict at `path`, read by the one bounded reader: its names and `shapes` (the
    module's, built on the meta device) and dtypes checked before its bytes are read, then
    finite."""
    if not path.is_file():
        raise CheckpointError(f"{where}: its weights {str(path)!r} do not exist: expected a file")
    size = path.stat().st_size
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(
            f"{where}: its weights {str(path)!r} are {size:,} bytes: expected at most "
            f"{MAX_CHECKPOINT_BYTES:,} (MAX_CHECKPOINT_BYTES, agents/neural/checkpoint.py)"
        )
    if model_file_kind(path) not in ("torch", "zip"):
        raise CheckpointError(
            f"{where}: its weights {str(path)!r} are not a file torch.save wrote: expected "
            "torch.save of a state_dict"
        )

    def check(state: Any) -> None:
        if not isinstance(state, dict) or not all(
            isinstance(v, torch.Tensor) for v in state.values()
        ):
            raise CheckpointError(f"{where}: {str(path)!r} is not a state_dict: expected tensors")
        check_dtypes(state, where, "as save_torch_policy writes")
        unexpected = [k for k in state if k not in shapes][:3]
        missing = [k for k in shapes if k not in state][:3]
        wrong = [k for k in shapes if k in state and tuple(state[k].shape) != shapes[k]][:1]
        if unexpected or missing or wrong:
            what = (f"unexpected {unexpected}" if unexpected else f"missing {missing}"
                    if missing else f"{wrong[0]!r} is {tuple(state[wrong[0]].shape)}, the "
                    f"module's {shapes[wrong[0]]}")  # fmt: skip
            raise CheckpointError(
                f"{where}: the weights {str(path)!r} do not fit {module} ({what}): expected "
                "the weights saved with the manifest"
            )

    state = read_torch_file(
        path, f"{where}: its weights {str(path)!r}", "torch.save of a state_dict",
        "a whole file written by torch.save", check=check,
    )  # fmt: skip
    check_finite(state, where)
    return state
