"""Hypothesis strategies producing random values of a FlatBuffers table from its descriptor.

Floats are drawn from values that survive flatc's JSON printer (6 / 12 fixed decimals), so that
``flatc -b`` of our JSON can be compared byte for byte.
"""

from __future__ import annotations

from typing import Any

from flatbuffers import flexbuffers
from hypothesis import strategies as st

from idlgen.wire import flatbuffers as fb

_INT = {
    "b": (-(1 << 7), (1 << 7) - 1),
    "B": (0, (1 << 8) - 1),
    "h": (-(1 << 15), (1 << 15) - 1),
    "H": (0, (1 << 16) - 1),
    "i": (-(1 << 31), (1 << 31) - 1),
    "I": (0, (1 << 32) - 1),
    "q": (-(1 << 63), (1 << 63) - 1),
    "Q": (0, (1 << 64) - 1),
}

FLEX = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(1 << 63), (1 << 63) - 1)
    | st.integers(-(1 << 20), 1 << 20).map(lambda i: i / 4)
    | st.text(max_size=4),
    lambda kids: st.lists(kids, max_size=3)
    | st.dictionaries(st.text("abxyz", min_size=1, max_size=2), kids, max_size=3),
    max_leaves=6,
)

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), max_codepoint=0x1FFFF), max_size=8)


def scalar(h: fb.ScalarH) -> st.SearchStrategy[Any]:
    if h.enum is not None:
        cls: Any = h.enum.cls
        members = list(cls.__members__.values())
        if h.enum.bit_flags:
            return st.lists(st.sampled_from(members), max_size=3).map(
                lambda ms: cls(sum({int(m) for m in ms}))
            )
        return st.sampled_from(members)
    if h.fmt == "?":
        return st.booleans()
    if h.fmt in "fd":
        return st.integers(-(1 << 20), 1 << 20).map(lambda i: i / 4)
    lo, hi = _INT[h.fmt]
    return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0]))


def value(h: fb.Handler, depth: int, f: fb.Field | None = None) -> st.SearchStrategy[Any]:
    if isinstance(h, fb.ScalarH):
        return scalar(h)
    if isinstance(h, fb.StringH):
        return _TEXT
    if isinstance(h, fb.StructH):
        return struct(h.desc)
    if isinstance(h, fb.TableH):
        return table(h.desc, depth + 1)
    if isinstance(h, fb.ArrayH):
        n = h.n
        if n <= 4:
            return st.lists(value(h.elem, depth), min_size=n, max_size=n)
        # long arrays: a few drawn elements repeated (keeps examples small for hypothesis)
        return st.lists(value(h.elem, depth), min_size=1, max_size=3).map(lambda xs: (xs * n)[:n])
    if isinstance(h, fb.VectorH):
        e = h.elem
        if isinstance(e, fb.ScalarH) and e.fmt == "B" and e.enum is None:
            return st.binary(max_size=6)
        if isinstance(e, fb.TableH) and depth >= 1:
            return st.just([])  # keeps recursive schemas (Monster) small
        # flatc's key sort is not stable: keys are kept unique (ties have no defined order)
        if isinstance(e, fb.StructH) and e.desc.key:
            k = e.desc.key
            return st.lists(value(e, depth + 1), max_size=3, unique_by=lambda x: getattr(x, k))
        if isinstance(e, fb.TableH) and (e.desc.prepare() or e.desc._key is not None):
            return st.lists(
                value(e, depth + 1), max_size=3, unique_by=lambda x: fb.key_value(e.desc, x)
            )
        return st.lists(value(e, depth + 1), max_size=3)
    raise TypeError(type(h).__name__)


def union_value(u: fb.Union, depth: int) -> st.SearchStrategy[Any]:
    u.prepare()
    choices = []
    for name, _, _ in u.members:
        _, h = u.by_name[name]
        if isinstance(h, fb.TableH) and depth >= 2:
            continue
        choices.append(value(h, depth).map(lambda v, n=name, hh=h: u.wrap(n, hh, v)))
    return st.one_of(choices) if choices else st.none()


def struct(desc: fb.Struct[Any]) -> st.SearchStrategy[Any]:
    desc.prepare()
    return st.fixed_dictionaries({attr: value(h, 0) for attr, h in desc.handlers}).map(
        lambda kw: desc.cls(**kw)
    )


_CACHE: dict[tuple[int, int], st.SearchStrategy[Any]] = {}


def table(desc: fb.Table[Any], depth: int = 0) -> st.SearchStrategy[Any]:
    key = (id(desc), depth)
    if key not in _CACHE:
        _CACHE[key] = _table(desc, depth)
    return _CACHE[key]


def _table(desc: fb.Table[Any], depth: int) -> st.SearchStrategy[Any]:
    desc.prepare()
    fields: dict[str, st.SearchStrategy[Any]] = {}
    required: dict[str, st.SearchStrategy[Any]] = {}
    for r in desc._rf:
        f = r.f
        if f.deprecated or (f.nested and depth > 0):
            continue
        if f.flexbuffer:
            fields[r.attr] = st.one_of(st.none(), FLEX.map(flexbuffers.Dumps))
            continue
        if f.nested:
            nd = f.nested_desc
            fields[r.attr] = st.one_of(st.none(), table(nd, 2).map(nd.encode))
            continue
        if r.kind == fb.K_UNION:
            s = union_value(r.union, depth + 1)
        elif r.kind == fb.K_UNION_VEC:
            s = st.lists(
                union_value(r.union, depth + 1).filter(lambda v: v is not None), max_size=3
            )
        elif r.kind == fb.K_TABLE and depth >= 2:
            s = st.none() if not f.required else table(r.table_desc, depth + 1)
        else:
            s = value(r.h, depth, f)
        if f.required:
            required[r.attr] = s
        else:
            fields[r.attr] = st.one_of(st.none(), s) if f.optional else s
    return st.fixed_dictionaries(required, optional=fields).map(lambda kw: desc.cls(**kw))
