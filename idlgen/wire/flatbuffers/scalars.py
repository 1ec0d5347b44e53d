"""Scalar layout facts shared by the encoder, decoder and JSON: formats, sizes, ranges, hashes."""

from __future__ import annotations

import struct

import numpy as np

MAX_DEPTH = 64
MAX_TABLES = 1_000_000
# Scalar vectors with at least this many bytes decode to a zero-copy ScalarVector.
ZERO_COPY_MIN = 4096

U32 = struct.Struct("<I")
I32 = struct.Struct("<i")
U16 = struct.Struct("<H")
U64 = struct.Struct("<Q")
HH = struct.Struct("<HH")
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
NP_DTYPE = {k: np.dtype("<" + ("?" if k == "?" else k)) for k in _SCALAR_SIZE}
INT_RANGE = {
    "b": (-(1 << 7), (1 << 7) - 1),
    "B": (0, (1 << 8) - 1),
    "h": (-(1 << 15), (1 << 15) - 1),
    "H": (0, (1 << 16) - 1),
    "i": (-(1 << 31), (1 << 31) - 1),
    "I": (0, (1 << 32) - 1),
    "q": (-(1 << 63), (1 << 63) - 1),
    "Q": (0, (1 << 64) - 1),
}


def flatc_hash(name: str, s: str, fmt: str) -> int:
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
