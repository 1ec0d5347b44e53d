"""The 611 real HDI files and hdi-gen's own unit cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from idlgen import ir
from idlgen.diagnostics import Severity
from idlgen.frontend.hdi.loader import load
from tests.conftest import HDI_CORPUS, HDIGEN_TESTS, need

# Enums with no base type whose values overflow int (audio, distributed_audio, drm): idlgen
# widens them like C++ does for enums without a fixed type and says so (HDI306).
KNOWN_WIDENED = 10


@pytest.fixture(scope="module")
def corpus() -> object:
    root = need(HDI_CORPUS)
    files = sorted(root.rglob("*.idl"))
    assert len(files) == 611
    return load(files, roots={"ohos.hdi": root})


def test_corpus_has_no_errors(corpus: object) -> None:
    errors = [d for d in corpus.diagnostics if d.severity is Severity.ERROR]  # type: ignore[attr-defined]
    assert errors == []
    assert len(corpus.schema.files) == 611  # type: ignore[attr-defined]


def test_corpus_warnings_are_only_widened_enums(corpus: object) -> None:
    warnings = corpus.diagnostics  # type: ignore[attr-defined]
    assert {d.code for d in warnings} == {"HDI306"}
    assert len(warnings) == KNOWN_WIDENED


def test_corpus_enum_facts(corpus: object) -> None:
    decls = corpus.schema.decls()  # type: ignore[attr-defined]
    dt = decls["ohos.hdi.nnrt.v2_1.DataType"]
    assert dt.base is ir.ScalarKind.I8
    assert {m.name: m.value for m in dt.members}["DATA_TYPE_FLOAT32"] == 43
    fmt = decls["ohos.hdi.nnrt.v2_1.Format"]
    assert {m.name: m.value for m in fmt.members}["FORMAT_NONE"] == -1
    nt = decls["ohos.hdi.nnrt.v2_1.NodeType"]
    assert len(nt.members) == 97 and nt.base is ir.ScalarKind.U32
    widened = decls["ohos.hdi.audio.v1_0.AudioSampleRatesMask"]
    assert widened.base is ir.ScalarKind.U32
    # An extended enum lists its parent's members first (sensor v2_1 extends v2_0).
    tag = decls["ohos.hdi.sensor.v2_1.HdfSensorTypeTag"]
    parent = decls["ohos.hdi.sensor.v2_0.HdfSensorTypeTag"]
    assert tag.parent == parent.qualname
    assert [m.name for m in tag.members[: len(parent.members)]] == [m.name for m in parent.members]


def test_corpus_doc_comments_attached(corpus: object) -> None:
    decls = corpus.schema.decls()  # type: ignore[attr-defined]
    sb = decls["ohos.hdi.nnrt.v2_1.SharedBuffer"]
    assert "shared memory" in sb.doc
    assert sb.fields[0].doc == "File descriptor of the shared memory."


def _case(name: str) -> object:
    case = need(HDIGEN_TESTS / "unittest" / name)
    return load(sorted(case.rglob("*.idl")), roots={"ohos.hdi": case})


def test_hdigen_01_empty_rejected_with_location() -> None:
    r = _case("01_empty_idl")
    [d] = r.diagnostics  # type: ignore[attr-defined]
    assert d.is_error and d.code == "HDI002"
    assert d.message == "expected 'package' before end of file"
    assert d.span is not None and d.span.file.endswith("IFoo.idl")


@pytest.mark.parametrize(
    "name",
    [
        "02_standard_interface_idl",
        "03_standard_callback_idl",
        "04_extended_interface_idl",
        "05_types_idl",
        "06_extended_enum_idl",
        "07_extended_struct_idl",
        "08_overload_method_idl",
        "09_enum_nesting_idl",
    ],
)
def test_hdigen_cases_accepted(name: str) -> None:
    r = _case(name)
    assert list(r.diagnostics) == []  # type: ignore[attr-defined]


def _methods(r: object, qual: str) -> dict[str, tuple[int, bool]]:
    iface = r.schema.decls()[qual]  # type: ignore[attr-defined]
    return {m.name: (m.cmd_id, m.overload) for m in iface.methods}


def test_hdigen_command_ids() -> None:
    m02 = _methods(_case("02_standard_interface_idl"), "ohos.hdi.foo.v1_0.IFoo")
    assert m02 == {
        "GetVersion": (0, False),
        "Ping": (1, False),
        "GetData": (2, False),
        "InfoTest": (3, False),
    }
    m04 = _methods(_case("04_extended_interface_idl"), "ohos.hdi.foo.v1_1.IFoo")
    assert [v[0] for v in m04.values()] == [4, 5]
    m08 = _methods(_case("08_overload_method_idl"), "ohos.hdi.foo.v1_1.IFoo")
    assert m08 == {"Ping": (4, True), "GetData": (5, True)}


def test_hdigen_enums_and_structs() -> None:
    d06 = _case("06_extended_enum_idl").schema.decls()  # type: ignore[attr-defined]
    assert [(m.name, m.value) for m in d06["ohos.hdi.foo.v1_0.FooType2"].members] == [
        ("FOO_TYPE_ONE", 1),
        ("FOO_TYPE_TWO", 2),
        ("FOO_TYPE_THREE", 3),
        ("FOO_TYPE_FOUR", 4),
    ]
    d07 = _case("07_extended_struct_idl").schema.decls()  # type: ignore[attr-defined]
    ext = d07["ohos.hdi.foo.v1_0.ExtendedFooInfo"]
    assert [f.name for f in ext.fields] == ["id", "name", "type", "extendedId", "extendedInfo"]
    assert ext.fields[0].inherited_from == "ohos.hdi.foo.v1_0.FooInfo"
    d09 = _case("09_enum_nesting_idl").schema.decls()  # type: ignore[attr-defined]
    nesting = {m.name: m for m in d09["ohos.hdi.foo.v1_0.FooType"].members}["FOO_TYPE_NESTING"]
    assert nesting.value == 1 << 2 and nesting.expr == "(FOO_TYPE_ONE << FOO_TYPE_TWO)"


def test_hash_test_bad_inputs_rejected() -> None:
    base = need(HDIGEN_TESTS / "hash_test")
    for case in ("bad_02", "bad_03", "bad_04"):
        files = sorted((base / case).rglob("*.idl"))
        r = load(files, roots={"ohos.hdi": base / case})
        assert r.diagnostics.has_errors, case


def test_path_package_mismatch_is_located(tmp_path: Path) -> None:
    d = tmp_path / "foo" / "v1_0"
    d.mkdir(parents=True)
    (d / "Types.idl").write_text("package ohos.hdi.bar.v1_0;\nenum E { A };\n")
    r = load([d / "Types.idl"], roots={"ohos.hdi": tmp_path})
    [diag] = r.diagnostics
    assert diag.code == "HDI102" and diag.span is not None and diag.span.line == 1
