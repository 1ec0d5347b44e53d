"""Labelled byte regions of a binary (``idlgen annotate``).

A walker (:mod:`.fb_regions`, :mod:`.parcel_regions`) claims the bytes it can explain through a
:class:`Claims`; whatever no walk reached is filled in as ``padding`` (a short zero run) or
``unreachable``, so every byte lies in exactly one region. Problems met on the way (a malformed
buffer) are collected, not raised: the caller prints the regions, then reports the first
problem as a ``DecodeError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "Region", "Claims"]

KINDS = (
    "header",
    "vtable",
    "table",
    "field",
    "vector",
    "string",
    "union",
    "padding",
    "unreachable",
)


@dataclass(frozen=True)
class Region:
    """``size`` bytes at ``offset``; ``kind`` is one of :data:`KINDS`, ``section`` the object
    the bytes belong to (``table (MyGame.Example.Monster)``), ``type`` their wire type,
    ``value`` what they hold, ``label`` what they are."""

    offset: int
    size: int
    kind: str
    section: str
    type: str
    value: str
    label: str


class Claims:
    """The regions claimed so far; each byte at most once, work bounded by the buffer size."""

    def __init__(self, data: bytes, budget_factor: int = 16) -> None:
        self.data = data
        self.n = len(data)
        self.free = bytearray(b"\1") * self.n
        self.regions: list[Region] = []
        self.problems: list[tuple[int, str]] = []
        self.budget = budget_factor * self.n + 4096

    def spend(self, work: int) -> bool:
        """Charge ``work``; False (and one problem) once the budget is exhausted."""
        if self.budget < 0:
            return False
        self.budget -= work
        if self.budget < 0:
            self.problem(0, "annotation stopped: the buffer refers to more data than it holds")
            return False
        return True

    def problem(self, offset: int, message: str) -> None:
        if len(self.problems) < 1000:
            self.problems.append((offset, message))

    def claim(
        self,
        offset: int,
        size: int,
        kind: str,
        section: str,
        type_: str,
        value: str,
        label: str,
    ) -> bool:
        """Claim ``[offset, offset + size)``; the part inside the buffer and not yet claimed is
        recorded. True when the whole range was in bounds and free."""
        end = min(offset + size, self.n)
        start = max(offset, 0)
        ok = start == offset and end == offset + size
        if not ok:
            self.problem(offset, f"{label}: {size} bytes at {offset:#x} run past the buffer")
        if start >= end or not self.spend(end - start):
            return False
        part = self.free[start:end]
        if part.count(1) != end - start:
            ok = False
            self.problem(offset, f"{label}: overlaps bytes already explained")
        i = start
        while i < end:
            if not self.free[i]:
                i += 1
                continue
            j = self.free.find(0, i, end)
            j = end if j < 0 else j
            self.free[i:j] = bytes(j - i)
            self.regions.append(Region(i, j - i, kind, section, type_, value, label))
            i = j
        return ok

    def gaps(self) -> Iterator[tuple[int, int]]:
        i = self.free.find(1)
        while i >= 0:
            j = self.free.find(0, i)
            j = self.n if j < 0 else j
            yield i, j
            i = self.free.find(1, j)

    def finish(self) -> list[Region]:
        """Fill the gaps (zeros: padding, as flatc says; anything else: unreachable) and return
        every region in offset order."""
        self.budget = max(self.budget, 0) + self.n + 1  # the gaps hold at most n bytes
        for i, j in list(self.gaps()):
            chunk = self.data[i:j]
            if not chunk.strip(b"\0"):
                label = "padding" if j - i < 8 else "padding (longer than alignment needs)"
                self.claim(i, j - i, "padding", "padding", f"uint8_t[{j - i}]", "", label)
            else:
                self.claim(
                    i, j - i, "unreachable", "unreachable", f"uint8_t[{j - i}]", "",
                    "nothing refers to these bytes",
                )  # fmt: skip
        self.regions.sort(key=lambda r: r.offset)
        return self.regions
