"""`PolicyValueNet`: the policy and value network read from the observation encoder's vectors.

It lives beside the agent that plays it (:mod:`fourhundred_agents.neural.agent`); training (:mod:`train`)
imports it from here. torch is imported by this module only.

A shared MLP trunk, a bidding head (actions 52-65: bids 1..13 and redeal), a card-play head
(actions 0-51) and a value head. Logits are masked by the legal mask through
:func:`masked_logits`, the one helper that the PPO loss and the neural agent both use, so
training and play cannot drift apart.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import torch
from torch import nn

from fourhundred_agents.neural.extra_features import MAX_FEATURES
from fourhundred_env.cards import NUM_ACTIONS, NUM_CARDS
from fourhundred_env.observation import OBS_FIELDS, OBS_SIZE

_BID_PHASE = OBS_FIELDS["phase"].start  # phase one-hot: bid, play, hand_over, match_over
MASKED = -1e9  # logit of an illegal action: exp() underflows to exactly 0 in float32
MAX_HIDDEN = 4096
"""Widest layer a network may have (NetConfig.hidden; BidNetConfig.hidden and head too)."""
MAX_LAYERS = 32
"""Most hidden layers a PolicyValueNet's trunk may have (NetConfig.layers)."""
MAX_EXTRA_INPUTS = MAX_FEATURES
"""Most extra inputs a network may read (NetConfig.extra_inputs, BidNetConfig.extra_inputs:
the columns of its owner's feature function, agents/neural/extra_features.py)."""
MAX_PARAMETERS = 2**25
"""Most weights a network may have (33,554,432: 128 MiB in float32; the bundled networks have
under 300,000). These bounds are checked on a config before any network is built from it, so a
checkpoint whose config names a size of gigabytes is refused without allocating it."""


@dataclass(frozen=True)
class NetConfig:
    """Shape of a PolicyValueNet."""

    obs_size: int = OBS_SIZE
    """Length of the observation vector (the encoder's OBS_SIZE)."""
    hidden: int = 256
    """Width of each hidden layer of the trunk."""
    layers: int = 3
    """Number of hidden layers of the trunk."""
    extra_inputs: int = 0
    """Inputs read after the observation: the columns of its owner's feature function
    (agents/neural/extra_features.py); 0: none (the field is then not stored)."""

    def to_dict(self) -> dict[str, int]:
        """The fields by name, as the checkpoint stores them (extra_inputs only if any)."""
        return without_zero_extra(asdict(self))

    def num_parameters(self) -> int:
        """The number of weights a PolicyValueNet of this shape has (worked out, not built)."""
        width, total = self.obs_size + self.extra_inputs, 0
        for _ in range(self.layers):
            total += (width + 1) * self.hidden
            width = self.hidden
        return total + (width + 1) * NUM_ACTIONS + width + 1  # play and bid heads, value head

    def size_problem(self) -> str | None:
        """What makes this shape too big to build (the field, its value and the bound, or the
        number of weights), or None: checked before anything is allocated."""
        return size_problem(
            {"hidden": (self.hidden, MAX_HIDDEN, "MAX_HIDDEN"),
             "layers": (self.layers, MAX_LAYERS, "MAX_LAYERS"),
             **extra_bound(self.extra_inputs)},
            self,
        )  # fmt: skip


def without_zero_extra(values: dict[str, int]) -> dict[str, int]:
    """A config's fields without ``extra_inputs`` when it is 0: a network without features
    of its owner is stored as it was before they existed (older releases read it)."""
    if values.get("extra_inputs") == 0:
        del values["extra_inputs"]
    return values


def extra_bound(extra_inputs: int) -> dict[str, tuple[int, int, str]]:
    """The bound of a config's extra_inputs for `size_problem`, where it has any (a config
    without them is described as before they existed)."""
    if not extra_inputs:
        return {}
    return {"extra_inputs": (extra_inputs, MAX_EXTRA_INPUTS, "MAX_EXTRA_INPUTS")}


def size_problem(bounds: dict[str, tuple[int, int, str]], config: object) -> str | None:
    """The first of `bounds` (field -> (value, bound, the bound's name)) exceeded, else the
    number of weights (``config.num_parameters()``) if above MAX_PARAMETERS, in one phrase;
    None if the shape is within every bound."""
    for field, (value, bound, name) in bounds.items():
        if value > bound:
            return f"{field}={_number(value)}: expected at most {bound} ({name})"
    count = config.num_parameters()  # type: ignore[attr-defined]
    if count > MAX_PARAMETERS:
        sizes = ", ".join(f"{field}={value}" for field, (value, _, _) in bounds.items())
        return (
            f"{_number(count)} weights ({sizes}): expected at most {MAX_PARAMETERS:,} "
            "(MAX_PARAMETERS)"
        )
    return None


