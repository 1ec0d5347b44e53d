"""IR → FlatBuffers descriptors (what :mod:`idlgen.wire.flatbuffers` builds at import time).

:func:`descriptors` is a pure function of the IR: typed views of the descriptors of a file's
declarations (:class:`TableDesc`, :class:`StructDesc`, :class:`EnumDesc`, :class:`UnionDesc`),
their fields (:class:`FieldDesc`) and field types (:data:`TypeView`). The back end writes them
into generated modules through ``templates/_flatbuffers.j2`` (keyword arguments, one
``_fb.field(...)`` per field); :func:`build` constructs the same runtime descriptors from them
directly, through the same runtime constructors (``_fb.field``, ``_fb.vector``...), which is how
the loader checks a JSON document that follows a schema (:func:`validation_descriptors`:
descriptors over throwaway record classes; those classes are never handed to users).
"""

from __future__ import annotations

import dataclasses
import enum
import keyword
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from .. import ir

__all__ = [
    "ScalarType",
    "StringType",
    "VectorOf",
    "ArrayOf",
    "TableRef",
    "StructRef",
    "EnumRef",
    "UnionOf",
    "UnionMember",
    "TypeView",
    "FieldDesc",
    "TableDesc",
    "StructDesc",
    "EnumDesc",
    "UnionDesc",
    "Descriptor",
    "type_view",
    "descriptors",
    "runtime_type",
    "build",
    "validation_descriptors",
    "py_attr",
]

# Every view class has a ``kind``: what templates/_flatbuffers.j2 dispatches on.


