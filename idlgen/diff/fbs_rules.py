"""FlatBuffers rules (vtable slots, inline structs): tables, fields, structs, unions, file-level."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from .. import ir
from .decltext import decl_text, field_text, member_text, type_text
from .findings import Severity
from .matching import ComparerBase, Lang, Side, attr_map, first_span, sign_only

__all__ = ["FbsRules", "fbs_scalar_text"]

# Field attributes with their own rule; id/deprecated/required/key are fields of ir.Field, and
# every other attribute change (key, nested_flatbuffer, flexbuffer, hash, ...) is FBS-A-01.
_OFFSET64_ATTRS = ("offset64", "vector64")


class FbsRules(ComparerBase):
    def _fbs_table(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lang: Lang = "fbs"
        of, nf = o.fields, n.fields
        old_names = {f.name for f in of}
        new_by_slot = {f.slot: j for j, f in enumerate(nf)}
        matched, renamed, removed, added = self._pair(
            [f.name for f in of],
            [f.name for f in nf],
            lambda i, j: of[i].slot is not None and of[i].slot == nf[j].slot,
        )
        for i, j in renamed:
            a, b = of[i], nf[j]
            same = self.same_type(a.type, b.type)
            self.emit(
                "FBS-T-05" if same else "FBS-T-06",
                f"{path}.{b.name}",
                f"field renamed from `{a.name}` (slot {b.slot})"
                + (
                    ""
                    if same
                    else f" and its type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`"
                ),
                old=a.span,
                new=b.span,
                old_decl=field_text(a, lang),
                new_decl=field_text(b, lang),
            )
            if same:
                self._fbs_field(a, b, f"{path}.{b.name}", check_type=False)
        old_slots = {f.slot: f for f in of}
        max_old = max((f.slot for f in of if f.slot is not None), default=-1)
        for j in added:
            b = nf[j]
            taken = old_slots.get(b.slot)
            if b.slot is not None and b.slot <= max_old:
                msg = f"field added at slot {b.slot}"
                if taken is not None:
                    msg += f", which old buffers use for `{taken.name}` (`{type_text(taken.type, lang)}`)"
                self.emit(
                    "FBS-T-02",
                    f"{path}.{b.name}",
                    msg,
                    new=b.span,
                    new_decl=field_text(b, lang),
                )
            else:
                self.emit(
                    "FBS-T-01",
                    f"{path}.{b.name}",
                    f"field appended at slot {b.slot}",
                    new=b.span,
                    new_decl=field_text(b, lang),
                )
        for i in removed:
            a = of[i]
            was = "deprecated " if a.deprecated else ""
            reuse = new_by_slot.get(a.slot)
            tail = (
                f"; its slot {a.slot} is now `{nf[reuse].name}`"
                if reuse is not None and nf[reuse].name in old_names
                else f"; keep it as (deprecated) to reserve slot {a.slot}"
            )
            self.emit(
                "FBS-T-03",
                f"{path}.{a.name}",
                f"{was}field `{a.name}` deleted{tail}",
                old=a.span,
                old_decl=field_text(a, lang),
                anchor=self._survivor_anchor(i, sorted(matched + renamed), nf, n.span),
            )
        for i, j in matched:
            a, b = of[i], nf[j]
            fpath = f"{path}.{b.name}"
            if a.slot != b.slot:
                self.emit(
                    "FBS-T-02",
                    fpath,
                    f"slot changed from {a.slot} to {b.slot}",
                    old=a.span,
                    new=b.span,
                    old_decl=field_text(a, lang),
                    new_decl=field_text(b, lang),
                )
            self._fbs_field(a, b, fpath, check_type=True)

    def _enum_base_change(self, a: ir.TypeRef, b: ir.TypeRef) -> str:
        """For two matching enum-typed members: "byte → short" when the enum's base changed."""
        while isinstance(a, (ir.Vector, ir.FixedArray)) and isinstance(
            b, (ir.Vector, ir.FixedArray)
        ):
            a, b = a.element, b.element
        if isinstance(a, ir.Ref) and isinstance(b, ir.Ref):
            ea, eb = self.o.decls.get(a.qualname), self.n.decls.get(b.qualname)
            if (
                isinstance(ea, ir.Enum)
                and isinstance(eb, ir.Enum)
                and ea.base != eb.base
                and not sign_only(ea.base, eb.base)  # same width: reported once on the enum
            ):
                return f"`{fbs_scalar_text(ea.base)}` → `{fbs_scalar_text(eb.base)}`"
        return ""

    def _fbs_field(self, a: ir.Field, b: ir.Field, fpath: str, *, check_type: bool) -> None:
        lang: Lang = "fbs"
        ta, tb = partial(field_text, a, lang), partial(field_text, b, lang)

        def emit(rule_id: str, msg: str) -> None:
            self.emit(rule_id, fpath, msg, old=a.span, new=b.span, old_decl=ta, new_decl=tb)

        if check_type and not self.same_type(a.type, b.type):
            if self.signedness_only(a.type, b.type):
                emit(
                    "FBS-T-12",
                    f"signedness changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}` (same width)",
                )
            else:
                emit(
                    "FBS-T-07",
                    f"type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
                )
        elif check_type and (bases := self._enum_base_change(a.type, b.type)):
            emit("FBS-T-07", f"stored width changes: enum's underlying type {bases}")
        if a.deprecated != b.deprecated:
            if b.deprecated:
                emit("FBS-T-04", "field deprecated")
            else:
                emit("FBS-T-13", "field no longer deprecated")
        if a.optional != b.optional:
            emit(
                "FBS-T-11",
                f"optional scalar (`= null`) {'added' if b.optional else 'removed'}",
            )
            # Absent fields switch between reading a value and reading null.
            da = "null" if a.optional else default_text(a.default if a.default is not None else 0)
            db = "null" if b.optional else default_text(b.default if b.default is not None else 0)
            emit("FBS-T-09", f"default changed from {da} to {db}")
        elif not same_default(a.default, b.default) and self.same_type(a.type, b.type):
            emit(
                "FBS-T-09",
                f"default changed from {default_text(a.default)} to {default_text(b.default)}",
            )
        if a.required != b.required:
            emit(
                "FBS-T-10",
                f"(required) {'added: old writers may omit it and the verifier rejects their buffers' if b.required else 'removed: new writers may omit it and old verifiers reject their buffers'}",
            )
        if a.key != b.key:
            emit("FBS-A-01", f"(key) {'added' if b.key else 'removed'}")
        aa = attr_map(a.attributes)
        ba = attr_map(b.attributes)
        for name in sorted(set(aa) | set(ba)):
            skip = name in ("id", "deprecated", "required", "key")
            if skip or (name in aa and name in ba and aa[name] == ba[name]):
                continue
            rule_id = "FBS-T-08" if name in _OFFSET64_ATTRS else "FBS-A-01"
            emit(
                rule_id,
                f"attribute ({name}) changed from {attr_value_text(aa, name)} to {attr_value_text(ba, name)}",
            )
        self._doc(lang, fpath, a.doc, b.doc, a.span, b.span, ta, tb)

    def _fbs_struct(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lang: Lang = "fbs"
        lo = fbs_struct_layout(o, self.o)
        ln = fbs_struct_layout(n, self.n)
        of, nf = o.fields, n.fields
        matched, renamed, removed, added = self._pair(
            [f.name for f in of],
            [f.name for f in nf],
            lambda i, j: lo.offsets[i] == ln.offsets[j] and self.same_type(of[i].type, nf[j].type),
        )
        before = len(self.findings)
        for i, j in renamed:
            self.emit(
                "FBS-S-02",
                f"{path}.{nf[j].name}",
                f"field renamed from `{of[i].name}` (offset {ln.offsets[j]})",
                old=of[i].span,
                new=nf[j].span,
                old_decl=field_text(of[i], lang),
                new_decl=field_text(nf[j], lang),
            )
        structural = len(self.findings)
        for i in removed:
            self.emit(
                "FBS-S-01",
                f"{path}.{of[i].name}",
                f"field `{of[i].name}` removed (was at offset {lo.offsets[i]})",
                old=of[i].span,
                old_decl=field_text(of[i], lang),
                anchor=n.span,
            )
        for j in added:
            last = all(k in added for k in range(j, len(nf)))
            where = "appended" if last else "inserted"
            self.emit(
                "FBS-S-01",
                f"{path}.{nf[j].name}",
                f"field {where} at offset {ln.offsets[j]}; struct size {lo.size} → {ln.size}",
                new=nf[j].span,
                new_decl=field_text(nf[j], lang),
            )
        for i, j in matched:
            a, b = of[i], nf[j]
            fpath = f"{path}.{b.name}"
            ta, tb = partial(field_text, a, lang), partial(field_text, b, lang)
            if lo.offsets[i] != ln.offsets[j]:
                self.emit(
                    "FBS-S-01",
                    fpath,
                    f"offset changed from {lo.offsets[i]} to {ln.offsets[j]}",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            if not self.same_type(a.type, b.type):
                if self.signedness_only(a.type, b.type):
                    self.emit(
                        "FBS-T-12",
                        fpath,
                        f"signedness changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}` (same width)",
                        old=a.span,
                        new=b.span,
                        old_decl=ta,
                        new_decl=tb,
                    )
                else:
                    self.emit(
                        "FBS-S-01",
                        fpath,
                        f"type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
                        old=a.span,
                        new=b.span,
                        old_decl=ta,
                        new_decl=tb,
                    )
            elif bases := self._enum_base_change(a.type, b.type):
                self.emit(
                    "FBS-S-01",
                    fpath,
                    f"stored width changes: enum's underlying type {bases}",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            self._doc(lang, fpath, a.doc, b.doc, a.span, b.span, ta, tb)
        explained = any(f.rule == "FBS-S-01" for f in self.findings[structural:])
        if o.force_align != n.force_align or (
            not explained and (lo.size, lo.align) != (ln.size, ln.align)
        ):
            self.emit(
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
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        del before

    def _fbs_union(self, o: ir.Union, n: ir.Union, path: str) -> None:
        lang: Lang = "fbs"
        if o.discriminant != n.discriminant:
            self.emit(
                "FBS-U-04",
                path,
                f"underlying type changed from `{fbs_scalar_text(o.discriminant)}` to `{fbs_scalar_text(n.discriminant)}`",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        om, nm = o.members, n.members
        matched, renamed, removed, added = self._pair(
            [m.name for m in om],
            [m.name for m in nm],
            lambda i, j: om[i].value == nm[j].value and self.same_type(om[i].type, nm[j].type),
        )
        for i, j in renamed:
            self.emit(
                "FBS-U-05",
                f"{path}.{nm[j].name}",
                f"member renamed from `{om[i].name}` (discriminant {nm[j].value})",
                old=om[i].span,
                new=nm[j].span,
                old_decl=member_text(om[i], lang),
                new_decl=member_text(nm[j], lang),
            )
        for i in removed:
            self.emit(
                "FBS-U-02",
                f"{path}.{om[i].name}",
                f"member `{om[i].name}` (discriminant {om[i].value}) deleted",
                old=om[i].span,
                old_decl=member_text(om[i], lang),
                anchor=n.span,
            )
        for j in added:
            self.emit(
                "FBS-U-06",
                f"{path}.{nm[j].name}",
                f"member `{nm[j].name}` added with discriminant {nm[j].value}",
                new=nm[j].span,
                new_decl=member_text(nm[j], lang),
            )
        for i, j in matched:
            a, b = om[i], nm[j]
            ta, tb = partial(member_text, a, lang), partial(member_text, b, lang)
            if a.value != b.value:
                self.emit(
                    "FBS-U-01",
                    f"{path}.{b.name}",
                    f"discriminant changed from {a.value} to {b.value}",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            if not self.same_type(a.type, b.type):
                self.emit(
                    "FBS-U-03",
                    f"{path}.{b.name}",
                    f"member type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            self._doc(lang, f"{path}.{b.name}", a.doc, b.doc, a.span, b.span, ta, tb)

    def _compare_files(self) -> None:
        fo = [f for f in self.o.schema.files if f.language == "fbs"]
        fn = [f for f in self.n.schema.files if f.language == "fbs"]
        if not fo or not fn:
            return
        roots_o = {
            self.canon_o.get(self._resolve_root(self.o, f), f.root_type): f
            for f in fo
            if f.root_type
        }
        roots_n = {
            self.canon_n.get(self._resolve_root(self.n, f), f.root_type): f
            for f in fn
            if f.root_type
        }
        if set(roots_o) != set(roots_n):
            a = ", ".join(sorted(f.root_type for f in roots_o.values())) or "(none)"
            b = ", ".join(sorted(f.root_type for f in roots_n.values())) or "(none)"
            sev = (
                Severity.BREAKING
                if roots_o and roots_n
                else (Severity.WARNING if roots_o else Severity.INFO)
            )
            self.emit(
                "FBS-F-01",
                "root_type",
                f"root_type changed from {a} to {b}",
                old=first_span(roots_o.values()),
                new=first_span(roots_n.values()),
                old_decl=f"root_type {a};",
                new_decl=f"root_type {b};",
                severity=sev,
                anchor=first_span(fn),
            )
        ids_o = {f.file_identifier for f in fo if f.file_identifier}
        ids_n = {f.file_identifier for f in fn if f.file_identifier}
        if ids_o != ids_n:
            a = ", ".join(f'"{x}"' for x in sorted(ids_o)) or "(none)"
            b = ", ".join(f'"{x}"' for x in sorted(ids_n)) or "(none)"
            sev = Severity.WARNING if ids_o and not ids_n else Severity.BREAKING
            self.emit(
                "FBS-F-02",
                "file_identifier",
                f"file_identifier changed from {a} to {b}",
                old=first_span(f for f in fo if f.file_identifier),
                new=first_span(f for f in fn if f.file_identifier),
                old_decl=f"file_identifier {a};",
                new_decl=f"file_identifier {b};",
                severity=sev,
                anchor=first_span(fn),
            )
        ext_o = {f.file_extension for f in fo if f.file_extension}
        ext_n = {f.file_extension for f in fn if f.file_extension}
        if ext_o != ext_n:
            a = ", ".join(sorted(ext_o)) or "(none)"
            b = ", ".join(sorted(ext_n)) or "(none)"
            self.emit(
                "FBS-F-04",
                "file_extension",
                f"file_extension changed from {a} to {b}",
                old_decl=f'file_extension "{a}";',
                new_decl=f'file_extension "{b}";',
                anchor=first_span(fn),
            )


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
