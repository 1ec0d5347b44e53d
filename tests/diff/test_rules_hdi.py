"""HDI rules on hand-built IR: each change yields exactly the expected (rule, entity) set."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from idlgen import ir
from idlgen.diff import Severity, compare

from ._build import (
    BOOL,
    BYTE,
    FLOAT,
    INT,
    LONG,
    SHORT,
    STR,
    Lines,
    enum,
    hdi_schema,
    iface,
    pin,
    pout,
    ref,
    struct,
)

NS1, NS2 = "ohos.hdi.foo.v1_0", "ohos.hdi.foo.v2_0"


def keys(findings: list) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(f.rule, f.path) for f in findings}


def sev(findings: list, rule: str, path: str) -> Severity:  # type: ignore[type-arg]
    return next(f.severity for f in findings if f.rule == rule and f.path == path)


def diff_structs(old: list[tuple[str, ir.TypeRef]], new: list[tuple[str, ir.TypeRef]], extra: tuple[ir.Decl, ...] = ()):  # type: ignore[no-untyped-def]
    o = hdi_schema(NS1, (struct(NS1, "S", old, Lines("o.idl")),) + extra)
    n = hdi_schema(
        NS2, (struct(NS2, "S", new, Lines("n.idl")),) + tuple(_renamespace(d, NS2) for d in extra)
    )
    return compare(o, n)


def _renamespace(d: ir.Decl, ns: str) -> ir.Decl:
    return dataclasses.replace(d, namespace=ns)  # type: ignore[type-var]


def test_identical_across_versions_is_empty() -> None:
    fields = [("a", INT), ("b", STR)]
    assert diff_structs(fields, fields) == []


def test_struct_member_appended_is_breaking() -> None:
    f = diff_structs([("a", INT), ("s", STR)], [("a", INT), ("s", STR), ("c", LONG)])
    assert keys(f) == {("HDI-S-02", "S.c")}
    assert f[0].severity is Severity.BREAKING and f[0].old is None and f[0].new is not None


def test_struct_member_inserted_mid_struct() -> None:
    f = diff_structs([("a", INT), ("s", STR)], [("a", INT), ("m", BOOL), ("s", STR)])
    assert keys(f) == {("HDI-S-03", "S.m")}


def test_struct_member_deleted_anchors_on_survivor() -> None:
    f = diff_structs([("a", INT), ("b", LONG), ("s", STR)], [("a", INT), ("s", STR)])
    assert keys(f) == {("HDI-S-04", "S.b")}
    assert f[0].new is None and f[0].anchor is not None and f[0].anchor.line == 2  # `a` in new


def test_struct_member_retyped() -> None:
    f = diff_structs([("a", INT), ("s", STR)], [("a", LONG), ("s", STR)])
    assert keys(f) == {("HDI-S-05", "S.a")}


def test_struct_member_renamed_is_one_warning() -> None:
    f = diff_structs([("a", INT), ("s", STR)], [("alpha", INT), ("s", STR)])
    assert keys(f) == {("HDI-S-06", "S.alpha")}
    assert f[0].severity is Severity.WARNING and "renamed from `a`" in f[0].message


def test_rename_with_type_change_is_not_paired() -> None:
    f = diff_structs([("a", INT), ("s", STR)], [("alpha", LONG), ("s", STR)])
    assert keys(f) == {("HDI-S-04", "S.a"), ("HDI-S-03", "S.alpha")}


def test_reorder() -> None:
    f = diff_structs([("a", STR), ("b", STR), ("c", STR)], [("b", STR), ("c", STR), ("a", STR)])
    assert keys(f) == {("HDI-S-03", "S.a")}


def test_pod_layout_change_reports_sizeof() -> None:
    f = diff_structs([("a", INT), ("b", BYTE)], [("a", INT), ("b", LONG)])
    assert keys(f) == {("HDI-S-05", "S.b"), ("HDI-S-07", "S")}
    pod = next(x for x in f if x.rule == "HDI-S-07")
    assert "sizeof 8 → 16" in pod.message


def test_pod_flip_to_non_plain() -> None:
    f = diff_structs([("a", INT)], [("a", INT), ("s", STR)])
    assert keys(f) == {("HDI-S-02", "S.s"), ("HDI-S-07", "S")}
    assert "no longer plain data" in next(x.message for x in f if x.rule == "HDI-S-07")


def test_enum_base_change_inside_pod_struct_is_breaking() -> None:
    e1 = enum(NS1, "E", [("A", 0, ""), ("B", 1, "")], base=ir.ScalarKind.I8)
    e2 = dataclasses.replace(enum(NS2, "E", [("A", 0, ""), ("B", 1, "")], base=ir.ScalarKind.I32))
    o = hdi_schema(
        NS1, (e1, struct(NS1, "P", [("e", ref(NS1, "E", ir.RefKind.ENUM)), ("x", FLOAT)]))
    )
    n = hdi_schema(
        NS2, (e2, struct(NS2, "P", [("e", ref(NS2, "E", ir.RefKind.ENUM)), ("x", FLOAT)]))
    )
    f = compare(o, n)
    assert keys(f) == {("HDI-E-06", "E"), ("HDI-S-07", "P")}
    assert sev(f, "HDI-E-06", "E") is Severity.BREAKING


def test_enum_base_change_only_as_parameter_is_warning() -> None:
    e1 = enum(NS1, "E", [("A", 0, "")], base=ir.ScalarKind.I8)
    e2 = enum(NS2, "E", [("A", 0, "")], base=ir.ScalarKind.I32)
    i1 = iface(NS1, "IFoo", [("Set", [pin("e", ref(NS1, "E", ir.RefKind.ENUM))])])
    i2 = iface(NS2, "IFoo", [("Set", [pin("e", ref(NS2, "E", ir.RefKind.ENUM))])])
    f = compare(hdi_schema(NS1, (e1, i1)), hdi_schema(NS2, (e2, i2)))
    assert keys(f) == {("HDI-E-06", "E")} and f[0].severity is Severity.WARNING


def test_enum_members() -> None:
    e1 = enum(
        NS1, "E", [("A", 0, ""), ("B", 1, ""), ("C", 2, ""), ("D", 10, "10"), ("OLD", 20, "20")]
    )
    e2 = enum(
        NS2,
        "E",
        [
            ("A", 0, ""),
            ("X", 1, ""),
            ("B", 2, ""),
            ("C", 3, ""),
            ("D", 11, "11"),
            ("NEW", 20, "20"),
            ("Z", 30, "30"),
        ],
    )
    f = compare(hdi_schema(NS1, (e1,)), hdi_schema(NS2, (e2,)))
    assert keys(f) == {
        ("HDI-E-04", "E.X"),
        ("HDI-E-02", "E.B"),
        ("HDI-E-02", "E.C"),
        ("HDI-E-01", "E.D"),
        ("HDI-E-05", "E.NEW"),
        ("HDI-E-04", "E.Z"),
    }
    assert sev(f, "HDI-E-04", "E.Z") is Severity.INFO
    assert sev(f, "HDI-E-05", "E.NEW") is Severity.WARNING


def test_enum_value_deleted() -> None:
    f = compare(
        hdi_schema(NS1, (enum(NS1, "E", [("A", 0, ""), ("B", 1, "")]),)),
        hdi_schema(NS2, (enum(NS2, "E", [("A", 0, "")]),)),
    )
    assert keys(f) == {("HDI-E-03", "E.B")}


def _ifaces(old: list, new: list):  # type: ignore[no-untyped-def,type-arg]
    return compare(
        hdi_schema(NS1, (iface(NS1, "IFoo", old, Lines("o.idl")),)),
        hdi_schema(NS2, (iface(NS2, "IFoo", new, Lines("n.idl")),)),
    )


def test_method_inserted_shifts_later_command_ids() -> None:
    f = _ifaces([("A", []), ("B", []), ("C", [])], [("A", []), ("X", []), ("B", []), ("C", [])])
    assert keys(f) == {("HDI-M-10", "IFoo.X"), ("HDI-M-02", "IFoo.B"), ("HDI-M-02", "IFoo.C")}
    x = next(m for m in f if m.rule == "HDI-M-10")
    assert "old peers send for `B`" in x.message
    assert "from 3 to 4" in next(m.message for m in f if m.path == "IFoo.C")


def test_method_appended_deleted_renamed() -> None:
    assert keys(_ifaces([("A", [])], [("A", []), ("B", [])])) == {("HDI-M-03", "IFoo.B")}
    assert keys(_ifaces([("A", []), ("B", [])], [("A", [])])) == {("HDI-M-01", "IFoo.B")}
    f = _ifaces([("A", [pin("x", INT)])], [("Alpha", [pin("x", INT)])])
    assert keys(f) == {("HDI-M-04", "IFoo.Alpha")} and f[0].severity is Severity.WARNING


def test_params() -> None:
    f = _ifaces(
        [("Run", [pin("a", INT), pin("b", STR), pout("ok", BOOL)])],
        [("Run", [pin("a", LONG), pin("bee", STR)])],
    )
    assert keys(f) == {
        ("HDI-M-06", "IFoo.Run.a"),
        ("HDI-M-08", "IFoo.Run.bee"),
        ("HDI-M-05", "IFoo.Run.ok"),
    }
    f = _ifaces([("Run", [pin("a", INT)])], [("Run", [pout("a", INT)])])
    assert keys(f) == {("HDI-M-07", "IFoo.Run.a")}


def test_oneway() -> None:
    o = iface(NS1, "IFoo", [("A", [])])
    n = iface(NS2, "IFoo", [("A", [])])
    n = dataclasses.replace(
        n, methods=(n.methods[0], dataclasses.replace(n.methods[1], oneway=True))
    )
    f = compare(hdi_schema(NS1, (o,)), hdi_schema(NS2, (n,)))
    assert keys(f) == {("HDI-M-09", "IFoo.A")}


def test_types_added_and_removed() -> None:
    s = struct(NS1, "Used", [("a", INT)])
    i = iface(NS1, "IFoo", [("A", [pin("u", ref(NS1, "Used", ir.RefKind.STRUCT))])])
    lone = struct(NS1, "Lone", [("a", INT)])
    i2 = iface(NS2, "IFoo", [("A", [pin("u", INT)])])
    f = compare(hdi_schema(NS1, (s, lone, i)), hdi_schema(NS2, (i2, struct(NS2, "Fresh", []))))
    assert ("HDI-S-01", "Used") in keys(f) and sev(f, "HDI-S-01", "Used") is Severity.BREAKING
    assert sev(f, "HDI-S-01", "Lone") is Severity.WARNING
    assert sev(f, "HDI-Y-01", "Fresh") is Severity.INFO
    assert ("HDI-M-06", "IFoo.A.u") in keys(f)


def test_package_rename_matches_types() -> None:
    o = hdi_schema("ohos.hdi.foo.v1_0", (struct("ohos.hdi.foo.v1_0", "S", [("a", INT)]),))
    n = hdi_schema("ohos.hdi.bar.v1_0", (struct("ohos.hdi.bar.v1_0", "S", [("a", INT)]),))
    assert keys(compare(o, n)) == {("HDI-PKG-03", "ohos.hdi.bar.v1_0")}


def test_doc_only_change_is_info() -> None:
    o = struct(NS1, "S", [("a", INT)])
    n = dataclasses.replace(struct(NS2, "S", [("a", INT)]), doc="A struct.")
    f = compare(hdi_schema(NS1, (o,)), hdi_schema(NS2, (n,)))
    assert keys(f) == {("HDI-D-02", "S")} and f[0].severity is Severity.INFO


def test_list_vs_array_spelling_is_info() -> None:
    f = diff_structs([("v", ir.Vector(INT, "array"))], [("v", ir.Vector(INT, "list"))])
    assert keys(f) == {("HDI-T-01", "S.v")}


# ---- properties ----------------------------------------------------------------------------

_TYPES = st.sampled_from([INT, LONG, SHORT, BYTE, BOOL, FLOAT, STR, ir.Vector(INT)])
_FIELDS = st.lists(
    st.tuples(st.from_regex(r"[a-z]{1,6}", fullmatch=True), _TYPES),
    min_size=0,
    max_size=8,
    unique_by=lambda t: t[0],
)


@settings(max_examples=150, deadline=None)
@given(_FIELDS, _TYPES, st.data())
def test_one_insertion_is_one_finding_at_that_member(fields, t, data) -> None:  # type: ignore[no-untyped-def]
    name = "zz_new"
    k = data.draw(st.integers(0, len(fields)))
    new = fields[:k] + [(name, t)] + fields[k:]
    f = [x for x in diff_structs(fields, new) if x.rule != "HDI-S-07"]
    assert keys(f) == {("HDI-S-02" if k == len(fields) else "HDI-S-03", f"S.{name}")}
    assert all(x.severity is Severity.BREAKING for x in f)


@settings(max_examples=150, deadline=None)
@given(_FIELDS.filter(lambda fs: len(fs) > 0), st.data())
def test_one_deletion_is_one_finding(fields, data) -> None:  # type: ignore[no-untyped-def]
    k = data.draw(st.integers(0, len(fields) - 1))
    new = fields[:k] + fields[k + 1 :]
    f = [x for x in diff_structs(fields, new) if x.rule != "HDI-S-07"]
    assert keys(f) == {("HDI-S-04", f"S.{fields[k][0]}")}


@settings(max_examples=100, deadline=None)
@given(_FIELDS)
def test_self_diff_is_empty(fields) -> None:  # type: ignore[no-untyped-def]
    assert diff_structs(fields, fields) == []


_METHODS = st.lists(st.from_regex(r"[A-Y][a-z]{1,5}", fullmatch=True), max_size=8, unique=True)


@settings(max_examples=100, deadline=None)
@given(_METHODS, st.data())
def test_method_insertion_renumbers_exactly_the_later_methods(names, data) -> None:  # type: ignore[no-untyped-def]
    k = data.draw(st.integers(0, len(names)))
    new = names[:k] + ["Zz"] + names[k:]
    f = _ifaces([(n, []) for n in names], [(n, []) for n in new])
    expected = {("HDI-M-03" if k == len(names) else "HDI-M-10", "IFoo.Zz")}
    expected |= {("HDI-M-02", f"IFoo.{n}") for n in names[k:]}
    assert keys(f) == expected


@settings(max_examples=100, deadline=None)
@given(_METHODS.filter(lambda ns: len(ns) >= 2), st.data())
def test_method_swap_is_two_shifts(names, data) -> None:  # type: ignore[no-untyped-def]
    i, j = sorted(
        data.draw(st.lists(st.integers(0, len(names) - 1), min_size=2, max_size=2, unique=True))
    )
    new = list(names)
    new[i], new[j] = new[j], new[i]
    f = _ifaces([(n, []) for n in names], [(n, []) for n in new])
    assert keys(f) == {("HDI-M-02", f"IFoo.{names[i]}"), ("HDI-M-02", f"IFoo.{names[j]}")}


def test_type_and_interface_renames() -> None:
    s1 = struct(NS1, "Info", [("a", INT), ("b", STR)])
    s2 = struct(NS2, "Details", [("a", INT), ("b", STR)])
    i1 = iface(NS1, "IFoo", [("Get", [pout("info", ref(NS1, "Info", ir.RefKind.STRUCT))])])
    i2 = iface(NS2, "IBar", [("Get", [pout("info", ref(NS2, "Details", ir.RefKind.STRUCT))])])
    f = compare(hdi_schema(NS1, (s1, i1)), hdi_schema(NS2, (s2, i2)))
    assert keys(f) == {("HDI-Y-04", "Details"), ("HDI-IF-03", "IBar")}
    assert sev(f, "HDI-Y-04", "Details") is Severity.WARNING
    assert sev(f, "HDI-IF-03", "IBar") is Severity.BREAKING


def test_interface_deleted_callback_and_parent() -> None:
    i1 = iface(NS1, "IFoo", [("A", [])])
    cb = dataclasses.replace(iface(NS2, "IFoo", [("A", [])]), callback=True)
    f = compare(hdi_schema(NS1, (i1, iface(NS1, "IGone", []))), hdi_schema(NS2, (cb,)))
    assert keys(f) == {("HDI-IF-02", "IFoo"), ("HDI-IF-01", "IGone")}
    assert sev(f, "HDI-IF-01", "IGone") is Severity.BREAKING
    # A new, unrelated parent renumbers the interface's own methods.
    base = iface(NS2, "IBase", [("B", [])])
    child = ir.Interface("IFoo", NS2, (ir.Method("A", (), cmd_id=2),), parent=f"{NS2}.IBase")
    f = compare(
        hdi_schema(NS1, (i1, iface(NS1, "IBase", [("B", [])]))), hdi_schema(NS2, (base, child))
    )
    assert ("HDI-IF-04", "IFoo") in keys(f) and ("HDI-M-02", "IFoo.A") in keys(f)


def test_struct_parent_changed() -> None:
    p1 = struct(NS1, "P", [("x", INT)])
    p2 = struct(NS2, "Q", [("y", STR)])
    c1 = dataclasses.replace(struct(NS1, "C", [("x", INT), ("z", STR)]), parent=f"{NS1}.P")
    c2 = dataclasses.replace(struct(NS2, "C", [("x", INT), ("z", STR)]), parent=f"{NS2}.Q")
    f = compare(
        hdi_schema(NS1, (p1, c1, struct(NS1, "Q", [("y", STR)]))),
        hdi_schema(NS2, (struct(NS2, "P", [("x", INT)]), p2, c2)),
    )
    assert keys(f) == {("HDI-S-08", "C")}


def _union(ns: str, members: list[tuple[str, ir.TypeRef]]) -> ir.Union:
    return ir.Union("U", ns, tuple(ir.UnionMember(n, t) for n, t in members))


def test_unions() -> None:
    def d(old: list, new: list):  # type: ignore[no-untyped-def,type-arg]
        return keys(
            compare(hdi_schema(NS1, (_union(NS1, old),)), hdi_schema(NS2, (_union(NS2, new),)))
        )

    assert d([("a", INT), ("b", FLOAT)], [("a", INT), ("b", FLOAT), ("c", SHORT)]) == {
        ("HDI-U-02", "U.c")
    }
    assert d([("a", INT)], [("a", INT), ("c", LONG)]) == {("HDI-U-02", "U.c")}  # sizeof stays 8
    big = struct(NS2, "Big", [("x", LONG), ("y", LONG)])
    grown = compare(
        hdi_schema(NS1, (_union(NS1, [("a", INT)]),)),
        hdi_schema(
            NS2, (big, _union(NS2, [("a", INT), ("c", ref(NS2, "Big", ir.RefKind.STRUCT))]))
        ),
    )
    assert keys(grown) == {("HDI-U-01", "U.c"), ("HDI-Y-01", "Big")}  # sizeof 8 → 16
    assert "grew" in next(x.message for x in grown if x.rule == "HDI-U-01")
    assert d([("a", INT), ("b", FLOAT)], [("a", INT)]) == {("HDI-U-01", "U.b")}
    assert d([("a", INT), ("b", FLOAT)], [("a", INT), ("bee", FLOAT)]) == {("HDI-U-03", "U.bee")}
    assert d([("a", INT)], [("a", LONG)]) == {("HDI-U-01", "U.a")}


def test_kind_change() -> None:
    f = compare(
        hdi_schema(NS1, (struct(NS1, "K", [("a", INT)]),)),
        hdi_schema(
            NS2, (_union(NS2, [("a", INT)]).__class__("K", NS2, (ir.UnionMember("a", INT),)),)
        ),
    )
    assert keys(f) == {("HDI-Y-03", "K")}
