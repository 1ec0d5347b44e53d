"""Structural comparison of two schema IRs: ``compare(old, new) -> list[Finding]``.

The pipeline: ``matching`` pairs declarations across the versions (version-stripped HDI names,
namespace moves, renamed types), then every pair goes to its language's rules — ``hdi_rules``
(positional Parcel: structs, plain-data layout, unions, interfaces), ``fbs_rules`` (vtable
slots, inline structs, services, file-level declarations) and, here, the enum rules both
languages share in shape (with each language's rule ids). Member lists go through the one
routine ``members.diff_members``: matched by name, an old member that vanished and a new one
at the same position (HDI) or slot/offset/value (FlatBuffers) with the same type is a rename.
Spans are only carried along for reporting.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from .. import ir
from . import fbs_rules, hdi_rules
from .decltext import decl_text, member_text, type_text
from .findings import (
    DEFAULT_BREAKING,
    Categories,
    Finding,
    Severity,
    report_order,
    resolve_causes,
)
from .matching import Comparison, Lang, decl_kind, hdi_package_base, sign_only
from .members import Change, MemberDiff, MemberRules, diff_members, doc_changed, first_shift_cause
from .rules import LANG_RULES

__all__ = ["compare", "hdi_package_base"]


# ---- enums: the same shape in both languages, each with its own rule ids ----------------------


@dataclass(frozen=True)
class EnumIds:
    renamed: str
    value: str
    removed: str
    added: str
    shifted: str = ""  # HDI: an implicit value moved by an inserted member


def _enum_same_slot(d: MemberDiff[ir.EnumMember], i: int, j: int) -> bool:
    kept_new, kept_old = d.data
    return (
        d.old[i].value == d.new[j].value
        and d.old[i].value not in kept_new
        and d.new[j].value not in kept_old
    )


def _enum_kept_values(d: MemberDiff[ir.EnumMember]) -> tuple[set[int], set[int]]:
    """Values of members that keep their names: a rename never takes one of them."""
    old_names = {m.name for m in d.old}
    new_names = {m.name for m in d.new}
    return (
        {m.value for m in d.new if m.name in old_names},
        {m.value for m in d.old if m.name in new_names},
    )


def _enum_changed(ids: EnumIds, d: MemberDiff[ir.EnumMember], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i], d.new[j]
    if a.value == b.value:
        return
    inserted = [d.new[k].name for k in d.added]
    # an implicit value moves with the members before it
    cause = "" if b.expr else first_shift_cause(d, i, j, exact=False)
    if ids.shifted and not b.expr and inserted:
        more = ", …" if len(inserted) > 3 else ""
        yield Change(
            ids.shifted,
            f"implicit value shifted from {a.value} to {b.value} by an inserted member "
            f"({', '.join(f'`{x}`' for x in inserted[:3])}{more})",
            cause=cause,
        )
    else:
        yield Change(ids.value, f"value changed from {a.value} to {b.value}", cause=cause)


def enum_values(ids: EnumIds) -> MemberRules[ir.EnumMember]:
    return MemberRules(
        text=member_text,
        prepare=_enum_kept_values,
        same_slot=_enum_same_slot,
        renamed=lambda d, i, j: [
            Change(ids.renamed, f"value {d.new[j].value} renamed from `{d.old[i].name}`")
        ],
        removed=lambda d, i: [
            Change(
                ids.removed,
                f"value `{d.old[i].name}` = {d.old[i].value} deleted; "
                f"old peers may still send {d.old[i].value}",
            )
        ],
        added=lambda d, j: [
            Change(
                ids.added,
                f"value `{d.new[j].name}` = {d.new[j].value} added; "
                "old readers see an unknown value",
            )
        ],
        changed=partial(_enum_changed, ids),
    )


ENUM_VALUES: dict[str, MemberRules[ir.EnumMember]] = {
    "hdi": enum_values(EnumIds("HDI-E-05", "HDI-E-01", "HDI-E-03", "HDI-E-04", "HDI-E-02")),
    "fbs": enum_values(EnumIds("FBS-E-05", "FBS-E-01", "FBS-E-02", "FBS-E-03")),
}


def _enum_base(c: Comparison, o: ir.Enum, n: ir.Enum, lang: Lang) -> Iterator[Change]:
    ta, tb = type_text(ir.Scalar(o.base), lang), type_text(ir.Scalar(n.base), lang)
    hdi = lang == "hdi"
    if o.base == n.base:
        return
    if sign_only(o.base, n.base):
        yield Change(
            LANG_RULES[lang].signedness,
            f"base type signedness changed from `{ta}` to `{tb}` (same width"
            + (
                ": raw blocks keep their bytes and every member's uint64 value is unchanged)"
                if hdi
                else ")"
            ),
        )
    elif hdi:
        raw = hdi_rules.enum_in_raw_block(o.qualname, c.o) or hdi_rules.enum_in_raw_block(
            n.qualname, c.n
        )
        where = (
            "used inside a raw block (plain struct, union or T[])" if raw else "only sent as uint64"
        )
        yield Change(
            "HDI-E-06",
            f"base type changed from `{ta}` to `{tb}` ({where})",
            Severity.BREAKING if raw else Severity.WARNING,
            ("WIRE",) if raw else (),
        )
    else:
        yield Change("FBS-E-04", f"underlying type changed from `{ta}` to `{tb}`")


def compare_enum(c: Comparison, o: ir.Enum, n: ir.Enum, path: str, lang: Lang) -> None:
    changes = list(_enum_base(c, o, n, lang))
    if lang == "fbs" and o.bit_flags != n.bit_flags:
        changes.append(Change("FBS-E-06", f"bit_flags {'added' if n.bit_flags else 'removed'}"))
    c.report(
        changes,
        path,
        old=o.span,
        new=n.span,
        old_decl=decl_text(o, lang),
        new_decl=decl_text(n, lang),
    )
    if lang == "hdi":
        hdi_rules.enum_parent(c, o, n, path)
    diff_members(c, ENUM_VALUES[lang], lang, path, o, n, o.members, n.members)


# ---- the driver ---------------------------------------------------------------------------------

# (language, declaration kind) -> the rules of that kind; both sides have the same kind.
DECL_RULES: dict[tuple[str, str], Callable[[Comparison, Any, Any, str], None]] = {
    ("hdi", "struct"): hdi_rules.compare_struct,
    ("hdi", "union"): hdi_rules.compare_union,
    ("hdi", "interface"): hdi_rules.compare_interface,
    ("hdi", "enum"): partial(compare_enum, lang="hdi"),
    ("fbs", "table"): fbs_rules.compare_table,
    ("fbs", "struct"): fbs_rules.compare_struct,
    ("fbs", "union"): fbs_rules.compare_union,
    ("fbs", "interface"): fbs_rules.compare_interface,
    ("fbs", "enum"): partial(compare_enum, lang="fbs"),
}


def _deleted(c: Comparison, reachable: set[str], q: str) -> None:
    d = c.o.decls[q]
    lang = c.o.lang[q]
    rules = LANG_RULES[lang]
    used = q in reachable or isinstance(d, ir.Interface)
    sev = Severity.BREAKING if used else Severity.WARNING
    how = (
        "reachable from an interface or root type"
        if used
        else "not reachable from any interface or root type"
    )
    # Unused, only the generated class goes; a carried-over one may be there in the old version.
    cats: Categories | None = None if used else ("SOURCE",)
    carried = hdi_rules.minor_carry_over(c, q)
    if carried:
        sev, cats = Severity.WARNING, ("SOURCE",)
        how = (
            f"not declared in {carried}; a minor-version package usually carries only "
            "what changed and keeps using the older declaration, so this is breaking "
            "only if it was really removed"
        )
    c.emit(
        rules.for_decl(rules.deleted, decl_kind(d)),
        c.names_o[q],
        f"{decl_kind(d)} `{d.name}` deleted ({how})",
        old=d.span,
        old_decl=decl_text(d, lang),
        anchor=c.file_anchor(c.o.file_of[q]),
        severity=sev,
        categories=cats,
    )


def _added(c: Comparison, q: str) -> None:
    d = c.n.decls[q]
    lang = c.n.lang[q]
    rules = LANG_RULES[lang]
    c.emit(
        rules.for_decl(rules.added, decl_kind(d)),
        c.names_n[q],
        f"{decl_kind(d)} `{d.name}` added",
        new=d.span,
        new_decl=decl_text(d, lang),
    )


def _compare_decl(c: Comparison, do: ir.Decl, dn: ir.Decl) -> None:
    lang = c.n.lang[dn.qualname]
    path = c.names_n[dn.qualname]
    to, tn = partial(decl_text, do, lang), partial(decl_text, dn, lang)
    kind = decl_kind(dn)
    if decl_kind(do) != kind:
        c.emit(
            LANG_RULES[lang].kind_changed,
            path,
            f"`{dn.name}` changed from {decl_kind(do)} to {kind}",
            old=do.span,
            new=dn.span,
            old_decl=to,
            new_decl=tn,
        )
        return
    if not isinstance(do, ir.Sequenceable) and not isinstance(dn, ir.Sequenceable):
        c.report(
            doc_changed(lang, do, dn), path, old=do.span, new=dn.span, old_decl=to, new_decl=tn
        )
    rules = DECL_RULES.get((lang, kind))
    if rules is not None:
        rules(c, do, dn, path)


def compare(
    old: ir.Schema, new: ir.Schema, *, breaking: Collection[str] = DEFAULT_BREAKING
) -> list[Finding]:
    """Every change from ``old`` to ``new``, sorted most severe first (deterministic).

    ``breaking`` names the categories whose breaks are ``breaking``; a finding that breaks only
    other categories is a ``warning`` (``Finding.under``)."""
    c = Comparison(old, new)
    c.match()
    reachable = c.reachable_old()
    for q in c.deleted:
        _deleted(c, reachable, q)
    for q in c.added:
        _added(c, q)
    for do, dn in c.pairs:
        if not hdi_rules.older_minor_reached(c, do, dn):
            _compare_decl(c, do, dn)
    fbs_rules.compare_files(c)
    return report_order(resolve_causes({f.under(breaking) for f in c.findings}))
