"""Issue 20, points 5 and 7: configuration errors are located exit-2 errors, never skipped;
hostile decoder inputs and refs give DecodeError or exit 1/2, never exit 123."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen import DecodeError
from tests.conftest import REPO
from tests.security._support import make_project, run

EXAMPLES = int(os.environ.get("IDLGEN_FUZZ_EXAMPLES", "60"))
FBS = "table T { a: int; b: [int]; }\nroot_type T;\n"
IDL = "package ohos.hdi.x.v1_0;\ninterface IFoo { F(); }\n"


# --- point 5: config -------------------------------------------------------------------------


def test_invalid_toml_is_located_exit_2_and_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a valid config in the parent must not be used in place of the broken one
    make_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.idlgen]\ninputs = ["idl"]\nout = "gen"\nroots = ["ohos.hdi:idl"]\n'
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.idlgen]\nout = "x"\nbroken = [\n')
    monkeypatch.chdir(sub)
    for cmd in (["build"], ["check"], ["parse", str(tmp_path / "idl")]):
        rc, out, err = run(*cmd)
        assert rc == 2, (cmd, err)
        assert f"{sub / 'pyproject.toml'}:4:1: invalid TOML" in err, err
    assert not (tmp_path / "gen").exists()


def test_explicit_config_invalid_toml_located(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[tool.idlgen]\nout = \ninputs = []\n")
    rc, _, err = run("build", "--config", str(cfg))
    assert rc == 2 and f"{cfg}:2:" in err and "invalid TOML" in err, err


def test_no_config_or_no_table_is_exit_2_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run("build")
    assert rc == 2 and "no pyproject.toml with a [tool.idlgen] table" in err, err
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    rc, _, err = run("check")
    assert rc == 2 and "[tool.idlgen]" in err, err
    other = tmp_path / "other.toml"
    other.write_text("[tool.x]\n")
    rc, _, err = run("build", "--config", str(other))
    assert rc == 2 and f"{other} has no [tool.idlgen] table" in err, err
    (tmp_path / "pyproject.toml").write_text('[tool.idlgen]\ninputs = ["a.fbs"]\n')
    (tmp_path / "a.fbs").write_text(FBS)
    rc, _, err = run("build")
    assert rc == 2 and "has no 'out'" in err and "--out" in err, err


def test_unknown_key_did_you_mean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.idlgen]\ninput = ["a.fbs"]\nout = "g"\n')
    rc, _, err = run("build")
    assert rc == 2 and "'input'" in err and "did you mean 'inputs'" in err, err
    (tmp_path / "pyproject.toml").write_text('[tool.idlgen]\nline_length = 80\nout = "g"\n')
    rc, _, err = run("build")
    assert rc == 2 and "did you mean 'line-length'" in err, err
    # the diff table's keys too
    (tmp_path / "a.fbs").write_text(FBS)
    (tmp_path / "b.fbs").write_text(FBS)
    (tmp_path / "pyproject.toml").write_text("[tool.idlgen]\n[tool.idlgen.diff]\nsupress = []\n")
    rc, _, err = run("diff", "a.fbs", "b.fbs")
    assert rc == 2 and "did you mean 'suppress'" in err, err


def test_diff_across_languages_is_usage_error(tmp_path: Path) -> None:
    (tmp_path / "game.fbs").write_text(FBS)
    (tmp_path / "IFoo.idl").write_text(IDL)
    rc, out, err = run("diff", str(tmp_path / "game.fbs"), str(tmp_path / "IFoo.idl"))
    assert rc == 2 and "two languages" in err and out == "", err
    (tmp_path / "f").mkdir()
    (tmp_path / "h").mkdir()
    (tmp_path / "f" / "g.fbs").write_text(FBS)
    (tmp_path / "h" / "IFoo.idl").write_text(IDL)
    rc, _, err = run("diff", str(tmp_path / "f"), str(tmp_path / "h"))
    assert rc == 2 and "two languages" in err, err


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _repo(tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    (d / "fbs").mkdir(parents=True)
    (d / "fbs" / "game.fbs").write_text(FBS)
    (d / "pyproject.toml").write_text('[tool.idlgen]\ninputs = ["fbs"]\nout = "gen"\n')
    _git(d, "init", "-q")
    _git(d, "add", "-A")
    _git(d, "commit", "-qm", "base")
    return d


def test_diff_against_without_paths_uses_config_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _repo(tmp_path)
    (d / "fbs" / "game.fbs").write_text(FBS.replace("a: int;", ""))
    monkeypatch.chdir(d)
    rc, out, err = run("diff", "--against", "HEAD", "--format", "json")
    assert rc == 1, err
    assert any(f["severity"] == "breaking" for f in json.loads(out)["findings"])
    (d / "pyproject.toml").write_text("[tool.idlgen]\n")
    rc, _, err = run("diff", "--against", "HEAD")
    assert rc == 2 and "inputs" in err, err


def test_run_on_a_non_model_file_is_exit_2(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    rc, _, err = run("run", str(p))
    assert rc == 2 and "not a model file" in err, err


# --- point 7: decoders and exits ---------------------------------------------------------------


def test_diff_against_ref_with_symlink_out_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _repo(tmp_path)
    os.symlink("../../../../../../etc/passwd", d / "fbs" / "evil.fbs")
    os.symlink("/etc/hostname", d / "fbs" / "abs.fbs")
    _git(d, "add", "-A")
    _git(d, "commit", "-qm", "links")
    (d / "fbs" / "evil.fbs").unlink()
    (d / "fbs" / "abs.fbs").unlink()
    monkeypatch.chdir(d)
    rc, out, err = run("diff", "fbs", "--against", "HEAD")
    assert rc == 2 and "refusing" in err and "symlink" in err, err
    assert "root:" not in out + err


def test_undecodable_file_names_in_every_format(tmp_path: Path) -> None:
    """A real process (its stdout is UTF-8, strict): a name that is not UTF-8 reaches the
    formatters as lone surrogates, which SARIF used to pass to urllib (exit 123)."""
    import sys

    bad = os.fsdecode(b"bad\xff\xfe.fbs")
    (tmp_path / bad).write_text("table T { a: Nope; }\n")
    old, new = os.fsdecode(b"o\xfe.fbs"), os.fsdecode(b"n\xfe.fbs")
    (tmp_path / old).write_text("table T { a: int; b: int; }\nroot_type T;\n")
    (tmp_path / new).write_text("table T { a: int; }\nroot_type T;\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PYTHONIOENCODING"] = "utf-8"  # strict, as under LANG=en_US.UTF-8
    env["PYTHONPATH"] = str(REPO)

    def idlgen(*argv: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "idlgen", *argv], cwd=tmp_path, capture_output=True, env=env
        )

    for fmt in ("sarif", "json", "github", "text"):
        r = idlgen("parse", bad, "--format", fmt)
        assert r.returncode == 1, (fmt, r.stderr)
        if fmt == "sarif":
            doc = json.loads(r.stdout.decode("utf-8"))
            uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
            assert uri["artifactLocation"]["uri"] == "bad%FF%FE.fbs"
    for fmt in ("text", "markdown", "json", "github", "sarif"):
        r = idlgen("diff", old, new, "--format", fmt)
        assert r.returncode == 1, (fmt, r.stderr)
        r.stdout.decode("utf-8")


def _features() -> Any:
    from tests.fbs.common import runtime
    from tests.fbs.test_json import FEATURES

    _, rt = runtime(FEATURES)
    return rt["desc:Ex.Root"]


HOSTILE = ["[1]", "{}", "null", "[[]]", "{ x: [] }", '"s"', "[{}]", "true", "1e999", "-1"]
FIELDS = ["u", "us", "v", "e", "f", "es", "ks", "kts", "nested", "arr", "d", "name", "strs", "b"]


@pytest.mark.parametrize("field", FIELDS)
def test_from_json_type_mismatch_is_decode_error_with_path(field: str) -> None:
    from idlgen.wire import fbjson

    desc = _features()
    for value in HOSTILE:
        for text in (
            f"{{ {field}: {value} }}",
            f"{{ {field}: [{value}] }}",
            f"{{ u_type: A, u: {{ x: {value} }}, {field}: {value} }}",
            f"{{ ks: [{{k: 1, v: 2}}, {{k: {value}, v: 1}}] }}",
        ):
            try:
                fbjson.from_json(desc, text)
            except DecodeError as e:
                assert "Ex.Root" in str(e)
                first = text == f"{{ {field}: {value} }}"
                if first and value in ("[1]", "{}", "[[]]") and field in ("e", "f", "d"):
                    assert e.path.startswith(f"Ex.Root.{field}"), (text, e.path)


def test_from_json_reports_field_path() -> None:
    from idlgen.wire import fbjson

    desc = _features()
    with pytest.raises(DecodeError) as ei:
        fbjson.from_json(desc, "{ ks: [{k: 3, v: 1}, {k: {}, v: 2}] }")
    assert ei.value.path == "Ex.Root.ks[1].k" and "an object" in str(ei.value)
    with pytest.raises(DecodeError) as ei:
        fbjson.from_json(desc, "{ d: null, e: [1] }")
    assert ei.value.path == "Ex.Root.e" and "a list" in str(ei.value)


def _json_values() -> st.SearchStrategy[str]:
    leaf = st.sampled_from(
        ["null", "true", "1", "-3", "1.5", '"x"', '"A"', "X", "Z", "nan", "0x10", '"P Q"']
    )
    return st.recursive(
        leaf,
        lambda kids: st.lists(kids, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
        | st.lists(st.tuples(st.sampled_from(FIELDS + ["x", "s", "k", "a"]), kids), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
        ),
        max_leaves=12,
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(FIELDS + ["u_type", "us_type", "v_type"]), _json_values()),
        max_size=4,
    )
)
def test_from_json_hostile_shapes_only_decode_error(pairs: list[tuple[str, str]]) -> None:
    from idlgen.wire import fbjson

    desc = _features()
    text = "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    try:
        fbjson.from_json(desc, text)
    except DecodeError:
        pass
