"""FlatBuffers codec block of generated modules: descriptor tables and thin record methods."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from .. import ir
from ..ir.fbs_descriptors import DescriptorCall, descriptor_calls
from .blackstyle import Brackets, Node, text_of
from .formatting import lay_out_statements
from .naming import string_literal
from .views import CodecView, ModuleBuilder, RecordView

__all__ = ["codec_view", "descriptor_trees", "registry_line"]


# ---------------------------------------------------------------------------------------------
# The codec block (rendered by templates/fbs_methods.j2 and fbs_codec.j2)


def _node(v: Any) -> Node:
    """A descriptor argument as an expression tree (``repr`` in black's spelling)."""
    t = type(v)
    if t is str:
        return string_literal(v)
    if t is int or t is bool or v is None:
        return repr(v)
    if t is tuple:
        return Brackets("(", tuple([("", _node(x)) for x in v]), ")")
    if t is dict:
        return Brackets(
            "{", tuple([(f"{text_of(_node(k))}: ", _node(x)) for k, x in v.items()]), "}"
        )
    if isinstance(v, float):
        if not math.isfinite(v):
            return Brackets("float(", (("", f'"{v}"'),), ")")
        return repr(v).replace("e+", "e")  # black drops an exponent's plus sign
    return string_literal(v) if isinstance(v, str) else repr(v)


def registry_line(namespace: str | None) -> str:
    """The registry is keyed by the output root package, found by stripping the namespace and
    the module from ``__name__``: the same modules work as ``generated.x.y`` or, shipped in a
    wheel, as ``idlgen.prebuilt.x.y``."""
    depth = 1 + (len(namespace.split(".")) if namespace else 0)
    return f'_FB_REG = _fb.registry(__name__.rsplit(".", {depth})[0])'


def descriptor_trees(
    calls: list[DescriptorCall], class_name: Callable[[str], str]
) -> Iterator[Brackets]:
    """The statements creating the descriptors (one per table/struct; each binds itself to its
    class as ``_FB_DESC``, so no module-level name can collide with a schema's)."""
    for c in calls:
        if c.kind not in ("Table", "Struct"):
            continue  # enums and unions are spelled inline in the specs that use them
        args: list[tuple[str, Node]] = [
            ("", string_literal(c.qualname)),
            ("", class_name(c.qualname)),
        ]
        args += [("", _node(a)) for a in c.args]
        args += [(f"{k}=", _node(v)) for k, v in c.kwargs.items()]
        args.append(("reg=", "_FB_REG"))
        yield Brackets(f"_fb.{c.kind}(", tuple(args), ")")


def codec_view(
    b: ModuleBuilder, f: ir.SchemaFile, records: list[RecordView], schema: ir.Schema
) -> CodecView:
    """CodecView for one generated module: thin methods per record + descriptor block."""

    decls = schema.decls()

    def attr(q: str, n: str) -> str:
        return b.names.field_names(q)[n]

    calls = descriptor_calls(schema, f, attr, b.names.class_name, b.namespace)
    keyed = {
        r.qualname
        for r in records
        if isinstance(decls.get(r.qualname), ir.Struct)
        and any(fl.key for fl in decls[r.qualname].fields)  # type: ignore[union-attr]
    }
    texts, laid = lay_out_statements(descriptor_trees(calls, b.names.class_name), b.line_length)
    return CodecView(
        method_template="fbs_methods.j2",
        tail_template="fbs_codec.j2",
        imports=(
            ("from idlgen.wire import flatbuffers as _fb",)
            + (("from collections.abc import Sequence", "from typing import Any") if keyed else ())
        ),
        context={"lines": [registry_line(b.namespace), *texts], "keyed": keyed},
        laid=laid,
    )
