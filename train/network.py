"""The training-only network: the oracle critic. The policy network, :class:`PolicyValueNet`,
lives beside the agent that plays it (:mod:`fourhundred_agents.neural.network`) and is re-exported here."""

from __future__ import annotations

import torch
from torch import nn

from fourhundred_agents.neural.network import MASKED, NetConfig, PolicyValueNet, masked_logits
from fourhundred_env.cards import NUM_CARDS

__all__ = ["HIDDEN_HANDS", "MASKED", "NetConfig", "OracleCritic", "PolicyValueNet", "masked_logits"]


HIDDEN_HANDS = 3 * NUM_CARDS
"""Extra input of the oracle critic: the hands of the right, partner and left seats."""


class OracleCritic(nn.Module):
    """A value network that also sees the other three hands (training only).

    "Perfect-information training, imperfect-information execution" (PerfectDou, 2022): the
    critic's value is conditioned on the deal, so the luck of where the hidden cards lie
    drops out of the advantages, while the policy, which plays, still reads only its own
    observation. It never reaches an agent or a policy checkpoint.
    """

    def __init__(self, config: NetConfig | None = None) -> None:
        super().__init__()
        c = config or NetConfig()
        layers: list[nn.Module] = []
        width = c.obs_size + HIDDEN_HANDS
        for _ in range(c.layers):
            layers += [nn.Linear(width, c.hidden), nn.ReLU()]
            width = c.hidden
        layers.append(nn.Linear(width, 1))
        self.body = nn.Sequential(*layers)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight, gain=2**0.5)
                nn.init.zeros_(module.bias)
        nn.init.orthogonal_(layers[-1].weight, gain=1.0)

    def forward(self, obs: torch.Tensor, hidden_hands: torch.Tensor) -> torch.Tensor:
        """(N,) float32 values of observations (N, OBS_SIZE) and hidden hands
        (N, HIDDEN_HANDS) float32."""
        return self.body(torch.cat([obs, hidden_hands], dim=-1)).squeeze(-1)
