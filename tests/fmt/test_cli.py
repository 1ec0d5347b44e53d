"""``idlgen fmt`` on the command line: in place, --check, --diff, stdin, the config's inputs,
files with syntax errors, and the pre-commit hook."""

from __future__ import annotations

import io
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from idlgen.cli.main import main
from tests.conftest import REPO

UGLY = "package ohos.hdi.demo.v1_0;\nstruct S{int a;String b;};\n"
PRETTY = "package ohos.hdi.demo.v1_0;\nstruct S {\n    int a;\n    String b;\n};\n"
UGLY_FBS = "table T{a:int=1;}\n"
PRETTY_FBS = "table T {\n  a:int = 1;\n}\n"
BROKEN = "package ohos.hdi.demo.v1_0;\nstruct S {\n    int a\n    int b;\n};\n"


@pytest.fixture()
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "proj"
    (d / "idl" / "demo" / "v1_0").mkdir(parents=True)
    (d / "idl" / "demo" / "v1_0" / "Types.idl").write_text(UGLY)
    (d / "fbs").mkdir()
    (d / "fbs" / "t.fbs").write_text(UGLY_FBS)
    (d / "pyproject.toml").write_text(
        '[tool.idlgen]\ninputs = ["idl", "fbs"]\nroots = ["ohos.hdi:idl"]\n'
    )
    monkeypatch.chdir(d)
    return d


def test_in_place_then_unchanged(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = proj / "idl/demo/v1_0/Types.idl"
    assert main(["fmt", str(f)]) == 0
    assert f.read_text() == PRETTY
    assert "reformatted" in capsys.readouterr().err
    assert main(["fmt", str(f)]) == 0
    assert "reformatted 0, unchanged 1" in capsys.readouterr().err


def test_check_lists_and_writes_nothing(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fmt", "--check", "idl", "fbs"]) == 1
    out = capsys.readouterr().out
    assert "would reformat idl/demo/v1_0/Types.idl" in out and "would reformat fbs/t.fbs" in out
    assert (proj / "fbs/t.fbs").read_text() == UGLY_FBS
    assert main(["fmt", "idl", "fbs", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["fmt", "--check", "idl", "fbs"]) == 0


def test_diff_prints_a_unified_diff(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fmt", "--diff", "fbs/t.fbs"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- fbs/t.fbs\n+++ fbs/t.fbs\n")
    assert "-table T{a:int=1;}\n" in out and "+  a:int = 1;\n" in out
    assert (proj / "fbs/t.fbs").read_text() == UGLY_FBS
    assert main(["fmt", "--diff", "--check", "fbs/t.fbs"]) == 1


def test_no_paths_formats_the_configured_inputs(proj: Path) -> None:
    assert main(["fmt"]) == 0
    assert (proj / "idl/demo/v1_0/Types.idl").read_text() == PRETTY
    assert (proj / "fbs/t.fbs").read_text() == PRETTY_FBS


def test_no_paths_and_no_config_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(tmp_path)
    assert main(["fmt"]) == 2
    assert "no [tool.idlgen] inputs" in capsys.readouterr().err


def test_syntax_error_leaves_the_file_untouched(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = proj / "idl/demo/v1_0/Bad.idl"
    bad.write_text(BROKEN)
    assert main(["fmt", "idl"]) == 1
    err = capsys.readouterr().err
    assert bad.read_text() == BROKEN
    assert "idl/demo/v1_0/Bad.idl:3:10: error[HDI001]: expected ';'" in err
    assert "^" in err  # the caret line
    # the other file of the run is still formatted
    assert (proj / "idl/demo/v1_0/Types.idl").read_text() == PRETTY
    assert "not formatted 1" in err


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


@pytest.mark.parametrize(
    "name, src, want",
    [("x/Types.idl", UGLY, PRETTY), ("t.fbs", UGLY_FBS, PRETTY_FBS), (None, UGLY, PRETTY)],
)
def test_stdin_to_stdout(
    name: str | None,
    src: str,
    want: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _stdin(monkeypatch, src)
    argv = ["fmt", "-"] + (["--stdin-filename", name] if name else [])
    assert main(argv) == 0
    assert capsys.readouterr().out == want


def test_stdin_check_and_syntax_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, UGLY)
    assert main(["fmt", "-", "--check", "--stdin-filename", "Types.idl"]) == 1
    cap = capsys.readouterr()
    assert cap.out == "" and "would reformat Types.idl" in cap.err
    _stdin(monkeypatch, BROKEN)
    assert main(["fmt", "-", "--stdin-filename", "Bad.idl"]) == 1
    cap = capsys.readouterr()
    assert cap.out == BROKEN  # echoed untouched, so an editor's buffer is never lost
    assert "Bad.idl:3:10: error[HDI001]" in cap.err
    _stdin(monkeypatch, UGLY)
    assert main(["fmt", "-", "--stdin-filename", "notes.txt"]) == 2


def test_usage_errors(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fmt", "-", "idl"]) == 2
    assert main(["fmt", "idl", "--stdin-filename", "x.idl"]) == 2
    assert main(["fmt", "missing.idl"]) == 2
    assert "input not found" in capsys.readouterr().err


def test_help_lists_fmt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "fmt" in capsys.readouterr().out
    assert main(["fmt", "--help"]) == 0
    assert "--stdin-filename" in capsys.readouterr().out


def test_pre_commit_hook_formats_the_files_it_is_given(proj: Path) -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    hook = hooks["idlgen-fmt"]
    assert hook.get("pass_filenames", True) is True
    import re

    pattern = re.compile(hook["files"])
    assert pattern.search("a/b.idl") and pattern.search("x.fbs") and not pattern.search("a.py")
    argv = shlex.split(hook["entry"])
    assert argv[:2] == ["idlgen", "fmt"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "idlgen", *argv[1:], "fbs/t.fbs"],
            cwd=proj,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        )

    r = run()
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr
    assert (proj / "fbs/t.fbs").read_text() == PRETTY_FBS  # pre-commit sees the change
    assert (proj / "idl/demo/v1_0/Types.idl").read_text() == UGLY  # only the files given
