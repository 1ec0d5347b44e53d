"""``idlgen convert``: FlatBuffers JSON ↔ ``flatc -b`` bytes, HDI JSON ↔ MessageParcel bytes.

FlatBuffers goes through :mod:`idlgen.wire.fbjson` (flatc's JSON reader and ``--json
--strict-json`` printer, streaming) and the table descriptor's encoder/verifier: JSON → bytes
equals ``flatc -b``; bytes → JSON equals ``flatc --json --strict-json`` (decoded values are
presence-exact, key-sorted vectors keep the bytes' order). HDI records use the conventions of
the Parcel golden vectors: fields by IDL name, enums as ints, ``byte[]`` and arrays as lists,
maps as ``[key, value]`` pairs, unions as ``{member: value}``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from .. import ir
from ..errors import DecodeError, EncodeError
from .schema import Compiled

__all__ = ["to_binary", "to_json", "jsonable", "hdi_json"]


def to_binary(c: Compiled, text: str, *, size_prefixed: bool = False) -> bytes:
    """JSON text → bytes; bad JSON (or a value the wire cannot hold) raises DecodeError."""
    if c.kind == "fbs":
        from ..wire import fbjson

        value = fbjson.from_json(c.codec, text)
        try:
            data: bytes = c.codec.encode(value, size_prefixed=size_prefixed)
        except EncodeError as e:
            raise DecodeError(f"cannot encode {c.qualname}: {e}") from None
        return data
    try:
        d = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise DecodeError(f"invalid JSON for {c.qualname}: {e}") from None
    if not isinstance(d, dict):
        raise DecodeError(f"invalid JSON for {c.qualname}: expected an object")
    try:
        value = c.codec.from_dict(d)
        objects: list[object] = []
        data = value.to_parcel(objects)
    except (ValueError, TypeError, KeyError, OverflowError, EncodeError) as e:
        raise DecodeError(f"invalid value for {c.qualname}: {e}") from None
    return data


def to_json(
    c: Compiled, data: bytes, *, raw_binary: bool = False, size_prefixed: bool = False
) -> str:
    """Bytes → JSON text; malformed bytes raise DecodeError."""
    if c.kind == "fbs":
        from ..wire import fbjson

        value = c.codec.decode(
            data, size_prefixed=size_prefixed, check_identifier=False if raw_binary else None
        )
        return fbjson.to_json(c.codec, value)
    value = c.codec.from_parcel(data)
    decls = c.schema.decls()
    d = hdi_json(ir.Ref(c.qualname, ir.RefKind.STRUCT), value.to_dict(), decls)
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"


def hdi_json(t: ir.TypeRef, v: Any, decls: Mapping[str, ir.Decl]) -> Any:
    """A ``to_dict`` value of HDI type ``t`` in the golden vectors' JSON conventions: ``byte[]``
    as signed ints, ``unsigned char[]`` as 0..255, maps as ``[key, value]`` pairs."""
    if v is None:
        return None
    if isinstance(t, (ir.Vector, ir.FixedArray)):
        e = t.element
        if isinstance(v, (bytes, bytearray, memoryview)):
            signed = isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.I8
            return [x - 256 if signed and x > 127 else x for x in bytes(v)]
        return [hdi_json(e, x, decls) for x in v]
    if isinstance(t, ir.Map):
        return [[hdi_json(t.key, k, decls), hdi_json(t.value, x, decls)] for k, x in v.items()]
    if isinstance(t, ir.Ref) and isinstance(v, dict):
        d = decls.get(t.qualname)
        if isinstance(d, ir.Struct):
            types = {f.name: f.type for f in d.fields}
        elif isinstance(d, ir.Union):
            types = {m.name: m.type for m in d.members}
        else:
            return jsonable(v)
        return {
            k: hdi_json(types[k], x, decls) if k in types else jsonable(x) for k, x in v.items()
        }
    return jsonable(v)


def jsonable(v: Any) -> Any:
    """A ``to_dict`` value in the golden vectors' JSON conventions."""
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: jsonable(x) for k, x in v.items()}
        return [[jsonable(k), jsonable(x)] for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray, memoryview)):
        return list(bytes(v))
    if isinstance(v, float) and not math.isfinite(v):
        return v  # json writes NaN/Infinity, which json.loads reads back
    if hasattr(v, "tolist"):
        return v.tolist()
    return v
