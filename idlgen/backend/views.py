"""View models: the IR turned into ready-to-print Python names, annotations and expressions.

Templates only loop over these; every naming, typing, escaping and import decision is made
here, so it can be unit-tested without rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import ir
from ..diagnostics import Diagnostics
from .naming import (
    RECORD_NAMES,
    UNION_NAMES,
    class_name,
    docstring,
    enum_member_name,
    identifier,
    method_name,
    module_name,
    param_name,
    string_literal,
)

__all__ = [
    "ModuleRef",
    "Names",
    "EnumMemberView",
    "EnumView",
    "FieldView",
    "RecordView",
    "ParamView",
    "MethodView",
    "InterfaceView",
    "CodecView",
    "ModuleView",
]


@dataclass(frozen=True, slots=True)
class ModuleRef:
    """Where a declaration lives: the namespace's package and the module's short name."""

    package: str  # dotted, relative to the output root ("" = the root itself)
    module: str


class Names:
    """Python names of every declaration of a schema: class name and defining module."""

    def __init__(self, schema: ir.Schema) -> None:
        self.decls = schema.decls()
        self.where: dict[str, ModuleRef] = {}
        self.lang: dict[str, str] = {}
        for f in schema.files:
            mod = module_name(f.stem)
            for d in f.decls:
                self.where[d.qualname] = ModuleRef(d.namespace, mod)
                self.lang[d.qualname] = f.language
        self.cycle_of = _module_cycles(self.decls, self.where)
        self._fields: dict[str, dict[str, str]] = {}
        self._classes: dict[str, str] = {}

    def class_name(self, qualname: str) -> str:
        cached = self._classes.get(qualname)
        if cached is None:
            cached = self._classes[qualname] = class_name(qualname.rsplit(".", 1)[-1])
        return cached

    def field_names(self, qualname: str) -> dict[str, str]:
        """Python attribute of each field (or HDI union member) of a record, by schema name.

        Besides the names every record binds (:data:`naming.RECORD_NAMES`), a field may not
        take a name the class body uses: the classes its annotations and defaults name.
        """
        cached = self._fields.get(qualname)
        if cached is not None:
            return cached
        d = self.decls[qualname]
        members: list[ir.Field | ir.UnionMember] = []
        if isinstance(d, ir.Struct):
            members += d.fields
        elif isinstance(d, ir.Union):
            members += d.members
        used = set(UNION_NAMES if isinstance(d, ir.Union) else RECORD_NAMES)
        used.add(self.class_name(qualname))  # ``lookup_by_key`` names its own class
        for m in members:
            for r in _type_refs(m.type):
                used.add(self.class_name(r))
                used.add("_" + r.replace(".", "_"))  # the alias of a name taken by an import
        taken = frozenset(used)
        out = {m.name: identifier(m.name, taken) for m in members}
        self._fields[qualname] = out
        return out

    def method_names(self, qualname: str) -> list[str]:
        """Python name of each method of an interface, in declaration order.

        A method may not take a name its class body's annotations use: the names every
        interface binds (:data:`naming.INTERFACE_NAMES`) and the classes its parameters and
        base name (and their import aliases).
        """
        d = self.decls[qualname]
        assert isinstance(d, ir.Interface)
        used: set[str] = set()
        refs = [r for m in d.methods for p in m.params for r in _type_refs(p.type)]
        for r in refs + ([d.parent] if d.parent else []):
            used.add(self.class_name(r))
            used.add("_" + r.replace(".", "_"))
        taken = frozenset(used)
        return [method_name(m.name, m.cmd_id, m.overload, taken) for m in d.methods]

    def in_cycle(self, a: ModuleRef, b: ModuleRef) -> bool:
        """Whether modules ``a`` and ``b`` import each other, directly or through others."""
        ca = self.cycle_of.get(a)
        return ca is not None and ca == self.cycle_of.get(b)


def _type_refs(t: ir.TypeRef) -> list[str]:
    if isinstance(t, ir.Ref):
        return [t.qualname]
    if isinstance(t, (ir.Vector, ir.FixedArray, ir.SharedMemQueue)):
        return _type_refs(t.element)
    if isinstance(t, ir.Map):
        return _type_refs(t.key) + _type_refs(t.value)
    return []


def _module_cycles(decls: dict[str, ir.Decl], where: dict[str, ModuleRef]) -> dict[ModuleRef, int]:
    """Strongly connected components (of more than one module) of the module import graph.

    FlatBuffers files may include each other; generated modules in such a cycle refer to each
    other through module objects, resolved at call time, instead of ``from … import Name``.
    """
    edges: dict[ModuleRef, set[ModuleRef]] = {}
    for q, d in decls.items():
        refs: list[str] = []
        if isinstance(d, ir.Struct):
            refs = [r for f in d.fields for r in _type_refs(f.type)]
        elif isinstance(d, ir.Union):
            refs = [r for m in d.members for r in _type_refs(m.type)]
        elif isinstance(d, ir.Interface):
            refs = [r for m in d.methods for p in m.params for r in _type_refs(p.type)]
            refs += [d.parent] if d.parent else []
        elif isinstance(d, ir.Enum) and d.parent:
            refs = [d.parent]
        src = where[q]
        edges.setdefault(src, set()).update(
            where[r] for r in refs if r in where and where[r] != src
        )
    # Tarjan's algorithm, iterative over a sorted node order (deterministic ids).
    index: dict[ModuleRef, int] = {}
    low: dict[ModuleRef, int] = {}
    stack: list[ModuleRef] = []
    on: set[ModuleRef] = set()
    comp: dict[ModuleRef, int] = {}
    counter = 0
    nodes = sorted(edges, key=lambda m: (m.package, m.module))
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()), key=lambda m: (m.package, m.module))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    succ = sorted(edges.get(nxt, ()), key=lambda m: (m.package, m.module))
                    work.append((nxt, iter(succ)))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1:
                    for m in members:
                        comp[m] = index[node]
    return comp


@dataclass
class ImportSet:
    """Imports of one generated module, rendered sorted and exact."""

    here: ModuleRef
    names: Names
    stdlib: set[str] = field(default_factory=set)  # whole lines
    local: dict[tuple[str, str], str] = field(default_factory=dict)  # (module path, name) → alias
    taken: set[str] = field(default_factory=set)

    def ref(self, qualname: str) -> str:
        """The local name to use for declaration ``qualname`` (importing it if needed)."""
        where = self.names.where[qualname]
        name = self.names.class_name(qualname)
        if where == self.here:
            return name
        path = _relative_module(self.here, where)
        if self.names.in_cycle(self.here, where):
            # Import the module object; the name is looked up when used, not at import time.
            rest = path.lstrip(".")
            inner, _, module = rest.rpartition(".")
            package = "." * (len(path) - len(rest)) + inner
            alias = "_m_" + "_".join(
                p for p in (where.package.replace(".", "_"), where.module) if p
            )
            self.stdlib.add(f"from {package} import {module} as {alias}")
            return f"{alias}.{name}"
        key = (path, name)
        if key in self.local:
            return self.local[key]
        alias = name
        if alias in self.taken:
            alias = "_" + qualname.replace(".", "_")
            while alias in self.taken:  # a local class may have that name too
                alias += "_"
        self.local[key] = alias
        self.taken.add(alias)
        return alias

    def lines(self) -> list[str]:
        plain = sorted(line for line in self.stdlib if line.startswith("import "))
        froms: dict[str, set[str]] = {}
        for line in self.stdlib:
            if line.startswith("from "):
                mod, _, names = line[5:].partition(" import ")
                froms.setdefault(mod, set()).update(n.strip() for n in names.split(","))
        third = [m for m in froms if not m.startswith(("idlgen", "."))]
        ours = [m for m in froms if m.startswith("idlgen")]
        cycle = [m for m in froms if m.startswith(".")]
        stdlib = plain + [f"from {m} import {', '.join(sorted(froms[m]))}" for m in sorted(third)]
        idlgen = [f"from {m} import {', '.join(sorted(froms[m]))}" for m in sorted(ours)]
        by_mod: dict[str, list[str]] = {}
        for (path, name), alias in self.local.items():
            by_mod.setdefault(path, []).append(name if alias == name else f"{name} as {alias}")
        local = [f"from {m} import {', '.join(sorted(froms[m]))}" for m in sorted(cycle)]
        local += [f"from {p} import {', '.join(sorted(by_mod[p]))}" for p in sorted(by_mod)]
        # Groups (stdlib and third party / idlgen / this package) separated by a blank line.
        out: list[str] = []
        for group in (stdlib, idlgen, local):
            if group:
                out += ([""] if out else []) + group
        return out


def _relative_module(here: ModuleRef, there: ModuleRef) -> str:
    a = here.package.split(".") if here.package else []
    b = there.package.split(".") if there.package else []
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    up = len(a) - common
    rest = b[common:] + [there.module]
    return "." * (up + 1) + ".".join(rest)


# ---------------------------------------------------------------------------------------------
# Per-kind views


@dataclass(frozen=True)
class EnumMemberView:
    name: str
    schema_name: str
    value: int
    doc: str  # a ready docstring literal or ""


@dataclass(frozen=True)
class EnumView:
    name: str
    base_class: str
    doc: str
    members: tuple[EnumMemberView, ...]
    qualname: str
    # (Python name, schema name) string literals of the members whose names were escaped
    renamed: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FieldView:
    name: str  # Python attribute
    schema_name: str
    annotation: str
    default: str  # "= …" right-hand side, e.g. "0", "field(default_factory=Foo)"
    doc: str


@dataclass(frozen=True)
class RecordView:
    name: str
    doc: str
    fields: tuple[FieldView, ...]
    qualname: str
    kind: str  # "struct", "table", "union"
    ir: Any  # the IR declaration (for codec plugins)
    base: str = "_rec.Record"  # the runtime base class (idlgen.wire.records)
    template: str = "_record.j2"  # a codec plugin may render some kinds its own way


@dataclass(frozen=True)
class ParamView:
    name: str
    schema_name: str
    annotation: str


@dataclass(frozen=True)
class MethodView:
    name: str
    doc: str
    params: tuple[ParamView, ...]
    returns: str
    cmd_id: int
    oneway: bool


@dataclass(frozen=True)
class InterfaceView:
    name: str
    doc: str
    bases: str
    methods: tuple[MethodView, ...]
    qualname: str
    descriptor: str  # a string literal


@dataclass(frozen=True)
class CodecView:
    """What a wire-format plugin adds to a module.

    ``method_template`` is rendered inside each record class (``record`` in scope),
    ``tail_template`` once after all classes; ``context`` is the plugin's own data.
    """

    method_template: str
    tail_template: str
    imports: tuple[str, ...] = ()
    context: Any = None
    # Template for records of kind "union" (HDI unions are records over raw bytes).
    union_template: str = ""


@dataclass
class ModuleView:
    header: str
    doc: str
    imports: list[str]
    enums: list[EnumView]
    records: list[RecordView]
    interfaces: list[InterfaceView]
    all_names: list[str]
    codecs: list[CodecView] = field(default_factory=list)

    @property
    def exports(self) -> list[str]:
        """``__all__`` entries as string literals."""
        return [string_literal(n) for n in self.all_names]


# ---------------------------------------------------------------------------------------------
# Building


_SCALAR_PY = {
    k: ("bool" if k is ir.ScalarKind.BOOL else "float" if k.is_float else "int")
    for k in ir.ScalarKind
}


class ModuleBuilder:
    """Builds the ModuleView of one (schema file, namespace) pair."""

    def __init__(
        self,
        names: Names,
        file: ir.SchemaFile,
        namespace: str,
        header: str,
        diags: Diagnostics | None = None,
        line_length: int = 100,
    ) -> None:
        self.names = names
        self.line_length = line_length
        self.diags = diags if diags is not None else Diagnostics()
        self.file = file
        self.namespace = namespace
        self.here = ModuleRef(namespace, module_name(file.stem))
        self.imports = ImportSet(self.here, names)
        self.header = header
        self.fbs = file.language == "fbs"

    # ---- type expressions
    def annotation(self, t: ir.TypeRef, *, element: bool = False) -> str:
        """The Python type of ``t``; ``element`` for items of a container (never None)."""
        if isinstance(t, ir.Scalar):
            return _SCALAR_PY[t.kind]
        if isinstance(t, ir.String):
            return "str"
        if isinstance(t, (ir.Vector, ir.FixedArray)):
            base = (
                "bytes"
                if _is_bytes(t, self.fbs)
                else f"list[{self.annotation(t.element, element=True)}]"
            )
            if self.fbs and _zero_copy(t):
                self.imports.stdlib.add("from idlgen.wire.flatbuffers import ScalarVector")
                return f"{base} | ScalarVector"
            return base
        if isinstance(t, ir.Map):
            key = self.annotation(t.key, element=True)
            return f"dict[{key}, {self.annotation(t.value, element=True)}]"
        if isinstance(t, ir.Handle):
            if t.kind in (ir.HandleKind.FILE_DESCRIPTOR, ir.HandleKind.POINTER):
                return "int"
            return self._parcel_type("Ashmem" if t.kind is ir.HandleKind.ASHMEM else "NativeBuffer")
        if isinstance(t, ir.SharedMemQueue):
            return self._parcel_type("SharedMemQueueMeta")
        # Ref
        if t.kind is ir.RefKind.SEQUENCEABLE:
            return "object | None"
        if t.kind is ir.RefKind.INTERFACE:
            return f"{self.imports.ref(t.qualname)} | None"
        if t.kind is ir.RefKind.UNION and self.fbs:
            return self._fbs_union_annotation(t.qualname)
        name = self.imports.ref(t.qualname)
        if self.fbs and t.kind in (ir.RefKind.TABLE, ir.RefKind.STRUCT) and not element:
            return f"{name} | None"
        return name

    def _parcel_type(self, name: str) -> str:
        """Out-of-band HDI values are the Parcel runtime's small documented classes."""
        self.imports.stdlib.add("from idlgen.wire import parcel as _parcel")
        return f"_parcel.{name} | None"

    def _fbs_union_annotation(self, qualname: str) -> str:
        u = self.names.decls[qualname]
        assert isinstance(u, ir.Union)
        parts = []
        for m in u.members:
            a = self.annotation(m.type).removesuffix(" | None")
            if a not in parts:
                parts.append(a)
        return " | ".join(parts + ["None"])

    def default(self, f: ir.Field) -> str:
        t = f.type
        if f.optional:
            return "None"
        if isinstance(t, ir.Scalar):
            if f.default is not None and not isinstance(f.default, tuple):
                return _scalar_literal(t.kind, f.default)
            return "False" if t.kind is ir.ScalarKind.BOOL else "0.0" if t.kind.is_float else "0"
        if isinstance(t, ir.String):
            if self.fbs and not (f.required or f.key) and not isinstance(f.default, str):
                return "None"
            return string_literal(f.default) if isinstance(f.default, str) else '""'
        if isinstance(t, (ir.Vector, ir.FixedArray)):
            if _is_bytes(t, self.fbs):
                # FlatBuffers: None = absent; b"" would store an empty vector.
                return "None" if self.fbs and not f.required and f.default != () else 'b""'
            if self.fbs and isinstance(t, ir.Vector) and not f.required and f.default != ():
                return "None"
            return "field(default_factory=list)"
        if isinstance(t, ir.Map):
            return "field(default_factory=dict)"
        if isinstance(t, ir.Handle):
            if t.kind is ir.HandleKind.FILE_DESCRIPTOR:
                return "-1"
            if t.kind is ir.HandleKind.POINTER:
                return "0"
            return "None"
        if isinstance(t, ir.SharedMemQueue):
            return "None"
        if t.kind is ir.RefKind.ENUM:
            e = self.names.decls[t.qualname]
            assert isinstance(e, ir.Enum)
            cls = self.imports.ref(t.qualname)
            value = (
                f.default if isinstance(f.default, int) and not isinstance(f.default, bool) else 0
            )
            member = next((m.name for m in e.members if m.value == value), None)
            # Written as the member (ActivationType.ACTIVATION_TYPE_NONE); a value no member
            # has (open enums, flag sets) as a call.
            expr = f"{cls}.{enum_member_name(member)}" if member is not None else f"{cls}({value})"
            if "." in cls:  # defined in a module of an import cycle: build it when needed
                return f"field(default_factory=lambda: {expr})"
            return expr
        if t.kind in (ir.RefKind.INTERFACE, ir.RefKind.SEQUENCEABLE):
            return "None"
        if self.fbs:
            return "None"
        cls = self.imports.ref(t.qualname)
        return (
            f"field(default_factory=lambda: {cls}())"
            if "." in cls
            else f"field(default_factory={cls})"
        )

    # ---- declarations
    def enum(self, e: ir.Enum) -> EnumView:
        base = "enum.IntFlag" if e.bit_flags else "_rec.OpenIntEnum"
        if e.bit_flags:
            self.imports.stdlib.add("import enum")
        else:
            self.imports.stdlib.add("from idlgen.wire import records as _rec")
        members = tuple(
            EnumMemberView(
                enum_member_name(m.name), m.name, m.value, docstring(m.doc, 4) if m.doc else ""
            )
            for m in e.members
        )
        self.unique(
            [(enum_member_name(m.name), m.name, m.span) for m in e.members],
            f"members of {e.qualname}",
        )
        renamed = tuple(
            (string_literal(m.name), string_literal(m.schema_name))
            for m in members
            if m.name != m.schema_name
        )
        if renamed:
            self.imports.stdlib.add("from idlgen.wire import records as _rec")
        return EnumView(
            self.names.class_name(e.qualname),
            base,
            _doc_or(e.doc, e.name),
            members,
            e.qualname,
            renamed,
        )

    def record(self, s: ir.Struct | ir.Union) -> RecordView:
        fields: list[FieldView] = []
        if isinstance(s, ir.Union) and not self.fbs:
            irfields = [ir.Field(m.name, m.type, m.doc) for m in s.members]
            kind = "union"
        else:
            assert isinstance(s, ir.Struct)
            # deprecated fields are not part of the typed API (the FlatBuffers runtime carries
            # their decoded values alongside, see idlgen.wire.flatbuffers)
            irfields = [f for f in s.fields if not f.deprecated]
            kind = "table" if s.is_table else "struct"
        py_names = self.names.field_names(s.qualname)
        self.unique(
            [(py_names[f.name], f.name, f.span) for f in irfields], f"fields of {s.qualname}"
        )
        for f in irfields:
            name = py_names[f.name]
            ann = self.annotation(f.type)
            default = self.default(f)
            if default == "None" and not ann.endswith("| None"):
                ann = f"{ann} | None"
            fields.append(
                FieldView(
                    name,
                    f.name,
                    ann,
                    _with_schema_name(default, f.name) if name != f.name else default,
                    docstring(f.doc, 4) if f.doc else "",
                )
            )
        if any("field(" in fv.default for fv in fields):
            self.imports.stdlib.add("from dataclasses import dataclass, field")
        else:
            self.imports.stdlib.add("from dataclasses import dataclass")
        self.imports.stdlib.add("from idlgen.wire import records as _rec")
        base = "_rec.FlatRecord" if self.fbs else "_rec.ParcelRecord"
        return RecordView(
            self.names.class_name(s.qualname),
            _doc_or(s.doc, s.name),
            tuple(fields),
            s.qualname,
            kind,
            s,
            base=base,
        )

    def unique(self, names: Sequence[tuple[str, str, ir.Span | None]], what: str) -> None:
        """Report schema names that escaping maps onto the same Python name (``global`` and
        ``global_`` both become ``global_``), and a name given twice (a declared ``GetVersion``
        beside the implicit one): the second one, located."""
        first: dict[str, str] = {}
        for py, schema, span in names:
            if py not in first:
                first[py] = schema
                continue
            other = first[py]
            message = (
                f"{what}: '{schema}' is declared twice"
                if other == schema
                else f"{what}: '{other}' and '{schema}' both become the Python name '{py}'"
            )
            self.diags.error(
                "GEN001",
                message,
                span,
                help=[
                    f"rename '{schema}' (Python keywords and names generated code uses get a trailing '_')"
                ],
            )

    def interface(self, i: ir.Interface) -> InterfaceView:
        self.imports.stdlib.add("from typing import ClassVar, Protocol")
        methods = []
        py_names = self.names.method_names(i.qualname)
        self.unique(
            [(py, m.name, m.span) for py, m in zip(py_names, i.methods)],
            f"methods of {i.qualname}",
        )
        for py_name, m in zip(py_names, i.methods):
            self.unique(
                [(param_name(p.name), p.name, p.span) for p in m.params if p.direction == "in"],
                f"parameters of {i.qualname}.{m.name}",
            )
            ins = tuple(
                ParamView(param_name(p.name), p.name, self.annotation(p.type))
                for p in m.params
                if p.direction == "in"
            )
            outs = [self.annotation(p.type) for p in m.params if p.direction == "out"]
            returns = (
                "None" if not outs else outs[0] if len(outs) == 1 else f"tuple[{', '.join(outs)}]"
            )
            methods.append(
                MethodView(
                    # An overload of an ancestor's method is suffixed with its command id, as
                    # hdi-gen names its command constant (CMD_FOO_PING_4).
                    py_name,
                    _method_doc(m),
                    ins,
                    returns,
                    m.cmd_id,
                    m.oneway,
                )
            )
        bases = "Protocol"
        if i.parent:
            bases = f"{self.imports.ref(i.parent)}, Protocol"
        return InterfaceView(
            self.names.class_name(i.qualname),
            _doc_or(i.doc, i.name),
            bases,
            tuple(methods),
            i.qualname,
            string_literal(i.qualname),
        )


