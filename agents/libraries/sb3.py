"""Reading a Stable-Baselines3 / sb3-contrib model zip without running pickled code.

``model.save("model.zip")`` writes a zip of ``data`` (JSON: the algorithm's settings; the
objects JSON cannot hold, such as the policy class, the spaces and the schedules, are
cloudpickle blobs beside a readable text of their attributes), ``policy.pth`` (the policy's
``state_dict``), the optimizer's state and the versions. ``PPO.load`` unpickles those blobs,
and unpickling runs whatever code the file's author put there. This loader never does: it
reads ``data`` as plain JSON and uses only the readable entries, rebuilds the policy from a
fixed list of SB3's own classes (named by module and class in that text) on this game's own
spaces, and loads ``policy.pth`` with ``torch.load(weights_only=True)`` (tensors only). A
model whose policy or settings cannot be rebuilt that way (a custom policy class, feature
extractor or activation) is refused in one line, as is a zip that is not an SB3 model, a
damaged one, a model for another observation size, action count, observation version or
rules.

Which models play: PPO, A2C, MaskablePPO (actor-critic policies: their logits) and DQN (its
Q-values), trained on ``FourHundred-v0``'s dict observation (``MultiInputPolicy``), on the
588 entries of ``obs["observation"]`` alone, or on the flattened dict (654 entries). Models
trained with ``VecNormalize`` need its statistics, which the zip does not hold: not supported.
A zip written after :func:`fourhundred_env.envs.sb3.stamp_model` records the observation
version and the rules (``data["fourhundred"]``), which are checked as the neural agent checks
them; an unstamped zip is checked on its observation and action sizes only.

Bounds before work, as for ``neural:`` checkpoints (agents/neural/checkpoint.py): the file's
size (``MAX_CHECKPOINT_BYTES``), what each member read and the whole zip unpack to (from its
directory: :data:`MAX_MEMBER_BYTES`, :func:`~fourhundred_agents.neural.files.unpacked_size_problem`),
the policy's settings (``net_arch``: at most ``MAX_LAYERS`` layers of at most ``MAX_HIDDEN``,
``MAX_PARAMETERS`` weights, agents/neural/network.py; every other setting of its type), and the
weights' dtypes (``WEIGHT_DTYPES``) are checked before the policy is built; each refusal is one
line.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_agents.neural.checkpoint import (
    MAX_CHECKPOINT_BYTES,
    CheckpointError,
    check_dtypes,
    check_finite,
    read_torch_file,
    require_same_game,
    resolve_checkpoint,
)
from fourhundred_agents.neural.files import (
    MetadataError,
    model_file_kind,
    parse_json,
    unpacked_size_problem,
)
from fourhundred_agents.neural.network import MAX_HIDDEN, MLPShape
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_SIZE, require_obs_version
from fourhundred_env.rules import Rules

#: (module, class) of the policies this loader rebuilds -> "policy" (logits) or "q" (values).
POLICIES: dict[tuple[str, str], str] = {
    ("stable_baselines3.common.policies", "ActorCriticPolicy"): "policy",
    ("stable_baselines3.common.policies", "MultiInputActorCriticPolicy"): "policy",
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"): "policy",
    ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"): "policy",
    ("stable_baselines3.dqn.policies", "DQNPolicy"): "q",
    ("stable_baselines3.dqn.policies", "MultiInputPolicy"): "q",
}
_ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Mish")
_EXTRACTORS = ("CombinedExtractor", "FlattenExtractor")
_PLAIN_KWARGS = ("net_arch", "ortho_init", "share_features_extractor", "normalize_images",
                 "features_extractor_kwargs", "log_std_init", "full_std", "use_expln",
                 "squash_output", "dueling")  # fmt: skip
_BOOL_KWARGS = ("ortho_init", "share_features_extractor", "normalize_images", "full_std",
                "use_expln", "squash_output", "dueling")  # fmt: skip
_EXTRACTOR_KWARGS = {"cnn_output_dim": int, "normalized_image": bool}
_IGNORED_KWARGS = ("optimizer_class", "optimizer_kwargs")  # training only
MAX_MEMBER_BYTES = {"data": 2**24, "policy.pth": 2**28 + 2**20, "_stable_baselines3_version": 2**10}
"""The most bytes each member read may unpack to: the settings (16 MiB; SB3 writes a few KB),
the weights (twice MAX_PARAMETERS float32, a DQN's network and its target, and 1 MiB), the
version. The whole zip unpacks to at most MAX_CHECKPOINT_BYTES."""
_CLASS_TEXT = re.compile(r"<class '([\w.]+)'>")
_BOX_TEXT = re.compile(r"'(\w+)': Box\([^()]*\((\d+),\), (\w+)\)")


@dataclass
class SB3Model:
    """A model's policy rebuilt for play: `scores` (obs (K, 588) float32, mask (K, 66) bool)
    -> (K, 66) float32 logits or Q-values; `is_policy` False for Q-values."""

    policy: Any
    layout: str
    is_policy: bool
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def device(self) -> Any:
        """The torch device the policy runs on."""
        return self.policy.device

    def scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(K, 66) float32 logits or Q-values at obs (K, 588) float32 and mask (K, 66) bool."""
        from fourhundred_env.envs.sb3 import policy_scores

        return policy_scores(self.policy, model_input(self.layout, obs, mask))


def model_input(layout: str, obs: np.ndarray, mask: np.ndarray) -> Any:
    """What a policy trained on `layout` reads: the env's dict, the observation alone, or the
    flattened dict (the mask first, as ``gymnasium.spaces.flatten`` orders the keys)."""
    mask8 = mask.astype(np.int8)
    if layout == "dict":
        return {"observation": obs, "action_mask": mask8}
    if layout == "observation":
        return obs
    return np.concatenate([mask8.astype(np.float32), obs.astype(np.float32)], axis=1)


def load_sb3_model(path: str | Path, rules: Rules | None = None, device: str = "cpu") -> SB3Model:
    """The policy of the SB3 model zip at `path`, in eval mode on `device` (a device setting,
    agents/neural/device.py); CheckpointError (one line) for anything it cannot play (see the
    module docstring), ConfigError for a device this machine lacks."""
    from fourhundred_agents.neural.device import torch_device

    where_to = torch_device(device)
    path = resolve_checkpoint(path)
    where = f"model {str(path)!r}"
    kind = model_file_kind(path)
    if kind != "sb3":
        raise CheckpointError(f"{where} {_not_sb3(kind, path)}")
    size = path.stat().st_size
    problem = (
        f"it is {size:,} bytes: expected at most {MAX_CHECKPOINT_BYTES:,}"
        if size > MAX_CHECKPOINT_BYTES
        else unpacked_size_problem(path, MAX_MEMBER_BYTES, MAX_CHECKPOINT_BYTES)
    )
    if problem is not None:  # a zip bomb: refused before anything is unpacked
        raise CheckpointError(
            f"{where} is too big to read ({problem}; MAX_CHECKPOINT_BYTES, "
            "agents/neural/checkpoint.py): expected a file saved by model.save"
        )
    try:
        with zipfile.ZipFile(path) as z:
            data = parse_json(z.read("data"), allow_constants=True)
            version = z.read("_stable_baselines3_version").decode().strip() if (
                "_stable_baselines3_version" in z.namelist()) else "?"  # fmt: skip
    except MetadataError as e:
        raise CheckpointError(
            f"{where}: its data is refused ({e}): expected SB3's settings"
        ) from None
    except (zipfile.BadZipFile, OSError, ValueError, KeyError, EOFError) as e:
        raise CheckpointError(
            f"{where} is a damaged zip ({type(e).__name__}: {str(e)[:120]}): expected a whole "
            "file saved by model.save"
        ) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{where}: its data is not a JSON object: expected SB3's settings")
    module, name, kind_ = _policy_class(data, where)
    layout, obs_dtype = _layout(data.get("observation_space"), where)
    _check_actions(data.get("action_space"), where)
    meta = _check_stamp(data.get("fourhundred"), rules, where)
    kwargs = _policy_kwargs(data.get("policy_kwargs", {}), where)
    count = _check_arch(kwargs.get("net_arch"), kind_, where)
    bound = 4 * count + (1 << 20)  # float32 weights, and the record and the zip around them
    with zipfile.ZipFile(path) as z:
        declared = z.getinfo("policy.pth").file_size
        if declared > bound:  # from the directory: a tensor no layer uses is never unpacked
            raise CheckpointError(
                f"{where}: its policy.pth unpacks to {declared:,} bytes: expected at most "
                f"{bound:,}, the {count:,} float32 weights of its net_arch and 1 MiB"
            )
        try:
            weights = z.read("policy.pth")
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            raise CheckpointError(
                f"{where} is a damaged zip ({type(e).__name__}: {str(e)[:120]}): expected a "
                "whole file saved by model.save"
            ) from None
    state = _read_weights(weights, where)

    import importlib

    from gymnasium import spaces

    from fourhundred_env.envs.vector import single_observation_space

    space = single_observation_space(obs_dtype)
    obs_space = {"dict": space, "observation": space["observation"]}.get(layout)
    if obs_space is None:
        obs_space = spaces.flatten_space(space)
    cls = getattr(importlib.import_module(module), name)
    try:
        policy = cls(obs_space, spaces.Discrete(NUM_ACTIONS), lambda _: 0.0, **kwargs)
    except (TypeError, ValueError) as e:
        raise CheckpointError(
            f"{where}: its policy settings {sorted(kwargs)} do not build a {name} ({e}): "
            "expected settings SB3 saved for it"
        ) from None
    _load_weights(policy, state, where)
    policy.to(where_to)
    policy.set_training_mode(False)
    meta.update({"library": "stable-baselines3", "sb3_version": version, "policy": name,
                 "layout": layout})  # fmt: skip
    return SB3Model(policy, layout, kind_ == "policy", meta)


def _not_sb3(kind: str, path: Path) -> str:
    return {
        "missing": "does not exist: expected a model zip saved by model.save",
        "torch": f"is a torch file, not an SB3 model zip: play it as neural:{path} (a "
        f"fourhundred checkpoint) or torch:{path} (weights with a manifest)",
        "manifest": f"is a torch: policy manifest: play it as torch:{path}",
        "zip": "is a zip but not a Stable-Baselines3 model (no 'data' and 'policy.pth' in it) "
        "or a damaged one: expected a file saved by model.save",
        "other": "is not a zip: expected a Stable-Baselines3 model zip saved by model.save",
    }[kind]


def _policy_class(data: dict[str, Any], where: str) -> tuple[str, str, str]:
    entry = data.get("policy_class")
    text = entry.get("__init__", "") if isinstance(entry, dict) else ""
    module = entry.get("__module__", "") if isinstance(entry, dict) else ""
    found = re.match(r"<function (\w+)\.__init__", str(text))
    name = found.group(1) if found else "?"
    kind = POLICIES.get((module, name))
    if kind is None:
        known = sorted({n for _, n in POLICIES})
        raise CheckpointError(
            f"{where} has the policy {module}.{name}, which this loader does not rebuild (a "
            f"custom class would run the file's pickled code): expected one of {known}"
        )
    return module, name, kind


def _layout(entry: Any, where: str) -> tuple[str, str]:
    """("dict" | "observation" | "flat", observation dtype) from the readable space text."""
    kind = entry.get(":type:", "") if isinstance(entry, dict) else ""
    expected = (f"FourHundred-v0's dict observation, its 'observation' ({OBS_SIZE} entries) or "
                f"the flattened dict ({OBS_SIZE + NUM_ACTIONS})")  # fmt: skip
    if kind.endswith("Dict'>"):
        boxes = {k: (int(n), t) for k, n, t in _BOX_TEXT.findall(str(entry.get("spaces", "")))}
        want = {"observation": OBS_SIZE, "action_mask": NUM_ACTIONS}
        got = {k: n for k, (n, _) in boxes.items()}
        if got != want:
            raise CheckpointError(
                f"{where} was trained on observations {got or entry.get('spaces')}: expected "
                f"{want} ({expected}; a model for another observation size?)"
            )
        dtype = boxes["observation"][1]
        return "dict", "int8" if dtype == "int8" else "float32"
    if kind.endswith("Box'>"):
        shape = entry.get("_shape")
        dtype = str(entry.get("dtype", "float32"))
        if shape == [OBS_SIZE]:
            return "observation", "int8" if dtype == "int8" else "float32"
        if shape == [OBS_SIZE + NUM_ACTIONS]:
            return "flat", "float32"
        raise CheckpointError(
            f"{where} was trained on observations of shape {shape}: expected {expected} (a "
            "model for another observation size or another game?)"
        )
    raise CheckpointError(
        f"{where} was trained on a {kind or 'missing'} space: expected {expected}"
    )


def _check_actions(entry: Any, where: str) -> None:
    n = entry.get("n") if isinstance(entry, dict) else None
    if not (isinstance(entry, dict) and entry.get(":type:", "").endswith("Discrete'>")
            and str(n) == str(NUM_ACTIONS) and str(entry.get("start", 0)) == "0"):  # fmt: skip
        got = f"Discrete({n})" if n is not None else (entry or {}).get(":type:", "no space")
        raise CheckpointError(
            f"{where} chooses among {got}: expected Discrete({NUM_ACTIONS}), this game's actions"
        )


def _check_stamp(stamp: Any, rules: Rules | None, where: str) -> dict[str, Any]:
    """The observation version and rules `stamp_model` recorded, checked; {} if none."""
    if stamp is None:
        return {"stamped": False}
    if not isinstance(stamp, dict) or not {"obs_version", "rules"} <= stamp.keys():
        raise CheckpointError(
            f"{where}: its 'fourhundred' entry is {stamp!r}: expected obs_version and rules, as "
            "fourhundred_env.envs.sb3.stamp_model writes them"
        )
    try:
        require_obs_version(int(stamp["obs_version"]), where)
        saved = Rules.from_dict(stamp["rules"])
    except (FourHundredError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise CheckpointError(str(e) if isinstance(e, FourHundredError) else (
            f"{where}: its 'fourhundred' entry is unreadable ({e}): expected obs_version and rules"
        )) from None  # fmt: skip
    require_same_game(saved, rules, where, "a model")
    return {"stamped": True, "obs_version": int(stamp["obs_version"]), "rules": saved.to_dict()}


def _policy_kwargs(entry: Any, where: str) -> dict[str, Any]:
    """The policy's settings rebuilt from their readable text: plain values as they are,
    activations and feature extractors by name from fixed lists, the optimizer left out."""
    import torch
    from stable_baselines3.common import torch_layers

    if not isinstance(entry, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key in (":type:", ":serialized:") or key in _IGNORED_KWARGS:
            continue
        if key in _PLAIN_KWARGS:
            out[key] = _plain_kwarg(key, value, where)
            continue
        found = _CLASS_TEXT.fullmatch(str(value))
        cls_name = found.group(1).rsplit(".", 1)[-1] if found else None
        if key == "activation_fn" and cls_name in _ACTIVATIONS:
            out[key] = getattr(torch.nn, cls_name)
        elif key == "features_extractor_class" and cls_name in _EXTRACTORS:
            out[key] = getattr(torch_layers, cls_name)
        else:
            raise CheckpointError(
                f"{where}: its policy setting {key}={str(value)[:80]!r} is not one this loader "
                f"rebuilds without running pickled code: expected {list(_PLAIN_KWARGS)}, "
                f"activation_fn among {list(_ACTIVATIONS)}, features_extractor_class among "
                f"{list(_EXTRACTORS)}"
            )
    return out


def _plain_kwarg(key: str, value: Any, where: str) -> Any:
    """`value` of the plain setting `key` when it has the type SB3 gives it (net_arch is
    checked by :func:`_check_arch`); else CheckpointError."""
    if key == "net_arch":
        return value
    if key in _BOOL_KWARGS:
        ok = isinstance(value, bool)
        expected = "true or false"
    elif key == "log_std_init":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= 1e3
        expected = "a number between -1000 and 1000"
    else:  # features_extractor_kwargs
        ok = isinstance(value, dict) and all(
            k in _EXTRACTOR_KWARGS and type(v) is _EXTRACTOR_KWARGS[k]
            and (type(v) is bool or 0 < v <= MAX_HIDDEN)
            for k, v in value.items()
        )  # fmt: skip
        expected = f"a mapping of {sorted(_EXTRACTOR_KWARGS)} (sizes at most {MAX_HIDDEN})"
    if not ok:
        text = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise CheckpointError(f"{where}: its policy setting {key}={text}: expected {expected}")
    return value


def _check_arch(arch: Any, kind: str, where: str) -> int:
    """The weights the policy's ``net_arch`` builds (its layers, not counting a feature
    extractor, which has none here); refuse (one line) one that is not SB3's form for `kind`
    or is too big to build (agents/neural/network.py's bounds), before anything is built."""
    if arch is None:
        arch = [64, 64] if kind == "q" else {"pi": [64, 64], "vf": [64, 64]}  # SB3's defaults
    if kind == "policy" and isinstance(arch, dict):
        unknown = sorted(set(arch) - {"pi", "vf"})
        if unknown:
            raise CheckpointError(
                f"{where}: its net_arch has key(s) {unknown[:3]}: expected 'pi' and 'vf'"
            )
        heads = [(arch.get("pi", []), NUM_ACTIONS, 1), (arch.get("vf", []), 1, 1)]
    elif kind == "policy":
        heads = [(arch, NUM_ACTIONS, 1), (arch, 1, 1)]
    else:  # a DQN: its network and the target network
        heads = [(arch, NUM_ACTIONS, 2)]
    count = 0
    for widths, outputs, copies in heads:
        shape = MLPShape(OBS_SIZE + NUM_ACTIONS, widths, outputs, copies)
        problem = shape.size_problem()
        if problem is not None:
            raise CheckpointError(
                f"{where}: its net_arch asks for {problem}, the bound in agents/neural/network.py"
            )
        count += shape.num_parameters()
    return count


def _read_weights(weights: bytes, where: str) -> dict[str, Any]:
    """policy.pth's tensors, read without running code, each finite and of WEIGHT_DTYPES."""
    import torch

    def check(state: Any) -> None:
        if not isinstance(state, dict) or not all(
            isinstance(v, torch.Tensor) for v in state.values()
        ):
            raise CheckpointError(
                f"{where}: its policy.pth is not a dict of tensors: expected weights"
            )
        check_dtypes(state, where, "as model.save writes")

    state = read_torch_file(
        weights, f"{where}: its policy.pth", "the weights model.save wrote",
        "the weights model.save wrote, whole", check=check,
    )  # fmt: skip
    check_finite(state, where)
    return state


def _load_weights(policy: Any, state: Any, where: str) -> None:
    try:
        policy.load_state_dict(state)
    except RuntimeError as e:
        first = str(e).splitlines()[1:2] or [str(e)[:160]]
        raise CheckpointError(
            f"{where}: its weights do not fit its policy ({first[0].strip()[:160]}): expected "
            "the weights model.save wrote with those settings"
        ) from None
