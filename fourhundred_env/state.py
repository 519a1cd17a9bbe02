"""The state of B tables of 400: one dataclass of arrays over one record per table.

Batch axis first, seat axis second (absolute seats 0..3); card sets are uint64 bitmasks. The
engine (:mod:`fourhundred_env.engine`) changes a state in place; views
(:mod:`fourhundred_env.view`) copy the public part of it for a seat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fourhundred_env.batches import RecordBatch, array_field
from fourhundred_env.cards import FULL_DECK
from fourhundred_env.errors import StateError
from fourhundred_env.phases import Phase

_PENDING = int(Phase.PLAY)  # phases up to this one have a decision pending
_OFF_DECK = ~FULL_DECK

# The values every field of an engine-made state holds (inclusive bounds): what `validate`
# checks. Fields with no entry (scores, required totals, match ids, streams, hand points)
# may hold any value of their dtype; the kernels never index with them.
FIELD_RANGES: dict[str, tuple[int, int, str]] = {
    "phase": (0, 3, "a phase 0 to 3"),
    "dealer": (0, 3, "a seat 0 to 3"),
    "to_play": (-1, 3, "a seat 0 to 3, or -1 between hands"),
    "winner": (-1, 1, "a team 0 or 1, or -1"),
    "bids": (0, 13, "a bid 0 to 13"),
    "num_bids": (0, 4, "0 to 4 bids"),
    "min_bid": (0, 13, "a bid 0 to 13"),
    "tricks_won": (0, 13, "0 to 13 tricks"),
    "trick_cards": (-1, 51, "a card id 0 to 51, or -1"),
    "trick_leader": (-1, 3, "a seat 0 to 3, or -1"),
    "trick_size": (0, 3, "0 to 3 cards"),
    "led_suit": (0, 3, "a suit 0 to 3"),
    "num_tricks": (0, 13, "0 to 13 tricks"),
    "shown_void": (0, 15, "suit bits 0 to 15"),
    "forfeit": (0, 1, "0 or 1 (a bool)"),
    "target": (1, 2**31 - 1, "a target of at least 1 (Rules.target, or raised from it)"),
    "thrown_in": (0, 1, "0 or 1 (a bool)"),
    "redeal_seat": (-1, 3, "a seat 0 to 3, or -1"),
    "claim_seat": (-1, 3, "a seat 0 to 3, or -1"),
    "hand_index": (0, 2**31 - 1, "a count from 0"),
}
PENDING_RANGES: dict[str, tuple[int, int, str]] = {
    "to_play": (0, 3, "a seat 0 to 3 (a decision is pending)"),
    "trick_leader": (0, 3, "a seat 0 to 3 (a decision is pending)"),
}
"""Narrower bounds where a decision is pending (phase bid or play)."""
CARD_SETS = ("dealt_set", "hand_set")
"""The uint64 card-set fields: no bit above card 51."""


@dataclass(eq=False, repr=False)
class State(RecordBatch):
    """B tables. Shapes: (B,) per table, (B, 4) per seat (absolute seats 0..3).

    Every array field is a view into ``records``, one structured record per table (see
    :mod:`fourhundred_env.batches`): the compiled kernels take that one array. Assigning to a
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
        """Number of tables B."""
        return self.records.shape[0]

    def __repr__(self) -> str:
        return f"State(batch_size={self.batch_size}, seed={self.seed})"

    def validate(self, what: str = "state", tables: np.ndarray | None = None) -> State:
        """Check that every field holds a value some game reaches (`FIELD_RANGES`, card sets
        within the deck, `seed` an integer); returns the state. Raises StateError naming the
        first table and field that does not, ``{what} table {t}: to_play=127: expected ...``
        (`tables` (B,): the numbers to name the tables by; default 0..B-1).

        The engine's kernels never read or write out of bounds whatever a record holds, but
        they trust it to make sense: call this on a state that comes from outside the engine
        (records built by hand, read from a file, received from another process). Unpickling
        a State and every `Table` call do. Vectorised, about 50 us at any small batch.
        """
        check_records(self.records, what, tables)
        seed = self.__dict__.get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise StateError(f"{what}: seed={seed!r}: expected an integer")
        return self

    def _check_values(self) -> None:
        self.validate()


State._layout()


def check_records(
    records: np.ndarray, what: str = "state", tables: np.ndarray | None = None
) -> None:
    """`State.validate` on a record array of ``State.DTYPE`` (see there)."""
    if records.dtype != State.DTYPE or records.ndim != 1:
        raise StateError(
            f"{what}: records of dtype {records.dtype!s:.60} and shape {records.shape}: expected "
            "(B,) State.DTYPE"
        )
    pending = records["phase"] <= _PENDING
    for name, (low, high, expected) in FIELD_RANGES.items():
        values = records[name]
        bad = (values < low) | (values > high)
        narrow = PENDING_RANGES.get(name)
        if narrow is not None:
            bad |= pending & ((values < narrow[0]) | (values > narrow[1]))
        if bad.any():
            narrow_bad = narrow is not None and not ((values < low) | (values > high)).any()
            _refuse(records, name, bad, narrow[2] if narrow_bad else expected, what, tables)
    for name in CARD_SETS:
        bad = (records[name] & _OFF_DECK) != 0
        if bad.any():
            _refuse(records, name, bad, "cards 0 to 51 (no bit above 51)", what, tables)


def _refuse(records: np.ndarray, name: str, bad: np.ndarray, expected: str, what: str,
            tables: np.ndarray | None) -> None:  # fmt: skip
    t = int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
    value = records[name][t]
    if value.ndim:
        seat = int(np.argmax(bad[t]))
        field = f"{name}[{seat}]={int(value[seat])}"
    else:
        field = f"{name}={int(value)}"
    number = t if tables is None else int(tables[t])
    raise StateError(f"{what} table {number}: {field}: expected {expected}")
