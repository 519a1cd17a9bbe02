"""What one seat may know: the information boundary between the engine and every agent.

:func:`seat_view` cuts a :class:`SeatView` out of a batched :class:`State` for one seat at
each of K tables. It holds the seat's own hand and public facts only; other seats' hidden
cards never enter it. Agents (heuristic, neural, human) and the observation encoder read
SeatViews and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from fourhundred_env.engine import Engine, State


@dataclass
class SeatView:
    """One seat's knowledge at K tables. Seats are absolute (0..3); `seat` is the viewer.

    Shapes: (K,) per table, (K, 4) per seat, (K, 66) for the mask.
    """

    table: np.ndarray  # (K,) int64: index of each table in the batch it was cut from
    seat: np.ndarray  # (K,) int8: the viewer
    phase: np.ndarray  # (K,) int8, Phase
    to_play: np.ndarray  # (K,) int8
    dealer: np.ndarray  # (K,) int8
    hand_set: np.ndarray  # (K,) uint64: the viewer's cards still held
    played_set: np.ndarray  # (K, 4) uint64: cards each seat has played this hand (trick included)
    trick_cards: np.ndarray  # (K, 4) int8: card each seat put in the current trick, -1 none
    trick_leader: np.ndarray  # (K,) int8
    trick_size: np.ndarray  # (K,) int8
    led_suit: np.ndarray  # (K,) int8 (meaningful when trick_size > 0)
    num_tricks: np.ndarray  # (K,) int8: completed tricks
    bids: np.ndarray  # (K, 4) int8: 0 = not yet bid
    num_bids: np.ndarray  # (K,) int8
    min_bid: np.ndarray  # (K, 4) int8
    required_total: np.ndarray  # (K,) int16
    tricks_won: np.ndarray  # (K, 4) int8
    scores_before: np.ndarray  # (K, 4) int32: running scores before this hand
    target: np.ndarray  # (K,) int32
    shown_void: np.ndarray  # (K, 4) uint8: bit s = seat has shown void in suit s
    legal_mask: np.ndarray  # (K, 66) bool

    @property
    def size(self) -> int:
        return self.seat.shape[0]

    def select(self, index: np.ndarray) -> SeatView:
        return SeatView(**{f.name: getattr(self, f.name)[index] for f in fields(self)})


def seat_view(
    engine: Engine,
    state: State,
    index: np.ndarray | None = None,
    seat: np.ndarray | None = None,
    legal_mask: np.ndarray | None = None,
) -> SeatView:
    """The view of `seat` (default: the seat to play) at tables `index` (default: all).

    `legal_mask` (B, 66) may be passed when the caller has it already; the viewer's row is
    the engine's mask only when the viewer is the seat to play, and all False otherwise.
    """
    idx = np.arange(state.batch_size) if index is None else np.asarray(index)
    seat_arr = (
        state.to_play[idx] if seat is None else np.broadcast_to(seat, idx.shape).astype(np.int8)
    )
    mask = engine.legal_mask(state) if legal_mask is None else legal_mask
    mask = mask[idx] & (state.to_play[idx] == seat_arr)[:, None]
    return SeatView(
        table=np.asarray(idx, dtype=np.int64).copy(),
        seat=seat_arr.copy(),
        phase=state.phase[idx],
        to_play=state.to_play[idx],
        dealer=state.dealer[idx],
        hand_set=np.where(seat_arr >= 0, state.hand_set[idx, seat_arr], np.uint64(0)),
        played_set=state.dealt_set[idx] & ~state.hand_set[idx],
        trick_cards=state.trick_cards[idx],
        trick_leader=state.trick_leader[idx],
        trick_size=state.trick_size[idx],
        led_suit=state.led_suit[idx],
        num_tricks=state.num_tricks[idx],
        bids=state.bids[idx],
        num_bids=state.num_bids[idx],
        min_bid=state.min_bid[idx],
        required_total=state.required_total[idx],
        tricks_won=state.tricks_won[idx],
        scores_before=state.scores_before[idx],
        target=state.target[idx],
        shown_void=state.shown_void[idx],
        legal_mask=mask,
    )
