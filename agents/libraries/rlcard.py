"""``rlcard:PATH``: a model RLCard's DMC trainer saved for 400 (its ``model.tar``), played as a
Q-network: each legal action's value is the network's at (the observation, the action's
one-hot), the best is played.

DMC (``rlcard.agents.dmc_agent.DMCTrainer``) writes ``model.tar`` (``torch.save`` of a dict:
``model_state_dict``, one network per position 0-3, beside the optimizers' state, the stats and
the frame count) and, per position, ``P_FRAMES.pth`` (``torch.save`` of the whole agent: a
pickle of Python objects). Only ``model.tar`` is read, with ``torch.load(weights_only=True)``
(tensors and plain values: nothing in the file runs); a ``.pth`` is refused in one line, as is
a file of another kind. The network is rebuilt here (DMC's ``DMCNet``: Linear and ReLU layers
over the observation and the action's one-hot, one value out; the same ``fc_layers.N`` names)
from the shapes of its weights, without importing RLCard.

A ``fourhundred.json`` beside the file (examples/rlcard_dmc.py writes one) records the
observation version and sizes and the rules, which are checked as the neural agent checks a
checkpoint's; without one the model is checked on its input size (588 + 66 = 654) only.

Bounds before work, as for ``neural:`` checkpoints: the file's size
(``MAX_CHECKPOINT_BYTES``), its archive (stored members, CRC-32), the number of layers
(``MAX_LAYERS``) and weights (``MAX_PARAMETERS``), the weights' dtypes (``WEIGHT_DTYPES``) and
finiteness; each refusal is one line.
"""

from __future__ import annotations

import itertools
import json
import zipfile
from collections.abc import Callable
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
    read_torch_file,
    require_same_game,
)
from fourhundred_agents.neural.files import MetadataError, parse_json
from fourhundred_agents.neural.network import MAX_LAYERS, MAX_PARAMETERS
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_SIZE, OBS_VERSION, require_obs_version
from fourhundred_env.rules import Rules

MANIFEST_NAME = "fourhundred.json"
"""The file beside ``model.tar`` recording what game and observation the model was trained on."""
MAX_MANIFEST_BYTES = 2**16
INPUT_SIZE = OBS_SIZE + NUM_ACTIONS


def write_manifest(folder: str | Path, rules: Rules | None = None, library: str = "rlcard") -> Path:
    """Write ``fourhundred.json`` into `folder` (a DMC run's, beside its model.tar; or an
    OpenSpiel network's, `library` "openspiel"): the observation version and sizes and the
    rules the model is trained on."""
    path = Path(folder) / MANIFEST_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": f"fourhundred-{library}-v1", "obs_version": OBS_VERSION, "obs_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS, "rules": (rules or Rules()).to_dict(),
    }  # fmt: skip
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


