"""Codec descriptors of composite HDI types: arrays, maps, structs, unions, NNRt node attributes."""

from __future__ import annotations

import operator
import struct
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from ...errors import DecodeError, EncodeError
from .stream import (
    DEFAULT_CAPACITY,
    _ENCODE_ERRORS,
    HDI_BUFF_MAX_SIZE,
    _I32,
    _LITTLE,
    _NULPAD,
    _PAD,
    Reader,
    _rethrow,
    _U32,
    _U64,
    Writer,
)
from .codecs import BOOL, Codec, Enum, _Scalar, STRING

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


class _Bytes(Codec):
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


BYTES: Codec = _Bytes()


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

    ``fields`` pairs each attribute name with how its leaf values are converted: None (a plain
    number or boolean), an enum class, or the codec of a nested :class:`PodStruct` / :class:`Union`
    (in the memory image a nested struct's leaves are inlined, a union is ``{size}s``).
    """

    def __init__(self, cls: Any, fmt: str, fields: Iterable[tuple[str, Any]]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self._st = struct.Struct(fmt)
        self.pod_fmt = fmt.lstrip("<")
        self.cpp_size = self.min_size = self._st.size
        self.fields = tuple(fields)
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
        if self._simple:
            make = cls
            self.from_block = lambda buf, pos: make(*st_unpack(buf, pos))  # type: ignore[method-assign]
        elif all(k == 0 or k == 1 for k, _ in self._plan):
            # Straight-line code (like dataclasses' generated __init__): unpack, convert the
            # enum/union leaves, construct; no per-field loop.
            leaves = [f"x{i}" for i in range(len(self._plan))]
            args = [
                x if k == 0 else f"c{i}({x})"
                for i, ((k, _), x) in enumerate(zip(self._plan, leaves))
            ]
            env: dict[str, Any] = {"make": cls, "unpack": st_unpack}
            env.update({f"c{i}": c for i, (k, c) in enumerate(self._plan) if k == 1})
            src = (
                "def from_block(buf, pos):\n"
                f"    {', '.join(leaves)}, = unpack(buf, pos)\n"
                f"    return make({', '.join(args)})\n"
            )
            exec(src, env)  # noqa: S102 - source built from this function's own literals
            self.from_block = env["from_block"]  # type: ignore[method-assign]
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


class Struct(Codec):
    """A non-POD struct: members in declaration order (parent's first), each by its codec."""

    def __init__(self, cls: Any, fields: Iterable[tuple[str, Codec]]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self.fields = tuple(fields)
        self.min_size = sum(c.min_size for _, c in self.fields)
        self.read = _compile_reader(self)  # type: ignore[method-assign,assignment]
        self.write = _compile_writer(self)  # type: ignore[method-assign,assignment]
        cls._parcel_codec_ = self

    def write(self, w: Writer, v: Any) -> None:
        # replaced per instance by the compiled writer (see __init__)
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
        # replaced per instance by the compiled reader (see __init__)
        return self.read_generic(r)

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


_TRUNCATED = "truncated: need {} bytes, {} left"


def _compile_reader(codec: Struct) -> Callable[[Reader], Any]:
    """Straight-line ``read`` for a struct: common members inlined, others delegated.

    Like the ``__init__`` dataclasses generates, the source is built from the codec's own
    descriptors; it mirrors the per-codec ``read`` methods byte for byte and error for error.
    """
    env: dict[str, Any] = {
        "make": codec.cls,
        "DecodeError": DecodeError,
        "rethrow": _rethrow,
        "TRUNC": _TRUNCATED,
        "u32": _U32.unpack_from,
        "i32": _I32.unpack_from,
        "u64": _U64.unpack_from,
        "array": array,
    }
    body: list[str] = []
    out: list[str] = []

    def emit(*lines: str) -> None:
        body.extend("        " + line for line in lines)

    def need(n: str) -> None:
        emit(
            f"if pos + {n} > end:",
            f"    r.pos = pos; r.fail(TRUNC.format({n}, end - pos))",
        )

    for i, (name, c) in enumerate(codec.fields):
        v = f"v{i}"
        out.append(v)
        emit(f"f = {name!r}")
        if c is BOOL:
            need("4")
            emit(f"{v} = i32(buf, pos)[0] != 0", "pos += 4")
        elif isinstance(c, _Scalar) and not c._narrow:
            env[f"un{i}"] = c._unpack
            need(str(c.min_size))
            emit(f"{v} = un{i}(buf, pos)[0]", f"pos += {c.min_size}")
        elif c is STRING:
            emit(
                "nul = buf.find(b'\\0', pos, end)",
                "if nul < 0:",
                "    r.pos = pos; r.fail('C string without NUL terminator')",
                "n = nul - pos + 1",
                "e = pos + n + (-n & 3)",
                "if e > end:",
                "    r.pos = pos",
                "    r.fail(f'truncated: C string padding needs {e - end} more bytes', nul + 1)",
                "try:",
                f"    {v} = buf[pos:nul].decode('utf-8')",
                "except UnicodeDecodeError as ex:",
                "    r.pos = pos; r.fail(f'invalid UTF-8 in string: {ex.reason}', pos + ex.start)",
                "pos = e",
            )
        elif isinstance(c, Enum):
            env[f"en{i}"] = c
            env[f"mem{i}"] = c._members = {int(m): m for m in c.cls}
            need("8")
            emit(f"{v} = u64(buf, pos)[0]")
            if c._signed:
                emit(f"if {v} > 0x7FFFFFFFFFFFFFFF:", f"    {v} -= 1 << 64")
            emit(
                f"if not {c._lo} <= {v} <= {c._hi}:",
                f"    r.fail(f'enum {c.name} value {{{v}:#x}} does not fit its base type', pos)",
                f"m = mem{i}.get({v})",
                f"if m is None:",
                f"    r.pos = pos; m = en{i}.read(r)",
                f"{v} = m",
                "pos += 8",
            )
        elif c is BYTES or (
            isinstance(c, PodArray) and c._typecode and c._enum is None and c._record is None
        ):
            pod = c if isinstance(c, PodArray) else None
            size = pod._size if pod is not None else 1
            of = f"of {size}-byte elements " if pod is not None else ""
            need("4")
            emit(f"n = u32(buf, pos)[0]", "pos += 4")
            empty = "[]" if pod is not None else 'b""'
            emit("if not n:", f"    {v} = {empty}", "else:")
            emit(
                f"    if n > (end - pos) // {size}:",
                "        r.pos = pos",
                f"        r.fail(f'count {{n}} {of}exceeds the {{end - pos}} bytes left', pos - 4)",
                f"    k = n * {size}",
                "    e = pos + k + (-k & 3)",
                "    if e > end:",
                "        r.pos = pos; r.fail(TRUNC.format(e - pos, end - pos))",
            )
            if pod is None:
                emit(f"    {v} = buf[pos : pos + k]")
            else:
                emit(
                    f"    a = array({pod._typecode!r})",
                    "    a.frombytes(buf[pos : pos + k])",
                    f"    {v} = a.tolist()",
                )
            emit("    pos = e")
        else:
            env[f"c{i}"] = c
            emit("r.pos = pos", f"{v} = c{i}.read(r)", "pos = r.pos")
    src = "\n".join(
        [
            "def read(r):",
            "    buf = r.buf",
            "    end = r.end",
            "    pos = r.pos",
            "    f = ''",
            "    try:",
            *body,
            "    except DecodeError as ex:",
            "        rethrow(ex, f)",
            "    r.pos = pos",
            f"    return make({', '.join(out)})",
            "",
        ]
    )
    exec(src, env)  # noqa: S102 - source built from this codec's own descriptors
    fn: Callable[[Reader], Any] = env["read"]
    return fn


def _compile_writer(codec: Struct) -> Callable[[Writer, Any], None]:
    """Straight-line ``write`` for a struct, mirroring :meth:`Struct.write_generic`."""
    env: dict[str, Any] = {
        "EncodeError": EncodeError,
        "ERRORS": (EncodeError, *_ENCODE_ERRORS),
        "rethrow": _rethrow,
        "i32p": _I32.pack,
        "u32p": _U32.pack,
        "u64p": _U64.pack,
        "PAD": _PAD,
        "NULPAD": _NULPAD,
        "array": array,
    }
    body: list[str] = []

    def emit(*lines: str) -> None:
        body.extend("        " + line for line in lines)

    for i, (name, c) in enumerate(codec.fields):
        get = f"v.{name}" if name.isidentifier() else f"getattr(v, {name!r})"
        emit(f"f = {name!r}", f"x = {get}")
        if c is BOOL:
            emit("buf += i32p(1 if x else 0)")
        elif isinstance(c, _Scalar) and not c._narrow:
            env[f"pk{i}"] = c._pack
            emit(f"buf += pk{i}(x)")
        elif c is STRING:
            emit(
                "b = x.encode('utf-8')",
                "if b'\\0' in b:",
                "    raise EncodeError('string contains NUL; a C string cannot carry it')",
                "buf += b",
                "buf += NULPAD[len(b) & 3]",
            )
        elif isinstance(c, Enum):
            emit(
                f"if not {c._lo} <= x <= {c._hi}:",
                f"    raise EncodeError(f'{{x!r}} out of range for enum {c.name} ({c.pod_fmt})')",
                "buf += u64p(x & 0xFFFFFFFFFFFFFFFF)",
            )
        elif isinstance(c, PodArray) and c._typecode and c._enum is None and c._record is None:
            emit(
                "n = len(x)",
                "buf += u32p(n)",
                "if n:",
                f"    b = array({c._typecode!r}, x).tobytes()",
                "    buf += b",
                "    buf += PAD[len(b) & 3]",
            )
        else:
            env[f"c{i}"] = c
            emit(f"c{i}.write(w, x)")
    src = "\n".join(
        [
            "def write(w, v):",
            "    buf = w.buf",
            "    f = ''",
            "    try:",
            *body,
            "    except ERRORS as ex:",
            "        rethrow(ex, f)",
            "",
        ]
    )
    exec(src, env)  # noqa: S102 - source built from this codec's own descriptors
    fn: Callable[[Writer, Any], None] = env["write"]
    return fn


class Union(Codec):
    """A union: the raw ``aligned(8)`` memory image of a :class:`UnionRecord` subclass.

    ``members`` pairs each member name with its POD codec (a number codec such as
    :data:`INT32`, an :class:`Enum` or a :class:`PodStruct`). Binds the layout to ``cls``.
    """

    def __init__(self, cls: Any, size: int, members: Iterable[tuple[str, Codec]]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self.cpp_size = self.min_size = size
        self.pod_fmt = f"{size}s"
        self.members = dict(members)
        cls._parcel_codec_ = self
        cls._SIZE = size
        cls._MEMBERS = self.members

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
    def from_parcel(cls, data: bytes, objects: Sequence[object] | None = None) -> Any:
        return codec_of(cls).decode(data, objects)

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
        return {name: v.to_dict() if hasattr(v, "to_dict") else v}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Any:
        if len(d) > 1:
            raise ValueError(f"{cls.__name__}: at most one member, got {sorted(d)}")
        self = cls()
        for name, value in d.items():
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
