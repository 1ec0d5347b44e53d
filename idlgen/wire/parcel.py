"""OpenHarmony ``MessageParcel`` wire format: a Parcel writer/reader and HDI codec descriptors.

Byte rules (c_utils ``Parcel`` + what hdi-gen emits) are reproduced exactly:

* little-endian, cursor always 4-aligned, pad bytes zero;
* ``bool``/``int8``/``int16``/``uint8``/``uint16`` widened to 4 bytes, 64-bit values written at
  the (4-aligned) cursor without extra alignment;
* strings are C strings (UTF-8 + NUL, padded, no length prefix);
* enums are ``WriteUint64`` of the value sign- (or zero-) extended from the base type;
* plain-data (POD) structs and unions are one raw memory image (``WriteUnpadBuffer``), laid
  out by :mod:`idlgen.hdi.layout`; arrays of POD non-boolean elements are a ``uint32`` count
  plus one raw block; everything else goes element by element / member by member.

Out-of-band objects. A real ``MessageParcel`` carries kernel objects (file descriptors, remote
objects, ...) as binder objects; they are not part of the byte stream a pure codec produces.
Here every codec writes the *in-band* bytes exactly as the C++ does (e.g. the
``WriteBool(fd >= 0)`` before a file descriptor, the ``int32`` size after an Ashmem's fd, the
``int32`` presence flag of a strong parcelable) and appends the objects themselves, in the
order the C++ writes them, to a separate list (the *object table*). Decoding takes that list
back. Table entries: a file descriptor (also the fd of an ``Ashmem`` and of a
``SharedMemQueue``) is an ``int``; ``NativeBuffer``, sequenceables and remote objects are the
objects themselves (:class:`NativeBuffer`, any object for a sequenceable, :class:`RemoteObject`).

Decoding policy (documented in the README):

* Any malformed input raises :class:`idlgen.DecodeError` with the struct/field path and byte
  offset: truncation, missing NUL, invalid UTF-8, counts larger than the bytes left or than the
  C++ limit ``HDI_BUFF_MAX_SIZE // sizeof(T)``, enum values whose upper bytes are not the sign-
  (or zero-) extension of the base type, a missing out-of-band object.
* Unknown enum values that fit the base type are kept (as the C++ does): generated enums are
  open and turn them into pseudo-members that keep the raw number.
* ``decode`` of a whole buffer requires every byte to be consumed (and every object in a given
  table to be used): trailing bytes are a ``DecodeError``. Parcel padding and C++ struct
  padding are ignored on input, written as zeros.
* Like the C++ readers, widened small integers are truncated to their width and booleans are
  "non-zero".
"""

from __future__ import annotations

import operator
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn

from ..errors import DecodeError, EncodeError

__all__ = [
    "DEFAULT_CAPACITY",
    "HDI_BUFF_MAX_SIZE",
    "EncodeError",
    "Writer",
    "Reader",
    "Ashmem",
    "NativeBuffer",
    "SharedMemQueueMeta",
    "RemoteObject",
    "Codec",
    "BOOL",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "BYTES",
    "FD",
    "ASHMEM",
    "NATIVE_BUFFER",
    "NOTHING",
    "Absent",
    "POINTER",
    "Enum",
    "PodArray",
    "Array",
    "Map",
    "PodStruct",
    "Struct",
    "Union",
    "UnionRecord",
    "Sequenceable",
    "Interface",
    "SharedMemQueue",
    "codec_of",
    "encode_node_attr",
    "decode_node_attr",
]

#: c_utils ``DEFAULT_CPACITY``: a Parcel refuses to grow its data beyond this by default.
DEFAULT_CAPACITY = 204800
#: hdi-gen ``HDI_BUFF_MAX_SIZE`` (1024 * 200): element-wise arrays hold at most this / sizeof(T).
HDI_BUFF_MAX_SIZE = 1024 * 200
# Zero-size array elements one decode may produce beyond one per input byte.
ZERO_SIZE_ELEMENTS = 4096

