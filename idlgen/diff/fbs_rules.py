"""FlatBuffers rules (vtable slots, inline structs): tables, fields, structs, unions, services,
file-level declarations.

Member lists are described as data (``MemberRules``: which rule each rename, removal, addition
or change is) and diffed by ``members.diff_members``; field-level facts (type, default,
presence, attributes) are one generator shared by renamed and matched table fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .. import ir
from .decltext import decl_text, field_text, member_text, method_text, type_text
from .findings import Categories, Severity
from .matching import Comparison, Side, attr_map, dedup_names, first_span, sign_only
from .members import Change, MemberDiff, MemberRules, diff_members, doc_changed, first_shift_cause

__all__ = [
    "compare_table",
    "compare_struct",
    "compare_union",
    "compare_interface",
    "compare_files",
    "fbs_scalar_text",
]

# Field attributes with their own rule; id/deprecated/required/key are fields of ir.Field, and
# every other attribute change (key, nested_flatbuffer, flexbuffer, hash, ...) is FBS-A-01.
_OFFSET64_ATTRS = ("offset64", "vector64")


def _types(a: ir.TypeRef, b: ir.TypeRef) -> str:
    return f"`{type_text(a, 'fbs')}` to `{type_text(b, 'fbs')}`"


# ---- tables: fields live in vtable slots --------------------------------------------------------


@dataclass(frozen=True)
class _Slots:
    old_names: set[str]
    new_by_slot: dict[int | None, int]
    old_by_slot: dict[int | None, ir.Field]
    max_old: int


def _slots(d: MemberDiff[ir.Field]) -> _Slots:
    return _Slots(
        {f.name for f in d.old},
        {f.slot: j for j, f in enumerate(d.new)},
        {f.slot: f for f in d.old},
        max((f.slot for f in d.old if f.slot is not None), default=-1),
    )


def _table_renamed(d: MemberDiff[ir.Field], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i], d.new[j]
    if d.c.same_type(a.type, b.type):
        yield Change("FBS-T-05", f"field renamed from `{a.name}` (slot {b.slot})")
        yield from field_changes(d.c, a, b, check_type=False)
    else:
        yield Change(
            "FBS-T-06",
            f"field renamed from `{a.name}` (slot {b.slot}) and its type changed from "
            + _types(a.type, b.type),
        )


def _table_added(d: MemberDiff[ir.Field], j: int) -> Iterator[Change]:
    b, s = d.new[j], d.data
    if b.slot is not None and b.slot <= s.max_old:
        msg = f"field added at slot {b.slot}"
        taken = s.old_by_slot.get(b.slot)
        if taken is not None:
            msg += f", which old buffers use for `{taken.name}` (`{type_text(taken.type, 'fbs')}`)"
        yield Change("FBS-T-02", msg)
    else:
        yield Change("FBS-T-01", f"field appended at slot {b.slot}")


def _table_removed(d: MemberDiff[ir.Field], i: int) -> Iterator[Change]:
    a, s = d.old[i], d.data
    reuse = s.new_by_slot.get(a.slot)
    tail = (
        f"; its slot {a.slot} is now `{d.new[reuse].name}`"
        if reuse is not None and d.new[reuse].name in s.old_names
        else f"; keep it as (deprecated) to reserve slot {a.slot}"
    )
    was = "deprecated " if a.deprecated else ""
    yield Change("FBS-T-03", f"{was}field `{a.name}` deleted{tail}")


def _slot_width(f: ir.Field) -> int:
    """A union (or vector of unions) field takes two slots: the hidden _type field and the value."""
    t = f.type.element if isinstance(f.type, ir.Vector) else f.type
    return 2 if isinstance(t, ir.Ref) and t.kind is ir.RefKind.UNION else 1


def _table_changed(d: MemberDiff[ir.Field], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i], d.new[j]
    if a.slot != b.slot:
        cause = first_shift_cause(d, i, j, lambda f: f.slot, _slot_width)
        yield Change("FBS-T-02", f"slot changed from {a.slot} to {b.slot}", cause=cause)
    yield from field_changes(d.c, a, b, check_type=True)


TABLE_FIELDS: MemberRules[ir.Field] = MemberRules(
    text=field_text,
    prepare=_slots,
    same_slot=lambda d, i, j: d.old[i].slot is not None and d.old[i].slot == d.new[j].slot,
    renamed=_table_renamed,
    added=_table_added,
    removed=_table_removed,
    changed=_table_changed,
    doc=False,  # field_changes compares docs
    anchor_at_survivor=True,
)


def compare_table(c: Comparison, o: ir.Struct, n: ir.Struct, path: str) -> None:
    diff_members(c, TABLE_FIELDS, "fbs", path, o, n, o.fields, n.fields)


def _enum_base_change(c: Comparison, a: ir.TypeRef, b: ir.TypeRef) -> str:
    """For two matching enum-typed members: "byte → short" when the enum's base changed."""
    while isinstance(a, (ir.Vector, ir.FixedArray)) and isinstance(b, (ir.Vector, ir.FixedArray)):
        a, b = a.element, b.element
    if isinstance(a, ir.Ref) and isinstance(b, ir.Ref):
        ea, eb = c.o.decls.get(a.qualname), c.n.decls.get(b.qualname)
        if (
            isinstance(ea, ir.Enum)
            and isinstance(eb, ir.Enum)
            and ea.base != eb.base
            and not sign_only(ea.base, eb.base)  # same width: reported once on the enum
        ):
            return f"`{fbs_scalar_text(ea.base)}` → `{fbs_scalar_text(eb.base)}`"
    return ""


