"""OpenHarmony ``MessageParcel`` wire format: a Parcel writer/reader and HDI codec descriptors.

Byte rules (c_utils ``Parcel`` + what hdi-gen emits) are reproduced exactly:

* little-endian, cursor always 4-aligned, pad bytes zero;
* ``bool``/``int8``/``int16``/``uint8``/``uint16`` widened to 4 bytes, 64-bit values written at
  the (4-aligned) cursor without extra alignment;
* strings are C strings (UTF-8 + NUL, padded, no length prefix);
* enums are ``WriteUint64`` of the value sign- (or zero-) extended from the base type;
* plain-data (POD) structs and unions are one raw memory image (``WriteUnpadBuffer``), laid
  out by :mod:`idlgen.ir.hdi_layout`; arrays of POD non-boolean elements are a ``uint32`` count
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

from ...errors import EncodeError
from .codecs import (
    ASHMEM,
    BOOL,
    DOUBLE,
    FD,
    FLOAT,
    INT8,
    INT16,
    INT32,
    INT64,
    NATIVE_BUFFER,
    NOTHING,
    POINTER,
    STRING,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    Absent,
    Codec,
    Enum,
    Interface,
    Sequenceable,
    SharedMemQueue,
)
from .composite import (
    BYTES,
    Array,
    Map,
    PodArray,
    PodStruct,
    Struct,
    Union,
    UnionRecord,
    codec_of,
    decode_node_attr,
    encode_node_attr,
)
from .objects import Ashmem, NativeBuffer, RemoteObject, SharedMemQueueMeta
from .stream import DEFAULT_CAPACITY, HDI_BUFF_MAX_SIZE, Reader, Writer

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
