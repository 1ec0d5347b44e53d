"""About 1 MB of hostile schema: loading and rendering every diagnostic stay linear in memory.

Each case is a shape that once cost (or could cost) superlinear work outside the parser: many
errors on one line (every diagnostic used to expand the whole line), many cycles sharing one
long path (every message used to spell the path out), a huge identifier or doc comment. The
bound is a multiple of the input size; what it guards against is quadratic growth, which
would exceed it by orders of magnitude at these sizes. No timing assertions.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from idlgen.diagnostics import render_all
from idlgen.frontend import load

MB = 1 << 20


def _one_line_errors(n: int) -> str:
    # one line, n unknown types, tabs between (the caret must still line up)
    return "package a.v1_0;\t" + "".join(f"struct S{i} {{\tUnk{i} a; }};\t" for i in range(n))


def _shared_back_edges(n: int) -> str:
    # S0 holds S1 holds … S{n}; every Si also holds S0: n cycles along one path
    body = "".join(f"struct S{i} {{ S{i + 1} a; S0 b; }};\n" for i in range(n))
    return f"package a.v1_0;\n{body}struct S{n} {{ int x; }};\n"


def _huge_identifier(n: int) -> str:
    name = "X" * n
    return f"package a.v1_0;\nstruct {name} {{ int a; }};\nstruct T {{ {name}Y a; {name} b; }};\n"


def _huge_doc(n: int) -> str:
    return "package a.v1_0;\n/** " + "doc\t" * (n // 4) + " */\nstruct S { int a; };\n"


def _fbs_one_line_errors(n: int) -> str:
    return "namespace a;\t" + "".join(f"table T{i} {{ a:Unk{i} (foo{i}); }}\t" for i in range(n))


def _fbs_shared_back_edges(n: int) -> str:
    body = "".join(f"struct S{i} {{ a:S{i + 1}; b:S0; }}\n" for i in range(n))
    return f"{body}struct S{n} {{ x:int; }}\n"


CASES: dict[str, tuple[str, Callable[[int], str], int]] = {
    # name: (suffix, generator, n) — n chosen for ~0.25-1 MB and a few seconds of parsing
    "one_line_errors": (".idl", _one_line_errors, 8_000),
    "shared_back_edges": (".idl", _shared_back_edges, 6_000),
    "huge_identifier": (".idl", _huge_identifier, 300_000),
    "huge_doc": (".idl", _huge_doc, MB),
    "fbs_one_line_errors": (".fbs", _fbs_one_line_errors, 6_000),
    "fbs_shared_back_edges": (".fbs", _fbs_shared_back_edges, 6_000),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_inputs_stay_linear_in_memory(tmp_path: Path, case: str) -> None:
    suffix, make, n = CASES[case]
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    p = d / f"Types{suffix}"
    text = make(n)
    p.write_text(text)
    tracemalloc.start()
    try:
        res = load([p])
        out = render_all(res.diagnostics, res.sources)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if case != "huge_doc":
        assert not res.ok
    # Output is at most a few lines per error, each line windowed to ~200 characters.
    assert len(out) <= 2 * len(text) + 600 * len(res.diagnostics)
    # No parse tree is kept (idlgen.frontend.lalr): 16-125 bytes of Python objects per input
    # byte, diagnostics included; Lark's tree alone was 150-300. Quadratic work at these
    # sizes would need gigabytes.
    assert peak < 200 * len(text) + 16 * MB, (case, len(text), peak)


def test_many_import_cycles_on_one_long_chain(tmp_path: Path) -> None:
    """F0 imports F1 imports … F{n-1}; every Fi also imports F0: n cycles along one path. Each
    message used to spell out its whole cycle (output quadratic in n)."""
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    n = 1500
    for i in range(n):
        imps = (f"import a.v1_0.F{i + 1};\n" if i < n - 1 else "") + (
            "import a.v1_0.F0;\n" if i else ""
        )
        (d / f"F{i}.idl").write_text(f"package a.v1_0;\n{imps}struct S{i} {{ int x; }};\n")
    res = load([d / "F0.idl"])
    codes = [x.code for x in res.diagnostics]
    assert codes == ["HDI106"] * (n - 1)
    out = render_all(res.diagnostics, res.sources)
    assert len(out) < 400 * n  # a few hundred bytes per cycle, not per cycle member
    assert "a.v1_0.F0 -> a.v1_0.F1 -> a.v1_0.F0" in out and "more) -> " in out
