"""flatc's FlatBufferBuilder, back to front, as a list of chunks; flatc's own quicksort."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import EncodeError
from .scalars import U32, U64


class Builder:
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
        if isinstance(s, str):
            b = s.encode("utf-8")
        elif isinstance(s, (bytes, bytearray, memoryview)):
            b = bytes(s)
        else:
            raise EncodeError(f"expected a string, got {type(s).__name__}")
        n = len(b)
        self.prealign(n + 1, 4)
        self.chunks.append(U32.pack(n) + b + b"\0")
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
            U32.pack(n)
            + struct.pack(
                f"<{n}I", *[0 if o is None else base - 4 * k - o for k, o in enumerate(offs)]
            )
        )
        self.size += total + 4
        return self.size

    def raw_vector(
        self,
        data: bytes | memoryview,
        count: int,
        elem_align: int,
        force_align: int = 0,
        lsize: int = 4,
    ) -> int:
        """A vector of inline elements; ``lsize`` 8 for a ``vector64`` (64-bit length)."""
        total = len(data)
        if force_align > 1 and count:
            self.prealign(total, force_align)
        self.prealign(total, lsize)
        self.prealign(total, elem_align)
        if not total:
            self.align(lsize)  # EndVector's PushElement(len) aligns
        length = (U64 if lsize == 8 else U32).pack(count)
        if total > 256:  # large payloads are not copied until the final join
            self.chunks.append(data)  # type: ignore[arg-type]
            self.chunks.append(length)
        else:
            self.chunks.append(length + data)
        self.size += total + lsize
        return self.size

    def finish(self, root: int, ident: bytes | None, size_prefixed: bool) -> bytes:
        prefix = 4 if size_prefixed else 0
        if prefix > self.minalign:
            self.minalign = prefix
        self.prealign(prefix + 4 + (4 if ident else 0), self.minalign)
        if ident:
            self.push(ident)
        self.align(4)
        self.push(U32.pack(self.size + 4 - root))
        if size_prefixed:
            self.push(U32.pack(self.size))
        self.chunks.reverse()
        return b"".join(self.chunks)


def simple_qsort(items: list[Any], less: Callable[[Any, Any], bool]) -> None:
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