@dataclass(frozen=True)
class MLPShape:
    """The shape of a plain MLP read from another library's file (an SB3 ``net_arch``, a
    ``torch:`` "mlp"'s ``hidden``): bounded by MAX_LAYERS, MAX_HIDDEN and MAX_PARAMETERS as
    NetConfig is, before anything is built. `widths` as the file gives them (any JSON value:
    :meth:`size_problem` checks them first)."""

    inputs: int
    """Width of the input (the observation, or the observation and the mask)."""
    widths: object
    """The hidden layers' widths: expected a list of positive integers."""
    outputs: int
    """Width of the output layer."""
    copies: int = 1
    """How many networks of this shape are built (a DQN's target network: 2)."""

    def num_parameters(self) -> int:
        """The number of weights (worked out, not built); `widths` already checked."""
        sizes = [self.inputs, *self.widths, self.outputs]  # type: ignore[misc]
        return self.copies * sum((a + 1) * b for a, b in itertools.pairwise(sizes))

    def size_problem(self) -> str | None:
        """What makes these widths unusable or too big to build, in one phrase, or None."""
        widths = self.widths
        if not isinstance(widths, (list, tuple)):
            return f"hidden layers {_short(widths)}: expected a list of positive integers"
        if len(widths) > MAX_LAYERS:
            return f"layers={_number(len(widths))}: expected at most {MAX_LAYERS} (MAX_LAYERS)"
        for width in widths:
            if not (isinstance(width, int) and not isinstance(width, bool) and width > 0):
                return f"a hidden layer of width {_short(width)}: expected positive integers"
        return size_problem(
            {"layers": (len(widths), MAX_LAYERS, "MAX_LAYERS"),
             "hidden": (max(widths, default=0), MAX_HIDDEN, "MAX_HIDDEN")},
            self,
        )  # fmt: skip


def _short(value: object) -> str:
    """repr(value) cut to 60 characters (an int too long to print shown by its size)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _number(value) if value >= 0 else "-" + _number(-value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: int) -> str:
    """`value` in digits (with thousands separators past 9999), or its power of two when it is
    too long to print (Python refuses to print an int of more than 4,300 digits)."""
    if value.bit_length() > 64:
        return f"about 2**{value.bit_length() - 1}"
    return f"{value:,}" if value > 9999 else str(value)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits (N, 66) with illegal actions (mask False/0) set to a huge negative number."""
    return logits.masked_fill(~mask.bool(), MASKED)


class PolicyValueNet(nn.Module):
    """obs (N, obs_size) float32 -> (logits (N, 66) unmasked, value (N,))."""

    def __init__(self, config: NetConfig | None = None) -> None:
        super().__init__()
        self.config = config or NetConfig()
        c = self.config
        problem = c.size_problem()
        if problem is not None:  # before any weight is allocated
            raise ValueError(f"network too big: {problem}")
        layers: list[nn.Module] = []
        width = c.obs_size + c.extra_inputs
        for _ in range(c.layers):
            layers += [nn.Linear(width, c.hidden), nn.ReLU()]
            width = c.hidden
        self.trunk = nn.Sequential(*layers)
        self.play_head = nn.Linear(width, NUM_CARDS)
        self.bid_head = nn.Linear(width, NUM_ACTIONS - NUM_CARDS)
        self.value_head = nn.Linear(width, 1)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight, gain=2**0.5)
                nn.init.zeros_(module.bias)
        nn.init.orthogonal_(self.play_head.weight, gain=0.01)
        nn.init.orthogonal_(self.bid_head.weight, gain=0.01)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)
        # its owner's feature function (extra_features.FeatureHook) when it reads extra
        # inputs: set by whoever trains or loads it, never stored in a checkpoint
        self.extra_features = None

    def forward(
        self, obs: torch.Tensor, extra: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits (N, 66) and value (N,) at obs (N, obs_size) (and, with
        extra_inputs, `extra` (N, extra_inputs), read after it)."""
        h = self.trunk(obs if extra is None else torch.cat([obs, extra.to(obs.dtype)], -1))
        logits = torch.cat([self.play_head(h), self.bid_head(h)], dim=-1)
        return logits, self.value_head(h).squeeze(-1)

    def distribution(
        self, obs: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.distributions.Categorical, torch.Tensor]:
        """Masked categorical over the 66 actions, and the value estimate."""
        logits, value = self(obs)
        return torch.distributions.Categorical(logits=masked_logits(logits, mask)), value
