"""Rollout values: one step of policy improvement over a base agent, for training only.

At a decision (a bid or a card), every legal action is tried on a copy of the *true* table,
and the rest of the hand (the other bids, then the play) is played out by the base agent at
every seat, each seat acting from its own view (Tesauro and Galperin's rollout improvement).
The value of an action is the acting seat's team's points in the hand (0 when thrown in). Only the position is sampled from the true deal: the play-out
never uses hidden cards, so averaged over the deals consistent with what the seat has seen,
the value is the base agent's Q-value in the game as played, and its maximiser is an
improvement over the base agent (no "strategy fusion" as in PIMC, whose play-outs see all).

The trainer computes values from the engine's state, like the oracle critic's input, and the
policy learns from them through its own observation only: it is pushed along
sum_a pi(a|obs) * (Q(a) - mean Q), whose expectation over the deals is the improvement step.
Taking the argmax action as a label instead (a vote over deals) was measured worse: it taught
cards that win in the most deals rather than the most points (BENCHMARKS.md).

With a `team` agent (the learner's own policy of the moment), the acting seat's partnership
is played out by it and only the opponents by the base agent: the values are then the
learner's own Q-values against the base agent, and the improvement step iterates (policy
iteration) instead of stopping one step above the base agent.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fourhundred_env.engine import Engine, Phase, State
from fourhundred_env.view import seat_view

NUM_ACTIONS = 66
_DECIDING = (int(Phase.BID), int(Phase.PLAY))


def rollout_values(
    engine: Engine, state: State, base, team=None, value: Callable | None = None
) -> np.ndarray:
    """(K, 66) float32: the acting seat's team's points in the hand after each legal action
    at the K tables of `state` (all at a bid or card decision), the base agent playing out
    every seat, or only the opponents' seats when a `team` agent plays the acting seat's
    partnership; -inf for illegal actions. `state` is left unchanged.

    `value(state, table, branch, seat)` -> (n,) replaces the team's points by another value
    of each play-out: `branch` holds the n finished hands, `table` (n,) the row of `state`
    each started from and `seat` (n,) the acting seat (the match-value rollouts of the
    bidding trainer)."""
    for agent in (base, team):
        if agent is not None and not getattr(agent, "stateless", True):
            raise ValueError(
                f"rollout_values: {agent!r} remembers across calls (stateless=False): it cannot "
                "play every seat of a play-out without carrying one seat's view to another"
            )
    waiting = ~np.isin(state.phase, _DECIDING)
    if waiting.any():
        bad = np.flatnonzero(waiting)[:5].tolist()
        raise ValueError(f"tables {bad} have no decision pending: expected a bid or a card to play")
    legal = engine.legal_mask(state)
    table, action = np.nonzero(legal)
    branch = state.select(table)
    seat = state.to_play[table].astype(np.intp)
    engine.step(branch, action, validate=False)
    get = getattr(base, "compiled_policy", None)
    policy = get() if team is None and get is not None else None
    if policy is not None:  # a scripted base agent: the whole play-out in one compiled call
        from fourhundred_agents.scripted.playout import Playout

        ended = np.empty(branch.batch_size, np.int64)
        never = np.zeros((4, 5), np.bool_)  # no seat is left to a caller
        if Playout(dict.fromkeys(range(4), policy)).run(branch, engine._r, never, ended) < 0:
            raise ValueError(f"rollout_values: {base!r} chose an illegal action")
    while True:
        live = np.isin(branch.phase, _DECIDING)
        if not live.any():
            break
        actions = np.zeros(branch.batch_size, np.int64)
        ours = (branch.to_play.astype(np.intp) - seat) % 2 == 0
        pairs = ((base, live),) if team is None else ((base, live & ~ours), (team, live & ours))
        for agent, sel in pairs:
            rows = np.flatnonzero(sel)
            if rows.size:
                actions[rows] = agent.act(seat_view(engine, branch, index=rows))
        engine.step(branch, actions, validate=False, active=live)
    n = np.arange(table.size)
    if value is not None:
        points = value(state, table, branch, seat)
    else:
        points = branch.hand_points[n, seat] + branch.hand_points[n, (seat + 2) % 4]
    values = np.full(legal.shape, -np.inf, np.float32)
    values[table, action] = points
    return values


def rollout_targets(
    engine: Engine, state: State, base, team=None, value: Callable | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(K, 66) values (see rollout_values) and (K,) int64 the base agent's own action."""
    values = rollout_values(engine, state, base, team, value)
    own = np.asarray(base.act(seat_view(engine, state)), np.int64)
    return values, own
