"""The positions the fitted-Q bidder learns from: the learner's bidder of the moment
(`QBidder`) and its bids in real matches against heuristic-v1 (`record_positions`)."""

from __future__ import annotations

import itertools

import numpy as np

from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent
from fourhundred_agents.scripted.playout import Playout
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.loop import GameLoop
from fourhundred_env.view import seat_view

NUM_BIDS = 66 - NUM_CARDS  # bids 0..13 and the redeal: actions 52..65
_BID = int(Phase.BID)
_OVER = (int(Phase.HAND_OVER), int(Phase.MATCH_OVER))
_DECIDING = (int(Phase.BID), int(Phase.PLAY))


class QBidder:
    """The learner's bidder of the moment: heuristic-v1 (net None) or the argmax of a
    Q-network's bid values, from the seat's own view."""

    def __init__(self, engine: Engine, net=None, blank: tuple = ()) -> None:
        self.engine, self.net, self.blank = engine, net, blank
        self.heuristic = HeuristicV1Agent(engine.rules)

    def __call__(self, state: State, rows: np.ndarray) -> np.ndarray:
        """(n,) int64 actions of the seat to bid at the tables `rows` (n,) of `state`:
        heuristic-v1's, or the network's legal bid of highest value."""
        view = seat_view(self.engine, state, index=rows)
        if self.net is None:
            return np.asarray(self.heuristic.act(view), np.int64)
        import torch

        from fourhundred_agents.neural.agent import net_inputs

        inputs = net_inputs(self.net, view, self.engine.rules, self.blank)
        with torch.no_grad():
            q = self.net(*map(torch.from_numpy, inputs))[0][:, NUM_CARDS:].numpy()
        q = np.where(view.legal_mask[:, NUM_CARDS:], q, -np.inf)
        return NUM_CARDS + q.argmax(1).astype(np.int64)


def learner_decides() -> np.ndarray:
    """The Playout's `decides`: stop at the bids of seats 0 and 2 (the learner's)."""
    decides = np.zeros((4, 5), np.bool_)
    decides[_BID, 1] = decides[_BID, 3] = True
    return decides


def play_to_learner(engine: Engine, state: State, agent) -> None:
    """Play `agent` (any bot) at every decision of every table of `state` until each waits
    for a bid of seat 0 or 2 or its hand is over: what the compiled Playout does with
    heuristic-v1, for another card player (slower: one `act` a decision round)."""
    loop = GameLoop(engine, state)
    while True:
        phase = state.phase
        waiting = (phase == _BID) & (state.to_play % 2 == 0)
        rows = np.flatnonzero(np.isin(phase, _DECIDING) & ~waiting)
        if not rows.size:
            return
        actions = np.zeros(state.batch_size, np.int64)
        actions[rows] = np.asarray(agent.act(seat_view(engine, state, index=rows)), np.int64)
        active = np.zeros(state.batch_size, np.bool_)
        active[rows] = True
        loop.step(actions, active, end=False)  # an illegal action: one line


def record_positions(engine: Engine, bidder: QBidder, n: int, seed: int, tables: int,
                     max_hands: int, first_match: int, play=None) -> State:  # fmt: skip
    """The first `n` bidding positions of seats 0 and 2 in matches (ids from first_match on)
    of the learner's `bidder` (seats 0, 2) against heuristic-v1 (bids of seats 1, 3, every
    card; `play`: another bot in its place), as one State of n tables, each at that seat's
    bid."""
    policy = HeuristicV1Agent(engine.rules).compiled_policy()
    playout = Playout(dict.fromkeys(range(4), policy))
    decides = learner_decides()
    ids = first_match + np.arange(tables, dtype=np.int64)
    state = engine.init(tables, seed=seed, match_id=ids)
    loop = GameLoop(engine, state, max_hands=max_hands, matches=itertools.count(int(ids[-1]) + 1))
    loop.deal()
    ended = np.empty(tables, np.int64)
    parts: list[State] = []
    got = 0
    while got < n:
        if play is not None:
            play_to_learner(engine, state, play)
        elif playout.run(state, engine._r, decides, ended) < 0:
            raise RuntimeError("heuristic-v1 chose an illegal action")
        rows = np.flatnonzero((state.phase == _BID) & (state.to_play % 2 == 0))
        if rows.size:
            parts.append(state.select(rows))
            got += rows.size
            actions = np.zeros(tables, np.int64)
            actions[rows] = bidder(state, rows)
            active = np.zeros(tables, np.bool_)
            active[rows] = True
            loop.step(actions, active, validate=False, end=False)
        # the hands ended by the play-out and by the bids, together
        loop.end_hands(np.flatnonzero(np.isin(state.phase, _OVER)))
    return State.concat(parts).select(np.arange(n))