_LITTLE = sys.byteorder == "little"
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
# Padding after n bytes (index n & 3), and NUL + padding after a C string of n bytes.
_PAD = (b"", b"\0\0\0", b"\0\0", b"\0")
_NULPAD = (b"\0\0\0\0", b"\0\0\0", b"\0\0", b"\0")
_ENCODE_ERRORS = (struct.error, OverflowError, TypeError, ValueError, AttributeError)


def _join(part: str, path: str) -> str:
    if not path:
        return part
    return part + path if path.startswith("[") else f"{part}.{path}"


def _rethrow(e: Exception, part: str) -> NoReturn:
    """Re-raise a codec error with ``part`` prepended to its path."""
    if isinstance(e, DecodeError):
        raise DecodeError(e.reason, path=_join(part, e.path), offset=e.offset) from None
    if isinstance(e, EncodeError):
        raise EncodeError(e.reason, path=_join(part, e.path)) from None
    raise EncodeError(f"{type(e).__name__}: {e}", path=part) from None


# ----------------------------------------------------------------------------------------------
# Out-of-band values


@dataclass(frozen=True, slots=True)
class Ashmem:
    """An anonymous shared-memory region: its fd travels out of band, ``size`` (> 0) in band."""

    fd: int
    size: int


@dataclass(frozen=True, slots=True)
class NativeBuffer:
    """A graphics buffer handle (``sptr<NativeBuffer>``), passed through as an opaque object."""

    handle: object = None


@dataclass(frozen=True, slots=True)
class SharedMemQueueMeta:
    """The metadata of a ``SharedMemQueue<T>``: fd out of band; element count and type in band."""

    fd: int
    element_count: int
    type: int = 0


@dataclass(eq=False, slots=True)
class RemoteObject:
    """A binder object reference: the interface descriptor and the local object behind it.

    In a loopback (:mod:`idlgen.wire.ipc`) ``target`` is the service stub that answers requests.
    """

    descriptor: str
    target: object = None


# ----------------------------------------------------------------------------------------------
# Parcel writer / reader