def field_changes(c: Comparison, a: ir.Field, b: ir.Field, *, check_type: bool) -> Iterator[Change]:
    """Everything about one table field but its name and slot."""
    if check_type and not c.same_type(a.type, b.type):
        if c.signedness_only(a.type, b.type):
            yield Change(
                "FBS-T-12", f"signedness changed from {_types(a.type, b.type)} (same width)"
            )
        else:
            yield Change("FBS-T-07", f"type changed from {_types(a.type, b.type)}")
    elif check_type and (bases := _enum_base_change(c, a.type, b.type)):
        yield Change("FBS-T-07", f"stored width changes: enum's underlying type {bases}")
    if a.deprecated != b.deprecated:
        if b.deprecated:
            yield Change("FBS-T-04", "field deprecated")
        else:
            yield Change("FBS-T-13", "field no longer deprecated")
    if a.optional != b.optional:
        yield Change(
            "FBS-T-11", f"optional scalar (`= null`) {'added' if b.optional else 'removed'}"
        )
        # Absent fields switch between reading a value and reading null.
        da = "null" if a.optional else default_text(a.default if a.default is not None else 0)
        db = "null" if b.optional else default_text(b.default if b.default is not None else 0)
        yield Change("FBS-T-09", f"default changed from {da} to {db}")
    elif not same_default(a.default, b.default) and c.same_type(a.type, b.type):
        yield Change(
            "FBS-T-09",
            f"default changed from {default_text(a.default)} to {default_text(b.default)}",
        )
    if a.required != b.required:
        yield Change(
            "FBS-T-10",
            f"(required) {'added: old writers may omit it and the verifier rejects their buffers' if b.required else 'removed: new writers may omit it and old verifiers reject their buffers'}",
        )
    if a.key != b.key:
        yield Change("FBS-A-01", f"(key) {'added' if b.key else 'removed'}")
    aa = attr_map(a.attributes)
    ba = attr_map(b.attributes)
    for name in sorted(set(aa) | set(ba)):
        skip = name in ("id", "deprecated", "required", "key")
        if skip or (name in aa and name in ba and aa[name] == ba[name]):
            continue
        yield Change(
            "FBS-T-08" if name in _OFFSET64_ATTRS else "FBS-A-01",
            f"attribute ({name}) changed from {attr_value_text(aa, name)} to {attr_value_text(ba, name)}",
        )
    yield from doc_changed("fbs", a, b)


# ---- structs: fixed inline layout ---------------------------------------------------------------


def _layouts(d: MemberDiff[ir.Field]) -> tuple[FbsLayout, FbsLayout]:
    assert isinstance(d.o, ir.Struct) and isinstance(d.n, ir.Struct)
    return fbs_struct_layout(d.o, d.c.o), fbs_struct_layout(d.n, d.c.n)


def _struct_added(d: MemberDiff[ir.Field], j: int) -> Iterator[Change]:
    lo, ln = d.data
    where = "appended" if all(k in d.added for k in range(j, len(d.new))) else "inserted"
    yield Change(
        "FBS-S-01", f"field {where} at offset {ln.offsets[j]}; struct size {lo.size} → {ln.size}"
    )


