"""From the schema IR to Parcel codec descriptors (:mod:`idlgen.wire.parcel`).

The descriptor of a record or interface is a typed view object (:class:`PodStructCodec`,
:class:`StructCodec`, :class:`UnionCodec`, :class:`InterfaceCodecView`), its members' codecs
small typed expressions (:data:`TypeExpr`). The views are pure data: ``templates/_parcel.j2``
writes them as Python source, keyword arguments and one ``{name: codec}`` mapping per record
(:func:`render`; the generated module's codec block, ``hdi_codec.j2``), and :func:`build`
evaluates that same text against a mapping of classes (e.g. the interface codecs of generated
classes, :func:`build_interfaces`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from .. import ir
from .naming import method_name, param_name
from .render import env
from .views import CodecView, ModuleBuilder, Names, RecordView
from ..ir import hdi_layout as layout

if TYPE_CHECKING:
    from ..wire.ipc import InterfaceCodec

__all__ = [
    "Sym",
    "ClassRef",
    "CodecRef",
    "IfaceRef",
    "PodArrayOf",
    "ArrayOf",
    "MapOf",
    "EnumOf",
    "AbsentOf",
    "InterfaceOf",
    "SequenceableOf",
    "SharedMemQueueOf",
    "TypeExpr",
    "Member",
    "PodField",
    "PodStructCodec",
    "StructCodec",
    "UnionCodec",
    "MethodCodecView",
    "InterfaceCodecView",
    "Statement",
    "interface_codec",
    "build_interfaces",
    "type_codec",
    "record_codec",
    "codec_deps",
    "codec_order",
    "render",
    "build",
    "node_type_mapping",
]

# Every view class has a ``kind``: what templates/_parcel.j2 dispatches on.


@dataclass(frozen=True, slots=True)
class Sym:
    """A module-level constant of :mod:`idlgen.wire.parcel` (``INT32``, ``STRING``, ...)."""

    name: str
    kind: ClassVar[str] = "sym"


@dataclass(frozen=True, slots=True)
class ClassRef:
    """A generated class (record, union or enum) by qualified name."""

    qualname: str
    kind: ClassVar[str] = "class"


@dataclass(frozen=True, slots=True)
class CodecRef:
    """The codec bound to a generated record class (``parcel.codec_of(cls)``)."""

    qualname: str
    kind: ClassVar[str] = "codec"


@dataclass(frozen=True, slots=True)
class IfaceRef:
    """The :class:`idlgen.wire.ipc.InterfaceCodec` of an interface (registered on import)."""

    qualname: str
    kind: ClassVar[str] = "iface"


@dataclass(frozen=True, slots=True)
class PodArrayOf:
    """``parcel.PodArray``: a vector of POD elements, one memory image."""

    element: TypeExpr
    kind: ClassVar[str] = "pod_array"


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """``parcel.Array``: a vector written element by element (``element_cpp_size``: the C++
    ``sizeof`` of an element, what hdi-gen's length check uses)."""

    element: TypeExpr
    element_cpp_size: int
    kind: ClassVar[str] = "array"


@dataclass(frozen=True, slots=True)
class MapOf:
    key: TypeExpr
    value: TypeExpr
    kind: ClassVar[str] = "map"


@dataclass(frozen=True, slots=True)
class EnumOf:
    """``parcel.Enum``: an enum class over its base type's ``struct`` format."""

    cls: ClassRef
    base: str
    kind: ClassVar[str] = "enum"


@dataclass(frozen=True, slots=True)
class AbsentOf:
    """``parcel.Absent``: nothing on the wire; decodes as ``value``."""

    value: int = 0
    kind: ClassVar[str] = "absent"


@dataclass(frozen=True, slots=True)
class InterfaceOf:
    """``parcel.Interface``: a remote object parameter of interface ``descriptor``."""

    descriptor: str
    kind: ClassVar[str] = "interface"


@dataclass(frozen=True, slots=True)
class SequenceableOf:
    name: str
    kind: ClassVar[str] = "sequenceable"


@dataclass(frozen=True, slots=True)
class SharedMemQueueOf:
    element: str
    kind: ClassVar[str] = "smq"


# The codec of one member or parameter type.
TypeExpr: TypeAlias = (
    Sym
    | ClassRef
    | CodecRef
    | PodArrayOf
    | ArrayOf
    | MapOf
    | EnumOf
    | AbsentOf
    | InterfaceOf
    | SequenceableOf
    | SharedMemQueueOf
)


@dataclass(frozen=True, slots=True)
class Member:
    """A struct field, union member or method parameter: its Python name and codec."""

    name: str
    codec: TypeExpr


@dataclass(frozen=True, slots=True)
class PodField:
    """A field of a POD struct: how its leaves convert (None: a plain number or boolean; an
    enum class; the codec of a nested POD struct or union)."""

    name: str
    convert: ClassRef | CodecRef | None


@dataclass(frozen=True, slots=True)
class PodStructCodec:
    """``parcel.PodStruct``: one ``struct`` format (``fmt``) for the whole memory image."""

    cls: ClassRef
    fmt: str
    fields: tuple[PodField, ...]
    kind: ClassVar[str] = "pod_struct"


@dataclass(frozen=True, slots=True)
class StructCodec:
    """``parcel.Struct``: members in declaration order, each by its codec."""

    cls: ClassRef
    fields: tuple[Member, ...]
    kind: ClassVar[str] = "struct"


@dataclass(frozen=True, slots=True)
class UnionCodec:
    """``parcel.Union``: ``size`` raw bytes; ``schema_names`` maps escaped attribute names
    back to the schema's member names."""

    cls: ClassRef
    size: int
    members: tuple[Member, ...]
    schema_names: tuple[tuple[str, str], ...] = ()
    kind: ClassVar[str] = "union"


@dataclass(frozen=True, slots=True)
class MethodCodecView:
    """``ipc.MethodCodec``; ``py_name`` only when the implementation's name differs."""

    name: str
    cmd_id: int
    ins: tuple[Member, ...]
    outs: tuple[Member, ...]
    oneway: bool
    py_name: str = ""
    kind: ClassVar[str] = "method"


@dataclass(frozen=True, slots=True)
class InterfaceCodecView:
    """``ipc.InterfaceCodec``: the interface's own methods; the parent's by reference."""

    descriptor: str
    version: tuple[int, int]
    methods: tuple[MethodCodecView, ...]
    parent: IfaceRef | None
    kind: ClassVar[str] = "interface_codec"


# A module-level statement of the codec block.
Statement: TypeAlias = PodStructCodec | StructCodec | UnionCodec | InterfaceCodecView
RecordCodec: TypeAlias = PodStructCodec | StructCodec | UnionCodec

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


def type_codec(t: ir.TypeRef, resolve: layout.Resolver, *, param: bool = False) -> TypeExpr:
    """The codec of a member (or, with ``param``, a method parameter) type."""
    if isinstance(t, ir.Scalar):
        return Sym(_SCALARS[t.kind])
    if isinstance(t, ir.String):
        return Sym("STRING")
    if isinstance(t, ir.Handle):
        if t.kind is ir.HandleKind.POINTER:
            # passthrough only: never marshalled as a parameter, nothing written as a member
            return Sym("POINTER") if param else AbsentOf(0)
        return Sym(_HANDLES[t.kind])
    if isinstance(t, ir.Vector):
        e = t.element
        if isinstance(e, ir.Scalar) and e.kind in (ir.ScalarKind.I8, ir.ScalarKind.U8):
            return Sym("BYTES")
        elem = type_codec(e, resolve)
        if layout.is_pod(e, resolve) and not (
            isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.BOOL
        ):
            return PodArrayOf(elem)
        return ArrayOf(elem, layout.cpp_sizeof(e, resolve))
    if isinstance(t, ir.Map):
        return MapOf(type_codec(t.key, resolve), type_codec(t.value, resolve))
    if isinstance(t, ir.SharedMemQueue):
        return SharedMemQueueOf(_type_name(t.element))
    if isinstance(t, ir.Ref):
        decl = resolve(t.qualname)
        if isinstance(decl, ir.Enum):
            return EnumOf(ClassRef(t.qualname), decl.base.fmt)
        if isinstance(decl, (ir.Struct, ir.Union)):
            return CodecRef(t.qualname)
        if isinstance(decl, ir.Interface):
            # As a struct member hdi-gen writes nothing; as a parameter a remote object.
            return InterfaceOf(t.qualname) if param else Sym("NOTHING")
        if isinstance(decl, ir.Sequenceable):
            return SequenceableOf(decl.name)
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
) -> RecordCodec:
    """The codec view of an HDI struct or union; ``names`` maps a schema field (or union
    member) name to the class's attribute (``Names.field_names``)."""
    me = ClassRef(decl.qualname)
    if isinstance(decl, ir.Union):
        lay = layout.union_layout(decl, resolve)
        if lay is None:
            raise ValueError(f"union {decl.qualname} has a non-POD member")
        members = tuple(Member(names(m.name), type_codec(m.type, resolve)) for m in decl.members)
        renamed = tuple((names(m.name), m.name) for m in decl.members if names(m.name) != m.name)
        return UnionCodec(me, lay.size, members, renamed)
    lay = layout.struct_layout(decl, resolve)
    if lay is not None:
        convs: list[PodField] = []
        for f in decl.fields:
            conv: ClassRef | CodecRef | None = None
            if isinstance(f.type, ir.Ref):
                kind = resolve(f.type.qualname)
                conv = (
                    ClassRef(f.type.qualname)
                    if isinstance(kind, ir.Enum)
                    else CodecRef(f.type.qualname)
                )
            convs.append(PodField(names(f.name), conv))
        return PodStructCodec(me, "<" + lay.fmt, tuple(convs))
    fields = tuple(Member(names(f.name), type_codec(f.type, resolve)) for f in decl.fields)
    return StructCodec(me, fields)


