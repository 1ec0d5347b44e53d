"""FlatBuffers codec block of generated modules: descriptor tables and thin record methods.

The descriptors are the typed views of :mod:`idlgen.ir.fbs_descriptors` (one per table and
struct of the module); ``templates/fbs_codec.j2`` writes them through ``_flatbuffers.j2``, each
statement on one line with keyword arguments, which the formatter lays out as black does.
"""

from __future__ import annotations

from .. import ir
from ..ir.fbs_descriptors import StructDesc, TableDesc, descriptors
from .views import CodecView, ModuleBuilder, RecordView

__all__ = ["codec_view"]


def codec_view(
    b: ModuleBuilder, f: ir.SchemaFile, records: list[RecordView], schema: ir.Schema
) -> CodecView:
    """CodecView for one generated module: thin methods per record + descriptor block."""

    decls = schema.decls()

    def attr(q: str, n: str) -> str:
        return b.names.field_names(q)[n]

    # enums and unions are spelled inline in the field types that use them
    statements = [
        d
        for d in descriptors(schema, f, attr, b.names.class_name, b.namespace)
        if isinstance(d, (TableDesc, StructDesc))
    ]
    keyed = {
        r.qualname
        for r in records
        if isinstance(decls.get(r.qualname), ir.Struct)
        and any(fl.key for fl in decls[r.qualname].fields)  # type: ignore[union-attr]
    }
    return CodecView(
        method_template="fbs_methods.j2",
        tail_template="fbs_codec.j2",
        imports=(
            ("from idlgen.wire import flatbuffers as _fb",)
            + (("from collections.abc import Sequence", "from typing import Any") if keyed else ())
        ),
        context={
            # the registry's key: ``__name__`` less the namespace and the module
            "depth": 1 + (len(b.namespace.split(".")) if b.namespace else 0),
            "statements": statements,
            "keyed": keyed,
        },
    )
