"""Real generated modules for tests and benches: schema → back end → files → ``import``.

Tests exercise exactly what users get: the schema is generated with the real back end into a
private temporary package, imported, and cached per schema for the whole process.

    g = generate_schema("table T { a:int; } root_type T;", suffix=".fbs")
    T = g["T"]                      # a class by schema-qualified name
    descriptor(T).decode(data)      # the wire descriptor behind T (FlatBuffers Table / Parcel codec)
    mod = generated_module(Path("schemas/hdi/nnrt/v2_1/NodeAttrTypes.idl"), roots={...})
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from idlgen import ir
from idlgen.diagnostics import render_all
from idlgen.frontend import LoadResult, load

__all__ = [
    "Generated",
    "generate_schema",
    "generated_module",
    "generated_classes",
    "descriptor",
    "attr_of",
]

_ROOT: Path | None = None
_CACHE: dict[object, Generated] = {}


def _root() -> Path:
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="idlgen-gen-"))
        atexit.register(shutil.rmtree, _ROOT, True)
        sys.path.insert(0, str(_ROOT))
    return _ROOT


@dataclass
class Generated:
    """One generated, imported package: its IR, its modules and its classes."""

    schema: ir.Schema
    package: str  # top-level import name of the generated tree
    load: LoadResult | None
    files: dict[str, str]  # relative path → generated source
    modules: dict[str, ModuleType] = field(default_factory=dict)  # "ns.pkg.module" → module
    classes: dict[str, Any] = field(default_factory=dict)  # schema-qualified name → class
    by_file: dict[str, ModuleType] = field(default_factory=dict)  # SchemaFile.path → module

    def __getitem__(self, qualname: str) -> Any:
        return self.classes[qualname]

    def __contains__(self, qualname: object) -> bool:
        return qualname in self.classes


def _load(
    schema: str | Path | ir.Schema,
    suffix: str,
    include_dirs: Sequence[Path],
    roots: Mapping[str, Path] | None,
    work: Path,
) -> tuple[ir.Schema, LoadResult | None, list[str]]:
    if isinstance(schema, ir.Schema):
        return schema, None, [f.path for f in schema.files]
    if isinstance(schema, str) and ("\n" in schema or not Path(schema).is_file()):
        src = work / f"t{suffix}"
        src.write_text(schema, encoding="utf-8")
        paths = [src]
    else:
        p = Path(schema)
        paths = sorted(p.rglob("*.idl")) + sorted(p.rglob("*.fbs")) if p.is_dir() else [p]
    res = load(paths, roots=roots, include_dirs=include_dirs)
    if not res.ok:
        raise AssertionError("schema has errors:\n" + render_all(res.diagnostics, res.sources))
    return res.schema, res, list(res.inputs)


def generate_schema(
    schema: str | Path | ir.Schema,
    *,
    include_dirs: Sequence[Path] = (),
    roots: Mapping[str, Path] | None = None,
    suffix: str = ".fbs",
) -> Generated:
    """Generate and import ``schema``: a schema file or directory, schema text (``suffix``
    says which language), or an IR ``Schema``. Cached per arguments for the process."""
    key: object = (
        schema if isinstance(schema, ir.Schema) else str(schema),
        tuple(map(str, include_dirs)),
        tuple(sorted((roots or {}).items())),
        suffix,
    )
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    from idlgen.backend import GenerateOptions, Names, generate
    from idlgen.backend.naming import module_name
    from idlgen.diagnostics import Diagnostics

    package = "_gen_" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    out = _root() / package
    out.mkdir()
    s, res, inputs = _load(schema, suffix, include_dirs, roots, out)
    diags = Diagnostics()
    tree = generate(s, list(s.files), diags, GenerateOptions(format=False))
    if diags.has_errors:
        raise AssertionError("generation failed:\n" + render_all(diags, res.sources if res else {}))
    for rel, text in tree.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    importlib.invalidate_caches()
    g = Generated(s, package, res, tree)
    names = Names(s)
    for q, where in names.where.items():
        dotted = ".".join(x for x in (package, where.package, where.module) if x)
        mod = g.modules.get(dotted)
        if mod is None:
            try:
                mod = importlib.import_module(dotted)
            except ModuleNotFoundError as e:
                if not e.name or not (dotted + ".").startswith(e.name + "."):
                    raise
                continue  # nothing generated for it (e.g. a file of sequenceables only)
            g.modules[dotted] = mod
        cls = getattr(mod, names.class_name(q), None)
        if cls is not None:
            g.classes[q] = cls
    for f in s.files:
        dotted = ".".join(x for x in (package, f.namespace, module_name(f.stem)) if x)
        if dotted in g.modules:
            g.by_file[f.path] = g.modules[dotted]
    _CACHE[key] = g
    return g


def generated_classes(schema: str | Path | ir.Schema, **kw: Any) -> dict[str, Any]:
    """Classes by schema-qualified name (see :func:`generate_schema`)."""
    return generate_schema(schema, **kw).classes


def generated_module(schema: str | Path | ir.Schema, **kw: Any) -> ModuleType:
    """The module generated from the (first) input schema file."""
    g = generate_schema(schema, **kw)
    inputs = list(g.load.inputs) if g.load is not None else [f.path for f in g.schema.files]
    for path in inputs:
        if path in g.by_file:
            return g.by_file[path]
    raise LookupError(f"no module generated for {inputs}")


def descriptor(cls: type) -> Any:
    """The wire descriptor of a generated record class: its FlatBuffers table/struct descriptor
    (``idlgen.wire.flatbuffers``) or its Parcel codec (``idlgen.wire.parcel``)."""
    from idlgen.wire import records

    return records.descriptor_of(cls)


def attr_of(cls: type, schema_name: str) -> str:
    """The Python attribute of schema field ``schema_name`` (``global`` → ``global_``)."""
    import dataclasses

    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.metadata.get("schema_name", f.name) == schema_name:
            return f.name
    raise KeyError(f"{cls.__name__} has no field {schema_name!r}")
