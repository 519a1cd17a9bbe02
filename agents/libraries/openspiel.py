"""OpenSpiel's bots as our agents, and our agents as OpenSpiel bots (the ``openspiel`` extra).

``openspiel:ismcts`` and ``openspiel:random`` (registered in
:mod:`fourhundred_agents.libraries.agent`) are :class:`OpenSpielAgent` bots: at each decision
the position of the seat's view becomes a state of the one-hand OpenSpiel game that starts
where that hand started (:func:`fourhundred_env.envs.openspiel.game_for_view`, team points
as the return), with the cards the seat cannot see dealt at random
(:func:`~fourhundred_env.envs.openspiel.state_from_view`), and the OpenSpiel bot's
``step`` on that state is the action. The numbers of a decision (the deal, the search's
random state and its worlds) come from the decision's own key (the agent's seed, the game's
stream key and the position), so every decision is a function of the view, the seed and the
stream key: the agents are replayable.

:class:`AgentBot` is the other direction: any agent spec of ours as a ``pyspiel.Bot`` of the
``fourhundred`` game, fed only its seat's view, so that OpenSpiel's ``evaluate_bots`` plays
our bots against theirs.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from fourhundred_agents.draws import view_keys
from fourhundred_agents.protocol import Agent, as_agent
from fourhundred_env.envs import openspiel as fo
from fourhundred_env.errors import FourHundredError, short
from fourhundred_env.loop import GameLoop
from fourhundred_env.registry import make_agent
from fourhundred_env.rules import Rules
from fourhundred_env.streams import OPENSPIEL_SALT
from fourhundred_env.view import SeatView, seat_view

try:
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError as e:
    raise FourHundredError(
        f"OpenSpiel bots need OpenSpiel ({e.name} is missing): pip install 'fourhundred[openspiel]'"
    ) from None

_GAMES_KEPT = 64  # the one-hand games of recent positions (one per hand start)


class _Uniforms:
    """A probability sampler (what ``resample_from_infostate`` calls) from a Generator."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def __call__(self) -> float:
        return float(self.rng.random())


class OpenSpielAgent(Agent):
    """Plays an OpenSpiel bot: ``make_bot(game, seat, key)`` makes the bot of one decision
    (`key` a uint64 that seeds its numbers); see the module docstring."""

    replayable = True

    def __init__(self, name: str, make_bot: Any, rules: Rules | None = None, seed: int = 0):
        super().__init__(rules, seed)
        self.name, self.make_bot = name, make_bot
        self._games: OrderedDict[tuple[int, ...], Any] = OrderedDict()

    def _game(self, view: SeatView, k: int) -> Any:
        r = view.records[k]
        key = (*(int(s) for s in r["scores_before"]), int(r["dealer"]), int(r["target"]))
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = fo.game_for_view(view, k, self.rules)
            if len(self._games) > _GAMES_KEPT:
                self._games.popitem(last=False)
        return game

    def act(self, view: SeatView) -> np.ndarray:
        """(K,) the OpenSpiel bot's action at each table of `view`."""
        keys = view_keys(view, self.key, OPENSPIEL_SALT)
        out = np.empty(view.size, np.int64)
        for k in range(view.size):
            legal = np.flatnonzero(view.legal_mask[k])
            if legal.size == 1:  # a forced move: no search
                out[k] = legal[0]
                continue
            game = self._game(view, k)
            rng = np.random.default_rng(int(keys[k]))
            state = fo.state_from_view(game, view, k, rng)
            bot = self.make_bot(game, int(view.seat[k]), int(keys[k]))
            out[k] = int(bot.step(state))
        return out


class _ISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's Python ISMCTSBot with the restarts that ``evaluate_bots`` calls (it has
    none; each ``step`` searches afresh, so there is nothing to restart)."""

    def restart_at(self, state: Any) -> None:
        """Nothing to forget: each step builds its own tree."""
        self.reset()

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Nothing: the next step reads the state it is given."""


class AgentRolloutEvaluator(mcts.Evaluator):
    """IS-MCTS's evaluator with one of our agents playing every seat to the end of the hand
    (a stateless bot: one instance serves the four seats, each fed only its own view), in
    place of OpenSpiel's random rollouts; the prior is uniform, as theirs. In a one-hand game
    the play-out runs on the engine directly; otherwise through the OpenSpiel state."""

    def __init__(self, agent: Agent, n_rollouts: int, random_state: np.random.RandomState):
        if not agent.stateless:
            raise FourHundredError(
                f"IS-MCTS rollouts by {agent.name}: a bot that remembers across calls cannot "
                "play the four seats of a play-out: expected a stateless bot"
            )
        self.agent, self.n_rollouts, self.random_state = agent, n_rollouts, random_state

    def prior(self, state: Any) -> list[tuple[int, float]]:
        """Uniform over the legal actions (chance: the chance outcomes)."""
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]

    def evaluate(self, state: Any) -> np.ndarray:
        """(4,) the mean return of `n_rollouts` play-outs by the agent."""
        total = np.zeros(4)
        for _ in range(self.n_rollouts):
            total += self._play_out(state)
        return total / self.n_rollouts

    def _play_out(self, state: Any) -> np.ndarray:
        game = state.get_game()
        if game.episode == "hand" and not state.is_terminal() and not state.is_chance_node():
            table = state._state().copy()
            loop = GameLoop(game.engine, table)
            while table.records[0]["phase"] <= _PLAY:
                view = seat_view(game.engine, table, _ONE)
                loop.step(self.agent.act(view).astype(np.int64), end=False)
            return np.asarray(state.returns()) + _hand_rewards(game.reward, table.records[0])
        working = state.clone()
        while not working.is_terminal():
            if working.is_chance_node():
                outcomes, probs = zip(*working.chance_outcomes(), strict=True)
                working.apply_action(self.random_state.choice(outcomes, p=probs))
            else:
                view = seat_view(game.engine, working._state(), _ONE)
                working.apply_action(int(self.agent.act(view)[0]))
        return np.asarray(working.returns())


