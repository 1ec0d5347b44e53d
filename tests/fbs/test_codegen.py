"""Generated FlatBuffers code: the thin methods over the runtime, on the committed seeds and on
packages generated here from corpus schemas."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from idlgen import DecodeError
from idlgen.cli import main
from idlgen.backend import Names
from idlgen.backend.render import env
from idlgen.ir import fbs_descriptors as fd
from idlgen.frontend.fbs.loader import load
from idlgen.wire import flatbuffers as fb

from . import strategies
from .common import (
    REPO,
    TESTS,
    flatc_binary,
    flatc_json,
    include_dirs,
    need_flatc,
    need_shared,
)

FEATURES = Path(__file__).parent / "data" / "features.fbs"


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ModuleType]]:
    root = tmp_path_factory.mktemp("fbsgen")
    mods = {}
    assert main(["build", str(FEATURES), "--out", str(root / "fbsgen_features"), "-q"]) == 0
    sys.path.insert(0, str(root))
    try:
        mods["features"] = importlib.import_module("fbsgen_features.Ex")
        if TESTS.is_dir():
            ab = TESTS / "annotated_binary" / "annotated_binary.fbs"
            assert main(["build", str(ab), "--out", str(root / "fbsgen_ab"), "-q"]) == 0
            mods["annotated"] = importlib.import_module("fbsgen_ab.AnnotatedBinary")
        yield mods
    finally:
        sys.path.remove(str(root))


def test_descriptors_are_typed_views() -> None:
    res = load([FEATURES])
    (f,) = res.schema.files
    views = fd.descriptors(res.schema, f)
    kinds = {type(v).__name__ for v in views}
    assert kinds == {"EnumDesc", "StructDesc", "TableDesc", "UnionDesc"}
    root = next(v for v in views if v.qualname == "Ex.Root")
    assert isinstance(root, fd.TableDesc) and root.identifier == "EXMP"
    d = next(x for x in root.fields if x.name == "d")
    assert d.slot is not None and d.type == fd.ScalarType("d") and d.default == float("-inf")
    nested = next(x for x in root.fields if x.name == "nested")
    assert nested.flags == (("nested", "Ex.A"),)
    # without class names (validation) enums and unions are looked up by name
    e = next(x for x in root.fields if x.name == "e")
    assert e.type == fd.EnumRef("Ex.E")
    assert next(x for x in root.fields if x.name == "u").type == fd.UnionOf("Ex.U")


# The codec block: each call's positional arguments (the rest are keywords).
_POSITIONAL = {
    "Table": 2,
    "Struct": 2,
    "field": 1,
    "vector": 1,
    "array": 2,
    "table": 1,
    "struct": 1,
    "enum": 1,
    "union": 1,
    "member": 1,
    "registry": 1,
}


def _codec_calls(src: str) -> list[ast.Call]:
    """The ``_fb.*`` calls of a generated module."""
    return [
        n
        for n in ast.walk(ast.parse(src))
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "_fb"
    ]


def _check_keyword_form(src: str) -> int:
    calls = _codec_calls(src)
    for c in calls:
        assert isinstance(c.func, ast.Attribute)
        name = c.func.attr
        assert name in _POSITIONAL, ast.unparse(c)
        assert len(c.args) == _POSITIONAL[name], ast.unparse(c)
        kw = {k.arg for k in c.keywords}
        if name in ("Table", "Struct"):
            assert {"fields", "reg"} <= kw and isinstance(
                next(k.value for k in c.keywords if k.arg == "fields"), ast.List
            )
        # no literal tuples anywhere but an empty default (``default=()``)
        for sub in ast.walk(c):
            if isinstance(sub, ast.Tuple):
                assert not sub.elts, ast.unparse(c)
    return sum(1 for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr == "field")


def test_codec_block_uses_the_keyword_form(gen: dict[str, ModuleType]) -> None:
    """Descriptors are written with keywords and one ``_fb.field(...)`` per field, in the
    committed modules and in one generated here."""
    committed = [
        REPO / "generated" / "tflite" / "tflite.py",
        REPO / "generated" / "armnnSerializer" / "armnn_schema.py",
        REPO / "generated" / "mindspore" / "schema" / "v0" / "ops_v0.py",
        REPO / "generated" / "mindspore" / "schema" / "v0" / "mindspore_model_v0.py",
    ]
    for p in committed:
        assert _check_keyword_form(p.read_text(encoding="utf-8")) > 20, p
    mod = importlib.import_module(gen["features"].__name__ + ".features")
    src = Path(mod.__file__ or "").read_text(encoding="utf-8")
    assert _check_keyword_form(src) > 10
    # attr only where it differs, defaults and flags only when set, black's float spelling
    assert '_fb.field("d", slot=13, type="d", default=float("-inf"))' in src
    assert '_fb.field("name", slot=14, type="string", shared=True)' in src
    assert 'identifier="EXMP"' in src
    assert '_fb.registry(__name__.rsplit(".", 2)[0])' in src


def _state(d: Any) -> Any:
    """A descriptor's construction-time state (what the wire depends on)."""
    if isinstance(d, fb.Table):
        fields = [
            {s: getattr(f, s) for s in fb.Field.__slots__ if s != "nested_desc"} for f in d.fields
        ]
        return ("Table", d.qualname, d.identifier, repr(fields))
    assert isinstance(d, fb.Struct)
    return ("Struct", d.qualname, repr(d.fields), d.force_align, d.key)


