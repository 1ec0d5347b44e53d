"""FlatBuffers runtime for generated code: descriptors, a flatc-identical encoder, a verifier.

Generated modules create one descriptor per table and struct at import time::

    _FB_REG = _fb.registry(__name__.split(".")[0])
    _FB_Monster: _fb.Table[Monster] = _fb.Table(
        "MyGame.Example.Monster", Monster,
        (("pos", "pos", 0, ("struct", "MyGame.Example.Vec3"), None, {}), ...),
        identifier="MONS", reg=_FB_REG)

Field type specs are literals: a struct format char for scalars (``"i"``, ``"?"``...),
``"string"``, ``("vector", spec)``, ``("array", spec, n)``, ``("table", qualname)``,
``("struct", qualname)``, ``("enum", EnumClass, fmt)`` and, spelled out inline,
``("union", qualname, disc_fmt, ((member, value, spec), ...))``. Tables and structs are looked up
by name in the package's registry the first time a descriptor is used, so declaration order and
cycles across modules do not matter.

The encoder reproduces what ``flatc -b`` does for the JSON that :mod:`idlgen.wire.fbjson`
writes for the same value (src/idl_parser.cpp ``ParseTable``/``ParseVector`` over
flatbuffer_builder.h): children are built depth-first in field order before their parent,
table fields are written by size class 8, 4, 2, 1 and descending id, vtables are deduplicated,
key-sorted vectors are ordered with flatc's own (unstable) quicksort. The decoder verifies as it
reads, with the limits of the C++ ``Verifier``; malformed input raises ``DecodeError``.
"""

from __future__ import annotations

import enum
import importlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from ..errors import DecodeError

__all__ = [
    "Table",
    "Struct",
    "Union",
    "Enum",
    "Field",
    "UnionValue",
    "ScalarVector",
    "NestedBuffer",
    "lookup",
    "MAX_DEPTH",
    "MAX_TABLES",
    "ZERO_COPY_MIN",
]

T = TypeVar("T")

MAX_DEPTH = 64
MAX_TABLES = 1_000_000
# Scalar vectors with at least this many bytes decode to a zero-copy ScalarVector.
ZERO_COPY_MIN = 4096

# Descriptors find each other by qualified name in a registry. Generated code uses one registry
# per output root package (``registry(__name__.split(".")[0])``), so two generated copies of the
# same schema in one process do not mix.
_REGISTRIES: dict[str, dict[str, Any]] = {}


def registry(name: str = "") -> dict[str, Any]:
    """The registry named ``name`` (created on first use); for generated code the name is the
    root package, where enum classes are imported from when first needed."""
    return _REGISTRIES.setdefault(name, {_PACKAGE: name})


_PACKAGE = " package"  # registry key of the owning package name (never a qualified name)


def lookup(qualname: str, reg: dict[str, Any] | None = None) -> Any:
    try:
        return (registry() if reg is None else reg)[qualname]
    except KeyError:
        raise LookupError(
            f"FlatBuffers type {qualname!r} is not registered (module not imported?)"
        ) from None


_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")
_HH = struct.Struct("<HH")
_SCALAR_SIZE = {
    "?": 1,
    "b": 1,
    "B": 1,
    "h": 2,
    "H": 2,
    "i": 4,
    "I": 4,
    "q": 8,
    "Q": 8,
    "f": 4,
    "d": 8,
}
_NP_DTYPE = {k: np.dtype("<" + ("?" if k == "?" else k)) for k in _SCALAR_SIZE}
_INT_RANGE = {
    "b": (-(1 << 7), (1 << 7) - 1),
    "B": (0, (1 << 8) - 1),
    "h": (-(1 << 15), (1 << 15) - 1),
    "H": (0, (1 << 16) - 1),
    "i": (-(1 << 31), (1 << 31) - 1),
    "I": (0, (1 << 32) - 1),
    "q": (-(1 << 63), (1 << 63) - 1),
    "Q": (0, (1 << 64) - 1),
}


# ---------------------------------------------------------------------------------------------
# Values


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


# ---------------------------------------------------------------------------------------------
# The builder: flatc's FlatBufferBuilder, back to front, as a list of chunks


class _Builder:
    __slots__ = ("chunks", "size", "minalign", "vtables", "shared")

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.minalign = 1
        self.vtables: dict[bytes, int] = {}
        self.shared: dict[str, int] = {}

    def pad(self, n: int) -> None:
        if n:
            self.chunks.append(bytes(n))
            self.size += n

    def align(self, a: int) -> None:
        if a > self.minalign:
            self.minalign = a
        p = -self.size & (a - 1)
        if p:
            self.chunks.append(bytes(p))
            self.size += p

    def prealign(self, length: int, a: int) -> None:
        if length == 0:  # flatc's PreAlign returns early (no padding, no minalign tracking)
            return
        if a > self.minalign:
            self.minalign = a
        p = -(self.size + length) & (a - 1)
        if p:
            self.chunks.append(bytes(p))
            self.size += p

    def push(self, b: bytes) -> None:
        self.chunks.append(b)
        self.size += len(b)

    def string(self, s: str | bytes) -> int:
        b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        n = len(b)
        self.prealign(n + 1, 4)
        self.chunks.append(_U32.pack(n) + b + b"\0")
        self.size += n + 5
        return self.size

    def offsets_vector(self, offs: Sequence[int | None], force_align: int = 0) -> int:
        """A vector of uoffsets to already-built objects; ``None`` entries are written as 0."""
        n = len(offs)
        total = 4 * n
        if force_align > 1 and n:
            self.prealign(total, force_align)
        self.prealign(total, 4)
        if not n:
            self.align(4)  # EndVector's PushElement(len) aligns
        base = self.size + total  # position (from the end) just past the first element
        self.chunks.append(
            _U32.pack(n)
            + struct.pack(
                f"<{n}I", *[0 if o is None else base - 4 * k - o for k, o in enumerate(offs)]
            )
        )
        self.size += total + 4
        return self.size

    def raw_vector(
        self, data: bytes | memoryview, count: int, elem_align: int, force_align: int = 0
    ) -> int:
        total = len(data)
        if force_align > 1 and count:
            self.prealign(total, force_align)
        self.prealign(total, 4)
        self.prealign(total, elem_align)
        if not total:
            self.align(4)  # EndVector's PushElement(len) aligns
        if total > 256:  # large payloads are not copied until the final join
            self.chunks.append(data)  # type: ignore[arg-type]
            self.chunks.append(_U32.pack(count))
        else:
            self.chunks.append(_U32.pack(count) + data)
        self.size += total + 4
        return self.size

    def finish(self, root: int, ident: bytes | None, size_prefixed: bool) -> bytes:
        prefix = 4 if size_prefixed else 0
        if prefix > self.minalign:
            self.minalign = prefix
        self.prealign(prefix + 4 + (4 if ident else 0), self.minalign)
        if ident:
            self.push(ident)
        self.align(4)
        self.push(_U32.pack(self.size + 4 - root))
        if size_prefixed:
            self.push(_U32.pack(self.size))
        self.chunks.reverse()
        return b"".join(self.chunks)


