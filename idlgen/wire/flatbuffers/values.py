"""Python values with FlatBuffers meaning: union members, nested buffers, zero-copy vectors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class UnionValue:
    """A union value whose member cannot be told from its Python type (aliases of one type,
    several string members): ``UnionValue("M2", monster)``."""

    type: str
    value: Any


class NestedBuffer(bytes):
    """A ``nested_flatbuffer`` built from a JSON object: the bytes plus the alignment flatc
    forces on the enclosing vector (equal to plain ``bytes`` of the same content)."""

    align: int

    def __new__(cls, data: bytes, align: int) -> NestedBuffer:
        self = super().__new__(cls, data)
        self.align = align
        return self


class ScalarVector(Sequence[Any]):
    """A read-only, zero-copy view of a scalar vector inside a decoded buffer.

    Compares equal by value to lists, tuples, bytes and other vectors; ``.numpy()`` gives the
    read-only array; ``np.asarray(v)`` works too.
    """

    __slots__ = ("_a",)

    def __init__(self, array: np.ndarray[Any, Any]) -> None:
        self._a = array

    def numpy(self) -> np.ndarray[Any, Any]:
        return self._a

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        return self._a if dtype is None else self._a.astype(dtype)

    def __len__(self) -> int:
        return int(self._a.shape[0])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self._a[i].tolist()
        return self._a[i].item()

    def __iter__(self) -> Any:
        return iter(self._a.tolist())

    def tobytes(self) -> bytes:
        return self._a.tobytes()

    def __bytes__(self) -> bytes:
        return self._a.tobytes()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScalarVector):
            other = other._a
        if isinstance(other, (bytes, bytearray, memoryview)):
            return self._a.dtype.itemsize == 1 and self._a.tobytes() == bytes(other)
        if isinstance(other, (list, tuple, np.ndarray)):
            if len(other) != len(self):
                return False
            return bool(np.array_equal(self._a, np.asarray(other), equal_nan=False))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        n = len(self)
        head = ", ".join(repr(x) for x in self._a[:8].tolist())
        return f"ScalarVector([{head}{', ...' if n > 8 else ''}], len={n}, dtype={self._a.dtype})"
