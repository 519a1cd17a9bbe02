"""Batches whose array fields live in one structured numpy array: one argument per kernel.

:class:`~fourhundred_env.engine.State` and :class:`~fourhundred_env.view.SeatView` are
dataclasses of arrays, batch axis first (``state.scores`` is (B, 4) int32), and every field
is a view into a single structured array, ``records`` (B,), one record per table. Python
code reads and writes the fields as ordinary arrays; a compiled kernel takes the one record
array. That matters at small batches: numba checks the type of every argument of every
call, about 50 ns per array, so a kernel over the 27 arrays of a State would pay 1.4 us a
call before doing anything, one record array 0.2 us.

Assigning to a field writes into the records (``state.scores = x`` is
``state.scores[...] = x``), so the fields and the records never part. Fields declared bool
are stored as uint8 (numba's records hold no bool arrays) and shown as bool views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np

from fourhundred_env.errors import FourHundredError, StateError


def array_field(dtype: str, *shape: int) -> Any:
    """A dataclass field holding a (B, *shape) array of `dtype` (per table: `shape`)."""
    return dataclasses.field(metadata={"dtype": np.dtype(dtype), "shape": tuple(shape)})


class RecordBatch:
    """Base of the record-backed dataclasses. Subclasses are ``@dataclass(eq=False)`` with
    :func:`array_field` fields (and plain scalar fields such as ``State.seed``)."""

    _ARRAYS: ClassVar[tuple[dataclasses.Field, ...]]
    _SCALARS: ClassVar[tuple[str, ...]]
    _BOOLS: ClassVar[frozenset[str]]
    DTYPE: ClassVar[np.dtype]
    """The record dtype (aligned), one record per table."""

    records: np.ndarray
    """(B,) structured array holding every array field (see the module docstring)."""

    @classmethod
    def _layout(cls) -> None:
        """Build the record dtype from the dataclass fields (called once per subclass)."""
        arrays = tuple(f for f in dataclasses.fields(cls) if "dtype" in f.metadata)  # type: ignore[arg-type]
        cls._ARRAYS = arrays
        cls._SCALARS = tuple(f.name for f in dataclasses.fields(cls) if "dtype" not in f.metadata)  # type: ignore[arg-type]
        cls._BOOLS = frozenset(f.name for f in arrays if f.metadata["dtype"] == np.bool_)
        # widest first: aligned records with little padding
        ordered = sorted(arrays, key=lambda f: -f.metadata["dtype"].itemsize)
        cls.DTYPE = np.dtype(
            [
                (
                    f.name,
                    np.uint8 if f.name in cls._BOOLS else f.metadata["dtype"],
                    f.metadata["shape"],
                )
                for f in ordered
            ],
            align=True,
        )

    def __post_init__(self) -> None:
        values = {f.name: np.asarray(self.__dict__[f.name]) for f in self._ARRAYS}
        first = values[self._ARRAYS[0].name]
        if first.ndim == 0:
            raise StateError(
                f"{type(self).__name__}: {self._ARRAYS[0].name} is a scalar: expected (B, ...) arrays"
            )
        records = np.zeros(first.shape[:1], self.DTYPE)
        for name, value in values.items():
            try:
                records[name] = value
            except (ValueError, TypeError, OverflowError) as e:
                shape = (records.shape[0], *self.DTYPE[name].shape)
                raise StateError(
                    f"{type(self).__name__}: {name} of dtype {value.dtype} and shape "
                    f"{value.shape}: {e}: expected {shape} {self.DTYPE[name].base}"
                ) from None
            del self.__dict__[name]  # from now on a view into `records` (see __getattr__)
        self.__dict__["records"] = records
        self._check_values()

    def _check_values(self) -> None:
        """Refuse values no engine makes (StateError); called on batches built by hand and
        unpickled. Subclasses with such values override it (``State.validate``)."""

    def __getattr__(self, name: str) -> np.ndarray:
        # Only called for attributes not yet in __dict__: the field views, made on first use
        # (a compiled agent that reads `records` alone never pays for them).
        d = self.__dict__
        if name in self.DTYPE.names and "records" in d:
            view = d["records"][name]
            if name in self._BOOLS:
                view = view.view(np.bool_)
            d[name] = view
            return view
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def from_records(cls, records: np.ndarray, **scalars: Any) -> Self:
        """Wrap a (B,) record array of ``cls.DTYPE`` (no copy) with the scalar fields (their
        defaults where not given). An array of another dtype or shape raises StateError; the
        values are not checked (records from outside the engine: see ``State.validate``)."""
        name = cls.__name__
        if type(records) is not np.ndarray or records.dtype != cls.DTYPE or records.ndim != 1:
            given = (
                f"records of dtype {_dtype_text(records.dtype, cls)} and shape {records.shape}"
                if isinstance(records, np.ndarray)
                else f"a {type(records).__name__}"
            )
            raise StateError(f"{name}.from_records: {given}: expected a (B,) {name}.DTYPE array")
        unknown = sorted(set(scalars) - set(cls._SCALARS))
        if unknown:
            raise StateError(
                f"{name}.from_records: unknown field(s) {unknown}: expected some of "
                f"{list(cls._SCALARS)}"
            )
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls._wrap(records, **{n: scalars.get(n, defaults[n]) for n in cls._SCALARS})

    @classmethod
    def _wrap(cls, records: np.ndarray, **scalars: Any) -> Self:
        """`from_records` with no checks, for records the engine made (hot paths)."""
        obj = cls.__new__(cls)
        d = obj.__dict__
        for name in cls._SCALARS:
            d[name] = scalars[name]
        d["records"] = records
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        if "records" in self.__dict__ and name in self.DTYPE.names:
            getattr(self, name)[...] = value
        elif name == "records" and "records" in self.__dict__:
            # the field views would still show the old records, and the kernels trust them
            raise StateError(
                f"{type(self).__name__}.records cannot be replaced: expected "
                f"{type(self).__name__}.from_records(new_records)"
            )
        else:
            object.__setattr__(self, name, value)

    def _scalars(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._SCALARS}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.records, self._scalars()))

    def copy(self) -> Self:
        """A deep copy (new records)."""
        return self._wrap(self.records.copy(), **self._scalars())

    def select(self, index: np.ndarray | slice | int | Sequence[int]) -> Self:
        """A new batch of the tables at `index` (copies)."""
        if isinstance(index, int | np.integer):
            index = [int(index)]
        try:
            records = np.array(self.records[index], copy=True)
        except (IndexError, TypeError, ValueError) as e:
            raise FourHundredError(
                f"{type(self).__name__}.select({index!r:.80}): {e}: expected table indices 0 to "
                f"{self.records.shape[0] - 1}, a slice or a ({self.records.shape[0]},) bool mask"
            ) from None
        if records.ndim != 1:
            raise FourHundredError(
                f"{type(self).__name__}.select: an index of shape {np.shape(index)}: expected "
                "(n,) tables"
            )
        return self._wrap(records, **self._scalars())

    def equals(self, other: RecordBatch) -> bool:
        """Every field equal (used by the batch-equivalence and determinism tests)."""
        return (
            type(self) is type(other)
            and self._scalars() == other._scalars()
            and all(
                np.array_equal(getattr(self, f.name), getattr(other, f.name)) for f in self._ARRAYS
            )
        )

    @classmethod
    def concat(cls, batches: Sequence[Self]) -> Self:
        """One batch holding the tables of `batches` in order (scalars from the first)."""
        batches = list(batches) if isinstance(batches, list | tuple) else [batches]
        if not batches or not all(isinstance(b, cls) for b in batches):
            kinds = sorted({type(b).__name__ for b in batches})
            raise StateError(
                f"{cls.__name__}.concat of {len(batches)} batches of {kinds}: expected one or "
                f"more {cls.__name__}s"
            )
        records = np.concatenate([b.records for b in batches])
        return cls.from_records(records, **batches[0]._scalars())


def shared_fields(*classes: type[RecordBatch]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The array fields that every one of `classes` declares with the same dtype and shape, in
    the first one's order: (names of those with one value per table, names of those with an
    array per table). Kernels copy records field by field over them (``literal_unroll``), so a
    field added to the classes is copied with no edit of the copy."""
    first, *others = classes
    declared = [{f.name: f.metadata for f in dataclasses.fields(c) if "dtype" in f.metadata}  # type: ignore[arg-type]
                for c in others]  # fmt: skip
    shared = [
        f
        for f in dataclasses.fields(first)  # type: ignore[arg-type]
        if "dtype" in f.metadata and all(d.get(f.name) == f.metadata for d in declared)
    ]
    return (
        tuple(f.name for f in shared if not f.metadata["shape"]),
        tuple(f.name for f in shared if f.metadata["shape"]),
    )


def _dtype_text(dtype: np.dtype, cls: type[RecordBatch]) -> str:
    """A record dtype in a few words (the repr of a structured dtype is a page long)."""
    if dtype == cls.DTYPE:
        return f"{cls.__name__}.DTYPE"
    return f"{dtype!s:.60}..." if len(str(dtype)) > 60 else str(dtype)


def _rebuild(cls: type[RecordBatch], records: np.ndarray, scalars: dict[str, Any]) -> RecordBatch:
    # Unpickling: the bytes may come from a file or another process, so the values are checked.
    batch = cls.from_records(records, **scalars)
    batch._check_values()
    return batch