def _struct_changed(d: MemberDiff[ir.Field], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i], d.new[j]
    lo, ln = d.data
    if lo.offsets[i] != ln.offsets[j]:
        yield Change(
            "FBS-S-01",
            f"offset changed from {lo.offsets[i]} to {ln.offsets[j]}",
            cause=first_shift_cause(d, i, j),
        )
    if not d.c.same_type(a.type, b.type):
        if d.c.signedness_only(a.type, b.type):
            yield Change(
                "FBS-T-12", f"signedness changed from {_types(a.type, b.type)} (same width)"
            )
        else:
            yield Change("FBS-S-01", f"type changed from {_types(a.type, b.type)}")
    elif bases := _enum_base_change(d.c, a.type, b.type):
        yield Change("FBS-S-01", f"stored width changes: enum's underlying type {bases}")


STRUCT_FIELDS: MemberRules[ir.Field] = MemberRules(
    text=field_text,
    prepare=_layouts,
    same_slot=lambda d, i, j: d.data[0].offsets[i] == d.data[1].offsets[j]
    and d.c.same_type(d.old[i].type, d.new[j].type),
    renamed=lambda d, i, j: [
        Change("FBS-S-02", f"field renamed from `{d.old[i].name}` (offset {d.data[1].offsets[j]})")
    ],
    removed=lambda d, i: [
        Change(
            "FBS-S-01",
            f"field `{d.old[i].name}` removed (was at offset {d.data[0].offsets[i]})",
        )
    ],
    added=_struct_added,
    changed=_struct_changed,
)


def compare_struct(c: Comparison, o: ir.Struct, n: ir.Struct, path: str) -> None:
    d = diff_members(c, STRUCT_FIELDS, "fbs", path, o, n, o.fields, n.fields)
    lo, ln = d.data
    explained = "FBS-S-01" in d.fired
    if o.force_align != n.force_align or (
        not explained and (lo.size, lo.align) != (ln.size, ln.align)
    ):
        c.emit(
            "FBS-S-01",
            path,
            f"size/alignment changed: {lo.size}/{lo.align} → {ln.size}/{ln.align}"
            + (
                f" (force_align {o.force_align or '-'} → {n.force_align or '-'})"
                if o.force_align != n.force_align
                else ""
            ),
            old=o.span,
            new=n.span,
            old_decl=decl_text(o, "fbs"),
            new_decl=decl_text(n, "fbs"),
        )


# ---- unions: members keyed by discriminant ------------------------------------------------------


def _union_changed(d: MemberDiff[ir.UnionMember], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i], d.new[j]
    if a.value != b.value:
        yield Change(
            "FBS-U-01",
            f"discriminant changed from {a.value} to {b.value}",
            cause=first_shift_cause(d, i, j, lambda m: m.value),
        )
    if not d.c.same_type(a.type, b.type):
        yield Change("FBS-U-03", f"member type changed from {_types(a.type, b.type)}")


UNION_MEMBERS: MemberRules[ir.UnionMember] = MemberRules(
    text=member_text,
    same_slot=lambda d, i, j: d.old[i].value == d.new[j].value
    and d.c.same_type(d.old[i].type, d.new[j].type),
    renamed=lambda d, i, j: [
        Change(
            "FBS-U-05",
            f"member renamed from `{d.old[i].name}` (discriminant {d.new[j].value})",
        )
    ],
    removed=lambda d, i: [
        Change(
            "FBS-U-02",
            f"member `{d.old[i].name}` (discriminant {d.old[i].value}) deleted",
        )
    ],
    added=lambda d, j: [
        Change(
            "FBS-U-06",
            f"member `{d.new[j].name}` added with discriminant {d.new[j].value}",
        )
    ],
    changed=_union_changed,
)


def compare_union(c: Comparison, o: ir.Union, n: ir.Union, path: str) -> None:
    if o.discriminant != n.discriminant:
        c.emit(
            "FBS-U-04",
            path,
            f"underlying type changed from `{fbs_scalar_text(o.discriminant)}` to `{fbs_scalar_text(n.discriminant)}`",
            old=o.span,
            new=n.span,
            old_decl=decl_text(o, "fbs"),
            new_decl=decl_text(n, "fbs"),
        )
    diff_members(c, UNION_MEMBERS, "fbs", path, o, n, o.members, n.members)


