"""The command line as a user drives it: exit codes, atomic builds, stale files, check."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from idlgen.cli import main
from tests.conftest import REPO

TYPES = """package ohos.hdi.demo.v1_0;
/** A point. */
struct Point { int x; int y; };
enum Mode { OFF, ON };
"""
EXTRA = """package ohos.hdi.demo.v1_0;
struct Extra { String note; };
"""


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "proj"
    (d / "idl" / "demo" / "v1_0").mkdir(parents=True)
    (d / "idl" / "demo" / "v1_0" / "Types.idl").write_text(TYPES)
    (d / "idl" / "demo" / "v1_0" / "Extra.idl").write_text(EXTRA)
    (d / "pyproject.toml").write_text(
        '[tool.idlgen]\ninputs = ["idl"]\nout = "gen"\nroots = ["ohos.hdi:idl"]\n'
    )
    monkeypatch.chdir(d)
    return d


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".idlgen-cache.json"
    }


def test_build_check_and_summary(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build"]) == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "unchanged 0" in out
    assert (project / "gen/ohos/hdi/demo/v1_0/types.py").exists()
    assert main(["check"]) == 0
    assert main(["build"]) == 0
    assert "wrote 0" in capsys.readouterr().out


def test_check_reports_stale_and_diff(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "-q"]) == 0
    target = project / "gen/ohos/hdi/demo/v1_0/types.py"
    target.write_text(target.read_text() + "# edited\n")
    assert main(["check", "--diff"]) == 1
    out = capsys.readouterr().out
    assert "stale:" in out and "types.py" in out and "-# edited" in out
    assert main(["build", "-q"]) == 0
    assert main(["check"]) == 0


def test_failed_build_leaves_output_untouched(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "-q"]) == 0
    before = _snapshot(project / "gen")
    (project / "idl/demo/v1_0/Types.idl").write_text(TYPES.replace("int y;", "Strng y;"))
    assert main(["build"]) == 1
    err = capsys.readouterr().err
    assert "error[HDI202]: unknown type 'Strng'" in err and "^^^^^" in err
    assert "Traceback" not in err
    assert _snapshot(project / "gen") == before


def test_stale_generated_files_removed_and_nothing_else(project: Path) -> None:
    assert main(["build", "-q"]) == 0
    mine = project / "gen" / "ohos" / "hdi" / "notes.txt"
    mine.write_text("hand-written, not idlgen's")
    (project / "idl/demo/v1_0/Extra.idl").unlink()
    assert main(["build", "-q"]) == 0
    assert not (project / "gen/ohos/hdi/demo/v1_0/extra.py").exists()
    assert mine.read_text() == "hand-written, not idlgen's"
    manifest = json.loads((project / "gen/.idlgen-manifest.json").read_text())
    assert "ohos/hdi/demo/v1_0/extra.py" not in manifest["files"]


def test_flags_override_config(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "pkg"
    assert main(["build", "idl/demo/v1_0/Types.idl", "--out", str(other), "-q"]) == 0
    assert (other / "__init__.py").exists()
    assert (other / "ohos/hdi/demo/v1_0/types.py").exists()
    assert not (other / "ohos/hdi/demo/v1_0/extra.py").exists()
    assert not (project / "gen").exists()


def test_parse_json_and_exit_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "idl/demo/v1_0/Types.idl", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [f] = data["files"]
    assert f["namespace"] == "ohos.hdi.demo.v1_0"
    assert [d["name"] for d in f["decls"]] == ["Point", "Mode"]
    assert main(["parse", "nope.idl"]) == 2  # a missing input is a usage error
    assert main(["build", "--root", "bad-root"]) == 2
    assert main(["build", "--no-such-flag"]) == 2


def test_github_format(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "idl/demo/v1_0/Types.idl").write_text(TYPES.replace("int y;", "Strng y;"))
    assert main(["parse", "idl/demo/v1_0/Types.idl", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("::error file=idl/demo/v1_0/Types.idl,line=3,col=")
    assert "title=HDI202::unknown type 'Strng'" in out


def test_python_dash_m_and_version() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "idlgen", "--version"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout.startswith("idlgen ")


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_wheel_installs_and_builds_outside_repo(tmp_path: Path) -> None:
    """A real wheel (not editable) ships grammars and templates and works from anywhere."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        check=True,
        cwd=tmp_path,
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    [whl] = wheels.glob("*.whl")
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(whl)],
        check=True,
    )
    work = tmp_path / "work"
    shutil.copytree(REPO / "schemas" / "hdi", work / "hdi")
    shutil.copytree(REPO / "schemas" / "fbs", work / "fbs")
    idlgen = venv / "bin" / "idlgen"
    r = subprocess.run(
        [str(idlgen), "build", "hdi", "fbs", "--root", "ohos.hdi:hdi", "--out", "out/gen"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    probe = (
        "import idlgen, sys; from gen.ohos.hdi.nnrt.v2_1 import AvgPoolFusion; "
        "from gen.armnnSerializer import SerializedGraph; SerializedGraph().to_flatbuffer(); "
        "assert 'site-packages' in idlgen.__file__, idlgen.__file__; print(AvgPoolFusion().global_)"
    )
    r = subprocess.run([str(py), "-c", probe], cwd=work / "out", capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
