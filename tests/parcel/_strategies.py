"""Hypothesis strategies for values of HDI types, derived from the IR."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from idlgen import ir
from idlgen.backend import hdi_codec as codegen
from idlgen.wire import parcel

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=6)


def _scalar(kind: ir.ScalarKind) -> st.SearchStrategy[Any]:
    if kind is ir.ScalarKind.BOOL:
        return st.booleans()
    if kind is ir.ScalarKind.F32:
        return st.floats(width=32, allow_nan=False)
    if kind is ir.ScalarKind.F64:
        return st.floats(allow_nan=False)
    lo, hi = kind.bounds
    return st.integers(lo, hi)


def has_out_of_band(
    t: ir.TypeRef, decls: dict[str, ir.Decl], seen: frozenset[str] = frozenset()
) -> bool:
    """Whether values of ``t`` can carry objects that are not bytes (fds, binders, ...)."""
    if isinstance(t, (ir.Handle, ir.SharedMemQueue)):
        return True
    if isinstance(t, ir.Vector):
        return has_out_of_band(t.element, decls, seen)
    if isinstance(t, ir.Map):
        return has_out_of_band(t.key, decls, seen) or has_out_of_band(t.value, decls, seen)
    if isinstance(t, ir.Ref):
        d = decls[t.qualname]
        if isinstance(d, (ir.Interface, ir.Sequenceable)):
            return True
        if isinstance(d, ir.Struct) and t.qualname not in seen:
            return any(has_out_of_band(f.type, decls, seen | {t.qualname}) for f in d.fields)
    return False


def values(
    t: ir.TypeRef, decls: dict[str, ir.Decl], classes: dict[str, Any], depth: int = 0
) -> st.SearchStrategy[Any]:
    """Values of ``t`` that the Parcel codecs must round-trip."""
    small = 3 if depth < 2 else 1
    if isinstance(t, ir.Scalar):
        return _scalar(t.kind)
    if isinstance(t, ir.String):
        return _TEXT
    if isinstance(t, ir.Vector):
        e = t.element
        if isinstance(e, ir.Scalar) and e.kind in (ir.ScalarKind.I8, ir.ScalarKind.U8):
            return st.binary(max_size=9)
        return st.lists(values(e, decls, classes, depth + 1), max_size=small)
    if isinstance(t, ir.Map):
        k = values(t.key, decls, classes, depth + 1)
        return st.dictionaries(k, values(t.value, decls, classes, depth + 1), max_size=small)
    if isinstance(t, ir.Handle):
        if t.kind is ir.HandleKind.FILE_DESCRIPTOR:
            return st.integers(-1, 1000)
        if t.kind is ir.HandleKind.ASHMEM:
            return st.builds(parcel.Ashmem, st.integers(0, 1000), st.integers(1, 2**31 - 1))
        if t.kind is ir.HandleKind.NATIVE_BUFFER:
            return st.none() | st.builds(parcel.NativeBuffer, st.integers())
        return st.just(0)  # Pointer: never marshalled; decodes as the default 0
    if isinstance(t, ir.SharedMemQueue):
        return st.builds(
            parcel.SharedMemQueueMeta,
            st.integers(0, 1000),
            st.integers(0, 2**64 - 1),
            st.integers(0, 2**32 - 1),
        )
    assert isinstance(t, ir.Ref)
    d = decls[t.qualname]
    if isinstance(d, ir.Enum):
        cls = classes[t.qualname]
        lo, hi = d.base.bounds
        known = [m.value for m in d.members if lo <= m.value <= hi]
        raw = st.sampled_from(known) | st.integers(lo, hi) if known else st.integers(lo, hi)
        return raw.map(cls)
    if isinstance(d, ir.Struct):
        cls = classes[t.qualname]
        fields = [values(f.type, decls, classes, depth + 1) for f in d.fields]
        return st.tuples(*fields).map(lambda args: cls(*args))
    if isinstance(d, ir.Union):
        cls = classes[t.qualname]
        options = [
            values(m.type, decls, classes, depth + 1).map(lambda v, n=m.name: cls(**{n: v}))
            for m in d.members
        ]
        return st.one_of(options) if options else st.just(cls())
    if isinstance(d, ir.Sequenceable):
        return st.none() | st.builds(object)
    return st.none()  # interface members are not marshalled


def struct_ref(q: str) -> ir.Ref:
    return ir.Ref(q, ir.RefKind.STRUCT)


def roundtrip(cls: Any, value: Any) -> bytes:
    """Encode/decode ``value`` (with its object table); assert equality; return the bytes."""
    objects: list[object] = []
    data = value.to_parcel(objects)
    back = cls.from_parcel(data, objects)
    assert back == value, (value, back)
    again: list[object] = []
    assert back.to_parcel(again) == data
    assert len(again) == len(objects) and all(a is b or a == b for a, b in zip(again, objects))
    return data


__all__ = ["values", "has_out_of_band", "roundtrip", "struct_ref", "codegen"]
