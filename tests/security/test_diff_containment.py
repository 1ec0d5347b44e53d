"""``idlgen diff`` reads no more than ``build`` would: no FIFO hangs, no imports from above."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from idlgen.diff.sources import load_paths

from ._support import SECRET, run

REPO = Path(__file__).resolve().parents[2]


def _crafted(tmp: Path) -> Path:
    """``tmp/proj/work/v1_0/Evil.idl`` whose package puts an extra component on top, so the
    root inferred from its location is ``tmp`` — above the path given — and an import of
    ``zz.victim.v1_0.Secret`` would resolve to ``tmp/victim/v1_0/Secret.idl``."""
    (tmp / "victim" / "v1_0").mkdir(parents=True)
    (tmp / "victim" / "v1_0" / "Secret.idl").write_text(
        f"package zz.victim.v1_0;\nstruct Secret {{ int x; }};\n// {SECRET}\n"
    )
    d = tmp / "proj" / "work" / "v1_0"
    d.mkdir(parents=True)
    evil = d / "Evil.idl"
    evil.write_text("package zz.proj.work.v1_0;\nimport zz.victim.v1_0.Secret;\n")
    return evil


@pytest.mark.parametrize("as_dir", [False, True])
def test_diff_inferred_roots_do_not_reach_above_the_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_dir: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    evil = _crafted(tmp_path)
    arg = str(evil.parent if as_dir else evil)
    rc, out, err = run("diff", "--format", "json", arg, arg)
    assert rc == 1 and "HDI108" in err, err
    assert SECRET not in out + err
    res = load_paths([Path(arg)])
    assert not any("victim" in name for name in res.sources), list(res.sources)


def test_diff_with_an_explicit_root_still_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trusted way to allow that import: name the root on the command line."""
    monkeypatch.chdir(tmp_path)
    evil = _crafted(tmp_path)
    rc, out, err = run("diff", "--root", f"zz:{tmp_path}", str(evil), str(evil))
    assert rc == 0, err


def test_diff_ordinary_layout_still_infers_its_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for side, ty in (("a", "int"), ("b", "long")):
        d = tmp_path / side / "ohos" / "hdi" / "demo" / "v1_0"
        d.mkdir(parents=True)
        (d / "Types.idl").write_text(f"package ohos.hdi.demo.v1_0;\nstruct P {{ {ty} x; }};\n")
        (d / "Use.idl").write_text(
            "package ohos.hdi.demo.v1_0;\nimport ohos.hdi.demo.v1_0.Types;\n" "struct U { P p; };\n"
        )
    rc, out, err = run("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert rc == 1 and "HDI" not in err and "P.x" in out, (out, err)


def test_diff_symlink_out_of_a_directory_input_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    evil = _crafted(tmp_path)
    evil.write_text("package zz.proj.work.v1_0;\nstruct A { int a; };\n")
    (evil.parent / "Link.idl").symlink_to(tmp_path / "victim" / "v1_0" / "Secret.idl")
    rc, out, err = run("diff", str(evil.parent), str(evil.parent))
    assert rc == 1 and "IDL009" in err and SECRET not in out + err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["f.idl", "f.fbs"])
def test_diff_of_a_fifo_finishes_with_a_located_error(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    other = tmp_path / ("ok" + fifo.suffix)
    other.write_text(
        "package a.v1_0;\nstruct S { int a; };\n" if name.endswith(".idl") else "table T {}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # A subprocess with a timeout: a hang must fail the test, not stall the suite.
    proc = subprocess.run(
        [sys.executable, "-m", "idlgen", "diff", str(fifo), str(other)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "not a regular file" in proc.stderr and name in proc.stderr
