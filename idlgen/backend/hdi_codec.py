"""From the schema IR to Parcel codec descriptors (:mod:`idlgen.wire.parcel`).

The descriptor for a type is first computed as a small expression tree (:data:`Expr`): calls to
constructors of :mod:`idlgen.wire.parcel` with literal arguments and references to generated
classes. The tree is pure data, so it can be

* rendered as Python source for the generated module's codec block (:func:`render`), or
* evaluated directly against a mapping of classes (:func:`build`), e.g. the interface codecs
  of generated classes (:func:`build_interfaces`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from .. import ir
from .blackstyle import Brackets, Node, text_of
from .formatting import lay_out_statements
from .naming import method_name, param_name, string_literal
from .views import CodecView, ModuleBuilder, Names, RecordView
from ..ir import hdi_layout as layout

if TYPE_CHECKING:
    from ..wire.ipc import InterfaceCodec

__all__ = [
    "Sym",
    "ClassRef",
    "CodecRef",
    "IfaceRef",
    "interface_codec",
    "build_interfaces",
    "Call",
    "Expr",
    "type_codec",
    "record_codec",
    "codec_deps",
    "codec_order",
    "render",
    "build",
    "node_type_mapping",
]


@dataclass(frozen=True, slots=True)
class Sym:
    """A module-level constant of :mod:`idlgen.wire.parcel` (``INT32``, ``STRING``, ...)."""

    name: str


@dataclass(frozen=True, slots=True)
class ClassRef:
    """A generated class (record, union or enum) by qualified name."""

    qualname: str


@dataclass(frozen=True, slots=True)
class CodecRef:
    """The codec bound to a generated record class (``parcel.codec_of(cls)``)."""

    qualname: str


@dataclass(frozen=True, slots=True)
class IfaceRef:
    """The :class:`idlgen.wire.ipc.InterfaceCodec` of an interface (registered on import)."""

    qualname: str


@dataclass(frozen=True, slots=True)
class Call:
    """``<module>.<func>(*args)`` with ``module`` one of ``parcel`` or ``ipc``."""

    func: str
    args: tuple[Any, ...]
    module: str = "parcel"


# Arguments are Expr, str, int, None, or tuples of them.
Expr: TypeAlias = Sym | ClassRef | CodecRef | IfaceRef | Call

_SCALARS = {
    ir.ScalarKind.BOOL: "BOOL",
    ir.ScalarKind.I8: "INT8",
    ir.ScalarKind.I16: "INT16",
    ir.ScalarKind.I32: "INT32",
    ir.ScalarKind.I64: "INT64",
    ir.ScalarKind.U8: "UINT8",
    ir.ScalarKind.U16: "UINT16",
    ir.ScalarKind.U32: "UINT32",
    ir.ScalarKind.U64: "UINT64",
    ir.ScalarKind.F32: "FLOAT",
    ir.ScalarKind.F64: "DOUBLE",
}
_HANDLES = {
    ir.HandleKind.FILE_DESCRIPTOR: "FD",
    ir.HandleKind.ASHMEM: "ASHMEM",
    ir.HandleKind.NATIVE_BUFFER: "NATIVE_BUFFER",
    ir.HandleKind.POINTER: "NOTHING",
}


def type_codec(t: ir.TypeRef, resolve: layout.Resolver, *, param: bool = False) -> Expr:
    """The codec expression of a member (or, with ``param``, a method parameter) type."""
    if isinstance(t, ir.Scalar):
        return Sym(_SCALARS[t.kind])
    if isinstance(t, ir.String):
        return Sym("STRING")
    if isinstance(t, ir.Handle):
        if t.kind is ir.HandleKind.POINTER:
            # passthrough only: never marshalled as a parameter, nothing written as a member
            return Sym("POINTER") if param else Call("Absent", (0,))
        return Sym(_HANDLES[t.kind])
    if isinstance(t, ir.Vector):
        e = t.element
        if isinstance(e, ir.Scalar) and e.kind in (ir.ScalarKind.I8, ir.ScalarKind.U8):
            return Sym("BYTES")
        elem = type_codec(e, resolve)
        if layout.is_pod(e, resolve) and not (
            isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.BOOL
        ):
            return Call("PodArray", (elem,))
        return Call("Array", (elem, layout.cpp_sizeof(e, resolve)))
    if isinstance(t, ir.Map):
        return Call("Map", (type_codec(t.key, resolve), type_codec(t.value, resolve)))
    if isinstance(t, ir.SharedMemQueue):
        return Call("SharedMemQueue", (_type_name(t.element),))
    if isinstance(t, ir.Ref):
        decl = resolve(t.qualname)
        if isinstance(decl, ir.Enum):
            return Call("Enum", (ClassRef(t.qualname), decl.base.fmt))
        if isinstance(decl, (ir.Struct, ir.Union)):
            return CodecRef(t.qualname)
        if isinstance(decl, ir.Interface):
            # As a struct member hdi-gen writes nothing; as a parameter a remote object.
            return Call("Interface", (t.qualname,)) if param else Sym("NOTHING")
        if isinstance(decl, ir.Sequenceable):
            return Call("Sequenceable", (decl.name,))
    raise ValueError(f"no Parcel codec for {t!r}")


def _type_name(t: ir.TypeRef) -> str:
    if isinstance(t, ir.Scalar):
        return t.kind.name.lower()
    if isinstance(t, ir.Ref):
        return t.name
    return type(t).__name__


def record_codec(
    decl: ir.Struct | ir.Union,
    resolve: layout.Resolver,
    names: Callable[[str], str],
) -> Call:
    """The codec constructor call for an HDI struct or union; ``names`` maps a schema field
    (or union member) name to the class's attribute (``Names.field_names``)."""
    me = ClassRef(decl.qualname)
    if isinstance(decl, ir.Union):
        lay = layout.union_layout(decl, resolve)
        if lay is None:
            raise ValueError(f"union {decl.qualname} has a non-POD member")
        members = tuple((names(m.name), type_codec(m.type, resolve)) for m in decl.members)
        renamed = tuple((names(m.name), m.name) for m in decl.members if names(m.name) != m.name)
        return Call("Union", (me, lay.size, members) + ((renamed,) if renamed else ()))
    lay = layout.struct_layout(decl, resolve)
    if lay is not None:
        convs: list[tuple[str, Any]] = []
        for f in decl.fields:
            conv: Any = None
            if isinstance(f.type, ir.Ref):
                kind = resolve(f.type.qualname)
                conv = (
                    ClassRef(f.type.qualname)
                    if isinstance(kind, ir.Enum)
                    else CodecRef(f.type.qualname)
                )
            convs.append((names(f.name), conv))
        return Call("PodStruct", (me, "<" + lay.fmt, tuple(convs)))
    fields = tuple((names(f.name), type_codec(f.type, resolve)) for f in decl.fields)
    return Call("Struct", (me, fields))