def _with_schema_name(default: str, schema_name: str) -> str:
    """A field declaration that records the schema's name of an escaped field
    (``dataclasses.fields(cls)[i].metadata["schema_name"]``)."""
    meta = f'metadata={{"schema_name": {string_literal(schema_name)}}}'
    if default.startswith("field(") and default.endswith(")"):
        return f"{default[:-1]}, {meta})"
    return f"field(default={default}, {meta})"


def _is_bytes(t: ir.Vector | ir.FixedArray, fbs: bool) -> bool:
    """HDI ``byte[]``/``unsigned char[]`` and FlatBuffers ``[ubyte]`` are ``bytes``."""
    kinds = (ir.ScalarKind.U8,) if fbs else (ir.ScalarKind.I8, ir.ScalarKind.U8)
    return isinstance(t, ir.Vector) and isinstance(t.element, ir.Scalar) and t.element.kind in kinds


def _zero_copy(t: ir.TypeRef) -> bool:
    """FlatBuffers numeric vectors, which the decoder may return as a zero-copy ScalarVector."""
    return (
        isinstance(t, ir.Vector)
        and isinstance(t.element, ir.Scalar)
        and t.element.kind is not ir.ScalarKind.BOOL
    )


def _scalar_literal(kind: ir.ScalarKind, value: Any) -> str:
    if kind is ir.ScalarKind.BOOL:
        return "True" if value else "False"
    if kind.is_float:
        v = float(value)
        if v != v:
            return 'float("nan")'
        if v in (float("inf"), float("-inf")):
            return 'float("inf")' if v > 0 else 'float("-inf")'
        return repr(v)
    return str(int(value))


