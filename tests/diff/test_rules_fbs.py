"""FlatBuffers rules: schema texts mutated one change at a time, loaded by the real front end.

Each mutation states the (rule, entity) it must produce; a differential check runs
``flatc --conform`` on the same pair and requires its complaint (if any) to be among ours.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from idlgen.diff import Severity, compare
from idlgen.diff.sources import load_paths

from ._flatc import covers, flatc_message

HAVE_FLATC = shutil.which("flatc") is not None


@dataclass(frozen=True)
class F:
    name: str
    type: str
    default: str = ""
    attrs: tuple[str, ...] = ()

    def text(self) -> str:
        d = f" = {self.default}" if self.default else ""
        a = f" ({', '.join(self.attrs)})" if self.attrs else ""
        return f"  {self.name}:{self.type}{d}{a};"


@dataclass(frozen=True)
class Schema:
    fields: tuple[F, ...]
    enum: tuple[tuple[str, int], ...] = (("A", 0), ("B", 1), ("C", 2))
    enum_base: str = "byte"
    struct: tuple[tuple[str, str], ...] = (("x", "int"), ("y", "short"))
    union: tuple[str, ...] = ("U1", "U2")
    root: str = "T"
    ident: str = "TEST"
    namespace: str = "ns"
    extra: tuple[str, ...] = field(default=())

    def text(self) -> str:
        enum = ", ".join(f"{n} = {v}" for n, v in self.enum)
        struct = " ".join(f"{n}:{t};" for n, t in self.struct)
        lines = [
            f"namespace {self.namespace};",
            f"enum E : {self.enum_base} {{ {enum} }}",
            f"struct S {{ {struct} }}",
            "table U1 { a:int; }",
            "table U2 { b:string; }",
            f"union Un {{ {', '.join(self.union)} }}",
            "table T {",
            *(f.text() for f in self.fields),
            "}",
            "table R { r:int; }",
            *self.extra,
            f"root_type {self.root};",
            f'file_identifier "{self.ident}";',
        ]
        return "\n".join(lines) + "\n"


SCALARS = ["int", "uint", "long", "short", "ushort", "float", "bool", "byte", "ubyte"]
TYPES = SCALARS + ["string", "[int]", "E", "S", "U1"]

BASE = Schema(
    (
        F("a", "int", "1"),
        F("b", "string"),
        F("c", "E", "B"),
        F("d", "[int]"),
        F("e", "S"),
        F("f", "float", "0.5"),
        F("u", "Un"),
        F("g", "ushort"),
    )
)


def _load(tmp: Path, name: str, s: Schema):  # type: ignore[no-untyped-def]
    p = tmp / name
    p.write_text(s.text())
    res = load_paths([p])
    assert res.ok, (s.text(), res.diagnostics[:2])
    return p, res.schema


def run_pair(tmp: Path, old: Schema, new: Schema):  # type: ignore[no-untyped-def]
    po, so = _load(tmp, "old.fbs", old)
    pn, sn = _load(tmp, "new.fbs", new)
    findings = compare(so, sn)
    if HAVE_FLATC:
        msg = flatc_message(po, pn)
        if msg is not None:
            assert covers(msg, findings), (msg, [(f.rule, f.path) for f in findings])
    return findings


def keys(findings) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {(f.rule, f.path) for f in findings}


def with_fields(s: Schema, fields: list[F]) -> Schema:
    return replace(s, fields=tuple(fields))


# ---- one mutation, one expected finding -----------------------------------------------------

CASES: list[tuple[str, Schema, set[tuple[str, str]]]] = [
    ("identical", BASE, set()),
    ("append", with_fields(BASE, [*BASE.fields, F("z", "long")]), {("FBS-T-01", "T.z")}),
    (
        "insert",
        with_fields(BASE, [BASE.fields[0], F("z", "long"), *BASE.fields[1:]]),
        {("FBS-T-02", "T.z")} | {("FBS-T-02", f"T.{f.name}") for f in BASE.fields[1:]},
    ),
    ("delete last", with_fields(BASE, list(BASE.fields[:-1])), {("FBS-T-03", "T.g")}),
    (
        "deprecate",
        with_fields(BASE, [replace(BASE.fields[0], attrs=("deprecated",)), *BASE.fields[1:]]),
        {("FBS-T-04", "T.a")},
    ),
    (
        "rename",
        with_fields(BASE, [replace(BASE.fields[0], name="alpha"), *BASE.fields[1:]]),
        {("FBS-T-05", "T.alpha")},
    ),
    (
        "rename+retype",
        with_fields(BASE, [F("alpha", "long"), *BASE.fields[1:]]),
        {("FBS-T-06", "T.alpha")},
    ),
    ("widen", with_fields(BASE, [F("a", "long", "1"), *BASE.fields[1:]]), {("FBS-T-07", "T.a")}),
    ("sign", with_fields(BASE, [F("a", "uint", "1"), *BASE.fields[1:]]), {("FBS-T-12", "T.a")}),
    ("default", with_fields(BASE, [F("a", "int", "2"), *BASE.fields[1:]]), {("FBS-T-09", "T.a")}),
    (
        "required",
        with_fields(
            BASE, [BASE.fields[0], F("b", "string", attrs=("required",)), *BASE.fields[2:]]
        ),
        {("FBS-T-10", "T.b")},
    ),
    (
        "optional",
        with_fields(BASE, [F("a", "int", "null"), *BASE.fields[1:]]),
        {("FBS-T-11", "T.a"), ("FBS-T-09", "T.a")},
    ),
    (
        "key",
        with_fields(BASE, [F("a", "int", "1", ("key",)), *BASE.fields[1:]]),
        {("FBS-A-01", "T.a")},
    ),
    (
        "enum renumber",
        replace(BASE, enum=(("A", 0), ("B", 5), ("C", 6))),
        # T.c defaults to B, so its stored default number changes too.
        {("FBS-E-01", "E.B"), ("FBS-E-01", "E.C"), ("FBS-T-09", "T.c")},
    ),
    ("enum delete", replace(BASE, enum=(("A", 0), ("B", 1))), {("FBS-E-02", "E.C")}),
    ("enum add", replace(BASE, enum=(*BASE.enum, ("D", 3))), {("FBS-E-03", "E.D")}),
    ("enum rename", replace(BASE, enum=(("A", 0), ("B", 1), ("CC", 2))), {("FBS-E-05", "E.CC")}),
    ("enum base", replace(BASE, enum_base="short"), {("FBS-E-04", "E"), ("FBS-T-07", "T.c")}),
    ("struct append", replace(BASE, struct=(*BASE.struct, ("z", "short"))), {("FBS-S-01", "S.z")}),
    (
        "struct reorder",
        replace(BASE, struct=(("y", "short"), ("x", "int"))),
        {("FBS-S-01", "S.x"), ("FBS-S-01", "S.y")},
    ),
    (
        "struct rename",
        replace(BASE, struct=(("xx", "int"), ("y", "short"))),
        {("FBS-S-02", "S.xx")},
    ),
    (
        "union reorder",
        replace(BASE, union=("U2", "U1")),
        {("FBS-U-01", "Un.U1"), ("FBS-U-01", "Un.U2")},
    ),
    ("union delete", replace(BASE, union=("U1",)), {("FBS-U-02", "Un.U2")}),
    ("union add", replace(BASE, union=("U1", "U2", "R")), {("FBS-U-06", "Un.R")}),
    ("root_type", replace(BASE, root="R"), {("FBS-F-01", "root_type")}),
    ("file_identifier", replace(BASE, ident="TST2"), {("FBS-F-02", "file_identifier")}),
    ("type added", replace(BASE, extra=("table Extra { q:int; }",)), {("FBS-Y-02", "Extra")}),
    (
        "namespace move",
        replace(BASE, namespace="other.ns"),
        {("FBS-F-03", "other.ns")},
    ),
]


@pytest.mark.parametrize("name,new,expected", CASES, ids=[c[0] for c in CASES])
def test_single_mutation(
    tmp_path: Path, name: str, new: Schema, expected: set[tuple[str, str]]
) -> None:
    findings = run_pair(tmp_path, BASE, new)
    assert keys(findings) == expected, name


def test_table_to_struct_is_kind_change(tmp_path: Path) -> None:
    new = replace(BASE, extra=(), root="T")
    old_text = BASE.text().replace("table R { r:int; }", "table Q { q:int; }")
    new_text = new.text().replace("table R { r:int; }", "struct Q { q:int; }")
    (tmp_path / "o.fbs").write_text(old_text)
    (tmp_path / "n.fbs").write_text(new_text)
    f = compare(load_paths([tmp_path / "o.fbs"]).schema, load_paths([tmp_path / "n.fbs"]).schema)
    assert ("FBS-K-01", "Q") in keys(f)


def test_deleting_a_referenced_table_is_breaking(tmp_path: Path) -> None:
    old = replace(BASE, extra=("table Extra { q:int; }",), fields=(*BASE.fields, F("x", "Extra")))
    f = run_pair(tmp_path, old, BASE)
    by = {(x.rule, x.path): x for x in f}
    assert by[("FBS-Y-01", "Extra")].severity is Severity.BREAKING
    assert ("FBS-T-03", "T.x") in by


# ---- random mutation sequences vs flatc -----------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn) -> Schema:
    fields = list(BASE.fields)
    s = BASE
    for _ in range(draw(st.integers(1, 3))):
        op = draw(
            st.sampled_from(
                [
                    "insert",
                    "delete",
                    "retype",
                    "rename",
                    "default",
                    "swap",
                    "enum",
                    "struct",
                    "union",
                ]
            )
        )
        k = draw(st.integers(0, len(fields) - 1)) if fields else 0
        if op == "insert":
            fields.insert(k, F(f"n{len(fields)}_{k}", draw(st.sampled_from(SCALARS))))
        elif op == "delete" and len(fields) > 1 and fields[k].type != "Un":
            del fields[k]
        elif op == "retype" and fields and fields[k].type in SCALARS:
            fields[k] = F(fields[k].name, draw(st.sampled_from(SCALARS)))
        elif op == "rename" and fields:
            fields[k] = replace(fields[k], name=fields[k].name + "_r")
        elif op == "default" and fields and fields[k].type in ("int", "long", "short"):
            fields[k] = replace(fields[k], default=str(draw(st.integers(-3, 3))))
        elif op == "swap" and len(fields) > 1:
            j = draw(st.integers(0, len(fields) - 1))
            fields[k], fields[j] = fields[j], fields[k]
        elif op == "enum":
            vals = draw(st.permutations([0, 1, 2]))
            s = replace(s, enum=tuple(zip(("A", "B", "C"), vals)))
        elif op == "struct":
            s = replace(s, struct=tuple(draw(st.permutations(list(BASE.struct)))))
        elif op == "union":
            s = replace(s, union=tuple(draw(st.permutations(list(BASE.union)))))
    return with_fields(s, fields)


@pytest.mark.skipif(not HAVE_FLATC, reason="flatc not on PATH")
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutated())
def test_flatc_conform_complaints_are_among_ours(tmp_path: Path, new: Schema) -> None:
    findings = run_pair(tmp_path, BASE, new)  # asserts coverage of flatc's message
    if new == BASE:
        assert findings == []


def test_rpc_service(tmp_path: Path) -> None:
    head = "namespace svc;\ntable Req { a:int; }\ntable Resp { b:int; }\ntable Resp2 { b:int; }\n"
    (tmp_path / "o.fbs").write_text(
        head
        + 'rpc_service G { Hello(Req):Resp; Bye(Req):Resp (streaming: "server"); Gone(Req):Resp2; }\n'
    )
    (tmp_path / "n.fbs").write_text(
        head + "rpc_service G { Hello(Req):Resp2; Bye(Req):Resp; New(Resp):Req; }\n"
    )
    f = compare(load_paths([tmp_path / "o.fbs"]).schema, load_paths([tmp_path / "n.fbs"]).schema)
    assert keys(f) == {
        ("FBS-R-02", "G.Hello"),
        ("FBS-A-01", "G.Bye"),
        ("FBS-R-01", "G.Gone"),
        ("FBS-R-03", "G.New"),
    }


def test_type_rename_is_one_finding_and_references_follow(tmp_path: Path) -> None:
    old = BASE.text()
    new = old.replace("table U1 { a:int; }", "table Uno { a:int; }").replace(
        "union Un { U1, U2 }", "union Un { Uno, U2 }"
    )
    assert new != old
    (tmp_path / "o.fbs").write_text(old)
    (tmp_path / "n.fbs").write_text(new)
    f = compare(load_paths([tmp_path / "o.fbs"]).schema, load_paths([tmp_path / "n.fbs"]).schema)
    # The union member's name follows its type (`Uno`), so that is a member rename at the same
    # discriminant; the table itself is one rename, not a deletion plus an addition.
    assert keys(f) == {("FBS-Y-03", "Uno"), ("FBS-U-05", "Un.Uno")}


TEXT_CASES = [
    (
        "vector64",
        "table T { v:[ubyte]; }",
        "table T { v:[ubyte] (vector64); }",
        {("FBS-T-08", "T.v")},
    ),
    (
        "undeprecate",
        "table T { a:int (deprecated); b:int; }",
        "table T { a:int; b:int; }",
        {("FBS-T-13", "T.a")},
    ),
    (
        "bit_flags",
        "enum E : uint { X = 1, Y = 2 }\ntable T { e:E = X; }",
        "enum E : uint (bit_flags) { X, Y }\ntable T { e:E = X; }",
        {("FBS-E-06", "E")},
    ),
    (
        "union retyped",
        "table A { x:int; }\ntable B { x:int; }\ntable C { y:long; }\nunion U { Alias: A, B }\ntable T { u:U; }",
        "table A { x:int; }\ntable B { x:int; }\ntable C { y:long; }\nunion U { Alias: C, B }\ntable T { u:U; }",
        {("FBS-U-03", "U.Alias")},
    ),
    (
        "union underlying",
        "table A { x:int; }\nunion U : ubyte { A }\ntable T { u:U; }",
        "table A { x:int; }\nunion U : int { A }\ntable T { u:U; }",
        {("FBS-U-04", "U")},
    ),
    (
        "file_extension",
        'file_extension "abc";\ntable T { a:int; }\nroot_type T;',
        'file_extension "xyz";\ntable T { a:int; }\nroot_type T;',
        {("FBS-F-04", "file_extension")},
    ),
    (
        "struct force_align",
        "struct S { a:int; }\ntable T { s:S; }",
        "struct S (force_align: 8) { a:int; }\ntable T { s:S; }",
        {("FBS-S-01", "S")},
    ),
    (
        "table to struct",
        "table S { a:int; }\ntable T { s:S; }",
        "struct S { a:int; }\ntable T { s:S; }",
        {("FBS-K-01", "S"), ("FBS-T-07", "T.s")},
    ),
]


@pytest.mark.parametrize("name,old,new,expected", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_text_pairs(
    tmp_path: Path, name: str, old: str, new: str, expected: set[tuple[str, str]]
) -> None:
    po, pn = tmp_path / "old.fbs", tmp_path / "new.fbs"
    po.write_text(old + "\n")
    pn.write_text(new + "\n")
    lo, ln = load_paths([po]), load_paths([pn])
    assert lo.ok and ln.ok, (lo.diagnostics[:1], ln.diagnostics[:1])
    findings = compare(lo.schema, ln.schema)
    if HAVE_FLATC and (msg := flatc_message(po, pn)) is not None:
        assert covers(msg, findings), (msg, keys(findings))
    assert keys(findings) == expected
