"""Turning ``OLD``/``NEW`` arguments into loaded schemas: files, directories, git revisions."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..frontend.files import read_schema
from ..diagnostics import Diagnostics
from ..frontend import LoadResult, load

__all__ = [
    "schema_files",
    "infer_roots",
    "load_paths",
    "GitError",
    "extract_at_revision",
]

_PACKAGE_RE = re.compile(r"^\s*package\s+([A-Za-z_][\w.]*)\s*;", re.M)


class GitError(RuntimeError):
    pass


def schema_files(path: Path, diags: Diagnostics | None = None) -> list[Path]:
    """A schema file, or every ``.idl``/``.fbs`` below a directory (sorted).

    As for ``build``, a file below a directory that is a symlink to outside it is an error
    (IDL009, into ``diags``) and is not read. A named path that is not a directory is returned
    as is: the loader reads it with ``read_schema``, so a FIFO is a located error, not a hang.
    """
    if path.is_dir():
        from ..frontend.inputs import expand_inputs

        return expand_inputs([path], diags if diags is not None else Diagnostics())
    return [path]


def infer_roots(files: Sequence[Path]) -> dict[str, Path]:
    """hdi-gen ``-r`` mappings implied by where HDI files sit relative to their package.

    A file whose directories do not end in its package's trailing components implies nothing.

    ``…/nnrt/v1_0/X.idl`` declaring ``package ohos.hdi.nnrt.v1_0;`` implies
    ``ohos.hdi → …`` (the directory two levels up, one per package component after the prefix).
    """
    roots: dict[str, Path] = {}
    for f in files:
        if f.suffix != ".idl":
            continue
        try:  # never a plain read: a FIFO must not hang us (the loader reports it)
            m = _PACKAGE_RE.search(read_schema(f).decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            continue
        if m is None:
            continue
        parts = m.group(1).split(".")
        d = f.parent
        # Walk up while directory names match the package's trailing components.
        k = len(parts)
        while k > 0 and d.name == parts[k - 1]:
            d = d.parent
            k -= 1
        if k == len(parts) or k == 0:
            continue
        roots.setdefault(".".join(parts[:k]), d)
    return roots


def load_paths(
    paths: Sequence[Path],
    *,
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
) -> LoadResult:
    files: list[Path] = []
    diags = Diagnostics()
    for p in paths:
        files.extend(schema_files(p, diags))
    # Where the files themselves sit decides their package root (hdi-gen requires the package
    # to match the path), so inferred roots win over configured ones for the same prefix: the
    # project's `ohos.hdi:schemas/hdi` must not capture a diff of some other checkout. They
    # come from file content, so they are lookups only, never places imports may come from
    # (a crafted package name would otherwise make '/' a root).
    res = load(
        files, roots=roots or {}, include_dirs=include_dirs, inferred_roots=infer_roots(files)
    )
    if diags:
        diags.extend(res.diagnostics)
        res.diagnostics = diags
    return res


def _git(args: Sequence[str], cwd: Path) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if proc.returncode != 0:
        raise GitError(proc.stderr.decode(errors="replace").strip() or f"git {args[0]} failed")
    return proc.stdout


def extract_at_revision(ref: str, paths: Sequence[Path], dest: Path, cwd: Path) -> dict[Path, Path]:
    """Write ``paths`` (files or directories of the work tree) as of ``ref`` below ``dest``.

    Returns {work-tree path: extracted path}; a path that did not exist at ``ref`` maps to a
    path that does not exist (so that side is empty, i.e. everything is new).
    """
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).decode().strip()).resolve()
    _git(["rev-parse", "--verify", f"{ref}^{{commit}}"], cwd)
    out: dict[Path, Path] = {}
    wanted: list[str] = []
    for p in paths:
        rel = p.resolve().relative_to(top).as_posix() if p.resolve().is_relative_to(top) else None
        if rel is None:
            out[p] = p  # outside the repository: same on both sides
            continue
        out[p] = dest / rel
        probe = subprocess.run(
            ["git", "cat-file", "-e", f"{ref}:{rel}"], cwd=top, capture_output=True
        )
        if probe.returncode == 0:
            wanted.append(rel)
    if wanted:
        data = _git(["archive", "--format=tar", ref, "--", *wanted], top)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")
    return out