class Writer:
    """A growing Parcel: in-band bytes plus the out-of-band object table.

    ``objects`` is None when the caller does not want the objects (they are then dropped).
    ``export_remote`` turns an interface implementation into a :class:`RemoteObject`.
    """

    __slots__ = ("buf", "objects", "export_remote")

    def __init__(
        self,
        objects: list[object] | None = None,
        export_remote: Callable[[object, str], RemoteObject] | None = None,
    ) -> None:
        self.buf = bytearray()
        self.objects = objects
        self.export_remote = export_remote

    def write_bool(self, v: bool) -> None:
        self.buf += _I32.pack(1 if v else 0)

    def write_int32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def write_uint32(self, v: int) -> None:
        self.buf += _U32.pack(v)

    def write_int64(self, v: int) -> None:
        self.buf += _I64.pack(v)

    def write_uint64(self, v: int) -> None:
        self.buf += _U64.pack(v)

    def write_cstring(self, s: str) -> None:
        b = s.encode("utf-8")
        if b"\0" in b:
            raise EncodeError("string contains NUL; a C string cannot carry it")
        self.buf += b
        self.buf += _NULPAD[len(b) & 3]

    def write_unpad_buffer(self, data: bytes) -> None:
        if not data:
            raise EncodeError("WriteUnpadBuffer of 0 bytes fails in C++")
        self.buf += data
        self.buf += _PAD[len(data) & 3]

    def write_string16(self, s: str) -> None:
        units = s.encode("utf-16-le")
        self.buf += _I32.pack(len(units) // 2)
        self.buf += units
        self.buf += b"\0\0"
        self.buf += _PAD[(len(units) + 2) & 3]

    def write_interface_token(self, descriptor: str) -> None:
        """``MessageParcel::WriteInterfaceToken``: strict-mode policy, work source, name."""
        self.buf += _I32.pack(0x100)
        self.buf += _I32.pack(0)
        self.write_string16(descriptor)

    def write_object(self, obj: object) -> None:
        if self.objects is not None:
            self.objects.append(obj)


class Reader:
    """A read cursor over in-band bytes plus the object table they refer to."""

    __slots__ = ("buf", "pos", "end", "objects", "obj_pos", "import_remote", "free_elements")

    def __init__(
        self,
        data: bytes,
        objects: Sequence[object] | None = None,
        import_remote: Callable[[RemoteObject, str], object] | None = None,
    ) -> None:
        self.buf = data
        self.pos = 0
        self.end = len(data)
        self.objects = objects
        self.obj_pos = 0
        self.import_remote = import_remote
        # Elements that take no in-band bytes (structs of interfaces only) are not bounded by
        # the bytes left; this budget keeps a small input from decoding into a huge list.
        self.free_elements = len(data) + ZERO_SIZE_ELEMENTS

    def fail(self, message: str, offset: int | None = None) -> NoReturn:
        raise DecodeError(message, offset=self.pos if offset is None else offset)

    def need(self, n: int) -> int:
        """Advance by ``n`` bytes and return the old position."""
        pos = self.pos
        if pos + n > self.end:
            self.fail(f"truncated: need {n} bytes, {self.end - pos} left")
        self.pos = pos + n
        return pos

    def read_int32(self) -> int:
        return int(_I32.unpack_from(self.buf, self.need(4))[0])

    def read_uint32(self) -> int:
        return int(_U32.unpack_from(self.buf, self.need(4))[0])

    def read_uint64(self) -> int:
        return int(_U64.unpack_from(self.buf, self.need(8))[0])

    def read_bool(self) -> bool:
        return self.read_int32() != 0

    def read_block(self, n: int) -> int:
        """``ReadUnpadBuffer(n)``: position of n bytes, cursor moved past their padding."""
        pos = self.pos
        padded = n + (-n & 3)  # a Parcel's data always ends 4-aligned: padding must be there
        if padded > self.end - pos:
            self.fail(f"truncated: need {padded} bytes, {self.end - pos} left")
        self.pos = pos + padded
        return pos

    def read_cstring(self) -> str:
        pos = self.pos
        nul = self.buf.find(b"\0", pos, self.end)
        if nul < 0:
            self.fail("C string without NUL terminator")
        n = nul - pos + 1
        end = pos + n + (-n & 3)
        if end > self.end:
            self.fail(
                f"truncated: C string padding needs {end - self.end} more bytes",
                nul + 1,
            )
        self.pos = end
        try:
            return self.buf[pos:nul].decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"invalid UTF-8 in string: {e.reason}", pos + e.start)

    def read_string16(self) -> str:
        n = self.read_int32()
        if n < 0 or 2 * n + 2 > self.end - self.pos:
            self.fail(f"bad String16 length {n}", self.pos - 4)
        pos = self.read_block(2 * n + 2)
        try:
            return self.buf[pos : pos + 2 * n].decode("utf-16-le")
        except UnicodeDecodeError as e:
            self.fail(f"invalid UTF-16 in String16: {e.reason}", pos + e.start)

    def read_interface_token(self) -> str:
        self.read_int32()  # strict-mode policy
        self.read_int32()  # work source
        return self.read_string16()

    def take_object(self, kind: type | tuple[type, ...], what: str) -> Any:
        if self.objects is None:
            self.fail(f"{what} travels out of band and no object table was given")
        if self.obj_pos >= len(self.objects):
            self.fail(f"{what}: object table exhausted ({len(self.objects)} objects)")
        obj = self.objects[self.obj_pos]
        if not isinstance(obj, kind):
            self.fail(f"{what}: object #{self.obj_pos} is {type(obj).__name__}")
        self.obj_pos += 1
        return obj

    def check_done(self) -> None:
        if self.pos != self.end:
            self.fail(f"{self.end - self.pos} trailing bytes")
        if self.objects is not None and self.obj_pos != len(self.objects):
            self.fail(f"{len(self.objects) - self.obj_pos} unused out-of-band objects")


# ----------------------------------------------------------------------------------------------
# Codecs


