"""Runtime helpers imported by generated record classes (dict conversion, open enums)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

__all__ = ["OpenIntEnum", "enum_from", "bytes_from", "map_items", "union_to_dict"]

E = TypeVar("E", bound=enum.Enum)


class OpenIntEnum(enum.IntEnum):
    """An IntEnum that keeps unknown values.

    The C++ side stores whatever number arrives (``static_cast<E>(u64)``); so do we: calling the
    class with an unknown int returns a pseudo-member named ``UNKNOWN_<n>`` carrying the raw
    value, instead of raising.
    """

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        pseudo = int.__new__(cls, value)
        pseudo._name_ = f"UNKNOWN_{value}" if value >= 0 else f"UNKNOWN_MINUS_{-value}"
        pseudo._value_ = value
        return pseudo


def enum_from(cls: type[E], v: object) -> E:
    """An enum member from an int or a member name (the schema's or the Python one)."""
    if isinstance(v, cls):
        return v
    if isinstance(v, str):
        for name in (v, v + "_"):
            member = cls.__members__.get(name)
            if member is not None:
                return member
        raise ValueError(f"{v!r} is not a member of {cls.__name__}")
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{cls.__name__} value must be an int or a name, not {type(v).__name__}")
    return cls(v)


def bytes_from(v: object) -> bytes:
    """``bytes`` from bytes-like input or a list of ints (signed bytes are taken mod 256)."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, Iterable) and not isinstance(v, str):
        out = bytearray()
        for x in v:
            if isinstance(x, bool) or not isinstance(x, int) or not -128 <= x <= 255:
                raise ValueError(f"byte value out of range: {x!r}")
            out.append(x & 0xFF)
        return bytes(out)
    raise TypeError(f"expected bytes or a list of ints, not {type(v).__name__}")


def map_items(v: object) -> Iterable[tuple[Any, Any]]:
    """Key/value pairs from a dict or a list of ``[key, value]`` pairs."""
    if isinstance(v, Mapping):
        return list(v.items())
    if isinstance(v, Iterable) and not isinstance(v, (str, bytes)):
        pairs = []
        for item in v:
            k, val = item
            pairs.append((k, val))
        return pairs
    raise TypeError(f"expected a dict or a list of pairs, not {type(v).__name__}")


def union_to_dict(v: object) -> object:
    """A FlatBuffers union value in dict form (records → dicts, strings as they are)."""
    to_dict = getattr(v, "to_dict", None)
    return to_dict() if callable(to_dict) else v
