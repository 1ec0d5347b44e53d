"""The per-file parse cache returns exactly what parsing returns, and never hides an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from idlgen.diagnostics import Diagnostics
from idlgen.frontend.hdi import parser as hdi_parser
from tests.conftest import REPO

SCHEMAS = sorted((REPO / "schemas" / "hdi").rglob("*.idl"))


def test_cache_hit_equals_a_fresh_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert SCHEMAS
    monkeypatch.setenv("IDLGEN_CACHE_DIR", "")
    fresh = {}
    for p in SCHEMAS:
        d = Diagnostics()
        fresh[p] = hdi_parser.parse(str(p), p.read_text(encoding="utf-8"), d)
        assert fresh[p] is not None and not d
    monkeypatch.setenv("IDLGEN_CACHE_DIR", str(tmp_path))
    for _ in range(2):  # the first round fills the cache, the second reads it
        for p in SCHEMAS:
            d = Diagnostics()
            assert hdi_parser.parse(str(p), p.read_text(encoding="utf-8"), d) == fresh[p]
            assert not d
    assert len(list((tmp_path / "hdi-parse").rglob("*"))) >= len(SCHEMAS)
    # Same text under another path is another entry: spans name the file.
    p = SCHEMAS[0]
    other = hdi_parser.parse("elsewhere.idl", p.read_text(encoding="utf-8"), Diagnostics())
    assert other is not None and other.path == "elsewhere.idl"


def test_errors_are_never_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDLGEN_CACHE_DIR", str(tmp_path))
    bad = "package ohos.hdi.x.v1_0;\nstruct S { int a; $ };\n"
    for _ in range(2):
        d = Diagnostics()
        hdi_parser.parse("bad.idl", bad, d)
        assert d.has_errors and d[0].span is not None and d[0].span.line == 2
    assert [e for e in tmp_path.rglob("*") if e.is_file()] == []


def test_a_corrupt_entry_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDLGEN_CACHE_DIR", str(tmp_path))
    p = SCHEMAS[0]
    text = p.read_text(encoding="utf-8")
    want = hdi_parser.parse(str(p), text, Diagnostics())
    [entry] = [e for e in (tmp_path / "hdi-parse").rglob("*") if e.is_file()]
    entry.write_bytes(b"\x80garbage")
    assert hdi_parser.parse(str(p), text, Diagnostics()) == want
