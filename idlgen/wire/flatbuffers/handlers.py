"""Resolved field types: inline size/alignment, reading from a verified buffer, the decode
context with its bounds checks; and, as protocols, what the codec modules use of the table,
struct and union descriptors (``descriptors`` builds on this module, so it is not imported)."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ...errors import DecodeError, EncodeError
from .builder import Builder
from .fields import Enum, Field
from .scalars import NP_DTYPE, U32, U64, MAX_DEPTH, ZERO_COPY_MIN
from .values import ScalarVector


def present(vt: tuple[int, ...] | None, slot: int) -> bool:
    """Whether a decoded table's vtable (``_fb_vt``) stored the field in ``slot``."""
    return vt is not None and slot < len(vt) and vt[slot] != 0


class DecodeContext:
    """One decode: the buffer, verification on/off and the object budget.

    Verified decoding charges every table (its 4-byte soffset), vector and string (length word
    plus elements) against ``budget``, which starts at the buffer size. Without sharing those
    byte ranges are disjoint, so every buffer flatc writes fits; a DAG of shared sub-objects that
    would decode to more than its own size in objects (8 KB into a million tables) fails fast.
    Strings are cached by position, so shared strings cost one object however often they are
    referenced.
    """

    __slots__ = ("buf", "n", "verify", "tables", "budget", "strings")

    def __init__(self, buf: bytes, verify: bool) -> None:
        self.buf = buf
        self.n = len(buf)
        self.verify = verify
        self.tables = 0
        self.budget = len(buf) if verify else -1
        self.strings: dict[int, str] = {}

    def charge(self, n: int, p: int) -> None:
        if self.verify:
            self.budget -= n
            if self.budget < 0:
                raise self.fail("buffer decodes to more objects than it holds (shared data)", p)

    def fail(self, msg: str, offset: int | None = None, path: str = "") -> DecodeError:
        return DecodeError(msg, path=path, offset=offset)

    def uoffset(self, p: int) -> int:
        """Follow the uoffset stored at ``p``; returns the target position."""
        if p & 3 and self.verify:
            raise self.fail("unaligned offset", p)
        if p + 4 > self.n or p < 0:
            raise self.fail("offset out of bounds", p)
        o = U32.unpack_from(self.buf, p)[0]
        if self.verify and (o == 0 or o > 0x7FFFFFFF):
            raise self.fail("invalid offset", p)
        t: int = p + o
        if t >= self.n:
            raise self.fail("offset points outside the buffer", p)
        return t

    def uoffset64(self, p: int) -> int:
        """Follow the 64-bit offset (``offset64``/``vector64`` fields) stored at ``p``."""
        if p & 7 and self.verify:
            raise self.fail("unaligned 64-bit offset", p)
        if p + 8 > self.n or p < 0:
            raise self.fail("offset out of bounds", p)
        o = U64.unpack_from(self.buf, p)[0]
        if self.verify and (o == 0 or o > 0x7FFFFFFFFFFFFFFF):
            raise self.fail("invalid offset", p)
        t: int = p + o
        if t >= self.n:
            raise self.fail("offset points outside the buffer", p)
        return t

    def vector(self, p: int, elem_size: int, elem_align: int, wide: int = 0) -> tuple[int, int]:
        """-> (count, start of elements) for the vector referenced at ``p``; ``wide`` 1: a
        64-bit offset (``offset64``), 2: a 64-bit offset and length (``vector64``)."""
        v = self.uoffset64(p) if wide else self.uoffset(p)
        lsize = 8 if wide == 2 else 4
        if self.verify and v & (lsize - 1):
            raise self.fail("unaligned vector", v)
        if v + lsize > self.n:
            raise self.fail("vector length out of bounds", v)
        count = (U64 if wide == 2 else U32).unpack_from(self.buf, v)[0]
        start = v + lsize
        if start + count * elem_size > self.n:
            raise self.fail("vector out of bounds", v)
        if self.verify:
            self.budget -= lsize + count * elem_size
            if self.budget < 0:
                self.charge(0, v)
        return count, start

    def string(self, p: int, wide: int = 0) -> str:
        t = self.uoffset64(p) if wide else self.uoffset(p)
        s = self.strings.get(t)
        if s is not None:
            return s
        # strings have a 32-bit length even behind a 64-bit offset
        if self.verify and t & 3:
            raise self.fail("unaligned vector", t)
        if t + 4 > self.n:
            raise self.fail("vector length out of bounds", t)
        count = U32.unpack_from(self.buf, t)[0]
        start = t + 4
        end = start + count
        if self.verify:
            self.budget -= 4 + count
            if self.budget < 0:
                self.charge(0, t)
        if end >= self.n or self.buf[end] != 0:
            raise self.fail("string is not NUL-terminated", end)
        try:
            s = self.strings[t] = self.buf[start:end].decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"string is not valid UTF-8: {e.reason}", start + e.start) from None
        return s


