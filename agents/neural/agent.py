"""Neural agents: ``neural:PATH`` plays with a trained PolicyValueNet checkpoint, and
``neural-bid:PATH`` bids with one and plays the cards with the checkpoint's fixed play policy.

torch is imported only when such an agent is made, so the rest of `agents` stays light.
Inference is batched over the K tables of a view, on the CPU unless the spec's ``device``
names another (agents/neural/device.py: ``device=cuda`` or ``auto``). A sampled
policy (``sample=true``) draws each action from that decision's own uniform (a hash of the
agent's seed, the game's stream key and the position: `fourhundred_agents.draws.view_uniform`), never
from a generator shared across the batch, so it plays a game the same way in any batch.
With ``symmetric=true`` the policy is averaged over the six renamings of the plain suits
(`fourhundred_env.symmetry`: clubs, diamonds and spades are equal), all six in one network
call: a trained network acts a little differently in each renaming, and the average of the
six is a stronger policy than any one of them. A network that bids with a bidding network
(agents/neural/bid_net.py) has its bids averaged the same way, its inputs renamed by
`renamed_inputs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fourhundred_agents.draws import view_uniforms
from fourhundred_agents.neural.device import check_device
from fourhundred_agents.protocol import Agent
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError
from fourhundred_env.observation import OBS_FIELDS, encode_observation
from fourhundred_env.registry import make_agent, register_agent, starts_program
from fourhundred_env.rules import Rules
from fourhundred_env.streams import SAMPLE_SALT
from fourhundred_env.symmetry import mean_over_renamings, stack_renamed
from fourhundred_env.view import SeatView

MATCH_FIELDS = ("scores", "at_target", "positive", "target")
"""The observation fields that tell the match situation beyond this hand's rules (minimum
bids and the required total stay): a bidder trained with ``match_features: false`` sees them
blanked, and so does the agent playing its checkpoint (its ``blank_fields``)."""


def blank_fields(obs: np.ndarray, names: tuple[str, ...] | list[str]) -> np.ndarray:
    """Zero the named fields of (K, OBS_SIZE) observations in place; returns `obs`."""
    for name in names:
        obs[:, OBS_FIELDS[name].slice] = 0
    return obs


def net_inputs(net, view: SeatView, rules: Rules, blank: tuple = ()) -> tuple:
    """A network's inputs at a view's tables, as numpy arrays: the observation (`blank`
    fields zero), or what a network that reads more (agents/neural/bid_net.py) works out
    itself; then, for a network that reads its owner's bid features (its
    ``extra_features``, agents/neural/extra_features.py), their (K, F) float32 columns."""
    if hasattr(net, "view_inputs"):
        inputs = tuple(net.view_inputs(view, rules))
    else:
        inputs = (blank_fields(encode_observation(view), blank),)
    hook = getattr(net, "extra_features", None)
    return inputs if hook is None else (*inputs, hook(view))


def renamed_inputs(net, inputs: tuple) -> tuple:
    """A network's inputs at K tables (as net_inputs gives them) -> the same at 6K tables,
    each table in the six renamings of the plain suits (fourhundred_env.symmetry.stack_renamed's
    order): the observation renamed, or what a network that reads more renames itself."""
    if hasattr(net, "renamed_inputs"):
        return net.renamed_inputs(inputs)
    return (stack_renamed(inputs[0]),)


class NeuralAgent(Agent):
    """Acts with a checkpoint's policy: greedy (argmax) by default, or sampled."""

    name = "neural"

    def __init__(
        self,
        path: str,
        rules: Rules | None = None,
        seed: int = 0,
        sample: bool = False,
        device: str = "cpu",
        *,
        net=None,
        dtype=None,
        symmetric: bool = False,
        features: str = "",
    ) -> None:
        """Loads the checkpoint at `path`, or, given `net`, plays a copy of that network in
        memory (see from_net) in `dtype` (float32 unless given), on `device` (a device
        setting, agents/neural/device.py; ConfigError if this machine lacks it); `symmetric`:
        its policy averaged over the six renamings of the plain suits; `features`: the bid
        features its network was trained with, named again by its owner
        (agents/neural/extra_features.py; a checkpoint names no code)."""
        super().__init__(rules, seed)
        import torch

        from fourhundred_agents.neural.device import torch_device

        self._torch = torch
        self.dtype = dtype or torch.float32
        self.device = torch_device(device)
        hook = None
        if features:  # checked on sample views before the checkpoint is read
            from fourhundred_agents.neural.extra_features import load_features

            hook = load_features(features, rules)
            if symmetric:
                raise ConfigError(
                    f"features={features!r} with symmetric=true: expected one of them (the "
                    "six renamings of the plain suits would need your features of each)"
                )
        if net is None:
            from fourhundred_agents.neural.checkpoint import load_policy

            self.net, self.trained_rules, self.meta = load_policy(
                path, rules=rules, device=self.device, features=hook
            )
        else:
            import copy

            self.net = copy.deepcopy(net).to(device=self.device, dtype=self.dtype)
            self.trained_rules, self.meta = rules, {}
            if symmetric and getattr(self.net, "extra_features", None) is not None:
                raise ConfigError(
                    "a network reading bid features of its owner with symmetric=true: "
                    "expected one of them (the six renamings would need your features of each)"
                )
        blank = self.meta.get("extra", {}).get("blank_fields", ())
        unknown = [name for name in blank if name not in OBS_FIELDS]
        if unknown:
            raise ConfigError(
                f"checkpoint {path!r} blanks observation field(s) {unknown} this version does "
                f"not have: expected some of {list(OBS_FIELDS)}"
            )
        self.blank = tuple(blank)
        from fourhundred_agents.neural.checkpoint import checkpoint_decides

        # a bidding-only checkpoint named as a player is refused by make_agent (its decides)
        self.decides = checkpoint_decides(self.net, self.meta.get("extra"))
        with_features = f",features={features}" if features else ""
        self.bid_spec = f"neural-bid:{path}{with_features}" if self.decides == "bid" else None
        self.path = path
        self.sample = sample
        self.symmetric = symmetric
        self.name = f"neural:{path}" + (",symmetric=true" if symmetric else "") + with_features

    @classmethod
    def from_net(cls, net, rules: Rules, dtype=None) -> NeuralAgent:
        """A greedy agent on the CPU playing a copy of a network in memory (the trainer's
        policy of the moment), in `dtype` (bfloat16 is several times faster on CPUs that
        have it; the logits are compared in float32)."""
        return cls("<live>", rules, net=net, dtype=dtype)

    def outputs(self, view: SeatView):
        """The network's (logits (K, 66), value (K,)) at a view's tables, as float32
        tensors. A network that reads more than the observation (agents/neural/bid_net.py) works
        its inputs out from the view itself."""
        torch = self._torch
        inputs = net_inputs(self.net, view, self.rules, self.blank)
        if self.symmetric:  # the six renamings of the inputs, stacked: one call
            inputs = renamed_inputs(self.net, inputs)
        with torch.no_grad():
            logits, value = self.net(*(torch.from_numpy(x).to(self.device, self.dtype)
                                       for x in inputs))  # fmt: skip
        logits, value = logits.float(), value.float()
        if self.symmetric:  # each renaming's logits back to the real actions, averaged
            logits, value = mean_over_renamings(logits), mean_over_renamings(value)
        return logits, value

    def _log_probs(self, view: SeatView):
        torch = self._torch
        from fourhundred_agents.neural.network import masked_logits

        mask = torch.from_numpy(view.legal_mask).to(self.device)
        logits, _ = self.outputs(view)
        return torch.log_softmax(masked_logits(logits, mask), -1)

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """Greedy (or sampled) actions, with the masked policy's probabilities."""
        if view.size == 0:
            return np.zeros(0, np.int64), np.zeros((0, 66), np.float32)
        logp = self._log_probs(view)
        probs = logp.exp().cpu().numpy()
        if self.sample:
            u = np.empty(view.size, np.float64)
            view_uniforms(view.records, self.key, SAMPLE_SALT, u)
            actions = sample_from_probs(probs, view.legal_mask, u)
        else:
            actions = logp.argmax(-1).cpu().numpy().astype(np.int64)
        return actions, probs

    def act(self, view: SeatView) -> np.ndarray:
        """The actions of :meth:`act_with_probs`."""
        return self.act_with_probs(view)[0]


