"""A schema compiled in memory for the data tools: the root type's runtime codec.

FlatBuffers: front end → IR → :func:`idlgen.ir.fbs_descriptors.validation_descriptors` (the
descriptor arguments generated modules pass, over plain record classes). HDI: front end → IR
→ the back end's package tree, imported from memory (the generated ``ParcelRecord`` classes).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ir
from ..diagnostics import Diagnostics
from ..errors import ConfigError

__all__ = ["Compiled", "SchemaFailure", "compile_schema"]


class SchemaFailure(Exception):
    """The schema has errors; ``diagnostics`` and ``sources`` render them."""

    def __init__(self, diagnostics: Diagnostics, sources: dict[str, str]) -> None:
        super().__init__("the schema has errors")
        self.diagnostics = diagnostics
        self.sources = sources


@dataclass(frozen=True)
class Compiled:
    """``kind`` is ``"fbs"`` (``codec``: a FlatBuffers ``Table``/``Struct`` descriptor) or
    ``"hdi"`` (``codec``: a generated ``ParcelRecord`` class)."""

    kind: str
    qualname: str
    codec: Any
    schema_path: str
    schema: ir.Schema


def _pick(names: Sequence[str], wanted: str, what: str) -> str:
    if wanted in names:
        return wanted
    hits = [q for q in names if q.endswith("." + wanted)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ConfigError(f"--root-type {wanted} is ambiguous: {', '.join(sorted(hits))}")
    raise ConfigError(f"--root-type {wanted}: no {what} of that name in the schema")


def compile_schema(
    path: Path,
    *,
    root_type: str | None = None,
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
) -> Compiled:
    from ..frontend import load

    if path.suffix not in (".fbs", ".idl"):
        raise ConfigError(f"{path}: not a schema (.fbs or .idl)")
    if not path.is_file():
        raise ConfigError(f"{path}: no such schema file")
    res = load([path], roots=roots, include_dirs=include_dirs)
    if res.diagnostics.has_errors:
        raise SchemaFailure(res.diagnostics, res.sources)
    schema = res.schema
    me = next((f for f in schema.files if f.path in res.inputs), schema.files[0])
    if path.suffix == ".fbs":
        return _fbs(schema, me, root_type)
    return _hdi(schema, me, root_type)


def _fbs(schema: ir.Schema, me: ir.SchemaFile, root_type: str | None) -> Compiled:
    from ..ir.fbs_descriptors import validation_descriptors

    decls = schema.decls()
    tables = [q for q, d in decls.items() if isinstance(d, ir.Struct) and d.is_table]
    if root_type is None:
        if not me.root_type:
            raise ConfigError(f"{me.path} declares no root_type; pass --root-type")
        q = me.root_type
    else:
        q = _pick(tables, root_type, "table")
    desc = validation_descriptors(schema)[q]
    if me.file_identifier:  # flatc finishes any root type with the schema's file_identifier
        desc.identifier = me.file_identifier
    desc.prepare()
    return Compiled("fbs", q, desc, me.path, schema)


_PACKAGES: dict[tuple[tuple[str, str], ...], str] = {}  # generated once per process


def _hdi(schema: ir.Schema, me: ir.SchemaFile, root_type: str | None) -> Compiled:
    from ..backend import GenerateOptions, generate
    from ..backend.views import Names
    from .inmemory import install

    structs = [
        d.qualname
        for f in schema.files
        for d in f.decls
        if isinstance(d, (ir.Struct, ir.Union)) and not getattr(d, "is_table", False)
    ]
    if root_type is None:
        raise ConfigError("HDI data needs --root-type STRUCT (the struct the bytes hold)")
    q = _pick(structs, root_type, "struct or union")
    key = tuple((f.path, f.digest) for f in schema.files)
    package = _PACKAGES.get(key)
    if package is None:
        diags = Diagnostics()
        tree = generate(schema, list(schema.files), diags, GenerateOptions(format=False))
        if diags.has_errors:
            raise SchemaFailure(diags, {})
        package = _PACKAGES[key] = install(tree)
    names = Names(schema)
    where = names.where[q]
    module = importlib.import_module(
        ".".join(x for x in (package, where.package, where.module) if x)
    )
    cls = getattr(module, names.class_name(q))
    if not hasattr(cls, "to_parcel") or not hasattr(cls, "from_parcel"):
        raise ConfigError(f"{q} has no Parcel encoding")
    return Compiled("hdi", q, cls, me.path, schema)
