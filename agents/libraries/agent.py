"""The agent that plays a model of another RL library, and its registrations (``sb3:PATH``,
``torch:PATH``, ``rlcard:PATH``), and the registration of OpenSpiel's bots (``openspiel:ismcts``,
``openspiel:random``; :mod:`fourhundred_agents.libraries.openspiel`) and networks
(``openspiel:dqn,path=PATH``, ``openspiel:nfsp,path=PATH``;
:mod:`fourhundred_agents.libraries.openspiel_net`).

A :class:`LibraryPolicyAgent` encodes each view with the one encoder
(:func:`fourhundred_env.observation.encode_observation`), asks the model for one score per
action (a policy's logits, or a DQN's Q-values), sets the illegal actions' scores to -inf
whether or not the model was trained with masks, and takes the best (or, ``sample=true``,
draws from the softmax with that decision's own uniform, as the neural agent does). torch and
SB3 are imported only when such an agent is made. The model runs on the CPU unless the spec's
``device`` names another (agents/neural/device.py); on a GPU its decisions are no longer
bit for bit the same in any batch, so such an agent is not replayable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fourhundred_agents.draws import view_uniforms
from fourhundred_agents.neural.agent import sample_from_probs
from fourhundred_agents.neural.device import check_device
from fourhundred_agents.neural.files import model_file_kind
from fourhundred_agents.protocol import Agent
from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.observation import encode_observation
from fourhundred_env.registry import parse_spec, register_agent
from fourhundred_env.rules import Rules
from fourhundred_env.streams import SAMPLE_SALT
from fourhundred_env.view import SeatView

Scores = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(obs (K, 588) float32, mask (K, 66) bool) -> (K, 66) float32 scores, higher is better."""