def _simple_qsort(items: list[Any], less: Callable[[Any, Any], bool]) -> None:
    """flatc's ``SimpleQsort`` (util.h), in place: the first element is the pivot and ties
    stay left, so equal keys end up in the same (non-stable) order as flatc's."""

    def sort(begin: int, end: int) -> None:
        while end - begin > 1:
            l, r = begin + 1, end
            pivot = items[begin]
            while l < r:
                if less(pivot, items[l]):
                    r -= 1
                    items[l], items[r] = items[r], items[l]
                else:
                    l += 1
            l -= 1
            items[begin], items[l] = items[l], items[begin]
            sort(begin, l)
            begin = r

    sort(0, len(items))


# ---------------------------------------------------------------------------------------------
# Decoding context


class _Dec:
    __slots__ = ("buf", "n", "verify", "tables")

    def __init__(self, buf: bytes, verify: bool) -> None:
        self.buf = buf
        self.n = len(buf)
        self.verify = verify
        self.tables = 0

    def fail(self, msg: str, offset: int | None = None, path: str = "") -> DecodeError:
        return DecodeError(msg, path=path, offset=offset)

    def uoffset(self, p: int) -> int:
        """Follow the uoffset stored at ``p``; returns the target position."""
        if p & 3 and self.verify:
            raise self.fail("unaligned offset", p)
        if p + 4 > self.n or p < 0:
            raise self.fail("offset out of bounds", p)
        o = _U32.unpack_from(self.buf, p)[0]
        if self.verify and (o == 0 or o > 0x7FFFFFFF):
            raise self.fail("invalid offset", p)
        t: int = p + o
        if t >= self.n:
            raise self.fail("offset points outside the buffer", p)
        return t

    def vector(self, p: int, elem_size: int, elem_align: int) -> tuple[int, int]:
        """-> (count, start of elements) for the vector referenced at ``p``."""
        v = self.uoffset(p)
        if self.verify and v & 3:
            raise self.fail("unaligned vector", v)
        if v + 4 > self.n:
            raise self.fail("vector length out of bounds", v)
        count = _U32.unpack_from(self.buf, v)[0]
        start = v + 4
        if start + count * elem_size > self.n:
            raise self.fail("vector out of bounds", v)
        return count, start

    def string(self, p: int) -> str:
        count, start = self.vector(p, 1, 1)
        end = start + count
        if end >= self.n or self.buf[end] != 0:
            raise self.fail("string is not NUL-terminated", end)
        try:
            return self.buf[start:end].decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"string is not valid UTF-8: {e.reason}", start + e.start) from None


# ---------------------------------------------------------------------------------------------
# Type handlers (resolved from specs)


class _H:
    """A resolved type: inline size/alignment in a table or vector, read and write."""

    size = 4
    align = 4

    def read(self, d: _Dec, p: int, depth: int) -> Any:
        raise NotImplementedError

    def build(self, b: _Builder, v: Any) -> int:
        """Serialize the out-of-line object; returns its offset."""
        raise NotImplementedError


class _ScalarH(_H):

    def __init__(self, fmt: str, enum: Enum | None = None) -> None:
        self.fmt = fmt
        self.st = struct.Struct("<" + fmt)
        self.size = self.align = self.st.size
        self.enum = enum
        self.conv: Callable[[Any], Any] | None = enum.cls if enum is not None else None

    def read(self, d: _Dec, p: int, depth: int) -> Any:
        v = self.st.unpack_from(d.buf, p)[0]
        return self.conv(v) if self.conv is not None else v

    def pack(self, v: Any) -> bytes:
        try:
            return self.st.pack(v)
        except (struct.error, OverflowError) as e:
            raise ValueError(
                f"value {v!r} does not fit FlatBuffers scalar '{self.fmt}': {e}"
            ) from None


class _StringH(_H):
    def read(self, d: _Dec, p: int, depth: int) -> Any:
        return d.string(p)

    def build(self, b: _Builder, v: Any) -> int:
        return b.string(v)


class _VectorH(_H):
    def __init__(self, elem: _H) -> None:
        self.elem = elem

    def read(self, d: _Dec, p: int, depth: int) -> Any:
        e = self.elem
        if depth >= MAX_DEPTH:
            raise d.fail("maximum nesting depth exceeded", p)
        count, start = d.vector(p, e.size, e.align)
        if isinstance(e, _ScalarH):
            nbytes = count * e.size
            if e.conv is None and e.size == 1 and e.fmt == "B" and nbytes < ZERO_COPY_MIN:
                return d.buf[start : start + nbytes]
            if nbytes >= ZERO_COPY_MIN and e.conv is None:
                arr = np.frombuffer(d.buf, _NP_DTYPE[e.fmt], count, start)
                if arr.flags.writeable:
                    arr.flags.writeable = False
                return ScalarVector(arr)
            vals = struct.unpack_from(f"<{count}{e.fmt}", d.buf, start)
            if e.conv is not None:
                c = e.conv
                return [c(x) for x in vals]
            return list(vals)
        if isinstance(e, _StructH):
            return e.read_many(d, start, count)
        out = []
        for i in range(count):
            out.append(e.read(d, start + 4 * i, depth + 1))
        return out


