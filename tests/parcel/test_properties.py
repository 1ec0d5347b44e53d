"""Round-trip properties: every NNRt struct, and every struct/union of the 611-file corpus."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen import ir
from idlgen.backend import hdi_codec as codegen
from idlgen.wire import parcel

from .._gen import attr_of, generate_schema
from ._strategies import has_out_of_band, roundtrip, values
from ._support import CORPUS, nnrt

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _records(schema: ir.Schema) -> list[str]:
    return [q for q, d in schema.decls().items() if isinstance(d, (ir.Struct, ir.Union))]


NNRT = [(v, q) for v in ("v1_0", "v2_1") for q in _records(nnrt(v)[0])]


@pytest.mark.parametrize(
    "version,qualname", NNRT, ids=[f"{v}-{q.rsplit('.', 1)[1]}" for v, q in NNRT]
)
def test_nnrt_roundtrip(version: str, qualname: str) -> None:
    schema, classes = nnrt(version)
    decls = schema.decls()
    kind = ir.RefKind.UNION if isinstance(decls[qualname], ir.Union) else ir.RefKind.STRUCT
    cls = classes[qualname]

    @SETTINGS
    @given(values(ir.Ref(qualname, kind), decls, classes))
    def check(v: Any) -> None:
        roundtrip(cls, v)

    check()


@functools.cache
def _corpus() -> tuple[ir.Schema, dict[str, Any]]:
    root = CORPUS / "drivers_interface"
    g = generate_schema(root, roots={"ohos.hdi": root})
    return g.schema, g.classes


def _corpus_packages() -> list[str]:
    if not (CORPUS / "drivers_interface").is_dir():
        return []
    schema, _ = _corpus()
    return sorted(
        {
            f.namespace
            for f in schema.files
            if any(isinstance(d, (ir.Struct, ir.Union)) for d in f.decls)
        }
    )


PACKAGES = _corpus_packages()


@pytest.mark.skipif(not PACKAGES, reason="../shared corpus not available")
def test_corpus_has_records() -> None:
    schema, classes = _corpus()
    records = _records(schema)
    assert len(records) > 1000
    assert all(hasattr(classes[q], "_parcel_codec_") for q in records)


@pytest.mark.parametrize("package", PACKAGES)
def test_corpus_roundtrip(package: str) -> None:
    """Every struct/union of the package; byte-only ones and ones with out-of-band objects."""
    schema, classes = _corpus()
    decls = schema.decls()
    records = [q for q in _records(schema) if decls[q].namespace == package]
    strategies = []
    for q in records:
        kind = ir.RefKind.UNION if isinstance(decls[q], ir.Union) else ir.RefKind.STRUCT
        strategies.append(values(ir.Ref(q, kind), decls, classes))

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.tuples(*strategies))
    def check(vs: tuple[Any, ...]) -> None:
        for q, v in zip(records, vs):
            roundtrip(classes[q], v)
            if not has_out_of_band(ir.Ref(q, ir.RefKind.STRUCT), decls):
                assert classes[q].from_parcel(v.to_parcel()) == v

    check()


def _write(codec: parcel.Struct, v: Any, generic: bool) -> Any:
    w = parcel.Writer([])
    try:
        (codec.write_generic if generic else codec.write)(w, v)
    except parcel.EncodeError as e:
        return ("error", e.reason, e.path)
    return (bytes(w.buf), w.objects)


_NON_POD = [(v, q) for v, q in NNRT if isinstance(parcel.codec_of(nnrt(v)[1][q]), parcel.Struct)]


@pytest.mark.parametrize(
    "version,qualname",
    _NON_POD,
    ids=[f"{v}-{q.rsplit('.', 1)[1]}" for v, q in _NON_POD],
)
def test_fast_writer_matches_generic(version: str, qualname: str) -> None:
    schema, classes = nnrt(version)
    decls = schema.decls()
    codec = parcel.codec_of(classes[qualname])
    assert isinstance(codec, parcel.Struct)
    d = decls[qualname]
    assert isinstance(d, ir.Struct)
    junk = st.one_of(
        st.none(),
        st.text(max_size=2),
        st.integers(),
        st.floats(),
        st.binary(max_size=3),
    )

    @settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
    @given(values(ir.Ref(qualname, ir.RefKind.STRUCT), decls, classes), st.data())
    def check(v: Any, data: st.DataObject) -> None:
        assert _write(codec, v, False) == _write(codec, v, True)
        if d.fields:  # a wrong value in one member: the same error from both paths
            f = data.draw(st.sampled_from(d.fields))
            setattr(v, attr_of(type(v), f.name), data.draw(junk))
            assert _write(codec, v, False) == _write(codec, v, True)

    check()
