"""C++ memory layout of HDI types, as hdi-gen's emitted declarations get it on OpenHarmony.

Plain-data ("POD") values cross the Parcel as raw memory images (``WriteUnpadBuffer(&s,
sizeof(S))``), so their bytes are fixed by the C++ layout: natural alignment, compiler padding,
``bool`` = 1 byte, an enum as big as its base type, and ``__attribute__((aligned(8)))`` on every
POD struct and every union (which raises their alignment to 8 and rounds ``sizeof`` up to a
multiple of 8; an empty struct is therefore 8 bytes).

POD per hdi-gen: numbers, booleans, enums, unions, and structs whose members are all POD.
(``Pointer`` is POD too but only exists in passthrough mode; it is rejected here.)

``cpp_sizeof`` also sizes non-POD types (libc++ on 64-bit targets, which OpenHarmony uses):
generated readers bound element-wise array counts by ``HDI_BUFF_MAX_SIZE / sizeof(T)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import ir

__all__ = [
    "AGGREGATE_ALIGN",
    "Layout",
    "Resolver",
    "is_pod",
    "layout_of",
    "struct_layout",
    "union_layout",
    "cpp_sizeof",
]

# ``__attribute__((aligned(8)))`` on POD structs and unions.
AGGREGATE_ALIGN = 8
# libc++ (64-bit) sizes of the std/OHOS types non-POD members map to.
_STRING_SIZE = 24  # std::string
_VECTOR_SIZE = 24  # std::vector<T>
_MAP_SIZE = 24  # std::map<K, V>
_SPTR_SIZE = 8  # OHOS::sptr<T>
_SHARED_PTR_SIZE = 16  # std::shared_ptr<T>

Resolver = Callable[[str], ir.Decl]


@dataclass(frozen=True, slots=True)
class Layout:
    """Size, alignment and ``struct`` format (no byte-order prefix) of a POD type.

    ``fmt`` reproduces the whole memory image including trailing padding, so a POD struct's
    format can be embedded in an enclosing format after aligning the offset. ``offsets`` holds
    member offsets for structs (empty otherwise).
    """

    size: int
    align: int
    fmt: str
    offsets: tuple[int, ...] = ()


def _pad(n: int) -> str:
    return f"{n}x" if n > 1 else ("x" if n == 1 else "")


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def is_pod(t: ir.TypeRef, resolve: Resolver) -> bool:
    return layout_of(t, resolve) is not None


def layout_of(t: ir.TypeRef, resolve: Resolver) -> Layout | None:
    """The C layout of ``t`` if it is a POD type (``Pointer`` excluded), else None."""
    if isinstance(t, ir.Scalar):
        return Layout(t.kind.size, t.kind.size, t.kind.fmt)
    if isinstance(t, ir.Ref):
        decl = resolve(t.qualname)
        if isinstance(decl, ir.Enum):
            return Layout(decl.base.size, decl.base.size, decl.base.fmt)
        if isinstance(decl, ir.Struct) and not decl.is_table:
            return struct_layout(decl, resolve)
        if isinstance(decl, ir.Union):
            return union_layout(decl, resolve)
    return None


def struct_layout(s: ir.Struct, resolve: Resolver) -> Layout | None:
    """Layout of an HDI struct, or None when a member is not POD."""
    offset = 0
    align = AGGREGATE_ALIGN
    parts: list[str] = []
    offsets: list[int] = []
    for f in s.fields:
        lay = layout_of(f.type, resolve)
        if lay is None:
            return None
        start = _round_up(offset, lay.align)
        parts.append(_pad(start - offset))
        parts.append(lay.fmt)
        offsets.append(start)
        offset = start + lay.size
        align = max(align, lay.align)
    # An empty C++ struct still occupies one byte, which aligned(8) rounds up to 8.
    size = _round_up(max(offset, 1), align)
    parts.append(_pad(size - offset))
    return Layout(size, align, "".join(parts), tuple(offsets))


def union_layout(u: ir.Union, resolve: Resolver) -> Layout | None:
    """Layout of an HDI union (all members at offset 0; raw bytes ``{size}s``)."""
    size = 0
    align = AGGREGATE_ALIGN
    for m in u.members:
        lay = layout_of(m.type, resolve)
        if lay is None:
            return None
        size = max(size, lay.size)
        align = max(align, lay.align)
    size = max(_round_up(size, align), align)
    return Layout(size, align, f"{size}s")


def _cpp_size_align(t: ir.TypeRef, resolve: Resolver) -> tuple[int, int]:
    lay = layout_of(t, resolve)
    if lay is not None:
        return lay.size, lay.align
    if isinstance(t, ir.String):
        return _STRING_SIZE, 8
    if isinstance(t, ir.Vector):
        return _VECTOR_SIZE, 8
    if isinstance(t, ir.Map):
        return _MAP_SIZE, 8
    if isinstance(t, ir.SharedMemQueue):
        return _SHARED_PTR_SIZE, 8
    if isinstance(t, ir.Handle):
        if t.kind is ir.HandleKind.FILE_DESCRIPTOR:
            return 4, 4
        return 8, 8  # sptr<Ashmem>, sptr<NativeBuffer>, void*
    if isinstance(t, ir.Ref):
        decl = resolve(t.qualname)
        if isinstance(decl, ir.Struct):  # non-POD struct: plain C++ layout, no aligned(8)
            offset, align = 0, 1
            for f in decl.fields:
                size, a = _cpp_size_align(f.type, resolve)
                offset = _round_up(offset, a) + size
                align = max(align, a)
            return max(_round_up(offset, align), 1), align
        return _SPTR_SIZE, 8  # interface, sequenceable
    raise TypeError(f"no C++ size for {t!r}")


def cpp_sizeof(t: ir.TypeRef, resolve: Resolver) -> int:
    """``sizeof`` of the C++ type hdi-gen emits for ``t`` (64-bit OpenHarmony, libc++)."""
    return _cpp_size_align(t, resolve)[0]