@pytest.mark.parametrize("which", ["features", "monster", "arrays"])
def test_generated_descriptors_are_what_the_ir_says(which: str) -> None:
    """Every generated module's descriptors (the template's text, imported) hold exactly the
    state of those built from the IR's views (``fbs_descriptors.build``)."""
    from .._gen import generate_schema

    if which == "features":
        g = generate_schema(FEATURES)
    else:
        need_shared()
        schema = {
            "monster": TESTS / "monster_test.fbs",
            "arrays": TESTS / "ts" / "arrays_test_complex" / "arrays_test_complex.fbs",
        }[which]
        g = generate_schema(schema, include_dirs=include_dirs(schema))
    names = Names(g.schema)
    n = 0
    for f in g.schema.files:
        views = fd.descriptors(g.schema, f, lambda q, x: names.field_names(q)[x], names.class_name)
        for v in views:
            if not isinstance(v, (fd.TableDesc, fd.StructDesc)):
                continue
            cls = g[v.qualname]
            got = cls.__dict__["_FB_DESC"]
            assert got.cls is cls
            want = fd.build(v, type(v.cls, (), {}), {})  # a throwaway class: nothing rebinds
            assert _state(got) == _state(want), v.qualname
            n += 1
    assert n >= 5


def test_tables_take_fields_with_slots() -> None:
    class T:
        pass

    with pytest.raises(ValueError, match="slot"):
        fb.Table("x.T", T, fields=[fb.field("a", type="i")], reg={})
    t = fb.Table("x.T", T, fields=[fb.field("a", attr="a_", slot=0, type="i", default=3)], reg={})
    (f,) = t.fields
    assert (f.attr, f.name, f.slot, f.spec, f.default) == ("a_", "a", 0, "i", 3)


def test_generated_golden_bytes(gen: dict[str, ModuleType]) -> None:
    need_shared()
    A = gen["annotated"]
    data = (TESTS / "annotated_binary" / "annotated_binary.bin").read_bytes()
    foo = A.Foo.from_flatbuffer(data)
    assert foo.to_flatbuffer() == data
    text = (TESTS / "annotated_binary" / "annotated_binary.json").read_text()
    assert A.Foo.from_json(text).to_flatbuffer() == data
    assert A.Foo.from_json(text) == foo
    assert isinstance(foo.measurement, A.Tolerance)  # union value typed, discriminant hidden
    assert [type(x).__name__ for x in foo.foobars] == ["Bar", "Baz", "Bar"]
    assert foo.maybe_i32 is None and foo.default_i32 == 42
    with pytest.raises(DecodeError):
        A.Foo.from_flatbuffer(data[:40])


