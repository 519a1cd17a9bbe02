"""The state of B tables of 400: one dataclass of arrays over one record per table.

Batch axis first, seat axis second (absolute seats 0..3); card sets are uint64 bitmasks. The
engine (:mod:`fourhundred_env.engine`) changes a state in place; views
(:mod:`fourhundred_env.view`) copy the public part of it for a seat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fourhundred_env.records import RecordBatch, array_field


@dataclass(eq=False, repr=False)
class State(RecordBatch):
    """B tables. Shapes: (B,) per table, (B, 4) per seat (absolute seats 0..3).

    Every array field is a view into ``records``, one structured record per table (see
    :mod:`fourhundred_env.records`): the compiled kernels take that one array. Assigning to a
    field writes into it.

    ``stream`` is not a rule of the game: whoever runs the games (an environment, a
    tournament) sets it per game, and stochastic agents draw from it and the position they
    see, so their choices do not depend on the batch, the order of play or a resume. The
    engine never changes it (0 from `init`); it says nothing about the cards.
    """

    phase: np.ndarray = array_field("i1")  # (B,) int8, Phase
    dealer: np.ndarray = array_field("i1")  # (B,) int8
    to_play: np.ndarray = array_field("i1")  # (B,) int8: seat whose decision is pending
    scores: np.ndarray = array_field("i4", 4)  # (B, 4) int32: after the last finished hand
    scores_before: np.ndarray = array_field("i4", 4)  # (B, 4) int32: when this hand was dealt
    target: np.ndarray = array_field("i4")  # (B,) int32: 41, or raised by simultaneous finishes
    winner: np.ndarray = array_field("i1")  # (B,) int8: -1 none, else winning team 0 or 1
    dealt_set: np.ndarray = array_field("u8", 4)  # (B, 4) uint64: the hands as dealt
    hand_set: np.ndarray = array_field("u8", 4)  # (B, 4) uint64: cards still held
    bids: np.ndarray = array_field("i1", 4)  # (B, 4) int8: 0 = not yet bid (or asked a redeal)
    num_bids: np.ndarray = array_field("i1")  # (B,) int8: bids made in the current hand
    min_bid: np.ndarray = array_field("i1", 4)  # (B, 4) int8: minimum bid of each seat
    required_total: np.ndarray = array_field("i2")  # (B,) int16: required total of this hand
    tricks_won: np.ndarray = array_field("i1", 4)  # (B, 4) int8
    trick_cards: np.ndarray = array_field("i1", 4)  # (B, 4) int8: card in the trick, -1 none
    trick_leader: np.ndarray = array_field("i1")  # (B,) int8: seat that led the current trick
    trick_size: np.ndarray = array_field("i1")  # (B,) int8: cards in the current trick, 0..3
    led_suit: np.ndarray = array_field("i1")  # (B,) int8: suit led (valid if trick_size > 0)
    num_tricks: np.ndarray = array_field("i1")  # (B,) int8: completed tricks this hand
    shown_void: np.ndarray = array_field("u1", 4)  # (B, 4) uint8: bit s: failed to follow s
    forfeit: np.ndarray = array_field("?", 4)  # (B, 4) bool: contract scored as missed
    hand_points: np.ndarray = array_field("i4", 4)  # (B, 4) int32: last hand's score change
    thrown_in: np.ndarray = array_field("?")  # (B,) bool: the last finished hand was thrown in
    redeal_seat: np.ndarray = array_field("i1")  # (B,) int8: seat that asked a redeal, -1 none
    claim_seat: np.ndarray = array_field("i1")  # (B,) int8: seat that claimed the rest, -1 none
    match_id: np.ndarray = array_field("i8")  # (B,) int64: deal stream of this table's match
    hand_index: np.ndarray = array_field("i4")  # (B,) int32: hands dealt so far in this match
    stream: np.ndarray = array_field("u8")  # (B,) uint64: the game's key of agents' random draws
    seed: int = 0

    @property
    def batch_size(self) -> int:
        return self.records.shape[0]

    def __repr__(self) -> str:
        return f"State(batch_size={self.batch_size}, seed={self.seed})"


State._layout()