def codec_deps(e: Any) -> set[str]:
    """Qualified names of the records whose codecs ``e`` uses."""
    out: set[str] = set()
    _deps(e, out)
    return out


def _deps(e: Any, out: set[str]) -> None:
    if isinstance(e, CodecRef):
        out.add(e.qualname)
        return
    if isinstance(e, Call):
        e = e.args
    if isinstance(e, tuple):
        for a in e:
            _deps(a, out)


def codec_order(codecs: Mapping[str, Call]) -> list[str]:
    """Records ordered so that every codec is built after those it uses (within ``codecs``):
    a depth-first post-order, kept on an explicit stack (no recursion limit, and no recursive
    closure whose reference cycle would keep every codec alive until the collector runs)."""
    done: list[str] = []
    seen: set[str] = set()
    for root in codecs:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(sorted(codec_deps(codecs[root]))))]
        while stack:
            q, deps = stack[-1]
            for d in deps:
                if d in codecs and d not in seen:
                    seen.add(d)
                    stack.append((d, iter(sorted(codec_deps(codecs[d])))))
                    break
            else:
                stack.pop()
                done.append(q)
    return done


def render(
    e: Any, class_name: Callable[[str], str], module: str = "_parcel", ipc: str = "_ipc"
) -> str:
    """Python source for ``e``; ``class_name`` maps a qualified name to an expression.

    ``module``/``ipc`` are the names under which the generated module imports
    :mod:`idlgen.wire.parcel` and :mod:`idlgen.wire.ipc`.
    """
    return text_of(tree(e, class_name, module, ipc))