# ---- rpc_service: methods by name ---------------------------------------------------------------


def _rpc_types(c: Comparison, m: ir.Method, side: Literal["o", "n"]) -> object:
    return [(p.direction, c.tkey(p.type, side)) for p in m.params]


def _rpc_changed(d: MemberDiff[ir.Method], i: int, j: int) -> Iterator[Change]:
    o, n = d.old[i], d.new[j]
    if o.oneway != n.oneway:
        yield Change("FBS-R-02", f"[oneway] {'added' if n.oneway else 'removed'}")
    if attr_map(o.attributes) != attr_map(n.attributes):
        yield Change("FBS-A-01", "method attributes changed")
    if _rpc_types(d.c, o, "o") != _rpc_types(d.c, n, "n"):
        yield Change("FBS-R-02", "request or response type changed")


RPC_METHODS: MemberRules[ir.Method] = MemberRules(
    text=method_text,
    keys=lambda ms: dedup_names([m.name for m in ms]),
    same_slot=lambda d, i, j: (
        _rpc_types(d.c, d.old[i], "o"),
        d.old[i].oneway,
    )
    == (_rpc_types(d.c, d.new[j], "n"), d.new[j].oneway),
    renamed=lambda d, i, j: [Change("FBS-R-02", f"method renamed from `{d.old[i].name}`")],
    removed=lambda d, i: [Change("FBS-R-01", f"method `{d.old[i].name}` deleted")],
    added=lambda d, j: [Change("FBS-R-03", f"method `{d.new[j].name}` added")],
    changed=_rpc_changed,
    changed_on_renamed=True,
)


def compare_interface(c: Comparison, o: ir.Interface, n: ir.Interface, path: str) -> None:
    diff_members(c, RPC_METHODS, "fbs", path, o, n, o.methods, n.methods)


# ---- file-level declarations --------------------------------------------------------------------


def compare_files(c: Comparison) -> None:
    """File-level declarations: root_type, file_identifier, file_extension."""
    fo = [f for f in c.o.schema.files if f.language == "fbs"]
    fn = [f for f in c.n.schema.files if f.language == "fbs"]
    if not fo or not fn:
        return
    # where a removal is annotated in the new version: its first declaration (a real line)
    anchor = next((d.span for f in fn for d in f.decls if d.span is not None), first_span(fn))
    roots_o = {c.canon_o.get(c.resolve_root(c.o, f), f.root_type): f for f in fo if f.root_type}
    roots_n = {c.canon_n.get(c.resolve_root(c.n, f), f.root_type): f for f in fn if f.root_type}
    if set(roots_o) != set(roots_n):
        a = ", ".join(sorted(f.root_type for f in roots_o.values())) or "(none)"
        b = ", ".join(sorted(f.root_type for f in roots_n.values())) or "(none)"
        # Both: old buffers' root is another table. Removed: only the generated helpers go.
        cats: Categories
        sev, cats = Severity.INFO, ()
        if roots_o and roots_n:
            sev, cats = Severity.BREAKING, ("WIRE",)
        elif roots_o:
            sev, cats = Severity.WARNING, ("SOURCE",)
        c.emit(
            "FBS-F-01",
            "root_type",
            f"root_type changed from {a} to {b}",
            old=file_decl_span(roots_o.values(), "root_type"),
            new=file_decl_span(roots_n.values(), "root_type"),
            old_decl=f"root_type {a};",
            new_decl=f"root_type {b};",
            severity=sev,
            categories=cats,
            anchor=anchor,
        )
    ids_o = {f.file_identifier for f in fo if f.file_identifier}
    ids_n = {f.file_identifier for f in fn if f.file_identifier}
    if ids_o != ids_n:
        a = ", ".join(f'"{x}"' for x in sorted(ids_o)) or "(none)"
        b = ", ".join(f'"{x}"' for x in sorted(ids_n)) or "(none)"
        removed = bool(ids_o and not ids_n)  # new readers stop checking: meaning only
        sev = Severity.WARNING if removed else Severity.BREAKING
        id_cats: Categories = () if removed else ("WIRE",)
        c.emit(
            "FBS-F-02",
            "file_identifier",
            f"file_identifier changed from {a} to {b}",
            old=file_decl_span((f for f in fo if f.file_identifier), "file_identifier"),
            new=file_decl_span((f for f in fn if f.file_identifier), "file_identifier"),
            old_decl=f"file_identifier {a};",
            new_decl=f"file_identifier {b};",
            severity=sev,
            categories=id_cats,
            anchor=anchor,
        )
    ext_o = {f.file_extension for f in fo if f.file_extension}
    ext_n = {f.file_extension for f in fn if f.file_extension}
    if ext_o != ext_n:
        a = ", ".join(sorted(ext_o)) or "(none)"
        b = ", ".join(sorted(ext_n)) or "(none)"
        c.emit(
            "FBS-F-04",
            "file_extension",
            f"file_extension changed from {a} to {b}",
            old_decl=f'file_extension "{a}";',
            new_decl=f'file_extension "{b}";',
            old=file_decl_span((f for f in fo if f.file_extension), "file_extension"),
            new=file_decl_span((f for f in fn if f.file_extension), "file_extension"),
            anchor=anchor,
        )


