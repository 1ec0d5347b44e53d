"""HDI rules (positional MessageParcel): structs, plain-data layout, unions, interfaces and
methods, version carry-over.

Member lists are described as data (``MemberRules``: which rule each rename, removal, addition,
move or change is) and diffed by ``members.diff_members``; what is not a member list (parents,
plain-data layout, attributes, the older-minor carry-over) is a function over the comparison.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

from .. import ir
from ..ir import hdi_layout as hdi_layout
from .decltext import decl_text, field_text, member_text, method_text, param_text, type_text
from .findings import Severity
from .matching import Comparison, Side, dedup_names, hdi_package_base
from .members import Change, MemberDiff, MemberRules, diff_members, first_shift_cause, out_of_order

__all__ = [
    "compare_struct",
    "compare_union",
    "compare_interface",
    "older_minor_reached",
    "minor_carry_over",
    "enum_in_raw_block",
]

_SIGN_BLIND_FMT = str.maketrans("BHIQ", "bhiq")


def _sign_blind_fmt(fmt: str) -> str:
    return fmt.translate(_SIGN_BLIND_FMT)


def type_changes(c: Comparison, a: ir.TypeRef, b: ir.TypeRef, rule: str) -> Iterator[Change]:
    """A member's or parameter's type: same wire format spelled differently (HDI-T-01),
    signedness only (HDI-T-02), or ``rule``."""
    ta, tb = type_text(a, "hdi"), type_text(b, "hdi")
    if c.same_type(a, b):
        # equal IR (spans aside) is spelled the same; only containers have two spellings
        spelling = isinstance(a, ir.Vector) or isinstance(b, ir.Vector) or isinstance(a, ir.Map)
        if a != b and ta != tb and spelling:
            yield Change("HDI-T-01", f"type spelled `{tb}` instead of `{ta}` (same wire format)")
    elif c.signedness_only(a, b):
        yield Change("HDI-T-02", f"signedness changed from `{ta}` to `{tb}` (same width)")
    else:
        yield Change(rule, f"type changed from `{ta}` to `{tb}`")


def _same_position(d: MemberDiff[ir.Field] | MemberDiff[ir.UnionMember], i: int, j: int) -> bool:
    return i == j and d.c.same_type(d.old[i].type, d.new[j].type)


# ---- struct members: read in declaration order, parent members first -------------------------


def _member_added(d: MemberDiff[ir.Field], j: int) -> Iterator[Change]:
    later = [k for _, k in d.pairs if k > j]
    if later:
        yield Change(
            "HDI-S-03",
            f"member inserted at position {j}, before `{d.new[min(later)].name}`: every later "
            "member is read from the wrong bytes by old peers",
        )
    else:
        yield Change(
            "HDI-S-02",
            f"member appended at position {j}; old readers stop before it and the rest "
            "of the parcel is read out of step",
        )


STRUCT_MEMBERS: MemberRules[ir.Field] = MemberRules(
    text=field_text,
    same_slot=_same_position,
    renamed=lambda d, i, j: [
        Change("HDI-S-06", f"member renamed from `{d.old[i].name}` (same position {i}, same type)")
    ],
    moves=lambda d: out_of_order(d.pairs),
    moved=lambda d, i, j: [
        Change(
            "HDI-S-03",
            f"member moved from position {i} to {j}; members are read in declaration order",
        )
    ],
    added=_member_added,
    removed=lambda d, i: [
        Change("HDI-S-04", f"member `{d.old[i].name}` deleted (was at position {i})")
    ],
    changed=lambda d, i, j: type_changes(d.c, d.old[i].type, d.new[j].type, "HDI-S-05"),
    changed_on_renamed=True,
    anchor_at_survivor=True,
)


def compare_struct(c: Comparison, o: ir.Struct, n: ir.Struct, path: str) -> None:
    _parent(c, "HDI-S-08", o, n, path)
    diff_members(c, STRUCT_MEMBERS, "hdi", path, o, n, o.fields, n.fields)
    _pod_layout(c, o, n, path)


def _parent(
    c: Comparison,
    rule: str,
    o: ir.Struct | ir.Enum | ir.Interface,
    n: ir.Struct | ir.Enum | ir.Interface,
    path: str,
    what: str = "parent",
) -> None:
    if c.parent_token(o.parent, o, c.o, c.canon_o) != c.parent_token(n.parent, n, c.n, c.canon_n):
        c.emit(
            rule,
            path,
            f"{what} changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
            old=o.span,
            new=n.span,
            old_decl=decl_text(o, "hdi"),
            new_decl=decl_text(n, "hdi"),
        )


def _pod_layout(c: Comparison, o: ir.Struct, n: ir.Struct, path: str) -> None:
    lo = _struct_layout(c.o, o)
    ln = _struct_layout(c.n, n)
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
        msg = (
            f"became plain data: was marshalled member by member, now one raw {ln.size}-byte block"
        )
    c.emit(
        "HDI-S-07",
        path,
        msg,
        old=o.span,
        new=n.span,
        old_decl=f"struct {o.name} /* {'sizeof ' + str(lo.size) if lo else 'non-plain'} */",
        new_decl=f"struct {n.name} /* {'sizeof ' + str(ln.size) if ln else 'non-plain'} */",
    )


def _struct_layout(side: Side, s: ir.Struct) -> hdi_layout.Layout | None:
    try:
        return hdi_layout.struct_layout(s, side.resolve)
    except KeyError:  # an unresolved reference: the loader already reported it
        return None


def _union_layout(side: Side, u: ir.Union) -> hdi_layout.Layout | None:
    try:
        return hdi_layout.union_layout(u, side.resolve)
    except KeyError:
        return None


# ---- unions: one raw block ---------------------------------------------------------------------


def _union_grew(d: MemberDiff[ir.UnionMember]) -> bool:
    assert isinstance(d.o, ir.Union) and isinstance(d.n, ir.Union)
    lo, ln = _union_layout(d.c.o, d.o), _union_layout(d.c.n, d.n)
    return lo is not None and ln is not None and (lo.size, lo.align) != (ln.size, ln.align)


def _union_member_type(d: MemberDiff[ir.UnionMember], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i].type, d.new[j].type
    if d.c.signedness_only(a, b):
        yield Change(
            "HDI-T-02",
            f"signedness changed from `{type_text(a, 'hdi')}` to `{type_text(b, 'hdi')}` (same width)",
        )
    elif not d.c.same_type(a, b):
        yield Change(
            "HDI-U-01", f"type changed from `{type_text(a, 'hdi')}` to `{type_text(b, 'hdi')}`"
        )


UNION_MEMBERS: MemberRules[ir.UnionMember] = MemberRules(
    text=member_text,
    prepare=_union_grew,
    same_slot=_same_position,
    renamed=lambda d, i, j: [Change("HDI-U-03", f"member renamed from `{d.old[i].name}`")],
    removed=lambda d, i: [Change("HDI-U-01", f"union member `{d.old[i].name}` deleted")],
    added=lambda d, j: [
        (
            Change("HDI-U-01", "union member added and the raw block grew")
            if d.data
            else Change("HDI-U-02", "union member added (raw block size unchanged)")
        )
    ],
    changed=_union_member_type,
    doc=False,
)


def compare_union(c: Comparison, o: ir.Union, n: ir.Union, path: str) -> None:
    d = diff_members(c, UNION_MEMBERS, "hdi", path, o, n, o.members, n.members)
    if d.data and not d.added:
        lo, ln = _union_layout(c.o, o), _union_layout(c.n, n)
        assert lo is not None and ln is not None
        c.emit(
            "HDI-U-01",
            path,
            f"raw block size changed: sizeof {lo.size} → {ln.size}",
            old=o.span,
            new=n.span,
            old_decl=decl_text(o, "hdi"),
            new_decl=decl_text(n, "hdi"),
        )


# ---- interfaces: command id = position across `extends` -----------------------------------------


def _signature(c: Comparison, m: ir.Method, side: Literal["o", "n"]) -> object:
    return tuple((p.direction, c.tkey(p.type, side)) for p in m.params), m.oneway


def _method_added(d: MemberDiff[ir.Method], j: int) -> Iterator[Change]:
    m = d.new[j]
    max_old, old_cmds = d.data
    if m.cmd_id > max_old:
        yield Change("HDI-M-03", f"method appended with new command id {m.cmd_id}")
    else:
        was = old_cmds.get(m.cmd_id)
        yield Change(
            "HDI-M-10",
            f"method inserted with command id {m.cmd_id}"
            + (f", which old peers send for `{was}`" if was else "")
            + "; every later method is renumbered",
        )


def _method_changed(d: MemberDiff[ir.Method], i: int, j: int) -> Iterator[Change]:
    o, n = d.old[i], d.new[j]
    if o.cmd_id != n.cmd_id:
        shifted_by = first_shift_cause(d, i, j, lambda m: m.cmd_id)
        yield Change(
            "HDI-M-02", f"command id changed from {o.cmd_id} to {n.cmd_id}", cause=shifted_by
        )
    if o.oneway != n.oneway:
        yield Change("HDI-M-09", f"[oneway] {'added' if n.oneway else 'removed'}")
    diff_members(d.c, PARAMS, "hdi", f"{d.path}.{n.name}", o, n, o.params, n.params)


METHODS: MemberRules[ir.Method] = MemberRules(
    text=method_text,
    keys=lambda ms: dedup_names([m.name for m in ms]),
    prepare=lambda d: (
        max((m.cmd_id for m in d.old), default=-1),
        cmd_table(d.o, d.c.o),
    ),
    same_slot=lambda d, i, j: d.old[i].cmd_id == d.new[j].cmd_id
    and _signature(d.c, d.old[i], "o") == _signature(d.c, d.new[j], "n"),
    renamed=lambda d, i, j: [
        Change(
            "HDI-M-04",
            f"method renamed from `{d.old[i].name}` (same command id {d.new[j].cmd_id})",
        )
    ],
    removed=lambda d, i: [
        Change(
            "HDI-M-01",
            f"method `{d.old[i].name}` deleted; command id {d.old[i].cmd_id} is no longer handled",
        )
    ],
    added=_method_added,
    changed=_method_changed,
    changed_on_renamed=True,
)


def _param_moves(d: MemberDiff[ir.Param]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for way in ("in", "out"):
        sub = [
            (i, j) for i, j in d.pairs if d.old[i].direction == way and d.new[j].direction == way
        ]
        out += out_of_order(sub)
    return out


def _param_changed(d: MemberDiff[ir.Param], i: int, j: int) -> Iterator[Change]:
    a, b = d.old[i], d.new[j]
    if a.direction != b.direction:
        yield Change("HDI-M-07", f"direction changed from [{a.direction}] to [{b.direction}]")
    yield from type_changes(d.c, a.type, b.type, "HDI-M-06")


PARAMS: MemberRules[ir.Param] = MemberRules(
    text=param_text,
    same_slot=lambda d, i, j: i == j
    and d.old[i].direction == d.new[j].direction
    and d.c.same_type(d.old[i].type, d.new[j].type),
    renamed=lambda d, i, j: [Change("HDI-M-08", f"parameter renamed from `{d.old[i].name}`")],
    removed=lambda d, i: [
        Change(
            "HDI-M-05",
            f"[{d.old[i].direction}] parameter `{d.old[i].name}` removed (was parameter {i})",
        )
    ],
    added=lambda d, j: [
        Change(
            "HDI-M-05",
            f"[{d.new[j].direction}] parameter `{d.new[j].name}` added at position {j}",
        )
    ],
    moves=_param_moves,
    moved=lambda d, i, j: [Change("HDI-M-05", f"parameter moved from position {i} to {j}")],
    changed=_param_changed,
    changed_on_renamed=True,
    doc=False,
    parent_span_fallback=True,
)


def compare_interface(c: Comparison, o: ir.Interface, n: ir.Interface, path: str) -> None:
    _parent(c, "HDI-IF-04", o, n, path)
    ao = sorted({a.name for a in o.attributes} | ({"callback"} if o.callback else set()))
    an = sorted({a.name for a in n.attributes} | ({"callback"} if n.callback else set()))
    if ao != an:
        c.emit(
            "HDI-IF-02",
            path,
            f"attributes changed from [{', '.join(ao)}] to [{', '.join(an)}]",
            old=o.span,
            new=n.span,
            old_decl=decl_text(o, "hdi"),
            new_decl=decl_text(n, "hdi"),
        )
    # Command ids run across `extends`: compare the whole table, ancestors first.
    om, nm = c.flat_methods(o, c.o), c.flat_methods(n, c.n)
    diff_members(c, METHODS, "hdi", path, o, n, om, nm)


def cmd_table(iface: ir.Decl | ir.Method, side: Side) -> dict[int, str]:
    assert isinstance(iface, ir.Interface)
    return Comparison.cmd_table(iface, side)


# ---- enums (the shared enum rules add these HDI facts) -----------------------------------------


def enum_parent(c: Comparison, o: ir.Enum, n: ir.Enum, path: str) -> None:
    _parent(c, "HDI-E-06", o, n, path, "parent enum")


def enum_in_raw_block(qualname: str, side: Side) -> bool:
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
            if any(f.type == target for f in d.fields) and _struct_layout(side, d) is not None:
                return True
        elif isinstance(d, ir.Union):
            if any(m.type == target for m in d.members):
                return True
        elif isinstance(d, ir.Interface):
            if any(in_vector(p.type) for m in d.methods for p in m.params):
                return True
    return False


# ---- minor versions: what a minor package carries over -----------------------------------------


def older_minor_reached(c: Comparison, do: ir.Decl, dn: ir.Decl) -> bool:
    """The new package only reaches an older minor version of this declaration than the
    old one did (``v1_3.EncodeType`` instead of ``v1_4.EncodeType``): the newer copy is not
    imported any more. One warning instead of comparing two unrelated versions."""
    vo = c.o.file_of[do.qualname].version
    vn = c.n.file_of[dn.qualname].version
    if vo is None or vn is None or vo[0] != vn[0] or vn >= vo:
        return False
    base = hdi_package_base(dn.namespace)
    newest = max(
        (
            g.version
            for g in c.n.schema.files
            if g.version is not None and hdi_package_base(g.namespace) == base
        ),
        default=vn,
    )
    if newest <= vn:  # the new package itself is older: a version decrease, compared in full
        return False
    lang = c.n.lang[dn.qualname]
    c.emit(
        "HDI-Y-02",
        c.names_n[dn.qualname],
        f"the new version only reaches `{dn.qualname}`; `{do.qualname}` is not imported any "
        "more (its additions are unknown to code built against the new package)",
        old=do.span,
        new=dn.span,
        old_decl=decl_text(do, lang),
        new_decl=decl_text(dn, lang),
        severity=Severity.WARNING,
        categories=("SOURCE",),
    )
    return True


def minor_carry_over(c: Comparison, old_qualname: str) -> str:
    """ "v1_4" when the new side holds a later minor version of the deleted HDI declaration's
    package (same major), else ""."""
    f = c.o.file_of[old_qualname]
    if f.language != "hdi" or f.version is None:
        return ""
    base = hdi_package_base(f.namespace)
    later: Sequence[tuple[int, int]] = [
        g.version
        for g in c.n.schema.files
        if g.language == "hdi"
        and g.version is not None
        and hdi_package_base(g.namespace) == base
        and g.version[0] == f.version[0]
        and g.version[1] > f.version[1]
    ]
    return f"v{max(later)[0]}_{max(later)[1]}" if later else ""
