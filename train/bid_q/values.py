"""Every legal bid of a position valued: played out once on the position's true deal
(`play_out_values`), or by its mean over worlds dealt from the bidding seat's view
(`world_values`, the bid search, computed in worker processes)."""

from __future__ import annotations

import numpy as np

from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent
from fourhundred_agents.scripted.playout import Playout
from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.loop import GameLoop
from fourhundred_env.rules import Rules
from fourhundred_env.view import seat_view
from fourhundred_train.bid_q.config import BidQConfig
from fourhundred_train.bid_q.hooks import Reward, hand_outcome, reward_values
from fourhundred_train.bid_q.positions import NUM_BIDS, QBidder, learner_decides, play_to_learner
from fourhundred_train.workers import in_processes

_BID = int(Phase.BID)


def play_out_values(engine: Engine, positions: State, bidder: QBidder, value: str, model,
                    chunk: int = 8192, per_point: float = 0.0,
                    reward: tuple[str, Reward] | None = None,
                    play=None) -> np.ndarray:  # fmt: skip
    """(n, NUM_BIDS) float32: each legal bid's value at each position (-inf where illegal),
    the rest of the hand played by the partner's `bidder` and heuristic-v1 (`play`: another
    bot in its place; see train/bid_q/__init__.py); `reward`: (its name, a custom reward of
    the play-outs, train/bid_q/hooks.py)."""
    policy = HeuristicV1Agent(engine.rules).compiled_policy()
    playout = Playout(dict.fromkeys(range(4), policy))
    decides = learner_decides()
    n = positions.batch_size
    out = np.full((n, NUM_BIDS), -np.inf, np.float32)
    for lo in range(0, n, chunk):
        part = positions.select(np.arange(lo, min(n, lo + chunk)))
        legal = engine.legal_mask(part)[:, NUM_CARDS:]
        table, bid = np.nonzero(legal)
        branch = part.select(table)
        seat = part.to_play[table].astype(np.int64)
        loop = GameLoop(engine, branch)  # the rest of each branch's hand
        loop.step(NUM_CARDS + bid.astype(np.int64), validate=False, end=False)
        ended = np.empty(branch.batch_size, np.int64)
        while True:
            if play is not None:
                play_to_learner(engine, branch, play)
            elif playout.run(branch, engine._r, decides, ended) < 0:
                raise RuntimeError("heuristic-v1 chose an illegal action")
            rows = np.flatnonzero(branch.phase == _BID)
            if not rows.size:
                break
            actions = np.zeros(branch.batch_size, np.int64)
            actions[rows] = bidder(branch, rows)
            active = np.zeros(branch.batch_size, np.bool_)
            active[rows] = True
            loop.step(actions, active, validate=False, end=False)
        v = own_values(engine, model, value, per_point, seat, part.scores_before[table],
                       part.target[table], part.dealer[table], branch)  # fmt: skip
        if reward is not None:
            v = _custom(reward, engine, part.scores_before[table], part.target[table], branch,
                        seat, v)  # fmt: skip
        out[lo + table, bid] = v
    return out


def own_values(engine: Engine, model, value: str, per_point: float, seat: np.ndarray,
               scores_before: np.ndarray, target: np.ndarray, dealer: np.ndarray,
               ended: State) -> np.ndarray:  # fmt: skip
    """(n,) float64: the trainer's own value of the n hands `ended` for the bidding `seat`
    (n,) of each, whose hands began at `scores_before` (n, 4), `target` and `dealer` (n,):
    with value match_value, 100 x the change of the team's match-win estimate (`model`) plus
    `per_point` per point of the team; else the team's points."""
    from fourhundred_agents.value.match_value import hand_value_change

    k = np.arange(seat.size)
    team = ended.hand_points[k, seat] + ended.hand_points[k, (seat + 2) % 4]
    if value != "match_value":
        return team.astype(np.float64)
    change = hand_value_change(engine, model, scores_before, ended.hand_points, target, dealer,
                               ~ended.thrown_in)  # fmt: skip
    return 100.0 * (change[k, seat] + per_point * team)


