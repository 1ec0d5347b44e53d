"""Codec descriptors of leaf HDI types: scalars, strings, handles, interfaces, enums."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ...errors import DecodeError, EncodeError
from .objects import Ashmem, NativeBuffer, RemoteObject, SharedMemQueueMeta
from .stream import (
    DEFAULT_CAPACITY,
    ENCODE_ERRORS,
    F32,
    F64,
    I32,
    I64,
    Reader,
    rethrow,
    U32,
    U64,
    Writer,
)

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
        except (EncodeError, *ENCODE_ERRORS) as e:
            rethrow(e, self.name)
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
            rethrow(e, self.name)
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


class Scalar(Codec):
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
        w.buf += I32.pack(1 if v else 0)

    def read(self, r: Reader) -> Any:
        pos = r.pos
        if pos + 4 > r.end:
            r.fail(f"truncated: need 4 bytes, {r.end - pos} left")
        r.pos = pos + 4
        return I32.unpack_from(r.buf, pos)[0] != 0


BOOL: Codec = _Bool()
INT8: Codec = Scalar("byte", "b", I32, 8, True)
INT16: Codec = Scalar("short", "h", I32, 16, True)
INT32: Codec = Scalar("int", "i", I32, 32, True)
INT64: Codec = Scalar("long", "q", I64, 64, True)
UINT8: Codec = Scalar("unsigned char", "B", U32, 8, False)
UINT16: Codec = Scalar("unsigned short", "H", U32, 16, False)
UINT32: Codec = Scalar("unsigned int", "I", U32, 32, False)
UINT64: Codec = Scalar("unsigned long", "Q", U64, 64, False)
FLOAT: Codec = Scalar("float", "f", F32, 32, True)
DOUBLE: Codec = Scalar("double", "d", F64, 64, True)


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
            w.buf += I32.pack(1)
            w.write_object(v)
        else:
            w.buf += I32.pack(0)

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
        w.buf += I32.pack(v.size)

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
            w.buf += I32.pack(0)
            return
        if not isinstance(v, self._kind):
            raise EncodeError(f"{self.name} value has type {type(v).__name__}")
        w.buf += I32.pack(1)
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
        w.buf += U64.pack(v.element_count)
        w.buf += U32.pack(v.type)

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
        w.buf += U64.pack(v & 0xFFFF_FFFF_FFFF_FFFF)

    def read(self, r: Reader) -> Any:
        pos = r.pos
        if pos + 8 > r.end:
            r.fail(f"truncated: need 8 bytes, {r.end - pos} left")
        r.pos = pos + 8
        v = U64.unpack_from(r.buf, pos)[0]
        if self._signed and v > 0x7FFF_FFFF_FFFF_FFFF:
            v -= 1 << 64
        if not self._lo <= v <= self._hi:
            r.fail(f"enum {self.name} value {v:#x} does not fit its base type", pos)
        try:
            return self.convert(v)
        except DecodeError as e:
            raise DecodeError(e.reason, offset=pos) from None