_ONE = np.zeros(1, np.int64)
_PLAY, _MATCH_OVER = 1, 3  # Phase.PLAY, Phase.MATCH_OVER


def _hand_rewards(reward: str, r: np.void) -> np.ndarray:
    """What the hand just ended at record `r` gives each seat under the game's `reward`."""
    points = r["hand_points"].astype(np.float64)
    if reward == "hand_points":
        return points
    if reward == "team_points":
        return points + np.roll(points, 2)
    winner = int(r["winner"]) if r["phase"] == _MATCH_OVER else -1
    return np.array([0.0 if winner < 0 else (1.0 if s % 2 == winner else -1.0) for s in range(4)])


def ismcts_bot(
    simulations: int,
    uct_c: float,
    rollouts: int,
    final_policy: str,
    rollout_agent: Agent | None = None,
) -> Any:
    """``make_bot`` of IS-MCTS (OpenSpiel's Python ``ISMCTSBot``) with a random-rollout
    evaluator, or with `rollout_agent` playing the rollouts (:class:`AgentRolloutEvaluator`);
    its worlds are drawn by the game's ``resample_from_infostate`` from the decision's key."""
    policy = {
        "max_visit_count": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
    }[final_policy]

    def make(game: Any, seat: int, key: int) -> Any:
        random_state = np.random.RandomState(key % 2**32)
        if rollout_agent is None:
            evaluator = mcts.RandomRolloutEvaluator(rollouts, random_state)
        else:
            evaluator = AgentRolloutEvaluator(rollout_agent, rollouts, random_state)
        bot = _ISMCTSBot(
            game, evaluator, uct_c, simulations, random_state=random_state,
            final_policy_type=policy,
        )  # fmt: skip
        worlds = _Uniforms(np.random.default_rng([key, 1]))
        bot.set_resampler(lambda state, player: state.resample_from_infostate(player, worlds))
        return bot

    return make


def random_bot() -> Any:
    """``make_bot`` of OpenSpiel's uniform random bot (every legal action alike, bids up to
    13 included: such a seat rarely makes its contract)."""

    def make(game: Any, seat: int, key: int) -> Any:
        return pyspiel.make_uniform_random_bot(seat, key % 2**31)

    return make


class AgentBot(pyspiel.Bot):
    """An agent of ours (a spec, or an :class:`Agent`) as the ``pyspiel.Bot`` of seat
    `player` of a ``fourhundred`` game: its ``step`` is the agent's action on that seat's
    view of the state. Other games are refused in one line."""

    def __init__(self, agent: str | Agent, player: int, rules: Rules | None = None, seed: int = 0):
        pyspiel.Bot.__init__(self)
        if isinstance(agent, str):
            agent = as_agent(make_agent(agent, rules, seed))
        if not isinstance(agent, Agent) or not 0 <= player <= 3:
            raise FourHundredError(
                f"AgentBot({short(agent)}, {short(player)}): expected an agent spec or Agent, "
                "and a seat 0 to 3"
            )
        self.agent, self.player = agent, player

    def step(self, state: Any) -> int:
        """The agent's action at `state`, a ``fourhundred`` state where `player` is to act."""
        if not isinstance(state, fo.FourHundredState):
            raise FourHundredError(
                f"AgentBot.step: a state of {short(state.get_game().get_type().short_name)}: "
                f"expected a state of {fo.GAME_NAME!r}"
            )
        if state.current_player() != self.player:
            raise FourHundredError(
                f"AgentBot.step: seat {state.current_player()} is to act, not this bot's seat "
                f"{self.player}"
            )
        game = state.get_game()
        view = seat_view(game.engine, state._state(), np.zeros(1, np.int64), self.player)
        return int(self.agent.act(view)[0])

    def restart_at(self, state: Any) -> None:
        """A new game: the agent starts a match on one table."""
        self.agent.reset(1)

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Nothing: the agent reads what it needs from the next view."""

    def restart(self) -> None:
        """A new game (as `restart_at`)."""
        self.agent.reset(1)