def _walk(e: Any, visit: Callable[[Any], None]) -> None:
    """Call ``visit`` on every reference (ClassRef, CodecRef, IfaceRef) in ``e``, depth first
    in field order (the order the template prints them)."""
    t = type(e)
    if t is ClassRef or t is CodecRef or t is IfaceRef:
        visit(e)
    elif t is tuple:
        for a in e:
            _walk(a, visit)
    elif t in _VIEWS:
        for slot in t.__slots__:
            _walk(getattr(e, slot), visit)


_VIEWS = frozenset(
    (
        PodArrayOf,
        ArrayOf,
        MapOf,
        EnumOf,
        Member,
        PodField,
        PodStructCodec,
        StructCodec,
        UnionCodec,
        MethodCodecView,
        InterfaceCodecView,
    )
)


def codec_deps(e: Any) -> set[str]:
    """Qualified names of the records whose codecs ``e`` uses."""
    out: set[str] = set()
    _walk(e, lambda r: out.add(r.qualname) if type(r) is CodecRef else None)
    return out


def codec_order(codecs: Mapping[str, Any]) -> list[str]:
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


def class_names(statements: Iterable[Any], class_name: Callable[[str], str]) -> dict[str, str]:
    """Qualified name → the Python expression naming that class, for every class the
    statements refer to (``class_name`` is asked once per name, in printing order)."""
    out: dict[str, str] = {}

    def visit(r: Any) -> None:
        if type(r) is not IfaceRef and r.qualname not in out:
            out[r.qualname] = class_name(r.qualname)

    for s in statements:
        _walk(s, visit)
    return out


