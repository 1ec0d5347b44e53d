"""The regions of a FlatBuffer (``idlgen annotate`` on a ``.fbs`` root), as ``flatc --annotate``
lays them out: header, vtables, tables (the vtable offset) and their fields, vectors, strings,
out-of-line union structs; the rest is padding or unreachable.

The walk follows offsets from the root with the verifier's bounds checks but does not stop at
the first problem: every object is visited once (shared vtables and strings included), the
work is charged against the buffer size, and what cannot be explained stays a gap.
"""

from __future__ import annotations

import struct
from typing import Any

from ..wire.flatbuffers.handlers import (
    K_SCALAR,
    K_STRING,
    K_STRUCT,
    K_TABLE,
    K_UNION,
    K_UNION_VEC,
    K_VECTOR,
    ArrayH,
    ScalarH,
    StringH,
    StructH,
    TableH,
    VectorH,
)
from .regions import Claims

__all__ = ["walk_flatbuffer"]

_CTYPE = {
    "b": "int8_t",
    "B": "uint8_t",
    "h": "int16_t",
    "H": "uint16_t",
    "i": "int32_t",
    "I": "uint32_t",
    "q": "int64_t",
    "Q": "uint64_t",
    "f": "float",
    "d": "double",
    "?": "bool",
}
#: vectors with more elements than this get one region for all their elements
_EACH = 64


def _u(data: bytes, fmt: str, p: int) -> int:
    v: int = struct.unpack_from("<" + fmt, data, p)[0]
    return v


def _scalar_text(h: ScalarH, data: bytes, p: int) -> str:
    v = struct.unpack_from("<" + h.fmt, data, p)[0]
    e = h.enum
    if e is not None:
        for mv, name in e.names:
            if mv == v:
                return f"{v} ({name})"
    return repr(v) if isinstance(v, float) else str(v)


