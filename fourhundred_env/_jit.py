"""numba plumbing of the compiled core: the decorator every kernel uses and bit operations on
uint64 card sets.

Kernels are plain functions over record arrays (see :mod:`fourhundred_env.batches`) that loop
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

import hashlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
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
    return _keyed_on_sources(njit(cache=True, nogil=True)(fn), fn)


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


def cached_entry_point(table: dict[Any, Callable[..., Any]], key: Any, dispatcher: Any,
                       *args: Any) -> Callable[..., Any]:  # fmt: skip
    """`entry_point(dispatcher, *args)`, remembered in `table` under `key` (the dtype of the
    one argument whose dtype varies among the calls)."""
    fn = table[key] = entry_point(dispatcher, *args)
    return fn


def helper(fn: F) -> F:
    """A function the kernels call, compiled once and cached; LLVM inlines the small ones."""
    # not numba's inline="always": inlining every helper into every kernel makes the first
    # start after an install several times slower, for no measurable speed (BENCHMARKS.md)
    return _keyed_on_sources(njit(cache=True)(fn), fn)


# -- the disk cache, keyed on every source a compiled function may use --------------------------
# numba keys a function's cached machine code on its own bytecode and invalidates it when its
# own file changes, not when a helper or a constant it uses changes in another file: after
# such an edit the old code would still run. So every kernel's and helper's cache key also
# holds a hash of its module's source and of every project module that module imports,
# transitively (a kernel can only use what its module imports) within its own top package and
# this core. Editing any of them compiles the kernels that may depend on it again, once.
_CORE = __name__.split(".")[0]
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n#]*))|import[ \t]+([\w.]+))",
    re.M,
)
_SALTS: dict[str, str] = {}


def _module_file(name: str) -> Path | None:
    """The source file of project module `name`, found from its package's folder without
    importing anything (None if there is none: `name` is a class or constant, not a module)."""
    top, *rest = name.split(".")
    package = sys.modules.get(top)
    folders = getattr(package, "__path__", None)
    if not folders:
        return None
    base = Path(next(iter(folders))).joinpath(*rest)
    for path in ((base.parent / f"{base.name}.py") if rest else None, base / "__init__.py"):
        if path is not None and path.is_file():
            return path
    return None


def sources_hash(module: str) -> str:
    """sha256 of the source of `module` and of every module of its own top package or of the
    core that it imports, transitively."""
    if module in _SALTS:
        return _SALTS[module]
    project = {module.split(".")[0], _CORE}
    digest = hashlib.sha256()
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = _module_file(name) if name not in seen else None
        seen.add(name)
        if path is None:
            continue
        text = path.read_bytes()
        digest.update(name.encode() + b"\0" + text + b"\0")
        for source, listed, names, plain in _IMPORT.findall(text.decode("utf-8", "replace")):
            base = source or plain
            if base.split(".")[0] not in project:
                continue
            todo.append(base)
            todo.extend(f"{base}.{n}" for n in re.findall(r"\w+", listed or names))  # submodules
    _SALTS[module] = digest.hexdigest()
    return _SALTS[module]


def _keyed_on_sources(dispatcher: Any, fn: Callable[..., Any]) -> Any:
    """`dispatcher` (numba's, for `fn`) with its disk cache keyed also on `sources_hash`."""
    if JIT:
        dispatcher._cache = _SourcesCache(fn, sources_hash(fn.__module__))
    return dispatcher


if JIT:
    from numba.core.caching import FunctionCache

    class _SourcesCache(FunctionCache):  # type: ignore[misc]
        """numba's disk cache of one function, its entries keyed also on `sources`."""

        def __init__(self, py_func: Callable[..., Any], sources: str) -> None:
            super().__init__(py_func)
            self._sources = sources

        def _index_key(self, sig: Any, codegen: Any) -> Any:
            return (*super()._index_key(sig, codegen), self._sources)


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