def render(e: Any, class_name: Callable[[str], str]) -> str:
    """The Python source templates/_parcel.j2 writes for ``e`` (a statement or a member's
    codec) on one line; ``class_name`` maps a qualified name to an expression."""
    macros: Any = env().get_template("_parcel.j2").module
    names = class_names((e,), class_name)
    is_statement = isinstance(e, (PodStructCodec, StructCodec, UnionCodec, InterfaceCodecView))
    return str((macros.statement if is_statement else macros.type)(e, names))


def build(e: Any, classes: Mapping[str, Any]) -> Any:
    """Evaluate ``e``'s source (:func:`render`) against ``classes`` (qualified name → class)."""
    # Imported here: generating code never evaluates codecs (tests do), so builds skip them.
    from ..wire import ipc, parcel

    src = render(e, lambda q: f"_classes[{q!r}]")
    return eval(src, {"_parcel": parcel, "_ipc": ipc, "_classes": classes})  # noqa: S307


def _version(namespace: str) -> tuple[int, int]:
    m = re.search(r"\.[vV](\d+)_(\d+)$", namespace)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _param_name(name: str) -> str:
    return param_name(name)


def interface_codec(
    iface: ir.Interface, resolve: layout.Resolver, py_names: Sequence[str] | None = None
) -> InterfaceCodecView:
    """The ``ipc.InterfaceCodec`` view of an interface (own methods; parent by reference).

    ``py_names``: the generated Protocol's method names, in order (Names.method_names).
    """
    methods = []
    for k, m in enumerate(iface.methods):
        ins = tuple(
            Member(_param_name(p.name), type_codec(p.type, resolve, param=True))
            for p in m.params
            if p.direction == "in"
        )
        outs = tuple(
            Member(_param_name(p.name), type_codec(p.type, resolve, param=True))
            for p in m.params
            if p.direction == "out"
        )
        py_name = py_names[k] if py_names is not None else method_py_name(m)
        # escaped or an overload: the implementation's method name
        methods.append(
            MethodCodecView(
                m.name, m.cmd_id, ins, outs, m.oneway, "" if py_name == m.name else py_name
            )
        )
    parent = IfaceRef(iface.parent) if iface.parent else None
    return InterfaceCodecView(iface.qualname, _version(iface.namespace), tuple(methods), parent)


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
    """The Parcel codec block of one generated module (``templates/hdi_codec.j2``).

    ``b`` is the generator's ModuleBuilder (``b.imports.ref(qualname)`` names a class, importing
    it when it lives in another module), ``records`` its RecordViews in dependency order. The
    template prints each statement on one line; the formatter lays out the long ones.
    """
    decls = schema.decls()
    resolve = decls.__getitem__
    codecs: dict[str, RecordCodec] = {}
    for r in records:
        d = decls[r.qualname]
        assert isinstance(d, (ir.Struct, ir.Union))
        codecs[r.qualname] = record_codec(d, resolve, b.names.field_names(r.qualname).__getitem__)
    statements: list[Statement] = [codecs[q] for q in codec_order(codecs)]
    for d in f.decls:
        if isinstance(d, ir.Interface) and d.namespace == b.namespace:
            statements.append(interface_codec(d, resolve, b.names.method_names(d.qualname)))
    names = class_names(statements, lambda q: str(b.imports.ref(q)))
    imports = ["from idlgen.wire import parcel as _parcel"]
    if any(isinstance(s, UnionCodec) for s in statements):
        imports.append("from typing import TYPE_CHECKING")
    if any(isinstance(s, InterfaceCodecView) for s in statements):
        imports.append("from idlgen.wire import ipc as _ipc")
    return CodecView(
        method_template="",  # HDI records have no per-class codec methods
        tail_template="hdi_codec.j2",
        union_template="hdi_union.j2",
        imports=tuple(imports),
        context={"statements": statements, "names": names},
    )
