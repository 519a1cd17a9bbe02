"""``openspiel:dqn,path=PATH`` and ``openspiel:nfsp,path=PATH``: a network that OpenSpiel's
PyTorch DQN or NFSP learned on 400, played on the information-state tensor of the seat to act.

OpenSpiel's ``rl_environment.Environment`` feeds its learners ``info_state``, the game's
``information_state_tensor(player)``, which our game computes with the one observation
encoder (:func:`fourhundred_env.observation.encode_observation` of the seat's view; 588
entries): the agent encodes its SeatView with that same function, so the network sees what
it saw in training. The tabular policies of ``open_spiel.python.policy`` cannot be stored
for 400 (far too many information states); its learners' networks can.

The file is what OpenSpiel's ``open_spiel.python.pytorch`` learners write with
``torch.save``: a dict ``{"iteration", "last_loss_value", "model": state_dict[,
"optimiser"]}``, the state dict of their ``MLP`` (``model.I.0.weight``/``.bias`` for hidden
layer I, a Linear followed by a ReLU; ``model.H.weight``/``.bias`` for the output layer,
no activation). ``DQN.save`` writes its Q-network so; ``NFSP.save`` means to write its
average-policy network so (OpenSpiel 2.0.2's version fails as written: it saves the inner
DQN under the path it then writes itself, so examples save ``{"model":
agent._avg_network.state_dict()}`` directly). It is read with
``torch.load(weights_only=True)`` (nothing in the file runs) and the MLP is rebuilt here
from the weights' shapes, without importing OpenSpiel; the same bounds as ``rlcard:`` and
``neural:`` files (size, archive, layers, weights, dtypes, finiteness) come first. A network
from another game, or for another observation, is refused in one line by its input and
output sizes (588 in, 66 out); a ``fourhundred.json`` beside the file (format
``fourhundred-openspiel-v1``, as ``write_manifest(folder, rules, "openspiel")`` writes and
examples/openspiel_dqn.py does) also checks the observation version and the rules.

DQN's outputs are Q-values: the agent plays the legal action of highest Q (as OpenSpiel's
``DQN`` does with epsilon 0). NFSP's are the average policy's logits: the agent plays the
most likely legal action, or with ``sample=true`` draws from the softmax over the legal
actions (as NFSP's average-policy mode does) with the decision's own uniform of the agent's
seed, so both are replayable.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from fourhundred_agents.libraries.rlcard import MANIFEST_NAME, check_manifest, read_weights
from fourhundred_agents.neural.checkpoint import CheckpointError, check_dtypes, check_finite
from fourhundred_agents.neural.network import MAX_LAYERS, MAX_PARAMETERS
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.observation import OBS_SIZE
from fourhundred_env.rules import Rules

KINDS = {"dqn": "OpenSpiel's DQN.save file", "nfsp": "OpenSpiel's NFSP average-policy file"}


@dataclass
class OpenSpielNet:
    """A loaded OpenSpiel MLP: `scores` (obs (K, 588) float32, mask (K, 66) bool) -> (K, 66)
    float32 outputs (Q-values or logits; the agent masks the illegal ones)."""

    net: nn.Module
    meta: dict[str, Any] = field(default_factory=dict)
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    def scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(K, 66) float32: the network's outputs at each information-state tensor."""
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(obs, np.float32)).to(self.device)
            return self.net(x).float().cpu().numpy()