def tree(
    e: Any, class_name: Callable[[str], str], module: str = "_parcel", ipc: str = "_ipc"
) -> Node:
    """:func:`render`'s source as an expression tree (what the formatter lays out)."""
    t = type(e)  # exact types, the most common first: this runs for every codec argument
    if t is str:
        return string_literal(e)
    if t is Sym:
        return f"{module}.{e.name}"
    if t is tuple:
        return Brackets("(", tuple([("", tree(a, class_name, module, ipc)) for a in e]), ")")
    if t is Call:
        args = tuple([("", tree(a, class_name, module, ipc)) for a in e.args])
        return Brackets(f"{module if e.module == 'parcel' else ipc}.{e.func}(", args, ")")
    if t is ClassRef:
        return class_name(e.qualname)
    if t is CodecRef:
        return Brackets(f"{module}.codec_of(", (("", class_name(e.qualname)),), ")")
    if t is IfaceRef:
        return Brackets(f"{ipc}.interface_codec(", (("", string_literal(e.qualname)),), ")")
    return string_literal(e) if isinstance(e, str) else repr(e)


def build(e: Any, classes: Mapping[str, Any]) -> Any:
    """Evaluate ``e`` against ``classes`` (qualified name → class)."""
    # Imported here: generating code never evaluates codecs (tests do), so builds skip them.
    from ..wire import ipc, parcel

    if isinstance(e, Sym):
        return getattr(parcel, e.name)
    if isinstance(e, ClassRef):
        return classes[e.qualname]
    if isinstance(e, CodecRef):
        return parcel.codec_of(classes[e.qualname])
    if isinstance(e, IfaceRef):
        return ipc.interface_codec(e.qualname)
    if isinstance(e, Call):
        mod = parcel if e.module == "parcel" else ipc
        return getattr(mod, e.func)(*(build(a, classes) for a in e.args))
    if isinstance(e, tuple):
        return tuple(build(a, classes) for a in e)
    return e


def _version(namespace: str) -> tuple[int, int]:
    m = re.search(r"\.[vV](\d+)_(\d+)$", namespace)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _param_name(name: str) -> str:
    return param_name(name)


def interface_codec(
    iface: ir.Interface, resolve: layout.Resolver, py_names: Sequence[str] | None = None
) -> Call:
    """The ``ipc.InterfaceCodec`` constructor call for an interface (own methods; parent by ref).

    ``py_names``: the generated Protocol's method names, in order (Names.method_names).
    """
    methods = []
    for k, m in enumerate(iface.methods):
        ins = tuple(
            (_param_name(p.name), type_codec(p.type, resolve, param=True))
            for p in m.params
            if p.direction == "in"
        )
        outs = tuple(
            (_param_name(p.name), type_codec(p.type, resolve, param=True))
            for p in m.params
            if p.direction == "out"
        )
        args: tuple[Any, ...] = (m.name, m.cmd_id, ins, outs, m.oneway)
        py_name = py_names[k] if py_names is not None else method_py_name(m)
        if py_name != m.name:  # escaped or an overload: the implementation's method name
            args += (py_name,)
        methods.append(Call("MethodCodec", args, "ipc"))
    parent = IfaceRef(iface.parent) if iface.parent else None
    return Call(
        "InterfaceCodec",
        (iface.qualname, _version(iface.namespace), tuple(methods), parent),
        "ipc",
    )