class _ArrayH(_H):
    """``[T:N]`` inside structs: only used for layout bookkeeping."""

    def __init__(self, elem: _H, n: int) -> None:
        self.elem = elem
        self.n = n


class _UnionH(_H):
    def __init__(self, desc: Union) -> None:
        self.desc = desc


# ---------------------------------------------------------------------------------------------
# Descriptors


class Enum:
    """Registers an enum class so that fields of that enum decode to members."""

    def __init__(
        self,
        qualname: str,
        cls: Callable[[int], Any],
        fmt: str,
        bit_flags: bool = False,
        *,
        reg: dict[str, Any] | None = None,
    ) -> None:
        self.qualname = qualname
        self.cls = cls
        self.fmt = fmt
        self.bit_flags = bit_flags
        self.reg = registry() if reg is None else reg
        self.reg[qualname] = self


class Field:
    """One table or struct field. ``slot`` is the vtable slot (union: the value's slot; the
    hidden ``_type`` field uses ``slot - 1``)."""

    __slots__ = (
        "attr",
        "name",
        "slot",
        "spec",
        "default",
        "optional",
        "required",
        "key",
        "deprecated",
        "shared",
        "nested",
        "hash",
        "force_align",
        "flexbuffer",
        "nested_desc",
    )

    def __init__(
        self,
        attr: str,
        name: str,
        slot: int,
        spec: Any,
        default: Any = None,
        *,
        optional: bool = False,
        required: bool = False,
        key: bool = False,
        deprecated: bool = False,
        shared: bool = False,
        nested: str = "",
        hash: str = "",
        force_align: int = 0,
        flexbuffer: bool = False,
    ) -> None:
        self.attr = attr
        self.name = name
        self.slot = slot
        self.spec = spec
        self.default = default
        self.optional = optional
        self.required = required
        self.key = key
        self.deprecated = deprecated
        self.shared = shared
        self.nested = nested
        self.hash = hash
        self.force_align = force_align
        self.flexbuffer = flexbuffer
        self.nested_desc: Any = None


def _target(x: Any, reg: dict[str, Any]) -> Any:
    """A table/struct descriptor from a qualified name or a generated class."""
    if isinstance(x, str):
        return lookup(x, reg)
    d = getattr(x, "_FB_DESC", None)
    if d is None:
        raise LookupError(f"{x!r} has no FlatBuffers descriptor")
    return d


_new = object.__new__


def _attach(cls: Any, desc: Any) -> None:
    try:
        cls._FB_DESC = desc
    except (AttributeError, TypeError):
        pass


def flex_loads(data: bytes) -> Any:
    """A FlexBuffer as Python values (the ``flatbuffers`` package's reader)."""
    from flatbuffers import flexbuffers  # type: ignore[import-untyped]

    return flexbuffers.Loads(bytes(data))


class _Pool:
    """Exact-match pool for FlexBuffer string/key sharing (the ``flatbuffers`` package's own
    ``Pool`` inserts at the wrong index and then misses entries)."""

    def __init__(self) -> None:
        self._d: dict[bytes, Any] = {}

    def FindOrInsert(self, data: bytes, offset: Any) -> Any:  # noqa: N802 - upstream's API
        prev = self._d.get(bytes(data))
        if prev is None:
            self._d[bytes(data)] = offset
        return prev

    def Clear(self) -> None:  # noqa: N802
        self._d.clear()


def _flex_is_null(v: Any) -> bool:
    if not len(v):
        return False
    try:
        return flex_loads(bytes(v)) is None
    except Exception:  # not a flexbuffer at all
        return False


def flex_dumps(value: Any) -> bytes:
    """A FlexBuffer as flatc's JSON parser builds it (sharing strings and keys)."""
    from flatbuffers import flexbuffers

    fbb = flexbuffers.Builder(share_strings=True, share_keys=True)
    fbb._string_pool = _Pool()
    fbb._key_pool = _Pool()
    fbb.Add(value)
    return bytes(fbb.Finish())


def _import_enum(qualname: str, fmt: str, class_name: str, reg: dict[str, Any]) -> Enum:
    """The generated enum class, from its namespace package (``__init__`` re-exports every
    type of the namespace), registered for later lookups."""
    pkg = reg.get(_PACKAGE)
    if not pkg:
        raise LookupError(f"enum {qualname!r}: registry has no package to import it from")
    ns = qualname.rpartition(".")[0]
    module = importlib.import_module(f"{pkg}.{ns}" if ns else pkg)
    cls = getattr(module, class_name)
    return Enum(qualname, cls, fmt, issubclass(cls, enum.Flag), reg=reg)