def _doc_or(doc: str, name: str) -> str:
    return docstring(doc) if doc else docstring(name)


def _method_doc(m: ir.Method) -> str:
    extra = f"Command id {m.cmd_id}{', oneway' if m.oneway else ''}."
    return docstring(f"{m.doc}\n\n{extra}" if m.doc else extra)


def order_records(records: Sequence[RecordView], local: set[str]) -> list[RecordView]:
    """Declaration order, except a record comes after the local records its defaults build."""
    by_q = {r.qualname: r for r in records}
    out: list[RecordView] = []
    done: set[str] = set()
    for r in records:
        _place(r, by_q, local, done, out, set())
    return out


def _place(
    r: RecordView,
    by_q: dict[str, RecordView],
    local: set[str],
    done: set[str],
    out: list[RecordView],
    active: set[str],
) -> None:
    """Appends ``r`` to ``out`` after the local records its members refer to. (A module-level
    function: a nested recursive one is a reference cycle that keeps every view alive until
    the collector runs, ~0.4 s for a module of 20,000 records.)"""
    if r.qualname in done or r.qualname in active:
        return
    active.add(r.qualname)
    d = r.ir
    for m in d.fields if isinstance(d, ir.Struct) else d.members:
        t = m.type
        if isinstance(t, ir.Ref) and t.qualname in by_q and t.qualname in local:
            _place(by_q[t.qualname], by_q, local, done, out, active)
    done.add(r.qualname)
    out.append(r)
