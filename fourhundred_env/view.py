"""What one seat may know: the information boundary between the engine and every agent.

:func:`seat_view` cuts a :class:`SeatView` out of a batched :class:`State` for one seat at
each of K tables. It holds the seat's own hand and public facts only; other seats' hidden
cards never enter it. Agents (heuristic, neural, human) and the observation encoder read
SeatViews and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import literal_unroll

from fourhundred_env import kernels as K
from fourhundred_env._jit import ZERO, helper, kernel
from fourhundred_env.batches import RecordBatch, array_field, shared_fields
from fourhundred_env.cards import FULL_DECK, NUM_ACTIONS
from fourhundred_env.engine import Engine, State
from fourhundred_env.errors import FourHundredError, StateError, short


@dataclass(eq=False, repr=False)
class SeatView(RecordBatch):
    """One seat's knowledge at K tables. Seats are absolute (0..3); `seat` is the viewer.

    Shapes: (K,) per table, (K, 4) per seat, (K, 66) for the mask. Like the engine's
    :class:`~fourhundred_env.engine.State`, every field is a view into ``records`` (one
    record per table), which the compiled agents and the observation encoder take.
    """

    table: np.ndarray = array_field("i8")  # (K,) int64: index of each table in its batch
    seat: np.ndarray = array_field("i1")  # (K,) int8: the viewer
    phase: np.ndarray = array_field("i1")  # (K,) int8, Phase
    to_play: np.ndarray = array_field("i1")  # (K,) int8
    dealer: np.ndarray = array_field("i1")  # (K,) int8
    hand_set: np.ndarray = array_field("u8")  # (K,) uint64: the viewer's cards still held
    played_set: np.ndarray = array_field("u8", 4)  # (K, 4) uint64: cards each seat has played
    trick_cards: np.ndarray = array_field("i1", 4)  # (K, 4) int8: card in the trick, -1 none
    trick_leader: np.ndarray = array_field("i1")  # (K,) int8
    trick_size: np.ndarray = array_field("i1")  # (K,) int8
    led_suit: np.ndarray = array_field("i1")  # (K,) int8 (meaningful when trick_size > 0)
    num_tricks: np.ndarray = array_field("i1")  # (K,) int8: completed tricks
    bids: np.ndarray = array_field("i1", 4)  # (K, 4) int8: 0 = not yet bid
    num_bids: np.ndarray = array_field("i1")  # (K,) int8
    min_bid: np.ndarray = array_field("i1", 4)  # (K, 4) int8
    required_total: np.ndarray = array_field("i2")  # (K,) int16
    tricks_won: np.ndarray = array_field("i1", 4)  # (K, 4) int8
    scores_before: np.ndarray = array_field("i4", 4)  # (K, 4) int32: scores before this hand
    target: np.ndarray = array_field("i4")  # (K,) int32
    shown_void: np.ndarray = array_field("u1", 4)  # (K, 4) uint8: bit s = shown void in suit s
    legal_mask: np.ndarray = array_field("?", NUM_ACTIONS)  # (K, 66) bool
    stream: np.ndarray = array_field("u8")  # (K,) uint64: the game's random-stream key

    @property
    def size(self) -> int:
        """Number of tables K in the view."""
        return self.records.shape[0]

    def __repr__(self) -> str:
        return f"SeatView(size={self.size})"


SeatView._layout()


TABLE_SCALARS, TABLE_ARRAYS = shared_fields(State)
"""Every array field of :class:`State` (one value per table, an array per table): what
`copy_table` copies."""
PUBLIC_SCALARS, PUBLIC_ARRAYS = shared_fields(State, SeatView)
"""The fields a :class:`SeatView` holds as the table holds them (the same name, dtype and
shape in both): what `copy_public` copies either way between a table and a view. The view's
other fields (`table`, `seat`, its own `hand_set`, `played_set`, `legal_mask`) are worked
out by `cut_view`; the table's others are not shown to a seat."""


