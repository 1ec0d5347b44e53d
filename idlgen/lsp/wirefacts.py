"""The wire facts hover shows: HDI Parcel layout and command ids, FlatBuffers vtable slots,
offsets and inline sizes, computed from the IR (``ir.hdi_layout``; FlatBuffers struct layout
and slots as ``idlgen diff`` compares them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import ir
from ..ir.hdi_layout import cpp_sizeof, layout_of, struct_layout, union_layout

__all__ = ["FbsLayout", "fbs_inline_size", "fbs_struct_layout", "wire_facts"]

_OFFSET64 = ("offset64", "vector64")
# how each language spells the scalar kinds
_HDI_NAMES = dict(
    BOOL="boolean", I8="byte", U8="unsigned char", I16="short", U16="unsigned short",
    I32="int", U32="unsigned int", I64="long", U64="unsigned long", F32="float", F64="double",
)  # fmt: skip
_FBS_NAMES = dict(
    BOOL="bool", I8="byte", U8="ubyte", I16="short", U16="ushort", I32="int", U32="uint",
    I64="long", U64="ulong", F32="float", F64="double",
)  # fmt: skip


@dataclass(frozen=True)
class FbsLayout:
    size: int
    align: int
    offsets: tuple[int, ...]


def _fbs_size_align(t: ir.TypeRef, decls: Mapping[str, ir.Decl]) -> tuple[int, int]:
    if isinstance(t, ir.Scalar):
        return t.kind.size, t.kind.size
    if isinstance(t, ir.FixedArray):
        s, a = _fbs_size_align(t.element, decls)
        return s * t.length, a
    if isinstance(t, ir.Ref):
        d = decls.get(t.qualname)
        if isinstance(d, ir.Enum):
            return d.base.size, d.base.size
        if isinstance(d, ir.Struct) and not d.is_table:
            lay = fbs_struct_layout(d, decls)
            return lay.size, lay.align
    return 4, 4  # an offset (uoffset_t)


def fbs_struct_layout(s: ir.Struct, decls: Mapping[str, ir.Decl]) -> FbsLayout:
    """A FlatBuffers struct: natural alignment, size a multiple of the alignment."""
    offset, align = 0, 1
    offsets = []
    for f in s.fields:
        size, a = _fbs_size_align(f.type, decls)
        offset = (offset + a - 1) // a * a
        offsets.append(offset)
        offset += size
        align = max(align, a)
    align = max(align, s.force_align or 1)
    return FbsLayout((offset + align - 1) // align * align, align, tuple(offsets))


def fbs_inline_size(f: ir.Field, decls: Mapping[str, ir.Decl]) -> int:
    """Bytes a table field takes inside the table: scalars and structs inline, else an offset."""
    if isinstance(f.type, (ir.String, ir.Vector)) or (
        isinstance(f.type, ir.Ref) and f.type.kind in (ir.RefKind.TABLE, ir.RefKind.UNION)
    ):
        return 8 if any(a.name in _OFFSET64 for a in f.attributes) else 4
    return _fbs_size_align(f.type, decls)[0]


def _hdi_member_form(t: ir.TypeRef, resolve: Callable[[str], ir.Decl]) -> str:
    """How a member of a struct that goes member by member is written (README, "HDI wire
    format")."""
    lay = layout_of(t, resolve)
    if isinstance(t, ir.Scalar):
        return f"a Parcel {_HDI_NAMES[t.kind.name]}"
    if isinstance(t, ir.Ref) and t.kind is ir.RefKind.ENUM:
        return "an 8-byte value sign-extended from the enum's base type"
    if lay is not None:
        return f"a raw {lay.size}-byte image"
    if isinstance(t, ir.String):
        return "a C string"
    if isinstance(t, ir.Vector):
        el = layout_of(t.element, resolve)
        plain = el is not None and not (
            isinstance(t.element, ir.Scalar) and t.element.kind is ir.ScalarKind.BOOL
        )
        if plain and el is not None:
            return f"a count and one raw block of {el.size}-byte elements"
        return "a count and the elements one by one"
    if isinstance(t, ir.Map):
        return "a count and the key-sorted pairs"
    if isinstance(t, ir.Ref) and t.kind is ir.RefKind.STRUCT:
        return "its members one by one"
    return "an out-of-band object (its in-band part as the C++ writes it)"


def _hdi(
    decl: ir.Decl, member: object, decls: Mapping[str, ir.Decl], param_of: ir.Method | None
) -> list[str]:
    def resolve(q: str) -> ir.Decl:
        return decls[q]

    out: list[str] = []
    if isinstance(member, ir.Param) and param_of is not None:
        where = "request" if member.direction == "in" else "reply"
        i = [p for p in param_of.params if p.direction == member.direction].index(member)
        out.append(f"Parcel: {member.direction} parameter #{i + 1}, written in the {where}")
        return out
    if isinstance(decl, ir.Struct) and isinstance(member, ir.Field):
        i = decl.fields.index(member)
        lay = struct_layout(decl, resolve)
        if lay is not None:
            f_lay = layout_of(member.type, resolve)
            size = f_lay.size if f_lay is not None else 0
            out.append(
                f"Parcel: bytes {lay.offsets[i]}..{lay.offsets[i] + size - 1} of the "
                f"{lay.size}-byte raw image of `{decl.name}` (offset {lay.offsets[i]}, "
                f"size {size})"
            )
        else:
            out.append(
                f"Parcel: member #{i + 1} of {len(decl.fields)}, written in declaration order "
                f"as {_hdi_member_form(member.type, resolve)} "
                f"(C++ sizeof {cpp_sizeof(member.type, resolve)})"
            )
        return out
    if isinstance(decl, ir.Struct):
        lay = struct_layout(decl, resolve)
        if lay is not None:
            offs = ", ".join(f"{f.name}@{o}" for f, o in zip(decl.fields, lay.offsets))
            out.append(
                f"Parcel: plain data, one raw memory image (WriteUnpadBuffer) of {lay.size} "
                f"bytes, align {lay.align}" + (f"; offsets: {offs}" if offs else "")
            )
        else:
            out.append(
                f"Parcel: {len(decl.fields)} members written one by one in declaration order "
                "(not plain data)"
            )
    elif isinstance(decl, ir.Union) and member is None:
        ulay = union_layout(decl, resolve)
        if ulay is not None:
            out.append(f"Parcel: raw memory image of {ulay.size} bytes, align {ulay.align}")
    elif isinstance(decl, ir.Enum) and member is None:
        out.append(f"Parcel: {decl.base.size}-byte integer ({_HDI_NAMES[decl.base.name]})")
    elif isinstance(member, ir.EnumMember):
        out.append(f"value: {member.value}")
    elif isinstance(member, ir.Method):
        ins = sum(p.direction == "in" for p in member.params)
        outs = len(member.params) - ins
        kind = "oneway (no reply)" if member.oneway else f"{outs} out parameter(s) in the reply"
        out.append(f"command id: {member.cmd_id}; {ins} in parameter(s), {kind}")
    elif isinstance(decl, ir.Interface):
        ids = ", ".join(f"{m.name}={m.cmd_id}" for m in decl.methods[:12])
        more = ", …" if len(decl.methods) > 12 else ""
        out.append(f"command ids: {ids}{more}")
    return out


def _fbs(decl: ir.Decl, member: object, decls: Mapping[str, ir.Decl]) -> list[str]:
    out: list[str] = []
    if isinstance(decl, ir.Struct) and decl.is_table:
        if isinstance(member, ir.Field) and member.slot is not None:
            size = fbs_inline_size(member, decls)
            out.append(
                f"slot {member.slot}: vtable offset {4 + 2 * member.slot}, inline size {size}"
            )
            if isinstance(member.type, ir.Ref) and member.type.kind is ir.RefKind.UNION:
                out.append(
                    f"its `{member.name}_type` discriminant: slot {member.slot - 1}, "
                    f"vtable offset {4 + 2 * (member.slot - 1)}, inline size 1"
                )
        elif member is None:
            slots = max((f.slot for f in decl.fields if f.slot is not None), default=-1) + 1
            out.append(f"table: {slots} slot(s), vtable of up to {4 + 2 * slots} bytes")
    elif isinstance(decl, ir.Struct):
        lay = fbs_struct_layout(decl, decls)
        if isinstance(member, ir.Field):
            i = decl.fields.index(member)
            size = _fbs_size_align(member.type, decls)[0]
            out.append(f"struct field: offset {lay.offsets[i]}, size {size}")
        else:
            out.append(f"struct: size {lay.size}, align {lay.align} (stored inline)")
    elif isinstance(decl, ir.Enum) and member is None:
        out.append(f"stored as {_FBS_NAMES[decl.base.name]} ({decl.base.size} byte(s))")
    elif isinstance(member, (ir.EnumMember, ir.UnionMember)) and member.value is not None:
        out.append(f"value: {member.value}")
    return out


def wire_facts(
    language: str,
    decl: ir.Decl,
    member: object,
    decls: Mapping[str, ir.Decl],
    param_of: ir.Method | None = None,
) -> list[str]:
    """One line per fact; nothing when a type is unresolved (a schema with errors)."""
    try:
        if language == "hdi":
            return _hdi(decl, member, decls, param_of)
        return _fbs(decl, member, decls)
    except (KeyError, TypeError, ValueError):
        return []
