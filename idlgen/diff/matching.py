"""Declaration matching and the comparison machinery shared by the HDI and FlatBuffers rules.

Declarations are matched by qualified name, with the HDI version segment stripped
(``ohos.hdi.nnrt.v1_0.Model`` ≡ ``ohos.hdi.nnrt.v2_1.Model``); what is left unmatched is paired
by kind and short name when that is unambiguous (a FlatBuffers namespace move or an HDI package
rename), then by identical content (a renamed type). Type references are compared through that
matching (``tkey``), so ``Ref``s into a moved namespace or to a renamed type still compare equal.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from .. import ir
from .decltext import decl_text
from .findings import Categories, Finding, Severity
from .members import Change, doc_changed
from .rules import LANG_RULES, RULES

__all__ = [
    "Lang",
    "Text",
    "Side",
    "Comparison",
    "hdi_package_base",
    "decl_kind",
    "dedup_names",
    "first_span",
    "attr_map",
    "sign_only",
    "sign_blind",
]

Lang = Literal["hdi", "fbs"]
# A finding's declaration text, or how to make it: most comparisons find nothing, and the text
# of every field of a big schema costs a third of comparing it.
Text = str | Callable[[], str]
_VERSION_RE = re.compile(r"\.[vV](\d+)_(\d+)$")


def hdi_package_base(namespace: str) -> str:
    """``ohos.hdi.nnrt.v2_1`` → ``ohos.hdi.nnrt``."""
    return _VERSION_RE.sub("", namespace)


@dataclass
class Side:
    schema: ir.Schema
    decls: dict[str, ir.Decl] = field(default_factory=dict)
    lang: dict[str, Lang] = field(default_factory=dict)
    file_of: dict[str, ir.SchemaFile] = field(default_factory=dict)
    key_of: dict[str, str] = field(default_factory=dict)  # qualname -> matching key
    primary: dict[str, str] = field(default_factory=dict)  # key -> the qualname compared

    def __post_init__(self) -> None:
        for f in self.schema.files:
            for d in f.decls:
                self.decls[d.qualname] = d
                self.lang[d.qualname] = f.language
                self.file_of[d.qualname] = f
                ns = hdi_package_base(d.namespace) if f.language == "hdi" else d.namespace
                self.key_of[d.qualname] = f"{ns}.{d.name}" if ns else d.name
        # An HDI minor version that `extends` the previous one loads both (v1_1.IFoo and the
        # imported v1_0.IFoo share a key): the highest version is the one compared, the older
        # copies are only reached through references and parents.
        self.primary.clear()
        for q in self.decls:
            k = self.key_of[q]
            cur = self.primary.get(k)
            if cur is None or self._version(q) > self._version(cur):
                self.primary[k] = q

    def _version(self, qualname: str) -> tuple[int, int]:
        return self.file_of[qualname].version or (0, 0)

    def resolve(self, qualname: str) -> ir.Decl:
        return self.decls[qualname]


# ---- same-width signedness: one policy for HDI and FlatBuffers -------------------------------
# A change that only flips the signedness of same-width integers (``int`` <-> ``unsigned int``,
# ``[byte]`` <-> ``[ubyte]``, an enum's base ``int`` <-> ``unsigned int``) leaves every byte a
# reader sees unchanged: FlatBuffers stores the same width; HDI writes Int32/Uint32 and
# Int64/Uint64 identically, widens 8/16-bit values to 4 bytes and truncates them back to the
# same bits, copies raw blocks at the same size, and sends an enum as the uint64 of its value
# (unchanged for every member whose number is unchanged; HDI-E-01 reports those that change).
# What changes is the meaning of values outside the shared range: a warning in both languages
# (HDI-T-02 / FBS-T-12, ``LangRules.signedness``). Any change of width stays breaking.
_TO_SIGNED = {
    ir.ScalarKind.U8: ir.ScalarKind.I8,
    ir.ScalarKind.U16: ir.ScalarKind.I16,
    ir.ScalarKind.U32: ir.ScalarKind.I32,
    ir.ScalarKind.U64: ir.ScalarKind.I64,
}


def sign_only(a: ir.ScalarKind, b: ir.ScalarKind) -> bool:
    """Two integer kinds of the same width that differ only in signedness."""
    return a != b and _TO_SIGNED.get(a, a) == _TO_SIGNED.get(b, b)


def sign_blind(t: ir.TypeRef) -> ir.TypeRef:
    """``t`` with every unsigned integer replaced by the signed one of the same width."""
    if isinstance(t, ir.Scalar):
        return ir.Scalar(_TO_SIGNED.get(t.kind, t.kind))
    if isinstance(t, (ir.Vector, ir.FixedArray, ir.SharedMemQueue)):
        return replace(t, element=sign_blind(t.element))
    if isinstance(t, ir.Map):
        return ir.Map(sign_blind(t.key), sign_blind(t.value))
    return t


def decl_kind(d: ir.Decl) -> str:
    if isinstance(d, ir.Struct):
        return "table" if d.is_table else "struct"
    return type(d).__name__.lower()


def kind_class(d: ir.Decl) -> str:
    # table<->struct is a kind change (FBS-K-01), not a different declaration.
    k = decl_kind(d)
    return "struct" if k == "table" else k


class Comparison:
    """State of one comparison (both sides, the matching, the findings) and the helpers every
    rule uses; the rules themselves are functions over it (``hdi_rules``, ``fbs_rules``)."""

    def __init__(self, old: ir.Schema, new: ir.Schema) -> None:
        self.o = Side(old)
        self.n = Side(new)
        self.findings: list[Finding] = []
        self.pairs: list[tuple[ir.Decl, ir.Decl]] = []
        # old qualname -> canonical token; new qualname -> canonical token
        self.canon_o: dict[str, str] = {}
        self.canon_n: dict[str, str] = {}
        # Unmatched primary declarations, filled by match().
        self.deleted: list[str] = []
        self.added: list[str] = []
        self.names_o = self._short_names(self.o)
        self.names_n = self._short_names(self.n)

    @staticmethod
    def _short_names(side: Side) -> dict[str, str]:
        count: dict[str, int] = defaultdict(int)
        for q in side.primary.values():
            count[side.decls[q].name] += 1
        return {
            q: (d.name if count[d.name] == 1 else side.key_of[q]) for q, d in side.decls.items()
        }

    def emit(
        self,
        rule_id: str,
        path: str,
        message: str,
        *,
        old: ir.Span | None = None,
        new: ir.Span | None = None,
        old_decl: Text = "",
        new_decl: Text = "",
        anchor: ir.Span | None = None,
        severity: Severity | None = None,
        categories: Categories | None = None,
        cause: str = "",
    ) -> None:
        rule = RULES[rule_id]
        sev = severity or rule.severity
        cats = rule.categories if categories is None else categories
        if not isinstance(old_decl, str):
            old_decl = old_decl()
        if not isinstance(new_decl, str):
            new_decl = new_decl()
        self.findings.append(
            Finding(rule_id, sev, path, message, old, new, old_decl, new_decl, anchor, cats, cause)
        )

    def tkey(self, t: ir.TypeRef, side: Literal["o", "n"]) -> object:
        """A wire-identity key of a type: Refs through the decl matching, spelling ignored."""
        if isinstance(t, ir.Ref):
            canon = self.canon_o if side == "o" else self.canon_n
            return ("ref", t.kind.value, canon.get(t.qualname, t.qualname))
        if isinstance(t, ir.Vector):
            return ("vec", self.tkey(t.element, side))
        if isinstance(t, ir.FixedArray):
            return ("arr", self.tkey(t.element, side), t.length)
        if isinstance(t, ir.Map):
            return ("map", self.tkey(t.key, side), self.tkey(t.value, side))
        if isinstance(t, ir.SharedMemQueue):
            return ("smq", self.tkey(t.element, side))
        return t

    def same_type(self, a: ir.TypeRef, b: ir.TypeRef) -> bool:
        return self.tkey(a, "o") == self.tkey(b, "n")

    def signedness_only(self, a: ir.TypeRef, b: ir.TypeRef) -> bool:
        """Different types that differ only in the signedness of same-width integers."""
        return not self.same_type(a, b) and self.same_type(sign_blind(a), sign_blind(b))

    def match(self) -> None:
        by_key_o = dict(self.o.primary)
        by_key_n = dict(self.n.primary)
        matched: list[tuple[str, str]] = [
            (by_key_o[k], by_key_n[k]) for k in by_key_o if k in by_key_n
        ]
        left_o = [q for k, q in by_key_o.items() if k not in by_key_n]
        left_n = [q for k, q in by_key_n.items() if k not in by_key_o]
        # Pair what is left by (kind, short name) when unique on both sides: a namespace move.
        groups_o: dict[tuple[str, str], list[str]] = defaultdict(list)
        groups_n: dict[tuple[str, str], list[str]] = defaultdict(list)
        for q in left_o:
            groups_o[(kind_class(self.o.decls[q]), self.o.decls[q].name)].append(q)
        for q in left_n:
            groups_n[(kind_class(self.n.decls[q]), self.n.decls[q].name)].append(q)
        moved: list[tuple[str, str]] = []
        for g, qs in groups_o.items():
            if len(qs) == 1 and len(groups_n.get(g, ())) == 1:
                moved.append((qs[0], groups_n[g][0]))
        moved_o = {a for a, _ in moved}
        moved_n = {b for _, b in moved}
        for qo, qn in matched + moved:
            token = "=" + self.n.key_of[qn]
            self.canon_o[qo] = token
            self.canon_n[qn] = token
            self.pairs.append((self.o.decls[qo], self.n.decls[qn]))
        for side, canon in ((self.o, self.canon_o), (self.n, self.canon_n)):
            for q in side.decls:
                prim = side.primary[side.key_of[q]]
                if prim != q and prim in canon:
                    canon[q] = canon[prim]
        self.deleted = sorted(q for q in left_o if q not in moved_o)
        self.added = sorted(q for q in left_n if q not in moved_n)
        self._report_moves(moved)
        self._pair_renamed_types()

    def _shape(self, d: ir.Decl, side: Side, canon: Literal["o", "n"]) -> object:
        """Everything about a declaration except its own name, docs and spans."""
        if isinstance(d, ir.Struct):
            return (
                "struct",
                d.is_table,
                d.force_align,
                tuple(
                    (
                        f.name,
                        self.tkey(f.type, canon),
                        f.slot,
                        f.default,
                        f.deprecated,
                        f.required,
                        f.optional,
                    )
                    for f in d.fields
                ),
            )
        if isinstance(d, ir.Enum):
            return (
                "enum",
                d.base,
                d.bit_flags,
                tuple((m.name, m.value) for m in d.members),
            )
        if isinstance(d, ir.Union):
            return (
                "union",
                d.discriminant,
                tuple((m.name, self.tkey(m.type, canon), m.value) for m in d.members),
            )
        if isinstance(d, ir.Interface) and side.lang[d.qualname] == "hdi":
            return (
                "interface",
                d.callback,
                tuple(
                    (
                        m.name,
                        m.cmd_id,
                        m.oneway,
                        tuple((p.direction, self.tkey(p.type, canon)) for p in m.params),
                    )
                    for m in self.flat_methods(d, side)
                ),
            )
        return None

    def _pair_renamed_types(self) -> None:
        """A deleted and an added declaration with identical content are one rename.

        Repeated until nothing new pairs: a renamed struct makes the interfaces that use it
        identical in turn."""
        while self._pair_renamed_round():
            pass

    def _pair_renamed_round(self) -> bool:
        paired = False
        shapes_o: dict[object, list[str]] = defaultdict(list)
        shapes_n: dict[object, list[str]] = defaultdict(list)
        for q in self.deleted:
            shape = self._shape(self.o.decls[q], self.o, "o")
            if shape is not None:
                shapes_o[shape].append(q)
        for q in self.added:
            shape = self._shape(self.n.decls[q], self.n, "n")
            if shape is not None:
                shapes_n[shape].append(q)
        for shape, qs in shapes_o.items():
            if len(qs) != 1 or len(shapes_n.get(shape, ())) != 1:
                continue
            qo, qn = qs[0], shapes_n[shape][0]
            do, dn = self.o.decls[qo], self.n.decls[qn]
            lang = self.n.lang[qn]
            token = "=" + self.n.key_of[qn]
            self.canon_o[qo] = token
            self.canon_n[qn] = token
            self.deleted.remove(qo)
            self.added.remove(qn)
            paired = True
            rules = LANG_RULES[lang]
            self.emit(
                rules.for_decl(rules.type_renamed, decl_kind(dn)),
                self.names_n[qn],
                f"{decl_kind(dn)} renamed from `{do.name}` (same content)",
                old=do.span,
                new=dn.span,
                old_decl=decl_text(do, lang),
                new_decl=decl_text(dn, lang),
            )
            self.report(
                doc_changed(lang, do, dn),
                self.names_n[qn],
                old=do.span,
                new=dn.span,
                old_decl=decl_text(do, lang),
                new_decl=decl_text(dn, lang),
            )
        return paired

    def _report_moves(self, moved: list[tuple[str, str]]) -> None:
        by_ns: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for qo, qn in moved:
            do, dn = self.o.decls[qo], self.n.decls[qn]
            by_ns[(do.namespace, dn.namespace)].append((qo, qn))
        for (ns_o, ns_n), items in sorted(by_ns.items()):
            qo, qn = sorted(items)[0]
            names = ", ".join(sorted(self.n.decls[b].name for _, b in items))
            lang = self.n.lang[qn]
            what = LANG_RULES[lang].namespace_word
            self.emit(
                LANG_RULES[lang].namespace_moved,
                ns_n or "(global namespace)",
                f"{what} `{ns_o or '(global)'}` renamed to `{ns_n or '(global)'}`; "
                f"{len(items)} types matched across the move: {names}",
                old=self.o.decls[qo].span,
                new=self.n.decls[qn].span,
                old_decl=f"{what} {ns_o};",
                new_decl=f"{what} {ns_n};",
            )

    def reachable_old(self) -> set[str]:
        roots: list[str] = []
        for f in self.o.schema.files:
            for d in f.decls:
                if isinstance(d, ir.Interface):
                    roots.append(d.qualname)
            if f.root_type:
                roots.append(self.resolve_root(self.o, f))
        seen: set[str] = set()
        stack = [r for r in roots if r in self.o.decls]
        while stack:
            q = stack.pop()
            if q in seen:
                continue
            seen.add(q)
            for ref in refs_of(self.o.decls[q]):
                if ref in self.o.decls and ref not in seen:
                    stack.append(ref)
        return seen

    @staticmethod
    def resolve_root(side: Side, f: ir.SchemaFile) -> str:
        if f.root_type in side.decls:
            return f.root_type
        q = f"{f.namespace}.{f.root_type}" if f.namespace else f.root_type
        if q in side.decls:
            return q
        hits = [k for k, d in side.decls.items() if d.name == f.root_type.rsplit(".", 1)[-1]]
        return hits[0] if len(hits) == 1 else f.root_type

    def file_anchor(self, old_file: ir.SchemaFile) -> ir.Span | None:
        """For a removal: the new file with the same name (its first declaration)."""
        for f in self.n.schema.files:
            if f.stem == old_file.stem:
                if f.span is not None:
                    return ir.Span(f.span.file, f.span.line, f.span.col, f.span.line, f.span.col)
                for d in f.decls:
                    if d.span is not None:
                        return d.span
                return ir.Span(f.path, 1, 1, 1, 1)
        return None

    def report(
        self,
        changes: Iterable[Change],
        path: str,
        *,
        old: ir.Span | None = None,
        new: ir.Span | None = None,
        old_decl: Text = "",
        new_decl: Text = "",
    ) -> None:
        """Emit each change of one entity (both sides known)."""
        for ch in changes:
            self.emit(
                ch.rule,
                path,
                ch.message,
                old=old,
                new=new,
                old_decl=old_decl,
                new_decl=new_decl,
                severity=ch.severity,
                categories=ch.categories,
                cause=ch.cause,
            )

    @staticmethod
    def flat_methods(iface: ir.Interface, side: Side) -> tuple[ir.Method, ...]:
        chain: list[ir.Interface] = []
        cur: ir.Interface | None = iface
        while cur is not None and cur not in chain:
            chain.append(cur)
            parent = side.decls.get(cur.parent) if cur.parent else None
            cur = parent if isinstance(parent, ir.Interface) else None
        return tuple(m for i in reversed(chain) for m in i.methods)

    @staticmethod
    def parent_token(parent: str, decl: ir.Decl, side: Side, canon: dict[str, str]) -> str:
        """The parent as compared: a previous version of the same declaration (the HDI minor
        version pattern ``interface IFoo extends v1_0.IFoo``) counts as no parent, since the
        flattened members are compared anyway."""
        if not parent:
            return ""
        pd = side.decls.get(parent)
        if pd is not None and side.key_of[parent] == side.key_of[decl.qualname]:
            grand = getattr(pd, "parent", "")
            return Comparison.parent_token(grand, pd, side, canon) if grand != parent else ""
        return canon.get(parent, parent)

    @staticmethod
    def cmd_table(iface: ir.Interface, side: Side) -> dict[int, str]:
        out: dict[int, str] = {}
        cur: ir.Interface | None = iface
        seen: set[str] = set()
        while cur is not None and cur.qualname not in seen:
            seen.add(cur.qualname)
            for m in cur.methods:
                out.setdefault(m.cmd_id, m.name)
            parent = side.decls.get(cur.parent) if cur.parent else None
            cur = parent if isinstance(parent, ir.Interface) else None
        return out


def first_span(files: Iterable[ir.SchemaFile]) -> ir.Span | None:
    for f in files:
        if f.span is not None:
            return f.span
        for d in f.decls:
            if d.span is not None:
                return ir.Span(d.span.file, 1, 1, 1, 1)
        return ir.Span(f.path, 1, 1, 1, 1)
    return None


def dedup_names(names: list[str]) -> list[str]:
    """Overloaded HDI methods share a name: number the repeats so each is its own key."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for n in names:
        out.append(n if not seen[n] else f"{n}#{seen[n]}")
        seen[n] += 1
    return out


def _walk_refs(t: ir.TypeRef, out: list[str]) -> None:
    # module-level: a recursive closure would be a reference cycle left for the collector
    if isinstance(t, ir.Ref):
        out.append(t.qualname)
    elif isinstance(t, (ir.Vector, ir.FixedArray, ir.SharedMemQueue)):
        _walk_refs(t.element, out)
    elif isinstance(t, ir.Map):
        _walk_refs(t.key, out)
        _walk_refs(t.value, out)


def refs_of(d: ir.Decl) -> list[str]:
    out: list[str] = []
    if isinstance(d, ir.Struct):
        for f in d.fields:
            _walk_refs(f.type, out)
        if d.parent:
            out.append(d.parent)
    elif isinstance(d, ir.Union):
        for m in d.members:
            _walk_refs(m.type, out)
    elif isinstance(d, ir.Interface):
        for me in d.methods:
            for p in me.params:
                _walk_refs(p.type, out)
        if d.parent:
            out.append(d.parent)
    elif isinstance(d, ir.Enum) and d.parent:
        out.append(d.parent)
    return out


def attr_map(attrs: tuple[ir.Attribute, ...]) -> dict[str, str | int | None]:
    return {a.name: a.value for a in attrs}
