"""Structural comparison of two schema IRs: ``compare(old, new) -> list[Finding]``.

The pipeline: ``matching`` pairs declarations across the versions (version-stripped HDI names,
namespace moves, renamed types), then every pair goes to its rules — ``hdi_rules`` (positional
Parcel: structs, plain-data layout, unions), ``fbs_rules`` (vtable slots, inline structs,
file-level declarations) and, here, the rules both formats share in shape (enums, interfaces and
methods, with language-specific rule ids). Members are compared by name; an old member that
vanished and a new one at the same position (HDI) or slot/offset (FlatBuffers) with the same
type is a rename. Spans are only carried along for reporting.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

from .. import ir
from .decltext import decl_text, member_text, method_text, param_text, type_text
from .fbs_rules import FbsRules
from .hdi_rules import HdiRules
from .findings import Finding, Severity
from .matching import (
    SIGNEDNESS_RULE,
    Lang,
    attr_map,
    decl_kind,
    dedup_names,
    hdi_package_base,
    sign_only,
)

__all__ = ["compare", "hdi_package_base"]


class Comparer(HdiRules, FbsRules):
    """Runs every rule over the matched declarations."""

    def run(self) -> list[Finding]:
        self.match()
        reachable = self._reachable_old()
        for q in self.deleted:
            d = self.o.decls[q]
            lang = self.o.lang[q]
            path = self.names_o[q]
            if lang == "hdi":
                if isinstance(d, ir.Interface):
                    rule_id = "HDI-IF-01"
                elif isinstance(d, (ir.Struct, ir.Union)):
                    rule_id = "HDI-S-01"
                else:
                    rule_id = "HDI-Y-02"
            else:
                rule_id = "FBS-R-01" if isinstance(d, ir.Interface) else "FBS-Y-01"
            used = q in reachable or isinstance(d, ir.Interface)
            sev = Severity.BREAKING if used else Severity.WARNING
            how = (
                "reachable from an interface or root type"
                if used
                else "not reachable from any interface or root type"
            )
            carried = self._minor_carry_over(q)
            if carried:
                sev = Severity.WARNING
                how = (
                    f"not declared in {carried}; a minor-version package usually carries only "
                    "what changed and keeps using the older declaration, so this is breaking "
                    "only if it was really removed"
                )
            self.emit(
                rule_id,
                path,
                f"{decl_kind(d)} `{d.name}` deleted ({how})",
                old=d.span,
                old_decl=decl_text(d, lang),
                anchor=self._file_anchor(self.o.file_of[q]),
                severity=sev,
            )
        for q in self.added:
            d = self.n.decls[q]
            lang = self.n.lang[q]
            if isinstance(d, ir.Interface) and lang == "fbs":
                rule_id = "FBS-R-03"
            else:
                rule_id = "HDI-Y-01" if lang == "hdi" else "FBS-Y-02"
            self.emit(
                rule_id,
                self.names_n[q],
                f"{decl_kind(d)} `{d.name}` added",
                new=d.span,
                new_decl=decl_text(d, lang),
            )
        for do, dn in self.pairs:
            if not self._older_minor_reached(do, dn):
                self._compare_decl(do, dn)
        self._compare_files()
        return sorted(set(self.findings), key=Finding.sort_key)

    def _compare_decl(self, do: ir.Decl, dn: ir.Decl) -> None:
        lang = self.n.lang[dn.qualname]
        path = self.names_n[dn.qualname]
        if decl_kind(do) != decl_kind(dn):
            rule_id = "HDI-Y-03" if lang == "hdi" else "FBS-K-01"
            self.emit(
                rule_id,
                path,
                f"`{dn.name}` changed from {decl_kind(do)} to {decl_kind(dn)}",
                old=do.span,
                new=dn.span,
                old_decl=decl_text(do, lang),
                new_decl=decl_text(dn, lang),
            )
            return
        if not isinstance(do, ir.Sequenceable) and not isinstance(dn, ir.Sequenceable):
            self._doc(
                lang,
                path,
                do.doc,
                dn.doc,
                do.span,
                dn.span,
                partial(decl_text, do, lang),
                partial(decl_text, dn, lang),
            )
        if isinstance(do, ir.Struct) and isinstance(dn, ir.Struct):
            if lang == "hdi":
                self._hdi_struct(do, dn, path)
            elif dn.is_table:
                self._fbs_table(do, dn, path)
            else:
                self._fbs_struct(do, dn, path)
        elif isinstance(do, ir.Enum) and isinstance(dn, ir.Enum):
            self._enum(do, dn, path, lang)
        elif isinstance(do, ir.Union) and isinstance(dn, ir.Union):
            if lang == "hdi":
                self._hdi_union(do, dn, path)
            else:
                self._fbs_union(do, dn, path)
        elif isinstance(do, ir.Interface) and isinstance(dn, ir.Interface):
            self._interface(do, dn, path, lang)

    def _enum(self, o: ir.Enum, n: ir.Enum, path: str, lang: Lang) -> None:
        hdi = lang == "hdi"
        if o.base != n.base and sign_only(o.base, n.base):
            self.emit(
                SIGNEDNESS_RULE[lang],
                path,
                f"base type signedness changed from `{type_text(ir.Scalar(o.base), lang)}` to "
                f"`{type_text(ir.Scalar(n.base), lang)}` (same width"
                + (
                    ": raw blocks keep their bytes and every member's uint64 value is unchanged)"
                    if hdi
                    else ")"
                ),
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        elif o.base != n.base:
            if hdi:
                raw = self._enum_in_raw_block(o.qualname, self.o) or self._enum_in_raw_block(
                    n.qualname, self.n
                )
                sev = Severity.BREAKING if raw else Severity.WARNING
                where = (
                    "used inside a raw block (plain struct, union or T[])"
                    if raw
                    else "only sent as uint64"
                )
                self.emit(
                    "HDI-E-06",
                    path,
                    f"base type changed from `{type_text(ir.Scalar(o.base), lang)}` to `{type_text(ir.Scalar(n.base), lang)}` ({where})",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                    severity=sev,
                )
            else:
                self.emit(
                    "FBS-E-04",
                    path,
                    f"underlying type changed from `{type_text(ir.Scalar(o.base), lang)}` to `{type_text(ir.Scalar(n.base), lang)}`",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                )
        if hdi and self._parent_token(o.parent, o, self.o, self.canon_o) != self._parent_token(
            n.parent, n, self.n, self.canon_n
        ):
            self.emit(
                "HDI-E-06",
                path,
                f"parent enum changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        if not hdi and o.bit_flags != n.bit_flags:
            self.emit(
                "FBS-E-06",
                path,
                f"bit_flags {'added' if n.bit_flags else 'removed'}",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        om, nm = o.members, n.members
        new_names = {m.name for m in nm}
        old_names = {m.name for m in om}
        matched, renamed, removed, added = self._pair(
            [m.name for m in om],
            [m.name for m in nm],
            lambda i, j: om[i].value == nm[j].value
            and om[i].value not in {m.value for m in nm if m.name in old_names}
            and nm[j].value not in {m.value for m in om if m.name in new_names},
        )
        for i, j in renamed:
            self.emit(
                "HDI-E-05" if hdi else "FBS-E-05",
                f"{path}.{nm[j].name}",
                f"value {nm[j].value} renamed from `{om[i].name}`",
                old=om[i].span,
                new=nm[j].span,
                old_decl=member_text(om[i], lang),
                new_decl=member_text(nm[j], lang),
            )
        inserted = [nm[j].name for j in added]
        for i, j in matched:
            a, b = om[i], nm[j]
            if a.value != b.value:
                if hdi and not b.expr and inserted:
                    rule_id = "HDI-E-02"
                    msg = (
                        f"implicit value shifted from {a.value} to {b.value} by an inserted member "
                        f"({', '.join(f'`{x}`' for x in inserted[:3])}{', …' if len(inserted) > 3 else ''})"
                    )
                else:
                    rule_id = "HDI-E-01" if hdi else "FBS-E-01"
                    msg = f"value changed from {a.value} to {b.value}"
                self.emit(
                    rule_id,
                    f"{path}.{b.name}",
                    msg,
                    old=a.span,
                    new=b.span,
                    old_decl=member_text(a, lang),
                    new_decl=member_text(b, lang),
                )
            self._doc(
                lang,
                f"{path}.{b.name}",
                a.doc,
                b.doc,
                a.span,
                b.span,
                member_text(a, lang),
                member_text(b, lang),
            )
        for i in removed:
            self.emit(
                "HDI-E-03" if hdi else "FBS-E-02",
                f"{path}.{om[i].name}",
                f"value `{om[i].name}` = {om[i].value} deleted; old peers may still send {om[i].value}",
                old=om[i].span,
                old_decl=member_text(om[i], lang),
                anchor=n.span,
            )
        for j in added:
            self.emit(
                "HDI-E-04" if hdi else "FBS-E-03",
                f"{path}.{nm[j].name}",
                f"value `{nm[j].name}` = {nm[j].value} added; old readers see an unknown value",
                new=nm[j].span,
                new_decl=member_text(nm[j], lang),
            )

    def _interface(self, o: ir.Interface, n: ir.Interface, path: str, lang: Lang) -> None:
        hdi = lang == "hdi"
        if hdi:
            if self._parent_token(o.parent, o, self.o, self.canon_o) != self._parent_token(
                n.parent, n, self.n, self.canon_n
            ):
                self.emit(
                    "HDI-IF-04",
                    path,
                    f"parent changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                )
            ao = sorted(a.name for a in o.attributes) + (["callback"] if o.callback else [])
            an = sorted(a.name for a in n.attributes) + (["callback"] if n.callback else [])
            if sorted(set(ao)) != sorted(set(an)):
                self.emit(
                    "HDI-IF-02",
                    path,
                    f"attributes changed from [{', '.join(sorted(set(ao)))}] to [{', '.join(sorted(set(an)))}]",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                )
        # Command ids run across `extends`: compare the whole table, ancestors first.
        om = self._flat_methods(o, self.o) if hdi else o.methods
        nm = self._flat_methods(n, self.n) if hdi else n.methods

        def sig(m: ir.Method, side: Literal["o", "n"]) -> object:
            return (
                tuple((p.direction, self.tkey(p.type, side)) for p in m.params),
                m.oneway,
            )

        matched, renamed, removed, added = self._pair(
            dedup_names([m.name for m in om]),
            dedup_names([m.name for m in nm]),
            lambda i, j: (om[i].cmd_id == nm[j].cmd_id if hdi else True)
            and sig(om[i], "o") == sig(nm[j], "n"),
        )
        for i, j in renamed:
            self.emit(
                "HDI-M-04" if hdi else "FBS-R-02",
                f"{path}.{nm[j].name}",
                f"method renamed from `{om[i].name}`"
                + (f" (same command id {nm[j].cmd_id})" if hdi else ""),
                old=om[i].span,
                new=nm[j].span,
                old_decl=method_text(om[i], lang),
                new_decl=method_text(nm[j], lang),
                severity=None if hdi else Severity.BREAKING,
            )
        old_cmds = self._cmd_table(o, self.o)
        max_old = max((m.cmd_id for m in om), default=-1)
        for i in removed:
            self.emit(
                "HDI-M-01" if hdi else "FBS-R-01",
                f"{path}.{om[i].name}",
                f"method `{om[i].name}` deleted"
                + (f"; command id {om[i].cmd_id} is no longer handled" if hdi else ""),
                old=om[i].span,
                old_decl=method_text(om[i], lang),
                anchor=n.span,
            )
        for j in added:
            m = nm[j]
            if not hdi:
                self.emit(
                    "FBS-R-03",
                    f"{path}.{m.name}",
                    f"method `{m.name}` added",
                    new=m.span,
                    new_decl=method_text(m, lang),
                )
            elif m.cmd_id > max_old:
                self.emit(
                    "HDI-M-03",
                    f"{path}.{m.name}",
                    f"method appended with new command id {m.cmd_id}",
                    new=m.span,
                    new_decl=method_text(m, lang),
                )
            else:
                was = old_cmds.get(m.cmd_id)
                self.emit(
                    "HDI-M-10",
                    f"{path}.{m.name}",
                    f"method inserted with command id {m.cmd_id}"
                    + (f", which old peers send for `{was}`" if was else "")
                    + "; every later method is renumbered",
                    new=m.span,
                    new_decl=method_text(m, lang),
                )
        for i, j in sorted(matched + renamed):
            self._method(om[i], nm[j], f"{path}.{nm[j].name}", lang)

    def _method(self, o: ir.Method, n: ir.Method, path: str, lang: Lang) -> None:
        hdi = lang == "hdi"
        to, tn = method_text(o, lang), method_text(n, lang)
        if hdi and o.cmd_id != n.cmd_id:
            self.emit(
                "HDI-M-02",
                path,
                f"command id changed from {o.cmd_id} to {n.cmd_id}",
                old=o.span,
                new=n.span,
                old_decl=to,
                new_decl=tn,
            )
        if o.oneway != n.oneway:
            self.emit(
                "HDI-M-09" if hdi else "FBS-R-02",
                path,
                f"[oneway] {'added' if n.oneway else 'removed'}",
                old=o.span,
                new=n.span,
                old_decl=to,
                new_decl=tn,
            )
        self._doc(lang, path, o.doc, n.doc, o.span, n.span, to, tn)
        if not hdi:
            if attr_map(o.attributes) != attr_map(n.attributes):
                self.emit(
                    "FBS-A-01",
                    path,
                    "method attributes changed",
                    old=o.span,
                    new=n.span,
                    old_decl=to,
                    new_decl=tn,
                )
            so = [(p.direction, self.tkey(p.type, "o")) for p in o.params]
            sn = [(p.direction, self.tkey(p.type, "n")) for p in n.params]
            if so != sn:
                self.emit(
                    "FBS-R-02",
                    path,
                    "request or response type changed",
                    old=o.span,
                    new=n.span,
                    old_decl=to,
                    new_decl=tn,
                )
            return
        op, np_ = o.params, n.params
        matched, renamed, removed, added = self._pair(
            [p.name for p in op],
            [p.name for p in np_],
            lambda i, j: i == j
            and op[i].direction == np_[j].direction
            and self.same_type(op[i].type, np_[j].type),
        )
        for i, j in renamed:
            self.emit(
                "HDI-M-08",
                f"{path}.{np_[j].name}",
                f"parameter renamed from `{op[i].name}`",
                old=op[i].span or o.span,
                new=np_[j].span or n.span,
                old_decl=param_text(op[i], lang),
                new_decl=param_text(np_[j], lang),
            )
        for i in removed:
            self.emit(
                "HDI-M-05",
                f"{path}.{op[i].name}",
                f"[{op[i].direction}] parameter `{op[i].name}` removed (was parameter {i})",
                old=op[i].span or o.span,
                old_decl=param_text(op[i], lang),
                anchor=n.span,
            )
        for j in added:
            self.emit(
                "HDI-M-05",
                f"{path}.{np_[j].name}",
                f"[{np_[j].direction}] parameter `{np_[j].name}` added at position {j}",
                new=np_[j].span or n.span,
                new_decl=param_text(np_[j], lang),
            )
        pairs = sorted(matched + renamed)
        for d in ("in", "out"):
            sub = [(i, j) for i, j in pairs if op[i].direction == d and np_[j].direction == d]
            for i, j in self._out_of_order(sub):
                self.emit(
                    "HDI-M-05",
                    f"{path}.{np_[j].name}",
                    f"parameter moved from position {i} to {j}",
                    old=op[i].span or o.span,
                    new=np_[j].span or n.span,
                    old_decl=param_text(op[i], lang),
                    new_decl=param_text(np_[j], lang),
                )
        for i, j in pairs:
            a, b = op[i], np_[j]
            ppath = f"{path}.{b.name}"
            if a.direction != b.direction:
                self.emit(
                    "HDI-M-07",
                    ppath,
                    f"direction changed from [{a.direction}] to [{b.direction}]",
                    old=a.span or o.span,
                    new=b.span or n.span,
                    old_decl=param_text(a, lang),
                    new_decl=param_text(b, lang),
                )
            self._member_type(a, b, ppath, "HDI-M-06", lang)


def compare(old: ir.Schema, new: ir.Schema) -> list[Finding]:
    """Every change from ``old`` to ``new``, sorted most severe first (deterministic)."""
    return Comparer(old, new).run()
