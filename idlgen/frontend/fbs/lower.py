"""Resolve names, apply flatc's semantic checks and lower ``.fbs`` syntax trees into the IR.

Rules follow flatc 25.x (src/idl_parser.cpp): names resolve in the current namespace, then
each parent; unions take two vtable slots (hidden ``x_type`` at id-1); ``id`` is all-or-none
and contiguous; enum values are unique, fit the base type and are sorted by value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ...diagnostics import MAX_SUGGEST_CANDIDATES, Diagnostics, suggest
from ...ir import (
    Attribute,
    Decl,
    DefaultValue,
    Enum,
    EnumMember,
    Field,
    FixedArray,
    Interface,
    Method,
    Param,
    Ref,
    RefKind,
    Scalar,
    ScalarKind,
    SchemaFile,
    Span,
    String,
    Struct,
    TypeRef,
    Union,
    UnionMember,
    Vector,
)
from ...wire.fbliterals import parse_float, parse_int
from ..graphs import SHOWN, cycle_names, depth_first
from . import ast as A

__all__ = ["lower", "SCALARS", "KNOWN_ATTRIBUTES", "parse_int", "parse_float"]

SCALARS: dict[str, ScalarKind] = {
    "bool": ScalarKind.BOOL,
    "byte": ScalarKind.I8,
    "int8": ScalarKind.I8,
    "ubyte": ScalarKind.U8,
    "uint8": ScalarKind.U8,
    "short": ScalarKind.I16,
    "int16": ScalarKind.I16,
    "ushort": ScalarKind.U16,
    "uint16": ScalarKind.U16,
    "int": ScalarKind.I32,
    "int32": ScalarKind.I32,
    "uint": ScalarKind.U32,
    "uint32": ScalarKind.U32,
    "long": ScalarKind.I64,
    "int64": ScalarKind.I64,
    "ulong": ScalarKind.U64,
    "uint64": ScalarKind.U64,
    "float": ScalarKind.F32,
    "float32": ScalarKind.F32,
    "double": ScalarKind.F64,
    "float64": ScalarKind.F64,
}

# Lowering shares these immutable IR nodes instead of building one per field.
_SCALAR_REFS: dict[str, TypeRef] = {name: Scalar(kind) for name, kind in SCALARS.items()}
_STRING = String()
# ScalarKind's properties compute on every call; lowering asks once per field.
_BOUNDS = {k: k.bounds for k in ScalarKind}
_FLOATS = frozenset(k for k in ScalarKind if k.is_float)

# include/flatbuffers/idl.h, Parser::Parser(): attributes flatc knows without a declaration.
KNOWN_ATTRIBUTES = frozenset(
    """deprecated required key shared hash id force_align bit_flags original_order
    nested_flatbuffer csharp_partial streaming idempotent cpp_type cpp_ptr_type cpp_ptr_type_get
    cpp_str_type cpp_str_flex_ctor native_inline native_custom_alloc native_type
    native_type_pack_name native_default flexbuffer private offset64 vector64""".split()
)

_HASHES = {"fnv1_32", "fnv1a_32", "fnv1_64", "fnv1a_64", "fnv1_16", "fnv1a_16"}
_FUNCS = {
    "rad": math.radians,
    "deg": math.degrees,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
}


@dataclass
class _Sym:
    kind: RefKind
    ast: A.TypeDeclAst | A.EnumDeclAst | A.UnionDeclAst | A.RpcDeclAst
    qualname: str
    file: str


@dataclass
class _Ctx:
    diags: Diagnostics
    syms: dict[str, _Sym] = field(default_factory=dict)
    enums: dict[str, Enum] = field(default_factory=dict)
    declared_attrs: set[str] = field(default_factory=set)


_DECL_KINDS = {
    A.EnumDeclAst: RefKind.ENUM,
    A.UnionDeclAst: RefKind.UNION,
    A.RpcDeclAst: RefKind.INTERFACE,
}


def _qual(ns: str, name: str) -> str:
    return f"{ns}.{name}" if ns else name


_NO_ATTRS: dict[str, A.AttrAst] = {}  # read only


def _attr_dict(attrs: Sequence[A.AttrAst]) -> dict[str, A.AttrAst]:
    return {a.name: a for a in attrs}


def _ir_attrs(attrs: Sequence[A.AttrAst]) -> tuple[Attribute, ...]:
    if not attrs:
        return ()
    out = []
    for a in attrs:
        v: str | int | None = a.value if not isinstance(a.value, float) else str(a.value)
        if isinstance(v, str):
            try:
                v = parse_int(v)
            except ValueError:
                pass
        out.append(Attribute(a.name, v, a.span))
    return tuple(out)


def _lookup(ctx: _Ctx, name: str, ns: str) -> _Sym | None:
    parts = ns.split(".") if ns else []
    for i in range(len(parts), -1, -1):
        cand = ".".join(parts[:i] + [name])
        if cand in ctx.syms:
            return ctx.syms[cand]
    return None


def _unknown(ctx: _Ctx, name: str, span: Span, what: str = "type") -> None:
    pool = itertools.chain(
        SCALARS, ["string"], (q.rsplit(".", 1)[-1] for q in ctx.syms), iter(ctx.syms)
    )
    close = suggest(ctx.diags, name, pool)
    ctx.diags.error(
        "FBS021",
        f"{what} referenced but not defined: {name}",
        span,
        help=[f"did you mean '{close[0]}'?"] if close else [],
    )


def _attr_names(ctx: _Ctx) -> Iterator[str]:
    """Attribute names to suggest from, sorted (lazily: only sorted if a suggestion is made)."""
    yield from sorted(KNOWN_ATTRIBUTES)
    if len(ctx.declared_attrs) <= MAX_SUGGEST_CANDIDATES:
        yield from sorted(ctx.declared_attrs)


def _check_attrs(ctx: _Ctx, attrs: Sequence[A.AttrAst]) -> None:
    if not attrs:
        return
    for a in attrs:
        if a.name not in KNOWN_ATTRIBUTES and a.name not in ctx.declared_attrs:
            close = suggest(ctx.diags, a.name, _attr_names(ctx))
            ctx.diags.error(
                "FBS036",
                f"user define attributes must be declared before use: {a.name}",
                a.span,
                help=[f"did you mean '{close[0]}'?"] if close else [f'add: attribute "{a.name}";'],
            )


def _resolve_type(ctx: _Ctx, t: A.TypeAst, ns: str, *, in_struct: bool) -> TypeRef | None:
    if type(t) is A.NamedType:  # the common case first
        scalar = _SCALAR_REFS.get(t.name)
        if scalar is not None:
            return scalar
    if isinstance(t, A.VectorTypeAst):
        if isinstance(t.element, (A.VectorTypeAst, A.ArrayTypeAst)):
            ctx.diags.error(
                "FBS041", "nested vector types not supported (wrap in table first)", t.span
            )
            return None
        el = _resolve_type(ctx, t.element, ns, in_struct=in_struct)
        return None if el is None else Vector(el)
    if isinstance(t, A.ArrayTypeAst):
        if not in_struct:
            ctx.diags.error(
                "FBS040", "fixed-length array in table must be wrapped in struct", t.span
            )
            return None
        try:
            n = parse_int(t.length)
        except ValueError:
            n = -1
        if not 1 <= n <= 0xFFFF:
            ctx.diags.error(
                "FBS051", f"length of fixed-length array must be 1..65535, got {t.length}", t.span
            )
            return None
        if isinstance(t.element, (A.VectorTypeAst, A.ArrayTypeAst)):
            ctx.diags.error(
                "FBS041", "nested vector types not supported (wrap in table first)", t.span
            )
            return None
        el = _resolve_type(ctx, t.element, ns, in_struct=in_struct)
        return None if el is None else FixedArray(el, n)
    if t.name in SCALARS:
        return _SCALAR_REFS[t.name]
    if t.name == "string":
        return _STRING
    sym = _lookup(ctx, t.name, ns)
    if sym is None or sym.kind is RefKind.INTERFACE:
        _unknown(ctx, t.name, t.span)
        return None
    return Ref(sym.qualname, sym.kind)


def _is_scalar(t: TypeRef, ctx: _Ctx) -> bool:
    return isinstance(t, Scalar) or (isinstance(t, Ref) and t.kind is RefKind.ENUM)


def _scalar_kind(t: TypeRef, ctx: _Ctx) -> ScalarKind | None:
    if isinstance(t, Scalar):
        return t.kind
    if isinstance(t, Ref) and t.kind is RefKind.ENUM and t.qualname in ctx.enums:
        return ctx.enums[t.qualname].base
    return None


# ---------------------------------------------------------------------------------------------
# enums and unions


def _lower_enum(ctx: _Ctx, d: A.EnumDeclAst) -> Enum | None:
    _check_attrs(ctx, d.attrs)
    base = _resolve_type(ctx, d.base, d.namespace, in_struct=False)
    if not isinstance(base, Scalar) or not base.kind.is_integer:
        ctx.diags.error("FBS022", "underlying enum type must be integral", d.base.span)
        return None
    kind = base.kind
    attrs = _attr_dict(d.attrs)
    bit_flags = "bit_flags" in attrs
    if "force_align" in attrs:
        ctx.diags.error(
            "FBS047", "force_align is not allowed on an enum", attrs["force_align"].span
        )
    lo, hi = kind.bounds
    members: list[EnumMember] = []
    seen: dict[int, str] = {}
    names: set[str] = set()
    prev = -1
    for v in d.values:
        _check_attrs(ctx, v.attrs)
        if v.value is not None:
            try:
                raw = parse_int(v.value)
            except ValueError:
                ctx.diags.error("FBS024", f"enum value is not an integer: {v.value}", v.span)
                continue
        else:
            raw = prev + 1
        prev = raw
        value = raw
        if bit_flags:
            if not 0 <= raw < kind.size * 8:
                ctx.diags.error(
                    "FBS025", f"bit flag out of range of underlying integral type: {v.name}", v.span
                )
                continue
            value = 1 << raw
            if kind.is_signed and value > hi:
                ctx.diags.error(
                    "FBS025", f"bit flag out of range of underlying integral type: {v.name}", v.span
                )
                continue
        elif not lo <= value <= hi:
            ctx.diags.error(
                "FBS024",
                f'enum value does not fit, "{value}" not in [{lo}; {hi}]',
                v.span,
            )
            continue
        if v.name in names:
            ctx.diags.error("FBS023", f"enum value already exists: {v.name}", v.span)
            continue
        if value in seen:
            ctx.diags.error(
                "FBS023",
                "all enum values must be unique",
                v.span,
                notes=[f"{v.name} and {seen[value]} are both {value}"],
            )
            continue
        seen[value] = v.name
        names.add(v.name)
        expr = v.value or ""
        members.append(EnumMember(v.name, value, v.doc, expr, "", _ir_attrs(v.attrs), v.span))
    if not d.values:
        members.append(EnumMember("NONE", 0))
    members.sort(key=lambda m: m.value)
    e = Enum(
        d.name, d.namespace, kind, tuple(members), d.doc, "", bit_flags, _ir_attrs(d.attrs), d.span
    )
    return e


def _lower_union(ctx: _Ctx, d: A.UnionDeclAst) -> Union | None:
    _check_attrs(ctx, d.attrs)
    disc = ScalarKind.U8
    if d.base is not None:
        base = _resolve_type(ctx, d.base, d.namespace, in_struct=False)
        if not isinstance(base, Scalar) or not base.kind.is_integer:
            ctx.diags.error("FBS022", "underlying union type must be integral", d.base.span)
            return None
        disc = base.kind
    lo, hi = disc.bounds
    members: list[UnionMember] = []
    names = {"NONE"}
    values = {0}
    prev = 0
    for v in d.values:
        _check_attrs(ctx, v.attrs)
        if v.type is not None:
            name, tast = v.name, v.type
        else:
            name, tast = v.name.replace(".", "_"), A.NamedType(v.name, v.span)
        t = _resolve_type(ctx, tast, d.namespace, in_struct=False)
        if t is None:
            continue
        if not (
            isinstance(t, String)
            or (isinstance(t, Ref) and t.kind in (RefKind.TABLE, RefKind.STRUCT))
        ):
            ctx.diags.error(
                "FBS043", "type referenced in union must be a table, struct or string", v.span
            )
            continue
        try:
            value = parse_int(v.value) if v.value is not None else prev + 1
        except ValueError:  # e.g. more digits than int() converts
            ctx.diags.error("FBS024", f"enum value is not an integer: {v.value}", v.span)
            continue
        prev = value
        if not lo <= value <= hi:
            ctx.diags.error(
                "FBS024", f'enum value does not fit, "{value}" not in [{lo}; {hi}]', v.span
            )
            continue
        if name in names:
            ctx.diags.error("FBS023", f"enum value already exists: {name}", v.span)
            continue
        if value in values:
            ctx.diags.error("FBS023", "all enum values must be unique", v.span)
            continue
        names.add(name)
        values.add(value)
        members.append(UnionMember(name, t, value, v.doc, _ir_attrs(v.attrs), v.span))
    members.sort(key=lambda m: m.value or 0)
    return Union(d.name, d.namespace, tuple(members), d.doc, disc, _ir_attrs(d.attrs), d.span)


# ---------------------------------------------------------------------------------------------
# defaults


def _enum_value_by_names(ctx: _Ctx, e: Enum, names: Sequence[str], span: Span) -> int | None:
    by_name = {m.name: m.value for m in e.members}
    total = 0
    for n in names:
        n = n.rsplit(".", 1)[-1]
        if n not in by_name:
            close = suggest(ctx.diags, n, by_name)
            ctx.diags.error(
                "FBS039",
                f"unknown enum value '{n}' for enum {e.name}",
                span,
                help=[f"did you mean '{close[0]}'?"] if close else [],
            )
            return None
        total |= by_name[n]
    if len(names) > 1 and not e.bit_flags:
        ctx.diags.error(
            "FBS039", f"more than one value given for non-bit_flags enum {e.name}", span
        )
        return None
    return total


def _lower_default(
    ctx: _Ctx, f: A.FieldAst, t: TypeRef, *, in_struct: bool
) -> tuple[DefaultValue, bool, bool]:
    """-> (default, optional, ok)."""
    d = f.default
    kind = _scalar_kind(t, ctx)
    if d is None:
        if kind is None:
            return None, False, True
        enum = ctx.enums.get(t.qualname) if isinstance(t, Ref) else None
        if enum is not None and not enum.bit_flags and 0 not in {m.value for m in enum.members}:
            ctx.diags.error(
                "FBS039",
                f"default value of 0 for field {f.name} is not part of enum {enum.name}",
                f.span,
                help=["give the field an explicit default that names a value, or '= null'"],
            )
            return None, False, False
        if kind is ScalarKind.BOOL:
            return False, False, True
        return (0.0 if kind in _FLOATS else 0), False, True
    if d.kind == "idents" and d.value == ["null"]:
        if kind is None:
            ctx.diags.error("FBS039", "null default is only allowed on scalar fields", d.span)
            return None, False, False
        if in_struct:
            ctx.diags.error("FBS039", "optional scalars are not allowed in structs", d.span)
            return None, False, False
        return None, True, True
    if in_struct:
        ctx.diags.error("FBS039", "default values are not supported for struct fields", d.span)
        return None, False, False
    if isinstance(t, String):
        if d.kind != "string":
            ctx.diags.error("FBS039", "a string field can only default to a string literal", d.span)
            return None, False, False
        return str(d.value), False, True
    if isinstance(t, Vector):
        if d.kind != "empty":
            ctx.diags.error("FBS039", "a vector field can only default to []", d.span)
            return None, False, False
        return (), False, True
    if isinstance(t, Ref) and t.kind is RefKind.UNION:
        if d.kind == "idents" and d.value == ["NONE"] or d.kind == "number" and d.value == "0":
            return None, False, True
        ctx.diags.error("FBS044", "default value of a union field must be NONE", d.span)
        return None, False, False
    if kind is None:
        ctx.diags.error(
            "FBS039", "default values are only allowed on scalars, strings and vectors", d.span
        )
        return None, False, False
    try:
        if kind is ScalarKind.BOOL:
            if d.kind == "idents" and d.value in (["true"], ["false"]):
                return d.value == ["true"], False, True
            if d.kind == "number":
                return parse_int(d.value) != 0, False, True
            raise ValueError
        if kind in _FLOATS:
            if d.kind == "number":
                return parse_float(d.value), False, True
            if (
                d.kind == "idents"
                and len(d.value) == 1
                and d.value[0] in ("nan", "inf", "infinity")
            ):
                return parse_float(d.value[0]), False, True
            if d.kind == "func":
                fn, arg = d.value
                return _FUNCS[fn](parse_float(arg)), False, True
            raise ValueError
        # integer or enum
        enum = ctx.enums.get(t.qualname) if isinstance(t, Ref) else None
        if d.kind == "number":
            try:
                v = parse_int(d.value)
            except ValueError:
                fv = parse_float(d.value)
                if fv != int(fv):
                    raise
                v = int(fv)
        elif d.kind in ("idents", "string") and enum is not None:
            names = d.value if d.kind == "idents" else str(d.value).split()
            ev = _enum_value_by_names(ctx, enum, names, d.span)
            if ev is None:
                return None, False, False
            v = ev
        else:
            raise ValueError
        lo, hi = _BOUNDS[kind]
        if not lo <= v <= hi:
            ctx.diags.error("FBS039", f"default value {v} does not fit the field type", d.span)
            return None, False, False
        if enum is not None and not enum.bit_flags and d.kind == "number":
            if v not in {m.value for m in enum.members}:
                ctx.diags.error(
                    "FBS039",
                    f"default value of {v} for field {f.name} is not part of enum {enum.name}",
                    d.span,
                )
                return None, False, False
        return v, False, True
    except (ValueError, OverflowError):
        ctx.diags.error("FBS039", f"invalid default value for field {f.name}", d.span)
        return None, False, False


# ---------------------------------------------------------------------------------------------
# tables and structs


def _lower_struct(ctx: _Ctx, d: A.TypeDeclAst) -> Struct | None:
    _check_attrs(ctx, d.attrs)
    is_table = d.kind == "table"
    attrs = _attr_dict(d.attrs)
    ok = True
    if not is_table and not d.fields:
        ctx.diags.error("FBS045", "size 0 structs not allowed", d.span)
        return None
    force_align = 0
    if "force_align" in attrs:
        a = attrs["force_align"]
        try:
            force_align = parse_int(str(a.value))
        except ValueError:
            force_align = -1
        if is_table or force_align <= 0 or force_align & (force_align - 1) or force_align > 32:
            ctx.diags.error(
                "FBS047",
                "force_align must be a power of two integer ranging from the struct's natural alignment to 32",
                a.span,
            )
            force_align = 0
    pending: list[tuple[A.FieldAst, Field, int | None]] = []
    names: dict[str, A.FieldAst] = {}
    keys = 0
    # A table field's slot is its id, else its position (a union's hidden _type field takes one
    # before it); known here whenever the table turns out valid, so each Field is built once.
    next_slot = 0
    for fa in d.fields:
        _check_attrs(ctx, fa.attrs)
        fattrs = _attr_dict(fa.attrs) if fa.attrs else _NO_ATTRS
        t = _resolve_type(ctx, fa.type, d.namespace, in_struct=not is_table)
        if t is None:
            ok = False
            continue
        is_union = _elem_kind(t) is RefKind.UNION
        hidden = [f"{fa.name}_type"] if is_union else []
        for n in [fa.name, *hidden]:
            if n in names:
                ctx.diags.error("FBS042", f"field already exists: {n}", fa.span)
                ok = False
        names[fa.name] = fa
        for n in hidden:
            names[n] = fa
        if not is_table:
            if not (
                _is_scalar(t, ctx)
                or isinstance(t, FixedArray)
                or (isinstance(t, Ref) and t.kind is RefKind.STRUCT)
            ):
                ctx.diags.error(
                    "FBS034",
                    f"structs may contain only scalar or struct fields: {fa.name}",
                    fa.type.span,
                )
                ok = False
                continue
            if isinstance(t, FixedArray):
                el = t.element
                if not (_is_scalar(el, ctx) or (isinstance(el, Ref) and el.kind is RefKind.STRUCT)):
                    ctx.diags.error(
                        "FBS034",
                        "fixed-length array elements must be scalars, enums or structs",
                        fa.type.span,
                    )
                    ok = False
                    continue
            for bad in ("deprecated", "required"):
                if bad in fattrs:
                    ctx.diags.error(
                        "FBS050", f"{bad} is not allowed on struct fields", fattrs[bad].span
                    )
                    ok = False
        # vectors of unions: allowed (flatc refuses them only for some languages)
        default, optional, dok = _lower_default(ctx, fa, t, in_struct=not is_table)
        ok = ok and dok
        required = "required" in fattrs
        key = "key" in fattrs
        if required and _is_scalar(t, ctx):
            ctx.diags.error(
                "FBS032",
                "only non-scalar fields in tables may be 'required'",
                fattrs["required"].span,
            )
            ok = False
        if key:
            keys += 1
            if keys > 1:
                ctx.diags.error("FBS033", "only one field may be set as 'key'", fattrs["key"].span)
                ok = False
            if not (
                _is_scalar(t, ctx)
                or isinstance(t, (String, FixedArray))
                or (isinstance(t, Ref) and t.kind is RefKind.STRUCT)
            ):
                ctx.diags.error(
                    "FBS033",
                    "'key' field must be a scalar, string, struct or array",
                    fattrs["key"].span,
                )
                ok = False
            if isinstance(t, String):
                required = True
        if optional and (key or required):
            ctx.diags.error(
                "FBS046",
                "optional scalars cannot be 'key' or 'required'",
                fa.default.span if fa.default else fa.span,
            )
            ok = False
        if "nested_flatbuffer" in fattrs or "flexbuffer" in fattrs:
            if t != Vector(Scalar(ScalarKind.U8)):
                a = fattrs.get("nested_flatbuffer") or fattrs["flexbuffer"]
                ctx.diags.error(
                    "FBS048", f"{a.name} attribute may only apply to a vector of ubyte", a.span
                )
                ok = False
            if "nested_flatbuffer" in fattrs:
                nf = fattrs["nested_flatbuffer"]
                sym = _lookup(ctx, str(nf.value), d.namespace)
                if sym is None or sym.kind is not RefKind.TABLE:
                    _unknown(ctx, str(nf.value), nf.span, "nested_flatbuffer table")
                    ok = False
        if "hash" in fattrs:
            h = fattrs["hash"]
            kind = _scalar_kind(_elem(t), ctx)
            if str(h.value) not in _HASHES:
                ctx.diags.error("FBS036", f"unknown hash function: {h.value}", h.span)
                ok = False
            elif kind is None or not kind.is_integer or kind.size == 1:
                ctx.diags.error(
                    "FBS036", "type referenced with a hash must be a 16/32/64-bit integer", h.span
                )
                ok = False
        idv: int | None = None
        if "id" in fattrs:
            try:
                idv = parse_int(str(fattrs["id"].value))
            except ValueError:
                ctx.diags.error("FBS031", "field id must be an integer", fattrs["id"].span)
                ok = False
        slot: int | None = None
        if is_table:
            if is_union:
                next_slot += 1
            slot = idv if idv is not None else next_slot
            next_slot += 1
        fl = Field(
            fa.name,
            t,
            fa.doc,
            default,
            slot,
            "deprecated" in fattrs,
            required,
            key,
            optional,
            "",
            _ir_attrs(fa.attrs),
            fa.span,
        )
        pending.append((fa, fl, idv))
    if not ok:
        return None
    fields: list[Field] = []
    if is_table:
        with_id = [p for p in pending if p[2] is not None]
        if with_id and len(with_id) != len(pending):
            missing = next(p[0] for p in pending if p[2] is None)
            ctx.diags.error(
                "FBS030", "either all fields or no fields must have an 'id' attribute", missing.span
            )
            return None
        if with_id:
            taken: dict[int, A.FieldAst] = {}
            for fa, fl, idv in pending:
                assert idv is not None
                ids = [idv - 1, idv] if _elem_kind(fl.type) is RefKind.UNION else [idv]
                if ids[0] < 0:
                    ctx.diags.error(
                        "FBS031",
                        f"union field {fa.name} needs id >= 1 (its _type field takes id-1)",
                        fa.span,
                    )
                    return None
                for i in ids:
                    if i in taken:
                        ctx.diags.error(
                            "FBS031",
                            f"field id's must be consecutive from 0, id {i} set twice",
                            fa.span,
                        )
                        return None
                    taken[i] = fa
            for i in range(len(taken)):
                if i not in taken:
                    ctx.diags.error(
                        "FBS031",
                        f"field id's must be consecutive from 0, id {i} missing or set twice",
                        d.span,
                    )
                    return None
            pending.sort(key=lambda p: p[2] or 0)
        fields = [fl for _, fl, _ in pending]
    else:
        if any(p[2] is not None for p in pending):
            pass  # flatc ignores id on struct fields
        fields = [fl for _, fl, _ in pending]
    return Struct(
        d.name,
        d.namespace,
        tuple(fields),
        d.doc,
        is_table,
        "",
        force_align,
        _ir_attrs(d.attrs),
        d.span,
    )


def _elem(t: TypeRef) -> TypeRef:
    return t.element if isinstance(t, (Vector, FixedArray)) else t


def _elem_kind(t: TypeRef) -> RefKind | None:
    e = _elem(t)
    return e.kind if isinstance(e, Ref) else None


def _check_struct_cycles(ctx: _Ctx, structs: dict[str, Struct]) -> set[str]:
    """Structs that contain themselves (flatc: "circular struct dependency"), to leave out.

    Each back edge is reported once, unless its target already was; a short cycle's members
    are all dropped, of a long one only the back edge's target (that alone breaks every cycle,
    in linear time)."""
    bad: set[str] = set()

    def deps(q: str) -> list[tuple[str, None]]:
        out = []
        for f in structs[q].fields:
            e = _elem(f.type)
            if isinstance(e, Ref) and e.kind is RefKind.STRUCT and e.qualname in structs:
                out.append((e.qualname, None))
        return out

    def cycle(path: Sequence[str], i: int, _edge: None, _w: int) -> None:
        q = path[i]
        if q not in bad:
            chain = " -> ".join(cycle_names(path, i, q, str))
            ctx.diags.error("FBS035", f"circular struct dependency: {chain}", structs[q].span)
        bad.update(path[i:] if len(path) - i < SHOWN else [q])

    depth_first(structs, deps, cycle)
    return bad


# ---------------------------------------------------------------------------------------------


def lower(
    files: Sequence[tuple[A.FileAst, tuple[str, ...], str]], diags: Diagnostics
) -> list[SchemaFile]:
    """Lower parsed files (includes first) into SchemaFiles; ``files`` holds
    (ast, include paths as written, sha256 digest)."""
    ctx = _Ctx(diags)
    declared: set[int] = set()  # the declarations in the symbol table (not duplicates)
    # pass 1: namespaces and the symbol table
    for f, _, _ in files:
        ns = ""
        seen_decl = False
        for it in f.items:
            if isinstance(it, A.Directive):
                if it.kind == "namespace":
                    ns = it.value
                elif it.kind == "attribute":
                    ctx.declared_attrs.add(it.value)
                elif it.kind in ("include", "native_include") and seen_decl:
                    diags.error("FBS011", "includes must come before declarations", it.span)
                if it.kind not in ("include", "native_include"):
                    seen_decl = True
                it.namespace = ns
                continue
            seen_decl = True
            it.namespace = ns
            kind = _DECL_KINDS.get(type(it))
            if isinstance(it, A.TypeDeclAst):
                kind = RefKind.TABLE if it.kind == "table" else RefKind.STRUCT
            assert kind is not None
            q = _qual(ns, it.name)
            if q in ctx.syms:
                prev = ctx.syms[q]
                diags.error(
                    "FBS020",
                    f"datatype already exists: {q}",
                    it.span,
                    notes=[f"first declared at {prev.ast.span}"],
                )
                continue
            ctx.syms[q] = _Sym(kind, it, q, f.path)
            declared.add(id(it))
    # pass 2: enums first (defaults of later fields need them), then everything else
    lowered: dict[int, Decl] = {}
    for f, _, _ in files:
        for it in f.items:
            if isinstance(it, A.EnumDeclAst) and id(it) in declared:
                e = _lower_enum(ctx, it)
                if e is not None:
                    ctx.enums[e.qualname] = e
                    lowered[id(it)] = e
    out: list[SchemaFile] = []
    structs: dict[str, Struct] = {}
    for f, includes, digest in files:
        meta: dict[str, str] = {}
        first_ns: str | None = None
        for it in f.items:
            if isinstance(it, A.Directive):
                if it.kind == "namespace" and first_ns is None:
                    first_ns = it.value
                if it.kind == "file_identifier":
                    if len(it.value.encode("utf-8")) != 4:
                        diags.error(
                            "FBS037", "file_identifier must be exactly 4 characters", it.span
                        )
                    meta["file_identifier"] = it.value
                elif it.kind == "file_extension":
                    meta["file_extension"] = it.value
                elif it.kind == "root_type":
                    sym = _lookup(ctx, it.value, it.namespace)
                    if sym is None:
                        _unknown(ctx, it.value, it.span, "root type")
                    elif sym.kind is not RefKind.TABLE:
                        diags.error("FBS038", "root type must be a table", it.span)
                    else:
                        meta["root_type"] = sym.qualname
                continue
            if id(it) not in declared:
                continue
            if isinstance(it, A.UnionDeclAst):
                u = _lower_union(ctx, it)
                if u is not None:
                    lowered[id(it)] = u
            elif isinstance(it, A.TypeDeclAst):
                s = _lower_struct(ctx, it)
                if s is not None:
                    lowered[id(it)] = s
                    if not s.is_table:
                        structs[s.qualname] = s
            elif isinstance(it, A.RpcDeclAst):
                i = _lower_rpc(ctx, it)
                if i is not None:
                    lowered[id(it)] = i
    bad = _check_struct_cycles(ctx, structs)
    for f, includes, digest in files:
        decls = tuple(
            d
            for it in f.items
            if (d := lowered.get(id(it))) is not None
            and not (bad and isinstance(d, Struct) and d.qualname in bad)
        )
        ns0 = next(
            (it.value for it in f.items if isinstance(it, A.Directive) and it.kind == "namespace"),
            "",
        )
        metas = {it.kind: it for it in f.items if isinstance(it, A.Directive)}
        if f.json is not None and "root_type" not in metas:
            diags.error(
                "FBS052",
                "no root type set to parse json with",
                f.json_span,
                help=["declare 'root_type <Table>;' before the JSON object"],
            )
        root = ""
        if "root_type" in metas:
            sym = _lookup(ctx, metas["root_type"].value, metas["root_type"].namespace)
            root = sym.qualname if sym is not None and sym.kind is RefKind.TABLE else ""
        out.append(
            SchemaFile(
                path=f.path,
                language="fbs",
                namespace=ns0,
                decls=decls,
                imports=includes,
                root_type=root,
                file_identifier=(
                    metas["file_identifier"].value if "file_identifier" in metas else ""
                ),
                file_extension=metas["file_extension"].value if "file_extension" in metas else "",
                digest=digest,
            )
        )
    return out


def _lower_rpc(ctx: _Ctx, d: A.RpcDeclAst) -> Interface | None:
    _check_attrs(ctx, d.attrs)
    methods = []
    for m in d.methods:
        _check_attrs(ctx, m.attrs)
        ts = []
        for t in (m.request, m.response):
            sym = _lookup(ctx, t.name, d.namespace)
            if sym is None or sym.kind is not RefKind.TABLE:
                if sym is None:
                    _unknown(ctx, t.name, t.span)
                else:
                    ctx.diags.error(
                        "FBS049", "rpc request and response types must be tables", t.span
                    )
                return None
            ts.append(Ref(sym.qualname, RefKind.TABLE))
        params = (
            Param("request", ts[0], "in", m.request.span),
            Param("response", ts[1], "out", m.response.span),
        )
        methods.append(
            Method(m.name, params, m.doc, False, 0, False, False, _ir_attrs(m.attrs), m.span)
        )
    return Interface(
        d.name, d.namespace, tuple(methods), d.doc, "", False, _ir_attrs(d.attrs), d.span
    )
