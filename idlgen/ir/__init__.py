"""The schema IR shared by every front end (HDI, FlatBuffers) and every back end.

All nodes are frozen, slotted dataclasses holding tuples, so a whole schema is immutable and
hashable. Source spans are carried for messages but excluded from equality and hashing: two
versions of a schema that differ only in layout or position compare equal, which is what the
version diff builds on.

Names: every declaration has a short ``name`` and the ``namespace`` it lives in (HDI package such
as ``ohos.hdi.nnrt.v2_1``, FlatBuffers namespace such as ``armnnSerializer``; ``""`` for the
global FlatBuffers namespace). Type references always use the fully qualified name.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias

__all__ = [
    "Span",
    "ScalarKind",
    "Scalar",
    "String",
    "Vector",
    "FixedArray",
    "Map",
    "Handle",
    "HandleKind",
    "SharedMemQueue",
    "Ref",
    "RefKind",
    "TypeRef",
    "Attribute",
    "EnumMember",
    "Enum",
    "Field",
    "Struct",
    "UnionMember",
    "Union",
    "Param",
    "Method",
    "Interface",
    "Sequenceable",
    "Decl",
    "SchemaFile",
    "Schema",
    "DefaultValue",
    "span_field",
]


class Span(NamedTuple):
    """A region of a source file; lines and columns are 1-based, ``end_col`` is exclusive.

    A named tuple rather than a dataclass: parsing creates one per token of interest, and
    tuple construction is several times cheaper than a frozen dataclass's.
    """

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def span_field() -> Any:
    """A dataclass field for a span: optional, and invisible to ``==``, ``hash`` and ``repr``."""
    return field(default=None, compare=False, hash=False, repr=False)


# ----------------------------------------------------------------------------------------------
# Types


class ScalarKind(enum.Enum):
    """Fixed-size scalars; the value is (size in bytes, struct format char)."""

    BOOL = (1, "?")
    I8 = (1, "b")
    U8 = (1, "B")
    I16 = (2, "h")
    U16 = (2, "H")
    I32 = (4, "i")
    U32 = (4, "I")
    I64 = (8, "q")
    U64 = (8, "Q")
    F32 = (4, "f")
    F64 = (8, "d")

    @property
    def size(self) -> int:
        return int(self.value[0])

    @property
    def fmt(self) -> str:
        return str(self.value[1])

    @property
    def is_integer(self) -> bool:
        return self not in (ScalarKind.BOOL, ScalarKind.F32, ScalarKind.F64)

    @property
    def is_float(self) -> bool:
        return self in (ScalarKind.F32, ScalarKind.F64)

    @property
    def is_signed(self) -> bool:
        return (
            self in (ScalarKind.I8, ScalarKind.I16, ScalarKind.I32, ScalarKind.I64) or self.is_float
        )

    @property
    def bounds(self) -> tuple[int, int]:
        """Inclusive integer range (``(0, 1)`` for bool)."""
        if self is ScalarKind.BOOL:
            return (0, 1)
        bits = self.size * 8
        if self.is_signed:
            return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        return (0, (1 << bits) - 1)


@dataclass(frozen=True, slots=True)
class Scalar:
    kind: ScalarKind


@dataclass(frozen=True, slots=True)
class String:
    pass


@dataclass(frozen=True, slots=True)
class Vector:
    """A variable-length sequence: HDI ``T[]`` / ``List<T>``, FlatBuffers ``[T]``.

    ``spelling`` records how the schema wrote it (``"array"`` for ``T[]``/``[T]``, ``"list"`` for
    ``List<T>``); the two are the same on the wire.
    """

    element: TypeRef
    spelling: Literal["array", "list"] = "array"


@dataclass(frozen=True, slots=True)
class FixedArray:
    """FlatBuffers ``[T:N]`` inside a struct."""

    element: TypeRef
    length: int


@dataclass(frozen=True, slots=True)
class Map:
    key: TypeRef
    value: TypeRef


class HandleKind(enum.Enum):
    """HDI types that travel out of band (kernel objects), or not at all (``Pointer``)."""

    FILE_DESCRIPTOR = "FileDescriptor"
    ASHMEM = "Ashmem"
    NATIVE_BUFFER = "NativeBuffer"
    POINTER = "Pointer"


@dataclass(frozen=True, slots=True)
class Handle:
    kind: HandleKind


@dataclass(frozen=True, slots=True)
class SharedMemQueue:
    element: TypeRef


class RefKind(enum.Enum):
    ENUM = "enum"
    STRUCT = "struct"  # HDI struct, FlatBuffers struct (inline, fixed layout)
    TABLE = "table"  # FlatBuffers table
    UNION = "union"
    INTERFACE = "interface"
    SEQUENCEABLE = "sequenceable"


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to a declared type by its fully qualified name."""

    qualname: str
    kind: RefKind

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


TypeRef: TypeAlias = Scalar | String | Vector | FixedArray | Map | Handle | SharedMemQueue | Ref

# A field default: int/float/bool/str scalars, ``None`` for "no default / optional scalar",
# ``()`` for an empty-vector default. NaN defaults are always ``math.nan`` (one object) so that
# identical schemas compare equal.
DefaultValue: TypeAlias = int | float | bool | str | tuple[()] | None


