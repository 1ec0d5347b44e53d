"""Codec descriptors of composite HDI types: arrays, maps, structs, unions, NNRt node attributes."""

from __future__ import annotations

import operator
import struct
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Self, cast

from ...errors import DecodeError, EncodeError
from .codecs import BOOL, STRING, Codec, Enum
from .codecs import Scalar as _Scalar
from .stream import (  # public names, private local aliases
    DEFAULT_CAPACITY,
    ENCODE_ERRORS as _ENCODE_ERRORS,
    HDI_BUFF_MAX_SIZE,
    LITTLE as _LITTLE,
    NULPAD as _NULPAD,
    PAD as _PAD,
    Reader,
    rethrow as _rethrow,
    U32 as _U32,
    U64 as _U64,
    Writer,
)

# ----------------------------------------------------------------------------------------------
# Arrays and maps

_TYPECODES = {
    "b": "b",
    "B": "B",
    "h": "h",
    "H": "H",
    "i": "i",
    "I": "I",
    "q": "q",
    "Q": "Q",
    "f": "f",
    "d": "d",
}
assert all(array(t).itemsize == struct.calcsize(t) for t in _TYPECODES.values())


class Bytes(Codec):
    """``byte[]``/``unsigned char[]`` as ``bytes`` (1-byte elements: count + raw block)."""

    name = "byte[]"
    cpp_size = 24

    def write(self, w: Writer, v: Any) -> None:
        if not isinstance(v, (bytes, bytearray, memoryview)):
            if not all(-128 <= x <= 255 for x in v):
                raise EncodeError("byte values must be in -128..255")
            v = bytes(x & 0xFF for x in v)
        n = len(v)
        w.buf += _U32.pack(n)
        if n:
            w.buf += v
            w.buf += _PAD[n & 3]

    def read(self, r: Reader) -> Any:
        n = r.read_uint32()
        if not n:
            return b""
        if n > r.end - r.pos:
            r.fail(f"count {n} exceeds the {r.end - r.pos} bytes left", r.pos - 4)
        pos = r.read_block(n)
        return r.buf[pos : pos + n]


BYTES: Codec = Bytes()


class PodArray(Codec):
    """``T[]``/``List<T>`` of POD non-boolean ``T``: ``uint32`` count, then one raw block."""

    cpp_size = 24

    def __init__(self, element: Codec) -> None:
        self.element = element
        self.name = f"{element.name}[]"
        self._size = element.cpp_size
        fmt = element.pod_fmt
        self._typecode = _TYPECODES.get(fmt) if _LITTLE else None
        self._struct = struct.Struct("<" + fmt)
        self._enum = element if isinstance(element, Enum) else None
        self._record = element if isinstance(element, (PodStruct, Union)) else None

    def write(self, w: Writer, v: Any) -> None:
        n = len(v)
        w.buf += _U32.pack(n)
        if not n:
            return
        if self._record is not None:
            block = b"".join(self._record.pack(x) for x in v)
        elif self._typecode is not None:
            if self._enum is not None:
                lo, hi = self._enum._lo, self._enum._hi
                if not all(lo <= x <= hi for x in v):
                    raise EncodeError(f"value out of range for enum {self._enum.name}")
            block = array(self._typecode, v).tobytes()
        else:
            block = b"".join(self._struct.pack(x) for x in v)
        w.buf += block
        w.buf += _PAD[len(block) & 3]

    def read(self, r: Reader) -> Any:
        n = r.read_uint32()
        if not n:
            return []
        size = self._size
        if n > (r.end - r.pos) // size:
            r.fail(
                f"count {n} of {size}-byte elements exceeds the {r.end - r.pos} bytes left",
                r.pos - 4,
            )
        pos = r.read_block(n * size)
        block = r.buf[pos : pos + n * size]
        if self._record is not None:
            rec = self._record
            return [rec.from_block(block, i * size) for i in range(n)]
        if self._typecode is not None:
            a = array(self._typecode)
            a.frombytes(block)
            values: list[Any] = a.tolist()
        else:
            values = [t[0] for t in self._struct.iter_unpack(block)]
        if self._enum is not None:
            conv = self._enum.convert
            try:
                values = [conv(x) for x in values]
            except DecodeError as e:
                r.fail(e.reason, pos)
        return values


