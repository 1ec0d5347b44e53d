"""Every corpus schema: we accept exactly what flatc accepts, and explain rejections."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from idlgen.diagnostics import render_all
from idlgen.frontend.fbs.loader import load, load_text
from idlgen.ir import Enum, Interface, RefKind, Struct, Union

from .common import FBS, include_dirs, need_flatc, need_shared, flatc

SCHEMAS = sorted(FBS.rglob("*.fbs")) if FBS.is_dir() else []


def _flatc_accepts(schema: Path) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as d:
        inc = [a for i in include_dirs(schema) for a in ("-I", str(i))]
        r = flatc("-b", "-o", d, *inc, schema)
        return r.returncode == 0, r.stderr


def test_corpus_present() -> None:
    need_shared()
    assert len(SCHEMAS) >= 70


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda p: str(p.relative_to(FBS)))
def test_same_verdict_as_flatc(schema: Path) -> None:
    need_flatc()
    ok_flatc, err = _flatc_accepts(schema)
    res = load([schema], include_dirs=include_dirs(schema))
    text = render_all(res.diagnostics, res.sources)
    assert res.ok == ok_flatc, f"flatc: {err}\nidlgen: {text}"
    if not res.ok:
        errors = [d for d in res.diagnostics if d.is_error]
        assert errors and all(d.code.startswith("FBS") for d in errors)
        assert all(d.span is not None and d.span.line >= 1 for d in errors), text


def test_real_schema_counts_match_flatc_bfbs_facts() -> None:
    """Counts from ../shared/docs/flatbuffers.md §6 (flatc's own binary schema)."""
    need_shared()
    expect = {
        "tflite/schema.fbs": (170, 0, 16, 4),
        "mindspore-lite/v0/ops_v0.fbs": (206, 0, 14, 0),
        "armnn/ArmnnSchema.fbs": (132, 1, 17, 2),
        "arrow/Schema.fbs": (30, 1, 9, 1),
        "flatbuffers/reflection.fbs": (10, 0, 2, 0),
    }
    for rel, (tables, structs, enums, unions) in expect.items():
        p = FBS / "real" / rel
        res = load([p])
        assert res.ok, rel
        f = next(f for f in res.schema.files if Path(f.path).resolve() == p.resolve())
        got = (
            sum(isinstance(d, Struct) and d.is_table for d in f.decls),
            sum(isinstance(d, Struct) and not d.is_table for d in f.decls),
            sum(isinstance(d, Enum) for d in f.decls),
            sum(isinstance(d, Union) for d in f.decls),
        )
        assert got == (tables, structs, enums, unions), rel


def test_monster_ir_facts() -> None:
    need_shared()
    from .common import TESTS

    res = load([TESTS / "monster_test.fbs"], include_dirs=[TESTS / "include_test"])
    assert res.ok
    d = res.schema.decls()
    m = d["MyGame.Example.Monster"]
    assert isinstance(m, Struct) and m.is_table
    by = {f.name: f for f in m.fields}
    assert [f.slot for f in m.fields] == sorted(f.slot for f in m.fields if f.slot is not None)
    assert by["test"].slot == 8 and by["test"].type.kind is RefKind.UNION  # type: ignore[union-attr]
    assert by["name"].key and by["name"].required
    assert by["friendly"].deprecated
    assert by["color"].default == 8  # Blue = 1 << 3
    assert by["testarrayoftables"].doc.startswith("an example documentation comment")
    color = d["MyGame.Example.Color"]
    assert isinstance(color, Enum) and color.bit_flags
    assert [(x.name, x.value) for x in color.members] == [("Red", 1), ("Green", 2), ("Blue", 8)]
    svc = d["MyGame.Example.MonsterStorage"]
    assert isinstance(svc, Interface)
    assert [p.direction for p in svc.methods[0].params] == ["in", "out"]
    f = next(f for f in res.schema.files if f.path.endswith("monster_test.fbs"))
    assert (f.root_type, f.file_identifier, f.file_extension) == (
        "MyGame.Example.Monster",
        "MONS",
        "mon",
    )
    amb = d["MyGame.Example.AnyAmbiguousAliases"]
    assert isinstance(amb, Union) and [m.value for m in amb.members] == [1, 2, 3]


# Small schemas for each check: (source, expected code or None when valid). Every case is also
# run through flatc, which must agree on accept/reject.
CASES = [
    ("table T { a:int; } root_type T;", None),
    ('namespace A.B; table T { a:[int]; b:string = "x"; c:[int] = []; }', None),
    ("struct S { a:[int:0xF]; b:byte; } table T { s:S; }", None),
    ('enum E:ubyte (bit_flags) { A, B, C } table T { e:E = "A C"; f:E = A; }', None),
    (
        "table T { a:float = -inf; b:double = nan; c:float = 0x1.8p1; d:int = 0x10; e:int = null; }",
        None,
    ),
    ("union U { A, B, } table A {} table B {} table T { u:U; v:[U]; }", None),
    ('table T {} rpc_service S { M(T):T (streaming: "none"); }', None),
    ('attribute "custom"; table T { a:int (custom: 3); }', None),
    ("table T { a:int; } root_type T;\n{ a: 3 }", None),
    ("table T { a:int; }\n{ a: 3 }", "FBS052"),
    ("enum E:int { A = 1, B = 1 }", "FBS023"),
    ("enum E:byte { A = 200 }", "FBS024"),
    ("enum E:float { A }", "FBS022"),
    ("table T { a:int (id: 0); b:int; }", "FBS030"),
    ("table T { a:int (id: 0); b:int (id: 2); }", "FBS031"),
    ("table T { a:int (required); }", "FBS032"),
    ("table T { a:int (key); b:int (key); }", "FBS033"),
    ("struct S { a:string; }", "FBS034"),
    ("struct A { b:B; } struct B { a:A; }", "FBS035"),
    ("table T { a:int (unknownattr); }", "FBS036"),
    ('file_identifier "ABCDE";', "FBS037"),
    ("table T {} namespace X; table T2 {} namespace; table T {}", "FBS020"),
    ("table T { a:Strng; }", "FBS021"),
    ("table T { a:[int:3]; }", "FBS040"),
    ("table T { a:[[int]]; }", "FBS041"),
    ("struct S {}", "FBS045"),
    ("struct S { a:int; } root_type S;", "FBS038"),
    ("table T { a:int; } /// doc after code\n", "FBS002"),
    ("table T { a:int }", "FBS001"),
    ("enum E:int { A } table T { e:E = B; }", "FBS039"),
    ("enum E:int { A = 1 } table T { e:E; }", "FBS039"),
    ("table T { a:int = null (key); }", "FBS046"),
    ('table T { a:[int] (nested_flatbuffer: "T"); }', "FBS048"),
    ("struct S { a:int (deprecated); }", "FBS050"),
]


@pytest.mark.parametrize("src,code", CASES)
def test_check(src: str, code: str | None) -> None:
    res = load_text(src, "case.fbs")
    text = render_all(res.diagnostics, res.sources)
    if code is None:
        assert res.ok, text
    else:
        assert not res.ok
        d = next(d for d in res.diagnostics if d.is_error)
        assert d.code == code, text
        assert d.span is not None and d.span.file == "case.fbs"
        assert "Traceback" not in text and "case.fbs:" in text


@pytest.mark.parametrize("src,code", CASES)
def test_check_agrees_with_flatc(src: str, code: str | None) -> None:
    need_flatc()
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "case.fbs"
        p.write_text(src)
        r = flatc("-b", "-o", d, p)
    assert (r.returncode == 0) == (code is None), r.stderr


def test_unknown_type_suggests() -> None:
    res = load_text("table Monster {} table T { m:Monstr; }", "s.fbs")
    d = next(d for d in res.diagnostics if d.code == "FBS021")
    assert d.help and "Monster" in d.help[0]


def test_syntax_error_names_tokens() -> None:
    res = load_text("table T { a int; }", "s.fbs")
    d = res.diagnostics[0]
    assert d.code == "FBS001" and d.span is not None and (d.span.line, d.span.col) == (1, 13)
    assert d.help == ("expected ':'",)


def test_includes_resolved_and_parsed_once(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.fbs").write_text('include "sub/b.fbs";\ninclude "c.fbs";\ntable A { b:B; c:C; }')
    (tmp_path / "sub" / "b.fbs").write_text('include "c.fbs";\ntable B {}')
    (tmp_path / "c.fbs").write_text("table C {}")
    inc = tmp_path / "inc"
    inc.mkdir()
    res = load([tmp_path / "a.fbs"])
    assert res.ok, res.diagnostics
    assert sorted(Path(f.path).name for f in res.schema.files) == ["a.fbs", "b.fbs", "c.fbs"]
    res2 = load([tmp_path / "a.fbs", tmp_path / "c.fbs"])
    assert len(res2.schema.files) == 3


def test_missing_include_is_located(tmp_path: Path) -> None:
    (tmp_path / "a.fbs").write_text('include "nope.fbs";\ntable A {}')
    res = load([tmp_path / "a.fbs"])
    d = next(d for d in res.diagnostics if d.code == "FBS010")
    assert d.span is not None and d.span.line == 1