# ---------------------------------------------------------------------------------------------
# Type handlers (resolved from specs)


class Handler:
    """A resolved type: inline size/alignment in a table or vector, read and write."""

    size = 4
    align = 4

    def read(self, d: DecodeContext, p: int, depth: int) -> Any:
        raise NotImplementedError

    def build(self, b: Builder, v: Any) -> int:
        """Serialize the out-of-line object; returns its offset."""
        raise NotImplementedError


class ScalarH(Handler):

    def __init__(self, fmt: str, enum: Enum | None = None) -> None:
        self.fmt = fmt
        self.st = struct.Struct("<" + fmt)
        self.size = self.align = self.st.size
        self.enum = enum
        self.conv: Callable[[Any], Any] | None = enum.cls if enum is not None else None

    def read(self, d: DecodeContext, p: int, depth: int) -> Any:
        v = self.st.unpack_from(d.buf, p)[0]
        return self.conv(v) if self.conv is not None else v

    def pack(self, v: Any) -> bytes:
        try:
            return self.st.pack(v)
        except (struct.error, OverflowError) as e:
            raise EncodeError(
                f"value {v!r} does not fit FlatBuffers scalar '{self.fmt}': {e}"
            ) from None


class StringH(Handler):
    wide = 0  # 1 for an ``offset64`` field (set per field by Table.prepare)

    def read(self, d: DecodeContext, p: int, depth: int) -> Any:
        return d.string(p, self.wide)

    def build(self, b: Builder, v: Any) -> int:
        return b.string(v)


class VectorH(Handler):
    def __init__(self, elem: Handler) -> None:
        self.elem = elem
        self.wide = 0  # 1: ``offset64``, 2: ``vector64`` (set per field by Table.prepare)

    def read(self, d: DecodeContext, p: int, depth: int) -> Any:
        e = self.elem
        if depth >= MAX_DEPTH:
            raise d.fail("maximum nesting depth exceeded", p)
        count, start = d.vector(p, e.size, e.align, self.wide)
        if isinstance(e, ScalarH):
            nbytes = count * e.size
            if e.conv is None and e.size == 1 and e.fmt == "B" and nbytes < ZERO_COPY_MIN:
                return d.buf[start : start + nbytes]
            if nbytes >= ZERO_COPY_MIN and e.conv is None:
                arr = np.frombuffer(d.buf, NP_DTYPE[e.fmt], count, start)
                if arr.flags.writeable:
                    arr.flags.writeable = False
                return ScalarVector(arr)
            vals = struct.unpack_from(f"<{count}{e.fmt}", d.buf, start)
            if e.conv is not None:
                c = e.conv
                return [c(x) for x in vals]
            return list(vals)
        if isinstance(e, StructH):
            return e.read_many(d, start, count)
        out = []
        for i in range(count):
            out.append(e.read(d, start + 4 * i, depth + 1))
        return out


class ArrayH(Handler):
    """``[T:N]`` inside structs: only used for layout bookkeeping."""

    def __init__(self, elem: Handler, n: int) -> None:
        self.elem = elem
        self.n = n


class UnionH(Handler):
    def __init__(self, desc: UnionDesc) -> None:
        self.desc = desc


