"""The agent protocol: every bot, scripted, neural or human, is an `Agent`.

An agent only ever receives a seat's :class:`~fourhundred_env.view.SeatView`: that seat's
own hand and the public facts. Environments, tournaments and the terminal game give each
seat its own instance, so partners cannot share hidden information through one. An instance
may serve several seats only where it cannot carry anything from one seat's view to
another's: rollouts and search play-outs (:mod:`fourhundred_agents.search.rollout`) reuse one instance
of a *stateless* bot, whose every decision is a function of the view in hand (and its seed),
as every bundled bot's is; a bot that remembers across calls sets ``stateless = False`` and
is refused there. Random draws are the per-view streams of :mod:`fourhundred_agents.draws`.
"""

from __future__ import annotations

import numpy as np

from fourhundred_agents.compiled import CompiledPolicy
from fourhundred_agents.draws import agent_key
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView


class Agent:
    """Base class of all bots.

    Subclasses implement `act` (and may override `act_with_probs` and `reset`). Batched:
    `view` describes K tables where this agent's seat is to act.
    """

    name: str = "agent"
    stateless: bool = True
    """Each decision depends on the view in hand alone (and the seed), nothing remembered
    from earlier calls: one instance may then play several seats in a play-out."""
    replayable: bool = False
    """Each decision is a function of the view, the seed and the game's stream key alone (no
    generator advanced by earlier calls): a game of a tournament can then be played again,
    card for card, from its database (:mod:`fourhundred_tournament.replay`). False unless a bot says so."""
    times_itself: bool = False
    """The bot keeps the hard time limit itself: it has ``act_timed(view, hard)``, returning a
    :class:`~fourhundred_agents.remote.process.Reply` with each table's seconds and failures instead of
    raising, which a tournament calls instead of `act` (a bot in its own process,
    :mod:`fourhundred_agents.remote.process`). False: the caller times `act` and enforces the limit."""
    decides: str = "both"
    """What the bot can decide: "both" (bids and cards), "bid" (only bids: a bidding-only
    checkpoint) or "play" (only cards). `make_agent` refuses a bot asked for decisions it
    cannot make (:data:`fourhundred_env.registry.DECIDES`)."""
    bid_spec: str | None = None
    """A spec that plays this bidding-only bot's bids with card play of its own (for the
    refusal's message: ``neural-bid:PATH``), or None."""

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        self.rules = rules if rules is not None else Rules()
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.key = agent_key(seed)

    def compiled_policy(self) -> CompiledPolicy | None:
        """The bot as a policy the compiled play-outs can run (scripted bots), or None."""
        return None

    def reset(self, num_tables: int) -> None:
        """Called at the start of matches, with the size of the batch of tables it will see."""

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) int64 legal actions, one per table in `view`."""
        raise NotImplementedError

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """Actions and, where the agent has them, action probabilities (K, 66) float32."""
        return self.act(view), None

    def close(self) -> None:
        """Release what the bot holds (its process); called when its games are over."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"


class ForeignAgent(Agent):
    """A plugin's bot that is not an :class:`Agent` (it has ``reset`` and ``act``, as
    :class:`fourhundred_env.registry.AgentLike` asks), given the protocol's capabilities:
    those it declares itself (``name``, ``stateless``, ``replayable``, ``decides``), else Agent's
    defaults. It never keeps the time limit itself."""

    def __init__(self, bot) -> None:
        super().__init__(getattr(bot, "rules", None), getattr(bot, "seed", 0))
        self.bot = bot
        self.name = str(getattr(bot, "name", type(bot).__name__))
        self.stateless = bool(getattr(bot, "stateless", Agent.stateless))
        self.replayable = bool(getattr(bot, "replayable", Agent.replayable))
        self.decides = str(getattr(bot, "decides", Agent.decides))

    def reset(self, num_tables: int) -> None:
        """The bot's own ``reset``."""
        self.bot.reset(num_tables)

    def act(self, view: SeatView) -> np.ndarray:
        """The bot's own ``act``."""
        return self.bot.act(view)

    def act_with_probs(self, view: SeatView) -> tuple[np.ndarray, np.ndarray | None]:
        """The bot's own ``act_with_probs`` where it has one, else its ``act`` and None."""
        own = getattr(self.bot, "act_with_probs", None)
        return own(view) if own is not None else (self.bot.act(view), None)

    def close(self) -> None:
        """The bot's own ``close``, if it has one."""
        own = getattr(self.bot, "close", None)
        if own is not None:
            own()


def as_agent(bot) -> Agent:
    """`bot` itself if it is an Agent, else it wrapped as a :class:`ForeignAgent`."""
    return bot if isinstance(bot, Agent) else ForeignAgent(bot)