def _resolve(spec: Any, reg: dict[str, Any]) -> _H:
    if isinstance(spec, str):
        if spec == "string":
            return _StringH()
        return _ScalarH(spec)
    tag = spec[0]
    if tag == "enum":
        if not isinstance(spec[1], str):  # ("enum", EnumClass, fmt): the class itself
            cls = spec[1]
            return _ScalarH(
                spec[2], Enum(cls.__qualname__, cls, spec[2], issubclass(cls, enum.Flag), reg={})
            )
        e = reg.get(spec[1])
        if e is None and len(spec) == 4:  # ("enum", qualname, fmt, ClassName): generated code
            e = _import_enum(spec[1], spec[2], spec[3], reg)
        elif e is None:
            e = lookup(spec[1], reg)
        return _ScalarH(e.fmt, e)
    if tag == "vector":
        return _VectorH(_resolve(spec[1], reg))
    if tag == "array":
        return _ArrayH(_resolve(spec[1], reg), int(spec[2]))
    if tag == "union":
        if len(spec) > 2:  # ("union", qualname, disc, members): inline
            return _UnionH(Union(spec[1], spec[3], spec[2], reg={}, parent_reg=reg))
        return _UnionH(lookup(spec[1], reg))
    d = _target(spec[1], reg)
    if tag == "table":
        return _TableH(d)
    if tag == "struct":
        return _StructH(d)
    raise ValueError(f"bad FlatBuffers type spec {spec!r}")


class _StructH(_H):

    def __init__(self, desc: Struct[Any]) -> None:
        self.desc = desc
        desc.prepare()
        self.size = desc.size
        self.align = desc.align

    def read(self, d: _Dec, p: int, depth: int) -> Any:
        return self.desc.read(d, p)

    def read_many(self, d: _Dec, start: int, count: int) -> list[Any]:
        st = self.desc._st
        size = self.desc.size
        mk = self.desc._make
        return [mk(iter(st.unpack_from(d.buf, start + i * size))) for i in range(count)]


class _TableH(_H):
    def __init__(self, desc: Table[Any]) -> None:
        self.desc = desc

    def read(self, d: _Dec, p: int, depth: int) -> Any:
        return self.desc.read(d, d.uoffset(p), depth + 1)

    def build(self, b: _Builder, v: Any) -> int:
        return self.desc.build(b, v)


class Struct(Generic[T]):
    """A fixed-layout struct; ``fields`` are ``(attr, name, spec)`` in declaration order."""

    def __init__(
        self,
        qualname: str,
        cls: Callable[..., T],
        fields: Sequence[tuple[str, str, Any]],
        force_align: int = 0,
        key: str = "",
        *,
        reg: dict[str, Any] | None = None,
    ) -> None:
        self.reg = registry() if reg is None else reg
        self.qualname = qualname
        self.cls = cls
        self.fields = list(fields)
        self.force_align = force_align
        self.key = key
        self._ready = False
        self.size = 0
        self.align = 1
        self._fmt_body = ""
        self.reg[qualname] = self
        _attach(cls, self)

    def prepare(self) -> None:
        if self._ready:
            return
        fmt: list[str] = []
        off = 0
        align = 1
        self.handlers: list[tuple[str, _H]] = []
        for attr, _, spec in self.fields:
            h = _resolve(spec, self.reg)
            base = h.elem if isinstance(h, _ArrayH) else h
            if isinstance(base, _StructH):
                a, sz = base.align, base.size
                f1 = base.desc._fmt_body
            else:
                assert isinstance(base, _ScalarH)
                a, sz, f1 = base.size, base.size, base.fmt
            n = h.n if isinstance(h, _ArrayH) else 1
            pad = -off & (a - 1)
            if pad:
                fmt.append(f"{pad}x")
            fmt.append(f1 * n if isinstance(base, _StructH) else (f"{n}{f1}" if n > 1 else f1))
            off += pad + sz * n
            align = max(align, a)
            self.handlers.append((attr, h))
        if self.force_align > align:
            align = self.force_align
        tail = -off & (align - 1)
        if tail:
            fmt.append(f"{tail}x")
        self.size = off + tail
        self.align = align
        self._fmt_body = "".join(fmt)
        self._st = struct.Struct("<" + self._fmt_body)
        assert self._st.size == self.size, (self.qualname, self._st.size, self.size)
        self._ready = True

    def _make(self, it: Any) -> Any:
        kw: dict[str, Any] = {}
        for attr, h in self.handlers:
            if isinstance(h, _ArrayH):
                e = h.elem
                if isinstance(e, _StructH):
                    kw[attr] = [e.desc._make(it) for _ in range(h.n)]
                else:
                    assert isinstance(e, _ScalarH)
                    c = e.conv
                    kw[attr] = [c(next(it)) if c else next(it) for _ in range(h.n)]
            elif isinstance(h, _StructH):
                kw[attr] = h.desc._make(it)
            else:
                assert isinstance(h, _ScalarH)
                v = next(it)
                kw[attr] = h.conv(v) if h.conv is not None else v
        return self.cls(**kw)

    def _flatten(self, obj: Any, out: list[Any]) -> None:
        if obj is None:
            obj = self.cls()
        for attr, h in self.handlers:
            v = getattr(obj, attr)
            if isinstance(h, _ArrayH):
                e = h.elem
                vals = list(v) if v is not None else []
                if len(vals) > h.n:
                    raise ValueError(
                        f"{self.qualname}.{attr}: at most {h.n} elements, got {len(vals)}"
                    )
                if isinstance(e, _StructH):
                    vals += [None] * (h.n - len(vals))
                    for x in vals:
                        e.desc._flatten(x, out)
                else:
                    vals += [0] * (h.n - len(vals))
                    out.extend(vals)
            elif isinstance(h, _StructH):
                h.desc._flatten(v, out)
            else:
                out.append(v)

    def encode(self, obj: T, *, size_prefixed: bool = False) -> bytes:
        """The struct's inline bytes (structs are never roots of a buffer); with
        ``size_prefixed`` preceded by their u32 length."""
        data = self.pack(obj)
        return _U32.pack(len(data)) + data if size_prefixed else data

    def decode(self, data: Any, *, verify: bool = True, size_prefixed: bool = False) -> T:
        """Inverse of :meth:`encode`: exactly ``size`` bytes."""
        self.prepare()
        data = bytes(data)
        if size_prefixed:
            if len(data) < 4 or _U32.unpack_from(data, 0)[0] != len(data) - 4:
                raise DecodeError(f"bad size prefix for {self.qualname}", offset=0)
            data = data[4:]
        if len(data) != self.size:
            raise DecodeError(f"{self.qualname} takes {self.size} bytes, got {len(data)}", offset=0)
        out: T = self._make(iter(self._st.unpack_from(data, 0)))
        return out

    def pack(self, obj: Any) -> bytes:
        self.prepare()
        vals: list[Any] = []
        self._flatten(obj, vals)
        try:
            return self._st.pack(*vals)
        except (struct.error, OverflowError) as e:
            raise ValueError(f"{self.qualname}: {e}") from None

    def read(self, d: _Dec, p: int) -> Any:
        if self.verify_bounds(d, p):
            return self._make(iter(self._st.unpack_from(d.buf, p)))
        raise d.fail(f"struct {self.qualname} out of bounds", p)

    def verify_bounds(self, d: _Dec, p: int) -> bool:
        return 0 <= p and p + self.size <= d.n


