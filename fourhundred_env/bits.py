"""Bit helpers over uint64 card sets and action masks, in numpy and compiled loops, for code
outside the kernels: the k-th set bit, unpacking sets to booleans, and the project's one
sampler of uniformly random legal actions from masks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fourhundred_env import kernels as K
from fourhundred_env._jit import cached_entry_point
from fourhundred_env.cards import NUM_ACTIONS
from fourhundred_env.errors import FourHundredError

# the sampler's entry points by the dtype of the mask (see _jit.cached_entry_point)
_SAMPLE: dict[np.dtype, Callable[..., Any]] = {}


def select_bit(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Position (int64) of the k-th (0-based) set bit of each uint64 in x (B,); needs k < popcount."""
    x = np.ascontiguousarray(x, dtype=np.uint64)
    out = np.empty(x.shape[0], np.int64)
    K.select_bits(x, np.ascontiguousarray(k, dtype=np.int64), out)
    return out


def sample_legal_actions(
    action_mask: np.ndarray, rng: np.random.Generator, empty: int = 0
) -> np.ndarray:
    """(B,) int64: a uniformly random legal action per row of a (B, 66) int8/bool mask.

    The project's one sampler from masks: as ``Discrete.sample(mask=...)`` row by row
    (`empty` for a row with no legal action), in one compiled loop, at any batch size. It
    draws ``rng.random(B)`` and takes the legal action of rank ``floor(u * n)``.
    """
    mask = action_mask
    if (
        type(mask) is not np.ndarray
        or mask.ndim != 2
        or mask.shape[1] != NUM_ACTIONS
        or mask.dtype.char not in "?b"
    ):
        mask = np.asarray(mask)
        if mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS or mask.dtype.char not in "?b":
            raise FourHundredError(
                f"action_mask of shape {mask.shape} and dtype {mask.dtype}: expected (B, "
                f"{NUM_ACTIONS}) int8 or bool"
            )
    b = mask.shape[0]
    out = np.empty(b, np.int64)
    u = rng.random(b)
    if type(empty) is not int:
        empty = int(empty)
    if mask.flags.c_contiguous:
        fn = _SAMPLE.get(mask.dtype) or cached_entry_point(
            _SAMPLE, mask.dtype, K.sample_mask, mask, u, empty, out
        )
        fn(mask, u, empty, out)
    else:
        K.sample_mask(mask, u, empty, out)
    return out


def unpack_sets(sets: np.ndarray, num_bits: int = 64) -> np.ndarray:
    """uint64 bitmasks, shape (...,) -> bool array (..., num_bits), bit i at index i."""
    sets = np.ascontiguousarray(sets, dtype="<u8")
    bits = np.unpackbits(sets.view(np.uint8).reshape(*sets.shape, 8), axis=-1, bitorder="little")
    return bits[..., :num_bits].view(bool)
