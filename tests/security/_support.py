"""Helpers for the hostile-input tests: tiny projects, tree snapshots, the CLI in process."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from idlgen.cli import main
from tests.conftest import SHARED

# ../shared, or IDLGEN_SHARED when the worktree is not next to it.
SHARED_DIR = SHARED if SHARED.exists() else Path(os.environ.get("IDLGEN_SHARED", "/nonexistent"))

TYPES = """package ohos.hdi.demo.v1_0;
struct Point { int x; int y; };
enum Mode { OFF, ON };
"""
EXTRA = """package ohos.hdi.demo.v1_0;
struct Extra { String note; };
"""
SECRET = "TOP-SECRET-CONTENT-4711"


def make_project(root: Path) -> Path:
    """``root/idl/demo/v1_0/{Types,Extra}.idl``; returns ``root/idl``."""
    d = root / "idl" / "demo" / "v1_0"
    d.mkdir(parents=True)
    (d / "Types.idl").write_text(TYPES)
    (d / "Extra.idl").write_text(EXTRA)
    return root / "idl"


def run(*argv: str) -> tuple[int, str, str]:
    """``idlgen ARGV`` in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def build(idl: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run("build", str(idl), "--root", f"ohos.hdi:{idl}", "--out", str(out), *extra)


def cache_path(out: Path) -> Path:
    """The build cache of ``out`` (in the user cache dir, never in the output tree)."""
    from idlgen.build import cache_file

    p = cache_file(out.resolve())
    assert p is not None, "IDLGEN_CACHE_DIR is empty: the build cache is disabled"
    return p


def drop_cache(out: Path) -> None:
    """Forget the build cache of ``out`` so that the next build regenerates."""
    from idlgen.build import cache_file

    p = cache_file(out.resolve())
    if p is not None and p.exists():
        p.unlink()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` except the cache and bytecode (symlinks as their target)."""
    snap: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if "__pycache__" in p.parts or p.name == ".idlgen-cache.json":
            continue
        if p.is_symlink():
            snap[rel] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            snap[rel] = p.read_bytes()
    return snap