def sample_from_probs(probs: np.ndarray, legal_mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(K,) int64: for each row of (K, 66) `probs`, the action whose interval of the
    cumulative distribution holds the row's uniform `u` (K,); an action of probability 0
    is never chosen, and rounding past the end falls on the last legal action."""
    cum = np.cumsum(np.where(legal_mask, probs, 0.0).astype(np.float64), axis=1)
    actions = (cum <= (u * cum[:, -1])[:, None]).sum(axis=1)
    last = legal_mask.shape[1] - 1 - np.argmax(legal_mask[:, ::-1], axis=1)
    return np.minimum(actions, last).astype(np.int64)


class BidPlayAgent(Agent):
    """Bids with one agent and plays the cards with another (a trained bidder + fixed play)."""

    def __init__(self, bidder: Agent, player: Agent, name: str) -> None:
        super().__init__(bidder.rules, bidder.seed)
        self.bidder, self.player, self.name = bidder, player, name

    def reset(self, num_tables: int) -> None:
        """Reset both the bidder and the player."""
        self.bidder.reset(num_tables)
        self.player.reset(num_tables)

    def act(self, view: SeatView) -> np.ndarray:
        """The bidder's actions at the tables that are bidding, the player's at the others."""
        bidding = view.legal_mask[:, NUM_CARDS:].any(axis=1)
        actions = np.empty(view.size, np.int64)
        for sel, agent in ((bidding, self.bidder), (~bidding, self.player)):
            if sel.any():
                actions[sel] = agent.act(view.select(np.flatnonzero(sel)))
        return actions


@dataclass(frozen=True)
class NeuralSettings:
    """``neural:PATH`` (greedy) or ``neural:PATH,sample=true`` (sampled from the policy)."""

    path: str
    """The checkpoint (a run's policy.pt)."""
    sample: bool = False
    """Sample actions from the policy instead of taking the most likely one."""
    symmetric: bool = False
    """Average the policy (bids and cards) over the six renamings of the plain suits (clubs,
    diamonds and spades are equal): six evaluations of the network a decision, in one call."""
    device: str = "cpu"
    """Where the network runs: "cpu", "cuda" (the current GPU), "cuda:N" or "auto" (a CUDA
    GPU if torch finds one, else the CPU). On the CPU a game is the same on every machine;
    on a GPU the network may round its last bits otherwise, so a near tie may go the other
    way (docs/training.md, "Training on a GPU"). A device this machine lacks is refused."""
    features: str = ""
    """The bid features of your own the checkpoint was trained with (``train bidding_q
    features=SPEC``), named again here: ``package.module:function``, ``FILE.py:function`` or
    an entry point in ``fourhundred.bid_features`` (agents/neural/extra_features.py). A
    checkpoint trained with them is refused without them: it never names code itself."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.path:
            raise ConfigError("path='': expected a checkpoint file, as in neural:PATH")
        check_device(self.device, present=True)


@dataclass(frozen=True)
class NeuralBidSettings:
    """``neural-bid:PATH``: bids with the checkpoint, plays with its recorded play policy."""

    path: str
    """The bidding checkpoint (a bidding run's policy.pt)."""
    device: str = "cpu"
    """Where the bidding network runs, as for ``neural:`` ("cpu", "cuda", "cuda:N" or
    "auto"); the play policy is its own spec."""
    features: str = ""
    """The bid features of your own the checkpoint was trained with (``train bidding_q
    features=SPEC``), named again here: ``package.module:function``, ``FILE.py:function`` or
    an entry point in ``fourhundred.bid_features`` (agents/neural/extra_features.py). A
    checkpoint trained with them is refused without them: it never names code itself."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.path:
            raise ConfigError("path='': expected a checkpoint file, as in neural-bid:PATH")
        check_device(self.device, present=True)


def _neural_factory(rules: Rules, seed: int, settings: NeuralSettings) -> Agent:
    return NeuralAgent(settings.path, rules, seed, sample=settings.sample,
                       device=settings.device, symmetric=settings.symmetric,
                       features=settings.features)  # fmt: skip


def _neural_bid_factory(rules: Rules, seed: int, settings: NeuralBidSettings) -> Agent:
    bidder = NeuralAgent(settings.path, rules, seed, device=settings.device,
                         features=settings.features)  # fmt: skip
    play = bidder.meta.get("extra", {}).get("play_policy", "heuristic")
    if not isinstance(play, str) or len(play) > 1000:
        from fourhundred_agents.neural.checkpoint import CheckpointError  # (torch: lazily)

        what = type(play).__name__ if not isinstance(play, str) else f"{len(play):,} characters"
        raise CheckpointError(
            f"checkpoint {settings.path!r} records a play_policy that is a {what}: expected an "
            "agent spec of at most 1,000 characters, as the bidding trainers write"
        )
    if starts_program(play):  # a spec read from a file someone handed you runs no program
        from fourhundred_agents.neural.checkpoint import CheckpointError  # (torch: lazily)

        raise CheckpointError(
            f"checkpoint {settings.path!r} names a play policy that starts a program "
            f"({play[:80]!r}): expected a bot of this package; a spec read from a file is "
            f"never run as a program (name the card player yourself: compose:bid=neural:"
            f"{settings.path},play=SPEC)"
        )
    with_features = f",features={settings.features}" if settings.features else ""
    return BidPlayAgent(bidder, make_agent(play, rules, seed + 1),
                        f"neural-bid:{settings.path}{with_features}")  # fmt: skip


register_agent(
    "neural",
    _neural_factory,
    "a trained PolicyValueNet checkpoint (neural:PATH)",
    settings=NeuralSettings,
    positional="path",
)
register_agent(
    "neural-bid",
    _neural_bid_factory,
    "bids with a checkpoint, plays with its fixed play policy",
    settings=NeuralBidSettings,
    positional="path",
)
