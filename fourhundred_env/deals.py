"""Counter-based random deals: hand `hand_index` of match `match_id` under `seed` is the same
whatever batch it is dealt in, so a tournament or a resumed run replays the same cards.

The hash is SplitMix64's finaliser (:func:`mix64`); the compiled kernels have their own copy
(``fourhundred_env.kernels.mix64``), and :mod:`fourhundred_env.streams` names the salts of
every other stream drawn the same way.
"""

from __future__ import annotations

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env.errors import FourHundredError, short

_U64 = np.uint64
_MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser, elementwise on uint64 (wraps modulo 2**64): a counter-based hash."""
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> _U64(30))) * _M1
    z = (z ^ (z >> _U64(27))) * _M2
    return z ^ (z >> _U64(31))


def seed_key(seed: int) -> np.uint64:
    """The key of a seed's deal streams (what the kernels take); `seed` any integer (taken
    modulo 2**64). Anything else raises FourHundredError."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise FourHundredError(f"seed={short(seed)}: expected an integer")
    return mix64(np.array([int(seed) & _MASK64], dtype=np.uint64))[0]


def _int64_ids(values: np.ndarray | int, what: str) -> np.ndarray:
    try:
        ids = np.atleast_1d(np.asarray(values))
    except (ValueError, TypeError, OverflowError):
        raise FourHundredError(f"{what}: {short(values)}: expected (n,) integers") from None
    if ids.dtype.kind not in "iu" or ids.ndim != 1:
        raise FourHundredError(
            f"{what}: got {ids.dtype} of shape {ids.shape}: expected (n,) integers"
        )
    return np.ascontiguousarray(ids, dtype=np.int64)


def first_dealers(seed: int, match_id: np.ndarray) -> np.ndarray:
    """First dealer of each match, drawn from (seed, match_id): shape (n,), int8."""
    ids = _int64_ids(match_id, "match ids")
    out = np.empty(ids.shape[0], np.int8)
    K.first_dealers(seed_key(seed), ids, out)
    return out


def deal_sets(seed: int, match_id: np.ndarray, hand_index: np.ndarray) -> np.ndarray:
    """Uniformly random deals, (n,) ids -> (n, 4) uint64 hands by seat.

    Hand `hand_index` of match `match_id` under `seed` is the same whatever batch it is in.
    """
    ids = _int64_ids(match_id, "match ids")
    hand = _int64_ids(hand_index, "hand indices")
    if hand.shape not in ((1,), ids.shape):
        raise FourHundredError(
            f"hand indices of shape {hand.shape} for {ids.shape[0]} match ids: expected one or "
            f"({ids.shape[0]},)"
        )
    hand = np.broadcast_to(hand, ids.shape)
    out = np.empty((ids.shape[0], 4), np.uint64)
    K.deal_many(seed_key(seed), ids, np.ascontiguousarray(hand), out)
    return out
