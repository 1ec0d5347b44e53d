"""IR -> FlatBuffers codec descriptors (constructor arguments for :mod:`idlgen.wire.flatbuffers`).

``descriptor_calls`` is a pure function of the IR: the generator renders its result with
``repr`` (every argument is a literal), tests can call :func:`build_runtime` to get working
classes and descriptors without generating code.
"""

from __future__ import annotations

import dataclasses
import enum
import keyword
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import ir
from ..pygen.naming import enum_member_name

__all__ = [
    "DescriptorCall",
    "ClassName",
    "type_spec",
    "descriptor_calls",
    "build_runtime",
    "py_attr",
    "codec_view",
    "render_calls",
]


def py_attr(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or keyword.issoftkeyword(name) else name


@dataclass(frozen=True)
class DescriptorCall:
    """``_fb.<kind>(qualname, <class>, *args, **kwargs)``; ``cls`` is the class name to pass
    (enums, tables, structs) or "" (unions)."""

    kind: str  # "Enum" | "Struct" | "Table" | "Union"
    qualname: str
    cls: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class ClassName(str):
    """A generated class referenced by name in rendered source (``repr`` is the bare name)."""

    def __repr__(self) -> str:
        return str(self)


def type_spec(
    t: ir.TypeRef,
    decls: dict[str, ir.Decl] | None = None,
    class_name: Callable[[str], str] | None = None,
) -> Any:
    """The runtime type spec of ``t``. Without ``class_name`` every declared type is named by
    qualified name (looked up in a registry, see :func:`build_runtime`). With it (what generated
    modules use) unions are spelled out inline and enums carry their generated class name, which
    the runtime imports from the namespace package on first use; nothing is referenced at import
    time, so modules that import each other still load."""
    if isinstance(t, ir.Scalar):
        return t.kind.fmt
    if isinstance(t, ir.String):
        return "string"
    if isinstance(t, ir.Vector):
        return ("vector", type_spec(t.element, decls, class_name))
    if isinstance(t, ir.FixedArray):
        return ("array", type_spec(t.element, decls, class_name), t.length)
    if isinstance(t, ir.Ref):
        if class_name is None or decls is None:
            return (t.kind.value, t.qualname)
        d = decls[t.qualname]
        if isinstance(d, ir.Enum):
            # members the generator renames (``None`` -> ``None_``): JSON uses the schema names
            renamed = tuple(
                (enum_member_name(m.name), m.name)
                for m in d.members
                if enum_member_name(m.name) != m.name
            )
            return ("enum", t.qualname, d.base.fmt, class_name(t.qualname)) + (
                (renamed,) if renamed else ()
            )
        if isinstance(d, ir.Union):
            members = tuple(
                (m.name, m.value, type_spec(m.type, decls, class_name)) for m in d.members
            )
            return ("union", t.qualname, (d.discriminant or ir.ScalarKind.U8).fmt, members)
        return (t.kind.value, t.qualname)
    raise ValueError(f"type {t!r} has no FlatBuffers encoding")


def _attr(f: ir.Field, name: str) -> Any:
    for a in f.attributes:
        if a.name == name:
            return a.value if a.value is not None else True
    return None


def _field_default(f: ir.Field) -> Any:
    if f.optional:
        return None
    if isinstance(f.default, tuple):
        return ()
    return f.default


def descriptor_calls(
    schema: ir.Schema,
    file: ir.SchemaFile,
    attr: Callable[[str, str], str] | None = None,
    class_name: Callable[[str], str] | None = None,
    namespace: str | None = None,
) -> list[DescriptorCall]:
    """Descriptor constructor calls for the declarations of ``file`` (those in ``namespace``
    when given). ``attr(qualname, field)`` names Python attributes; ``class_name`` see
    :func:`type_spec`."""
    decls = schema.decls()
    at = attr or (lambda q, n: py_attr(n))

    def spec(t: ir.TypeRef) -> Any:
        return type_spec(t, decls, class_name)

    out: list[DescriptorCall] = []
    for d in file.decls:
        if namespace is not None and d.namespace != namespace:
            continue
        if isinstance(d, ir.Enum):
            out.append(DescriptorCall("Enum", d.qualname, d.name, (d.base.fmt, d.bit_flags), {}))
        elif isinstance(d, ir.Union):
            members = tuple((m.name, m.value, spec(m.type)) for m in d.members)
            disc = (d.discriminant or ir.ScalarKind.U8).fmt
            out.append(DescriptorCall("Union", d.qualname, "", (members, disc), {}))
        elif isinstance(d, ir.Struct) and not d.is_table:
            fields = tuple((at(d.qualname, f.name), f.name, spec(f.type)) for f in d.fields)
            key = next((at(d.qualname, f.name) for f in d.fields if f.key), "")
            kw: dict[str, Any] = {}
            if d.force_align:
                kw["force_align"] = d.force_align
            if key:
                kw["key"] = key
            out.append(DescriptorCall("Struct", d.qualname, d.name, (fields,), kw))
        elif isinstance(d, ir.Struct):
            fields_kw = []
            for f in d.fields:
                assert f.slot is not None
                fkw: dict[str, Any] = {}
                for flag in ("optional", "required", "key", "deprecated"):
                    if getattr(f, flag):
                        fkw[flag] = True
                if _attr(f, "shared"):
                    fkw["shared"] = True
                if _attr(f, "flexbuffer"):
                    fkw["flexbuffer"] = True
                for wide in ("offset64", "vector64"):  # 64-bit offsets (and lengths)
                    if _attr(f, wide):
                        fkw[wide] = True
                nested = _attr(f, "nested_flatbuffer")
                if nested:
                    q = _resolve_nested(schema, d.namespace, str(nested))
                    if q:
                        fkw["nested"] = q
                h = _attr(f, "hash")
                if h:
                    fkw["hash"] = str(h)
                fa = _attr(f, "force_align")
                if fa:
                    fkw["force_align"] = int(fa)
                fields_kw.append(
                    (at(d.qualname, f.name), f.name, f.slot, spec(f.type), _field_default(f), fkw)
                )
            kw = {}
            if file.root_type == d.qualname and file.file_identifier:
                kw["identifier"] = file.file_identifier
            out.append(DescriptorCall("Table", d.qualname, d.name, (tuple(fields_kw),), kw))
    return out


def _resolve_nested(schema: ir.Schema, ns: str, name: str) -> str:
    decls = schema.decls()
    parts = ns.split(".") if ns else []
    for i in range(len(parts), -1, -1):
        q = ".".join(parts[:i] + [name])
        if q in decls:
            return q
    return ""


# ---------------------------------------------------------------------------------------------
# A runtime straight from the IR (tests, tools): dataclasses + registered descriptors


def _py_default(f: ir.Field, decls: dict[str, ir.Decl]) -> Any:
    if f.optional:
        return None
    t = f.type
    if isinstance(t, ir.Scalar) or (isinstance(t, ir.Ref) and t.kind is ir.RefKind.ENUM):
        return f.default
    if isinstance(t, ir.String):
        return f.default if isinstance(f.default, str) else None
    if isinstance(t, ir.Vector) and f.default == ():
        return dataclasses.field(default_factory=list)
    if isinstance(t, ir.FixedArray):
        return dataclasses.field(default_factory=list)
    return None


def build_runtime(schema: ir.Schema) -> dict[str, Any]:
    """Create a dataclass / enum per declaration and register the codec descriptors.

    Returns ``{qualname: class}`` plus ``{"desc:" + qualname: descriptor}``.
    """
    from ..wire import flatbuffers as fb
    from ..wire.records import OpenIntEnum

    decls = schema.decls()
    reg: dict[str, Any] = {}
    classes: dict[str, Any] = {}
    for q, d in decls.items():
        if isinstance(d, ir.Enum):
            members = [(m.name, m.value) for m in d.members]
            # like generated code: unknown values survive decoding (forward compatibility)
            classes[q] = (
                enum.IntFlag(d.name, members)
                if d.bit_flags
                else OpenIntEnum(d.name, members)  # type: ignore[call-arg, arg-type]
            )
        elif isinstance(d, ir.Struct):
            fields = []
            for f in d.fields:
                default = _py_default(f, decls)
                if d.is_table or isinstance(f.type, ir.FixedArray):
                    fields.append(
                        (
                            py_attr(f.name),
                            Any,
                            (
                                default
                                if isinstance(default, dataclasses.Field)
                                else dataclasses.field(default=default)
                            ),
                        )
                    )
                else:
                    t = f.type
                    if isinstance(t, ir.Ref) and t.kind is ir.RefKind.STRUCT:
                        fields.append((py_attr(f.name), Any, dataclasses.field(default=None)))
                    else:
                        fields.append((py_attr(f.name), Any, dataclasses.field(default=f.default)))
            classes[q] = dataclasses.make_dataclass(d.name, fields)
    out: dict[str, Any] = dict(classes)
    for file in schema.files:
        for c in descriptor_calls(schema, file):
            if c.kind == "Enum":
                out["desc:" + c.qualname] = fb.Enum(
                    c.qualname, classes[c.qualname], *c.args, reg=reg
                )
            elif c.kind == "Union":
                out["desc:" + c.qualname] = fb.Union(c.qualname, *c.args, reg=reg)
            elif c.kind == "Struct":
                out["desc:" + c.qualname] = fb.Struct(
                    c.qualname, classes[c.qualname], *c.args, **c.kwargs, reg=reg
                )
            else:
                out["desc:" + c.qualname] = fb.Table(
                    c.qualname, classes[c.qualname], *c.args, **c.kwargs, reg=reg
                )
    return out


# ---------------------------------------------------------------------------------------------
# The generator plugin (see idlgen.pygen.generate.CODEC_PLUGINS)


def _lit(v: Any) -> str:
    """Python source for a descriptor argument (``repr`` except for non-finite floats)."""
    if isinstance(v, float) and not math.isfinite(v):
        return f'float("{v}")'
    if isinstance(v, tuple):
        inner = ", ".join(_lit(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_lit(k)}: {_lit(x)}" for k, x in v.items()) + "}"
    return repr(v)


def render_calls(calls: list[DescriptorCall], class_name: Callable[[str], str]) -> list[str]:
    """Python statements creating the descriptors (one per table/struct, ``_FB_<Class>``)."""
    lines = ['_FB_REG = _fb.registry(__name__.split(".")[0])']
    for c in calls:
        if c.kind not in ("Table", "Struct"):
            continue  # enums and unions are spelled inline in the specs that use them
        name = class_name(c.qualname)
        args = ", ".join([repr(c.qualname), name, *(_lit(a) for a in c.args)])
        kw = "".join(f", {k}={_lit(v)}" for k, v in c.kwargs.items()) + ", reg=_FB_REG"
        lines.append(f"_FB_{name}: _fb.{c.kind}[{name}] = _fb.{c.kind}({args}{kw})")
    return lines


def codec_view(b: Any, f: ir.SchemaFile, records: list[Any], schema: ir.Schema) -> Any:
    """CodecView for one generated module: thin methods per record + descriptor block."""
    from ..pygen.views import CodecView

    attrs: dict[tuple[str, str], str] = {}
    for r in records:
        for fv in r.fields:
            attrs[(r.qualname, fv.schema_name)] = fv.name
    decls = schema.decls()

    def attr(q: str, n: str) -> str:
        return attrs.get((q, n), py_attr(n))

    calls = descriptor_calls(schema, f, attr, b.names.class_name, b.namespace)
    keyed = {
        r.qualname
        for r in records
        if isinstance(decls.get(r.qualname), ir.Struct)
        and any(fl.key for fl in decls[r.qualname].fields)  # type: ignore[union-attr]
    }
    lines = render_calls(calls, lambda q: b.names.class_name(q))
    return CodecView(
        method_template="fbs_methods.j2",
        tail_template="fbs_codec.j2",
        imports=(
            "from idlgen.wire import flatbuffers as _fb",
            "from idlgen.wire import fbjson as _fbjson",
            "from collections.abc import Sequence",
        ),
        context={"lines": lines, "keyed": keyed},
    )