class LibraryPolicyAgent(Agent):
    """Plays `scores`, masked: greedy (argmax over the legal actions) or sampled."""

    replayable = True  # each decision a function of the view, the seed and the stream key

    def __init__(
        self,
        name: str,
        scores: Scores,
        rules: Rules | None = None,
        seed: int = 0,
        sample: bool = False,
        is_policy: bool = True,
        meta: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(rules, seed)
        if sample and not is_policy:
            raise ConfigError(
                f"{name},sample=true: this model gives action values (Q-values), not a "
                "policy to sample from: expected sample=false"
            )
        self.name, self.scores, self.sample, self.is_policy = name, scores, sample, is_policy
        self.meta = meta or {}

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """Masked greedy (or sampled) actions, and the softmax (a policy) or None (Q-values)."""
        if view.size == 0:
            return np.zeros(0, np.int64), np.zeros((0, 66), np.float32)
        mask = view.legal_mask
        scores = np.asarray(self.scores(encode_observation(view), mask), np.float64)
        scores = np.where(mask, scores, -np.inf)
        probs = None
        if self.is_policy:
            shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
            probs = (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)
        if self.sample and probs is not None:
            u = np.empty(view.size, np.float64)
            view_uniforms(view.records, self.key, SAMPLE_SALT, u)
            return sample_from_probs(probs, mask, u), probs
        return scores.argmax(axis=1).astype(np.int64), probs

    def act(self, view: SeatView) -> np.ndarray:
        """The actions of :meth:`act_with_probs`."""
        return self.act_with_probs(view)[0]


@dataclass(frozen=True)
class SB3Settings:
    """``sb3:PATH`` (greedy) or ``sb3:PATH,sample=true``: a model zip saved by
    Stable-Baselines3 or sb3-contrib (``model.save``) on this game's observation."""

    path: str
    """The model zip (the SB3 example's runs/<name>__<seed>__<time>/model.zip)."""
    sample: bool = False
    """Sample actions from the policy instead of taking the most likely one (policies only:
    PPO, A2C, MaskablePPO; a DQN has Q-values)."""
    device: str = "cpu"
    """Where the model runs: "cpu", "cuda", "cuda:N" or "auto", as for ``neural:`` (on a GPU
    the agent is not replayable)."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.path:
            raise ConfigError("path='': expected a model zip, as in sb3:PATH")
        check_device(self.device, present=True)


@dataclass(frozen=True)
class TorchSettings:
    """``torch:PATH`` (greedy) or ``torch:PATH,sample=true``: a torch module's weights with
    their manifest (PATH.json beside PATH), as ``save_torch_policy`` writes them."""

    path: str
    """The weights (the CleanRL example's runs/<name>__<seed>__<time>/policy.pt), or their
    manifest (policy.json)."""
    sample: bool = False
    """Sample actions from the policy instead of taking the most likely one."""
    device: str = "cpu"
    """Where the module runs: "cpu", "cuda", "cuda:N" or "auto", as for ``neural:`` (on a GPU
    the agent is not replayable; the module's forward must keep to its inputs' device)."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.path:
            raise ConfigError("path='': expected a policy file, as in torch:PATH")
        check_device(self.device, present=True)


@dataclass(frozen=True)
class OpenSpielSettings:
    """``openspiel:ismcts`` (OpenSpiel's IS-MCTS with random rollouts; the settings below) or
    ``openspiel:random`` (OpenSpiel's uniform random bot): each decision searched or drawn on
    the one-hand OpenSpiel game of the position, team points as the return. Or
    ``openspiel:dqn,path=PATH`` / ``openspiel:nfsp,path=PATH``: the network OpenSpiel's
    PyTorch DQN / NFSP saved, on the seat's information-state tensor."""

    bot: Literal["ismcts", "random", "dqn", "nfsp"]
    """Which OpenSpiel bot plays."""
    path: str = ""
    """dqn, nfsp: the file the learner saved (examples/openspiel_dqn.py:
    runs/<name>__<seed>__<time>/dqn.pt), a ``fourhundred.json`` beside it checked if there."""
    sample: bool = False
    """nfsp: draw from the average policy over the legal actions (with the decision's own
    uniform) instead of playing its most likely one; dqn plays its highest Q always."""
    device: str = "cpu"
    """dqn, nfsp: where the network runs, as for ``neural:`` (on a GPU not replayable)."""
    simulations: int = 1000
    """IS-MCTS: simulations a decision (OpenSpiel's MCTS example's default: about 1.5 s a
    decision on the 2-core machine; 16 to 24 make about 20 ms, BENCHMARKS.md)."""
    uct_c: float = 2.0
    """IS-MCTS: the UCT exploration constant (OpenSpiel's default; returns are team points)."""
    rollouts: int = 1
    """IS-MCTS: random rollouts to the end of the hand per evaluation."""
    final_policy: Literal["max_visit_count", "max_value"] = "max_visit_count"
    """IS-MCTS: the action played: the most visited, or the best valued."""
    rollout: str = "random"
    """IS-MCTS: who plays the rollouts: "random" (OpenSpiel's random rollouts, bids up to 13
    included), or an agent spec of ours without commas (``heuristic-v1``,
    ``neural:agents/pretrained/exit.pt``) playing every seat to the end of the hand."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not 1 <= self.simulations <= 1_000_000 or not 1 <= self.rollouts <= 1000:
            raise ConfigError(
                f"simulations={self.simulations}, rollouts={self.rollouts}: expected 1 to "
                "1,000,000 simulations and 1 to 1000 rollouts"
            )
        if not 0.0 <= self.uct_c <= 1e6:
            raise ConfigError(f"uct_c={self.uct_c!r}: expected a constant from 0 to 1e6")
        if parse_spec(self.rollout)[0] in ("cmd", "human", "openspiel", "compose"):
            raise ConfigError(
                f"rollout={self.rollout!r}: expected random or a bot of this process that "
                "plays every seat (not a program, a person, a composition or another search)"
            )
        networks = self.bot in ("dqn", "nfsp")
        if networks != bool(self.path):
            raise ConfigError(
                f"openspiel:{self.bot},path={self.path!r}: "
                + (f"expected the file {self.bot.upper()} saved, as in openspiel:{self.bot},path=PATH"
                   if networks else "only dqn and nfsp read a file")
            )  # fmt: skip
        if self.sample and self.bot != "nfsp":
            raise ConfigError(
                f"openspiel:{self.bot},sample=true: only nfsp has a policy to sample from "
                "(DQN's outputs are Q-values)"
            )
        check_device(self.device, present=networks)


@dataclass(frozen=True)
class RLCardSettings:
    """``rlcard:PATH``: a model RLCard's DMC trainer saved on this game (its ``model.tar``, or
    the run folder holding it), played greedily on its Q-values."""

    path: str
    """DMC's model.tar (examples/rlcard_dmc.py: runs/<name>__<seed>__<time>/dmc/model.tar), or
    its folder."""
    position: int = 0
    """Which of DMC's four networks (one per player id, here the seats) plays; the seats are
    alike, so any of them plays any seat."""
    device: str = "cpu"
    """Where the network runs: "cpu", "cuda", "cuda:N" or "auto", as for ``neural:``."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.path:
            raise ConfigError("path='': expected DMC's model.tar, as in rlcard:PATH")
        if not 0 <= self.position <= 3:
            raise ConfigError(f"position={self.position}: expected a position 0 to 3")
        check_device(self.device, present=True)


def _rlcard_factory(rules: Rules, seed: int, settings: RLCardSettings) -> Agent:
    from fourhundred_agents.libraries.rlcard import load_dmc_model

    model = load_dmc_model(settings.path, rules, settings.position, settings.device)
    agent = LibraryPolicyAgent(
        f"rlcard:{settings.path}", model.scores, rules, seed, False, False, model.meta
    )
    agent.replayable = model.device.type == "cpu"
    return agent


def _openspiel_factory(rules: Rules, seed: int, settings: OpenSpielSettings) -> Agent:
    from fourhundred_agents.libraries.openspiel import OpenSpielAgent, ismcts_bot, random_bot

    if settings.bot in ("dqn", "nfsp"):
        from fourhundred_agents.libraries.openspiel_net import load_openspiel_net

        model = load_openspiel_net(settings.path, settings.bot, rules, settings.device)
        agent = LibraryPolicyAgent(
            f"openspiel:{settings.bot},path={settings.path}", model.scores, rules, seed,
            settings.sample, settings.bot == "nfsp", model.meta,
        )  # fmt: skip
        agent.replayable = model.device.type == "cpu"
        return agent
    if settings.bot == "random":
        return OpenSpielAgent("openspiel:random", random_bot(), rules, seed)
    rollout_agent = None
    if settings.rollout != "random":
        from fourhundred_agents.protocol import as_agent
        from fourhundred_env.registry import make_agent

        rollout_agent = as_agent(make_agent(settings.rollout, rules, seed))
    make = ismcts_bot(
        settings.simulations, settings.uct_c, settings.rollouts, settings.final_policy,
        rollout_agent,
    )  # fmt: skip
    return OpenSpielAgent("openspiel:ismcts", make, rules, seed)


def _sb3_factory(rules: Rules, seed: int, settings: SB3Settings) -> Agent:
    from fourhundred_agents.libraries.sb3 import load_sb3_model

    model = load_sb3_model(settings.path, rules, settings.device)
    agent = LibraryPolicyAgent(
        f"sb3:{settings.path}", model.scores, rules, seed, settings.sample, model.is_policy,
        model.meta,
    )  # fmt: skip
    agent.replayable = model.device.type == "cpu"
    return agent


def _torch_factory(rules: Rules, seed: int, settings: TorchSettings) -> Agent:
    from fourhundred_agents.libraries.torch_policy import load_torch_policy

    policy = load_torch_policy(settings.path, rules, settings.device)
    agent = LibraryPolicyAgent(
        f"torch:{settings.path}", policy.scores, rules, seed, settings.sample, True, policy.meta
    )
    agent.replayable = policy.device.type == "cpu"
    return agent


def model_spec(path: str | Path) -> str:
    """The agent spec that plays the model file `path`, by what the file is (its contents,
    not its name): ``sb3:`` for a Stable-Baselines3 zip, ``torch:`` for weights with a
    manifest (or the manifest), else ``neural-bid:`` for a bidding-only checkpoint (a
    bidding run's: `checkpoint_decides`) and ``neural:`` for any other. A run folder stands
    for the model it holds (model.zip, policy.json or policy.pt). For tools that take run
    folders."""
    path = Path(path)
    if path.is_dir():
        for name in ("model.zip", "policy.json", "policy.pt"):
            if (path / name).is_file():
                return model_spec(path / name)
        raise ConfigError(
            f"run folder {str(path)!r} holds no model: expected model.zip (SB3), policy.json "
            "with policy.pt (torch:) or policy.pt (fourhundred train)"
        )
    kind = model_file_kind(path)
    if kind == "sb3":
        return f"sb3:{path}"
    if kind == "manifest" or path.with_suffix(".json").is_file():
        return f"torch:{path}"
    from fourhundred_agents.neural.checkpoint import checkpoint_decides, load_policy

    try:
        net, _, meta = load_policy(str(path))
    except FourHundredError:  # refused with its reason where it is played
        return f"neural:{path}"
    return f"{'neural-bid' if checkpoint_decides(net, meta['extra']) == 'bid' else 'neural'}:{path}"


register_agent(
    "sb3",
    _sb3_factory,
    "a Stable-Baselines3 / sb3-contrib model zip (sb3:PATH; PPO, MaskablePPO, A2C, DQN)",
    settings=SB3Settings,
    positional="path",
)
register_agent(
    "openspiel",
    _openspiel_factory,
    "OpenSpiel's bots: openspiel:ismcts (IS-MCTS; simulations=, uct_c=...), openspiel:random, "
    "and networks its DQN/NFSP saved (openspiel:dqn,path=PATH)",
    settings=OpenSpielSettings,
    positional="bot",
)
register_agent(
    "rlcard",
    _rlcard_factory,
    "a model RLCard's DMC trainer saved on 400 (rlcard:PATH to its model.tar or run folder)",
    settings=RLCardSettings,
    positional="path",
)
register_agent(
    "torch",
    _torch_factory,
    "a torch policy(obs, mask) -> logits with its manifest (torch:PATH; the CleanRL example's)",
    settings=TorchSettings,
    positional="path",
)
