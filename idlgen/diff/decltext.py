"""Normalised one-line declaration texts, for side-by-side display and stable fingerprints.

Rendered from the IR rather than copied from the source, so whitespace, comments and line
moves never change them.
"""

from __future__ import annotations

from typing import Literal

from .. import ir

__all__ = [
    "type_text",
    "field_text",
    "method_text",
    "param_text",
    "member_text",
    "decl_text",
]

Lang = Literal["hdi", "fbs"]

_HDI_SCALARS = {
    ir.ScalarKind.BOOL: "boolean",
    ir.ScalarKind.I8: "byte",
    ir.ScalarKind.I16: "short",
    ir.ScalarKind.I32: "int",
    ir.ScalarKind.I64: "long",
    ir.ScalarKind.U8: "unsigned char",
    ir.ScalarKind.U16: "unsigned short",
    ir.ScalarKind.U32: "unsigned int",
    ir.ScalarKind.U64: "unsigned long",
    ir.ScalarKind.F32: "float",
    ir.ScalarKind.F64: "double",
}
_FBS_SCALARS = {
    ir.ScalarKind.BOOL: "bool",
    ir.ScalarKind.I8: "byte",
    ir.ScalarKind.I16: "short",
    ir.ScalarKind.I32: "int",
    ir.ScalarKind.I64: "long",
    ir.ScalarKind.U8: "ubyte",
    ir.ScalarKind.U16: "ushort",
    ir.ScalarKind.U32: "uint",
    ir.ScalarKind.U64: "ulong",
    ir.ScalarKind.F32: "float",
    ir.ScalarKind.F64: "double",
}


def scalar_text(k: ir.ScalarKind, lang: Lang) -> str:
    return (_HDI_SCALARS if lang == "hdi" else _FBS_SCALARS)[k]


def type_text(t: ir.TypeRef, lang: Lang) -> str:
    if isinstance(t, ir.Scalar):
        return scalar_text(t.kind, lang)
    if isinstance(t, ir.String):
        return "String" if lang == "hdi" else "string"
    if isinstance(t, ir.Vector):
        e = type_text(t.element, lang)
        if lang == "fbs":
            return f"[{e}]"
        return f"List<{e}>" if t.spelling == "list" else f"{e}[]"
    if isinstance(t, ir.FixedArray):
        return f"[{type_text(t.element, lang)}:{t.length}]"
    if isinstance(t, ir.Map):
        return f"Map<{type_text(t.key, lang)}, {type_text(t.value, lang)}>"
    if isinstance(t, ir.Handle):
        return t.kind.value
    if isinstance(t, ir.SharedMemQueue):
        return f"SharedMemQueue<{type_text(t.element, lang)}>"
    if lang == "hdi" and t.kind in (
        ir.RefKind.ENUM,
        ir.RefKind.STRUCT,
        ir.RefKind.UNION,
    ):
        return f"{t.kind.value} {t.name}"
    return t.name


def _value_text(v: ir.DefaultValue) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v == ():
        return "[]"
    return str(v)


def _attrs_text(attrs: tuple[ir.Attribute, ...]) -> list[str]:
    return [a.name if a.value is None else f"{a.name}: {a.value}" for a in attrs]


def field_text(f: ir.Field, lang: Lang) -> str:
    if lang == "hdi":
        return f"{type_text(f.type, lang)} {f.name};"
    out = f"{f.name}:{type_text(f.type, lang)}"
    if f.optional:
        out += " = null"
    elif f.default is not None and f.slot is not None:  # struct members have no default
        out += f" = {_value_text(f.default)}"
    attrs = []
    if f.slot is not None:
        attrs.append(f"id: {f.slot}")
    for flag in ("deprecated", "required", "key"):
        if getattr(f, flag):
            attrs.append(flag)
    attrs += [
        a
        for a in _attrs_text(f.attributes)
        if a.split(":")[0] not in ("id", "deprecated", "required", "key")
    ]
    return out + (f" ({', '.join(attrs)})" if attrs else "") + ";"


def param_text(p: ir.Param, lang: Lang) -> str:
    return f"[{p.direction}] {type_text(p.type, lang)} {p.name}"


def method_text(m: ir.Method, lang: Lang) -> str:
    if lang == "fbs":
        req = ", ".join(type_text(p.type, lang) for p in m.params if p.direction == "in")
        resp = ", ".join(type_text(p.type, lang) for p in m.params if p.direction == "out")
        attrs = _attrs_text(m.attributes)
        return f"{m.name}({req}):{resp}" + (f" ({', '.join(attrs)})" if attrs else "") + ";"
    params = ", ".join(param_text(p, lang) for p in m.params)
    prefix = "[oneway] " if m.oneway else ""
    suffix = f"  // cmd {m.cmd_id}" if lang == "hdi" else ""
    return f"{prefix}{m.name}({params});{suffix}"


def member_text(m: ir.EnumMember | ir.UnionMember, lang: Lang) -> str:
    if isinstance(m, ir.EnumMember):
        expr = m.expr if m.expr and m.expr != str(m.value) else ""
        return f"{m.name} = {m.value}" + (f"  // {expr}" if expr else "")
    if lang == "hdi":
        return f"{type_text(m.type, lang)} {m.name};"
    t = type_text(m.type, lang)
    head = t if m.name == t else f"{m.name}: {t}"
    return head + (f" = {m.value}" if m.value is not None else "")


def decl_text(d: ir.Decl, lang: Lang) -> str:
    """A one-line summary of a whole declaration."""
    if isinstance(d, ir.Enum):
        base = scalar_text(d.base, lang)
        return f"enum {d.name} : {base} {{ {len(d.members)} members }}"
    if isinstance(d, ir.Struct):
        kind = "table" if d.is_table else "struct"
        parent = f" : {d.parent.rsplit('.', 1)[-1]}" if d.parent else ""
        return f"{kind} {d.name}{parent} {{ {len(d.fields)} fields }}"
    if isinstance(d, ir.Union):
        return f"union {d.name} {{ {len(d.members)} members }}"
    if isinstance(d, ir.Interface):
        kind = "interface" if lang == "hdi" else "rpc_service"
        parent = f" extends {d.parent.rsplit('.', 1)[-1]}" if d.parent else ""
        return f"{kind} {d.name}{parent} {{ {len(d.methods)} methods }}"
    return f"sequenceable {d.namespace}.{d.name};"
