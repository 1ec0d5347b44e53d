"""Enum and field declarations: plain records generated code creates, which the codec modules
(handlers, decoder, encoder) read. They hold no codec logic, so every module may import them.

The small constructors generated descriptor tables are written with live here too: ``field``
(one table or struct field, by keyword) and the type specs ``vector``, ``array``, ``table``,
``struct``, ``enum``, ``union`` and ``member``. A type spec is a plain literal: a scalar's
``struct`` format char (``"i"``), ``"string"``, or a tuple tagged by its kind, which the
descriptors resolve on first use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .registry import registry

__all__ = [
    "Enum",
    "Field",
    "TypeSpec",
    "field",
    "vector",
    "array",
    "table",
    "struct",
    "enum",
    "union",
    "member",
]

# A field's type: a scalar format char, "string", or a tagged tuple (see the module docstring).
TypeSpec = str | tuple[Any, ...]


class Enum:
    """Registers an enum class so that fields of that enum decode to members.

    ``renamed`` maps Python member names that differ from the schema's (``None_``) to the
    schema name (``None``): JSON is written and read by schema names, as flatc does.
    """

    def __init__(
        self,
        qualname: str,
        cls: Callable[[int], Any],
        fmt: str,
        bit_flags: bool = False,
        *,
        reg: dict[str, Any] | None = None,
        renamed: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.qualname = qualname
        self.cls = cls
        self.fmt = fmt
        self.bit_flags = bit_flags
        self.reg = registry() if reg is None else reg
        self.reg[qualname] = self
        # either given here (the enum spec) or recorded on the class (``_schema_names_``)
        to_schema = {**getattr(cls, "_schema_names_", {}), **dict(renamed)}
        members: dict[str, Any] = dict(getattr(cls, "__members__", {}))
        # (value, schema name) in declaration order, aliases included, for writing
        self.names: list[tuple[int, str]] = [
            (int(m), to_schema.get(n, n)) for n, m in members.items()
        ]
        # schema name -> member, for reading
        self.by_name: dict[str, Any] = {to_schema.get(n, n): m for n, m in members.items()}


class Field:
    """One table or struct field. ``slot`` is the vtable slot (union: the value's slot; the
    hidden ``_type`` field uses ``slot - 1``)."""

    __slots__ = (
        "attr",
        "name",
        "slot",
        "spec",
        "default",
        "optional",
        "required",
        "key",
        "deprecated",
        "shared",
        "nested",
        "hash",
        "force_align",
        "flexbuffer",
        "nested_desc",
        "offset64",
        "vector64",
    )

    def __init__(
        self,
        attr: str,
        name: str,
        slot: int,
        spec: Any,
        default: Any = None,
        *,
        optional: bool = False,
        required: bool = False,
        key: bool = False,
        deprecated: bool = False,
        shared: bool = False,
        nested: str = "",
        hash: str = "",
        force_align: int = 0,
        flexbuffer: bool = False,
        offset64: bool = False,
        vector64: bool = False,
    ) -> None:
        self.attr = attr
        self.name = name
        self.slot = slot
        self.spec = spec
        self.default = default
        self.optional = optional
        self.required = required
        self.key = key
        self.deprecated = deprecated
        self.shared = shared
        self.nested = nested
        self.hash = hash
        self.force_align = force_align
        self.flexbuffer = flexbuffer
        self.offset64 = offset64  # a string/vector addressed by a 64-bit offset
        self.vector64 = vector64  # ... whose length is 64-bit too
        self.nested_desc: Any = None


def field(
    name: str,
    *,
    type: TypeSpec,
    slot: int = -1,
    default: Any = None,
    attr: str = "",
    optional: bool = False,
    required: bool = False,
    key: bool = False,
    deprecated: bool = False,
    shared: bool = False,
    nested: str = "",
    hash: str = "",
    force_align: int = 0,
    flexbuffer: bool = False,
    offset64: bool = False,
    vector64: bool = False,
) -> Field:
    """A table field (``slot``: its vtable slot) or a struct field (no slot), by its schema
    ``name``; ``attr`` is the Python attribute when it differs from the name (``class_``)."""
    return Field(
        attr or name,
        name,
        slot,
        type,
        default,
        optional=optional,
        required=required,
        key=key,
        deprecated=deprecated,
        shared=shared,
        nested=nested,
        hash=hash,
        force_align=force_align,
        flexbuffer=flexbuffer,
        offset64=offset64,
        vector64=vector64,
    )


def vector(element: TypeSpec) -> TypeSpec:
    """A vector of ``element``."""
    return ("vector", element)


def array(element: TypeSpec, length: int) -> TypeSpec:
    """A struct's fixed-length array: ``length`` elements of type ``element``."""
    return ("array", element, length)


def table(qualname: str) -> TypeSpec:
    """A table, looked up by qualified name in the registry on first use."""
    return ("table", qualname)


def struct(qualname: str) -> TypeSpec:
    """A struct, looked up by qualified name in the registry on first use."""
    return ("struct", qualname)


def enum(qualname: str, *, base: str = "", cls: str = "") -> TypeSpec:
    """An enum over the scalar format ``base``. Generated code names its class (``cls``),
    imported from the namespace package on first use; without them the enum is looked up by
    qualified name in the registry."""
    return ("enum", qualname, base, cls) if base else ("enum", qualname)


def member(name: str, *, value: int, type: TypeSpec) -> tuple[str, int, TypeSpec]:
    """A union member: its schema ``name``, discriminant ``value`` and type."""
    return (name, value, type)


def union(
    qualname: str,
    *,
    members: Sequence[tuple[str, int, TypeSpec]] | None = None,
    disc: str = "B",
) -> TypeSpec:
    """A union, spelled out inline with its ``members`` and discriminant format ``disc`` (what
    generated code does); without members it is looked up by qualified name in the registry."""
    return ("union", qualname) if members is None else ("union", qualname, disc, tuple(members))
