"""A person's hint on the Play page (:mod:`fourhundred_agents.analysis`): the values of the
legal actions of the seat to play.

A **hint** is computed from that seat's :class:`~fourhundred_env.view.SeatView` alone, never
from the other seats' cards, with light settings (:data:`HINT_AGENT`) so that a person waits
a second or two. It answers only the token of the seat to play; its route is
:mod:`fourhundred_web.routes.analysis`'s.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np

from fourhundred_agents.analysis import ActionValuer, make_valuer
from fourhundred_env.cards import action_text
from fourhundred_env.phases import phase_name
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view
from fourhundred_web.play import OutOfTurnError, PlaySession

__all__ = ["HINT_AGENT", "HINT_AGENT_ANY_RULES", "Hints"]

HINT_AGENT = "search:worlds=16,bid_worlds=8,candidates=64"
"""The valuer of a hint: fewer worlds than a review's, so that a person waits a second or two."""
HINT_AGENT_ANY_RULES = (
    "search:worlds=16,bid_worlds=8,candidates=64,models=heuristic-v1,own=heuristic-v1,"
    "matchwin=matchwin_h1.npz"
)
"""The valuer of a hint under rules that no bundled network was trained under (pagat): the
same search with ``heuristic-v1`` at every seat of its worlds, valued by the match-win
estimate of those rules."""
SEED = 0
"""The seed of a hint's worlds: the same position gets the same values."""


class Hints:
    """A person's hint (see the module docstring): the values of the legal actions at their
    view by `agent`, worlds from `seed`; one valuer, shared by the tables one at a time."""

    def __init__(self, agent: str = HINT_AGENT, seed: int = SEED) -> None:
        self.agent = agent
        self.seed = seed
        self._lock = threading.Lock()
        self._valuers: dict[Rules, tuple[str, ActionValuer]] = {}

    def _valuer(self, rules: Rules) -> tuple[str, ActionValuer]:
        """(its spec, the valuer) of the hints under `rules`: `agent`, or, where the default's
        network was trained under other rules, HINT_AGENT_ANY_RULES."""
        from fourhundred_agents.neural.checkpoint import CheckpointError

        try:
            return self.agent, make_valuer(self.agent, rules, self.seed)
        except CheckpointError:
            if self.agent != HINT_AGENT:  # a valuer the owner chose: its refusal stands
                raise
            return HINT_AGENT_ANY_RULES, make_valuer(HINT_AGENT_ANY_RULES, rules, self.seed)

    def hint(self, session: PlaySession, seat: int, moves: int | None = None) -> dict[str, Any]:
        """The hint for the person at `seat` of `session` (called on the table's thread with
        its lock held). OutOfTurnError when `seat` is not to play or the page is stale
        (`moves`: the moves it has seen)."""
        table = session.table
        if seat not in session.people:
            raise OutOfTurnError(f"seat {seat} is a bot's: a hint is for a person's own turn")
        if moves is not None and moves != session.moves:
            raise OutOfTurnError(
                f"the page is out of date (it has seen {moves} moves, the table has made "
                f"{session.moves}): reload the table"
            )
        if table.phase not in ("bid", "play"):
            raise OutOfTurnError(
                f"no decision is pending ({table.phase.replace('_', ' ')}): a hint is for your turn"
            )
        if table.to_play != seat:
            raise OutOfTurnError(
                f"it is S{table.to_play}'s turn, not yours: a hint answers only the seat to play"
            )
        view = seat_view(table.engine, table.state, np.array([0]), np.int8(seat))
        return self.values(view, table.rules)

    def values(self, view: SeatView, rules: Rules) -> dict[str, Any]:
        """The hint at `view` (one table, the seat to play's own view): ``actions`` (each legal
        action with its value and error, in action-id order; no values where only one is
        legal), ``best``, ``worlds``, ``unit``, ``agent`` and ``seconds`` taken."""
        legal = [int(a) for a in np.flatnonzero(view.legal_mask[0])]
        phase = phase_name(int(view.phase[0]))
        seat = int(view.seat[0])
        if len(legal) == 1:
            only = action_text(legal[0])
            return {"seat": seat, "phase": phase, "best": only, "worlds": 0, "seconds": 0.0,
                    "unit": "match-win", "agent": self.agent,
                    "actions": [{"action": only, "value": None, "stderr": None}]}  # fmt: skip
        start = time.perf_counter()
        with self._lock:
            if rules not in self._valuers:
                self._valuers = {rules: self._valuer(rules)}
            agent, valuer = self._valuers[rules]
            values = valuer.value_actions(view)
        seconds = time.perf_counter() - start
        v, se = values.value[0], values.stderr[0]
        best = max(legal, key=lambda a: -math.inf if math.isnan(v[a]) else v[a])
        return {
            "seat": seat, "phase": phase, "best": action_text(best),
            "worlds": int(values.worlds[0]), "seconds": round(seconds, 3),
            "unit": values.unit, "agent": agent,
            "actions": [{"action": action_text(a), "value": _num(v[a]), "stderr": _num(se[a])}
                        for a in legal],
        }  # fmt: skip


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)
