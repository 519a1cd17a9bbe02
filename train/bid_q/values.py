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
    from fourhundred_agents.value.match_value import hand_value_change

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
        k = np.arange(table.size)
        if value == "match_value":
            change = hand_value_change(
                engine, model, part.scores_before[table], branch.hand_points,
                part.target[table], part.dealer[table], ~branch.thrown_in,
            )  # fmt: skip
            team = branch.hand_points[k, seat] + branch.hand_points[k, (seat + 2) % 4]
            v = 100.0 * (change[k, seat] + per_point * team)
        else:
            v = branch.hand_points[k, seat] + branch.hand_points[k, (seat + 2) % 4]
        if reward is not None:
            v = _custom(reward, engine, part, table, branch, seat, np.asarray(v, np.float64))
        out[lo + table, bid] = v
    return out


def _custom(reward: tuple[str, Reward], engine: Engine, part: State, table: np.ndarray,
            branch: State, seat: np.ndarray, value: np.ndarray) -> np.ndarray:  # fmt: skip
    """The custom reward's values of the play-outs `branch` (checked: n finite numbers)."""
    outcome = hand_outcome(engine.rules, seat, branch.bids, branch.tricks_won, branch.hand_points,
                           branch.thrown_in, part.scores_before[table], part.target[table],
                           value)  # fmt: skip
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
    bar = tqdm(total=n, unit="position", desc="bid values", disable=not progress,
               dynamic_ncols=True)  # fmt: skip
    chunks = (positions.select(rows) for rows in pieces)
    values = in_processes(chunks, len(pieces), config.workers, _start_worker,
                          (engine.rules, config), _value_in_worker)  # fmt: skip
    for rows, v in zip(pieces, values, strict=True):
        out[rows] = v
        bar.update(rows.size)
    bar.close()
    return out


class _WorldValuer:
    """The bid search of world_values, for one process."""

    def __init__(self, rules: Rules, config: BidQConfig) -> None:
        from fourhundred_agents.search.agent import SearchAgent, SearchSettings

        self.match = config.value == "match_value"
        settings = SearchSettings(models="heuristic-v1", own="heuristic-v1",
                                  bid_worlds=config.worlds,
                                  value="match" if self.match else "points",
                                  candidates=max(config.candidates, config.worlds),
                                  matchwin=config.matchwin, per_point=config.per_point)  # fmt: skip
        self.engine = Engine(rules)
        self.agent = SearchAgent(rules, seed=config.seed, settings=settings)

    def __call__(self, positions: State) -> np.ndarray:
        v = self.agent.action_values(seat_view(self.engine, positions))[:, NUM_CARDS:]
        return (100.0 * v if self.match else v).astype(np.float32)


_WORKER: _WorldValuer | None = None


def _start_worker(rules: Rules, config: BidQConfig) -> None:
    global _WORKER
    _WORKER = _WorldValuer(rules, config)


def _value_in_worker(positions: State) -> np.ndarray:
    assert _WORKER is not None
    return _WORKER(positions)
