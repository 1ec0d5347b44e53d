"""``idlgen diff`` end to end: exit codes, config, suppressions, baselines, --against, CI hooks."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from idlgen.config import load_config
from idlgen.diagnostics import Diagnostics
from idlgen.diff import cli
from idlgen.diff.committed import build_reports, render_committed_reports
from idlgen.frontend import LoadResult
from idlgen.ir import Schema

from .test_reports import NEW_FBS, OLD_FBS

REPO = Path(__file__).resolve().parents[2]


def run(
    argv: list[str], config: object = None, capsys: pytest.CaptureFixture[str] | None = None
) -> tuple[int, str]:
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    code = cli.run(p.parse_args(argv), config if config is not None else {})
    if capsys is None:
        return code, ""
    cap = capsys.readouterr()
    LAST_ERR[0] = cap.err
    return code, cap.out


LAST_ERR = [""]


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "old.fbs").write_text(OLD_FBS)
    (tmp_path / "new.fbs").write_text(NEW_FBS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_exit_codes_follow_fail_on(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["old.fbs", "new.fbs"], capsys=capsys)[0] == 1
    assert run(["old.fbs", "new.fbs", "--fail-on", "never"], capsys=capsys)[0] == 0
    assert run(["old.fbs", "old.fbs", "--fail-on", "info"], capsys=capsys)[0] == 0
    # Only a rename: a warning. Fails at warning/info, passes at breaking.
    (pair / "renamed.fbs").write_text(OLD_FBS.replace("  id:uint;", "  ident:uint;"))
    assert run(["old.fbs", "renamed.fbs"], capsys=capsys)[0] == 0
    assert run(["old.fbs", "renamed.fbs", "--fail-on", "warning"], capsys=capsys)[0] == 1
    # Only an addition: info.
    (pair / "added.fbs").write_text(
        OLD_FBS.replace("  tags:[string];", "  tags:[string];\n  more:int;")
    )
    assert run(["old.fbs", "added.fbs", "--fail-on", "warning"], capsys=capsys)[0] == 0
    assert run(["old.fbs", "added.fbs", "--fail-on", "info"], capsys=capsys)[0] == 1


def test_usage_errors_exit_2(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["old.fbs"], capsys=capsys)[0] == 2
    assert run(["old.fbs", "missing.fbs"], capsys=capsys)[0] == 2
    bad = {"diff": {"suppress": [{"rule": "FBS-T-05", "path": "Car.ident"}]}}
    assert run(["old.fbs", "new.fbs"], bad, capsys)[0] == 2
    assert "reason" in LAST_ERR[0]
    unknown = {"diff": {"suppress": [{"rule": "NOPE-1", "path": "x", "reason": "r"}]}}
    assert run(["old.fbs", "new.fbs"], unknown, capsys)[0] == 2
    assert run(["old.fbs", "new.fbs", "--baseline", "nope.json"], capsys=capsys)[0] == 2


def test_schema_errors_exit_1(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (pair / "broken.fbs").write_text("table T { a:nosuchtype; }\n")
    code, out = run(["old.fbs", "broken.fbs"], capsys=capsys)
    assert code == 1 and out == ""
    assert "broken.fbs" in LAST_ERR[0]


def test_suppression_by_rule_and_path(pair: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (pair / "renamed.fbs").write_text(OLD_FBS.replace("  id:uint;", "  ident:uint;"))
    cfg = {
        "diff": {
            "suppress": [{"rule": "FBS-T-05", "path": "Car.ident", "reason": "wire-compatible"}]
        }
    }
    code, out = run(
        ["old.fbs", "renamed.fbs", "--fail-on", "warning", "--format", "json"], cfg, capsys
    )
    data = json.loads(out)
    assert (
        code == 0
        and data["findings"] == []
        and data["suppressed"][0]["reason"] == "wire-compatible"
    )
    # Same rule at another path is not suppressed.
    cfg = {"diff": {"suppress": [{"rule": "FBS-T-05", "path": "Body.*", "reason": "r"}]}}
    assert run(["old.fbs", "renamed.fbs", "--fail-on", "warning"], cfg, capsys)[0] == 1


def test_baseline_accepts_todays_findings_only(
    pair: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run(["old.fbs", "new.fbs", "--baseline", "base.json", "--update-baseline"], capsys=capsys)[
            0
        ]
        == 0
    )
    rows = json.loads((pair / "base.json").read_text())["findings"]
    assert len(rows) >= 10 and all(len(r["fingerprint"]) == 16 for r in rows)
    assert (
        run(["old.fbs", "new.fbs", "--baseline", "base.json", "--fail-on", "info"], capsys=capsys)[
            0
        ]
        == 0
    )
    # Moving every line (a comment block at the top) keeps the fingerprints.
    (pair / "new.fbs").write_text("// moved\n// down\n\n" + NEW_FBS)
    assert (
        run(["old.fbs", "new.fbs", "--baseline", "base.json", "--fail-on", "info"], capsys=capsys)[
            0
        ]
        == 0
    )
    # A new break is reported, alone.
    (pair / "new.fbs").write_text(
        NEW_FBS.replace("table Wheel { radius:float; }", "table Wheel { radius:double; }")
    )
    code, out = run(
        ["old.fbs", "new.fbs", "--baseline", "base.json", "--format", "json"], capsys=capsys
    )
    data = json.loads(out)
    assert code == 1 and [(f["rule"], f["path"]) for f in data["findings"]] == [
        ("FBS-T-07", "Wheel.radius")
    ]


def test_baseline_from_config_is_relative_to_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    proj = tmp_path / "proj"
    (proj / "s").mkdir(parents=True)
    (proj / "s" / "old.fbs").write_text(OLD_FBS)
    (proj / "s" / "new.fbs").write_text(NEW_FBS)
    (proj / "pyproject.toml").write_text(
        '[tool.idlgen]\nout = "gen"\n[tool.idlgen.diff]\nbaseline = "diff-baseline.json"\n'
        'suppress = [{rule = "FBS-S-01", path = "Vec2.*", reason = "Vec2 is never persisted"}]\n'
    )
    monkeypatch.chdir(proj / "s")
    cfg = load_config(None)
    assert run(["old.fbs", "new.fbs", "--update-baseline"], cfg, capsys)[0] == 0
    assert (proj / "diff-baseline.json").exists()
    rows = json.loads((proj / "diff-baseline.json").read_text())["findings"]
    # Findings the config already suppresses (with a reason) are not copied into the baseline.
    assert rows and not any(r["path"] == "Vec2.z" for r in rows)
    assert run(["old.fbs", "new.fbs", "--fail-on", "info"], cfg, capsys)[0] == 0


def test_github_step_summary(
    pair: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = pair / "summary.md"
    summary.write_text("previous step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out = run(["old.fbs", "new.fbs", "--format", "github"], capsys=capsys)
    assert code == 1 and out.startswith("::error ")
    text = summary.read_text()
    assert text.startswith("previous step\n<!-- idlgen-diff -->\n## ❌ Schema diff")
    assert "| `FBS-S-01` |" in text


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_against_git_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "r"
    (repo / "schemas").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "schemas" / "car.fbs").write_text(OLD_FBS)
    _git(repo, "add", "schemas/car.fbs")
    _git(repo, "commit", "-qm", "v1")
    (repo / "schemas" / "car.fbs").write_text(NEW_FBS)
    (repo / "schemas" / "extra.fbs").write_text("namespace x;\ntable Extra { a:int; }\n")
    monkeypatch.chdir(repo)
    code, out = run(["schemas", "--against", "HEAD", "--format", "json"], capsys=capsys)
    data = json.loads(out)
    assert code == 1
    assert data["old"] == "HEAD:schemas" and data["new"] == "schemas"
    rules = {(f["rule"], f["path"]) for f in data["findings"]}
    assert ("FBS-S-01", "Vec2.z") in rules and ("FBS-Y-02", "Extra") in rules
    olds = {f["old"]["file"] for f in data["findings"] if f["old"]}
    assert olds == {"HEAD:schemas/car.fbs"}
    # Unchanged against the working tree's own commit after committing.
    _git(repo, "add", "schemas")
    _git(repo, "commit", "-qm", "v2")
    assert run(["schemas", "--against", "HEAD", "--fail-on", "info"], capsys=capsys)[0] == 0
    assert run(["schemas", "--against", "no-such-ref"], capsys=capsys)[0] == 2


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_against_hdi_with_inferred_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "r"
    pkg = repo / "hdi" / "foo" / "v1_0"
    pkg.mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    idl = "package ohos.hdi.foo.v1_0;\n\nstruct Info {\n    int a;\n    String name;\n};\n"
    (pkg / "Types.idl").write_text(idl)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "v1")
    (pkg / "Types.idl").write_text(
        idl.replace("    String name;\n", "    String name;\n    long extra;\n")
    )
    monkeypatch.chdir(repo)
    code, out = run(["hdi/foo/v1_0", "--against", "HEAD"], capsys=capsys)
    assert code == 1
    assert "hdi/foo/v1_0/Types.idl:6:" in out and "breaking[HDI-S-02]: Info.extra" in out
    # Same version with a breaking change: the policy flags it too.
    assert "breaking[HDI-PKG-01]: ohos.hdi.foo" in out


def test_committed_reports_are_deterministic_and_relative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    pairs = [
        {
            "name": "nnrt_v1_0_to_v2_1",
            "old": "schemas/hdi/nnrt/v1_0",
            "new": "schemas/hdi/nnrt/v2_1",
        }
    ]
    a = render_committed_reports(pairs, {"ohos.hdi": REPO / "schemas" / "hdi"})
    monkeypatch.chdir(REPO / "schemas")
    b = render_committed_reports(pairs, {"ohos.hdi": REPO / "schemas" / "hdi"}, base_dir=REPO)
    assert a == b and set(a) == {"nnrt_v1_0_to_v2_1.md", "nnrt_v1_0_to_v2_1.json"}
    data = json.loads(a["nnrt_v1_0_to_v2_1.json"])
    files = {f[side]["file"] for f in data["findings"] for side in ("old", "new") if f[side]}
    assert files and all(x.startswith("schemas/hdi/nnrt/") for x in files)
    assert str(REPO) not in a["nnrt_v1_0_to_v2_1.md"]


def test_build_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.fbs").write_text(OLD_FBS)
    (tmp_path / "b.fbs").write_text(NEW_FBS)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.idlgen]\nout = "gen"\n[tool.idlgen.diff]\n'
        'reports = [{name = "car", old = "a.fbs", new = "b.fbs"}]\n'
    )
    cfg = load_config(None)
    diags = Diagnostics()
    files = build_reports(cfg, LoadResult(Schema(())), diags)
    assert not diags and set(files) == {"reports/car.md", "reports/car.json"}
    assert json.loads(files["reports/car.json"])["old"] == "a.fbs"
    (tmp_path / "pyproject.toml").write_text(
        '[tool.idlgen]\nout = "gen"\n[tool.idlgen.diff]\nreports = [{name = "car", old = "a.fbs"}]\n'
    )
    diags = Diagnostics()
    assert (
        build_reports(load_config(None), LoadResult(Schema(())), diags) == {} and diags.has_errors
    )


def test_file_location_beats_configured_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The project maps ohos.hdi to its own schemas; diffing another checkout must still resolve
    # that checkout's imports next to its files, not in the project.
    for side, extra in (("old", ""), ("new", "    long extra;\n")):
        pkg = tmp_path / side / "foo" / "v1_0"
        pkg.mkdir(parents=True)
        (pkg / "Types.idl").write_text(
            "package ohos.hdi.foo.v1_0;\n\nstruct Info {\n    int a;\n" + extra + "};\n"
        )
        (pkg / "IFoo.idl").write_text(
            "package ohos.hdi.foo.v1_0;\n\nimport ohos.hdi.foo.v1_0.Types;\n\n"
            "interface IFoo {\n    Get([out] struct Info info);\n}\n"
        )
    decoy = tmp_path / "project" / "schemas" / "hdi"
    decoy.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    code, out = run(["old/foo/v1_0", "new/foo/v1_0"], {"roots": [f"ohos.hdi:{decoy}"]}, capsys)
    assert code == 1, LAST_ERR[0]
    assert "breaking[HDI-S-02]: Info.extra" in out