class Union:
    """A union: ``members`` are ``(name, value, spec)``; the discriminant is ``disc`` (a
    scalar format char, ``"B"`` unless declared)."""

    def __init__(
        self,
        qualname: str,
        members: Sequence[tuple[str, int, Any]],
        disc: str = "B",
        *,
        reg: dict[str, Any] | None = None,
        parent_reg: dict[str, Any] | None = None,
    ) -> None:
        self.qualname = qualname
        self.members = list(members)
        self.disc = disc
        self._ready = False
        self.reg = registry() if reg is None else reg
        self.reg[qualname] = self
        # where member types are looked up (inline unions live in a private registry)
        self.lookup_reg = self.reg if parent_reg is None else parent_reg

    def prepare(self) -> None:
        if self._ready:
            return
        self.by_value: dict[int, tuple[str, _H]] = {}
        self.by_name: dict[str, tuple[int, _H]] = {}
        self.by_cls: dict[Any, tuple[int, _H]] = {}
        counts: dict[Any, int] = {}
        for name, value, spec in self.members:
            h = _resolve(spec, self.lookup_reg)
            self.by_value[value] = (name, h)
            self.by_name[name] = (value, h)
            key = str if isinstance(h, _StringH) else h.desc.cls  # type: ignore[attr-defined]
            counts[key] = counts.get(key, 0) + 1
            self.by_cls.setdefault(key, (value, h))
        self.ambiguous = {k for k, n in counts.items() if n > 1}
        self.disc_h = _ScalarH(self.disc)
        self._ready = True

    def member_of(self, v: Any) -> tuple[int, _H, Any]:
        """-> (discriminant, handler, payload) for a Python value."""
        self.prepare()
        if isinstance(v, UnionValue):
            try:
                value, h = self.by_name[v.type]
            except KeyError:
                raise ValueError(f"{v.type!r} is not a member of union {self.qualname}") from None
            return value, h, v.value
        key = str if isinstance(v, str) else type(v)
        hit = self.by_cls.get(key)
        if hit is None:
            raise TypeError(f"{type(v).__name__} is not a member type of union {self.qualname}")
        return hit[0], hit[1], v

    def wrap(self, name: str, h: _H, v: Any) -> Any:
        key = str if isinstance(h, _StringH) else h.desc.cls  # type: ignore[attr-defined]
        return UnionValue(name, v) if key in self.ambiguous else v

    def read_value(self, d: _Dec, utype: int, p: int, depth: int) -> Any:
        hit = self.by_value.get(utype)
        if hit is None:
            if d.verify:
                raise d.fail(f"unknown union type {utype} for {self.qualname}", p)
            return None
        name, h = hit
        if isinstance(h, _StructH):
            t = d.uoffset(p)
            return self.wrap(name, h, h.desc.read(d, t))
        return self.wrap(name, h, h.read(d, p, depth))

    def build_value(self, b: _Builder, v: Any) -> tuple[int, int]:
        """Build the member out of line; -> (discriminant, offset)."""
        value, h, payload = self.member_of(v)
        if isinstance(h, _StructH):
            b.align(h.align)  # flatc parses the struct first (StartStruct aligns)
            b.align(h.align)
            b.push(h.desc.pack(payload))
            return value, b.size
        return value, h.build(b, payload)


class _F:
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
    )
    f: Field
    attr: str
    slot: int
    h: _H
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


_K_SCALAR, _K_STRING, _K_TABLE, _K_STRUCT, _K_VECTOR, _K_UNION, _K_UNION_VEC = range(7)


