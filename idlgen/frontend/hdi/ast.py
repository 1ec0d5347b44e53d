"""The raw HDI syntax tree: what one file says, before names are resolved or values computed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

from ...ir import Span

__all__ = [
    "Name",
    "RawType",
    "Expr",
    "Num",
    "NameRef",
    "Unary",
    "Binary",
    "Paren",
    "RawEnumMember",
    "RawEnum",
    "RawMember",
    "RawStruct",
    "RawUnion",
    "RawParam",
    "RawMethod",
    "RawInterface",
    "RawDecl",
    "RawFile",
]


@dataclass(frozen=True, slots=True)
class Name:
    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class RawType:
    """``kind`` is ``prim`` (``name`` = keyword), ``unsigned``, ``list``, ``map``, ``smq`` or
    ``named`` (``name`` = identifier, ``prefix`` = enum/struct/union/sequenceable or "").
    ``dims`` counts trailing ``[]``."""

    kind: str
    name: str
    span: Span
    args: tuple[RawType, ...] = ()
    prefix: str = ""
    dims: int = 0

    def text(self) -> str:
        if self.kind == "unsigned":
            base = f"unsigned {self.name}"
        elif self.kind == "list":
            base = f"List<{self.args[0].text()}>"
        elif self.kind == "map":
            base = f"Map<{self.args[0].text()}, {self.args[1].text()}>"
        elif self.kind == "smq":
            base = f"SharedMemQueue<{self.args[0].text()}>"
        elif self.prefix:
            base = f"{self.prefix} {self.name}"
        else:
            base = self.name
        return base + "[]" * self.dims


@dataclass(frozen=True, slots=True)
class Num:
    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class NameRef:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    op: str
    operand: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Paren:
    inner: Expr
    span: Span


Expr = Num | NameRef | Unary | Binary | Paren


def expr_text(e: Expr) -> str:
    """The expression as hdi-gen re-emits it (operators spaced, parentheses where written)."""
    if isinstance(e, Num):
        return e.text
    if isinstance(e, NameRef):
        return e.name
    if isinstance(e, Unary):
        return f"{e.op}{expr_text(e.operand)}"
    if isinstance(e, Paren):
        return f"({expr_text(e.inner)})"
    return f"{expr_text(e.left)} {e.op} {expr_text(e.right)}"


@dataclass(slots=True)
class RawEnumMember:
    name: Name
    value: Expr | None
    span: Span
    start: int
    end: int
    doc: str = ""


@dataclass(slots=True)
class RawEnum:
    name: Name
    base: RawType | None
    members: list[RawEnumMember]
    attrs: list[Name]
    span: Span
    start: int
    end: int
    doc: str = ""


@dataclass(slots=True)
class RawMember:
    type: RawType
    name: Name
    span: Span
    start: int
    end: int
    doc: str = ""


@dataclass(slots=True)
class RawStruct:
    name: Name
    parent: RawType | None
    members: list[RawMember]
    attrs: list[Name]
    span: Span
    start: int
    end: int
    doc: str = ""


@dataclass(slots=True)
class RawUnion:
    name: Name
    members: list[RawMember]
    attrs: list[Name]
    span: Span
    start: int
    end: int
    doc: str = ""


@dataclass(slots=True)
class RawParam:
    direction: str
    type: RawType
    name: Name
    span: Span


@dataclass(slots=True)
class RawMethod:
    name: Name
    params: list[RawParam]
    attrs: list[Name]
    span: Span
    start: int
    end: int
    doc: str = ""


@dataclass(slots=True)
class RawInterface:
    name: Name
    extends: Name | None
    methods: list[RawMethod]
    attrs: list[Name]
    span: Span
    start: int
    end: int
    doc: str = ""


RawDecl = RawEnum | RawStruct | RawUnion | RawInterface


@dataclass(slots=True)
class RawFile:
    path: str
    package: Name
    imports: list[Name] = field(default_factory=list)
    sequenceables: list[Name] = field(default_factory=list)
    decls: list[RawDecl] = field(default_factory=list)


_T = TypeVar("_T")


def fast_constructor(cls: type[_T], *names: str) -> Callable[..., _T]:
    """``cls(**dict(zip(names, args)))`` for a frozen, slotted dataclass without
    ``__post_init__``, the other fields taking their defaults, that stores through the slots:
    the generated ``__init__`` goes through ``object.__setattr__`` per field, 2-3x the cost, on
    every type, name, member and parameter of the corpus. Any other class: that call."""
    fs = fields(cls)  # type: ignore[arg-type]
    known = {f.name for f in fs}
    if (
        hasattr(cls, "__post_init__")
        or "__slots__" not in cls.__dict__
        or not set(names) <= known
        or any(f.name not in names and f.default is MISSING for f in fs)
        or any(not f.init for f in fs)
    ):
        return lambda *args: cls(**dict(zip(names, args)))
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = []
    for i, f in enumerate(fs):
        env[f"_set{i}"] = getattr(cls, f.name).__set__
        if f.name in names:
            body.append(f"    _set{i}(o, {f.name})")
        else:
            env[f"_default{i}"] = f.default
            body.append(f"    _set{i}(o, _default{i})")
    src = (
        f"def make({', '.join(names)}):\n    o = _new(_cls)\n"
        + "\n".join(body)
        + "\n    return o\n"
    )
    exec(src, env)  # noqa: S102 - field names of our own dataclasses
    return env["make"]  # type: ignore[no-any-return]