# A file-level declaration: `root_type T;`, `file_identifier "ABCD";`, `file_extension "x";`.
_FILE_DECL = {
    "root_type": re.compile(r"\broot_type\s+[A-Za-z_][\w.]*\s*;"),
    "file_identifier": re.compile(r'\bfile_identifier\s*"[^"\n]*"\s*;'),
    "file_extension": re.compile(r'\bfile_extension\s*"[^"\n]*"\s*;'),
}
# Strings stay as they are; comments are blanked (newlines kept) before searching.
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)


def file_decl_span(files: Iterable[ir.SchemaFile], keyword: str) -> ir.Span | None:
    """Where the first of ``files`` declares ``keyword`` (the IR keeps the value, not the
    place): found in the file's text with comments blanked, else the file's first line."""
    for f in files:
        path = next((d.span.file for d in f.decls if d.span is not None), f.path)
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return first_span([f])
        blank = _STRING_OR_COMMENT.sub(
            lambda m: m.group() if m.group().startswith('"') else re.sub(r"[^\n]", " ", m.group()),
            text,
        )
        m = _FILE_DECL[keyword].search(blank)
        if m is None:
            return first_span([f])
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        end_line = text.count("\n", 0, m.end()) + 1
        end_col = m.end() - (text.rfind("\n", 0, m.end()) + 1) + 1
        return ir.Span(path, line, col, end_line, end_col)
    return None


def same_default(a: ir.DefaultValue, b: ir.DefaultValue) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # both NaN
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (a == b and type(a) is type(b))
    return a == b


def default_text(v: ir.DefaultValue) -> str:
    if v is None:
        return "(none)"
    if v == ():
        return "[]"
    return repr(v) if isinstance(v, str) else str(v)


def attr_value_text(m: dict[str, str | int | None], name: str) -> str:
    if name not in m:
        return "(absent)"
    v = m[name]
    return "(present)" if v is None else repr(v)


def fbs_scalar_text(k: ir.ScalarKind | None) -> str:
    return "ubyte" if k is None else type_text(ir.Scalar(k), "fbs")


@dataclass(frozen=True)
class FbsLayout:
    size: int
    align: int
    offsets: tuple[int, ...]


def fbs_size_align(t: ir.TypeRef, side: Side) -> tuple[int, int]:
    if isinstance(t, ir.Scalar):
        return t.kind.size, t.kind.size
    if isinstance(t, ir.FixedArray):
        s, a = fbs_size_align(t.element, side)
        return s * t.length, a
    if isinstance(t, ir.Ref):
        d = side.decls.get(t.qualname)
        if isinstance(d, ir.Enum):
            return d.base.size, d.base.size
        if isinstance(d, ir.Struct):
            lay = fbs_struct_layout(d, side)
            return lay.size, lay.align
    return 4, 4  # not valid in a struct; the loader reports it


def fbs_struct_layout(s: ir.Struct, side: Side) -> FbsLayout:
    """FlatBuffers struct layout: natural alignment, size a multiple of the alignment."""
    offset, align = 0, 1
    offsets = []
    for f in s.fields:
        size, a = fbs_size_align(f.type, side)
        offset = (offset + a - 1) // a * a
        offsets.append(offset)
        offset += size
        align = max(align, a)
    align = max(align, s.force_align or 1)
    size = (offset + align - 1) // align * align
    return FbsLayout(size, align, tuple(offsets))
