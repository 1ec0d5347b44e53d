"""Generated FlatBuffers code: the thin methods over the runtime, on the committed seeds and on
packages generated here from corpus schemas."""

from __future__ import annotations

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
from idlgen.backend.blackstyle import text_of
from idlgen.backend.fbs_codec import descriptor_trees, registry_line
from idlgen.ir.fbs_descriptors import descriptor_calls
from idlgen.frontend.fbs.loader import load
from idlgen.wire import flatbuffers as fb

from . import strategies
from .common import REPO, TESTS, flatc_binary, flatc_json, need_flatc, need_shared

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


def test_descriptor_calls_are_literals() -> None:
    res = load([FEATURES])
    (f,) = res.schema.files
    calls = descriptor_calls(res.schema, f)
    kinds = sorted({c.kind for c in calls})
    assert kinds == ["Enum", "Struct", "Table", "Union"]
    lines = [t.flat for t in descriptor_trees(calls, lambda q: q.rsplit(".", 1)[-1])]
    assert registry_line("Ex") == '_FB_REG = _fb.registry(__name__.rsplit(".", 2)[0])'
    root = next(line for line in lines if line.startswith('_fb.Table("Ex.Root"'))
    assert 'identifier="EXMP"' in root and 'float("-inf")' in root


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


def test_descriptor_floats_are_spelled_as_black_spells_them() -> None:
    """A default of ``1e100`` is ``repr``'d ``1e+100``, which black rewrites: descriptor trees
    print black's spelling, so a line that fits is black-stable without going through black."""
    import black

    from idlgen.backend.fbs_codec import _node

    for value, text in ((1e100, "1e100"), (1.5e-07, "1.5e-07"), (-2.5, "-2.5"), (0.1, "0.1")):
        assert _node(value) == text
        assert black.format_str(f"x = {value!r}\n", mode=black.Mode()) == f"x = {text}\n"
    assert text_of(_node(float("-inf"))) == 'float("-inf")'
