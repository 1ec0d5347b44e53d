"""Shared helpers for the Parcel tests: NNRt schemas, runtime classes, JSON value conversion."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

from idlgen import ir

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"
VECTORS = SHARED / "vectors" / "parcel"
CORPUS = SHARED / "corpus" / "hdi"
from .._gen import attr_of, generate_schema


@functools.cache
def nnrt(version: str) -> tuple[ir.Schema, dict[str, Any]]:
    """The repository's NNRt schema of ``version`` (``v1_0``/``v2_1``) and its generated classes
    by qualified name."""
    root = REPO / "schemas" / "hdi"
    g = generate_schema(root / "nnrt" / version, roots={"ohos.hdi": root})
    return g.schema, g.classes


def from_value(t: ir.TypeRef, v: Any, decls: dict[str, ir.Decl], classes: dict[str, Any]) -> Any:
    """A JSON value (vectors README conventions) as the Python value of type ``t``."""
    if isinstance(t, ir.Scalar):
        return (
            float(v) if t.kind.is_float else (bool(v) if t.kind is ir.ScalarKind.BOOL else int(v))
        )
    if isinstance(t, ir.String):
        return v
    if isinstance(t, ir.Vector):
        e = t.element
        if isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.I8:
            return bytes(x & 0xFF for x in v)
        return [from_value(e, x, decls, classes) for x in v]
    if isinstance(t, ir.Map):
        return {
            from_value(t.key, k, decls, classes): from_value(t.value, x, decls, classes)
            for k, x in v
        }
    assert isinstance(t, ir.Ref), t
    d = decls[t.qualname]
    cls = classes[t.qualname]
    if isinstance(d, ir.Enum):
        return cls(v)
    assert isinstance(d, ir.Struct)
    return cls(*(from_value(f.type, v[f.name], decls, classes) for f in d.fields))


def to_value(t: ir.TypeRef, v: Any, decls: dict[str, ir.Decl]) -> Any:
    """The JSON form of a decoded Python value (inverse of :func:`from_value`)."""
    if isinstance(t, ir.Scalar):
        if t.kind is ir.ScalarKind.BOOL:
            assert isinstance(v, bool)
            return v
        if t.kind.is_float:
            assert isinstance(v, float)
            return v
        assert type(v) is int
        return v
    if isinstance(t, ir.String):
        assert isinstance(v, str)
        return v
    if isinstance(t, ir.Vector):
        e = t.element
        if isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.I8:
            assert isinstance(v, bytes)
            return [x - 256 if x > 127 else x for x in v]
        assert isinstance(v, list)
        return [to_value(e, x, decls) for x in v]
    if isinstance(t, ir.Map):
        assert isinstance(v, dict)
        return [
            [to_value(t.key, k, decls), to_value(t.value, x, decls)] for k, x in sorted(v.items())
        ]
    assert isinstance(t, ir.Ref), t
    d = decls[t.qualname]
    if isinstance(d, ir.Enum):
        assert type(v).__name__ == d.name, type(v)
        return int(v)
    assert isinstance(d, ir.Struct) and type(v).__name__ == d.name
    return {f.name: to_value(f.type, getattr(v, attr_of(type(v), f.name)), decls) for f in d.fields}


def same(a: Any, b: Any) -> bool:
    """Deep equality where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b) and type(a) is type(b)


def padding_positions(fmt: str) -> set[int]:
    """Byte offsets that are C++ padding (``x``) in a little-endian ``struct`` format."""
    import re
    import struct

    out: set[int] = set()
    pos = 0
    for count, code in re.findall(r"(\d*)([a-zA-Z?])", fmt.lstrip("<")):
        n = int(count) if count else 1
        if code == "x":
            out.update(range(pos, pos + n))
            pos += n
        elif code == "s":
            pos += n
        else:
            pos += n * struct.calcsize(code)
    return out