def _custom(reward: tuple[str, Reward], engine: Engine, scores_before: np.ndarray,
            target: np.ndarray, ended: State, seat: np.ndarray,
            value: np.ndarray) -> np.ndarray:  # fmt: skip
    """The custom reward's values of the play-outs `ended` (checked: n finite numbers)."""
    outcome = hand_outcome(engine.rules, seat, ended.bids, ended.tricks_won, ended.hand_points,
                           ended.thrown_in, scores_before, target, value)  # fmt: skip
    return reward_values(*reward, outcome)


def world_values(engine: Engine, positions: State, config: BidQConfig, chunk: int = 2048,
                 progress: bool = False) -> np.ndarray:  # fmt: skip
    """(n, NUM_BIDS) float32: each legal bid's value at each position (-inf where illegal),
    its mean over `config.worlds` worlds dealt from the bidding seat's view and weighted by
    heuristic-v1's likelihood of the bids seen, the rest of the hand played by heuristic-v1
    at every seat, in the units of play_out_values (percentage points of match-win chance,
    or the team's points; the match-win estimate after the hand, not its change, which is
    the same once made relative to a bid). Chunks of `chunk` positions are shared out to
    `config.workers` processes; a position's values do not depend on its chunk."""
    from tqdm import tqdm

    n = positions.batch_size
    pieces = [np.arange(lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]
    out = np.empty((n, NUM_BIDS), np.float32)
    chunks = (positions.select(rows) for rows in pieces)
    values = in_processes(chunks, len(pieces), config.workers, _start_worker,
                          (engine.rules, config), _value_in_worker)  # fmt: skip
    # closed by an error too (your reward's NaN): the bar ends before the error's line
    with tqdm(total=n, unit="position", desc="bid values", disable=not progress,
              dynamic_ncols=True) as bar:  # fmt: skip
        for rows, v in zip(pieces, values, strict=True):
            out[rows] = v
            bar.update(rows.size)
    return out


class _WorldValuer:
    """The bid search of world_values, for one process; with a custom reward, every
    play-out of every world is valued by it (the outcome's ``value`` as on the true deal)."""

    def __init__(self, rules: Rules, config: BidQConfig) -> None:
        from fourhundred_agents.search.agent import SearchAgent, SearchSettings

        self.config = config
        self.match = config.value == "match_value"
        settings = SearchSettings(models="heuristic-v1", own="heuristic-v1",
                                  bid_worlds=config.worlds,
                                  value="match" if self.match else "points",
                                  candidates=max(config.candidates, config.worlds),
                                  matchwin=config.matchwin, per_point=config.per_point)  # fmt: skip
        self.engine = Engine(rules)
        self.agent = SearchAgent(rules, seed=config.seed, settings=settings)
        self.reward: tuple[str, Reward] | None = None
        if config.reward:
            from fourhundred_train.bid_q.hooks import load_reward

            self.reward = (config.reward, load_reward(config.reward))
            self.agent.outcome_values = self._custom

    def _custom(self, start: State, ended: State, seat: np.ndarray) -> np.ndarray:
        c = self.config
        v = own_values(self.engine, self.agent.matchwin, c.value, c.per_point, seat,
                       start.scores_before, start.target, start.dealer, ended)  # fmt: skip
        return _custom(self.reward, self.engine, start.scores_before, start.target, ended, seat,
                       v)  # fmt: skip

    def __call__(self, positions: State) -> np.ndarray:
        v = self.agent.action_values(seat_view(self.engine, positions))[:, NUM_CARDS:]
        scale = 100.0 if self.match and self.reward is None else 1.0
        return (scale * v).astype(np.float32)


_WORKER: _WorldValuer | None = None


def _start_worker(rules: Rules, config: BidQConfig) -> None:
    global _WORKER
    _WORKER = _WorldValuer(rules, config)


def _value_in_worker(positions: State) -> np.ndarray:
    assert _WORKER is not None
    return _WORKER(positions)