class Table(Generic[T]):
    """A table descriptor. ``identifier`` is the root's ``file_identifier`` ("" for none).
    ``fields`` are :class:`Field` objects or their positional-argument tuples
    ``(attr, name, slot, spec, default, {keyword options})``."""

    def __init__(
        self,
        qualname: str,
        cls: Callable[..., T],
        fields: Sequence[Field | tuple[Any, ...]],
        identifier: str = "",
        *,
        reg: dict[str, Any] | None = None,
    ) -> None:
        self.qualname = qualname
        self.cls = cls
        self.fields = [
            f if isinstance(f, Field) else Field(*f[:5], **(f[5] if len(f) > 5 else {}))
            for f in fields
        ]
        self.identifier = identifier
        self._ready = False
        self.reg = registry() if reg is None else reg
        self.reg[qualname] = self
        _attach(cls, self)

    # -- preparation ---------------------------------------------------------------------
    def prepare(self) -> None:
        if self._ready:
            return
        self._ready = True  # set first: tables may refer to themselves
        rs: list[_F] = []
        for f in self.fields:
            r = _F()
            r.f = f
            r.attr = f.attr
            r.slot = f.slot
            h = _resolve(f.spec, self.reg)
            r.h = h
            r.union = None
            r.vec_elem = None
            r.struct_desc = None
            r.table_desc = None
            r.size = 4
            r.align = 4
            r.default = f.default
            r.cmp_default = None
            if f.nested:
                f.nested_desc = _target(f.nested, self.reg)
            if isinstance(h, _ScalarH):
                r.kind = _K_SCALAR
                r.size = r.align = h.size
                if f.default is not None and not f.optional:
                    r.cmp_default = h.pack(f.default)
                if h.conv is not None and f.default is not None:
                    r.default = h.conv(f.default)
            elif isinstance(h, _StringH):
                r.kind = _K_STRING
            elif isinstance(h, _TableH):
                r.kind = _K_TABLE
                r.table_desc = h.desc
            elif isinstance(h, _StructH):
                r.kind = _K_STRUCT
                r.struct_desc = h.desc
                r.size, r.align = h.size, h.align
            elif isinstance(h, _UnionH):
                r.kind = _K_UNION
                r.union = h.desc
                h.desc.prepare()
            elif isinstance(h, _VectorH):
                if isinstance(h.elem, _UnionH):
                    r.kind = _K_UNION_VEC
                    r.union = h.elem.desc
                    h.elem.desc.prepare()
                else:
                    r.kind = _K_VECTOR
                    r.vec_elem = h.elem
            else:
                raise ValueError(f"{self.qualname}.{f.name}: arrays are only allowed in structs")
            rs.append(r)
        self._rf = rs
        self._by_name = {r.f.name: r for r in rs}
        self._key = next((r for r in rs if r.f.key), None)
        # flatc's write order: size class 8, 4, 2, 1; descending id within a class. Inline
        # structs and offsets count as 4, the union type as 1.
        entries: list[tuple[int, int, _F, bool]] = []
        for r in rs:
            if r.f.deprecated:
                continue
            cls_size = r.size if r.kind == _K_SCALAR else 4
            entries.append((cls_size, r.slot, r, False))
            if r.kind in (_K_UNION, _K_UNION_VEC):
                tsize = r.union.disc_h.size if r.kind == _K_UNION else 4
                entries.append((tsize, r.slot - 1, r, True))
        entries.sort(key=lambda e: (-e[0], -e[1]))
        self._write_order = [(e[2], e[3]) for e in entries]
        for rank, (r, is_type) in enumerate(self._write_order):
            if is_type:
                r.trank = rank
            else:
                r.rank = rank
        for r in rs:
            r.optional = r.f.optional
            r.required = r.f.required
            r.hashed = bool(r.f.hash)
            if r.f.deprecated:
                r.rank = r.trank = -1
        self._enc = [r for r in rs if not r.f.deprecated]
        # decoding: defaults for absent fields, fields by vtable slot
        self._defaults = {r.attr: r.default for r in rs if not isinstance(r.default, tuple)}
        self._fresh = [r.attr for r in rs if isinstance(r.default, tuple)]
        self._required = [r for r in rs if r.f.required]
        top = max((r.slot for r in rs), default=-1)
        self._by_slot: list[_F | None] = [None] * (top + 1)
        for r in rs:
            self._by_slot[r.slot] = r
        # A plain class (no __slots__, no __post_init__, dataclass __init__ only assigning) can
        # be filled through its __dict__, which is several times faster than calling __init__.
        cls = self.cls
        self._type: Any = cls if isinstance(cls, type) else object
        self._plain = (
            isinstance(cls, type)
            and "__slots__" not in cls.__dict__
            and not hasattr(cls, "__post_init__")
            and hasattr(cls, "__dataclass_fields__")
            and set(cls.__dataclass_fields__) == {r.attr for r in rs}
        )

    # -- encoding -------------------------------------------------------------------------
    def encode(
        self,
        obj: Any,
        *,
        size_prefixed: bool = False,
        file_identifier: str | None = None,
    ) -> bytes:
        self.prepare()
        b = _Builder()
        try:
            root = self.build(b, obj)
        except (AttributeError, TypeError) as e:  # a value of the wrong Python type somewhere
            raise TypeError(f"cannot encode {self.qualname}: {e}") from e
        ident = self.identifier if file_identifier is None else file_identifier
        return b.finish(root, ident.encode("utf-8") if ident else None, size_prefixed)

    def encode_nested(self, obj: Any) -> tuple[bytes, int]:
        """The buffer flatc builds for a ``nested_flatbuffer`` value written as a JSON object
        (no file identifier) and its alignment, which flatc forces on the enclosing vector."""
        self.prepare()
        b = _Builder()
        root = self.build(b, obj)
        data = b.finish(root, None, False)
        return data, b.minalign

    def _child(
        self, b: _Builder, r: _F, v: Any, items: list[tuple[int, int, int, Any, int]], presort: bool
    ) -> None:
        """Phase 1 for one non-scalar field: build its out-of-line data now, as flatc does
        while parsing the JSON, and remember what the table will store."""
        k = r.kind
        if k == _K_STRING:
            if r.f.shared:
                off = b.shared.get(v)
                if off is None:
                    off = b.shared[v] = b.string(v)
            else:
                off = b.string(v)
            items.append((r.rank, 1, r.slot, off, 4))
        elif k == _K_TABLE:
            items.append((r.rank, 1, r.slot, r.table_desc.build(b, v), 4))
        elif k == _K_STRUCT:
            b.align(r.align)  # flatc's ParseTable(struct) aligns the builder while parsing
            items.append((r.rank, 0, r.slot, r.struct_desc.pack(v), r.align))
        elif k == _K_VECTOR:
            items.append((r.rank, 1, r.slot, _build_vector(b, r, v, presort), 4))
        elif k == _K_UNION:
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
                elif isinstance(h, _StructH):
                    b.align(h.align)
                    b.push(h.desc.pack(payload))
                    offs.append(b.size)
                else:
                    offs.append(h.build(b, payload))
            items.append((r.rank, 1, r.slot, b.offsets_vector(offs), 4))

    def build(self, b: _Builder, obj: Any) -> int:
        if not self._ready:
            self.prepare()
        if not isinstance(obj, self._type):
            raise TypeError(f"expected {self.qualname}, got {type(obj).__name__}")
        items: list[tuple[int, int, int, Any, int]] = []
        order = getattr(obj, "_fb_json_order", None)
        presort = order is None
        if order is None:
            rfs = self._enc
        else:
            rfs = [self._by_name[n] for n in order if n in self._by_name]
            for r in self._required:
                if r.f.name not in order:
                    raise ValueError(f"required field is missing: {r.f.name} in {self.qualname}")
        for r in rfs:
            v = getattr(obj, r.attr, None)
            if v is None:
                if r.required:
                    raise ValueError(f"{self.qualname}.{r.f.name} is required")
                continue
            if r.kind == _K_SCALAR:
                if not r.optional and v == r.default:
                    continue
                if r.hashed and isinstance(v, str):
                    v = _hash(r.f.hash, v, r.h.fmt)  # type: ignore[attr-defined]
                data = r.h.pack(v)  # type: ignore[attr-defined]
                if data != r.cmp_default:
                    items.append((r.rank, 0, r.slot, data, r.size))
            elif not r.f.deprecated:
                if r.f.nested and not len(v):
                    continue  # an empty nested buffer holds nothing flatc could print
                if r.f.flexbuffer and _flex_is_null(v):
                    continue  # flatc reads `"flex": null` as an absent field
                self._child(b, r, v, items, presort)
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
            if is_off:
                chunks.append(_U32.pack(size + 4 - v))
                size += 4
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
        _HH.pack_into(vt, 0, nv, table - start)
        for vo, pos in locs:
            _U16.pack_into(vt, vo, table - pos)
        key = bytes(vt)
        old = b.vtables.get(key)
        if old is None:
            chunks.append(_I32.pack(nv))
            chunks.append(key)
            size = table + nv
            b.vtables[key] = size
        else:
            chunks.append(_I32.pack(old - table))
            size = table
        b.size = size
        b.minalign = minalign
        return table

    # -- decoding -------------------------------------------------------------------------
    def decode(self, data: Any, *, verify: bool = True, size_prefixed: bool = False) -> T:
        self.prepare()
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"expected bytes, not {type(data).__name__}")
        d = _Dec(data, verify)
        base = 0
        if size_prefixed:
            if len(data) < 4:
                raise DecodeError("buffer too small for a size prefix", offset=0)
            size = _U32.unpack_from(data, 0)[0]
            if verify and size + 4 > len(data):
                raise DecodeError("size prefix larger than the buffer", offset=0)
            base = 4
        if len(data) < base + 8:
            raise DecodeError("buffer too small", offset=0)
        try:
            root = d.uoffset(base)
            out: T = self.read(d, root, 1)
            return out
        except DecodeError:
            raise
        except (
            struct.error,
            IndexError,
            ValueError,
            OverflowError,
            RecursionError,
        ) as e:
            raise DecodeError(f"malformed buffer: {e}") from None

    def read(self, d: _Dec, pos: int, depth: int) -> Any:
        if not self._ready:
            self.prepare()
        buf = d.buf
        if d.verify:
            if depth > MAX_DEPTH:
                raise d.fail("maximum nesting depth exceeded", pos, self.qualname)
            d.tables += 1
            if d.tables > MAX_TABLES:
                raise d.fail("too many tables", pos, self.qualname)
            if pos & 3:
                raise d.fail("unaligned table", pos, self.qualname)
        if pos + 4 > d.n:
            raise d.fail("table out of bounds", pos, self.qualname)
        vt = pos - _I32.unpack_from(buf, pos)[0]
        if vt < 0 or vt + 4 > d.n or (d.verify and vt & 1):
            raise d.fail("vtable out of bounds", pos, self.qualname)
        vsize, tsize = _HH.unpack_from(buf, vt)
        if vsize < 4 or vsize & 1 or vt + vsize > d.n:
            raise d.fail("invalid vtable size", vt, self.qualname)
        if tsize < 4 or pos + tsize > d.n:
            raise d.fail("invalid table size", vt, self.qualname)
        nslots = (vsize - 4) >> 1
        offs = struct.unpack_from(f"<{nslots}H", buf, vt + 4)
        kw = self._defaults.copy()
        for attr in self._fresh:
            kw[attr] = []  # ``= []`` defaults: a new list per object
        if d.verify:
            for r in self._required:
                if r.slot >= nslots or not offs[r.slot]:
                    raise d.fail(f"required field {r.f.name} is missing", pos, self.qualname)
        by_slot = self._by_slot
        nmax = min(nslots, len(by_slot))
        verify = d.verify
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
                raise d.fail(f"field {r.f.name} out of table bounds or unaligned", p, self.qualname)
            k = r.kind
            try:
                if k == _K_SCALAR:
                    v = r.h.read(d, p, depth)
                elif k == _K_STRING or k == _K_VECTOR:
                    v = r.h.read(d, p, depth)
                    if verify and v and r.f.nested:
                        r.f.nested_desc.decode(bytes(v), verify=True)
                elif k == _K_TABLE:
                    v = r.table_desc.read(d, d.uoffset(p), depth + 1)
                elif k == _K_STRUCT:
                    v = r.struct_desc.read(d, p)
                elif k == _K_UNION:
                    to = offs[slot - 1]
                    ut = 0
                    if to:
                        if to + r.union.disc_h.size > tsize:
                            raise d.fail("union type out of table bounds", pos + to)
                        ut = r.union.disc_h.st.unpack_from(buf, pos + to)[0]
                    v = None if ut == 0 else r.union.read_value(d, ut, p, depth + 1)
                else:
                    v = self._read_union_vector(d, r, offs, nslots, pos, p, depth)
            except DecodeError as e:
                if e.path:
                    raise
                raise DecodeError(
                    e.reason, path=f"{self.qualname}.{r.f.name}", offset=e.offset
                ) from None
            kw[r.attr] = v
        if self._plain:
            obj = _new(self.cls)  # type: ignore[arg-type]
            obj.__dict__ = kw
            return obj
        return self.cls(**kw)

    def _read_union_vector(
        self,
        d: _Dec,
        r: _F,
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


def _keyed(desc: Table[Any], items: Sequence[Any]) -> list[tuple[Any, Any]]:
    kr = desc._key
    assert kr is not None
    keyed = []
    for x in items:
        k = getattr(x, kr.attr)
        if k is None:
            k = kr.default
        keyed.append((k.encode("utf-8") if isinstance(k, str) else k, x))
    _simple_qsort(keyed, lambda a, c: a[0] < c[0])
    return keyed


def _build_vector(b: _Builder, r: _F, v: Any, presort: bool = True) -> int:
    e = r.vec_elem
    fa = r.f.force_align
    if isinstance(e, _ScalarH):
        if isinstance(v, ScalarVector):
            v = v.numpy()
        if isinstance(v, np.ndarray):
            arr = np.ascontiguousarray(v, dtype=_NP_DTYPE[e.fmt])
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
                    data, al = nd.encode_nested(nd.decode(data))
                    n = len(data)
                    fa = max(fa, al)
                except (DecodeError, ValueError):
                    pass
        else:
            if r.f.hash:
                v = [_hash(r.f.hash, x, e.fmt) if isinstance(x, str) else x for x in v]
            n = len(v)
            try:
                data = struct.pack(f"<{n}{e.fmt}", *v)
            except (struct.error, OverflowError) as ex:
                raise ValueError(f"{r.f.name}: {ex}") from None
        return b.raw_vector(data, n, e.size, fa)
    if isinstance(e, _StructH):
        items = list(v)
        if items:
            b.align(e.align)  # flatc parses each element struct (StartStruct aligns)
        desc = e.desc
        kf = desc.key
        if kf:
            for _ in range(2 if presort else 1):  # see the table case below
                keyed = [(getattr(x, kf), x) for x in items]
                _simple_qsort(keyed, lambda a, c: a[0] < c[0])
                items = [x for _, x in keyed]
        sdata = b"".join(desc.pack(x) for x in items)
        return b.raw_vector(sdata, len(items), e.align, fa)
    if isinstance(e, _StringH):
        offs = [b.string(x) for x in v]
        return b.offsets_vector(offs, fa)
    if isinstance(e, _TableH):
        items = list(v)
        e.desc.prepare()
        if presort and e.desc._key is not None:
            # A value not read from JSON is encoded as flatc encodes its to_json(), which lists
            # the vector already sorted: children are built in sorted order, then sorted again.
            items = [x for _, x in _keyed(e.desc, items)]
        offs = [e.desc.build(b, x) for x in items]
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
            _simple_qsort(keyed, lambda a, c: a[0] < c[0])
            offs = [o for _, o in keyed]
        return b.offsets_vector(offs, fa)
    raise ValueError(f"{r.f.name}: unsupported vector element")


def _hash(name: str, s: str, fmt: str) -> int:
    """flatc's ``hash`` attribute: FNV-1/FNV-1a of the UTF-8 bytes (include/flatbuffers/hash.h)."""
    data = s.encode("utf-8")
    bits = 64 if name.endswith("64") else 32 if name.endswith("32") else 16
    if bits == 64:
        h, prime, mask = (
            0xCBF29CE484222645,
            0x100000001B3,
            (1 << 64) - 1,
        )  # flatc's basis (hash.h)
    else:
        h, prime, mask = 0x811C9DC5, 0x01000193, (1 << 32) - 1
    if name.startswith("fnv1a"):
        for c in data:
            h = ((h ^ c) * prime) & mask
    else:
        for c in data:
            h = ((h * prime) & mask) ^ c
    if bits == 16:
        h = (h >> 16) ^ (h & 0xFFFF)
    size = _SCALAR_SIZE[fmt]
    if size * 8 < bits:
        h &= (1 << (size * 8)) - 1
    return to_signed(h, size) if fmt.islower() else h


def to_signed(v: int, size: int) -> int:
    bits = size * 8
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _key_value(desc: Table[Any] | Struct[Any], item: Any) -> Any:
    if isinstance(desc, Struct):
        k = getattr(item, desc.key)
    else:
        desc.prepare()
        kr = desc._key
        assert kr is not None
        k = getattr(item, kr.attr)
        if k is None:
            k = kr.default
    return k.encode("utf-8") if isinstance(k, str) else k


def lookup_by_key(desc: Table[T] | Struct[T], items: Sequence[T], key: Any) -> T | None:
    """Binary search ``items`` (sorted by the ``key`` field, as flatc stores them) for ``key``."""
    if isinstance(desc, Table):
        desc.prepare()
    if (desc.key if isinstance(desc, Struct) else desc._key) in ("", None):
        raise TypeError(f"{desc.qualname} has no key field")
    want = key.encode("utf-8") if isinstance(key, str) else key
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        k = _key_value(desc, items[mid])
        if k < want:
            lo = mid + 1
        elif want < k:
            hi = mid
        else:
            return items[mid]
    return None


def decode_nested(obj: Any, field: str, *, verify: bool = True) -> Any:
    """Decode the ``nested_flatbuffer`` held in ``obj.<field>`` (schema field name) as its
    declared root table; None when the field is empty."""
    desc = getattr(type(obj), "_FB_DESC", None)
    if not isinstance(desc, Table):
        raise TypeError(f"{type(obj).__name__} is not a FlatBuffers table")
    desc.prepare()
    r = desc._by_name.get(field)
    if r is None or not r.f.nested:
        raise ValueError(f"{desc.qualname}.{field} is not a nested_flatbuffer field")
    data = getattr(obj, r.attr)
    if not data:
        return None
    return _target(r.f.nested, desc.reg).decode(bytes(data), verify=verify)
