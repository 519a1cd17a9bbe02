"""A hand's moves as the ``moves`` column of ``hands`` stores them: what rebuilds the hand card
by card without playing its bots again.

A value is ``32 + n`` bytes: the four hands as dealt (uint64 card sets by seat, little-endian,
8 bytes each), then the hand's `n` decisions in the order they were played, one action id a
byte (0-51 a card, 52-64 a bid of 1 to 13, 65 a redeal request: :mod:`fourhundred_env.cards`).
A hand has 1 to :data:`MAX_HAND_MOVES` decisions (a redeal asked at once; four bids and 52
cards). The forfeits of the conduct rules are not moves: the row's ``forfeit*`` columns say
which contracts were scored as missed, and the action played for a forfeiting seat (the lowest
legal one) is among the moves. A row written before the column existed holds NULL.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env.cards import NUM_ACTIONS

__all__ = ["DEALT_BYTES", "MAX_HAND_MOVES", "decode_moves", "encode_moves"]

DEALT_BYTES = 32
"""Bytes of the dealt hands at the start of a value: 4 uint64 card sets."""
MAX_HAND_MOVES = 56
"""The most decisions a hand can have: four bids, then 52 cards."""
_LE_U64 = np.dtype("<u8")


def encode_moves(dealt_set: np.ndarray, moves: np.ndarray, num_moves: np.ndarray) -> list[bytes]:
    """The ``moves`` values of n hands: `dealt_set` (n, 4) uint64 as dealt, by seat; `moves`
    (n, W) int8 action ids in order (W >= the longest hand); `num_moves` (n,) the decisions of
    each hand."""
    n = moves.shape[0]
    dealt = np.ascontiguousarray(dealt_set, _LE_U64).view(np.uint8).reshape(n, DEALT_BYTES)
    width = DEALT_BYTES + moves.shape[1]
    buf = np.concatenate([dealt, moves.astype(np.uint8)], axis=1).tobytes()
    ends = (np.arange(n) * width + DEALT_BYTES + np.asarray(num_moves)).tolist()
    return [buf[k * width : end] for k, end in enumerate(ends)]


def decode_moves(value: bytes) -> tuple[list[int], list[int]]:
    """(dealt card sets by seat, action ids in order) of a stored ``moves`` value; ValueError
    saying what is wrong when it is not one (its length, a deal that is not one, an action id
    out of range). Whether the moves are legal for the hand is for the engine to say
    (:mod:`fourhundred_tournament.replay`)."""
    if not isinstance(value, bytes):
        raise ValueError(f"a {type(value).__name__}, expected bytes")
    n = len(value) - DEALT_BYTES
    if not 1 <= n <= MAX_HAND_MOVES:
        raise ValueError(
            f"{len(value)} bytes, expected {DEALT_BYTES + 1} to {DEALT_BYTES + MAX_HAND_MOVES}"
        )
    dealt = np.frombuffer(value, _LE_U64, 4)
    union = np.bitwise_or.reduce(dealt)
    counts = np.bitwise_count(dealt).tolist()
    if counts != [13] * 4 or int(np.bitwise_count(union)) != 52 or union >> np.uint64(52):
        raise ValueError(
            f"dealt hands of {counts} cards, expected 13 distinct cards (ids 0-51) for each seat"
        )
    actions = list(value[DEALT_BYTES:])
    bad = [a for a in actions if a >= NUM_ACTIONS]
    if bad:
        raise ValueError(f"action id {bad[0]}, expected 0 to {NUM_ACTIONS - 1}")
    return dealt.tolist(), actions