def py_attr(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or keyword.issoftkeyword(name) else name


@dataclass(frozen=True, slots=True)
class ScalarType:
    """A scalar, by its ``struct`` format char (``"i"``, ``"?"``...)."""

    fmt: str
    kind: ClassVar[str] = "scalar"


@dataclass(frozen=True, slots=True)
class StringType:
    kind: ClassVar[str] = "string"


@dataclass(frozen=True, slots=True)
class VectorOf:
    element: TypeView
    kind: ClassVar[str] = "vector"


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """A struct's fixed-length array."""

    element: TypeView
    length: int
    kind: ClassVar[str] = "array"


@dataclass(frozen=True, slots=True)
class TableRef:
    qualname: str
    kind: ClassVar[str] = "table"


@dataclass(frozen=True, slots=True)
class StructRef:
    qualname: str
    kind: ClassVar[str] = "struct"


@dataclass(frozen=True, slots=True)
class EnumRef:
    """An enum; generated code gives its base format and class name (the runtime imports the
    class from the namespace package on first use), validation neither (a registry lookup)."""

    qualname: str
    base: str = ""
    cls: str = ""
    kind: ClassVar[str] = "enum"


@dataclass(frozen=True, slots=True)
class UnionMember:
    name: str
    value: int
    type: TypeView


@dataclass(frozen=True, slots=True)
class UnionOf:
    """A union field's type: spelled out inline with its members (generated code), or, with
    ``members`` None, looked up by name (validation)."""

    qualname: str
    disc: str = "B"
    members: tuple[UnionMember, ...] | None = None
    kind: ClassVar[str] = "union"


# The type of a field.
TypeView: TypeAlias = (
    ScalarType | StringType | VectorOf | ArrayOf | TableRef | StructRef | EnumRef | UnionOf
)


@dataclass(frozen=True, slots=True)
class FieldDesc:
    """A table field (with its vtable ``slot``) or a struct field (``slot`` None): schema
    ``name``, Python ``attr``, type, default and flags, as ``_fb.field`` takes them."""

    name: str
    attr: str
    type: TypeView
    slot: int | None = None
    default: Any = None
    optional: bool = False
    required: bool = False
    key: bool = False
    deprecated: bool = False
    shared: bool = False
    flexbuffer: bool = False
    offset64: bool = False
    vector64: bool = False
    nested: str = ""
    hash: str = ""
    force_align: int = 0

    @property
    def flags(self) -> tuple[tuple[str, Any], ...]:
        """The flags and attributes that are set, as (keyword, value), in declaration order."""
        return tuple((k, v) for k in _FLAGS if (v := getattr(self, k)))


_FLAGS = (
    "optional",
    "required",
    "key",
    "deprecated",
    "shared",
    "flexbuffer",
    "offset64",
    "vector64",
    "nested",
    "hash",
    "force_align",
)


@dataclass(frozen=True, slots=True)
class TableDesc:
    """``_fb.Table``; ``identifier``: the root table's ``file_identifier``."""

    qualname: str
    cls: str
    fields: tuple[FieldDesc, ...]
    identifier: str = ""
    kind: ClassVar[str] = "table"


@dataclass(frozen=True, slots=True)
class StructDesc:
    """``_fb.Struct``; ``key``: the Python attribute of the ``key`` field."""

    qualname: str
    cls: str
    fields: tuple[FieldDesc, ...]
    force_align: int = 0
    key: str = ""
    kind: ClassVar[str] = "struct"


@dataclass(frozen=True, slots=True)
class EnumDesc:
    qualname: str
    cls: str
    base: str
    bit_flags: bool
    kind: ClassVar[str] = "enum"


@dataclass(frozen=True, slots=True)
class UnionDesc:
    qualname: str
    members: tuple[UnionMember, ...]
    disc: str
    kind: ClassVar[str] = "union"


Descriptor: TypeAlias = TableDesc | StructDesc | EnumDesc | UnionDesc


def type_view(
    t: ir.TypeRef,
    decls: dict[str, ir.Decl] | None = None,
    class_name: Callable[[str], str] | None = None,
) -> TypeView:
    """The type of ``t``. Without ``class_name`` every declared type is named by qualified
    name (looked up in a registry, see :func:`validation_descriptors`). With it (what generated
    modules use) unions are spelled out inline and enums carry their generated class name, which
    the runtime imports from the namespace package on first use; nothing is referenced at import
    time, so modules that import each other still load."""
    if isinstance(t, ir.Scalar):
        return ScalarType(t.kind.fmt)
    if isinstance(t, ir.String):
        return StringType()
    if isinstance(t, ir.Vector):
        return VectorOf(type_view(t.element, decls, class_name))
    if isinstance(t, ir.FixedArray):
        return ArrayOf(type_view(t.element, decls, class_name), t.length)
    if isinstance(t, ir.Ref):
        if t.kind is ir.RefKind.TABLE:
            return TableRef(t.qualname)
        if t.kind is ir.RefKind.STRUCT:
            return StructRef(t.qualname)
        if class_name is None or decls is None:
            if t.kind is ir.RefKind.ENUM:
                return EnumRef(t.qualname)
            if t.kind is ir.RefKind.UNION:
                return UnionOf(t.qualname)
            raise ValueError(f"type {t!r} has no FlatBuffers encoding")
        d = decls[t.qualname]
        if isinstance(d, ir.Enum):
            # members renamed in Python (``None`` -> ``None_``) keep their schema names through
            # the class's ``_schema_names_``, which the runtime reads
            return EnumRef(t.qualname, d.base.fmt, class_name(t.qualname))
        if isinstance(d, ir.Union):
            return UnionOf(t.qualname, _disc(d), _members(d, decls, class_name))
    raise ValueError(f"type {t!r} has no FlatBuffers encoding")


def _disc(d: ir.Union) -> str:
    return (d.discriminant or ir.ScalarKind.U8).fmt


def _members(
    d: ir.Union, decls: dict[str, ir.Decl] | None, class_name: Callable[[str], str] | None
) -> tuple[UnionMember, ...]:
    out = []
    for m in d.members:
        assert m.value is not None  # FlatBuffers members have values (None: HDI only)
        out.append(UnionMember(m.name, m.value, type_view(m.type, decls, class_name)))
    return tuple(out)


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


def descriptors(
    schema: ir.Schema,
    file: ir.SchemaFile,
    attr: Callable[[str, str], str] | None = None,
    class_name: Callable[[str], str] | None = None,
    namespace: str | None = None,
) -> list[Descriptor]:
    """The descriptors of the declarations of ``file`` (those in ``namespace`` when given), in
    declaration order. ``attr(qualname, field)`` names Python attributes (default
    :func:`py_attr`); ``class_name`` names generated classes (default: the declaration's name),
    see :func:`type_view` for what it changes in field types."""
    decls = schema.decls()
    at = attr or (lambda q, n: py_attr(n))
    cls = class_name or (lambda q: decls[q].name)

    def spec(t: ir.TypeRef) -> TypeView:
        return type_view(t, decls, class_name)

    out: list[Descriptor] = []
    for d in file.decls:
        if namespace is not None and d.namespace != namespace:
            continue
        if isinstance(d, ir.Enum):
            out.append(EnumDesc(d.qualname, cls(d.qualname), d.base.fmt, d.bit_flags))
        elif isinstance(d, ir.Union):
            out.append(UnionDesc(d.qualname, _members(d, decls, class_name), _disc(d)))
        elif isinstance(d, ir.Struct) and not d.is_table:
            fields = tuple(
                FieldDesc(f.name, at(d.qualname, f.name), spec(f.type)) for f in d.fields
            )
            key = next((at(d.qualname, f.name) for f in d.fields if f.key), "")
            out.append(StructDesc(d.qualname, cls(d.qualname), fields, d.force_align or 0, key))
        elif isinstance(d, ir.Struct):
            tfields = []
            for f in d.fields:
                assert f.slot is not None
                tfields.append(
                    FieldDesc(
                        f.name,
                        at(d.qualname, f.name),
                        spec(f.type),
                        f.slot,
                        _field_default(f),
                        **_field_flags(schema, d, f),
                    )
                )
            ident = file.file_identifier if file.root_type == d.qualname else ""
            out.append(TableDesc(d.qualname, cls(d.qualname), tuple(tfields), ident or ""))
    return out


def _field_flags(schema: ir.Schema, d: ir.Struct, f: ir.Field) -> dict[str, Any]:
    """A table field's flags and attributes (:class:`FieldDesc`'s keyword arguments)."""
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
# Runtime descriptors straight from the views (load-time JSON validation, tests)


def runtime_type(t: TypeView) -> Any:
    """The runtime type spec of ``t``, made by the constructors generated code calls."""
    from ..wire import flatbuffers as fb

    if isinstance(t, ScalarType):
        return t.fmt
    if isinstance(t, StringType):
        return "string"
    if isinstance(t, VectorOf):
        return fb.vector(runtime_type(t.element))
    if isinstance(t, ArrayOf):
        return fb.array(runtime_type(t.element), t.length)
    if isinstance(t, TableRef):
        return fb.table(t.qualname)
    if isinstance(t, StructRef):
        return fb.struct(t.qualname)
    if isinstance(t, EnumRef):
        return fb.enum(t.qualname, base=t.base, cls=t.cls)
    members = None if t.members is None else [_member(m) for m in t.members]
    return fb.union(t.qualname, members=members, disc=t.disc)


def _member(m: UnionMember) -> tuple[str, int, Any]:
    from ..wire import flatbuffers as fb

    return fb.member(m.name, value=m.value, type=runtime_type(m.type))


def _field(f: FieldDesc) -> Any:
    from ..wire import flatbuffers as fb

    return fb.field(
        f.name,
        attr=f.attr,
        slot=-1 if f.slot is None else f.slot,
        type=runtime_type(f.type),
        default=f.default,
        optional=f.optional,
        required=f.required,
        key=f.key,
        deprecated=f.deprecated,
        shared=f.shared,
        flexbuffer=f.flexbuffer,
        offset64=f.offset64,
        vector64=f.vector64,
        nested=f.nested,
        hash=f.hash,
        force_align=f.force_align,
    )


def build(d: Descriptor, cls: Any, reg: dict[str, Any]) -> Any:
    """The runtime descriptor of ``d`` over the class ``cls`` (None for a union), registered
    in ``reg``: what the generated module's statement for ``d`` builds."""
    from ..wire import flatbuffers as fb

    if isinstance(d, TableDesc):
        fields = [_field(f) for f in d.fields]
        return fb.Table(d.qualname, cls, fields=fields, identifier=d.identifier, reg=reg)
    if isinstance(d, StructDesc):
        fields = [_field(f) for f in d.fields]
        return fb.Struct(
            d.qualname, cls, fields=fields, force_align=d.force_align, key=d.key, reg=reg
        )
    if isinstance(d, EnumDesc):
        return fb.Enum(d.qualname, cls, d.base, d.bit_flags, reg=reg)
    return fb.Union(d.qualname, members=[_member(m) for m in d.members], disc=d.disc, reg=reg)


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
        for v in descriptors(schema, file):
            out[v.qualname] = build(v, classes.get(v.qualname), reg)
    return out