def test_generated_features(gen: dict[str, ModuleType]) -> None:
    E = gen["features"]
    r = E.Root(
        u=fb.UnionValue("A2", E.A(x=1)),
        us=["text", E.S(a=1, b=2.0), E.A(s="x")],
        ks=[E.K(k=2, v=1.0), E.K(k=1, v=2.0)],
        kts=[E.KT(name="b"), E.KT(name="a", n=3)],
        nested=E.A(x=5).to_flatbuffer(),
        name="n",
    )
    back = E.Root.from_flatbuffer(r.to_flatbuffer())
    assert back.u == fb.UnionValue("A2", E.A(x=1))
    assert back.us[0] == "text" and back.us[1] == E.S(a=1, b=2.0)
    assert [k.k for k in back.ks] == [1, 2]
    assert E.K.lookup_by_key(back.ks, 2) == E.K(k=2, v=1.0)
    assert E.KT.lookup_by_key(back.kts, "a").n == 3
    assert fb.decode_nested(back, "nested") == E.A(x=5)
    assert back.to_flatbuffer()[4:8] == b"EXMP"
    assert E.Root.from_json(back.to_json()) == back
    assert E.S.from_flatbuffer(E.S(a=3, b=1.5).to_flatbuffer()) == E.S(a=3, b=1.5)


def test_generated_vs_flatc(gen: dict[str, ModuleType]) -> None:
    need_flatc()
    E = gen["features"]
    desc = E.Root._FB_DESC

    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategies.table(desc))
    def run(v: Any) -> None:
        text = v.to_json()
        assert flatc_binary(FEATURES, {"x": text})["x"] == v.to_flatbuffer()
        assert flatc_json(FEATURES, {"x": v.to_flatbuffer()})["x"] == text

    run()


def test_committed_seed_packages() -> None:
    sys.path.insert(0, str(REPO))
    try:
        arm = importlib.import_module("generated.armnnSerializer")
        ms = importlib.import_module("generated.mindspore.schema.v0")
    finally:
        sys.path.remove(str(REPO))
    g = arm.SerializedGraph(
        layers=[arm.AnyLayer(layer=arm.InputLayer(base=arm.BindableLayerBase(layerBindingId=7)))],
        inputIds=[7],
    )
    data = g.to_flatbuffer()
    assert data[4:8] == b"ARMN"
    assert arm.SerializedGraph.from_flatbuffer(data) == g
    m = ms.MetaGraph(name="m", nodes=[ms.CNode(name="c", primitive=ms.Primitive(value=ms.Add()))])
    assert ms.MetaGraph.from_flatbuffer(m.to_flatbuffer()) == m
    assert ms.MetaGraph.from_json(m.to_json()) == m


def test_generated_code_passes_mypy_strict(tmp_path: Path) -> None:
    """Typed descriptors (``Table[Foo]``) make the thin methods check under --strict."""
    need_shared()
    for name, schema in [
        ("mypy_ab", TESTS / "annotated_binary" / "annotated_binary.fbs"),
        ("mypy_arrays", TESTS / "ts" / "arrays_test_complex" / "arrays_test_complex.fbs"),
    ]:
        assert main(["build", str(schema), "--out", str(tmp_path / name), "-q"]) == 0
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "mypy_ab",
            "mypy_arrays",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(REPO)},
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_descriptor_literals_are_spelled_as_black_spells_them() -> None:
    """A default of ``1e100`` is ``repr``'d ``1e+100``, which black rewrites: the template's
    ``py_literal`` filter prints black's spelling, so a line that fits is black-stable without
    going through black."""
    import black

    literal = env().filters["py_literal"]
    for value, text in (
        (1e100, "1e100"),
        (1.5e-07, "1.5e-07"),
        (-2.5, "-2.5"),
        (0.1, "0.1"),
        (float("-inf"), 'float("-inf")'),
        (float("nan"), 'float("nan")'),
        (True, "True"),
        (-3, "-3"),
        ("it's", '"it\'s"'),
        ((), "()"),
    ):
        assert str(literal(value)) == text
        assert black.format_str(f"x = {text}\n", mode=black.Mode()) == f"x = {text}\n"