class Array(Codec):
    """``T[]``/``List<T>`` written element by element (boolean, String, non-POD, nested)."""

    cpp_size = 24

    def __init__(self, element: Codec, element_cpp_size: int | None = None) -> None:
        self.element = element
        self.name = f"{element.name}[]"
        self._limit = HDI_BUFF_MAX_SIZE // max(1, element_cpp_size or element.cpp_size)

    def write(self, w: Writer, v: Any) -> None:
        w.buf += _U32.pack(len(v))
        elem = self.element
        for i, x in enumerate(v):
            try:
                elem.write(w, x)
            except (EncodeError, *_ENCODE_ERRORS) as e:
                _rethrow(e, f"[{i}]")

    def read(self, r: Reader) -> Any:
        n = r.read_uint32()
        if n > self._limit:
            r.fail(f"count {n} exceeds the C++ limit {self._limit}", r.pos - 4)
        elem = self.element
        if n * elem.min_size > r.end - r.pos:
            r.fail(f"count {n} exceeds the {r.end - r.pos} bytes left", r.pos - 4)
        if not elem.min_size:
            r.free_elements -= n
            if r.free_elements < 0:
                r.fail(f"count {n} of zero-size elements exceeds the decode budget", r.pos - 4)
        out = []
        i = 0
        try:
            for i in range(n):
                out.append(elem.read(r))
        except DecodeError as e:
            _rethrow(e, f"[{i}]")
        return out


class Map(Codec):
    """``Map<K, V>``: ``uint32`` count, then key/value pairs in ascending key order."""

    cpp_size = 24

    def __init__(self, key: Codec, value: Codec) -> None:
        self.key = key
        self.value = value
        self.name = f"Map<{key.name}, {value.name}>"
        self._min = max(1, key.min_size + value.min_size)

    def write(self, w: Writer, v: Any) -> None:
        items = list(v.items())
        try:
            items.sort(key=operator.itemgetter(0))
        except TypeError:
            pass  # keys without an order (records): keep insertion order
        w.buf += _U32.pack(len(items))
        k, vw = self.key.write, self.value.write
        for key, value in items:
            try:
                k(w, key)
                vw(w, value)
            except (EncodeError, *_ENCODE_ERRORS) as e:
                _rethrow(e, f"[{key!r}]")

    def read(self, r: Reader) -> Any:
        n = r.read_uint32()
        if n * self._min > r.end - r.pos:
            r.fail(f"count {n} exceeds the {r.end - r.pos} bytes left", r.pos - 4)
        out: dict[Any, Any] = {}
        kr, vr = self.key.read, self.value.read
        key: Any = None
        try:
            for _ in range(n):
                key = None
                key = kr(r)
                out[key] = vr(r)  # duplicate keys: last wins, like std::map operator[]
        except DecodeError as e:
            _rethrow(e, f"[{key!r}]")
        return out


# ----------------------------------------------------------------------------------------------
# Records


def codec_of(cls: type) -> Codec:
    """The codec bound to a generated record class."""
    codec = cls.__dict__.get("_parcel_codec_")
    if codec is None:
        raise TypeError(f"{cls.__name__} has no Parcel codec")
    return codec  # type: ignore[no-any-return]