@dataclass
class DMCModel:
    """A loaded DMC network: `scores` (obs (K, 588) float32, mask (K, 66) bool) -> (K, 66)
    values of the legal actions."""

    net: nn.Sequential
    meta: dict[str, Any] = field(default_factory=dict)
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    def scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(K, 66) float32: the value of each legal action at each observation (-inf where
        `mask` is False: only the legal actions are evaluated, as DMC's agent does)."""
        rows, actions = np.nonzero(mask)
        x = np.zeros((rows.size, INPUT_SIZE), np.float32)
        x[:, :OBS_SIZE] = obs[rows]
        x[np.arange(rows.size), OBS_SIZE + actions] = 1.0
        with torch.no_grad():
            out = self.net(torch.from_numpy(x).to(self.device)).float().cpu().numpy()
        values = np.full(mask.shape, -np.inf, np.float32)
        values[rows, actions] = out[:, 0]
        return values


def resolve_model(path: str | Path) -> Path:
    """`path`, or the ``model.tar`` in it when it is a folder (a DMC run's)."""
    path = Path(path)
    return path / "model.tar" if path.is_dir() else path


def load_dmc_model(
    path: str | Path, rules: Rules | None = None, position: int = 0, device: str = "cpu"
) -> DMCModel:
    """The network of `position` (0-3) in the DMC ``model.tar`` at `path` (or in the folder
    `path`), in eval mode on `device`; CheckpointError (one line) for anything it cannot play
    (see the module docstring); ConfigError for a device this machine lacks."""
    from fourhundred_agents.neural.device import torch_device

    where_to = torch_device(device)
    path = resolve_model(path)
    where = f"RLCard model {str(path)!r}"
    meta = check_manifest(path.parent / MANIFEST_NAME, rules, where)
    found: dict[str, Any] = {}

    def check(data: Any) -> None:  # the position's network, from names and shapes alone
        found["state"] = _position(data, position, where)
        _build(found["state"], where, make=False)

    data = read_weights(path, where, check=check)
    state = found["state"]
    net = _build(state, where)
    check_finite(state, where)
    net.load_state_dict({k.removeprefix("fc_layers."): v for k, v in state.items()})
    net.to(where_to).eval()
    meta.update({"library": "rlcard", "position": position, "frames": data.get("frames")})
    return DMCModel(net, meta, where_to)


def _position(data: Any, position: int, where: str) -> dict[str, torch.Tensor]:
    """The state dict of `position`'s network in a DMC model.tar's `data`, of WEIGHT_DTYPES."""
    states = data.get("model_state_dict") if isinstance(data, dict) else None
    if not isinstance(states, list) or not states:
        keys = sorted(map(str, data))[:4] if isinstance(data, dict) else type(data).__name__
        raise CheckpointError(
            f"{where} holds {keys}, no model_state_dict: expected the model.tar that RLCard's "
            "DMCTrainer saves"
        )
    if not 0 <= position < len(states):
        raise CheckpointError(
            f"{where} has networks for positions 0 to {len(states) - 1}: position={position} "
            "is none of them"
        )
    state = states[position]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{where}: position {position} is not a state_dict of tensors")
    check_dtypes(state, where, "as DMC writes")
    return state


def read_weights(
    path: Path,
    where: str,
    expected: str = "DMC's model.tar",
    pickled: str = "DMC's P_FRAMES.pth pickles the whole agent",
    check: Callable[[Any], None] | None = None,
) -> Any:
    """What ``torch.load(weights_only=True)`` reads from `path` (tensors and plain values),
    after the bounds of the module docstring (the one bounded reader,
    ``checkpoint.read_torch_file``; `check(data)` the caller's check of what it uses, before
    the tensors' bytes are read); CheckpointError (one line, naming `expected` and, for a
    file of pickled objects, `pickled`) for anything else."""
    if not path.is_file():
        raise CheckpointError(f"{where} does not exist: expected {expected}")
    size = path.stat().st_size
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(
            f"{where} is {size:,} bytes: expected at most {MAX_CHECKPOINT_BYTES:,} "
            "(MAX_CHECKPOINT_BYTES, agents/neural/checkpoint.py)"
        )
    if not zipfile.is_zipfile(path):
        raise CheckpointError(
            f"{where} is not a file torch.save wrote ({size:,} bytes): expected {expected}"
        )
    return read_torch_file(path, where, expected, pickled=pickled, check=check)


def _build(state: dict[str, torch.Tensor], where: str, make: bool = True) -> nn.Sequential | None:
    """The Linear/ReLU stack whose weights are `state` (DMCNet's ``fc_layers``), checked
    (from names and shapes alone; built only if `make`)."""
    names = sorted(
        {k.rsplit(".", 1)[0] for k in state}, key=lambda n: int(n.split(".")[-1])
        if n.split(".")[-1].isdigit() else -1,
    )  # fmt: skip
    expected = {f"{n}.{p}" for n in names for p in ("weight", "bias")}
    if (
        not names
        or set(state) != expected
        or not all(n.startswith("fc_layers.") and n.split(".")[-1].isdigit() for n in names)
        or len(names) > MAX_LAYERS + 1
    ):
        raise CheckpointError(
            f"{where}: weights {sorted(state)[:4]}...: expected DMCNet's fc_layers.N.weight and "
            f".bias, at most {MAX_LAYERS + 1} layers"
        )
    shapes = [tuple(state[f"{n}.weight"].shape) for n in names]
    if any(len(s) != 2 for s in shapes) or shapes[0][1] != INPUT_SIZE or shapes[-1][0] != 1:
        raise CheckpointError(
            f"{where}: a network from {shapes[0][1] if len(shapes[0]) == 2 else '?'} inputs to "
            f"{shapes[-1][0]} outputs: expected {INPUT_SIZE} inputs (this game's {OBS_SIZE} "
            f"observation entries and {NUM_ACTIONS} actions) and one value out (a model of "
            "another game or observation?)"
        )
    for (out_a, _), (_, in_b) in itertools.pairwise(shapes):
        if out_a != in_b:
            raise CheckpointError(f"{where}: layer sizes {shapes} do not chain")
    count = sum(v.numel() for v in state.values())
    if count > MAX_PARAMETERS:
        raise CheckpointError(
            f"{where}: {count:,} weights: expected at most {MAX_PARAMETERS:,} (MAX_PARAMETERS)"
        )
    renumbered = {f"{2 * i}": n.removeprefix("fc_layers.") for i, n in enumerate(names)}
    if any(k != v for k, v in renumbered.items()):
        raise CheckpointError(f"{where}: layers {names}: expected fc_layers.0, .2, .4 ...")
    if not make:
        return None
    layers: list[nn.Module] = []
    for i, (out_size, in_size) in enumerate(shapes):
        layers.append(nn.Linear(in_size, out_size))
        if i < len(shapes) - 1:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)  # DMCNet numbers its layers with the ReLUs: 0, 2, 4...


def check_manifest(
    path: Path, rules: Rules | None, where: str, library: str = "rlcard"
) -> dict[str, Any]:
    """The manifest at `path` (none: {}) checked against this game: its observation version
    and sizes, and its rules against `rules`; CheckpointError (one line) otherwise."""
    if not path.is_file():
        return {}
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise CheckpointError(
                f"{where}: {path.name} is larger than {MAX_MANIFEST_BYTES:,} bytes"
            )
        manifest = parse_json(path.read_bytes())
    except MetadataError as e:
        raise CheckpointError(f"{where}: {path.name} is refused: {e}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(
            f"{where}: {path.name} is not readable JSON ({type(e).__name__})"
        ) from None
    fmt = f"fourhundred-{library}-v1"
    if not isinstance(manifest, dict) or manifest.get("format") != fmt:
        raise CheckpointError(f"{where}: {path.name} is not a {fmt} manifest")
    version = manifest.get("obs_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CheckpointError(
            f"{where}: {path.name} records obs_version={str(version)[:40]}: expected an integer"
        )
    try:
        require_obs_version(version, where)
        saved = Rules.from_dict(manifest.get("rules"))
    except (FourHundredError, TypeError, ValueError, AttributeError) as e:
        raise CheckpointError(str(e).splitlines()[0]) from None
    for key, size in (("obs_size", OBS_SIZE), ("num_actions", NUM_ACTIONS)):
        if manifest.get(key) != size:
            raise CheckpointError(f"{where}: {key}={manifest.get(key)!r}: expected {size}")
    require_same_game(saved, rules, where, "a model")
    return {"obs_version": manifest["obs_version"], "rules": saved.to_dict()}