# ----------------------------------------------------------------------------------------------
# Declarations


class _Declared:
    """Mixin of declarations: the qualified name from ``namespace`` and ``name``."""

    __slots__ = ()
    name: str
    namespace: str

    @property
    def qualname(self) -> str:
        return f"{self.namespace}.{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class Attribute:
    """A metadata attribute: HDI ``[oneway]``, FlatBuffers ``(id: 3)``; value is text or None."""

    name: str
    value: str | int | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class EnumMember:
    name: str
    value: int
    doc: str = ""
    # The expression as written (HDI ``1 << 3``) or "" when implicit.
    expr: str = ""
    # Qualified name of the enum this member was inherited from (HDI ``enum B : A``), else "".
    inherited_from: str = ""
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Enum(_Declared):
    name: str
    namespace: str
    base: ScalarKind
    members: tuple[EnumMember, ...]
    doc: str = ""
    # HDI enum extension: the parent enum's qualified name.
    parent: str = ""
    bit_flags: bool = False
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: TypeRef
    doc: str = ""
    default: DefaultValue = None
    # FlatBuffers: vtable slot (0-based field id, after unions take two). None for HDI.
    slot: int | None = None
    deprecated: bool = False
    required: bool = False
    key: bool = False
    # FlatBuffers ``= null``: an optional scalar.
    optional: bool = False
    # HDI struct extension: the struct the member was copied from, else "".
    inherited_from: str = ""
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Struct(_Declared):
    """HDI struct, FlatBuffers struct (``is_table=False``) or FlatBuffers table (``is_table``).

    ``fields`` is the complete, flattened member list in wire order (an HDI parent's members
    first).
    """

    name: str
    namespace: str
    fields: tuple[Field, ...]
    doc: str = ""
    is_table: bool = False
    parent: str = ""
    # FlatBuffers ``force_align`` on a struct, else 0.
    force_align: int = 0
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class UnionMember:
    """HDI: a typed member (``int a;``); FlatBuffers: ``Alias: Type = value``."""

    name: str
    type: TypeRef
    # FlatBuffers discriminant value; None for HDI.
    value: int | None = None
    doc: str = ""
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Union(_Declared):
    name: str
    namespace: str
    members: tuple[UnionMember, ...]
    doc: str = ""
    # FlatBuffers discriminant type (ubyte unless declared); None for HDI.
    discriminant: ScalarKind | None = None
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: TypeRef
    direction: Literal["in", "out"]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params: tuple[Param, ...]
    doc: str = ""
    oneway: bool = False
    # HDI command id (GetVersion = 0, then declaration order across ``extends``).
    cmd_id: int = 0
    # True for an HDI method that redeclares an ancestor's name (constant gets ``_<id>``).
    overload: bool = False
    # True for HDI's implicit GetVersion.
    implicit: bool = False
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Interface(_Declared):
    """HDI interface or FlatBuffers ``rpc_service``.

    ``methods`` lists only this interface's own methods (HDI: with the implicit ``GetVersion``
    first when the interface has no parent); inherited ones are reached through ``parent``.
    """

    name: str
    namespace: str
    methods: tuple[Method, ...]
    doc: str = ""
    parent: str = ""
    callback: bool = False
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Sequenceable(_Declared):
    """HDI ``sequenceable a.b.Name;``: an opaque, natively marshalled object."""

    name: str
    namespace: str
    span: Span | None = span_field()


Decl: TypeAlias = Enum | Struct | Union | Interface | Sequenceable


@dataclass(frozen=True, slots=True)
class SchemaFile:
    """One source file.

    ``path`` is the path as given to the loader (used in messages); ``namespace`` is the HDI
    package or the first FlatBuffers namespace; ``decls`` are declared in this file, each with
    its own namespace.
    """

    path: str
    language: Literal["hdi", "fbs"]
    namespace: str
    decls: tuple[Decl, ...]
    # HDI: (major, minor) from the package name.
    version: tuple[int, int] | None = None
    # HDI imports (qualified names) / FlatBuffers includes (paths as written).
    imports: tuple[str, ...] = ()
    doc: str = ""
    # FlatBuffers file-level declarations.
    root_type: str = ""
    file_identifier: str = ""
    file_extension: str = ""
    # sha256 of the file bytes (hex); used in generated headers and build manifests.
    digest: str = field(default="", compare=False)
    span: Span | None = span_field()

    @property
    def stem(self) -> str:
        base = self.path.replace("\\", "/").rsplit("/", 1)[-1]
        return base.rsplit(".", 1)[0]


@dataclass(frozen=True, slots=True)
class Schema:
    """A loaded, checked set of files (the input files and everything they import)."""

    files: tuple[SchemaFile, ...]

    def decls(self) -> dict[str, Decl]:
        """Every declaration by qualified name."""
        return {d.qualname: d for f in self.files for d in f.decls}

    def file_of(self, qualname: str) -> SchemaFile | None:
        for f in self.files:
            for d in f.decls:
                if d.qualname == qualname:
                    return f
        return None
