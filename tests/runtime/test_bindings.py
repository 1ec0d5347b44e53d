"""The binding table against the real NNRt IDL (loaded with idlgen's own HDI front end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from idlgen import ir
from idlgen.frontend import load
from idlgen.runtime import bindings as B

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas" / "hdi"


def _schema(version: str, file: str) -> ir.SchemaFile:
    path = SCHEMAS / "nnrt" / version / file
    if not path.exists():
        pytest.skip(f"{path} missing")
    res = load([path], roots={"ohos.hdi": SCHEMAS})
    for f in res.schema.files:
        if f.path.endswith(file):
            return f
    raise AssertionError(f"{file} not loaded")


def struct_fields(version: str) -> dict[str, list[str]]:
    f = _schema(version, "NodeAttrTypes.idl")
    return {d.name: [fl.name for fl in d.fields] for d in f.decls if isinstance(d, ir.Struct)}


def node_types(version: str) -> list[str]:
    f = _schema(version, "NnrtTypes.idl")
    (nt,) = [d for d in f.decls if isinstance(d, ir.Enum) and d.name == "NodeType"]
    return [m.name for m in nt.members]


@pytest.mark.parametrize("version,count", [("v1_0", 48), ("v2_1", 96)])
def test_table_matches_schema(version: str, count: int) -> None:
    fields = struct_fields(version)
    assert len(fields) == count
    assert B.check_bindings(fields, f"ohos.hdi.nnrt.{version}") == []


@pytest.mark.parametrize("version", ["v1_0", "v2_1"])
def test_every_struct_has_a_node_type(version: str) -> None:
    fields = struct_fields(version)
    pairs, members, structs = B.match_node_types(node_types(version), list(fields))
    assert members == [] and structs == []
    assert len(pairs) == len(fields)
    assert (
        "NODE_TYPE_QUANT_DTYPE_CAST_V2",
        "QuantDTypeCastV2",
    ) in pairs or version == "v1_0"
    assert ("NODE_TYPE_AVGPOOL_FUSION", "AvgPoolFusion") in pairs


def test_versions_differ_exactly() -> None:
    v1 = struct_fields("v1_0")
    assert "roundMode" not in v1["MaxPoolFusion"]
    # The v1_0 exemption must not leak into v2_1, and v2_1's field must not pass in v1_0.
    v2 = struct_fields("v2_1")
    assert any(
        "roundMode" in e for e in B.check_bindings({"MaxPoolFusion": v1["MaxPoolFusion"]}, "v2_1")
    )
    assert any(
        "roundMode" in e for e in B.check_bindings({"MaxPoolFusion": v2["MaxPoolFusion"]}, "v1_0")
    )


def test_errors_are_reported() -> None:
    errs = B.check_bindings(
        {
            "NoSuchOp": ["x"],
            "Concat": ["axis", "newField"],
            "Flatten": [],
        },
        "v2_1",
    )
    text = "\n".join(errs)
    assert "NoSuchOp has no runtime binding" in text
    assert "Concat.newField is in the schema but has no binding" in text
    assert "Flatten.axis is bound but not in the schema" in text


def test_bad_parameter_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(B.BINDINGS, "Concat", B.Binding("shape:concat", {"axis": "axes"}))
    assert any("'axes'" in e for e in B.check_bindings({"Concat": ["axis"]}, "v2_1"))
    monkeypatch.setitem(B.BINDINGS, "Concat", B.Binding("shape:no_such_function", {"axis": "axis"}))
    assert any("does not exist" in e for e in B.check_bindings({"Concat": ["axis"]}, "v2_1"))


def test_stub_spec_follows_schema_order() -> None:
    fields = struct_fields("v2_1")["AvgPoolFusion"]
    spec = B.stub_spec("AvgPoolFusion", "v2_1", fields)
    assert spec.module == "idlgen.runtime.pool" and spec.function == "avg_pool"
    assert [f for f, _ in spec.params] == [f for f in fields if f != "format"]
    assert ("global", "global_pool") in spec.params
    assert [f for f, _ in spec.ignored] == ["format"]
    v1 = B.stub_spec("MaxPoolFusion", "v1_0", struct_fields("v1_0")["MaxPoolFusion"])
    assert "roundMode" not in dict(v1.params)


def test_attr_name_and_plain() -> None:
    import enum

    class E(enum.IntEnum):
        A = 3

    assert B.attr_name("global") == "global_" and B.attr_name("axis") == "axis"
    assert B.plain([E.A, (1, 2)]) == [3, [1, 2]] and B.plain(True) is True


def test_match_node_types_reports_leftovers() -> None:
    pairs, members, structs = B.match_node_types(
        ["NODE_TYPE_NONE", "NODE_TYPE_EXPFUSION", "NODE_TYPE_FOO"], ["ExpFusion", "Bar"]
    )
    assert pairs == [("NODE_TYPE_EXPFUSION", "ExpFusion")]
    assert members == ["NODE_TYPE_FOO"] and structs == ["Bar"]


def test_problems_name_their_struct_and_field() -> None:
    probs = B.binding_problems({"Concat": ["axis", "newField"], "Nope": []}, "v2_1")
    assert ("Concat", "newField") in [(p.struct, p.field) for p in probs]
    assert ("Nope", "") in [(p.struct, p.field) for p in probs]
    assert [p.message for p in probs] == B.check_bindings(
        {"Concat": ["axis", "newField"], "Nope": []}, "v2_1"
    )
