"""HDI rules (positional MessageParcel): structs, plain-data layout, unions, version carry-over."""

from __future__ import annotations

from functools import partial

from .. import ir
from ..ir import hdi_layout as hdi_layout
from .decltext import decl_text, field_text, member_text, type_text
from .findings import Severity
from .matching import SIGNEDNESS_RULE, ComparerBase, Lang, Side, hdi_package_base

__all__ = ["HdiRules"]

_SIGN_BLIND_FMT = str.maketrans("BHIQ", "bhiq")


def _sign_blind_fmt(fmt: str) -> str:
    return fmt.translate(_SIGN_BLIND_FMT)


class HdiRules(ComparerBase):
    def _older_minor_reached(self, do: ir.Decl, dn: ir.Decl) -> bool:
        """The new package only reaches an older minor version of this declaration than the
        old one did (``v1_3.EncodeType`` instead of ``v1_4.EncodeType``): the newer copy is not
        imported any more. One warning instead of comparing two unrelated versions."""
        vo = self.o.file_of[do.qualname].version
        vn = self.n.file_of[dn.qualname].version
        if vo is None or vn is None or vo[0] != vn[0] or vn >= vo:
            return False
        base = hdi_package_base(dn.namespace)
        newest = max(
            (
                g.version
                for g in self.n.schema.files
                if g.version is not None and hdi_package_base(g.namespace) == base
            ),
            default=vn,
        )
        if newest <= vn:  # the new package itself is older: a version decrease, compared in full
            return False
        lang = self.n.lang[dn.qualname]
        self.emit(
            "HDI-Y-02",
            self.names_n[dn.qualname],
            f"the new version only reaches `{dn.qualname}`; `{do.qualname}` is not imported any "
            "more (its additions are unknown to code built against the new package)",
            old=do.span,
            new=dn.span,
            old_decl=decl_text(do, lang),
            new_decl=decl_text(dn, lang),
            severity=Severity.WARNING,
        )
        return True

    def _minor_carry_over(self, old_qualname: str) -> str:
        """ "v1_4" when the new side holds a later minor version of the deleted HDI declaration's
        package (same major), else ""."""
        f = self.o.file_of[old_qualname]
        if f.language != "hdi" or f.version is None:
            return ""
        base = hdi_package_base(f.namespace)
        later = [
            g.version
            for g in self.n.schema.files
            if g.language == "hdi"
            and g.version is not None
            and hdi_package_base(g.namespace) == base
            and g.version[0] == f.version[0]
            and g.version[1] > f.version[1]
        ]
        return f"v{max(later)[0]}_{max(later)[1]}" if later else ""

    def _hdi_struct(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lang: Lang = "hdi"
        if self._parent_token(o.parent, o, self.o, self.canon_o) != self._parent_token(
            n.parent, n, self.n, self.canon_n
        ):
            self.emit(
                "HDI-S-08",
                path,
                f"parent changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        of, nf = o.fields, n.fields
        matched, renamed, removed, added = self._pair(
            [f.name for f in of],
            [f.name for f in nf],
            lambda i, j: i == j and self.same_type(of[i].type, nf[j].type),
        )
        for i, j in renamed:
            self.emit(
                "HDI-S-06",
                f"{path}.{nf[j].name}",
                f"member renamed from `{of[i].name}` (same position {i}, same type)",
                old=of[i].span,
                new=nf[j].span,
                old_decl=field_text(of[i], lang),
                new_decl=field_text(nf[j], lang),
            )
        pairs = sorted(matched + renamed)
        survivors = {j for _, j in pairs}
        for i, j in self._out_of_order(pairs):
            self.emit(
                "HDI-S-03",
                f"{path}.{nf[j].name}",
                f"member moved from position {i} to {j}; members are read in declaration order",
                old=of[i].span,
                new=nf[j].span,
                old_decl=field_text(of[i], lang),
                new_decl=field_text(nf[j], lang),
            )
        for j in added:
            later = [k for k in survivors if k > j]
            if later:
                nxt = nf[min(later)]
                self.emit(
                    "HDI-S-03",
                    f"{path}.{nf[j].name}",
                    f"member inserted at position {j}, before `{nxt.name}`: every later member "
                    "is read from the wrong bytes by old peers",
                    new=nf[j].span,
                    new_decl=field_text(nf[j], lang),
                )
            else:
                self.emit(
                    "HDI-S-02",
                    f"{path}.{nf[j].name}",
                    f"member appended at position {j}; old readers stop before it and the rest "
                    "of the parcel is read out of step",
                    new=nf[j].span,
                    new_decl=field_text(nf[j], lang),
                )
        for i in removed:
            self.emit(
                "HDI-S-04",
                f"{path}.{of[i].name}",
                f"member `{of[i].name}` deleted (was at position {i})",
                old=of[i].span,
                old_decl=field_text(of[i], lang),
                anchor=self._survivor_anchor(i, pairs, nf, n.span),
            )
        for i, j in pairs:
            self._member_type(of[i], nf[j], f"{path}.{nf[j].name}", "HDI-S-05", lang)
            self._doc(
                lang,
                f"{path}.{nf[j].name}",
                of[i].doc,
                nf[j].doc,
                of[i].span,
                nf[j].span,
                partial(field_text, of[i], lang),
                partial(field_text, nf[j], lang),
            )
        self._pod_layout(o, n, path)

    def _pod_layout(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lo = self._hdi_layout(self.o, o)
        ln = self._hdi_layout(self.n, n)
        if lo is None and ln is None:
            return
        if lo is not None and ln is not None:
            # Same-width signedness changes ('i' vs 'I') keep the raw block's bytes; the member
            # or enum is reported on its own (HDI-T-02).
            if (lo.size, lo.align, _sign_blind_fmt(lo.fmt)) == (
                ln.size,
                ln.align,
                _sign_blind_fmt(ln.fmt),
            ):
                return
            msg = (
                f"plain-data layout changed: sizeof {lo.size} → {ln.size}, "
                f"raw block `{lo.fmt}` → `{ln.fmt}`"
            )
        elif lo is not None:
            msg = f"no longer plain data: was one raw {lo.size}-byte block, now marshalled member by member"
        else:
            assert ln is not None
            msg = f"became plain data: was marshalled member by member, now one raw {ln.size}-byte block"
        self.emit(
            "HDI-S-07",
            path,
            msg,
            old=o.span,
            new=n.span,
            old_decl=f"struct {o.name} /* {'sizeof ' + str(lo.size) if lo else 'non-plain'} */",
            new_decl=f"struct {n.name} /* {'sizeof ' + str(ln.size) if ln else 'non-plain'} */",
        )

    @staticmethod
    def _hdi_layout(side: Side, s: ir.Struct) -> hdi_layout.Layout | None:
        try:
            return hdi_layout.struct_layout(s, side.resolve)
        except KeyError:  # an unresolved reference: the loader already reported it
            return None

    def _hdi_union(self, o: ir.Union, n: ir.Union, path: str) -> None:
        lang: Lang = "hdi"
        om, nm = o.members, n.members
        matched, renamed, removed, added = self._pair(
            [m.name for m in om],
            [m.name for m in nm],
            lambda i, j: i == j and self.same_type(om[i].type, nm[j].type),
        )
        for i, j in renamed:
            self.emit(
                "HDI-U-03",
                f"{path}.{nm[j].name}",
                f"member renamed from `{om[i].name}`",
                old=om[i].span,
                new=nm[j].span,
                old_decl=member_text(om[i], lang),
                new_decl=member_text(nm[j], lang),
            )
        for i in removed:
            self.emit(
                "HDI-U-01",
                f"{path}.{om[i].name}",
                f"union member `{om[i].name}` deleted",
                old=om[i].span,
                old_decl=member_text(om[i], lang),
                anchor=n.span,
            )
        for i, j in matched:
            if self.signedness_only(om[i].type, nm[j].type):
                self.emit(
                    SIGNEDNESS_RULE[lang],
                    f"{path}.{nm[j].name}",
                    f"signedness changed from `{type_text(om[i].type, lang)}` to `{type_text(nm[j].type, lang)}` (same width)",
                    old=om[i].span,
                    new=nm[j].span,
                    old_decl=member_text(om[i], lang),
                    new_decl=member_text(nm[j], lang),
                )
            elif not self.same_type(om[i].type, nm[j].type):
                self.emit(
                    "HDI-U-01",
                    f"{path}.{nm[j].name}",
                    f"type changed from `{type_text(om[i].type, lang)}` to `{type_text(nm[j].type, lang)}`",
                    old=om[i].span,
                    new=nm[j].span,
                    old_decl=member_text(om[i], lang),
                    new_decl=member_text(nm[j], lang),
                )
        lo = self._union_layout(self.o, o)
        ln = self._union_layout(self.n, n)
        grew = lo is not None and ln is not None and (lo.size, lo.align) != (ln.size, ln.align)
        for j in added:
            self.emit(
                "HDI-U-01" if grew else "HDI-U-02",
                f"{path}.{nm[j].name}",
                "union member added"
                + (" and the raw block grew" if grew else " (raw block size unchanged)"),
                new=nm[j].span,
                new_decl=member_text(nm[j], lang),
            )
        if grew and not added:
            assert lo is not None and ln is not None
            self.emit(
                "HDI-U-01",
                path,
                f"raw block size changed: sizeof {lo.size} → {ln.size}",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )

    @staticmethod
    def _union_layout(side: Side, u: ir.Union) -> hdi_layout.Layout | None:
        try:
            return hdi_layout.union_layout(u, side.resolve)
        except KeyError:
            return None

    def _enum_in_raw_block(self, qualname: str, side: Side) -> bool:
        """Is the enum stored at its base type's width anywhere (POD struct, union, T[])?"""
        target = ir.Ref(qualname, ir.RefKind.ENUM)

        def in_vector(t: ir.TypeRef) -> bool:
            if isinstance(t, ir.Vector):
                return t.element == target or in_vector(t.element)
            if isinstance(t, ir.Map):
                return in_vector(t.key) or in_vector(t.value)
            return False

        for d in side.decls.values():
            if isinstance(d, ir.Struct):
                if any(in_vector(f.type) for f in d.fields):
                    return True
                if (
                    any(f.type == target for f in d.fields)
                    and self._hdi_layout(side, d) is not None
                ):
                    return True
            elif isinstance(d, ir.Union):
                if any(m.type == target for m in d.members):
                    return True
            elif isinstance(d, ir.Interface):
                if any(in_vector(p.type) for m in d.methods for p in m.params):
                    return True
        return False
