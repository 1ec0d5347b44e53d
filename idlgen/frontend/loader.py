"""Load schema files of any language into one IR: dispatch by suffix to the front ends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..ir import Schema, SchemaFile
from .contract import Frontend, LoadResult
from .files import ParseCache, overlay as _overlay

__all__ = ["SUFFIXES", "load"]

SUFFIXES = (".idl", ".fbs")


def _frontend(suffix: str) -> Frontend:
    # Imported on demand: loading only .fbs files never imports the HDI grammar, and back.
    if suffix == ".idl":
        from .hdi.loader import load as load_hdi

        return load_hdi
    from .fbs.loader import load as load_fbs

    return load_fbs


def load(
    paths: Sequence[Path],
    *,
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
    inferred_roots: Mapping[str, Path] | None = None,
    overlay: Mapping[Path, str] | None = None,
    cache: ParseCache | None = None,
) -> LoadResult:
    """Load ``.idl`` and ``.fbs`` files (mixed is fine) into one schema.

    ``roots`` maps HDI package prefixes to directories (hdi-gen's ``-r ohos.hdi:DIR``);
    ``include_dirs`` are FlatBuffers include paths (also searched for HDI imports that no root
    maps). ``inferred_roots`` are HDI roots guessed from file locations: used for lookups like
    ``roots`` but not trusted as places imports may come from (see ``hdi.loader.load``).
    ``overlay`` maps files to text that replaces what is on disk (an editor's open buffers; see
    ``files.overlay``); ``cache`` keeps syntax trees of unchanged files between loads.
    """
    if overlay is not None or cache is not None:
        with _overlay(overlay or {}, cache):
            return load(
                paths, roots=roots, include_dirs=include_dirs, inferred_roots=inferred_roots
            )
    merged = LoadResult(Schema(()))
    files: list[SchemaFile] = []
    for suffix in SUFFIXES:
        group = [p for p in paths if p.suffix == suffix]
        if not group:
            continue
        r = _frontend(suffix)(
            group, roots=roots or {}, include_dirs=include_dirs, inferred_roots=inferred_roots
        )
        files.extend(r.schema.files)
        merged.diagnostics.extend(r.diagnostics)
        merged.sources.update(r.sources)
        merged.inputs += r.inputs
    merged.schema = Schema(tuple(files))
    return merged
