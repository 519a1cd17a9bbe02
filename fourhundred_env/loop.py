"""The game loop: a batch of tables playing 400 hand after hand and match after match.

Every place that plays games drives one :class:`GameLoop` (the tournament, the trainers'
self-play, the Gymnasium and PettingZoo envs, the OpenSpiel and RLCard games, the terminal
and web tables, replays). The loop owns the flow of a game outside a hand: it starts
matches, deals, steps the engine, and where a hand ends it calls the caller's hooks, then
deals the next hand, starts the next match of its schedule, or leaves the table idle. Who
decides is the caller's: its agents (each fed its seat's view), a learner, a person, or
compiled play that steps the tables itself and reports the hands it ended
(:meth:`GameLoop.end_hands`). The search's compiled play-outs step their own copies of
a position and are no game of the loop's.

A loop::

    loop = GameLoop(engine, state, max_hands=200, matches=itertools.count(tables))
    loop.deal()
    while (pending := loop.pending()).any():
        actions = np.full(tables, -1, np.int64)
        actions[pending] = agent.act(seat_view(engine, state, pending))
        loop.step(actions, pending)

One step: the engine applies the actions; the tables whose hand ended are handed to
``on_hand_end`` (the state still shows the hand); those whose match ended too (match over,
or `max_hands` hands played) to ``on_match_end``; those tables take the next match ids of
`matches` (``on_match_start`` sees them fresh, before the deal) or go idle; every table that
goes on is dealt its next hand, unless ``deal_next`` is False (a person deals, or an
episode ends with its hand). The hooks take (K,) table indices in increasing order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from fourhundred_env.engine import Engine, State
from fourhundred_env.phases import Phase

__all__ = ["GameLoop", "Hook"]

_PLAY = int(Phase.PLAY)
_HAND_OVER, _MATCH_OVER = int(Phase.HAND_OVER), int(Phase.MATCH_OVER)

_NONE = np.zeros(0, np.int64)

Hook = Callable[[np.ndarray], None]
"""Called with (K,) int64 table indices (increasing)."""


class GameLoop:
    """The tables of `state`, played by `engine` (see the module docstring).

    `max_hands`: a match ends after that many hands (None: only when a team wins).
    `matches`: the match ids the tables take, in turn, when their match ends (an iterator,
    finite or not); None: a table whose match ended goes idle.
    `deal_next`: deal the next hand where a hand ended and the match goes on (False: the
    table waits between hands for :meth:`deal`).
    """

    def __init__(
        self, engine: Engine, state: State, *, max_hands: int | None = None,
        matches: Iterator[Any] | None = None, on_hand_end: Hook | None = None,
        on_match_end: Hook | None = None,
        on_match_start: Callable[[np.ndarray, list[Any]], None] | None = None,
        deal_next: bool = True,
    ) -> None:  # fmt: skip
        self.engine = engine
        self.state = state
        self.max_hands = max_hands
        self.matches = matches
        self.on_hand_end = on_hand_end
        self.on_match_end = on_match_end
        self.on_match_start = on_match_start
        self.deal_next = deal_next
        self.active = np.ones(state.batch_size, np.bool_)
        """(B,) bool: the tables that still play (a table goes idle when its match ended and
        no match was left for it)."""

    # -- starting -------------------------------------------------------------------------
    def start(self, index: np.ndarray, match_id: np.ndarray, items: list[Any] | None = None,
              *, deal: bool = True) -> None:  # fmt: skip
        """Start fresh matches with ids `match_id` at tables `index` (increasing), give them to
        ``on_match_start`` (with `items`: what the schedule handed out, default the ids) and
        deal their first hands (unless `deal` is False)."""
        idx = np.asarray(index, np.int64)
        if not idx.size:
            return
        self.engine.new_match(self.state, idx, np.asarray(match_id, np.int64))
        self.active[idx] = True
        if self.on_match_start is not None:
            self.on_match_start(idx, list(match_id) if items is None else items)
        if deal:
            self.engine.deal(self.state, idx)

    def deal(self, index: np.ndarray | None = None, hands: np.ndarray | None = None) -> None:
        """Deal the next hand at tables `index` (default: every table): seeded, or the
        explicit `hands` (n, 4) uint64 by seat."""
        self.engine.deal(self.state, index, hands)

    # -- playing --------------------------------------------------------------------------
    def pending(self) -> np.ndarray:
        """(B,) bool: the active tables with a decision to make."""
        return self.active & (self.state.phase <= _PLAY)

    def step(self, actions: np.ndarray, active: np.ndarray | None = None, *,
             validate: bool = True, end: bool = True) -> np.ndarray:  # fmt: skip
        """Apply `actions` (B,) int64 at the `active` tables (default: every table; the
        others ignore theirs), then end the hands they ended (:meth:`end_hands`; not with
        `end` False, where the caller ends them later with others). Returns those tables
        (K,) int64. An illegal action raises IllegalActionError and changes nothing (with
        `validate`; without it the caller vouches for the actions)."""
        state = self.state
        self.engine.step(state, actions, active=active, validate=validate)
        if not end:
            return _NONE
        over = state.phase >= _HAND_OVER
        ended = np.flatnonzero(over if active is None else over & active)
        self.end_hands(ended)
        return ended

    def end_hands(self, ended: np.ndarray) -> None:
        """The hands at tables `ended` (increasing) have just ended: the hooks, then the next
        hand, the next match or idle (see the module docstring)."""
        if not ended.size:
            return
        state = self.state
        if self.on_hand_end is not None:
            self.on_hand_end(ended)
        over = state.phase[ended] == _MATCH_OVER
        if self.max_hands is not None:
            over |= state.hand_index[ended] >= self.max_hands
        going, done = ended[~over], ended[over]
        if done.size:
            if self.on_match_end is not None:
                self.on_match_end(done)
            done = self._next_matches(done)
            if self.deal_next and done.size:
                going = np.sort(np.concatenate([going, done]))
        if self.deal_next and going.size:
            self.engine.deal(state, going)

    def _next_matches(self, done: np.ndarray) -> np.ndarray:
        """Start the schedule's next matches at tables `done` (as many as it has left, in
        order) without dealing; the rest go idle. Returns the tables that got a match."""
        items = [] if self.matches is None else _take(self.matches, done.size)
        fresh = done[: len(items)]
        self.active[done[len(items) :]] = False
        if fresh.size:
            ids = [item[0] if isinstance(item, tuple) else item for item in items]
            self.start(fresh, np.array(ids, np.int64), items, deal=False)
        return fresh


def _take(matches: Iterator[Any], n: int) -> list[Any]:
    """Up to `n` items of `matches`, in order."""
    out = []
    for item in matches:
        out.append(item)
        if len(out) == n:
            break
    return out
