"""Lower raw HDI files into the IR: resolve names, evaluate enums, apply hdi-gen's checks."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ... import ir
from ...bounds import MAX_INHERITANCE, MAX_TYPE_NESTING, MAX_VALUE_NESTING
from ...diagnostics import Diagnostics, suggest
from ...ir import Span
from ..graphs import cycle_names, depth_first
from . import ast as A
from .cexpr import CInt, CType, EvalError, ctype_of, evaluate

__all__ = ["Lowerer"]

_PRIM: dict[str, ir.TypeRef] = {
    "boolean": ir.Scalar(ir.ScalarKind.BOOL),
    "byte": ir.Scalar(ir.ScalarKind.I8),
    "short": ir.Scalar(ir.ScalarKind.I16),
    "int": ir.Scalar(ir.ScalarKind.I32),
    "long": ir.Scalar(ir.ScalarKind.I64),
    "float": ir.Scalar(ir.ScalarKind.F32),
    "double": ir.Scalar(ir.ScalarKind.F64),
    "String": ir.String(),
    "FileDescriptor": ir.Handle(ir.HandleKind.FILE_DESCRIPTOR),
    "Ashmem": ir.Handle(ir.HandleKind.ASHMEM),
    "NativeBuffer": ir.Handle(ir.HandleKind.NATIVE_BUFFER),
    "Pointer": ir.Handle(ir.HandleKind.POINTER),
}
_UNSIGNED = {
    "char": ir.ScalarKind.U8,
    "short": ir.ScalarKind.U16,
    "int": ir.ScalarKind.U32,
    "long": ir.ScalarKind.U64,
}
_UNSIGNED_REFS = {name: ir.Scalar(kind) for name, kind in _UNSIGNED.items()}
_ENUM_BASES = {
    ir.ScalarKind.I8,
    ir.ScalarKind.I16,
    ir.ScalarKind.I32,
    ir.ScalarKind.I64,
    ir.ScalarKind.U8,
    ir.ScalarKind.U16,
    ir.ScalarKind.U32,
    ir.ScalarKind.U64,
}
_KINDS: dict[type, ir.RefKind] = {
    A.RawEnum: ir.RefKind.ENUM,
    A.RawStruct: ir.RefKind.STRUCT,
    A.RawUnion: ir.RefKind.UNION,
    A.RawInterface: ir.RefKind.INTERFACE,
}
_TYPE_ATTRS = {"full", "lite", "mini"}
_AGGREGATES = (ir.RefKind.STRUCT, ir.RefKind.UNION)
_BASIC_NAMES = [
    "boolean", "byte", "short", "int", "long", "float", "double", "String",
    "FileDescriptor", "Ashmem", "NativeBuffer", "Pointer", "List", "Map", "SharedMemQueue",
]  # fmt: skip


C_NAMES = {
    ir.ScalarKind.I8: "byte",
    ir.ScalarKind.I16: "short",
    ir.ScalarKind.I32: "int",
    ir.ScalarKind.I64: "long",
    ir.ScalarKind.U8: "unsigned char",
    ir.ScalarKind.U16: "unsigned short",
    ir.ScalarKind.U32: "unsigned int",
    ir.ScalarKind.U64: "unsigned long",
}


_CTYPES = {k: ctype_of(k.size * 8, k.is_signed) for k in ir.ScalarKind}

# IR constructors that skip the frozen ``__init__``'s ``object.__setattr__`` (ast.fast_constructor)
_Field = A.fast_constructor(ir.Field, "name", "type", "doc", "span")
_InheritedField = A.fast_constructor(ir.Field, "name", "type", "doc", "inherited_from", "span")
_EnumMember = A.fast_constructor(ir.EnumMember, "name", "value", "doc", "expr", "span")
_InheritedMember = A.fast_constructor(
    ir.EnumMember, "name", "value", "doc", "expr", "inherited_from", "span"
)
_Param = A.fast_constructor(ir.Param, "name", "type", "direction", "span")
_Method = A.fast_constructor(
    ir.Method, "name", "params", "doc", "oneway", "cmd_id", "overload", "attributes", "span"
)


def _ctype(kind: ir.ScalarKind) -> CType:
    return _CTYPES[kind]


def _version(package: str) -> tuple[int, int]:
    ver = package.rsplit(".", 1)[1][1:]
    major, minor = ver.split("_")
    return int(major), int(minor)


def _version_of(qualname: str) -> tuple[int, int]:
    return _version(qualname.rsplit(".", 1)[0])


@dataclass
class _File:
    raw: A.RawFile
    digest: str
    imports: list[tuple[A.RawFile | None, A.Name]]
    package: str = ""
    # Visible names: own declarations and sequenceables first, then imported files.
    own: dict[str, str] = field(default_factory=dict)
    # An import of this file was not found or did not parse: its unknown types are no news.
    incomplete: bool = False


@dataclass
class _Entry:
    kind: ir.RefKind
    raw: A.RawDecl | A.Name
    file: _File


class Lowerer:
    """Collect files (imports first), then lower them all at once."""

    def __init__(
        self,
        diags: Diagnostics,
        sibling_decls: Callable[[str, str, str], str | None] | None = None,
    ) -> None:
        self.diags = diags
        # (file, package, name) -> a file beside it, of that package, that declares name
        self.sibling_decls = sibling_decls
        self.files: list[_File] = []
        self.index: dict[str, _Entry] = {}
        self.by_raw: dict[int, _File] = {}
        self.enums: dict[str, ir.Enum | None] = {}
        self.structs: dict[str, ir.Struct | None] = {}
        self._enum_stack: list[str] = []
        self._struct_stack: list[str] = []
        self._depth: dict[str, int] = {}  # struct qualname -> inheritance depth

    # ---------------------------------------------------------------- collection
    def add(
        self,
        raw: A.RawFile,
        digest: str,
        imports: Sequence[tuple[A.RawFile | None, A.Name]],
        *,
        incomplete: bool = False,
    ) -> None:
        """Add a file; ``incomplete``: one of its imports could not be loaded (reported)."""
        f = _File(raw, digest, list(imports), raw.package.text, incomplete=incomplete)
        self.files.append(f)
        self.by_raw[id(raw)] = f
        for seq in raw.sequenceables:
            ns, _, name = seq.text.rpartition(".")
            qual = seq.text if ns else f"{f.package}.{name}"
            f.own[name] = qual
            self.index.setdefault(qual, _Entry(ir.RefKind.SEQUENCEABLE, seq, f))
        for d in raw.decls:
            qual = f"{f.package}.{d.name.text}"
            prev = self.index.get(qual)
            if prev is not None and prev.kind is not ir.RefKind.SEQUENCEABLE:
                self.diags.error(
                    "HDI201",
                    f"'{d.name.text}' is already declared in package '{f.package}'",
                    d.name.span,
                    notes=[f"first declared at {self._span_of(prev)}"],
                )
                continue
            self.index[qual] = _Entry(_KINDS[type(d)], d, f)
            f.own[d.name.text] = qual

    @staticmethod
    def _span_of(e: _Entry) -> Span:
        return e.raw.span if isinstance(e.raw, A.Name) else e.raw.name.span

    # ---------------------------------------------------------------- lookup
    def _declared_in_package(self, f: _File, name: str) -> tuple[str, str] | None:
        """(file, import name) of another file of ``f``'s package that declares ``name``: one
        loaded in this run, else one beside it on disk (``sibling_decls``)."""
        e = self.index.get(f"{f.package}.{name}")
        if e is not None and e.file is not f and e.kind is not ir.RefKind.SEQUENCEABLE:
            path = e.file.raw.path
            stem = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
            return path, f"{f.package}.{stem}"
        if self.sibling_decls is not None:
            found = self.sibling_decls(f.raw.path, f.package, name)
            if found is not None:
                return found, f"{f.package}.{found.replace(chr(92), '/').rsplit('/', 1)[-1][:-4]}"
        return None

    def _visible(self, f: _File) -> Iterable[tuple[str, str]]:
        """(short name, qualname) pairs in lookup order: own, then imports breadth-first."""
        yield from f.own.items()
        seen = {id(f.raw)}
        frontier = [raw for raw, _ in f.imports if raw is not None]
        while frontier:
            nxt: list[A.RawFile] = []
            for raw in frontier:
                if id(raw) in seen:
                    continue
                seen.add(id(raw))
                g = self.by_raw.get(id(raw))
                if g is None:
                    continue
                yield from g.own.items()
                nxt.extend(r for r, _ in g.imports if r is not None)
            frontier = nxt

    def _lookup(self, f: _File, name: str) -> str | None:
        if "." in name:
            return name if name in self.index else None
        # Same order as _visible (own, then imports breadth-first), a dict probe per file.
        qual = f.own.get(name)
        if qual is not None:
            return qual
        seen = {id(f.raw)}
        frontier = [raw for raw, _ in f.imports if raw is not None]
        while frontier:
            nxt: list[A.RawFile] = []
            for raw in frontier:
                if id(raw) in seen:
                    continue
                seen.add(id(raw))
                g = self.by_raw.get(id(raw))
                if g is None:
                    continue
                qual = g.own.get(name)
                if qual is not None:
                    return qual
                nxt.extend(r for r, _ in g.imports if r is not None)
            frontier = nxt
        return None

    def _unknown_type(self, f: _File, name: str, span: Span) -> None:
        if f.incomplete or any(raw is None for raw, _ in f.imports):
            return  # an import that did not parse may declare it: its error says enough
        where = self._declared_in_package(f, name) if "." not in name else None
        if where is not None:
            # declared by another file of the package that this file does not import
            self.diags.error(
                "HDI202",
                f"unknown type '{name}'",
                span,
                help=[f"'{name}' is declared in '{where[0]}': add 'import {where[1]};'"],
            )
            return
        candidates = itertools.chain(_BASIC_NAMES, (s for s, _ in self._visible(f)))
        close = suggest(self.diags, name, candidates, n=3)
        help = [f"did you mean {' or '.join(repr(c) for c in close)}?"] if close else []
        if "." in name:
            help.append("a qualified name must refer to a type in an imported file")
        self.diags.error("HDI202", f"unknown type '{name}'", span, help=help)

    def _type(self, f: _File, t: A.RawType, depth: int = 0) -> ir.TypeRef | None:
        if t.kind == "prim" and not t.dims and depth < MAX_TYPE_NESTING:  # the common case
            return _PRIM[t.name]
        base: ir.TypeRef | None
        depth += 1 + t.dims
        if depth > MAX_TYPE_NESTING:  # `int[][]…` is flat syntax but a deep type
            self.diags.error(
                "HDI203", f"type nested more than {MAX_TYPE_NESTING} levels deep", t.span
            )
            return None
        if t.kind == "prim":
            base = _PRIM[t.name]
        elif t.kind == "unsigned":
            base = _UNSIGNED_REFS[t.name]  # shared, like _PRIM: the IR is immutable
        elif t.kind == "list":
            el = self._type(f, t.args[0], depth)
            base = ir.Vector(el, "list") if el is not None else None
        elif t.kind == "smq":
            el = self._type(f, t.args[0], depth)
            base = ir.SharedMemQueue(el) if el is not None else None
        elif t.kind == "map":
            k = self._type(f, t.args[0], depth)
            v = self._type(f, t.args[1], depth)
            base = ir.Map(k, v) if k is not None and v is not None else None
        else:
            qual = self._lookup(f, t.name)
            if qual is None:
                self._unknown_type(f, t.name, t.span)
                return None
            base = ir.Ref(qual, self.index[qual].kind)
        if base is None:
            return None
        for _ in range(t.dims):
            base = ir.Vector(base, "array")
        return base

    # ---------------------------------------------------------------- lowering
    def lower_all(self) -> list[ir.SchemaFile]:
        out = []
        bad = self._check_value_nesting()
        bad |= self._check_sequence_cycles(bad)
        for qual in bad:
            self.structs[qual] = None  # unions are skipped below
        for f in self.files:
            decls: list[ir.Decl] = []
            for seq in f.raw.sequenceables:
                ns, _, name = seq.text.rpartition(".")
                decls.append(ir.Sequenceable(name, ns or f.package, span=seq.span))
            self._check_file_kind(f)
            for d in f.raw.decls:
                qual = f"{f.package}.{d.name.text}"
                entry = self.index.get(qual)
                if entry is None or entry.raw is not d:
                    continue  # a duplicate, already reported
                lowered: ir.Decl | None
                self._check_type_attrs(d)
                if isinstance(d, A.RawEnum):
                    lowered = self._enum(qual)
                elif isinstance(d, A.RawStruct):
                    lowered = self._struct(qual)
                elif isinstance(d, A.RawUnion):
                    lowered = None if qual in bad else self._union(f, d)
                else:
                    lowered = self._interface(f, d)
                if lowered is not None:
                    decls.append(lowered)
            self._check_import_versions(f)
            out.append(
                ir.SchemaFile(
                    path=f.raw.path,
                    language="hdi",
                    namespace=f.package,
                    decls=tuple(decls),
                    version=_version(f.package),
                    imports=tuple(n.text for _, n in f.imports),
                    digest=f.digest,
                    span=f.raw.package.span,
                )
            )
        return out

    def _value_edges(self, qual: str) -> list[tuple[str, tuple[Span, bool]]]:
        """(struct/union held by value, (where, via inheritance?)) for a struct or union."""
        entry = self.index[qual]
        d = entry.raw
        assert isinstance(d, (A.RawStruct, A.RawUnion))
        out: list[tuple[str, tuple[Span, bool]]] = []
        typed = [m.type for m in d.members if m.type.kind == "named" and not m.type.dims]
        parent = d.parent if isinstance(d, A.RawStruct) else None
        if parent is not None:
            typed.insert(0, parent)
        for t in typed:
            if t.kind != "named" or t.dims:  # List<S>, S[]: held through a pointer
                continue
            target = self._lookup(entry.file, t.name)
            if target is not None and self.index[target].kind in _AGGREGATES:
                out.append((target, (t.span, t is parent)))
        return out

    def _check_value_nesting(self) -> set[str]:
        """Structs and unions that hold themselves by value (C++: infinite size; the POD and
        layout rules would recurse forever) or nest more than MAX_VALUE_NESTING levels deep.

        One iterative walk over the by-value graph; returns the qualnames to leave out of the
        IR, so that nothing downstream meets the cycle or the deep chain.
        """
        bad: set[str] = set()
        height: dict[str, int] = {}  # done: levels of by-value nesting below and including it
        edges: dict[str, list[tuple[str, tuple[Span, bool]]]] = {}

        def edges_of(q: str) -> list[tuple[str, tuple[Span, bool]]]:
            e = edges.get(q)
            if e is None:
                e = edges[q] = self._value_edges(q)
            return e

        def done(q: str) -> None:
            # a parent's members are flattened into the child: same level
            h = max((height.get(t, 0) + (not inh) for t, (_, inh) in edges_of(q)), default=0)
            h = max(h, 1)
            height[q] = h
            # Everything over the limit is left out (so what remains nests at most
            # MAX_VALUE_NESTING deep); only the first level over it is reported.
            if h > MAX_VALUE_NESTING:
                bad.add(q)
            if h == MAX_VALUE_NESTING + 1:
                self.diags.error(
                    "HDI316",
                    f"'{q.rsplit('.', 1)[1]}' nests structs or unions by value more "
                    f"than {MAX_VALUE_NESTING} levels deep",
                    self._span_of(self.index[q]),
                )

        def cycle(path: Sequence[str], i: int, edge: tuple[Span, bool], by_value: int) -> None:
            t = path[i]
            if not by_value:  # a cycle of `extends` alone is HDI310's ("extends itself")
                return
            chain = " -> ".join(cycle_names(path, i, t, lambda q: q.rsplit(".", 1)[-1]))
            self.diags.error(
                "HDI315",
                f"'{t.rsplit('.', 1)[1]}' contains itself by value: {chain}",
                edge[0],
                help=[
                    "HDI has no recursive types: not even a List<…> or array of itself " "(HDI317)"
                ],
            )
            # Dropping the target of every back edge leaves a DAG; marking the whole cycle
            # instead would cost quadratic time when many back edges share a long path.
            bad.add(t)

        # Those holding nothing by value are leaves: height 1, nothing to report, visited
        # only if something holds them.
        roots = [
            q
            for q, entry in self.index.items()
            if entry.kind in _AGGREGATES
            and isinstance(entry.raw, (A.RawStruct, A.RawUnion))
            and edges_of(q)
        ]
        # weight 1 per by-value member, 0 per `extends`
        depth_first(roots, edges_of, cycle, done, weight=lambda e: int(not e[1]))
        return bad

    def _held_edges(self, qual: str) -> list[tuple[str, tuple[Span, bool]]]:
        """(struct/union, where) for every struct or union a struct or union names anywhere in
        its members' types (by value, in List<…>, Map<…>, arrays) or extends."""
        entry = self.index[qual]
        d = entry.raw
        assert isinstance(d, (A.RawStruct, A.RawUnion))
        out: list[tuple[str, tuple[Span, bool]]] = []
        parent = d.parent if isinstance(d, A.RawStruct) else None
        todo = [m.type for m in d.members] + ([parent] if parent is not None else [])
        while todo:
            t = todo.pop()
            todo.extend(t.args)
            if t.kind != "named":
                continue
            target = self._lookup(entry.file, t.name)
            if target is not None and self.index[target].kind in _AGGREGATES:
                out.append((target, (t.span, t is parent)))
        return out

    def _check_sequence_cycles(self, bad: set[str]) -> set[str]:
        """A struct or union that reaches itself through a List<…>, Map<…> or array (HDI317).

        hdi-gen declares a struct only after its members, so ``struct Node { List<Node> kids; }``
        is its error "this type was not declared in this scope", and so is any cycle (one of
        its structs names another not yet declared); the Parcel codec of such a struct would
        need itself before it exists. By-value cycles are HDI315's and already in ``bad``.
        Returns the targets of the reported back edges, to leave out of the IR.
        """
        found: set[str] = set()
        edges: dict[str, list[tuple[str, tuple[Span, bool]]]] = {}

        def edges_of(q: str) -> list[tuple[str, tuple[Span, bool]]]:
            e = edges.get(q)
            if e is None:
                e = edges[q] = [x for x in self._held_edges(q) if x[0] not in bad]
            return e

        def cycle(path: Sequence[str], i: int, edge: tuple[Span, bool], members: int) -> None:
            t = path[i]
            if not members:  # a cycle of `extends` alone is HDI310's ("extends itself")
                return
            span = edge[0]
            chain = " -> ".join(cycle_names(path, i, t, lambda q: q.rsplit(".", 1)[-1]))
            self.diags.error(
                "HDI317",
                f"'{t.rsplit('.', 1)[1]}' holds itself through a sequence: {chain}",
                span,
                help=[
                    "hdi-gen rejects this: a struct is declared only after its members "
                    "('this type was not declared in this scope')"
                ],
            )
            found.add(t)

        roots = [
            q
            for q, entry in self.index.items()
            if entry.kind in _AGGREGATES
            and isinstance(entry.raw, (A.RawStruct, A.RawUnion))
            and q not in bad
        ]
        depth_first(roots, edges_of, cycle, weight=lambda e: int(not e[1]))
        return found

    def _check_file_kind(self, f: _File) -> None:
        ifaces = [d for d in f.raw.decls if isinstance(d, A.RawInterface)]
        if not ifaces:
            return
        stem = f.raw.path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        for extra in ifaces[1:]:
            self.diags.error("HDI401", "a file may declare only one interface", extra.name.span)
        for d in f.raw.decls:
            if not isinstance(d, A.RawInterface):
                self.diags.error(
                    "HDI402",
                    f"interface file cannot declare custom type '{d.name.text}'",
                    d.name.span,
                    help=["move enums, structs and unions into a types file (e.g. 'Types.idl')"],
                )
        if ifaces[0].name.text != stem:
            self.diags.error(
                "HDI403",
                f"interface name '{ifaces[0].name.text}' is not equal to the file name '{stem}'",
                ifaces[0].name.span,
            )

    def _check_type_attrs(self, d: A.RawDecl) -> None:
        if not d.attrs:
            return
        allowed = _TYPE_ATTRS | ({"callback", "oneway"} if isinstance(d, A.RawInterface) else set())
        seen: set[str] = set()
        for a in d.attrs:
            if a.text in seen:
                self.diags.error("HDI404", f"duplicate attribute '{a.text}'", a.span)
            seen.add(a.text)
            if a.text not in allowed:
                what = "an interface" if isinstance(d, A.RawInterface) else "a type declaration"
                self.diags.error("HDI405", f"attribute '{a.text}' is not allowed on {what}", a.span)

    def _check_import_versions(self, f: _File) -> None:
        major, minor = _version(f.package)
        for _, imp in f.imports:
            try:
                imajor, iminor = _version_of(imp.text)
            except (ValueError, IndexError):
                continue
            if imajor != major or iminor > minor:
                self.diags.error(
                    "HDI107",
                    f"cannot import version {imajor}.{iminor} from version {major}.{minor}",
                    imp.span,
                    help=[
                        "an import must have the same major version and a minor version "
                        "no greater than the importing package's"
                    ],
                )

    # ---- enums
    def _enum(self, qual: str) -> ir.Enum | None:
        if qual in self.enums:
            return self.enums[qual]
        entry = self.index[qual]
        d = entry.raw
        assert isinstance(d, A.RawEnum)
        f = entry.file
        if qual in self._enum_stack:
            self.diags.error("HDI301", f"enum '{d.name.text}' extends itself", d.name.span)
            return None
        self._enum_stack.append(qual)
        try:
            result = self._enum_body(f, d, qual)
        finally:
            self._enum_stack.pop()
        self.enums[qual] = result
        return result

    def _enum_body(self, f: _File, d: A.RawEnum, qual: str) -> ir.Enum | None:
        base = ir.ScalarKind.I32
        explicit_base = False
        parent = ""
        members: list[ir.EnumMember] = []
        if d.base is not None:
            bt = self._type(f, d.base)
            if bt is None:
                return None
            if isinstance(bt, ir.Ref) and bt.kind is ir.RefKind.ENUM:
                pe = self._enum(bt.qualname)
                if pe is None:
                    return None
                parent, base, explicit_base = pe.qualname, pe.base, True
                members = [
                    _InheritedMember(
                        m.name, m.value, m.doc, m.expr, m.inherited_from or pe.qualname, m.span
                    )
                    for m in pe.members
                ]
            elif isinstance(bt, ir.Scalar) and bt.kind in _ENUM_BASES:
                base, explicit_base = bt.kind, True
            else:
                self.diags.error(
                    "HDI302",
                    f"illegal base type of enum: '{d.base.text()}'",
                    d.base.span,
                    help=["use byte, short, int, long, an unsigned integer type or another enum"],
                )
                return None
        ctype = _ctype(base)
        # every enumerator has the enum's type: keep plain values, make a CInt when referenced
        values: dict[str, int] = {m.name: m.value for m in members}
        inherited = len(members)
        prev: int | None = members[-1].value if members else None
        ok = True
        lookup = _Lookup(d, values, ctype)  # sees the members added below
        for m in d.members:
            if m.name.text in values:
                self.diags.error("HDI303", f"duplicate enum member '{m.name.text}'", m.name.span)
                ok = False
                continue
            if m.value is None:
                value = 0 if prev is None else prev + 1
                expr = ""
            else:
                expr = A.expr_text(m.value)
                try:
                    value = evaluate(m.value, lookup).value
                except EvalError as e:
                    span = e.node.span
                    msg = str(e)
                    help: list[str] = []
                    if isinstance(e.node, A.NameRef):
                        close = suggest(self.diags, e.node.name, values)
                        if close:
                            help.append(f"did you mean '{close[0]}'?")
                    self.diags.error("HDI304", msg, span, help=help)
                    ok = False
                    continue
            values[m.name.text] = value
            members.append(_EnumMember(m.name.text, value, m.doc, expr, m.span))
            prev = value
        if not ok:
            return None
        own = members[inherited:]
        lo, hi = ctype.limits()
        bad = [m for m in own if not lo <= m.value <= hi]
        if bad and explicit_base:
            for b in bad:
                self.diags.error(
                    "HDI305",
                    f"value {b.value} of '{b.name}' is out of range for the enum's base type "
                    f"'{C_NAMES[base]}'",
                    b.span,
                )
            return None
        if bad:
            # No base type written: hdi-gen emits `: int32_t`, which C++ rejects for such values.
            # We follow C++ for enums without a fixed type: widen to a type that holds them all.
            lo = min(m.value for m in members)
            hi = max(m.value for m in members)
            for cand in (ir.ScalarKind.U32, ir.ScalarKind.I64, ir.ScalarKind.U64):
                if _ctype(cand).fits(lo) and _ctype(cand).fits(hi):
                    base = cand
                    break
            else:
                self.diags.error("HDI305", "enum values do not fit any integer type", d.name.span)
                return None
            self.diags.warning(
                "HDI306",
                f"value {bad[0].value} of '{bad[0].name}' does not fit 'int'; enum "
                f"'{d.name.text}' has no base type, so it is widened to "
                f"'{C_NAMES[base]}' as C++ does for enums without a fixed type",
                bad[0].span,
                help=[f"declare the base type: 'enum {d.name.text} : {C_NAMES[base]}'"],
            )
        return ir.Enum(
            d.name.text, f.package, base, tuple(members), d.doc, parent, span=d.name.span
        )

    # ---- structs and unions
    def _struct(self, qual: str) -> ir.Struct | None:
        if qual in self.structs:
            return self.structs[qual]
        entry = self.index[qual]
        d = entry.raw
        assert isinstance(d, A.RawStruct)
        f = entry.file
        if qual in self._struct_stack:
            self.diags.error("HDI310", f"struct '{d.name.text}' extends itself", d.name.span)
            return None
        if len(self._struct_stack) > MAX_INHERITANCE:  # bounds the recursion below
            self.diags.error(
                "HDI314",
                f"struct '{d.name.text}' is more than {MAX_INHERITANCE} levels of inheritance deep",
                d.name.span,
            )
            return None
        self._struct_stack.append(qual)
        try:
            result = self._struct_body(f, d)
        finally:
            self._struct_stack.pop()
        self.structs[qual] = result
        return result

    def _struct_body(self, f: _File, d: A.RawStruct) -> ir.Struct | None:
        fields: list[ir.Field] = []
        parent = ""
        if d.parent is not None:
            pt = self._type(f, d.parent)
            if pt is None:
                return None
            if not (isinstance(pt, ir.Ref) and pt.kind is ir.RefKind.STRUCT):
                self.diags.error(
                    "HDI311", f"illegal base type of struct: '{d.parent.text()}'", d.parent.span
                )
                return None
            ps = self._struct(pt.qualname)
            if ps is None:
                return None
            depth = self._depth.get(ps.qualname, 0) + 1
            if depth > MAX_INHERITANCE:
                # each level copies all inherited fields: deep chains cost quadratic time
                self.diags.error(
                    "HDI314",
                    f"struct '{d.name.text}' is more than {MAX_INHERITANCE} levels of "
                    "inheritance deep",
                    d.name.span,
                )
                return None
            self._depth[f"{f.package}.{d.name.text}"] = depth
            parent = ps.qualname
            fields = [
                _InheritedField(x.name, x.type, x.doc, x.inherited_from or ps.qualname, x.span)
                for x in ps.fields
            ]
        fields.extend(self._members(f, d.members, d.name.text, {x.name for x in fields}))
        return ir.Struct(
            d.name.text, f.package, tuple(fields), d.doc, parent=parent, span=d.name.span
        )

    def _members(
        self, f: _File, members: Sequence[A.RawMember], owner: str, taken: set[str]
    ) -> list[ir.Field]:
        out = []
        for m in members:
            t = self._type(f, m.type)
            if m.name.text in taken:
                self.diags.error(
                    "HDI312", f"duplicate member '{m.name.text}' in '{owner}'", m.name.span
                )
                continue
            taken.add(m.name.text)
            if t is not None:
                out.append(_Field(m.name.text, t, m.doc, m.name.span))
        return out

    def _union(self, f: _File, d: A.RawUnion) -> ir.Union | None:
        fields = self._members(f, d.members, d.name.text, set())
        members = []
        for fl in fields:
            if not self.is_pod(fl.type):
                self.diags.error(
                    "HDI313",
                    f"union member '{fl.name}' must be plain data (numbers, enums, plain structs)",
                    fl.span,
                )
                continue
            members.append(ir.UnionMember(fl.name, fl.type, None, fl.doc, span=fl.span))
        return ir.Union(d.name.text, f.package, tuple(members), d.doc, span=d.name.span)

    def is_pod(self, t: ir.TypeRef) -> bool:
        """hdi-gen's POD rule: numbers, enums, unions and structs of POD members."""
        if isinstance(t, ir.Scalar):
            return True
        if isinstance(t, ir.Handle):
            return t.kind is ir.HandleKind.POINTER
        if isinstance(t, ir.Ref):
            if t.kind in (ir.RefKind.ENUM, ir.RefKind.UNION):
                return True
            if t.kind is ir.RefKind.STRUCT:
                s = self._struct(t.qualname)
                return s is not None and all(self.is_pod(x.type) for x in s.fields)
        return False

    # ---- interfaces
    def _interface(self, f: _File, d: A.RawInterface) -> ir.Interface | None:
        attrs = {a.text for a in d.attrs}
        callback = "callback" in attrs
        iface_oneway = "oneway" in attrs
        parent = ""
        first_id = 1
        ancestor_names: set[str] = set()
        if d.extends is not None:
            pq = self._lookup(f, d.extends.text)
            if pq is None or self.index[pq].kind is not ir.RefKind.INTERFACE:
                self._unknown_type(f, d.extends.text, d.extends.span)
            else:
                parent = pq
                pname = pq.rsplit(".", 1)[1]
                if pname != d.name.text:
                    self.diags.error(
                        "HDI406",
                        f"extended interface '{pname}' must have the same name as '{d.name.text}'",
                        d.extends.span,
                    )
                pmaj, pmin = _version_of(pq)
                maj, mnr = _version(f.package)
                if pmaj != maj or pmin >= mnr:
                    self.diags.error(
                        "HDI407",
                        f"'{d.name.text}' {maj}.{mnr} cannot extend version {pmaj}.{pmin}",
                        d.extends.span,
                        help=[
                            "an interface extends one of the same major and a lower minor "
                            "version"
                        ],
                    )
                count, ancestor_names = self._ancestor_methods(pq)
                first_id = count + 1
        if not d.methods and not callback:
            self.diags.error("HDI408", f"interface '{d.name.text}' has no method", d.name.span)
        methods: list[ir.Method] = []
        if not parent:
            u32 = ir.Scalar(ir.ScalarKind.U32)
            methods.append(
                ir.Method(
                    "GetVersion",
                    (ir.Param("majorVer", u32, "out"), ir.Param("minorVer", u32, "out")),
                    "Returns the interface's major and minor version.",
                    cmd_id=0,
                    implicit=True,
                )
            )
        for i, m in enumerate(d.methods):
            mattrs: set[str] = set()
            for a in m.attrs:
                if a.text in mattrs:
                    self.diags.error("HDI404", f"duplicate attribute '{a.text}'", a.span)
                mattrs.add(a.text)
                if a.text == "callback":
                    self.diags.error(
                        "HDI409", "attribute 'callback' is not allowed on a method", a.span
                    )
            oneway = iface_oneway or "oneway" in mattrs
            params: list[ir.Param] = []
            pnames: set[str] = set()
            for p in m.params:
                if p.name.text in pnames:
                    self.diags.error("HDI410", f"duplicate parameter '{p.name.text}'", p.name.span)
                pnames.add(p.name.text)
                if oneway and p.direction == "out":
                    self.diags.error(
                        "HDI411",
                        f"the '{p.name.text}' parameter of oneway method '{m.name.text}' "
                        "cannot be 'out'",
                        p.span,
                    )
                t = self._type(f, p.type)
                if t is None:
                    continue
                if isinstance(t, ir.Ref) and t.kind is ir.RefKind.INTERFACE:
                    self._check_iface_param(t, p)
                params.append(_Param(p.name.text, t, p.direction, p.span))
            methods.append(
                _Method(
                    m.name.text,
                    tuple(params),
                    m.doc,
                    oneway,
                    first_id + i,
                    m.name.text in ancestor_names,
                    tuple(ir.Attribute(a.text, span=a.span) for a in m.attrs),
                    m.name.span,
                )
            )
        return ir.Interface(
            d.name.text,
            f.package,
            tuple(methods),
            d.doc,
            parent=parent,
            callback=callback,
            attributes=tuple(ir.Attribute(a.text, span=a.span) for a in d.attrs),
            span=d.name.span,
        )

    def _check_iface_param(self, t: ir.Ref, p: A.RawParam) -> None:
        target = self.index[t.qualname].raw
        is_cb = isinstance(target, A.RawInterface) and any(
            a.text == "callback" for a in target.attrs
        )
        if is_cb and p.direction != "in":
            self.diags.error(
                "HDI412", f"callback interface parameter '{p.name.text}' must be [in]", p.span
            )
        elif not is_cb and p.direction != "out":
            self.diags.error("HDI412", f"interface parameter '{p.name.text}' must be [out]", p.span)

    def _ancestor_methods(self, qual: str) -> tuple[int, set[str]]:
        """(number of user methods of ``qual`` and its ancestors, their names)."""
        count = 0
        names: set[str] = set()
        seen: set[str] = set()
        while qual and qual not in seen:
            seen.add(qual)
            e = self.index.get(qual)
            if e is None or not isinstance(e.raw, A.RawInterface):
                break
            count += len(e.raw.methods)
            names.update(m.name.text for m in e.raw.methods)
            ext = e.raw.extends
            qual = (self._lookup(e.file, ext.text) or "") if ext is not None else ""
        return count, names


class _Lookup:
    """Resolves enumerator names inside an enum body (own earlier or inherited members)."""

    def __init__(self, d: A.RawEnum, values: dict[str, int], ctype: CType) -> None:
        self.d = d
        self.values = values
        self.ctype = ctype

    def __call__(self, ref: A.NameRef) -> CInt:
        v = self.values.get(ref.name)
        if v is None:
            raise EvalError(f"unknown enum member '{ref.name}' in enum '{self.d.name.text}'", ref)
        return CInt(v, self.ctype)