class PodStruct(Codec):
    """A POD struct: one raw memory image packed/unpacked by a single ``struct.Struct``.

    ``fmt`` is the ``struct`` format of the memory image; ``fields`` maps each attribute name, in
    order, to how its leaf values are converted: None (a plain number or boolean), an enum class,
    or the codec of a nested :class:`PodStruct` / :class:`Union` (in the memory image a nested
    struct's leaves are inlined, a union is ``{size}s``). ``self.fields`` holds the pairs.
    """

    def __init__(self, cls: Any, *, fmt: str, fields: Mapping[str, Any]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self._st = struct.Struct(fmt)
        self.pod_fmt = fmt.lstrip("<")
        self.cpp_size = self.min_size = self._st.size
        self.fields = tuple(fields.items())
        names = [n for n, _ in self.fields]
        self._plan: list[tuple[int, Any]] = []
        for _, conv in self.fields:
            if conv is None:
                self._plan.append((0, None))
            elif isinstance(conv, PodStruct):
                self._plan.append((2, conv))
            elif isinstance(conv, Union):
                self._plan.append((1, conv.wrap))
            else:
                self._plan.append((1, Enum(conv, "q").convert))
        self._simple = all(k == 0 for k, _ in self._plan)
        self._leaves = sum(c.leaves if k == 2 else 1 for k, c in self._plan)
        if len(names) > 1:
            self._get: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*names)
        elif names:
            one = operator.attrgetter(names[0])
            self._get = lambda v: (one(v),)
        else:
            self._get = lambda v: ()
        # Fast paths, bound per instance: enums pack as ints, so only nested records need
        # flattening on encode; decoding converts enum/union leaves in place.
        st_pack, st_unpack = self._st.pack, self._st.unpack_from
        if all(conv is None or isinstance(conv, type) for _, conv in self.fields):
            if len(names) > 1:
                get = operator.attrgetter(*names)
                self.pack = lambda v: st_pack(*get(v))  # type: ignore[method-assign]
            elif names:
                get1 = operator.attrgetter(names[0])
                self.pack = lambda v: st_pack(get1(v))  # type: ignore[method-assign]
        make = cls
        if self._simple:
            self.from_block = lambda buf, pos: make(*st_unpack(buf, pos))  # type: ignore[method-assign]
        elif all(k == 0 or k == 1 for k, _ in self._plan):
            # Unpack, convert the enum/union leaves in place, construct: no per-field dispatch.
            convert = tuple((i, c) for i, (k, c) in enumerate(self._plan) if k == 1)

            def from_block(buf: bytes, pos: int) -> Any:
                vals = list(st_unpack(buf, pos))
                for i, c in convert:
                    vals[i] = c(vals[i])
                return make(*vals)

            self.from_block = from_block  # type: ignore[method-assign]
        cls._parcel_codec_ = self

    @property
    def leaves(self) -> int:
        return self._leaves

    def _flatten(self, v: Any, out: list[Any]) -> None:
        for (kind, conv), x in zip(self._plan, self._get(v)):
            if kind == 0:
                out.append(x)
            elif kind == 2:
                conv._flatten(x, out)
            elif isinstance(x, UnionRecord):
                out.append(x._raw)
            else:
                out.append(x)

    def pack(self, v: Any) -> bytes:
        """The raw memory image of ``v``."""
        if self._simple:
            return self._st.pack(*self._get(v))
        leaves: list[Any] = []
        self._flatten(v, leaves)
        return self._st.pack(*leaves)

    def _build(self, vals: tuple[Any, ...], i: int) -> tuple[Any, int]:
        args = []
        for kind, conv in self._plan:
            if kind == 0:
                args.append(vals[i])
                i += 1
            elif kind == 1:
                args.append(conv(vals[i]))
                i += 1
            else:
                obj, i = conv._build(vals, i)
                args.append(obj)
        return self.cls(*args), i

    def from_block(self, buf: bytes, pos: int) -> Any:
        vals = self._st.unpack_from(buf, pos)
        if self._simple:
            return self.cls(*vals)
        return self._build(vals, 0)[0]

    def write(self, w: Writer, v: Any) -> None:
        w.buf += self.pack(v)  # sizeof is a multiple of 8: never padded

    def read(self, r: Reader) -> Any:
        pos = r.pos
        size = self.cpp_size
        if pos + size > r.end:
            r.fail(f"truncated: {self.name} needs {size} bytes, {r.end - pos} left")
        r.pos = pos + size
        try:
            return self.from_block(r.buf, pos)
        except DecodeError as e:
            raise DecodeError(e.reason, offset=pos) from None

    def encode(
        self,
        value: Any,
        objects: list[object] | None = None,
        *,
        limit: int | None = DEFAULT_CAPACITY,
    ) -> bytes:
        try:
            return self.pack(value)
        except (EncodeError, *_ENCODE_ERRORS) as e:
            _rethrow(e, self.name)

    def decode(
        self,
        data: bytes | bytearray | memoryview,
        objects: Sequence[object] | None = None,
    ) -> Any:
        if len(data) != self.cpp_size:
            what = "trailing bytes" if len(data) > self.cpp_size else "truncated"
            raise DecodeError(
                f"{what}: {self.name} is {self.cpp_size} bytes, got {len(data)}",
                path=self.name,
                offset=min(len(data), self.cpp_size),
            )
        if objects:
            raise DecodeError(
                f"{len(objects)} unused out-of-band objects",
                path=self.name,
                offset=len(data),
            )
        try:
            return self.from_block(bytes(data), 0)
        except DecodeError as e:
            raise DecodeError(e.reason, path=self.name, offset=0) from None


