"""A network that bids with a bidding network and plays the cards with a policy network, in one
checkpoint (``neural:PATH`` plays it; expert iteration's ``bidder`` setting writes it).

The bidding network (agents/neural/bid_net.py, `BidNet`) reads what each bid would do; the card
network (agents/neural/network.py, `PolicyValueNet`) reads the observation. `BidPlayNet` holds
both: its logits are the bidding network's at a bidding decision and the card network's
elsewhere, its value the card network's. Its checkpoint's ``net`` is ``{"bid": BidNetConfig's
fields, "play": NetConfig's fields}`` and its weights are named ``bid.*`` and ``play.*``.

A search over it (agents/search/) plays its card network in the play-outs and weighs the
worlds by that network's policy; where the bids are not searched, the bidding network bids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from fourhundred_agents.neural.bid_net import (
    PER_BID_SIZES,
    SHARED_SIZE,
    BidNet,
    BidNetConfig,
    renamed_bid_inputs,
)
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet
from fourhundred_env.engine import Phase
from fourhundred_env.observation import OBS_FIELDS, encode_observation
from fourhundred_env.rules import Rules
from fourhundred_env.symmetry import stack_renamed
from fourhundred_env.view import SeatView

_BID_PHASE = OBS_FIELDS["phase"].start  # phase one-hot: bid, play, hand_over, match_over


@dataclass(frozen=True)
class BidPlayConfig:
    """Shape of a BidPlayNet: its two networks' configs."""

    bid: BidNetConfig
    """The bidding network's shape."""
    play: NetConfig
    """The card network's shape."""

    def to_dict(self) -> dict[str, dict[str, int]]:
        """The two configs by name, as the checkpoint stores them."""
        return {"bid": self.bid.to_dict(), "play": self.play.to_dict()}

    def num_parameters(self) -> int:
        """The weights of both networks (worked out, not built)."""
        return self.bid.num_parameters() + self.play.num_parameters()

    def size_problem(self) -> str | None:
        """What makes either network too big to build, or None."""
        for what, config in (("bidding network", self.bid), ("card network", self.play)):
            problem = config.size_problem()
            if problem is not None:
                return f"{problem} in its {what}"
        return None


class BidPlayNet(nn.Module):
    """(obs (N, OBS_SIZE), shared (N, SHARED_SIZE), per-bid (N, 14, PER_BID)) -> (logits
    (N, 66): the bidding network's where the observation is a bidding decision, the card
    network's elsewhere; value (N,): the card network's)."""

    def __init__(self, config: BidPlayConfig) -> None:
        super().__init__()
        self.config = config
        problem = config.size_problem()
        if problem is not None:  # before any weight is allocated
            raise ValueError(f"network too big: {problem}")
        self.bid = BidNet(config.bid)
        self.play = PolicyValueNet(config.play)

    @classmethod
    def join(cls, bid: BidNet, play: PolicyValueNet) -> BidPlayNet:
        """A BidPlayNet holding copies of `bid`'s and `play`'s weights."""
        net = cls(BidPlayConfig(bid.config, play.config))
        net.bid.load_state_dict(bid.state_dict())
        net.play.load_state_dict(play.state_dict())
        return net.eval()

    def forward(
        self, obs: torch.Tensor, shared: torch.Tensor, per: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (N, 66) and value (N,); see the class docstring."""
        logits, value = self.play(obs)
        rows = torch.nonzero(obs[:, _BID_PHASE] > 0.5)[:, 0]
        if rows.numel():  # the bidding network reads the bidding decisions only
            logits = logits.clone()
            logits[rows] = self.bid(shared[rows], per[rows])[0]
        return logits, value

    @staticmethod
    def renamed_inputs(inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """Its inputs at K tables (view_inputs) -> the same at 6K tables, each table in the six
        renamings of the plain suits (stack_renamed's order): the observation and the bidding
        network's inputs renamed alike."""
        obs, shared, per = inputs
        return (stack_renamed(obs), *renamed_bid_inputs(shared, per))

    def view_inputs(self, view: SeatView, rules: Rules) -> tuple[np.ndarray, ...]:
        """The inputs at a view's tables: the observation, and the bidding network's
        features at its bidding decisions (zeros elsewhere: they are worked out only where
        read)."""
        obs = encode_observation(view)
        shared = np.zeros((view.size, SHARED_SIZE), np.float32)
        per = np.zeros((view.size, 14, PER_BID_SIZES[self.config.bid.bid_features]), np.float32)
        rows = np.flatnonzero(view.phase == int(Phase.BID))
        if rows.size:
            shared[rows], per[rows] = self.bid.view_inputs(view.select(rows), rules)
        return obs, shared, per
