"""How one agent's turn at many tables is cut into calls, so that a bot is judged by its move and
not by its batch.

A call's time is charged to every table in it (:mod:`fourhundred_tournament.conduct`). So that the charge
is the same on a slow machine as on a fast one, an agent slow enough to need it is asked in
parts: its first call in each phase (bidding, play) asks one table, then parts as large as its
time per move in that phase says fit in a quarter of ``move_time_limit_s``, and never more than
twice the largest part before. A fast agent reaches a call for all its tables within a few
calls. The bundled agents' moves never depend on which tables share a call
(tests/test_tournament_resume.py), so for them the parts change times only, never results; a
bot whose moves do depend on it is not reproducible across batch sizes anyway.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PART_SHARE", "Pacing"]

PART_SHARE = 0.25
"""A call is cut into parts that the agent's time per move says take at most this share of
the soft time limit."""
_MIN_MOVE_S = 1e-7  # the least time per move believed (a clock may read 0 for a quick call)


class Pacing:
    """The parts of one agent's calls (one agent at one seat of one side), sized by its time
    per move as seen so far; each part is sized to take at most `budget` seconds."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self._per_move: dict[bool, float] = {}  # seconds per move by phase (bidding), smoothed
        self._largest: dict[bool, int] = {}  # most tables in one part so far, by phase
        self._apart = False  # asked phase by phase
        self._whole = 0  # tables a call may have to go whole

    def next_part(self, bidding: np.ndarray, left: np.ndarray) -> tuple[np.ndarray, bool]:
        """(positions, quick) of the next part of a call (`left`: the positions not asked yet;
        `bidding`: whether each position's table bids): all of them when each phase's tables
        fit in a part and their time together fits in the budget (unless the agent is asked
        phase by phase); otherwise as many tables of one phase, bidding first, as fit.
        `quick`: all of them, and so few that they fit whatever their phases (the usual case
        of a fast agent, decided without looking at the phases)."""
        if left.size <= self._whole:
            return left, True
        bids = bidding[left]
        n_bid = int(np.count_nonzero(bids))
        n_play = left.size - n_bid
        room_bid = self._room(True) if n_bid else 0
        room_play = self._room(False) if n_play else 0
        if (
            n_bid <= room_bid
            and n_play <= room_play
            and (n_bid == 0 or n_play == 0 or not self._apart)
            and n_bid * self._per_move.get(True, 0.0) + n_play * self._per_move.get(False, 0.0)
            <= self.budget
        ):
            return left, False
        if n_bid:
            return left[bids][:room_bid], False
        return left[~bids][:room_play], False

    def _room(self, bid: bool) -> int:
        """How many tables of a phase the agent is asked at in one part: as many as its time
        per move in that phase says take at most the budget, and at most twice as many as it
        has been asked at in one part before (one, the first time), so that one quick move
        does not open the door to a whole batch of slow ones."""
        e = self._per_move.get(bid)
        if e is None:
            return 1
        return max(1, min(2 * self._largest[bid], int(self.budget / e)))

    def learn(self, bidding: np.ndarray, seconds: float) -> None:
        """Update the agent's time per move from a part of a call (`bidding`: whether each of
        its tables bids) that took `seconds`: a part of one phase moves that phase's time
        halfway to the part's; a part of both phases that passed the budget has the agent
        asked phase by phase from then on (its time cannot be told apart by phase)."""
        n = bidding.size
        n_bid = int(np.count_nonzero(bidding))
        if 0 < n_bid < n:
            if seconds > self.budget:
                self._apart = True
                self._whole = 0
            return
        key = n_bid > 0
        x = max(seconds / n, _MIN_MOVE_S)
        e = self._per_move.get(key)
        self._per_move[key] = x if e is None else 0.5 * (e + x)
        self._largest[key] = max(self._largest.get(key, 0), n)
        if len(self._per_move) == 2 and not self._apart:  # a call this small goes whole
            self._whole = min(self._room(True), self._room(False))