# A struct's fast path is a small table interpreted by ``Struct.read``/``Struct.write``: one
# entry per member, or per run of consecutive fixed-size members (one precompiled
# ``struct.Struct``). The common member kinds are handled inline in the interpreter loop (no
# call per member); anything unusual raises, and the struct redoes the value member by member
# through the codecs (the reference), which raises the located error.
_RUN1, _ENUM, _RUN, _CSTRING, _BLOCK, _CODEC = range(6)
_Conv = Callable[[Any], Any]


def _run_member(c: Codec) -> tuple[str, _Conv | None, _Conv | None]:
    """(wire format, read conversion, write conversion) of a fixed-size member, or ("", ...)."""
    if c is BOOL:
        return "i", bool, _bool_to_int
    if isinstance(c, _Scalar) and not c._narrow:
        return c._wire.format.lstrip("<"), None, None
    if isinstance(c, Enum):
        return "Q", _enum_reader(c), _enum_writer(c)
    return "", None, None


def _bool_to_int(x: Any) -> int:
    return 1 if x else 0


def _enum_reader(c: Enum) -> Callable[[int], Any]:
    members = c._members = {int(m): m for m in c.cls}
    signed, lo, hi = c._signed, c._lo, c._hi

    def read(v: int) -> Any:
        if signed and v > 0x7FFF_FFFF_FFFF_FFFF:
            v -= 1 << 64
        if not lo <= v <= hi:
            raise _Fallback
        m = members.get(v)
        return c.convert(v) if m is None else m

    return read


def _enum_writer(c: Enum) -> Callable[[Any], int]:
    lo, hi = c._lo, c._hi

    def write(x: Any) -> int:
        if not lo <= x <= hi:
            raise _Fallback
        masked: int = x & 0xFFFF_FFFF_FFFF_FFFF  # a float fails here, as in Enum.write
        return masked

    return write


class _Fallback(Exception):
    """The fast path met something it does not handle: redo the value the reference way."""


