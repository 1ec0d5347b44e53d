"""Enum values are what a C++ compiler computes: differential test against g++."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from idlgen.frontend.hdi.loader import load

GXX = shutil.which("g++")

_literals = st.one_of(
    st.integers(0, 300).map(str),
    st.integers(0, 0xFFFF).map(hex),
    st.integers(0, 300).map(lambda v: f"{v}ULL"),
    st.integers(0, 300).map(lambda v: f"{v}L"),
    st.integers(0, 7).map(lambda v: f"0b{v:b}"),
    st.integers(1, 63).map(lambda v: f"0{v:o}"),
)


def _exprs(members: list[str]) -> st.SearchStrategy[str]:
    leaves = _literals if not members else st.one_of(_literals, st.sampled_from(members))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binop = st.tuples(inner, st.sampled_from(["|", "^", "&", "+", "-", "*"]), inner).map(
            lambda t: f"{t[0]} {t[1]} {t[2]}"
        )
        shift = st.tuples(inner, st.sampled_from(["<<", ">>"]), st.integers(0, 12)).map(
            lambda t: f"{t[0]} {t[1]} {t[2]}"
        )
        return st.one_of(
            binop,
            shift,
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"~{e}"),
            inner.map(lambda e: f"-{e}"),
        )

    return st.recursive(leaves, extend, max_leaves=6)


@st.composite
def _enum_bodies(draw: st.DrawFn) -> list[tuple[str, str | None]]:
    members: list[tuple[str, str | None]] = []
    for i in range(draw(st.integers(3, 12))):
        expr = draw(st.none() | _exprs([m for m, _ in members]))
        members.append((f"M{i}", expr))
    return members


def _cpp_values(tmp: Path, members: list[tuple[str, str | None]]) -> list[int] | None:
    body = ",\n".join(f"  {n}" + (f" = {e}" if e else "") for n, e in members)
    src = (
        "#include <cstdio>\n#include <cstdint>\n"
        f"enum E : int64_t {{\n{body}\n}};\n"
        "int main() {\n"
        + "".join(f'  std::printf("%lld\\n", (long long){n});\n' for n, _ in members)
        + "}\n"
    )
    (tmp / "e.cpp").write_text(src)
    r = subprocess.run(
        [GXX or "g++", "-std=c++20", "-w", "-o", str(tmp / "e"), str(tmp / "e.cpp")],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        return None  # e.g. a value the compiler rejects; idlgen must reject it too (checked)
    out = subprocess.run([str(tmp / "e")], capture_output=True, text=True, check=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.skipif(GXX is None, reason="g++ not installed")
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(members=_enum_bodies())
def test_enum_values_match_gxx(tmp_path: Path, members: list[tuple[str, str | None]]) -> None:
    d = tmp_path / "foo" / "v1_0"
    d.mkdir(parents=True, exist_ok=True)
    body = ",\n".join(f"    {n}" + (f" = {e}" if e else "") for n, e in members)
    (d / "Types.idl").write_text(f"package ohos.hdi.foo.v1_0;\nenum E : long {{\n{body}\n}};\n")
    r = load([d / "Types.idl"], roots={"ohos.hdi": tmp_path})
    expected = _cpp_values(tmp_path, members)
    if expected is None:
        assert r.diagnostics.has_errors
        return
    assert not r.diagnostics.has_errors, [d.message for d in r.diagnostics]
    [enum] = r.schema.files[0].decls
    assert [m.value for m in enum.members] == expected  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("1 | 2 ^ 3 & 4", 1 | 2 ^ 3 & 4),  # C: & binds tighter than ^, ^ tighter than |
        ("1 << 2 + 1", 1 << 3),  # + before <<
        ("~0", -1),
        ("0x10 | 0b11", 0x13),
        ("017", 15),
        ("1ULL << 40", 1 << 40),
        ("-7 / 2", -3),  # truncation toward zero
        ("-7 % 2", -1),
    ],
)
def test_c_semantics_examples(tmp_path: Path, expr: str, value: int) -> None:
    d = tmp_path / "foo" / "v1_0"
    d.mkdir(parents=True)
    (d / "T.idl").write_text(f"package ohos.hdi.foo.v1_0;\nenum E : long {{ A = {expr} }};\n")
    r = load([d / "T.idl"], roots={"ohos.hdi": tmp_path})
    assert not r.diagnostics.has_errors
    assert r.schema.files[0].decls[0].members[0].value == value  # type: ignore[union-attr]


def test_byte_enum_range_and_implicit_successor(tmp_path: Path) -> None:
    d = tmp_path / "foo" / "v1_0"
    d.mkdir(parents=True)
    (d / "T.idl").write_text(
        "package ohos.hdi.foo.v1_0;\n"
        "enum Ok : byte { NONE = -1, A, B = 126, C };\n"
        "enum Bad : byte { X = 127, Y };\n"
    )
    r = load([d / "T.idl"], roots={"ohos.hdi": tmp_path})
    [diag] = r.diagnostics
    assert diag.code == "HDI305" and "'Y'" in diag.message and diag.span.line == 3  # type: ignore[union-attr]
    ok = r.schema.files[0].decls[0]
    assert [m.value for m in ok.members] == [-1, 0, 126, 127]  # type: ignore[union-attr]
