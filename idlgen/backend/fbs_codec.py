"""FlatBuffers codec block of generated modules: descriptor tables and thin record methods."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import ir
from ..ir.fbs_descriptors import DescriptorCall, descriptor_calls
from .naming import string_literal
from .views import CodecView, ModuleBuilder, RecordView

__all__ = ["codec_view", "render_calls"]


# ---------------------------------------------------------------------------------------------
# The codec block (rendered by templates/fbs_methods.j2 and fbs_codec.j2)


def _lit(v: Any) -> str:
    """Python source for a descriptor argument (``repr`` except for non-finite floats)."""
    t = type(v)
    if t is str:
        return string_literal(v)
    if t is int or t is bool or v is None:
        return repr(v)
    if isinstance(v, float) and not math.isfinite(v):
        return f'float("{v}")'
    if isinstance(v, tuple):
        inner = ", ".join(_lit(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_lit(k)}: {_lit(x)}" for k, x in v.items()) + "}"
    return string_literal(v) if isinstance(v, str) else repr(v)


def render_calls(
    calls: list[DescriptorCall], class_name: Callable[[str], str], namespace: str | None
) -> list[str]:
    """Python statements creating the descriptors (one per table/struct; each binds itself to
    its class as ``_FB_DESC``, so no module-level name can collide with a schema's).

    The registry is keyed by the output root package, found by stripping the namespace and the
    module from ``__name__``: the same modules work as ``generated.x.y`` or, shipped in a
    wheel, as ``idlgen.prebuilt.x.y``."""
    depth = 1 + (len(namespace.split(".")) if namespace else 0)
    lines = [f'_FB_REG = _fb.registry(__name__.rsplit(".", {depth})[0])']
    for c in calls:
        if c.kind not in ("Table", "Struct"):
            continue  # enums and unions are spelled inline in the specs that use them
        name = class_name(c.qualname)
        args = ", ".join([string_literal(c.qualname), name, *(_lit(a) for a in c.args)])
        kw = "".join(f", {k}={_lit(v)}" for k, v in c.kwargs.items()) + ", reg=_FB_REG"
        lines.append(f"_fb.{c.kind}({args}{kw})")
    return lines


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
    lines = render_calls(calls, lambda q: b.names.class_name(q), b.namespace)
    return CodecView(
        method_template="fbs_methods.j2",
        tail_template="fbs_codec.j2",
        imports=(
            ("from idlgen.wire import flatbuffers as _fb",)
            + (("from collections.abc import Sequence", "from typing import Any") if keyed else ())
        ),
        context={"lines": lines, "keyed": keyed},
    )
