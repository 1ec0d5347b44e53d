"""The Parcel byte stream: a writer and a bounded reader with located errors."""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ...errors import DecodeError, EncodeError
from .objects import RemoteObject

#: c_utils ``DEFAULT_CPACITY``: a Parcel refuses to grow its data beyond this by default.
DEFAULT_CAPACITY = 204800
#: hdi-gen ``HDI_BUFF_MAX_SIZE`` (1024 * 200): element-wise arrays hold at most this / sizeof(T).
HDI_BUFF_MAX_SIZE = 1024 * 200
# Zero-size array elements one decode may produce beyond one per input byte.
ZERO_SIZE_ELEMENTS = 4096

# Shared with the leaf and composite codecs (codecs.py, composite.py): their internal API.
LITTLE = sys.byteorder == "little"
U32 = struct.Struct("<I")
I32 = struct.Struct("<i")
U64 = struct.Struct("<Q")
I64 = struct.Struct("<q")
F32 = struct.Struct("<f")
F64 = struct.Struct("<d")
# Padding after n bytes (index n & 3), and NUL + padding after a C string of n bytes.
PAD = (b"", b"\0\0\0", b"\0\0", b"\0")
NULPAD = (b"\0\0\0\0", b"\0\0\0", b"\0\0", b"\0")
ENCODE_ERRORS = (struct.error, OverflowError, TypeError, ValueError, AttributeError)


def _join(part: str, path: str) -> str:
    if not path:
        return part
    return part + path if path.startswith("[") else f"{part}.{path}"


def rethrow(e: Exception, part: str) -> NoReturn:
    """Re-raise a codec error with ``part`` prepended to its path."""
    if isinstance(e, DecodeError):
        raise DecodeError(e.reason, path=_join(part, e.path), offset=e.offset) from None
    if isinstance(e, EncodeError):
        raise EncodeError(e.reason, path=_join(part, e.path)) from None
    raise EncodeError(f"{type(e).__name__}: {e}", path=part) from None


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
        self.buf += I32.pack(1 if v else 0)

    def write_int32(self, v: int) -> None:
        self.buf += I32.pack(v)

    def write_uint32(self, v: int) -> None:
        self.buf += U32.pack(v)

    def write_int64(self, v: int) -> None:
        self.buf += I64.pack(v)

    def write_uint64(self, v: int) -> None:
        self.buf += U64.pack(v)

    def write_cstring(self, s: str) -> None:
        b = s.encode("utf-8")
        if b"\0" in b:
            raise EncodeError("string contains NUL; a C string cannot carry it")
        self.buf += b
        self.buf += NULPAD[len(b) & 3]

    def write_unpad_buffer(self, data: bytes) -> None:
        if not data:
            raise EncodeError("WriteUnpadBuffer of 0 bytes fails in C++")
        self.buf += data
        self.buf += PAD[len(data) & 3]

    def write_string16(self, s: str) -> None:
        units = s.encode("utf-16-le")
        self.buf += I32.pack(len(units) // 2)
        self.buf += units
        self.buf += b"\0\0"
        self.buf += PAD[(len(units) + 2) & 3]

    def write_interface_token(self, descriptor: str) -> None:
        """``MessageParcel::WriteInterfaceToken``: strict-mode policy, work source, name."""
        self.buf += I32.pack(0x100)
        self.buf += I32.pack(0)
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
        return int(I32.unpack_from(self.buf, self.need(4))[0])

    def read_uint32(self) -> int:
        return int(U32.unpack_from(self.buf, self.need(4))[0])

    def read_uint64(self) -> int:
        return int(U64.unpack_from(self.buf, self.need(8))[0])

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
