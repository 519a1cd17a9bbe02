"""numba plumbing of the compiled core: the decorator every kernel uses and bit operations on
uint64 card sets.

Kernels are plain functions over record arrays (see :mod:`fourhundred_env.records`) that loop
over the tables inside, so one table and 4,096 take the same code. They are compiled by
numba (``@njit(cache=True)``: machine code cached on disk next to the module, compiled once
per install) and run unchanged as plain Python under ``NUMBA_DISABLE_JIT=1``, for debugging
and for the tests that check both give the same results.

Bit operations compile to single instructions (LLVM's ``ctpop``, ``cttz``, ``ctlz``); as
plain Python they use ``int.bit_count`` and ``int.bit_length``. Values are uint64 in and
int64 out: numba, like numpy, turns uint64 mixed with signed integers into float64, so the
kernels keep card sets uint64 and counts and indices int64, and never mix them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numba import config, njit

F = TypeVar("F", bound=Callable[..., Any])

JIT = not config.DISABLE_JIT
"""False when numba runs everything as plain Python (``NUMBA_DISABLE_JIT=1``)."""

U64 = np.uint64
ONE = np.uint64(1)
ZERO = np.uint64(0)


def kernel(fn: F) -> F:
    """Compile `fn` in nopython mode, cached on disk; plain Python under NUMBA_DISABLE_JIT."""
    return njit(cache=True, nogil=True)(fn)  # type: ignore[return-value]


def entry_point(dispatcher: Any, *args: Any) -> Callable[..., Any]:
    """The compiled function of the kernel `dispatcher` for the types of `args` (compiled or
    loaded from the cache now), to be called without numba's dispatch.

    A call through the dispatcher types every argument first, about 0.2 us each and more for
    a record array: at one table that is as much as the work itself. The entry point skips it
    and still converts the arguments, but does NOT check their types: the caller must pass
    exactly the dtypes, dimensions and contiguity of `args` (an array of another dtype would
    be read as if it had this one), so only the engine's hot calls use it, behind checks of
    those properties. Under NUMBA_DISABLE_JIT it is the plain function.
    """
    if not JIT:
        return dispatcher  # type: ignore[no-any-return]
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    if sig not in dispatcher.overloads:
        dispatcher.compile(sig)
    return dispatcher.overloads[sig].entry_point  # type: ignore[no-any-return]


def helper(fn: F) -> F:
    """A function the kernels call, compiled once and cached; LLVM inlines the small ones.
    (Forcing numba to inline every helper into every kernel made the first start after an
    install take 37 s instead of 11 s, for no measurable speed.)"""
    return njit(cache=True)(fn)  # type: ignore[return-value]


if JIT:
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def _ctpop(typingctx, x):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
            return builder.call(fn, [args[0]])

        return types.uint64(types.uint64), codegen

    @intrinsic
    def _cttz(typingctx, x):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

        return types.uint64(types.uint64), codegen

    @intrinsic
    def _ctlz(typingctx, x):  # type: ignore[no-untyped-def]
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fn = builder.module.declare_intrinsic("llvm.ctlz", [ir.IntType(64), ir.IntType(1)])
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

        return types.uint64(types.uint64), codegen

    @helper
    def popcount(x: np.uint64) -> int:
        """Number of set bits of a uint64."""
        return np.int64(_ctpop(x))

    @helper
    def lowest_bit(x: np.uint64) -> int:
        """Index of the lowest set bit of a uint64, -1 if it is 0."""
        if x == ZERO:
            return -1
        return np.int64(_cttz(x))

    @helper
    def highest_bit(x: np.uint64) -> int:
        """Index of the highest set bit of a uint64, -1 if it is 0."""
        if x == ZERO:
            return -1
        return 63 - np.int64(_ctlz(x))

else:

    def popcount(x: np.uint64) -> int:
        """Number of set bits of a uint64."""
        return int(x).bit_count()

    def lowest_bit(x: np.uint64) -> int:
        """Index of the lowest set bit of a uint64, -1 if it is 0."""
        v = int(x)
        return (v & -v).bit_length() - 1

    def highest_bit(x: np.uint64) -> int:
        """Index of the highest set bit of a uint64, -1 if it is 0."""
        return int(x).bit_length() - 1


@helper
def bit(index: int) -> np.uint64:
    """The uint64 with only bit `index` (0..63) set."""
    return ONE << U64(index)


@helper
def nth_bit(x: np.uint64, k: int) -> int:
    """Index of the k-th (0-based) set bit of x; needs k < popcount(x).

    A binary search over halves by their popcounts, six steps whatever k is, with no branch
    on the data: clearing k low bits one by one took a loop of k steps whose exit the CPU
    mispredicts whenever k is random (a draw from a mask), and that was most of a draw."""
    pos = np.int64(0)
    width = np.int64(32)
    while width:
        c = popcount(x & ((ONE << U64(width)) - ONE))
        step = np.int64(k >= c)
        k -= step * c
        pos += step * width
        x >>= U64(step * width)
        width >>= 1
    return pos
