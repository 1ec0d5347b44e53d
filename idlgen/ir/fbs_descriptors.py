"""IR → FlatBuffers descriptor specs (constructor arguments for :mod:`idlgen.wire.flatbuffers`).

:func:`descriptor_calls` is a pure function of the IR, shared by the back end (which renders
the calls into generated modules) and the loader's check of a JSON document that follows a
schema (:func:`validation_descriptors`: descriptors over throwaway record classes; those
classes are never handed to users).
"""

from __future__ import annotations

import dataclasses
import enum
import keyword
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import ir

__all__ = [
    "DescriptorCall",
    "ClassName",
    "type_spec",
    "descriptor_calls",
    "validation_descriptors",
    "py_attr",
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
    qualified name (looked up in a registry, see :func:`validation_descriptors`). With it (what generated
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
            # members renamed in Python (``None`` -> ``None_``) keep their schema names through
            # the class's ``_schema_names_``, which the runtime reads
            return ("enum", t.qualname, d.base.fmt, class_name(t.qualname))
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
                fields_kw.append(
                    (
                        at(d.qualname, f.name),
                        f.name,
                        f.slot,
                        spec(f.type),
                        _field_default(f),
                        _field_kwargs(schema, d, f),
                    )
                )
            kw = {}
            if file.root_type == d.qualname and file.file_identifier:
                kw["identifier"] = file.file_identifier
            out.append(DescriptorCall("Table", d.qualname, d.name, (tuple(fields_kw),), kw))
    return out


def _field_kwargs(schema: ir.Schema, d: ir.Struct, f: ir.Field) -> dict[str, Any]:
    """A table field's flags and attributes as its descriptor's keyword arguments."""
    fkw: dict[str, Any] = {}
    for flag in ("optional", "required", "key", "deprecated"):
        if getattr(f, flag):
            fkw[flag] = True
    if not f.attributes:  # most fields: no attribute to look up
        return fkw
    # offset64/vector64: 64-bit offsets (and vector lengths)
    for name in ("shared", "flexbuffer", "offset64", "vector64"):
        if _attr(f, name):
            fkw[name] = True
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
    return fkw


def _resolve_nested(schema: ir.Schema, ns: str, name: str) -> str:
    decls = schema.decls()
    parts = ns.split(".") if ns else []
    for i in range(len(parts), -1, -1):
        q = ".".join(parts[:i] + [name])
        if q in decls:
            return q
    return ""


# ---------------------------------------------------------------------------------------------
# Descriptors straight from the IR (load-time JSON validation)


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


def validation_descriptors(schema: ir.Schema) -> dict[str, Any]:
    """Descriptors of every declaration by qualified name, over plain dataclasses.

    Only for validating data against a schema at load time (no generated code exists yet).
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
    out: dict[str, Any] = {}
    for file in schema.files:
        for c in descriptor_calls(schema, file):
            if c.kind == "Enum":
                out[c.qualname] = fb.Enum(c.qualname, classes[c.qualname], *c.args, reg=reg)
            elif c.kind == "Union":
                out[c.qualname] = fb.Union(c.qualname, *c.args, reg=reg)
            elif c.kind == "Struct":
                out[c.qualname] = fb.Struct(
                    c.qualname, classes[c.qualname], *c.args, **c.kwargs, reg=reg
                )
            else:
                out[c.qualname] = fb.Table(
                    c.qualname, classes[c.qualname], *c.args, **c.kwargs, reg=reg
                )
    return out
