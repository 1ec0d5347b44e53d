"""Table decoding with verification as it reads (the limits of the C++ ``Verifier``)."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ...errors import DecodeError
from .handlers import (
    ResolvedField,
    K_SCALAR,
    K_STRING,
    K_STRUCT,
    K_TABLE,
    K_UNION,
    K_VECTOR,
    TableDesc,
    DecodeContext,
)
from .registry import new_instance
from .scalars import HH, I32, MAX_DEPTH, MAX_TABLES


def read_table(desc: TableDesc, d: DecodeContext, pos: int, depth: int) -> Any:
    if not desc._ready:
        desc.prepare()
    buf = d.buf
    if d.verify:
        if depth > MAX_DEPTH:
            raise d.fail("maximum nesting depth exceeded", pos, desc.qualname)
        d.tables += 1
        d.charge(4, pos)
        if d.tables > MAX_TABLES:
            raise d.fail("too many tables", pos, desc.qualname)
        if pos & 3:
            raise d.fail("unaligned table", pos, desc.qualname)
    if pos + 4 > d.n:
        raise d.fail("table out of bounds", pos, desc.qualname)
    vt = pos - I32.unpack_from(buf, pos)[0]
    if vt < 0 or vt + 4 > d.n or (d.verify and vt & 1):
        raise d.fail("vtable out of bounds", pos, desc.qualname)
    vsize, tsize = HH.unpack_from(buf, vt)
    if vsize < 4 or vsize & 1 or vt + vsize > d.n:
        raise d.fail("invalid vtable size", vt, desc.qualname)
    if tsize < 4 or pos + tsize > d.n:
        raise d.fail("invalid table size", vt, desc.qualname)
    nslots = (vsize - 4) >> 1
    offs = struct.unpack_from(f"<{nslots}H", buf, vt + 4)
    kw = desc._defaults.copy()
    for attr in desc._fresh:
        kw[attr] = []  # ``= []`` defaults: a new list per object
    if d.verify:
        for r in desc._required:
            if r.slot >= nslots or not offs[r.slot]:
                raise d.fail(f"required field {r.f.name} is missing", pos, desc.qualname)
    by_slot = desc._by_slot
    nmax = min(nslots, len(by_slot))
    verify = d.verify
    dep: dict[str, Any] | None = None
    for slot in range(nmax):
        o = offs[slot]
        if not o:
            continue
        rr = by_slot[slot]
        if rr is None:
            continue  # a hidden union type field (read with its union) or unknown slot
        r = rr
        p = pos + o
        if o + r.size > tsize or (verify and p & (r.align - 1)):
            raise d.fail(f"field {r.f.name} out of table bounds or unaligned", p, desc.qualname)
        k = r.kind
        try:
            if k == K_SCALAR:
                v = r.h.read(d, p, depth)
            elif k == K_STRING or k == K_VECTOR:
                v = r.h.read(d, p, depth)
                if verify and v and r.f.nested:
                    r.f.nested_desc.decode(bytes(v), verify=True, check_identifier=False)
            elif k == K_TABLE:
                v = r.table_desc.read(d, d.uoffset(p), depth + 1)
            elif k == K_STRUCT:
                v = r.struct_desc.read(d, p)
            elif k == K_UNION:
                to = offs[slot - 1]
                ut = 0
                if to:
                    if to + r.union.disc_h.size > tsize:
                        raise d.fail("union type out of table bounds", pos + to)
                    ut = r.union.disc_h.st.unpack_from(buf, pos + to)[0]
                v = None if ut == 0 else r.union.read_value(d, ut, p, depth + 1)
            else:
                v = read_union_vector(desc, d, r, offs, nslots, pos, p, depth)
        except DecodeError as e:
            if e.path:
                raise
            raise DecodeError(
                e.reason, path=f"{desc.qualname}.{r.f.name}", offset=e.offset
            ) from None
        if r.dep:
            if dep is None:
                dep = {}
            dep[r.f.name] = v
        else:
            kw[r.attr] = v
    # Presence: the vtable says which fields were stored (explicit defaults included), and
    # deprecated fields ride along; to_json and re-encoding use both (see Table.decode).
    if desc._plain:
        kw["_fb_vt"] = offs
        if dep is not None:
            kw["_fb_dep"] = dep
        obj = new_instance(desc.cls)  # type: ignore[arg-type]
        obj.__dict__ = kw
        return obj
    obj = desc.cls(**kw)
    try:
        object.__setattr__(obj, "_fb_vt", offs)
        if dep is not None:
            object.__setattr__(obj, "_fb_dep", dep)
    except (AttributeError, TypeError):
        pass  # slotted classes: no presence (encoded like a value built in Python)
    return obj


def read_union_vector(
    desc: TableDesc,
    d: DecodeContext,
    r: ResolvedField,
    offs: Sequence[int],
    nslots: int,
    pos: int,
    p: int,
    depth: int,
) -> Any:
    to = offs[r.slot - 1] if r.slot - 1 < nslots else 0
    u = r.union
    if not to:
        if d.verify:
            raise d.fail("union vector without its type vector", p)
        return None
    dh = u.disc_h
    tcount, tstart = d.vector(pos + to, dh.size, dh.size)
    count, start = d.vector(p, 4, 4)
    if count != tcount:
        raise d.fail("union vector and type vector lengths differ", p)
    types = struct.unpack_from(f"<{count}{dh.fmt}", d.buf, tstart)
    out = []
    for i, t in enumerate(types):
        out.append(None if t == 0 else u.read_value(d, t, start + 4 * i, depth + 1))
    return out
