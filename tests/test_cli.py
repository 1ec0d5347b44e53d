"""The command line as a user drives it: exit codes, atomic builds, stale files, check."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from idlgen.cli import main

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


# --- a CLI people expect: usage errors, suggestions, help, completion, progress, SARIF ---


def test_usage_errors_suggest_and_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["biuld"]) == 2
    assert "did you mean 'build'?" in capsys.readouterr().err
    assert main(["build", "--ouut", "x"]) == 2
    err = capsys.readouterr().err
    assert "--ouut; did you mean '--out'?" in err and "usage: idlgen build" in err
    assert main(["parse", "idl", "--format", "sarf"]) == 2
    assert "did you mean 'sarif'?" in capsys.readouterr().err
    (project / "notes.txt").write_text("not a schema")
    assert main(["build", "notes.txt"]) == 2
    assert "not a schema file" in capsys.readouterr().err
    assert main(["build", "missing.idl"]) == 2
    assert "input not found" in capsys.readouterr().err
    assert main([]) == 2
    assert not (project / "gen").exists()


@pytest.mark.parametrize(
    "command", ["build", "check", "parse", "diff", "convert", "annotate", "completion", "version"]
)
def test_help_has_examples_and_exit_codes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: idlgen {command}" in out
    assert "examples:\n  " in out and "idlgen " + command in out.split("examples:")[1]
    assert "123  internal error" in out


def _bash_complete(script: str, line: str) -> list[str]:
    words = line.split(" ")
    prog = (
        script
        + "\nCOMP_WORDS=("
        + " ".join(f"'{w}'" for w in words)
        + f")\nCOMP_CWORD={len(words) - 1}\n_idlgen\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
    )
    r = subprocess.run(["bash", "--norc", "-c", prog], capture_output=True, text=True, check=True)
    return r.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash missing")
def test_bash_completion_completes_commands_options_and_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert _bash_complete(script, "idlgen bu") == ["build"]
    assert set(_bash_complete(script, "idlgen c")) == {"check", "completion", "convert"}
    assert _bash_complete(script, "idlgen build --ou") == ["--out"]
    assert _bash_complete(script, "idlgen parse --format s") == ["sarif"]
    assert "--fail-on" in _bash_complete(script, "idlgen diff --")
    assert sorted(_bash_complete(script, "idlgen completion ")) == ["bash", "fish", "zsh"]


def test_zsh_and_fish_completion_cover_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "zsh"]) == 0
    zsh = capsys.readouterr().out
    assert zsh.startswith("#compdef idlgen") and "bashcompinit" in zsh and "_idlgen()" in zsh
    assert main(["completion", "fish"]) == 0
    fish = capsys.readouterr().out
    for cmd in ("build", "check", "parse", "diff", "run", "completion", "version"):
        assert f"-a {cmd} " in fish
    assert "__fish_seen_subcommand_from build' -l out" in fish
    if shutil.which("fish"):
        subprocess.run(["fish", "--no-execute", "-c", fish], check=True)


def test_sarif_diagnostics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "idl/demo/v1_0/Types.idl").write_text(TYPES.replace("int y;", "Strng y;"))
    for command in (["parse", "idl"], ["build"], ["check"]):
        assert main([*command, "--format", "sarif"]) == 1
        captured = capsys.readouterr()
        log = json.loads(captured.out)  # stdout holds the SARIF document and nothing else
        assert log["version"] == "2.1.0" and len(log["runs"]) == 1
        run = log["runs"][0]
        assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["HDI202"]
        [res] = run["results"]
        assert res["ruleId"] == "HDI202" and res["ruleIndex"] == 0 and res["level"] == "error"
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {
            "uri": "idl/demo/v1_0/Types.idl",
            "uriBaseId": "%SRCROOT%",
        }
        assert loc["region"]["startLine"] == 3
        assert loc["region"]["endColumn"] - loc["region"]["startColumn"] == len("Strng")
        assert str(project) not in captured.out  # no absolute paths: the same log on every machine


def test_sarif_outside_cwd_is_an_absolute_uri(tmp_path: Path) -> None:
    from idlgen.sarif import artifact_location

    assert artifact_location("a b/c.idl", tmp_path) == {
        "uri": "a%20b/c.idl",
        "uriBaseId": "%SRCROOT%",
    }
    far = tmp_path.parent / "elsewhere.idl"
    assert artifact_location(str(far), tmp_path) == {"uri": far.as_uri()}


WIDE = """package ohos.hdi.demo.v1_0;
enum Wide { SMALL = 1, HUGE = 0x80000000 };
"""


def test_cached_build_prints_the_same_warnings(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "idl/demo/v1_0/Wide.idl").write_text(WIDE)
    assert main(["build"]) == 0
    first = capsys.readouterr()
    assert "warning[HDI306]" in first.err and "(cached)" not in first.out
    assert main(["build"]) == 0
    second = capsys.readouterr()
    assert "(cached)" in second.out

    def diag_lines(err: str) -> list[str]:
        return [ln for ln in err.splitlines() if not ln.startswith("idlgen: ")]

    assert diag_lines(second.err) == diag_lines(first.err) and diag_lines(first.err)


class _Tty:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_progress_redraws_on_a_tty_and_is_sparse_in_ci() -> None:
    import io

    from idlgen.cli.progress import Progress

    tty = _Tty()
    p = Progress(tty)  # type: ignore[arg-type]
    for i in range(101):
        p("write", i, 100)
    p.close()
    assert tty.text.startswith("\r\x1b[Kidlgen: write 0/100") and "write 100/100" in tty.text
    assert tty.text.endswith("\r\x1b[K") and "\n" not in tty.text
    log = io.StringIO()
    p = Progress(log)
    for phase in ("parse", "generate", "write"):
        for i in range(51):
            p(phase, i, 50)
    assert log.getvalue().splitlines() == [
        "idlgen: parse (50 file(s))",
        "idlgen: generate (50 file(s))",
        "idlgen: write (50 file(s))",
    ]


def test_build_in_ci_prints_at_most_one_line_per_phase(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["idlgen: parse (2 file(s))", "idlgen: generate (2 file(s))"] + [
        ln for ln in err if ln.startswith("idlgen: write")
    ]
    assert main(["build", "-q"]) == 0
    assert capsys.readouterr() == ("", "")


def test_run_delegates_to_the_runtime(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import idlgen.runtime.cli_run as cli_run

    seen: list[list[str]] = []
    monkeypatch.setattr(cli_run, "main", lambda argv: seen.append(list(argv)) or 7)
    assert main(["run", "m.onnx", "--compare", "--help"]) == 7
    assert seen == [["m.onnx", "--compare", "--help"]]
    monkeypatch.setitem(sys.modules, "idlgen.runtime.cli_run", None)  # import now fails
    assert main(["run", "m.onnx"]) == 2
    assert "'idlgen run' is not available" in capsys.readouterr().err