class _Walk:
    def __init__(self, data: bytes) -> None:
        self.c = Claims(data)
        self.data = data
        self.n = len(data)
        self.seen: set[tuple[str, int]] = set()
        self.vtables: dict[int, tuple[tuple[int, ...], list[tuple[int, int]]]] = {}
        self.todo: list[tuple[Any, ...]] = []

    # -- helpers ---------------------------------------------------------------------------
    def ok(self, p: int, size: int) -> bool:
        return 0 <= p and p + size <= self.n

    def target(self, p: int, wide: bool, what: str) -> int | None:
        """The position an offset at ``p`` points to (None, with a problem, if nowhere)."""
        size = 8 if wide else 4
        if not self.ok(p, size):
            return None
        o = _u(self.data, "Q" if wide else "I", p)
        t = p + o
        if o == 0 or t >= self.n:
            self.c.problem(p, f"{what}: offset {o} points outside the buffer")
            return None
        return t

    def offset_field(self, p: int, wide: bool, section: str, label: str) -> int | None:
        size = 8 if wide else 4
        t = self.target(p, wide, label)
        value = f"{_u(self.data, 'Q' if wide else 'I', p)} → {t:#x}" if t is not None else "?"
        self.c.claim(p, size, "field", section, "UOffset64" if wide else "UOffset32", value, label)
        return t

    # -- objects ---------------------------------------------------------------------------
    def struct(self, desc: Any, p: int, kind: str, section: str, prefix: str) -> None:
        desc.prepare()
        if not self.ok(p, desc.size):
            self.c.problem(p, f"{prefix}: struct {desc.qualname} runs past the buffer")
        off = 0
        for (attr, name, _), (_, h) in zip(desc.fields, desc.handlers):
            base: Any = h.elem if isinstance(h, ArrayH) else h
            count = h.n if isinstance(h, ArrayH) else 1
            size = base.size
            align = base.align if isinstance(base, StructH) else base.size
            off += -off & (align - 1)
            for i in range(count):
                where = p + off + i * size
                label = f"{prefix}.{name}" + (f"[{i}]" if isinstance(h, ArrayH) else "")
                if isinstance(base, StructH):
                    self.struct(base.desc, where, kind, section, label)
                elif self.ok(where, size):
                    self.c.claim(
                        where, size, kind, section, _CTYPE.get(base.fmt, base.fmt),
                        _scalar_text(base, self.data, where),
                        f"struct field `{label}` of '{desc.qualname}'",
                    )  # fmt: skip
            off += size * count
        # internal and trailing padding of the struct
        self.padding(p, min(p + desc.size, self.n), section)

    def table(self, desc: Any, pos: int, section_name: str) -> None:
        if ("table", pos) in self.seen:
            return
        self.seen.add(("table", pos))
        desc.prepare()
        q = desc.qualname
        section = f"{section_name} ({q})"
        if not self.ok(pos, 4) or pos & 3:
            self.c.problem(pos, f"table {q} at {pos:#x} is out of bounds or unaligned")
            return
        soff = struct.unpack_from("<i", self.data, pos)[0]
        vt = pos - soff
        self.c.claim(pos, 4, "table", section, "SOffset32", f"{soff} → {vt:#x}", "offset to vtable")
        if vt < 0 or not self.ok(vt, 4) or vt & 1:
            self.c.problem(pos, f"table {q}: vtable offset {soff} points outside the buffer")
            return
        vsize, tsize = struct.unpack_from("<HH", self.data, vt)
        vsec = f"vtable ({q})"
        first = ("vtable", vt) not in self.seen
        self.seen.add(("vtable", vt))
        if first:
            self.c.claim(vt, 2, "vtable", vsec, "uint16_t", str(vsize), "size of this vtable")
            self.c.claim(
                vt + 2, 2, "vtable", vsec, "uint16_t", str(tsize), "size of referring table"
            )
        if vsize < 4 or vsize & 1 or not self.ok(vt, vsize):
            self.c.problem(vt, f"vtable of {q}: invalid size {vsize}")
            return
        if tsize < 4:
            self.c.problem(vt, f"vtable of {q}: table size {tsize} is too small")
            return
        if not self.ok(pos, tsize):  # annotate what the buffer still holds
            self.c.problem(vt, f"vtable of {q}: table size {tsize} runs past the buffer")
            tsize = self.n - pos
        nslots = (vsize - 4) >> 1
        by_slot = desc._by_slot
        cached = self.vtables.get(vt)
        if cached is None:  # read (and labelled) once, however many tables share it
            offs = struct.unpack_from(f"<{nslots}H", self.data, vt + 4)
            present = [(slot, o) for slot, o in enumerate(offs) if o]
            self.vtables[vt] = cached = (offs, present)
            if not self.c.spend(nslots):
                return
            for slot, o in enumerate(offs):
                self.c.claim(
                    vt + 4 + 2 * slot, 2, "vtable", vsec, "VOffset16", str(o),
                    f"offset to field `{self._slot_name(desc, slot)}` (id: {slot})"
                    + ("" if o else " <absent>"),
                )  # fmt: skip
        elif not self.c.spend(1 + len(cached[1])):
            return
        offs, present = cached
        for slot, o in present:
            r = by_slot[slot] if slot < len(by_slot) else None
            name = self._slot_name(desc, slot)
            if r is None and not name.endswith("_type"):
                continue  # an unknown field: its bytes stay a gap inside the table
            p = pos + o
            if r is None:  # a union's type field
                u = by_slot[slot + 1]
                if u.kind == K_UNION:
                    h = u.union.disc_h
                    if o + h.size <= tsize:
                        t = _u(self.data, h.fmt, p)
                        member = u.union.by_value.get(t, ("?", None))[0]
                        self.c.claim(
                            p, h.size, "field", section, f"UType{8 * h.size}", f"{t} ({member})",
                            f"table field `{name}` (union type)",
                        )  # fmt: skip
                    else:
                        self.c.problem(p, f"{q}.{name}: outside its table")
                else:  # the type vector of a vector of unions
                    if o + 4 <= tsize:
                        self.offset_field(p, False, section, f"offset to field `{name}` (vector)")
                continue
            self.field(desc, r, pos, p, o, tsize, offs, section)
        # the table's own padding
        self.padding(pos, min(pos + tsize, self.n), section)

    def padding(self, start: int, end: int, section: str) -> None:
        """Claim the bytes of ``[start, end)`` nothing else explained as the object's padding."""
        if not self.c.spend(max(0, end - start) // 8):
            return
        free = self.c.free
        i = free.find(1, start, end)
        while i >= 0:
            j = free.find(0, i, end)
            j = end if j < 0 else j
            self.c.claim(i, j - i, "padding", section, f"uint8_t[{j - i}]", "", "padding")
            i = free.find(1, j, end)

    @staticmethod
    def _slot_name(desc: Any, slot: int) -> str:
        by_slot = desc._by_slot
        r = by_slot[slot] if slot < len(by_slot) else None
        if r is not None:
            return str(r.f.name)
        nxt = by_slot[slot + 1] if slot + 1 < len(by_slot) else None
        if nxt is not None and nxt.kind in (K_UNION, K_UNION_VEC):
            return f"{nxt.f.name}_type"
        return f"<unknown field {slot}>"

    def field(
        self,
        desc: Any,
        r: Any,
        pos: int,
        p: int,
        o: int,
        tsize: int,
        offs: tuple[int, ...],
        section: str,
    ) -> None:
        q = desc.qualname
        name = r.f.name
        if o + r.size > tsize:
            self.c.problem(p, f"{q}.{name}: field outside its table")
            return
        k = r.kind
        path = f"{q}.{name}"
        if k == K_SCALAR:
            h = r.h
            self.c.claim(
                p, r.size, "field", section, _CTYPE.get(h.fmt, h.fmt),
                _scalar_text(h, self.data, p), f"table field `{name}`",
            )  # fmt: skip
        elif k == K_STRUCT:
            self.struct(r.struct_desc, p, "field", section, name)
        elif k == K_STRING:
            t = self.offset_field(p, r.wide != 0, section, f"offset to field `{name}` (string)")
            if t is not None:
                self.todo.append(("string", t, path))
        elif k == K_TABLE:
            t = self.offset_field(p, False, section, f"offset to field `{name}` (table)")
            if t is not None:
                self.todo.append(("table", t, r.table_desc, "table"))
        elif k == K_VECTOR:
            t = self.offset_field(p, r.wide != 0, section, f"offset to field `{name}` (vector)")
            if t is not None:
                self.todo.append(("vector", t, r.vec_elem, path, r.wide))
        elif k == K_UNION:
            to = offs[r.slot - 1] if r.slot >= 1 else 0
            ut = _u(self.data, r.union.disc_h.fmt, pos + to) if to and to < tsize else 0
            member = r.union.by_value.get(ut)
            what = f"union of type `{member[0]}`" if member else "union"
            t = self.offset_field(p, False, section, f"offset to field `{name}` ({what})")
            if t is not None and member is not None:
                self.todo.append(("member", t, member[1], path))
            elif t is not None:
                self.c.problem(p, f"{path}: unknown union type {ut}")
        elif k == K_UNION_VEC:
            t = self.offset_field(p, False, section, f"offset to field `{name}` (vector)")
            to = offs[r.slot - 1] if r.slot >= 1 else 0
            types: list[int] = []
            if to:
                tv = self.target(pos + to, False, f"{path}_type")
                if tv is not None:
                    types = self.vector(tv, r.union.disc_h, f"{path}_type", 0)
            if t is not None:
                self.todo.append(("unions", t, r.union, path, types))

    def vector(self, t: int, elem: Any, path: str, wide: int) -> list[int]:
        """Claim a vector's length and elements; returns scalar values (union type vectors)."""
        if ("vector", t) in self.seen:
            return []
        self.seen.add(("vector", t))
        section = f"{'vector64' if wide == 2 else 'vector'} ({path})"
        lsize = 8 if wide == 2 else 4
        if not self.ok(t, lsize):
            self.c.problem(t, f"{path}: vector length outside the buffer")
            return []
        count = _u(self.data, "Q" if wide == 2 else "I", t)
        self.c.claim(
            t, lsize, "vector", section, "uint32_t", str(count), "length of vector (# items)"
        )
        start = t + lsize
        if isinstance(elem, ScalarH):
            esize = elem.size
        elif isinstance(elem, StructH):
            esize = elem.size
        else:
            esize = 4
        if start + count * esize > self.n:
            self.c.problem(t, f"{path}: {count} elements of {esize} bytes run past the buffer")
            self.c.claim(
                start, self.n - start, "vector", section, "uint8_t[]", "", "elements (cut short)"
            )
            return []
        out: list[int] = []
        if isinstance(elem, ScalarH):
            ctype = _CTYPE.get(elem.fmt, elem.fmt)
            if count <= _EACH:
                for i in range(count):
                    p = start + i * esize
                    self.c.claim(
                        p, esize, "vector", section, ctype, _scalar_text(elem, self.data, p),
                        f"value[{i}]",
                    )  # fmt: skip
                    out.append(_u(self.data, elem.fmt, p))
            else:
                self.c.claim(
                    start, count * esize, "vector", section, f"{ctype}[{count}]", "",
                    f"values [0, {count})",
                )  # fmt: skip
        elif isinstance(elem, StructH):
            if count <= _EACH:
                for i in range(count):
                    self.struct(elem.desc, start + i * esize, "vector", section, f"[{i}]")
            else:
                self.c.claim(
                    start, count * esize, "vector", section, f"{elem.desc.qualname}[{count}]",
                    "", f"structs [0, {count})",
                )  # fmt: skip
        else:
            what = "string" if isinstance(elem, StringH) else "table"
            for i in range(count):
                p = start + 4 * i
                tt = self.target(p, False, f"{path}[{i}]")
                value = f"{_u(self.data, 'I', p)} → {tt:#x}" if tt is not None else "?"
                if not self.c.claim(
                    p, 4, "vector", section, "UOffset32", value, f"offset to {what}[{i}]"
                ):
                    if self.c.budget < 0:
                        break
                if tt is None:
                    continue
                if isinstance(elem, StringH):
                    self.todo.append(("string", tt, path))
                elif isinstance(elem, TableH):
                    self.todo.append(("table", tt, elem.desc, "table"))
        return out

    def string(self, t: int, path: str) -> None:
        if ("string", t) in self.seen:
            return
        self.seen.add(("string", t))
        section = f"string ({path})"
        if not self.ok(t, 4):
            self.c.problem(t, f"{path}: string length outside the buffer")
            return
        count = _u(self.data, "I", t)
        self.c.claim(t, 4, "string", section, "uint32_t", str(count), "length of string")
        start = t + 4
        if start + count + 1 > self.n:
            self.c.problem(t, f"{path}: string of {count} bytes runs past the buffer")
            self.c.claim(
                start, self.n - start, "string", section, "char[]", "", "string (cut short)"
            )
            return
        text = self.data[start : start + min(count, 40)].decode("utf-8", "replace")
        if count:
            self.c.claim(
                start, count, "string", section, f"char[{count}]", repr(text), "string literal"
            )
        nul = self.data[start + count]
        self.c.claim(start + count, 1, "string", section, "char", str(nul), "string terminator")
        if nul:
            self.c.problem(start + count, f"{path}: string is not NUL-terminated")

    def member(self, t: int, h: Any, path: str) -> None:
        if isinstance(h, TableH):
            self.table(h.desc, t, "table")
        elif isinstance(h, StructH):
            if ("struct", t) not in self.seen:
                self.seen.add(("struct", t))
                self.struct(h.desc, t, "union", f"union ({path})", path.rsplit(".", 1)[-1])
        elif isinstance(h, StringH):
            self.string(t, path)

    def unions(self, t: int, u: Any, path: str, types: list[int]) -> None:
        if ("unions", t) in self.seen:
            return
        self.seen.add(("unions", t))
        section = f"vector ({path})"
        if not self.ok(t, 4):
            self.c.problem(t, f"{path}: vector length outside the buffer")
            return
        count = _u(self.data, "I", t)
        self.c.claim(t, 4, "vector", section, "uint32_t", str(count), "length of vector (# items)")
        if t + 4 + 4 * count > self.n:
            self.c.problem(t, f"{path}: {count} unions run past the buffer")
            self.c.claim(t + 4, self.n - t - 4, "vector", section, "uint8_t[]", "", "cut short")
            return
        if count != len(types):
            self.c.problem(t, f"{path}: {count} unions but {len(types)} types")
        for i in range(count):
            p = t + 4 + 4 * i
            member = u.by_value.get(types[i]) if i < len(types) else None
            tt = self.target(p, False, f"{path}[{i}]")
            name = member[0] if member else "?"
            value = f"{_u(self.data, 'I', p)} → {tt:#x}" if tt is not None else "?"
            self.c.claim(
                p, 4, "vector", section, "UOffset32", value, f"offset to union[{i}] (`{name}`)"
            )
            if i < len(types) and member is None:
                self.c.problem(p, f"{path}[{i}]: unknown union type {types[i]}")
            if tt is not None and member is not None:
                self.todo.append(("member", tt, member[1], path))

    def run(self) -> None:
        while self.todo:
            if self.c.budget < 0:
                return
            item = self.todo.pop()
            kind = item[0]
            if kind == "table":
                self.table(item[2], item[1], item[3])
            elif kind == "string":
                self.string(item[1], item[2])
            elif kind == "vector":
                self.vector(item[1], item[2], item[3], item[4])
            elif kind == "member":
                self.member(item[1], item[2], item[3])
            else:
                self.unions(item[1], item[2], item[3], item[4])


def walk_flatbuffer(desc: Any, data: bytes, *, size_prefixed: bool = False) -> Claims:
    """Label every byte of the FlatBuffer ``data`` whose root table is ``desc``."""
    desc.prepare()
    w = _Walk(data)
    c = w.c
    base = 0
    if size_prefixed:
        if w.ok(0, 4):
            c.claim(0, 4, "header", "header", "uint32_t", str(_u(data, "I", 0)), "size prefix")
        base = 4
    if not w.ok(base, 4):
        c.problem(base, "too short for a FlatBuffer (no root offset)")
        return c
    root = w.target(base, False, "root offset")
    value = f"{_u(data, 'I', base)} → {root:#x}" if root is not None else "?"
    c.claim(
        base, 4, "header", "header", "UOffset32", value, f"offset to root table `{desc.qualname}`"
    )
    if desc.identifier and w.ok(base + 4, 4):
        ident = data[base + 4 : base + 8]
        c.claim(
            base + 4, 4, "header", "header", "char[4]", ident.decode("latin-1"), "file identifier"
        )
        if ident != desc.identifier.encode():
            c.problem(
                base + 4, f"file identifier {ident!r}, the schema declares {desc.identifier!r}"
            )
    if root is not None:
        w.todo.append(("table", root, desc, "root_table"))
        w.run()
    return c
