"""Table encoding: children depth-first in field order, then the table in flatc's write order."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import DecodeError, EncodeError
from .builder import Builder, simple_qsort
from .flex import flex_is_null, flex_dumps, flex_loads
from .handlers import (
    present,
    ResolvedField,
    K_STRING,
    K_STRUCT,
    K_TABLE,
    K_UNION,
    K_VECTOR,
    K_SCALAR,
    ScalarH,
    StringH,
    StructH,
    TableH,
    TableDesc,
)
from .scalars import HH, I32, NP_DTYPE, U16, U32, U64, flatc_hash
from .values import NestedBuffer, ScalarVector


def build_child(
    desc: TableDesc,
    b: Builder,
    r: ResolvedField,
    v: Any,
    items: list[tuple[int, int, int, Any, int]],
    presort: bool,
) -> None:
    """Phase 1 for one non-scalar field: build its out-of-line data now, as flatc does
    while parsing the JSON, and remember what the table will store."""
    k = r.kind
    if k == K_STRING:
        if r.f.shared:
            off = b.shared.get(v)
            if off is None:
                off = b.shared[v] = b.string(v)
        else:
            off = b.string(v)
        items.append((r.rank, 1 + (r.wide > 0), r.slot, off, r.align))
    elif k == K_TABLE:
        items.append((r.rank, 1, r.slot, r.table_desc.build(b, v), 4))
    elif k == K_STRUCT:
        b.align(r.align)  # flatc's ParseTable(struct) aligns the builder while parsing
        items.append((r.rank, 0, r.slot, r.struct_desc.pack(v), r.align))
    elif k == K_VECTOR:
        off = _build_vector(b, r, v, presort)
        items.append((r.rank, 1 + (r.wide > 0), r.slot, off, r.align))
    elif k == K_UNION:
        disc, off = r.union.build_value(b, v)
        dh = r.union.disc_h
        items.append((r.trank, 0, r.slot - 1, dh.pack(disc), dh.size))
        items.append((r.rank, 1, r.slot, off, 4))
    else:  # vector of unions: the types vector comes first in JSON, then the values
        # A None element is a NONE entry (type 0, null offset), as verified buffers may hold.
        members = [(0, None, None) if x is None else r.union.member_of(x) for x in v]
        dh = r.union.disc_h
        types = b"".join(dh.pack(t) for t, _, _ in members)
        items.append((r.trank, 1, r.slot - 1, b.raw_vector(types, len(members), dh.size), 4))
        offs: list[int | None] = []
        for _, h, payload in members:
            if h is None:
                offs.append(None)
            elif isinstance(h, StructH):
                b.align(h.align)
                b.push(h.desc.pack(payload))
                offs.append(b.size)
            else:
                offs.append(h.build(b, payload))
        items.append((r.rank, 1, r.slot, b.offsets_vector(offs), 4))


# What a wrong Python value raises somewhere below ``build``: reported as EncodeError with a path.
ENCODE_ERRORS = (EncodeError, ValueError, TypeError, AttributeError, struct.error, OverflowError)


def encode_error(e: BaseException, seg: str) -> EncodeError:
    """``e`` as an EncodeError whose path starts with ``seg`` (a field name or ``[i]``)."""
    if isinstance(e, EncodeError):
        reason, rest = e.reason, e.path
    else:
        reason, rest = str(e), ""
    if rest and not rest.startswith("["):
        rest = "." + rest
    return EncodeError(reason, path=seg + rest)


_NO_DICT: dict[str, Any] = {}


def build_table(desc: TableDesc, b: Builder, obj: Any) -> int:
    if not desc._ready:
        desc.prepare()
    if not isinstance(obj, desc._type):
        raise EncodeError(f"expected {desc.qualname}, got {type(obj).__name__}")
    items: list[tuple[int, int, int, Any, int]] = []
    # what from_json / decode left on the value (a plain dict lookup: getattr with a default
    # is slow when the attribute is missing, the common case)
    extra = getattr(obj, "__dict__", _NO_DICT)
    order = extra.get("_fb_json_order")
    vt = extra.get("_fb_vt")  # decoded: which fields the buffer stored
    dep = extra.get("_fb_dep")  # deprecated fields (decoded or read from JSON)
    presort = order is None and vt is None  # decoded or JSON order: sorted once, as flatc -b
    if order is None:
        rfs = desc._enc if dep is None else desc._rf
    else:
        rfs = [desc._by_name[n] for n in order if n in desc._by_name]
        for r in desc._required:
            if r.f.name not in order:
                raise EncodeError("required field is missing", path=r.f.name)
    for r in rfs:
        if r.dep:
            if dep is None:
                continue
            v = dep.get(r.f.name)
        else:
            v = getattr(obj, r.attr, None)
        if v is None:
            if r.required:
                raise EncodeError("required field is missing", path=r.f.name)
            continue
        try:
            if r.kind == K_SCALAR:
                if not r.optional and v == r.default:
                    continue
                if r.hashed and isinstance(v, str):
                    v = flatc_hash(r.f.hash, v, r.h.fmt)  # type: ignore[attr-defined]
                data = r.h.pack(v)  # type: ignore[attr-defined]
                if data != r.cmp_default:
                    items.append((r.rank, 0, r.slot, data, r.size))
            else:
                if vt is not None and r.absent is not None and not present(vt, r.slot):
                    if len(v) == 0 if isinstance(r.absent, list) else v == r.absent:
                        continue  # absent from the decoded buffer, still at its default
                if r.f.nested and not len(v):
                    continue  # an empty nested buffer holds nothing flatc could print
                if r.f.flexbuffer and flex_is_null(v):
                    continue  # flatc reads `"flex": null` as an absent field
                build_child(desc, b, r, v, items, presort)
        except ENCODE_ERRORS as e:
            raise encode_error(e, r.f.name) from None
    items.sort()
    # StartTable, fields by size class and descending id, EndTable
    chunks = b.chunks
    size = start = b.size
    minalign = b.minalign
    locs: list[tuple[int, int]] = []
    for _, is_off, slot, v, al in items:
        pad = -size & (al - 1)
        if pad:
            chunks.append(bytes(pad))
            size += pad
        if is_off == 1:
            chunks.append(U32.pack(size + 4 - v))
            size += 4
        elif is_off:  # offset64 / vector64
            chunks.append(U64.pack(size + 8 - v))
            size += 8
        else:
            chunks.append(v)
            size += len(v)
        if al > minalign:
            minalign = al
        locs.append((4 + 2 * slot, size))
    # EndTable: the soffset, then (below it, built later) the vtable unless an identical one
    # was already written (flatc compares against every earlier vtable)
    pad = -size & 3
    if pad:
        chunks.append(bytes(pad))
        size += pad
    if minalign < 4:
        minalign = 4
    table = size + 4
    nv = 4
    for vo, _ in locs:
        if vo + 2 > nv:
            nv = vo + 2
    vt = bytearray(nv)
    HH.pack_into(vt, 0, nv, table - start)
    for vo, pos in locs:
        U16.pack_into(vt, vo, table - pos)
    key = bytes(vt)
    old = b.vtables.get(key)
    if old is None:
        chunks.append(I32.pack(nv))
        chunks.append(key)
        size = table + nv
        b.vtables[key] = size
    else:
        chunks.append(I32.pack(old - table))
        size = table
    b.size = size
    b.minalign = minalign
    return table


def _keyed(desc: TableDesc, items: Sequence[Any]) -> list[tuple[Any, Any]]:
    kr = desc._key
    assert kr is not None
    keyed = []
    for x in items:
        k = getattr(x, kr.attr)
        if k is None:
            k = kr.default
        keyed.append((k.encode("utf-8") if isinstance(k, str) else k, x))
    simple_qsort(keyed, lambda a, c: a[0] < c[0])
    return keyed


def _build_vector(b: Builder, r: ResolvedField, v: Any, presort: bool = True) -> int:
    e = r.vec_elem
    fa = r.f.force_align
    if isinstance(e, ScalarH):
        if isinstance(v, ScalarVector):
            v = v.numpy()
        if isinstance(v, np.ndarray):
            arr = np.ascontiguousarray(v, dtype=NP_DTYPE[e.fmt])
            # no copy here: the view is joined into the buffer at the end
            data: bytes | memoryview = memoryview(arr).cast("B")  # type: ignore[arg-type]
            n = int(arr.shape[0])
        elif isinstance(v, (bytes, bytearray, memoryview)) and e.size == 1:
            data = v if isinstance(v, bytes) else bytes(v)
            n = len(data)
            nd = r.f.nested_desc
            if r.f.flexbuffer and n:
                # flatc prints a flexbuffer as JSON and rebuilds it (sharing all strings and keys,
                # 8-byte aligned) when reading that JSON back: encode what it would build.
                if isinstance(v, NestedBuffer):
                    fa = max(fa, v.align)
                else:
                    try:
                        data = flex_dumps(flex_loads(data))
                        n = len(data)
                    except Exception:  # not a flexbuffer: stored as given
                        pass
                    fa = max(fa, 8)
            elif isinstance(v, NestedBuffer):
                fa = max(fa, v.align)  # built from a JSON object, exactly as flatc builds it
            elif nd is not None and n:
                # flatc prints a nested buffer as an object and rebuilds it from that object
                # when reading the JSON back: encode what it would build.
                try:
                    data, al = nd.encode_nested(nd.decode(data, check_identifier=False))
                    n = len(data)
                    fa = max(fa, al)
                except (DecodeError, ValueError):
                    pass
        else:
            if r.f.hash:
                v = [flatc_hash(r.f.hash, x, e.fmt) if isinstance(x, str) else x for x in v]
            n = len(v)
            try:
                data = struct.pack(f"<{n}{e.fmt}", *v)
            except (struct.error, OverflowError) as ex:
                raise EncodeError(str(ex)) from None
        return b.raw_vector(data, n, e.size, fa, 8 if r.wide == 2 else 4)
    if isinstance(e, StructH):
        items = list(v)
        if items:
            b.align(e.align)  # flatc parses each element struct (StartStruct aligns)
        desc = e.desc
        kf = desc.key
        if kf:
            for _ in range(2 if presort else 1):  # see the table case below
                keyed = [(getattr(x, kf), x) for x in items]
                simple_qsort(keyed, lambda a, c: a[0] < c[0])
                items = [x for _, x in keyed]
        sdata = b"".join(desc.pack(x) for x in items)
        return b.raw_vector(sdata, len(items), e.align, fa, 8 if r.wide == 2 else 4)
    if isinstance(e, StringH):
        offs = [b.string(x) for x in v]
        return b.offsets_vector(offs, fa)
    if isinstance(e, TableH):
        items = list(v)
        e.desc.prepare()
        if presort and e.desc._key is not None:
            # A value not read from JSON is encoded as flatc encodes its to_json(), which lists
            # the vector already sorted: children are built in sorted order, then sorted again.
            items = [x for _, x in _keyed(e.desc, items)]
        offs = []
        for i, x in enumerate(items):
            try:
                offs.append(e.desc.build(b, x))
            except ENCODE_ERRORS as ex:
                raise encode_error(ex, f"[{i}]") from None
        td = e.desc
        if td._key is not None:
            kr = td._key
            keyed = []
            for x, o in zip(items, offs):
                k = getattr(x, kr.attr)
                if k is None:
                    k = kr.default
                if isinstance(k, str):
                    k = k.encode("utf-8")
                keyed.append((k, o))
            simple_qsort(keyed, lambda a, c: a[0] < c[0])
            offs = [o for _, o in keyed]
        return b.offsets_vector(offs, fa)
    raise EncodeError("unsupported vector element")