class Codec:
    """Encodes/decodes one HDI type at the cursor of a :class:`Writer` / :class:`Reader`.

    ``min_size``: fewest in-band bytes a value takes (bounds counts against bytes left).
    ``cpp_size``: C++ ``sizeof`` of the type (bounds element-wise array counts).
    ``pod_fmt``: ``struct`` format of the raw memory image for POD types, else "".
    """

    min_size: int = 4
    cpp_size: int = 8
    pod_fmt: str = ""
    name: str = "value"

    def write(self, w: Writer, v: Any) -> None:
        raise NotImplementedError

    def read(self, r: Reader) -> Any:
        raise NotImplementedError

    def encode(
        self,
        value: Any,
        objects: list[object] | None = None,
        *,
        limit: int | None = DEFAULT_CAPACITY,
    ) -> bytes:
        """The in-band bytes of ``value``; out-of-band objects are appended to ``objects``."""
        w = Writer(objects)
        try:
            self.write(w, value)
        except (EncodeError, *_ENCODE_ERRORS) as e:
            _rethrow(e, self.name)
        if limit is not None and len(w.buf) > limit:
            raise EncodeError(f"{len(w.buf)} bytes exceed the Parcel capacity of {limit}")
        return bytes(w.buf)

    def decode(
        self,
        data: bytes | bytearray | memoryview,
        objects: Sequence[object] | None = None,
    ) -> Any:
        """Decode a whole buffer (and, if given, its whole object table)."""
        r = Reader(bytes(data), objects)
        try:
            v = self.read(r)
            r.check_done()
        except DecodeError as e:
            _rethrow(e, self.name)
        except (
            struct.error,
            ValueError,
            TypeError,
            OverflowError,
            IndexError,
            KeyError,
        ) as e:
            raise DecodeError(f"invalid value: {e}", path=self.name, offset=r.pos) from None
        return v


class _Scalar(Codec):
    """A number as the Parcel writes it (small ints widened to 4 bytes)."""

    def __init__(
        self, name: str, pod_fmt: str, wire: struct.Struct, bits: int, signed: bool
    ) -> None:
        self.name = name
        self.pod_fmt = pod_fmt
        self.cpp_size = struct.calcsize(pod_fmt)
        self._wire = wire
        self.min_size = wire.size
        self._pack = wire.pack
        self._unpack = wire.unpack_from
        self._bits = bits
        self._signed = signed
        # widened integers: range of the declared width, truncation on read
        self._narrow = bits < wire.size * 8 and bits > 1
        self._lo = -(1 << (bits - 1)) if signed else 0
        self._hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def write(self, w: Writer, v: Any) -> None:
        if self._narrow and not self._lo <= v <= self._hi:
            raise EncodeError(f"{v!r} out of range for {self.name}")
        w.buf += self._pack(v)

    def read(self, r: Reader) -> Any:
        pos = r.pos
        n = self.min_size
        if pos + n > r.end:
            r.fail(f"truncated: need {n} bytes, {r.end - pos} left")
        r.pos = pos + n
        v = self._unpack(r.buf, pos)[0]
        if self._narrow:  # static_cast<int8_t/int16_t/uint8_t/uint16_t>
            mask = (1 << self._bits) - 1
            v &= mask
            if self._signed and v > self._hi:
                v -= 1 << self._bits
        return v


class _Bool(Codec):
    name = "boolean"
    pod_fmt = "?"
    cpp_size = 1

    def write(self, w: Writer, v: Any) -> None:
        w.buf += _I32.pack(1 if v else 0)

    def read(self, r: Reader) -> Any:
        pos = r.pos
        if pos + 4 > r.end:
            r.fail(f"truncated: need 4 bytes, {r.end - pos} left")
        r.pos = pos + 4
        return _I32.unpack_from(r.buf, pos)[0] != 0


BOOL: Codec = _Bool()
INT8: Codec = _Scalar("byte", "b", _I32, 8, True)
INT16: Codec = _Scalar("short", "h", _I32, 16, True)
INT32: Codec = _Scalar("int", "i", _I32, 32, True)
INT64: Codec = _Scalar("long", "q", _I64, 64, True)
UINT8: Codec = _Scalar("unsigned char", "B", _U32, 8, False)
UINT16: Codec = _Scalar("unsigned short", "H", _U32, 16, False)
UINT32: Codec = _Scalar("unsigned int", "I", _U32, 32, False)
UINT64: Codec = _Scalar("unsigned long", "Q", _U64, 64, False)
FLOAT: Codec = _Scalar("float", "f", _F32, 32, True)
DOUBLE: Codec = _Scalar("double", "d", _F64, 64, True)


