"""The committed FlatBuffers schemas: seeds verbatim, the MindSpore ops companion equal (as IR)
to the upstream file it was written from, and all of them accepted by flatc."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import pytest

from idlgen.frontend.fbs.loader import load
from idlgen import ir

from .common import REAL, REPO, SHARED, flatc, need_flatc, need_shared

SCHEMAS = REPO / "schemas" / "fbs"


def _strip(x: Any) -> Any:
    """An IR node with every ``doc`` emptied (the companion carries no prose)."""
    if isinstance(x, tuple):
        return tuple(_strip(v) for v in x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        changes = {f.name: _strip(getattr(x, f.name)) for f in dataclasses.fields(x)}
        if "doc" in changes:
            changes["doc"] = ""
        return dataclasses.replace(x, **changes)
    return x


def test_seeds_verbatim() -> None:
    need_shared()
    for name in ("armnn_schema.fbs", "mindspore_model_v0.fbs"):
        assert (SCHEMAS / name).read_bytes() == (SHARED / "seeds" / name).read_bytes()


def test_ops_companion_equals_upstream_ir() -> None:
    need_shared()
    ours = load([SCHEMAS / "ops_v0.fbs"])
    theirs = load([REAL / "mindspore-lite" / "v0" / "ops_v0.fbs"])
    assert ours.ok and theirs.ok
    (fo,) = ours.schema.files
    (ft,) = theirs.schema.files
    assert fo.namespace == ft.namespace == "mindspore.schema.v0"
    assert [d.name for d in fo.decls] == [d.name for d in ft.decls]
    for a, b in zip(fo.decls, ft.decls):
        assert _strip(a) == _strip(b), a.name
    assert len([d for d in fo.decls if isinstance(d, ir.Struct)]) == 206


def test_companion_has_no_prose() -> None:
    text = (SCHEMAS / "ops_v0.fbs").read_text()
    comments = [line for line in text.splitlines() if "//" in line or "/*" in line]
    assert len(comments) == 1 and comments[0].startswith("// Facts")


def test_seed_schemas_load() -> None:
    res = load([SCHEMAS / "armnn_schema.fbs", SCHEMAS / "mindspore_model_v0.fbs"])
    assert res.ok, res.diagnostics
    files = {Path(f.path).name: f for f in res.schema.files}
    assert set(files) == {"armnn_schema.fbs", "mindspore_model_v0.fbs", "ops_v0.fbs"}
    assert files["armnn_schema.fbs"].namespace == "armnnSerializer"
    assert files["mindspore_model_v0.fbs"].root_type == "mindspore.schema.v0.MetaGraph"


@pytest.mark.parametrize("name", ["armnn_schema.fbs", "mindspore_model_v0.fbs", "ops_v0.fbs"])
def test_flatc_accepts(name: str) -> None:
    need_flatc()
    with tempfile.TemporaryDirectory() as d:
        r = flatc("-b", "-o", d, SCHEMAS / name)
    assert r.returncode == 0, r.stderr