class Struct(Codec):
    """A non-POD struct: members in declaration order (parent's first), each by its codec.

    ``fields`` maps each attribute name, in order, to its codec (``self.fields``: the pairs).
    ``read``/``write`` interpret a per-struct table (see above); ``read_generic`` /
    ``write_generic`` go member by member through the codecs and are the reference.
    """

    def __init__(self, cls: Any, *, fields: Mapping[str, Codec]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self.fields = tuple(fields.items())
        self.min_size = sum(c.min_size for _, c in self.fields)
        # read entries: (op, a, b, c); write entries: (op, getter, a, b)
        self._rplan: list[tuple[int, Any, Any, Any]] = []
        self._wplan: list[tuple[int, Callable[[Any], Any], Any, Any]] = []
        run: list[tuple[str, str, _Conv | None, _Conv | None, Codec]] = []

        def close_run() -> None:
            if not run:
                return
            st = struct.Struct("<" + "".join(f for _, f, _, _, _ in run))
            names = [n for n, _, _, _, _ in run]
            if len(run) == 1 and isinstance(run[0][4], Enum):
                e = run[0][4]
                e._members = {int(m): m for m in e.cls}
                self._rplan.append((_ENUM, e, e._members, None))
                self._wplan.append((_ENUM, operator.attrgetter(names[0]), e._lo, e._hi))
            elif len(run) == 1:
                _, _, rc, wc, _ = run[0]
                self._rplan.append((_RUN1, st.unpack_from, st.size, rc))
                self._wplan.append((_RUN1, operator.attrgetter(names[0]), st.pack, wc))
            else:
                rconv = tuple((i, r) for i, (_, _, r, _, _) in enumerate(run) if r is not None)
                wconv = tuple((i, w) for i, (_, _, _, w, _) in enumerate(run) if w is not None)
                self._rplan.append((_RUN, st.unpack_from, st.size, rconv))
                self._wplan.append((_RUN, operator.attrgetter(*names), st.pack, wconv))
            run.clear()

        for name, c in self.fields:
            fmt, rconv, wconv = _run_member(c)
            if fmt:
                run.append((name, fmt, rconv, wconv, c))
                continue
            close_run()
            get = operator.attrgetter(name)
            if c is STRING:
                self._rplan.append((_CSTRING, None, None, None))
                self._wplan.append((_CSTRING, get, None, None))
                continue
            if c is BYTES:
                self._rplan.append((_BLOCK, 1, None, None))
            elif isinstance(c, PodArray) and c._typecode and c._enum is None and c._record is None:
                self._rplan.append((_BLOCK, c._size, c._typecode, None))
                self._wplan.append((_BLOCK, get, c._typecode, None))
                continue
            else:
                self._rplan.append((_CODEC, c.read, None, None))
            self._wplan.append((_CODEC, get, c.write, None))
        close_run()
        cls._parcel_codec_ = self

    def write(self, w: Writer, v: Any) -> None:
        buf = w.buf
        start = len(buf)
        objects = w.objects
        nobj = len(objects) if objects is not None else 0
        try:
            # most frequent kinds first
            for op, get, a, b in self._wplan:
                x = get(v)
                if op == _ENUM:
                    if not a <= x <= b:
                        raise _Fallback
                    buf += _U64.pack(x & 0xFFFF_FFFF_FFFF_FFFF)
                elif op == _CSTRING:
                    data = x.encode()
                    if b"\0" in data:
                        raise _Fallback
                    buf += data
                    buf += _NULPAD[len(data) & 3]
                elif op == _BLOCK:
                    n = len(x)
                    buf += _U32.pack(n)
                    if n:
                        data = array(a, x).tobytes()
                        buf += data
                        buf += _PAD[len(data) & 3]
                elif op == _RUN1:
                    buf += a(x if b is None else b(x))
                elif op == _RUN:
                    if b:
                        x = list(x)
                        for i, conv in b:
                            x[i] = conv(x[i])
                    buf += a(*x)
                else:
                    a(w, x)
        except Exception:  # the reference path raises the located error (or agrees)
            del buf[start:]
            if objects is not None:
                del objects[nobj:]
            self.write_generic(w, v)

    def write_generic(self, w: Writer, v: Any) -> None:
        """Member by member through each codec's ``write`` (the reference for the fast path)."""
        name = ""
        try:
            for name, codec in self.fields:
                codec.write(w, getattr(v, name))
        except (EncodeError, *_ENCODE_ERRORS) as e:
            _rethrow(e, name)

    def read(self, r: Reader) -> Any:
        start, obj_pos = r.pos, r.obj_pos
        buf, end = r.buf, r.end
        args: list[Any] = []
        pos = start
        try:
            for op, a, b, c in self._rplan:
                # most frequent kinds first
                if op == _ENUM:
                    if pos + 8 > end:
                        raise _Fallback
                    x = _U64.unpack_from(buf, pos)[0]
                    pos += 8
                    if a._signed and x > 0x7FFF_FFFF_FFFF_FFFF:
                        x -= 1 << 64
                    if not a._lo <= x <= a._hi:
                        raise _Fallback
                    m = b.get(x)
                    args.append(a.convert(x) if m is None else m)
                elif op == _CSTRING:
                    nul = buf.find(b"\0", pos, end)
                    if nul < 0:
                        raise _Fallback
                    n = nul - pos + 1
                    e = pos + n + (-n & 3)
                    if e > end:
                        raise _Fallback
                    args.append(buf[pos:nul].decode("utf-8"))
                    pos = e
                elif op == _BLOCK:
                    if pos + 4 > end:
                        raise _Fallback
                    n = _U32.unpack_from(buf, pos)[0]
                    pos += 4
                    if not n:
                        args.append(b"" if b is None else [])
                        continue
                    if n > (end - pos) // a:
                        raise _Fallback
                    k = n * a
                    e = pos + k + (-k & 3)
                    if e > end:
                        raise _Fallback
                    if b is None:
                        args.append(buf[pos : pos + k])
                    else:
                        arr = array(b)
                        arr.frombytes(buf[pos : pos + k])
                        args.append(arr.tolist())
                    pos = e
                elif op == _RUN1:
                    if pos + b > end:
                        raise _Fallback
                    x = a(buf, pos)[0]
                    pos += b
                    args.append(x if c is None else c(x))
                elif op == _RUN:
                    if pos + b > end:
                        raise _Fallback
                    vals = a(buf, pos)
                    pos += b
                    if c:
                        vals = list(vals)
                        for i, conv in c:
                            vals[i] = conv(vals[i])
                    args += vals
                else:
                    r.pos = pos
                    args.append(a(r))
                    pos = r.pos
        except Exception:  # the reference path raises the located error
            r.pos, r.obj_pos = start, obj_pos
            return self.read_generic(r)
        r.pos = pos
        return self.cls(*args)

    def read_generic(self, r: Reader) -> Any:
        """Member by member through each codec's ``read`` (the reference for the fast path)."""
        args = []
        name = ""
        try:
            for name, codec in self.fields:
                args.append(codec.read(r))
        except DecodeError as e:
            _rethrow(e, name)
        return self.cls(*args)


class Union(Codec):
    """A union: the raw ``aligned(8)`` memory image of a :class:`UnionRecord` subclass.

    ``members`` maps each member name to its POD codec (a number codec such as :data:`INT32`,
    an :class:`Enum` or a :class:`PodStruct`); ``schema_names`` maps escaped attribute names to
    the schema's member names. Binds the layout to ``cls``.
    """

    def __init__(
        self,
        cls: Any,
        *,
        size: int,
        members: Mapping[str, Codec],
        schema_names: Mapping[str, str] | None = None,
    ) -> None:
        self.cls = cls
        self.name = cls.__name__
        self.cpp_size = self.min_size = size
        self.pod_fmt = f"{size}s"
        self.members = dict(members)
        cls._parcel_codec_ = self
        cls._SIZE = size
        cls._MEMBERS = self.members
        # (attribute, schema name) of members whose names were escaped: dicts use schema names
        cls._SCHEMA_NAMES = dict(schema_names or {})

    def pack(self, v: Any) -> bytes:
        if not isinstance(v, UnionRecord):
            raise EncodeError(
                f"{type(v).__qualname__} is not a UnionRecord: HDI unions must subclass"
                " idlgen.wire.parcel.UnionRecord (templates/hdi_union.j2)"
            )
        raw: bytes = v._raw
        return raw

    def wrap(self, raw: bytes) -> Any:
        """A union value over ``raw`` (the class must be a :class:`UnionRecord`)."""
        make = getattr(self.cls, "_from_raw", None)
        if make is None:
            raise DecodeError(f"{self.name} is not a UnionRecord subclass")
        return make(raw)

    def from_block(self, buf: bytes, pos: int) -> Any:
        return self.wrap(buf[pos : pos + self.cpp_size])

    def write(self, w: Writer, v: Any) -> None:
        w.buf += self.pack(v)

    def read(self, r: Reader) -> Any:
        pos = r.read_block(self.cpp_size)
        return self.from_block(r.buf, pos)


class UnionRecord:
    """Base of generated HDI unions: a record over the union's raw bytes.

    Any member can be set (``u.a = 1``; the constructor and ``from_dict`` zero the other bytes)
    and read (``u.b`` reinterprets the same bytes); ``==`` compares the bytes; ``to_dict``
    returns ``{member: value}`` for the member last set, or the first member after decoding.
    """

    __slots__ = ("_raw", "_member")
    _SIZE: ClassVar[int] = 0
    _MEMBERS: ClassVar[dict[str, Codec]] = {}
    _SCHEMA_NAMES: ClassVar[dict[str, str]] = {}

    def __init__(self, **member: Any) -> None:
        if len(member) > 1:
            raise TypeError(f"{type(self).__name__}: set at most one member, got {sorted(member)}")
        object.__setattr__(self, "_raw", bytes(self._SIZE))
        object.__setattr__(self, "_member", None)
        for name, value in member.items():
            setattr(self, name, value)

    @classmethod
    def _from_raw(cls, raw: bytes) -> Any:
        self = cls.__new__(cls)
        object.__setattr__(self, "_raw", bytes(raw))
        object.__setattr__(self, "_member", None)
        return self

    def to_parcel(
        self,
        objects: list[object] | None = None,
        *,
        limit: int | None = DEFAULT_CAPACITY,
    ) -> bytes:
        """``WriteUnpadBuffer(&u, sizeof(U))``: the raw memory image."""
        return codec_of(type(self)).encode(self, objects, limit=limit)

    @classmethod
    def from_parcel(cls, data: bytes, objects: Sequence[object] | None = None) -> Self:
        """Decode the raw memory image; malformed input raises ``idlgen.DecodeError``."""
        return cast(Self, codec_of(cls).decode(data, objects))

    @property
    def raw(self) -> bytes:
        """The union's memory image (``sizeof`` bytes)."""
        raw: bytes = self._raw
        return raw

    def __getattr__(self, name: str) -> Any:
        codec = type(self)._MEMBERS.get(name)
        if codec is None:
            raise AttributeError(f"{type(self).__name__} has no member {name!r}")
        raw = object.__getattribute__(self, "_raw")
        if isinstance(codec, (PodStruct, Union)):
            return codec.from_block(raw, 0)
        v = struct.unpack_from("<" + codec.pod_fmt, raw, 0)[0]
        return codec.convert(v) if isinstance(codec, Enum) else v

    def __setattr__(self, name: str, value: Any) -> None:
        codec = type(self)._MEMBERS.get(name)
        if codec is None:
            raise AttributeError(f"{type(self).__name__} has no member {name!r}")
        if isinstance(codec, (PodStruct, Union)):
            data = codec.pack(value)
        else:
            if isinstance(codec, Enum) and isinstance(value, str):
                value = codec.cls[value]
            try:
                data = struct.pack("<" + codec.pod_fmt, value)
            except struct.error as e:
                raise EncodeError(f"{value!r} does not fit member {name}: {e}") from None
        raw = self._raw
        object.__setattr__(self, "_raw", data + raw[len(data) :])
        object.__setattr__(self, "_member", name)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._raw == other._raw)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = self._member or next(iter(self._MEMBERS), None)
        shown = f"{name}={getattr(self, name)!r}" if name else ""
        return f"{type(self).__name__}({shown})"

    def to_dict(self) -> dict[str, Any]:
        name = self._member or next(iter(self._MEMBERS), None)
        if name is None:
            return {}
        v = getattr(self, name)
        key = self._SCHEMA_NAMES.get(name, name)
        return {key: v.to_dict() if hasattr(v, "to_dict") else v}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        if len(d) > 1:
            raise ValueError(f"{cls.__name__}: at most one member, got {sorted(d)}")
        self = cls()
        by_schema = {v: k for k, v in cls._SCHEMA_NAMES.items()}
        for key, value in d.items():
            name = by_schema.get(key, key)
            codec = cls._MEMBERS.get(name)
            if isinstance(codec, PodStruct | Union) and isinstance(value, dict):
                from_dict = getattr(codec.cls, "from_dict", None)
                value = from_dict(value) if from_dict else codec.cls(**value)
            setattr(self, name, value)
        return self


# ----------------------------------------------------------------------------------------------
# NNRt nodeAttr


def encode_node_attr(attrs: Any) -> bytes:
    """``Node.nodeAttr``: the fresh-Parcel encoding of an operator's attribute struct."""
    return codec_of(type(attrs)).encode(attrs)


def decode_node_attr(node_type: Any, data: bytes, mapping: dict[Any, type]) -> Any:
    """Decode ``Node.nodeAttr`` with the attribute struct ``mapping[node_type]``."""
    cls = mapping.get(node_type)
    if cls is None:
        raise DecodeError(
            f"no attribute struct for node type {node_type!r}",
            path="nodeAttr",
            offset=0,
        )
    return codec_of(cls).decode(data)