class StructH(Handler):

    def __init__(self, desc: StructDesc) -> None:
        self.desc = desc
        desc.prepare()
        self.size = desc.size
        self.align = desc.align

    def read(self, d: DecodeContext, p: int, depth: int) -> Any:
        return self.desc.read(d, p)

    def read_many(self, d: DecodeContext, start: int, count: int) -> list[Any]:
        st = self.desc._st
        size = self.desc.size
        names = self.desc._flat
        if names is not None and count:
            cls: Any = self.desc.cls
            new = object.__new__
            out = []
            for vals in st.iter_unpack(memoryview(d.buf)[start : start + count * size]):
                o = new(cls)
                o.__dict__ = dict(zip(names, vals))
                out.append(o)
            return out
        mk = self.desc._make
        return [mk(iter(st.unpack_from(d.buf, start + i * size))) for i in range(count)]


class TableH(Handler):
    def __init__(self, desc: TableDesc) -> None:
        self.desc = desc

    def read(self, d: DecodeContext, p: int, depth: int) -> Any:
        return self.desc.read(d, d.uoffset(p), depth + 1)

    def build(self, b: Builder, v: Any) -> int:
        return self.desc.build(b, v)


class ResolvedField:
    """A table field, resolved."""

    __slots__ = (
        "f",
        "attr",
        "slot",
        "h",
        "kind",
        "default",
        "cmp_default",
        "size",
        "align",
        "rank",
        "trank",
        "optional",
        "required",
        "hashed",
        "union",
        "vec_elem",
        "struct_desc",
        "table_desc",
        "absent",
        "wide",
        "dep",
    )
    f: Field
    attr: str
    slot: int
    h: Handler
    kind: int
    default: Any
    cmp_default: bytes | None
    size: int
    align: int
    rank: int  # position in flatc's write order (size class, descending id)
    trank: int  # the same for the hidden union type field
    optional: bool
    required: bool
    hashed: bool
    # set according to ``kind`` (hot path: no None checks)
    union: Any
    vec_elem: Any
    struct_desc: Any
    table_desc: Any
    wide: int  # 0, or 1 for ``offset64`` / 2 for ``vector64`` (an 8-byte offset in the table)
    dep: bool  # deprecated: carried in ``_fb_dep``, not an attribute
    absent: Any  # the value of a non-scalar field absent from a decoded buffer


K_SCALAR, K_STRING, K_TABLE, K_STRUCT, K_VECTOR, K_UNION, K_UNION_VEC = range(7)


# ---------------------------------------------------------------------------------------------
# What the codecs use of the descriptors (``descriptors.Struct``, ``Table``, ``Union``)


class StructDesc(Protocol):
    @property
    def qualname(self) -> str: ...
    @property
    def cls(self) -> Callable[..., Any]: ...
    @property
    def key(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def align(self) -> int: ...
    @property
    def fields(self) -> list[tuple[str, str, Any]]: ...
    @property
    def handlers(self) -> list[tuple[str, Handler]]: ...
    @property
    def _st(self) -> struct.Struct: ...
    @property
    def _flat(self) -> tuple[str, ...] | None: ...
    @property
    def _fmt_body(self) -> str: ...
    def prepare(self) -> None: ...
    def read(self, d: DecodeContext, p: int) -> Any: ...
    def pack(self, obj: Any) -> bytes: ...
    def _make(self, it: Any) -> Any: ...
    def _flatten(self, obj: Any, out: list[Any]) -> None: ...


class TableDesc(Protocol):
    @property
    def qualname(self) -> str: ...
    @property
    def cls(self) -> Callable[..., Any]: ...
    @property
    def fields(self) -> list[Field]: ...
    @property
    def _ready(self) -> bool: ...
    @property
    def _defaults(self) -> dict[str, Any]: ...
    @property
    def _fresh(self) -> list[str]: ...
    @property
    def _required(self) -> list[ResolvedField]: ...
    @property
    def _by_slot(self) -> list[ResolvedField | None]: ...
    @property
    def _plain(self) -> bool: ...
    @property
    def _type(self) -> Any: ...
    @property
    def _enc(self) -> list[ResolvedField]: ...
    @property
    def _rf(self) -> list[ResolvedField]: ...
    @property
    def _by_name(self) -> dict[str, ResolvedField]: ...
    @property
    def _key(self) -> ResolvedField | None: ...
    def prepare(self) -> None: ...
    def build(self, b: Builder, obj: Any) -> int: ...
    def read(self, d: DecodeContext, p: int, depth: int) -> Any: ...


class UnionDesc(Protocol):
    @property
    def qualname(self) -> str: ...
    def prepare(self) -> None: ...
