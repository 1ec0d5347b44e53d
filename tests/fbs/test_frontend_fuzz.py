"""The front end never crashes: mangled schemas give diagnostics, not exceptions."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.frontend.fbs.loader import load_text

from .common import FLATC, TESTS, flatc

SEED = """namespace A.B;
attribute "x";
/// doc
enum E : ubyte (bit_flags) { P, Q = 3, }
union U { T, S, Str: string }
struct S { a:[int:3]; b:E; }
table T { s:S; u:U; v:[U]; e:E = "P Q"; f:float = -inf; g:string = "d" (key); h:[T]; }
rpc_service R { M(T):T (streaming: "none"); }
root_type T;
file_identifier "ABCD";
{ s: { a: [1, 2, 3], b: P }, u_type: T, u: { g: "x" }, g: "k" }
"""

TOKENS = [
    "table",
    "struct",
    "enum",
    "union",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ":",
    ";",
    ",",
    "=",
    "id",
    "key",
    "required",
    "deprecated",
    "0",
    "-1",
    "0x10",
    "1.5",
    "nan",
    "inf",
    '"s"',
    "'q'",
    "int",
    "ubyte",
    "string",
    "T",
    "S",
    "E",
    "U",
    "null",
    "///",
    "//",
    "/*",
    "*/",
    "\n",
    "namespace",
    "root_type",
    "include",
    "attribute",
    "bit_flags",
    "force_align: 3",
    "id: -1",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, len(SEED)), st.integers(0, 6), st.sampled_from(TOKENS)), max_size=5
    )
)
def test_mangled_schema_never_raises(edits: list[tuple[int, int, str]]) -> None:
    text = SEED
    for pos, cut, tok in edits:
        pos = min(pos, len(text))
        text = text[:pos] + " " + tok + " " + text[pos + cut :]
    res = load_text(text, "m.fbs")
    for d in res.diagnostics:
        assert d.code.startswith("FBS") and d.message


def test_seed_is_valid(tmp_path: Path) -> None:
    res = load_text(SEED, "seed.fbs")
    assert res.ok, res.diagnostics
    bad = load_text(SEED.replace(', g: "k" }', " }"), "bad.fbs")
    assert [d.code for d in bad.diagnostics] == ["FBS053"]
    if FLATC:
        (tmp_path / "seed.fbs").write_text(SEED)
        (tmp_path / "bad.fbs").write_text(SEED.replace(', g: "k" }', " }"))
        assert flatc("-b", "-o", tmp_path, tmp_path / "seed.fbs").returncode == 0
        assert flatc("-b", "-o", tmp_path, tmp_path / "bad.fbs").returncode != 0


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_random_text_never_raises(text: str) -> None:
    res = load_text(text, "r.fbs")
    assert all(d.code.startswith("FBS") for d in res.diagnostics)


def test_corpus_dir_constant() -> None:
    assert TESTS.name == "flatbuffers-tests"