def build_interfaces(schema: ir.Schema, classes: Mapping[str, Any]) -> dict[str, InterfaceCodec]:
    """Interface codecs for every interface of ``schema`` (parents built first)."""
    decls = schema.decls()
    ifaces = {q: d for q, d in decls.items() if isinstance(d, ir.Interface)}
    names = Names(schema)
    out: dict[str, InterfaceCodec] = {}
    for q in ifaces:
        chain: list[str] = []  # q and its ancestors not built yet, child first
        p = q
        while p and p not in out and p not in chain:
            chain.append(p)
            p = ifaces[p].parent
        for c in reversed(chain):
            out[c] = build(
                interface_codec(ifaces[c], decls.__getitem__, names.method_names(c)), classes
            )
    return out


# ----------------------------------------------------------------------------------------------
# NNRt: NodeType members ↔ attribute structs


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def node_type_mapping(
    node_type: ir.Enum, structs: Iterable[ir.Struct]
) -> tuple[dict[str, str], list[str], list[str]]:
    """Pair ``NODE_TYPE_X_Y`` members with the attribute struct ``XY`` (case/underscores ignored).

    Returns (member name → struct qualified name, members without a struct, structs without a
    member). ``NODE_TYPE_NONE`` has no struct by design and is not reported.
    """
    by_norm = {_norm(s.name): s for s in structs}
    mapping: dict[str, str] = {}
    lonely_members: list[str] = []
    for m in node_type.members:
        key = _norm(m.name.removeprefix("NODE_TYPE_"))
        s = by_norm.get(key)
        if s is None:
            if m.name != "NODE_TYPE_NONE":
                lonely_members.append(m.name)
        else:
            mapping[m.name] = s.qualname
    used = set(mapping.values())
    lonely_structs = [s.qualname for s in by_norm.values() if s.qualname not in used]
    return mapping, lonely_members, lonely_structs


# ----------------------------------------------------------------------------------------------
# The codec block of generated modules (templates/hdi_codec.j2)


def method_py_name(m: ir.Method) -> str:
    """Python name of an interface method (the generated Protocol's, see naming.method_name)."""
    return method_name(m.name, m.cmd_id, m.overload)


def codec_view(
    b: ModuleBuilder, f: ir.SchemaFile, records: list[RecordView], schema: ir.Schema
) -> CodecView:
    """The Parcel codec block of one generated module, and ``to_parcel``/``from_parcel`` methods.

    ``b`` is the generator's ModuleBuilder (``b.imports.ref(qualname)`` names a class, importing
    it when it lives in another module), ``records`` its RecordViews in dependency order.
    """

    decls = schema.decls()
    resolve = decls.__getitem__

    def class_name(q: str) -> str:
        return str(b.imports.ref(q))

    calls: dict[str, Call] = {}
    for r in records:
        d = decls[r.qualname]
        assert isinstance(d, (ir.Struct, ir.Union))
        calls[r.qualname] = record_codec(d, resolve, b.names.field_names(r.qualname).__getitem__)

    def statements() -> Iterator[Brackets]:
        for q in codec_order(calls):
            yield _statement(calls[q], class_name)
        for d in f.decls:
            if isinstance(d, ir.Interface) and d.namespace == b.namespace:
                py_names = b.names.method_names(d.qualname)
                yield _statement(interface_codec(d, resolve, py_names), class_name)

    lines, laid = lay_out_statements(statements(), b.line_length)
    imports = ["from idlgen.wire import parcel as _parcel"]
    if any(isinstance(decls[r.qualname], ir.Union) for r in records):
        imports.append("from typing import TYPE_CHECKING")
    if any(line.startswith("_ipc.") for line in lines):
        imports.append("from idlgen.wire import ipc as _ipc")
    return CodecView(
        method_template="",  # HDI records have no per-class codec methods
        tail_template="hdi_codec.j2",
        union_template="hdi_union.j2",
        imports=tuple(imports),
        context={"lines": lines},
        laid=laid,
    )


def _statement(e: Call, class_name: Callable[[str], str]) -> Brackets:
    node = tree(e, class_name)
    assert isinstance(node, Brackets)  # a Call renders as one
    return node
