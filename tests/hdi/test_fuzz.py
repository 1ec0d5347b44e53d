"""Mutated corpus files produce diagnostics, never an exception or a hang."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from idlgen.frontend.hdi.loader import load
from tests.conftest import HDI_CORPUS, REPO

_TOKEN = re.compile(rb"\s+|[A-Za-z_][A-Za-z0-9_.]*|0[xX][0-9a-fA-F]+|[0-9]\w*|<<|>>|.", re.S)


def _seed_files() -> list[Path]:
    own = sorted((REPO / "schemas" / "hdi").rglob("*.idl"))
    corpus = sorted(HDI_CORPUS.rglob("*.idl"))[::25] if HDI_CORPUS.exists() else []
    return own + corpus


SEEDS = _seed_files()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = draw(st.sampled_from(SEEDS)).read_bytes()
    toks = _TOKEN.findall(data)
    for _ in range(draw(st.integers(1, 4))):
        if not toks:
            break
        i = draw(st.integers(0, len(toks) - 1))
        op = draw(st.sampled_from(["drop", "dup", "swap", "truncate", "stray", "utf8"]))
        if op == "drop":
            del toks[i]
        elif op == "dup":
            toks.insert(i, toks[i])
        elif op == "swap" and i + 2 < len(toks):
            toks[i], toks[i + 2] = toks[i + 2], toks[i]
        elif op == "truncate":
            toks = toks[:i]
        elif op == "stray":
            toks.insert(i, draw(st.sampled_from([b"@", b"#", b"$", b"\x00", b"`", b"/*", b"'"])))
        else:
            toks.insert(i, draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])))
    return b"".join(toks)


@pytest.mark.skipif(not SEEDS, reason="no seed schemas")
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=mutated())
def test_mutations_give_diagnostics_only(tmp_path: Path, data: bytes) -> None:
    d = tmp_path / "x" / "v1_0"
    d.mkdir(parents=True, exist_ok=True)
    f = d / "Fuzz.idl"
    f.write_bytes(data)
    t0 = time.perf_counter()
    r = load([f], roots={})  # must not raise
    assert time.perf_counter() - t0 < 10, "parsing a small file must not hang"
    for diag in r.diagnostics:
        assert diag.code.startswith("HDI") and diag.message
