"""Pinned messages for malformed inputs (tests/hdi/bad), and the CLI's rendering of them.

Regenerate the expected files after an intended wording change with
``IDLGEN_UPDATE_SNAPSHOTS=1 pytest tests/hdi/test_diagnostics.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from idlgen.diagnostics import render_all
from idlgen.frontend.hdi.loader import load
from tests.conftest import REPO

BAD = REPO / "tests" / "hdi" / "bad"
EXPECTED = BAD / "expected"
UPDATE = os.environ.get("IDLGEN_UPDATE_SNAPSHOTS") == "1"

SINGLE = sorted(p.name for p in BAD.glob("*.idl"))
MULTI = sorted(p.name for p in BAD.iterdir() if p.is_dir() and p.name != "expected")


def _render(files: list[Path], roots: dict[str, Path]) -> str:
    r = load(files, roots=roots)
    assert r.diagnostics.has_errors, "a bad input must produce at least one error"
    return render_all(r.diagnostics, r.sources) + "\n"


def _check(name: str, text: str) -> None:
    path = EXPECTED / f"{name}.txt"
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no snapshot for {name}; run with IDLGEN_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text()


@pytest.mark.parametrize("name", SINGLE)
def test_single_file_snapshot(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    _check(name, _render([Path("tests/hdi/bad") / name], {}))


@pytest.mark.parametrize("name", MULTI)
def test_multi_file_snapshot(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    case = Path("tests/hdi/bad") / name
    _check(name, _render(sorted(case.rglob("*.idl")), {"ohos.hdi": case}))


def test_every_snapshot_has_a_case() -> None:
    names = set(SINGLE) | set(MULTI)
    orphans = sorted(p.stem for p in EXPECTED.glob("*.txt") if p.stem not in names)
    assert orphans == []


def test_all_errors_of_a_run_are_shown(tmp_path: Path) -> None:
    d = tmp_path / "foo" / "v1_0"
    d.mkdir(parents=True)
    (d / "Types.idl").write_text(
        "package ohos.hdi.foo.v1_0;\n"
        "struct A { Strng a; Lst b; };\n"
        "enum E : float { X };\n"
        "union U { String s; };\n"
    )
    r = load([d / "Types.idl"], roots={"ohos.hdi": tmp_path})
    codes = sorted(x.code for x in r.diagnostics)
    assert codes == ["HDI202", "HDI202", "HDI302", "HDI313"]
    text = render_all(r.diagnostics, r.sources)
    assert "did you mean 'String'?" in text
    assert text.count("^") >= 4


def test_missing_semicolons_are_repaired_and_checking_goes_on(tmp_path: Path) -> None:
    d = tmp_path / "foo" / "v1_0"
    d.mkdir(parents=True)
    (d / "Types.idl").write_text(
        "package ohos.hdi.foo.v1_0;\n"
        "struct A { int x; }\n"  # missing ';' after '}'
        "struct B { Strng y; int z }\n"  # unknown type, missing ';' (allowed) and after '}'
        "enum E { P, Q }\n"  # missing ';'
        "interface IX { Ping([in] int a; }\n"  # missing ')': a syntax error that stops here
    )
    r = load([d / "Types.idl"], roots={"ohos.hdi": tmp_path})
    got = [(x.code, x.span.line if x.span else 0, x.message) for x in r.diagnostics]
    assert got[:3] == [
        ("HDI001", 2, "expected ';' before 'struct'"),
        ("HDI001", 3, "expected ';' before 'enum'"),
        ("HDI001", 4, "expected ';' before 'interface'"),
    ]
    # An error that cannot be repaired is reported after the repaired ones and ends the file.
    assert any(x.code == "HDI001" and x.span and x.span.line == 5 for x in r.diagnostics)
    assert r.diagnostics.has_errors