class _String(Codec):
    name = "String"
    cpp_size = 24

    def write(self, w: Writer, v: Any) -> None:
        w.write_cstring(v)

    def read(self, r: Reader) -> Any:
        return r.read_cstring()


STRING: Codec = _String()


class Absent(Codec):
    """A struct member hdi-gen does not marshal (interface, ``Pointer``): no bytes at all.

    Decoding yields ``value``, the generated field's default (None for interfaces, 0 for
    pointers).
    """

    name = "unmarshalled member"
    min_size = 0

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def write(self, w: Writer, v: Any) -> None:
        pass

    def read(self, r: Reader) -> Any:
        return self.value


NOTHING: Codec = Absent(None)


class _Pointer(Codec):
    """A ``Pointer`` method parameter: passthrough mode only, never marshalled over IPC."""

    name = "Pointer"
    min_size = 0

    def write(self, w: Writer, v: Any) -> None:
        raise EncodeError("Pointer parameters exist only in passthrough mode")

    def read(self, r: Reader) -> Any:
        r.fail("Pointer parameters exist only in passthrough mode")


POINTER: Codec = _Pointer()


class _Fd(Codec):
    """``FileDescriptor``: ``WriteBool(fd >= 0)``, then the fd out of band; -1 means none."""

    name = "FileDescriptor"
    cpp_size = 4

    def write(self, w: Writer, v: Any) -> None:
        if not isinstance(v, int):
            raise EncodeError(f"file descriptor must be an int, not {type(v).__name__}")
        if v >= 0:
            w.buf += _I32.pack(1)
            w.write_object(v)
        else:
            w.buf += _I32.pack(0)

    def read(self, r: Reader) -> Any:
        if not r.read_bool():
            return -1
        fd = r.take_object(int, "file descriptor")
        if fd < 0:
            r.fail(f"invalid file descriptor {fd}")
        return fd


FD: Codec = _Fd()


class _Ashmem(Codec):
    """``WriteAshmem``: the fd out of band, then ``int32`` size in band (null/invalid fails)."""

    name = "Ashmem"

    def write(self, w: Writer, v: Any) -> None:
        if not isinstance(v, Ashmem) or v.fd < 0 or v.size <= 0:
            raise EncodeError(f"WriteAshmem needs an Ashmem with fd >= 0 and size > 0, got {v!r}")
        w.write_object(v.fd)
        w.buf += _I32.pack(v.size)

    def read(self, r: Reader) -> Any:
        fd = r.take_object(int, "Ashmem fd")
        size = r.read_int32()
        if fd < 0 or size <= 0:
            r.fail(f"invalid Ashmem (fd {fd}, size {size})", r.pos - 4)
        return Ashmem(fd, size)


ASHMEM: Codec = _Ashmem()


class _Parcelable(Codec):
    """``WriteStrongParcelable``: ``int32`` 0 for null, else 1 and the object out of band.

    The object's own ``Marshalling`` bytes are native code hdi-gen does not see; they are
    modelled as part of the out-of-band object.
    """

    def __init__(self, name: str, kind: type | tuple[type, ...]) -> None:
        self.name = name
        self._kind = kind

    def write(self, w: Writer, v: Any) -> None:
        if v is None:
            w.buf += _I32.pack(0)
            return
        if not isinstance(v, self._kind):
            raise EncodeError(f"{self.name} value has type {type(v).__name__}")
        w.buf += _I32.pack(1)
        w.write_object(v)

    def read(self, r: Reader) -> Any:
        if r.read_int32() == 0:
            return None
        return r.take_object(self._kind, self.name)


NATIVE_BUFFER: Codec = _Parcelable("NativeBuffer", NativeBuffer)


