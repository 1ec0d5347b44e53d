"""Every golden vector (OpenHarmony's own C++ output) both ways."""

from __future__ import annotations

import json
from typing import Any

import pytest

from idlgen import ir
from idlgen.wire import parcel

from ._support import VECTORS, from_value, nnrt, padding_positions, same, to_value

if not VECTORS.is_dir():
    pytest.skip("../shared/vectors/parcel not available", allow_module_level=True)


def _lines() -> list[dict[str, Any]]:
    out = []
    for name in ("nnrt_v1_0.jsonl", "nnrt_v2_1.jsonl"):
        with open(VECTORS / name, encoding="utf-8") as fh:
            out += [json.loads(line) for line in fh if line.strip()]
    return out


LINES = _lines()


def test_vector_count() -> None:
    assert len(LINES) == 608


def _case(v: dict[str, Any]) -> tuple[ir.Struct, Any, dict[str, ir.Decl]]:
    schema, classes = nnrt(v["package"].rsplit(".", 1)[1])
    decls = schema.decls()
    q = f"{v['package']}.{v['struct']}"
    d = decls[q]
    assert isinstance(d, ir.Struct)
    return d, classes[q], decls


@pytest.mark.parametrize(
    "v", LINES, ids=[f"{v['package'][-4:]}-{v['struct']}-{v['index']}" for v in LINES]
)
def test_vector(v: dict[str, Any]) -> None:
    decl, cls, decls = _case(v)
    _, classes = nnrt(v["package"].rsplit(".", 1)[1])
    ref = ir.Ref(decl.qualname, ir.RefKind.STRUCT)
    data = bytes.fromhex(v["hex"])
    obj = from_value(ref, v["value"], decls, classes)
    encoded = obj.to_parcel()
    if encoded != data:
        # Only C++ padding may differ: some v1_0 vectors of empty structs carry uninitialised
        # stack bytes (``Xxx attr{}`` does not zero an empty struct's storage). We write zeros.
        codec = parcel.codec_of(cls)
        assert isinstance(codec, parcel.PodStruct)
        pad = padding_positions(codec.pod_fmt)
        assert len(encoded) == len(data)
        diff = {i for i in range(len(data)) if encoded[i] != data[i]}
        assert diff <= pad, sorted(diff - pad)
        assert all(encoded[i] == 0 for i in pad)
    back = cls.from_parcel(data)
    assert same(to_value(ref, back, decls), v["value"])
    assert back == obj
    assert back.to_parcel() == encoded


def test_exact_bytes_except_uninitialised_padding() -> None:
    """Every vector whose C++ memory image was fully initialised encodes byte for byte."""
    exact = 0
    for v in LINES:
        decl, cls, decls = _case(v)
        _, classes = nnrt(v["package"].rsplit(".", 1)[1])
        obj = from_value(ir.Ref(decl.qualname, ir.RefKind.STRUCT), v["value"], decls, classes)
        if obj.to_parcel() == bytes.fromhex(v["hex"]):
            exact += 1
        else:
            assert not decl.fields and v["package"].endswith("v1_0"), v
    assert exact >= 573