def load_openspiel_net(
    path: str | Path, kind: str, rules: Rules | None = None, device: str = "cpu"
) -> OpenSpielNet:
    """The MLP in the file `path` that OpenSpiel's DQN or NFSP (`kind` "dqn" or "nfsp")
    saved, in eval mode on `device`; CheckpointError (one line) for a file it cannot play
    (see the module docstring); ConfigError for a device this machine lacks."""
    from fourhundred_agents.neural.device import torch_device

    where_to = torch_device(device)
    path = Path(path)
    where = f"OpenSpiel {kind.upper()} file {str(path)!r}"
    expected = KINDS[kind]
    meta = check_manifest(path.parent / MANIFEST_NAME, rules, where, "openspiel")
    found: dict[str, Any] = {}

    def check(data: Any) -> None:  # the network, from names and shapes alone
        state = data.get("model") if isinstance(data, dict) else None
        if not isinstance(state, dict) or not state:
            keys = sorted(map(str, data))[:4] if isinstance(data, dict) else type(data).__name__
            raise CheckpointError(
                f'{where} holds {keys}, no "model" state dict: expected {expected}'
            )
        if not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise CheckpointError(f'{where}: its "model" is not a state dict of tensors')
        check_dtypes(state, where, "as OpenSpiel's learners write")
        _build(state, where, make=False)
        found["state"] = state

    data = read_weights(path, where, expected, "a whole pickled network or agent", check)
    state = found["state"]
    net = _build(state, where)
    check_finite(state, where)
    net.load_state_dict(state)
    net.to(where_to).eval()
    iteration = data.get("iteration")
    meta.update({
        "library": "openspiel", "kind": kind,
        "iteration": iteration if isinstance(iteration, int) else None,
    })  # fmt: skip
    return OpenSpielNet(net, meta, where_to)


def _build(state: dict[str, torch.Tensor], where: str, make: bool = True) -> nn.Module | None:
    """OpenSpiel's ``MLP`` (its ``model`` Sequential: Linear+ReLU blocks, then a Linear) whose
    weights are `state`, checked: the same names, chained shapes, 588 in and 66 out (from
    names and shapes alone; built only if `make`)."""
    count = len(state) // 2
    hidden = [f"model.{i}.0" for i in range(count - 1)]
    names = [*hidden, f"model.{count - 1}"]
    expected = {f"{n}.{p}" for n in names for p in ("weight", "bias")}
    if set(state) != expected or not 1 <= count <= MAX_LAYERS + 1:
        raise CheckpointError(
            f"{where}: weights {sorted(state)[:4]}: expected the names of OpenSpiel's MLP "
            f"(model.I.0.weight and .bias per hidden layer, then model.H.weight and .bias), at "
            f"most {MAX_LAYERS} hidden layers"
        )
    shapes = [tuple(state[f"{n}.weight"].shape) for n in names]
    biases = [tuple(state[f"{n}.bias"].shape) for n in names]
    if any(len(s) != 2 for s in shapes) or any(
        b != (s[0],) for b, s in zip(biases, shapes, strict=True)
    ):
        raise CheckpointError(
            f"{where}: weights of shapes {shapes} and biases {biases}: not an MLP"
        )
    for (out_a, _), (_, in_b) in itertools.pairwise(shapes):
        if out_a != in_b:
            raise CheckpointError(f"{where}: layer sizes {shapes} do not chain")
    if shapes[0][1] != OBS_SIZE or shapes[-1][0] != NUM_ACTIONS:
        raise CheckpointError(
            f"{where}: a network from {shapes[0][1]} inputs to {shapes[-1][0]} outputs: "
            f"expected {OBS_SIZE} inputs (this game's information-state tensor) and "
            f"{NUM_ACTIONS} outputs (its actions): a network of another game or observation?"
        )
    total = sum(v.numel() for v in state.values())
    if total > MAX_PARAMETERS:
        raise CheckpointError(
            f"{where}: {total:,} weights: expected at most {MAX_PARAMETERS:,} (MAX_PARAMETERS)"
        )
    if not make:
        return None
    blocks: list[nn.Module] = [nn.Sequential(nn.Linear(i, o), nn.ReLU()) for o, i in shapes[:-1]]
    blocks.append(nn.Linear(shapes[-1][1], shapes[-1][0]))
    return _MLP(blocks)


class _MLP(nn.Module):
    """OpenSpiel's ``MLP`` layout (its weights' names), rebuilt without importing it."""

    def __init__(self, blocks: list[nn.Module]) -> None:
        super().__init__()
        self.model = nn.Sequential(*blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(K, 588) -> (K, 66)."""
        return self.model(x)
