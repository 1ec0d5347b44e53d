"""The syntax tree of one ``.fbs`` file, before names are resolved (see ``lower.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ...ir import Span

__all__ = [
    "AttrAst",
    "NamedType",
    "VectorTypeAst",
    "ArrayTypeAst",
    "TypeAst",
    "DefaultAst",
    "FieldAst",
    "TypeDeclAst",
    "EnumValAst",
    "EnumDeclAst",
    "UnionValAst",
    "UnionDeclAst",
    "RpcAst",
    "RpcDeclAst",
    "Directive",
    "ItemAst",
    "FileAst",
]


@dataclass(slots=True)
class AttrAst:
    name: str
    value: str | int | float | None
    span: Span


@dataclass(slots=True)
class NamedType:
    name: str
    span: Span


@dataclass(slots=True)
class VectorTypeAst:
    element: TypeAst
    span: Span


@dataclass(slots=True)
class ArrayTypeAst:
    element: TypeAst
    length: str
    span: Span


TypeAst: TypeAlias = NamedType | VectorTypeAst | ArrayTypeAst


@dataclass(slots=True)
class DefaultAst:
    kind: Literal["number", "string", "idents", "empty", "func"]
    # number/func: the literal text; string: decoded text; idents: the names; func: (name, arg).
    value: Any
    span: Span


@dataclass(slots=True)
class FieldAst:
    name: str
    type: TypeAst
    default: DefaultAst | None
    attrs: list[AttrAst]
    doc: str
    span: Span


@dataclass(slots=True)
class TypeDeclAst:
    kind: Literal["table", "struct"]
    name: str
    attrs: list[AttrAst]
    fields: list[FieldAst]
    doc: str
    span: Span
    namespace: str = ""


@dataclass(slots=True)
class EnumValAst:
    name: str
    value: str | None
    attrs: list[AttrAst]
    doc: str
    span: Span


@dataclass(slots=True)
class EnumDeclAst:
    name: str
    base: TypeAst
    attrs: list[AttrAst]
    values: list[EnumValAst]
    doc: str
    span: Span
    namespace: str = ""


@dataclass(slots=True)
class UnionValAst:
    name: str  # alias, or the type name as written
    type: TypeAst | None  # set when aliased (``Alias: Type``)
    value: str | None
    attrs: list[AttrAst]
    doc: str
    span: Span


@dataclass(slots=True)
class UnionDeclAst:
    name: str
    base: TypeAst | None
    attrs: list[AttrAst]
    values: list[UnionValAst]
    doc: str
    span: Span
    namespace: str = ""


@dataclass(slots=True)
class RpcAst:
    name: str
    request: NamedType
    response: NamedType
    attrs: list[AttrAst]
    doc: str
    span: Span


@dataclass(slots=True)
class RpcDeclAst:
    name: str
    attrs: list[AttrAst]
    methods: list[RpcAst]
    doc: str
    span: Span
    namespace: str = ""


@dataclass(slots=True)
class Directive:
    """include / native_include / namespace / attribute / root_type / file_identifier /
    file_extension: ``value`` is the string or dotted name."""

    kind: str
    value: str
    span: Span
    namespace: str = ""


ItemAst: TypeAlias = TypeDeclAst | EnumDeclAst | UnionDeclAst | RpcDeclAst | Directive


@dataclass(slots=True)
class FileAst:
    path: str
    items: list[ItemAst] = field(default_factory=list)
    json: Any = None
    json_span: Span | None = None
