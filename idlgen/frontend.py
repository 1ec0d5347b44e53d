"""The entry point shared by all front ends: load schema files into one IR plus diagnostics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .bounds import no_cyclic_gc
from .diagnostics import Diagnostics
from .ir import Schema, SchemaFile

__all__ = ["LoadResult", "load"]


@dataclass
class LoadResult:
    """What a front end produced.

    ``schema`` holds every file that lowered (inputs and what they import/include), even when
    other files had errors; ``inputs`` are the display paths of the files asked for (their
    ``SchemaFile.path``), ``sources`` maps display paths to text for rendering diagnostics.
    """

    schema: Schema
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    sources: dict[str, str] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.diagnostics.has_errors


def load(
    paths: Sequence[Path],
    *,
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
    inferred_roots: Mapping[str, Path] | None = None,
) -> LoadResult:
    """Load ``.idl`` and ``.fbs`` files (mixed is fine) into one schema.

    ``roots`` maps HDI package prefixes to directories (hdi-gen's ``-r ohos.hdi:DIR``);
    ``include_dirs`` are FlatBuffers include paths (also searched for HDI imports that no root
    maps). ``inferred_roots`` are HDI roots guessed from file locations: used for lookups like
    ``roots`` but not trusted as places imports may come from (see ``hdi.loader.load``).
    """
    with no_cyclic_gc():  # parsing 1 MB spent most of its time in GC passes (idlgen.bounds)
        return _load(paths, roots, include_dirs, inferred_roots)


def _load(
    paths: Sequence[Path],
    roots: Mapping[str, Path] | None,
    include_dirs: Sequence[Path],
    inferred_roots: Mapping[str, Path] | None,
) -> LoadResult:
    idl = [p for p in paths if p.suffix == ".idl"]
    fbs = [p for p in paths if p.suffix == ".fbs"]
    results: list[LoadResult] = []
    if idl:
        from .hdi.loader import load as load_hdi

        results.append(
            load_hdi(
                idl, roots=roots or {}, include_dirs=include_dirs, inferred_roots=inferred_roots
            )
        )
    if fbs:
        from .fbs.loader import load as load_fbs

        results.append(load_fbs(fbs, include_dirs=include_dirs))
    merged = LoadResult(Schema(()))
    files: list[SchemaFile] = []
    for r in results:
        files.extend(r.schema.files)
        merged.diagnostics.extend(r.diagnostics)
        merged.sources.update(r.sources)
        merged.inputs += r.inputs
    merged.schema = Schema(tuple(files))
    return merged
