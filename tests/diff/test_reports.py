"""Snapshot tests of every report format, JSON Schema validity, determinism.

Snapshots live in ``tests/diff/snapshots/``; regenerate with ``IDLGEN_UPDATE_SNAPSHOTS=1``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from idlgen.diff import cli

from ._jsonschema import validate

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
SCHEMA = json.loads((REPO / "idlgen" / "diff" / "report.schema.json").read_text())
EXT = {
    "text": "txt",
    "markdown": "md",
    "json": "json",
    "github": "github.txt",
    "sarif": "sarif.json",
}

OLD_FBS = """\
// A small schema exercising most FlatBuffers rules.
namespace demo;
file_identifier "DEMO";
enum Color : byte { Red = 0, Green = 1, Blue = 2 }
struct Vec2 { x:float; y:float; }
table Body { mass:float = 1.0; name:string; }
table Wheel { radius:float; spokes:int; }
union Part { Body, Wheel }
table Car {
  id:uint;
  speed:int = 10;
  color:Color = Green;
  pos:Vec2;
  part:Part;
  legacy:short;
  tags:[string];
}
root_type Car;
"""

NEW_FBS = """\
// A small schema exercising most FlatBuffers rules.
namespace demo;
file_identifier "DEMO";
enum Color : byte { Red = 0, Green = 1, Teal = 2, Black = 3 }
struct Vec2 { x:float; y:float; z:float; }
/// The car body.
table Body { mass:float = 2.0; title:string; }
table Wheel { radius:float; }
union Part { Wheel, Body }
table Car {
  ident:uint;
  speed:int = 12;
  color:Color = Green;
  pos:Vec2;
  part:Part;
  legacy:short (deprecated);
  tags:[string] (required);
  extra:long;
}
root_type Car;
"""

CONFIG = {
    "diff": {
        "suppress": [
            {"rule": "FBS-T-04", "path": "Car.legacy", "reason": "legacy is unused since v3"}
        ]
    }
}


def run_cli(argv: list[str], config: object, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    code = cli.run(p.parse_args(argv), config)
    return code, capsys.readouterr().out


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("IDLGEN_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"missing snapshot {path}; run with IDLGEN_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its snapshot"


@pytest.fixture
def fbs_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "old.fbs").write_text(OLD_FBS)
    (tmp_path / "new.fbs").write_text(NEW_FBS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("fmt", list(EXT))
def test_fbs_snapshot(fbs_pair: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(["old.fbs", "new.fbs", "--format", fmt], CONFIG, capsys)
    assert code == 1
    check_snapshot(f"demo_fbs.{EXT[fmt]}", out)
    if fmt == "json":
        data = json.loads(out)
        assert validate(data, SCHEMA) == []
        assert [s["path"] for s in data["suppressed"]] == ["Car.legacy"]
    code2, again = run_cli(["old.fbs", "new.fbs", "--format", fmt], CONFIG, capsys)
    assert again == out  # deterministic


@pytest.mark.parametrize("fmt", list(EXT))
def test_nnrt_snapshot(
    fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    code, out = run_cli(
        ["schemas/hdi/nnrt/v1_0", "schemas/hdi/nnrt/v2_1", "--format", fmt, "--fail-on", "never"],
        {},
        capsys,
    )
    assert code == 0
    check_snapshot(f"nnrt_v1_0_to_v2_1.{EXT[fmt]}", out)
    if fmt == "json":
        data = json.loads(out)
        assert validate(data, SCHEMA) == []
        assert data["summary"]["breaking"] == 9
        assert data["policy"]["ok"] is True


def test_validator_rejects_contract_violations(
    fbs_pair: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = run_cli(["old.fbs", "new.fbs", "--format", "json"], {}, capsys)
    good = json.loads(out)
    assert validate(good, SCHEMA) == []
    bad = json.loads(out)
    bad["findings"][0]["severity"] = "fatal"
    del bad["findings"][1]["old"]
    bad["findings"][2]["new"] = {"file": "x", "line": 0, "col": 1}
    bad["extra"] = 1
    errors = validate(bad, SCHEMA)
    assert len(errors) == 4, errors


def test_markdown_structure(fbs_pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, md = run_cli(["old.fbs", "new.fbs", "--format", "markdown"], CONFIG, capsys)
    lines = md.splitlines()
    assert lines[0] == "<!-- idlgen-diff -->"  # the sticky-comment marker
    assert lines[1].startswith("## ❌ Schema diff: breaking changes")
    assert "breaking**" in lines[3]
    # Breaking table with old → new locations and both declarations, before any <details>.
    first_details = md.index("<details>")
    table = md.index(
        "| Rule | Breaks | Entity | Change | Old → new location | Old declaration | New declaration |"
    )
    assert table < first_details
    assert "old.fbs:" in md[table:first_details] and "new.fbs:" in md[table:first_details]
    assert (
        "<summary>Warnings (" in md and "<summary>Info (" in md and "<summary>Suppressed (1)" in md
    )


def test_github_annotations_point_at_new_lines(
    fbs_pair: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, gh = run_cli(["old.fbs", "new.fbs", "--format", "github"], {}, capsys)
    new_lines = NEW_FBS.splitlines()
    for line in gh.splitlines()[:-1]:
        assert line.startswith(("::error ", "::warning ", "::notice "))
        props = dict(kv.split("=", 1) for kv in line.split(" ", 1)[1].split("::")[0].split(","))
        assert props["file"] == "new.fbs"
        assert 1 <= int(props["line"]) <= len(new_lines)
    # A removal is annotated on the nearest surviving declaration of the new file (Wheel).
    removal = next(x for x in gh.splitlines() if "title=FBS-T-03 Wheel.spokes" in x)
    assert "file=new.fbs,line=8," in removal and "(removed; was at old.fbs:7:29)" in removal


def test_markdown_cuts_long_tables_but_keeps_counts() -> None:
    from idlgen.diff import Finding, Severity
    from idlgen.diff.report import MAX_BREAKING_ROWS, MAX_COLLAPSED_ROWS, Report, render_markdown

    fs = [
        Finding("HDI-M-02", Severity.BREAKING, f"I.M{k:04d}", "moved")
        for k in range(MAX_BREAKING_ROWS + 7)
    ]
    fs += [
        Finding("HDI-Y-01", Severity.INFO, f"T{k:04d}", "added")
        for k in range(MAX_COLLAPSED_ROWS + 3)
    ]
    r = Report("a", "b", fs)
    short, full = render_markdown(r), render_markdown(r, full=True)
    assert f"**{MAX_BREAKING_ROWS + 7} breaking**" in short
    assert "… and 7 more breaking changes" in short and "… and 3 more" in short
    assert short.count("| `HDI-M-02` |") == MAX_BREAKING_ROWS
    assert full.count("| `HDI-M-02` |") == MAX_BREAKING_ROWS + 7 and "more" not in full