def Sequenceable(name: str, kind: type | tuple[type, ...] = object) -> Codec:
    """A ``sequenceable`` (natively marshalled, opaque here): presence flag + object."""
    return _Parcelable(name, kind)


class Interface(Codec):
    """An interface parameter: ``WriteRemoteObject``; nothing in band, the binder out of band."""

    min_size = 0

    def __init__(self, descriptor: str) -> None:
        self.descriptor = descriptor
        self.name = descriptor

    def write(self, w: Writer, v: Any) -> None:
        if v is None:
            raise EncodeError(f"null {self.descriptor} object")
        if isinstance(v, RemoteObject):
            remote = v
        elif isinstance(getattr(v, "remote", None), RemoteObject):  # a proxy: pass its binder on
            remote = v.remote
        elif w.export_remote is not None:
            remote = w.export_remote(v, self.descriptor)
        else:
            remote = RemoteObject(self.descriptor, v)
        w.write_object(remote)

    def read(self, r: Reader) -> Any:
        remote: RemoteObject = r.take_object(RemoteObject, f"remote object {self.descriptor}")
        if r.import_remote is not None:
            return r.import_remote(remote, self.descriptor)
        return remote


class SharedMemQueue(Codec):
    """``SharedMemQueueMeta<T>::Marshalling``: fd out of band, ``uint64`` count, ``uint32`` type."""

    min_size = 12

    def __init__(self, element: str = "") -> None:
        self.name = f"SharedMemQueue<{element}>"

    def write(self, w: Writer, v: Any) -> None:
        if not isinstance(v, SharedMemQueueMeta) or v.fd < 0:
            raise EncodeError(f"{self.name} needs a SharedMemQueueMeta with a valid fd")
        w.write_object(v.fd)
        w.buf += _U64.pack(v.element_count)
        w.buf += _U32.pack(v.type)

    def read(self, r: Reader) -> Any:
        fd = r.take_object(int, f"{self.name} fd")
        return SharedMemQueueMeta(fd, r.read_uint64(), r.read_uint32())


class Enum(Codec):
    """An enum: ``WriteUint64`` of the value extended from its base type (``pod_fmt``).

    Decoding keeps unknown values that fit the base type (``cls(value)``; generated enums are
    open), and rejects upper bytes that are not the extension of a base-type value.
    """

    min_size = 8

    def __init__(self, cls: Any, base: str) -> None:
        self.cls = cls
        self.name = getattr(cls, "__name__", "enum")
        self.pod_fmt = base
        self.cpp_size = struct.calcsize(base)
        bits = 8 * self.cpp_size
        self._signed = base.islower()
        self._lo = -(1 << (bits - 1)) if self._signed else 0
        self._hi = (1 << (bits - 1)) - 1 if self._signed else (1 << bits) - 1
        self._members: dict[int, Any] | None = None

    def convert(self, v: int) -> Any:
        """The enum member for a base-type value (unknown values kept by open enums)."""
        members = self._members
        if members is None:
            members = self._members = {int(m): m for m in self.cls}
        m = members.get(v)
        if m is None:
            try:
                m = self.cls(v)
            except ValueError:
                raise DecodeError(f"unknown {self.name} value {v}") from None
        return m

    def write(self, w: Writer, v: Any) -> None:
        if not self._lo <= v <= self._hi:
            raise EncodeError(f"{v!r} out of range for enum {self.name} ({self.pod_fmt})")
        w.buf += _U64.pack(v & 0xFFFF_FFFF_FFFF_FFFF)

    def read(self, r: Reader) -> Any:
        pos = r.pos
        if pos + 8 > r.end:
            r.fail(f"truncated: need 8 bytes, {r.end - pos} left")
        r.pos = pos + 8
        v = _U64.unpack_from(r.buf, pos)[0]
        if self._signed and v > 0x7FFF_FFFF_FFFF_FFFF:
            v -= 1 << 64
        if not self._lo <= v <= self._hi:
            r.fail(f"enum {self.name} value {v:#x} does not fit its base type", pos)
        try:
            return self.convert(v)
        except DecodeError as e:
            raise DecodeError(e.reason, offset=pos) from None


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