@helper
def copy_table(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy every field of the State record `src` into the State record `dst`."""
    for name in literal_unroll(TABLE_SCALARS):
        dst[name] = src[name]
    for name in literal_unroll(TABLE_ARRAYS):
        dst[name][...] = src[name]


@helper
def copy_public(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy the public fields (`PUBLIC_SCALARS`, `PUBLIC_ARRAYS`) of a State or SeatView record
    `src` into a record `dst` of the other kind."""
    for name in literal_unroll(PUBLIC_SCALARS):
        dst[name] = src[name]
    for name in literal_unroll(PUBLIC_ARRAYS):
        dst[name][...] = src[name]


@helper
def cut_view(t: np.ndarray, i: int, seat: int, r: np.ndarray, mask: np.ndarray,
             v: np.ndarray) -> None:  # fmt: skip
    """Write into the view record `v` what `seat` may know at table record `t` (index `i`):
    its own hand and the public facts. The legal mask is the table's (row i of `mask` if
    it has rows, else computed) when the viewer is to play, all 0 otherwise."""
    v["table"] = i
    v["seat"] = seat
    copy_public(t, v)
    v["hand_set"] = t["hand_set"][seat] if seat >= 0 else ZERO
    for k in range(4):
        v["played_set"][k] = t["dealt_set"][k] & ~t["hand_set"][k]
    row = v["legal_mask"]
    if t["to_play"] != seat:
        for a in range(row.shape[0]):
            row[a] = 0
    elif mask.shape[0] > 0:
        for a in range(row.shape[0]):
            row[a] = mask[i, a]
    else:
        K.write_mask(t, r, row)


OFF_DECK = ~FULL_DECK  # the bits of a uint64 card set that are no card


@helper
def valid_view(v: np.ndarray) -> bool:
    """The view record holds values a seat view can hold (a viewer 0-3, a phase, bids 0-13,
    trick cards -1..51, seats -1..3, cards 0-51...): what the kernels that read views index
    with. A view cut by `seat_view` from an engine-made state always does; one built from
    arrays by hand, or cut from a state changed from outside, is checked before use."""
    if not (0 <= v["seat"] <= 3 and 0 <= v["phase"] <= 3 and 0 <= v["num_bids"] <= 4):
        return False
    if not (0 <= v["trick_size"] <= 3 and 0 <= v["led_suit"] <= 3 and 0 <= v["num_tricks"] <= 13):
        return False
    if not (-1 <= v["to_play"] <= 3 and -1 <= v["dealer"] <= 3 and -1 <= v["trick_leader"] <= 3):
        return False
    cards = v["hand_set"]
    for k in range(4):
        cards |= v["played_set"][k]
    if (cards & OFF_DECK) != ZERO:
        return False
    for k in range(4):
        if not (0 <= v["bids"][k] <= 13 and 0 <= v["min_bid"][k] <= 13):
            return False
        if not (-1 <= v["trick_cards"][k] <= 51 and 0 <= v["tricks_won"][k] <= 13):
            return False
    return True


@helper
def check_cut(s: np.ndarray, index: np.ndarray, seats: np.ndarray) -> int:
    """The first j whose table index[j] is not in 0..B-1 or whose seat is not -1..3, else -1.
    `seats` empty: each table's seat to play."""
    b = s.shape[0]
    for j in range(index.shape[0]):
        i = index[j]
        if i < 0 or i >= b:
            return j
        seat = seats[j] if seats.shape[0] > 0 else s[i]["to_play"]
        if seat < -1 or seat > 3:
            return j
    return -1


@kernel
def cut_views(s: np.ndarray, index: np.ndarray, seats: np.ndarray, rules: np.ndarray,
              mask: np.ndarray, out: np.ndarray) -> int:  # fmt: skip
    """out[j] = the view of seats[j] (`seats` empty: the seat to play) at table index[j] (see
    `cut_view`). Returns the first j whose table or seat is out of range (nothing read), or
    -1."""
    r = rules[0]
    bad = check_cut(s, index, seats)
    if bad >= 0:
        return bad
    to_play = seats.shape[0] == 0
    for j in range(index.shape[0]):
        t = s[index[j]]
        cut_view(t, index[j], t["to_play"] if to_play else seats[j], r, mask, out[j])
    return -1


NO_MASK = np.zeros((0, NUM_ACTIONS), np.bool_)
_MASK_KINDS = "biuf"  # the mask dtypes the kernel copies from (bool, integers, floats)
_TO_PLAY = np.zeros(0, np.int8)  # seats: each table's seat to play


def seat_view(
    engine: Engine,
    state: State,
    index: np.ndarray | None = None,
    seat: np.ndarray | int | None = None,
    legal_mask: np.ndarray | None = None,
) -> SeatView:
    """The view of `seat` (default: the seat to play) at tables `index` (default: all).

    `legal_mask` (B, 66) may be passed when the caller has it already; the viewer's row is
    the engine's mask only when the viewer is the seat to play, and all False otherwise.
    """
    if not isinstance(engine, Engine):
        raise FourHundredError(f"seat_view engine={short(engine)}: expected an Engine")
    if not isinstance(state, State):
        raise StateError(f"seat_view state={short(state)}: expected a State")
    if index is None:
        idx = np.arange(state.batch_size)
    else:
        idx = _array(index, "index")
        if idx.dtype == np.bool_:
            if idx.shape != (state.batch_size,):
                raise FourHundredError(
                    f"seat_view index: a mask of shape {idx.shape}: expected "
                    f"({state.batch_size},) bool"
                )
            idx = np.flatnonzero(idx)
        elif idx.dtype.kind not in "iu":
            raise FourHundredError(
                f"seat_view index of dtype {idx.dtype}: expected (K,) table indices"
            )
        elif idx.dtype != np.int64:
            idx = idx.astype(np.int64)  # uint64 above 2**63 wraps negative: refused below
        if idx.ndim != 1:
            raise FourHundredError(f"seat_view index of shape {idx.shape}: expected (K,) tables")
    if seat is None:
        seats = _TO_PLAY
    else:
        seats = _array(seat, "seat")
        if seats.dtype.kind not in "iu" or seats.ndim > 1:
            raise FourHundredError(f"seat_view seat={short(seat)}: expected seats 0 to 3")
        if seats.ndim == 1 and seats.shape != idx.shape:
            raise FourHundredError(
                f"seat_view seat of shape {seats.shape}: expected one seat or {idx.shape}"
            )
        if seats.dtype != np.int8 or seats.shape != idx.shape:
            if seats.size and (seats.min() < -1 or seats.max() > 3):
                raise FourHundredError(f"seat_view seat={short(seat)}: expected seats 0 to 3")
            seats = np.ascontiguousarray(np.broadcast_to(seats, idx.shape), dtype=np.int8)
    if legal_mask is None:
        mask = NO_MASK
    else:
        mask = legal_mask
        if (
            type(mask) is not np.ndarray
            or mask.shape != (state.batch_size, NUM_ACTIONS)
            or mask.dtype.kind not in _MASK_KINDS
        ):
            given = (
                f"of shape {mask.shape} and dtype {mask.dtype}"
                if isinstance(mask, np.ndarray)
                else f"a {type(mask).__name__}"
            )
            raise FourHundredError(
                f"seat_view legal_mask {given}: expected a ({state.batch_size}, {NUM_ACTIONS}) "
                "bool array"
            )
    records = state.records
    if records.dtype != State.DTYPE or records.ndim != 1:
        raise StateError(f"seat_view: records of dtype {records.dtype!s:.60}: expected State.DTYPE")
    out = np.zeros(idx.shape[0], SeatView.DTYPE)
    bad = cut_views(records, idx, seats, engine._r, mask, out)
    if bad >= 0:
        what = f"seat {int(seats[bad])}" if seats.size else "its seat to play"
        raise FourHundredError(
            f"seat_view of table {int(idx[bad])}, {what}: expected tables 0 to "
            f"{state.batch_size - 1} and seats 0 to 3"
        )
    return SeatView._wrap(out)


def _array(value: object, what: str) -> np.ndarray:
    try:
        return np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        raise FourHundredError(f"seat_view {what}={short(value)}: expected integers") from None


@kernel
def _fill_worlds(views: np.ndarray, rep: np.ndarray, hands: np.ndarray, s: np.ndarray) -> None:
    """s[j] = the public facts of view record rep[j], with hands[j] (4,) as the seats' cards
    (the scores those before the hand)."""
    for j in range(rep.shape[0]):
        v = views[rep[j]]
        t = s[j]
        copy_public(v, t)
        for k in range(4):
            t["scores"][k] = v["scores_before"][k]
            t["hand_set"][k] = hands[j, k]
            t["dealt_set"][k] = hands[j, k] | v["played_set"][k]


def world_state(
    engine: Engine, view: SeatView, hands: np.ndarray, rep: np.ndarray | None = None
) -> State:
    """Tables as a seat sees them, with every seat's cards given: row j has the public facts
    of view row rep[j] (default j) and hands[j] (n, 4) uint64 as the cards still held. For
    search bots that deal out the cards a seat cannot see into possible worlds; the hands
    must agree with the view (the viewer's own, the counts, the cards played)."""
    if not isinstance(engine, Engine) or not isinstance(view, SeatView):
        raise FourHundredError(
            f"world_state({type(engine).__name__}, {type(view).__name__}, ...): expected an "
            "Engine and a SeatView"
        )
    try:
        rep = np.arange(view.size) if rep is None else np.ascontiguousarray(rep, dtype=np.int64)
        hands = np.ascontiguousarray(hands, dtype=np.uint64)
    except (ValueError, TypeError, OverflowError):
        raise FourHundredError(
            "world_state: hands and rows that are not integers: expected (n, 4) uint64 hands "
            "and (n,) rows"
        ) from None
    if (
        rep.ndim != 1
        or hands.shape != (rep.shape[0], 4)
        or (rep.size and (rep.min() < 0 or rep.max() >= view.size))
    ):
        raise FourHundredError(
            f"world_state: hands of shape {hands.shape} for rows {rep.shape}: expected "
            f"({rep.shape[0]}, 4) uint64 and rows 0 to {view.size - 1}"
        )
    if (hands & ~FULL_DECK).any():
        raise FourHundredError(
            "world_state: hands holding cards numbered 52 to 63: expected card sets of the "
            "52 cards (bits 0 to 51)"
        )
    state = engine.init(rep.shape[0])
    _fill_worlds(view.records, rep, hands, state.records)
    return state
