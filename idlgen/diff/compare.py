"""Structural comparison of two schema IRs: ``compare(old, new) -> list[Finding]``.

Declarations are matched by qualified name, with the HDI version segment stripped
(``ohos.hdi.nnrt.v1_0.Model`` ≡ ``ohos.hdi.nnrt.v2_1.Model``); what is left unmatched is paired
by kind and short name when that is unambiguous (a FlatBuffers namespace move or an HDI package
rename), so a move is one finding instead of everything deleted and re-added. Type references
are compared through that matching, so ``Ref``s into a moved namespace still compare equal.

Members are compared by name; an old member that vanished and a new one at the same position
(HDI) or slot/offset (FlatBuffers) with the same type is a rename. Spans are only carried along
for reporting.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .. import ir
from ..hdi import layout as hdi_layout
from .decltext import (
    decl_text,
    field_text,
    member_text,
    method_text,
    param_text,
    type_text,
)
from .findings import Finding, Severity
from .rules import RULES

__all__ = ["compare", "hdi_package_base"]

Lang = Literal["hdi", "fbs"]
_VERSION_RE = re.compile(r"\.[vV](\d+)_(\d+)$")
# Field attributes with their own rule; id/deprecated/required/key are fields of ir.Field, and
# every other attribute change (key, nested_flatbuffer, flexbuffer, hash, ...) is FBS-A-01.
_OFFSET64_ATTRS = ("offset64", "vector64")


def hdi_package_base(namespace: str) -> str:
    """``ohos.hdi.nnrt.v2_1`` → ``ohos.hdi.nnrt``."""
    return _VERSION_RE.sub("", namespace)


@dataclass
class _Side:
    schema: ir.Schema
    decls: dict[str, ir.Decl] = field(default_factory=dict)
    lang: dict[str, Lang] = field(default_factory=dict)
    file_of: dict[str, ir.SchemaFile] = field(default_factory=dict)
    key_of: dict[str, str] = field(default_factory=dict)  # qualname -> matching key
    primary: dict[str, str] = field(
        default_factory=dict
    )  # key -> the qualname compared

    def __post_init__(self) -> None:
        for f in self.schema.files:
            for d in f.decls:
                self.decls[d.qualname] = d
                self.lang[d.qualname] = f.language
                self.file_of[d.qualname] = f
                ns = (
                    hdi_package_base(d.namespace)
                    if f.language == "hdi"
                    else d.namespace
                )
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


def _kind(d: ir.Decl) -> str:
    if isinstance(d, ir.Struct):
        return "table" if d.is_table else "struct"
    return type(d).__name__.lower()


def _kind_class(d: ir.Decl) -> str:
    # table<->struct is a kind change (FBS-K-01), not a different declaration.
    k = _kind(d)
    return "struct" if k == "table" else k


class _Comparer:
    def __init__(self, old: ir.Schema, new: ir.Schema) -> None:
        self.o = _Side(old)
        self.n = _Side(new)
        self.findings: list[Finding] = []
        self.pairs: list[tuple[ir.Decl, ir.Decl]] = []
        # old qualname -> canonical token; new qualname -> canonical token
        self.canon_o: dict[str, str] = {}
        self.canon_n: dict[str, str] = {}
        self.names_o = self._short_names(self.o)
        self.names_n = self._short_names(self.n)

    # ------------------------------------------------------------------------------------------
    # helpers

    @staticmethod
    def _short_names(side: _Side) -> dict[str, str]:
        count: dict[str, int] = defaultdict(int)
        for q in side.primary.values():
            count[side.decls[q].name] += 1
        return {
            q: (d.name if count[d.name] == 1 else side.key_of[q])
            for q, d in side.decls.items()
        }

    def emit(
        self,
        rule_id: str,
        path: str,
        message: str,
        *,
        old: ir.Span | None = None,
        new: ir.Span | None = None,
        old_decl: str = "",
        new_decl: str = "",
        anchor: ir.Span | None = None,
        severity: Severity | None = None,
    ) -> None:
        sev = severity or RULES[rule_id].severity
        self.findings.append(
            Finding(rule_id, sev, path, message, old, new, old_decl, new_decl, anchor)
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

    # ------------------------------------------------------------------------------------------
    # declaration matching

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
            groups_o[(_kind_class(self.o.decls[q]), self.o.decls[q].name)].append(q)
        for q in left_n:
            groups_n[(_kind_class(self.n.decls[q]), self.n.decls[q].name)].append(q)
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

    def _shape(self, d: ir.Decl, side: _Side, canon: Literal["o", "n"]) -> object:
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
                        tuple(
                            (p.direction, self.tkey(p.type, canon)) for p in m.params
                        ),
                    )
                    for m in self._flat_methods(d, side)
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
            if isinstance(dn, ir.Interface):
                rule_id = "HDI-IF-03"
            else:
                rule_id = "HDI-Y-04" if lang == "hdi" else "FBS-Y-03"
            self.emit(
                rule_id,
                self.names_n[qn],
                f"{_kind(dn)} renamed from `{do.name}` (same content)",
                old=do.span,
                new=dn.span,
                old_decl=decl_text(do, lang),
                new_decl=decl_text(dn, lang),
            )
            self._doc(
                lang,
                self.names_n[qn],
                getattr(do, "doc", ""),
                getattr(dn, "doc", ""),
                do.span,
                dn.span,
                decl_text(do, lang),
                decl_text(dn, lang),
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
            if lang == "hdi":
                rule_id, what = "HDI-PKG-03", "package"
            else:
                rule_id, what = "FBS-F-03", "namespace"
            self.emit(
                rule_id,
                ns_n or "(global namespace)",
                f"{what} `{ns_o or '(global)'}` renamed to `{ns_n or '(global)'}`; "
                f"{len(items)} types matched across the move: {names}",
                old=self.o.decls[qo].span,
                new=self.n.decls[qn].span,
                old_decl=f"{what} {ns_o};",
                new_decl=f"{what} {ns_n};",
            )

    # ------------------------------------------------------------------------------------------
    # reachability for deleted types

    def _reachable_old(self) -> set[str]:
        roots: list[str] = []
        for f in self.o.schema.files:
            for d in f.decls:
                if isinstance(d, ir.Interface):
                    roots.append(d.qualname)
            if f.root_type:
                roots.append(self._resolve_root(self.o, f))
        seen: set[str] = set()
        stack = [r for r in roots if r in self.o.decls]
        while stack:
            q = stack.pop()
            if q in seen:
                continue
            seen.add(q)
            for ref in _refs_of(self.o.decls[q]):
                if ref in self.o.decls and ref not in seen:
                    stack.append(ref)
        return seen

    @staticmethod
    def _resolve_root(side: _Side, f: ir.SchemaFile) -> str:
        if f.root_type in side.decls:
            return f.root_type
        q = f"{f.namespace}.{f.root_type}" if f.namespace else f.root_type
        if q in side.decls:
            return q
        hits = [
            k for k, d in side.decls.items() if d.name == f.root_type.rsplit(".", 1)[-1]
        ]
        return hits[0] if len(hits) == 1 else f.root_type

    # ------------------------------------------------------------------------------------------
    # entry

    def run(self) -> list[Finding]:
        self.match()
        reachable = self._reachable_old()
        for q in self.deleted:
            d = self.o.decls[q]
            lang = self.o.lang[q]
            path = self.names_o[q]
            if lang == "hdi":
                if isinstance(d, ir.Interface):
                    rule_id = "HDI-IF-01"
                elif isinstance(d, (ir.Struct, ir.Union)):
                    rule_id = "HDI-S-01"
                else:
                    rule_id = "HDI-Y-02"
            else:
                rule_id = "FBS-R-01" if isinstance(d, ir.Interface) else "FBS-Y-01"
            used = q in reachable or isinstance(d, ir.Interface)
            sev = Severity.BREAKING if used else Severity.WARNING
            how = (
                "reachable from an interface or root type"
                if used
                else "not reachable from any interface or root type"
            )
            carried = self._minor_carry_over(q)
            if carried:
                sev = Severity.WARNING
                how = (
                    f"not declared in {carried}; a minor-version package usually carries only "
                    "what changed and keeps using the older declaration, so this is breaking "
                    "only if it was really removed"
                )
            self.emit(
                rule_id,
                path,
                f"{_kind(d)} `{d.name}` deleted ({how})",
                old=d.span,
                old_decl=decl_text(d, lang),
                anchor=self._file_anchor(self.o.file_of[q]),
                severity=sev,
            )
        for q in self.added:
            d = self.n.decls[q]
            lang = self.n.lang[q]
            if isinstance(d, ir.Interface) and lang == "fbs":
                rule_id = "FBS-R-03"
            else:
                rule_id = "HDI-Y-01" if lang == "hdi" else "FBS-Y-02"
            self.emit(
                rule_id,
                self.names_n[q],
                f"{_kind(d)} `{d.name}` added",
                new=d.span,
                new_decl=decl_text(d, lang),
            )
        for do, dn in self.pairs:
            if not self._older_minor_reached(do, dn):
                self._compare_decl(do, dn)
        self._compare_files()
        return sorted(set(self.findings), key=Finding.sort_key)

    def _older_minor_reached(self, do: ir.Decl, dn: ir.Decl) -> bool:
        """The new package only reaches an older minor version of this declaration than the
        old one did (``v1_3.EncodeType`` instead of ``v1_4.EncodeType``): the newer copy is not
        imported any more. One warning instead of comparing two unrelated versions."""
        vo = self.o.file_of[do.qualname].version
        vn = self.n.file_of[dn.qualname].version
        if vo is None or vn is None or vo[0] != vn[0] or vn >= vo:
            return False
        base = hdi_package_base(dn.namespace)
        newest = max(
            (
                g.version
                for g in self.n.schema.files
                if g.version is not None and hdi_package_base(g.namespace) == base
            ),
            default=vn,
        )
        if (
            newest <= vn
        ):  # the new package itself is older: a version decrease, compared in full
            return False
        lang = self.n.lang[dn.qualname]
        self.emit(
            "HDI-Y-02",
            self.names_n[dn.qualname],
            f"the new version only reaches `{dn.qualname}`; `{do.qualname}` is not imported any "
            "more (its additions are unknown to code built against the new package)",
            old=do.span,
            new=dn.span,
            old_decl=decl_text(do, lang),
            new_decl=decl_text(dn, lang),
            severity=Severity.WARNING,
        )
        return True

    def _minor_carry_over(self, old_qualname: str) -> str:
        """ "v1_4" when the new side holds a later minor version of the deleted HDI declaration's
        package (same major), else ""."""
        f = self.o.file_of[old_qualname]
        if f.language != "hdi" or f.version is None:
            return ""
        base = hdi_package_base(f.namespace)
        later = [
            g.version
            for g in self.n.schema.files
            if g.language == "hdi"
            and g.version is not None
            and hdi_package_base(g.namespace) == base
            and g.version[0] == f.version[0]
            and g.version[1] > f.version[1]
        ]
        return f"v{max(later)[0]}_{max(later)[1]}" if later else ""

    def _file_anchor(self, old_file: ir.SchemaFile) -> ir.Span | None:
        """For a removal: the new file with the same name (its first declaration)."""
        for f in self.n.schema.files:
            if f.stem == old_file.stem:
                if f.span is not None:
                    return ir.Span(
                        f.span.file, f.span.line, f.span.col, f.span.line, f.span.col
                    )
                for d in f.decls:
                    if d.span is not None:
                        return d.span
                return ir.Span(f.path, 1, 1, 1, 1)
        return None

    # ------------------------------------------------------------------------------------------
    # declarations

    def _compare_decl(self, do: ir.Decl, dn: ir.Decl) -> None:
        lang = self.n.lang[dn.qualname]
        path = self.names_n[dn.qualname]
        if _kind(do) != _kind(dn):
            rule_id = "HDI-Y-03" if lang == "hdi" else "FBS-K-01"
            self.emit(
                rule_id,
                path,
                f"`{dn.name}` changed from {_kind(do)} to {_kind(dn)}",
                old=do.span,
                new=dn.span,
                old_decl=decl_text(do, lang),
                new_decl=decl_text(dn, lang),
            )
            return
        if not isinstance(do, ir.Sequenceable) and not isinstance(dn, ir.Sequenceable):
            self._doc(
                lang,
                path,
                do.doc,
                dn.doc,
                do.span,
                dn.span,
                decl_text(do, lang),
                decl_text(dn, lang),
            )
        if isinstance(do, ir.Struct) and isinstance(dn, ir.Struct):
            if lang == "hdi":
                self._hdi_struct(do, dn, path)
            elif dn.is_table:
                self._fbs_table(do, dn, path)
            else:
                self._fbs_struct(do, dn, path)
        elif isinstance(do, ir.Enum) and isinstance(dn, ir.Enum):
            self._enum(do, dn, path, lang)
        elif isinstance(do, ir.Union) and isinstance(dn, ir.Union):
            if lang == "hdi":
                self._hdi_union(do, dn, path)
            else:
                self._fbs_union(do, dn, path)
        elif isinstance(do, ir.Interface) and isinstance(dn, ir.Interface):
            self._interface(do, dn, path, lang)

    def _doc(
        self,
        lang: Lang,
        path: str,
        a: str,
        b: str,
        sa: ir.Span | None,
        sb: ir.Span | None,
        ta: str,
        tb: str,
    ) -> None:
        if " ".join(a.split()) != " ".join(b.split()):
            self.emit(
                "HDI-D-02" if lang == "hdi" else "FBS-D-01",
                path,
                "documentation changed",
                old=sa,
                new=sb,
                old_decl=ta,
                new_decl=tb,
            )

    # ---- member pairing ----------------------------------------------------------------------

    @staticmethod
    def _pair(
        old: Sequence[str],
        new: Sequence[str],
        rename_ok: Callable[[int, int], bool],
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[int], list[int]]:
        """Match members by name, then pair leftovers as renames.

        Returns (matched, renamed, removed, added) as index pairs/lists.
        """
        new_at = {n: j for j, n in enumerate(new)}
        old_names = set(old)
        matched = [(i, new_at[n]) for i, n in enumerate(old) if n in new_at]
        removed = [i for i, n in enumerate(old) if n not in new_at]
        added = [j for j, n in enumerate(new) if n not in old_names]
        renamed: list[tuple[int, int]] = []
        free = list(added)
        for i in list(removed):
            for j in free:
                if rename_ok(i, j):
                    renamed.append((i, j))
                    free.remove(j)
                    removed.remove(i)
                    break
        return matched, renamed, removed, free

    # ---- HDI structs -------------------------------------------------------------------------

    def _hdi_struct(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lang: Lang = "hdi"
        if self._parent_token(o.parent, o, self.o, self.canon_o) != self._parent_token(
            n.parent, n, self.n, self.canon_n
        ):
            self.emit(
                "HDI-S-08",
                path,
                f"parent changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        of, nf = o.fields, n.fields
        matched, renamed, removed, added = self._pair(
            [f.name for f in of],
            [f.name for f in nf],
            lambda i, j: i == j and self.same_type(of[i].type, nf[j].type),
        )
        for i, j in renamed:
            self.emit(
                "HDI-S-06",
                f"{path}.{nf[j].name}",
                f"member renamed from `{of[i].name}` (same position {i}, same type)",
                old=of[i].span,
                new=nf[j].span,
                old_decl=field_text(of[i], lang),
                new_decl=field_text(nf[j], lang),
            )
        pairs = sorted(matched + renamed)
        survivors = {j for _, j in pairs}
        for i, j in self._out_of_order(pairs):
            self.emit(
                "HDI-S-03",
                f"{path}.{nf[j].name}",
                f"member moved from position {i} to {j}; members are read in declaration order",
                old=of[i].span,
                new=nf[j].span,
                old_decl=field_text(of[i], lang),
                new_decl=field_text(nf[j], lang),
            )
        for j in added:
            later = [k for k in survivors if k > j]
            if later:
                nxt = nf[min(later)]
                self.emit(
                    "HDI-S-03",
                    f"{path}.{nf[j].name}",
                    f"member inserted at position {j}, before `{nxt.name}`: every later member "
                    "is read from the wrong bytes by old peers",
                    new=nf[j].span,
                    new_decl=field_text(nf[j], lang),
                )
            else:
                self.emit(
                    "HDI-S-02",
                    f"{path}.{nf[j].name}",
                    f"member appended at position {j}; old readers stop before it and the rest "
                    "of the parcel is read out of step",
                    new=nf[j].span,
                    new_decl=field_text(nf[j], lang),
                )
        for i in removed:
            self.emit(
                "HDI-S-04",
                f"{path}.{of[i].name}",
                f"member `{of[i].name}` deleted (was at position {i})",
                old=of[i].span,
                old_decl=field_text(of[i], lang),
                anchor=self._survivor_anchor(i, pairs, nf, n.span),
            )
        for i, j in pairs:
            self._member_type(of[i], nf[j], f"{path}.{nf[j].name}", "HDI-S-05", lang)
            self._doc(
                lang,
                f"{path}.{nf[j].name}",
                of[i].doc,
                nf[j].doc,
                of[i].span,
                nf[j].span,
                field_text(of[i], lang),
                field_text(nf[j], lang),
            )
        self._pod_layout(o, n, path)

    @staticmethod
    def _out_of_order(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Pairs (old, new index) outside a longest increasing run of new indexes."""
        seq = [j for _, j in pairs]
        if all(a < b for a, b in zip(seq, seq[1:])):
            return []
        # O(n^2) LIS; member lists are short.
        best = [1] * len(seq)
        prev = [-1] * len(seq)
        for k in range(len(seq)):
            for m in range(k):
                if seq[m] < seq[k] and best[m] + 1 > best[k]:
                    best[k], prev[k] = best[m] + 1, m
        k = max(range(len(seq)), key=lambda x: best[x])
        keep: set[int] = set()
        while k >= 0:
            keep.add(k)
            k = prev[k]
        return [p for idx, p in enumerate(pairs) if idx not in keep]

    @staticmethod
    def _survivor_anchor(
        i: int,
        pairs: list[tuple[int, int]],
        nf: Sequence[ir.Field],
        fallback: ir.Span | None,
    ) -> ir.Span | None:
        before = [j for oi, j in pairs if oi < i]
        if before:
            return nf[max(before)].span or fallback
        after = [j for oi, j in pairs if oi > i]
        if after:
            return nf[min(after)].span or fallback
        return fallback

    def _member_type(
        self,
        a: ir.Field | ir.Param,
        b: ir.Field | ir.Param,
        path: str,
        rule_id: str,
        lang: Lang,
    ) -> None:
        text = field_text if isinstance(a, ir.Field) else param_text
        ta, tb = text(a, lang), text(b, lang)  # type: ignore[arg-type]
        if self.same_type(a.type, b.type):
            if (
                type_text(a.type, lang) != type_text(b.type, lang)
                and lang == "hdi"
                and self._spelling_only(a.type, b.type)
            ):
                self.emit(
                    "HDI-T-01",
                    path,
                    f"type spelled `{type_text(b.type, lang)}` instead of `{type_text(a.type, lang)}` (same wire format)",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            return
        self.emit(
            rule_id,
            path,
            f"type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
            old=a.span,
            new=b.span,
            old_decl=ta,
            new_decl=tb,
        )

    @staticmethod
    def _spelling_only(a: ir.TypeRef, b: ir.TypeRef) -> bool:
        return (
            isinstance(a, ir.Vector)
            or isinstance(b, ir.Vector)
            or isinstance(a, ir.Map)
        )

    def _pod_layout(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lo = self._hdi_layout(self.o, o)
        ln = self._hdi_layout(self.n, n)
        if lo is None and ln is None:
            return
        if lo is not None and ln is not None:
            if (lo.size, lo.align, lo.fmt) == (ln.size, ln.align, ln.fmt):
                return
            msg = (
                f"plain-data layout changed: sizeof {lo.size} → {ln.size}, "
                f"raw block `{lo.fmt}` → `{ln.fmt}`"
            )
        elif lo is not None:
            msg = f"no longer plain data: was one raw {lo.size}-byte block, now marshalled member by member"
        else:
            assert ln is not None
            msg = f"became plain data: was marshalled member by member, now one raw {ln.size}-byte block"
        self.emit(
            "HDI-S-07",
            path,
            msg,
            old=o.span,
            new=n.span,
            old_decl=f"struct {o.name} /* {'sizeof ' + str(lo.size) if lo else 'non-plain'} */",
            new_decl=f"struct {n.name} /* {'sizeof ' + str(ln.size) if ln else 'non-plain'} */",
        )

    @staticmethod
    def _hdi_layout(side: _Side, s: ir.Struct) -> hdi_layout.Layout | None:
        try:
            return hdi_layout.struct_layout(s, side.resolve)
        except KeyError:  # an unresolved reference: the loader already reported it
            return None

    # ---- HDI unions --------------------------------------------------------------------------

    def _hdi_union(self, o: ir.Union, n: ir.Union, path: str) -> None:
        lang: Lang = "hdi"
        om, nm = o.members, n.members
        matched, renamed, removed, added = self._pair(
            [m.name for m in om],
            [m.name for m in nm],
            lambda i, j: i == j and self.same_type(om[i].type, nm[j].type),
        )
        for i, j in renamed:
            self.emit(
                "HDI-U-03",
                f"{path}.{nm[j].name}",
                f"member renamed from `{om[i].name}`",
                old=om[i].span,
                new=nm[j].span,
                old_decl=member_text(om[i], lang),
                new_decl=member_text(nm[j], lang),
            )
        for i in removed:
            self.emit(
                "HDI-U-01",
                f"{path}.{om[i].name}",
                f"union member `{om[i].name}` deleted",
                old=om[i].span,
                old_decl=member_text(om[i], lang),
                anchor=n.span,
            )
        for i, j in matched:
            if not self.same_type(om[i].type, nm[j].type):
                self.emit(
                    "HDI-U-01",
                    f"{path}.{nm[j].name}",
                    f"type changed from `{type_text(om[i].type, lang)}` to `{type_text(nm[j].type, lang)}`",
                    old=om[i].span,
                    new=nm[j].span,
                    old_decl=member_text(om[i], lang),
                    new_decl=member_text(nm[j], lang),
                )
        lo = self._union_layout(self.o, o)
        ln = self._union_layout(self.n, n)
        grew = (
            lo is not None
            and ln is not None
            and (lo.size, lo.align) != (ln.size, ln.align)
        )
        for j in added:
            self.emit(
                "HDI-U-01" if grew else "HDI-U-02",
                f"{path}.{nm[j].name}",
                "union member added"
                + (
                    " and the raw block grew" if grew else " (raw block size unchanged)"
                ),
                new=nm[j].span,
                new_decl=member_text(nm[j], lang),
            )
        if grew and not added:
            assert lo is not None and ln is not None
            self.emit(
                "HDI-U-01",
                path,
                f"raw block size changed: sizeof {lo.size} → {ln.size}",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )

    @staticmethod
    def _union_layout(side: _Side, u: ir.Union) -> hdi_layout.Layout | None:
        try:
            return hdi_layout.union_layout(u, side.resolve)
        except KeyError:
            return None

    # ---- enums (both languages) --------------------------------------------------------------

    def _enum(self, o: ir.Enum, n: ir.Enum, path: str, lang: Lang) -> None:
        hdi = lang == "hdi"
        if o.base != n.base:
            if hdi:
                raw = self._enum_in_raw_block(
                    o.qualname, self.o
                ) or self._enum_in_raw_block(n.qualname, self.n)
                sev = Severity.BREAKING if raw else Severity.WARNING
                where = (
                    "used inside a raw block (plain struct, union or T[])"
                    if raw
                    else "only sent as uint64"
                )
                self.emit(
                    "HDI-E-06",
                    path,
                    f"base type changed from `{type_text(ir.Scalar(o.base), lang)}` to `{type_text(ir.Scalar(n.base), lang)}` ({where})",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                    severity=sev,
                )
            else:
                self.emit(
                    "FBS-E-04",
                    path,
                    f"underlying type changed from `{type_text(ir.Scalar(o.base), lang)}` to `{type_text(ir.Scalar(n.base), lang)}`",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                )
        if hdi and self._parent_token(
            o.parent, o, self.o, self.canon_o
        ) != self._parent_token(n.parent, n, self.n, self.canon_n):
            self.emit(
                "HDI-E-06",
                path,
                f"parent enum changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        if not hdi and o.bit_flags != n.bit_flags:
            self.emit(
                "FBS-E-06",
                path,
                f"bit_flags {'added' if n.bit_flags else 'removed'}",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        om, nm = o.members, n.members
        new_names = {m.name for m in nm}
        old_names = {m.name for m in om}
        matched, renamed, removed, added = self._pair(
            [m.name for m in om],
            [m.name for m in nm],
            lambda i, j: om[i].value == nm[j].value
            and om[i].value not in {m.value for m in nm if m.name in old_names}
            and nm[j].value not in {m.value for m in om if m.name in new_names},
        )
        for i, j in renamed:
            self.emit(
                "HDI-E-05" if hdi else "FBS-E-05",
                f"{path}.{nm[j].name}",
                f"value {nm[j].value} renamed from `{om[i].name}`",
                old=om[i].span,
                new=nm[j].span,
                old_decl=member_text(om[i], lang),
                new_decl=member_text(nm[j], lang),
            )
        inserted = [nm[j].name for j in added]
        for i, j in matched:
            a, b = om[i], nm[j]
            if a.value != b.value:
                if hdi and not b.expr and inserted:
                    rule_id = "HDI-E-02"
                    msg = (
                        f"implicit value shifted from {a.value} to {b.value} by an inserted member "
                        f"({', '.join(f'`{x}`' for x in inserted[:3])}{', …' if len(inserted) > 3 else ''})"
                    )
                else:
                    rule_id = "HDI-E-01" if hdi else "FBS-E-01"
                    msg = f"value changed from {a.value} to {b.value}"
                self.emit(
                    rule_id,
                    f"{path}.{b.name}",
                    msg,
                    old=a.span,
                    new=b.span,
                    old_decl=member_text(a, lang),
                    new_decl=member_text(b, lang),
                )
            self._doc(
                lang,
                f"{path}.{b.name}",
                a.doc,
                b.doc,
                a.span,
                b.span,
                member_text(a, lang),
                member_text(b, lang),
            )
        for i in removed:
            self.emit(
                "HDI-E-03" if hdi else "FBS-E-02",
                f"{path}.{om[i].name}",
                f"value `{om[i].name}` = {om[i].value} deleted; old peers may still send {om[i].value}",
                old=om[i].span,
                old_decl=member_text(om[i], lang),
                anchor=n.span,
            )
        for j in added:
            self.emit(
                "HDI-E-04" if hdi else "FBS-E-03",
                f"{path}.{nm[j].name}",
                f"value `{nm[j].name}` = {nm[j].value} added; old readers see an unknown value",
                new=nm[j].span,
                new_decl=member_text(nm[j], lang),
            )

    def _enum_in_raw_block(self, qualname: str, side: _Side) -> bool:
        """Is the enum stored at its base type's width anywhere (POD struct, union, T[])?"""
        target = ir.Ref(qualname, ir.RefKind.ENUM)

        def in_vector(t: ir.TypeRef) -> bool:
            if isinstance(t, ir.Vector):
                return t.element == target or in_vector(t.element)
            if isinstance(t, ir.Map):
                return in_vector(t.key) or in_vector(t.value)
            return False

        for d in side.decls.values():
            if isinstance(d, ir.Struct):
                if any(in_vector(f.type) for f in d.fields):
                    return True
                if (
                    any(f.type == target for f in d.fields)
                    and self._hdi_layout(side, d) is not None
                ):
                    return True
            elif isinstance(d, ir.Union):
                if any(m.type == target for m in d.members):
                    return True
            elif isinstance(d, ir.Interface):
                if any(in_vector(p.type) for m in d.methods for p in m.params):
                    return True
        return False

    # ---- interfaces --------------------------------------------------------------------------

    def _interface(
        self, o: ir.Interface, n: ir.Interface, path: str, lang: Lang
    ) -> None:
        hdi = lang == "hdi"
        if hdi:
            if self._parent_token(
                o.parent, o, self.o, self.canon_o
            ) != self._parent_token(n.parent, n, self.n, self.canon_n):
                self.emit(
                    "HDI-IF-04",
                    path,
                    f"parent changed from `{o.parent or '(none)'}` to `{n.parent or '(none)'}`",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                )
            ao = sorted(a.name for a in o.attributes) + (
                ["callback"] if o.callback else []
            )
            an = sorted(a.name for a in n.attributes) + (
                ["callback"] if n.callback else []
            )
            if sorted(set(ao)) != sorted(set(an)):
                self.emit(
                    "HDI-IF-02",
                    path,
                    f"attributes changed from [{', '.join(sorted(set(ao)))}] to [{', '.join(sorted(set(an)))}]",
                    old=o.span,
                    new=n.span,
                    old_decl=decl_text(o, lang),
                    new_decl=decl_text(n, lang),
                )
        # Command ids run across `extends`: compare the whole table, ancestors first.
        om = self._flat_methods(o, self.o) if hdi else o.methods
        nm = self._flat_methods(n, self.n) if hdi else n.methods

        def sig(m: ir.Method, side: Literal["o", "n"]) -> object:
            return (
                tuple((p.direction, self.tkey(p.type, side)) for p in m.params),
                m.oneway,
            )

        matched, renamed, removed, added = self._pair(
            _dedup([m.name for m in om]),
            _dedup([m.name for m in nm]),
            lambda i, j: (om[i].cmd_id == nm[j].cmd_id if hdi else True)
            and sig(om[i], "o") == sig(nm[j], "n"),
        )
        for i, j in renamed:
            self.emit(
                "HDI-M-04" if hdi else "FBS-R-02",
                f"{path}.{nm[j].name}",
                f"method renamed from `{om[i].name}`"
                + (f" (same command id {nm[j].cmd_id})" if hdi else ""),
                old=om[i].span,
                new=nm[j].span,
                old_decl=method_text(om[i], lang),
                new_decl=method_text(nm[j], lang),
                severity=None if hdi else Severity.BREAKING,
            )
        old_cmds = self._cmd_table(o, self.o)
        max_old = max((m.cmd_id for m in om), default=-1)
        for i in removed:
            self.emit(
                "HDI-M-01" if hdi else "FBS-R-01",
                f"{path}.{om[i].name}",
                f"method `{om[i].name}` deleted"
                + (f"; command id {om[i].cmd_id} is no longer handled" if hdi else ""),
                old=om[i].span,
                old_decl=method_text(om[i], lang),
                anchor=n.span,
            )
        for j in added:
            m = nm[j]
            if not hdi:
                self.emit(
                    "FBS-R-03",
                    f"{path}.{m.name}",
                    f"method `{m.name}` added",
                    new=m.span,
                    new_decl=method_text(m, lang),
                )
            elif m.cmd_id > max_old:
                self.emit(
                    "HDI-M-03",
                    f"{path}.{m.name}",
                    f"method appended with new command id {m.cmd_id}",
                    new=m.span,
                    new_decl=method_text(m, lang),
                )
            else:
                was = old_cmds.get(m.cmd_id)
                self.emit(
                    "HDI-M-10",
                    f"{path}.{m.name}",
                    f"method inserted with command id {m.cmd_id}"
                    + (f", which old peers send for `{was}`" if was else "")
                    + "; every later method is renumbered",
                    new=m.span,
                    new_decl=method_text(m, lang),
                )
        for i, j in sorted(matched + renamed):
            self._method(om[i], nm[j], f"{path}.{nm[j].name}", lang)

    @staticmethod
    def _flat_methods(iface: ir.Interface, side: _Side) -> tuple[ir.Method, ...]:
        chain: list[ir.Interface] = []
        cur: ir.Interface | None = iface
        while cur is not None and cur not in chain:
            chain.append(cur)
            parent = side.decls.get(cur.parent) if cur.parent else None
            cur = parent if isinstance(parent, ir.Interface) else None
        return tuple(m for i in reversed(chain) for m in i.methods)

    @staticmethod
    def _parent_token(
        parent: str, decl: ir.Decl, side: _Side, canon: dict[str, str]
    ) -> str:
        """The parent as compared: a previous version of the same declaration (the HDI minor
        version pattern ``interface IFoo extends v1_0.IFoo``) counts as no parent, since the
        flattened members are compared anyway."""
        if not parent:
            return ""
        pd = side.decls.get(parent)
        if pd is not None and side.key_of[parent] == side.key_of[decl.qualname]:
            grand = getattr(pd, "parent", "")
            return (
                _Comparer._parent_token(grand, pd, side, canon)
                if grand != parent
                else ""
            )
        return canon.get(parent, parent)

    @staticmethod
    def _cmd_table(iface: ir.Interface, side: _Side) -> dict[int, str]:
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

    def _method(self, o: ir.Method, n: ir.Method, path: str, lang: Lang) -> None:
        hdi = lang == "hdi"
        to, tn = method_text(o, lang), method_text(n, lang)
        if hdi and o.cmd_id != n.cmd_id:
            self.emit(
                "HDI-M-02",
                path,
                f"command id changed from {o.cmd_id} to {n.cmd_id}",
                old=o.span,
                new=n.span,
                old_decl=to,
                new_decl=tn,
            )
        if o.oneway != n.oneway:
            self.emit(
                "HDI-M-09" if hdi else "FBS-R-02",
                path,
                f"[oneway] {'added' if n.oneway else 'removed'}",
                old=o.span,
                new=n.span,
                old_decl=to,
                new_decl=tn,
            )
        self._doc(lang, path, o.doc, n.doc, o.span, n.span, to, tn)
        if not hdi:
            if _attr_map(o.attributes) != _attr_map(n.attributes):
                self.emit(
                    "FBS-A-01",
                    path,
                    "method attributes changed",
                    old=o.span,
                    new=n.span,
                    old_decl=to,
                    new_decl=tn,
                )
            so = [(p.direction, self.tkey(p.type, "o")) for p in o.params]
            sn = [(p.direction, self.tkey(p.type, "n")) for p in n.params]
            if so != sn:
                self.emit(
                    "FBS-R-02",
                    path,
                    "request or response type changed",
                    old=o.span,
                    new=n.span,
                    old_decl=to,
                    new_decl=tn,
                )
            return
        op, np_ = o.params, n.params
        matched, renamed, removed, added = self._pair(
            [p.name for p in op],
            [p.name for p in np_],
            lambda i, j: i == j
            and op[i].direction == np_[j].direction
            and self.same_type(op[i].type, np_[j].type),
        )
        for i, j in renamed:
            self.emit(
                "HDI-M-08",
                f"{path}.{np_[j].name}",
                f"parameter renamed from `{op[i].name}`",
                old=op[i].span or o.span,
                new=np_[j].span or n.span,
                old_decl=param_text(op[i], lang),
                new_decl=param_text(np_[j], lang),
            )
        for i in removed:
            self.emit(
                "HDI-M-05",
                f"{path}.{op[i].name}",
                f"[{op[i].direction}] parameter `{op[i].name}` removed (was parameter {i})",
                old=op[i].span or o.span,
                old_decl=param_text(op[i], lang),
                anchor=n.span,
            )
        for j in added:
            self.emit(
                "HDI-M-05",
                f"{path}.{np_[j].name}",
                f"[{np_[j].direction}] parameter `{np_[j].name}` added at position {j}",
                new=np_[j].span or n.span,
                new_decl=param_text(np_[j], lang),
            )
        pairs = sorted(matched + renamed)
        for d in ("in", "out"):
            sub = [
                (i, j)
                for i, j in pairs
                if op[i].direction == d and np_[j].direction == d
            ]
            for i, j in self._out_of_order(sub):
                self.emit(
                    "HDI-M-05",
                    f"{path}.{np_[j].name}",
                    f"parameter moved from position {i} to {j}",
                    old=op[i].span or o.span,
                    new=np_[j].span or n.span,
                    old_decl=param_text(op[i], lang),
                    new_decl=param_text(np_[j], lang),
                )
        for i, j in pairs:
            a, b = op[i], np_[j]
            ppath = f"{path}.{b.name}"
            if a.direction != b.direction:
                self.emit(
                    "HDI-M-07",
                    ppath,
                    f"direction changed from [{a.direction}] to [{b.direction}]",
                    old=a.span or o.span,
                    new=b.span or n.span,
                    old_decl=param_text(a, lang),
                    new_decl=param_text(b, lang),
                )
            self._member_type(a, b, ppath, "HDI-M-06", lang)

    # ---- FlatBuffers tables ------------------------------------------------------------------

    def _fbs_table(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lang: Lang = "fbs"
        of, nf = o.fields, n.fields
        old_names = {f.name for f in of}
        new_by_slot = {f.slot: j for j, f in enumerate(nf)}
        matched, renamed, removed, added = self._pair(
            [f.name for f in of],
            [f.name for f in nf],
            lambda i, j: of[i].slot is not None and of[i].slot == nf[j].slot,
        )
        for i, j in renamed:
            a, b = of[i], nf[j]
            same = self.same_type(a.type, b.type)
            self.emit(
                "FBS-T-05" if same else "FBS-T-06",
                f"{path}.{b.name}",
                f"field renamed from `{a.name}` (slot {b.slot})"
                + (
                    ""
                    if same
                    else f" and its type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`"
                ),
                old=a.span,
                new=b.span,
                old_decl=field_text(a, lang),
                new_decl=field_text(b, lang),
            )
            if same:
                self._fbs_field(a, b, f"{path}.{b.name}", check_type=False)
        old_slots = {f.slot: f for f in of}
        max_old = max((f.slot for f in of if f.slot is not None), default=-1)
        for j in added:
            b = nf[j]
            taken = old_slots.get(b.slot)
            if b.slot is not None and b.slot <= max_old:
                msg = f"field added at slot {b.slot}"
                if taken is not None:
                    msg += f", which old buffers use for `{taken.name}` (`{type_text(taken.type, lang)}`)"
                self.emit(
                    "FBS-T-02",
                    f"{path}.{b.name}",
                    msg,
                    new=b.span,
                    new_decl=field_text(b, lang),
                )
            else:
                self.emit(
                    "FBS-T-01",
                    f"{path}.{b.name}",
                    f"field appended at slot {b.slot}",
                    new=b.span,
                    new_decl=field_text(b, lang),
                )
        for i in removed:
            a = of[i]
            was = "deprecated " if a.deprecated else ""
            reuse = new_by_slot.get(a.slot)
            tail = (
                f"; its slot {a.slot} is now `{nf[reuse].name}`"
                if reuse is not None and nf[reuse].name in old_names
                else f"; keep it as (deprecated) to reserve slot {a.slot}"
            )
            self.emit(
                "FBS-T-03",
                f"{path}.{a.name}",
                f"{was}field `{a.name}` deleted{tail}",
                old=a.span,
                old_decl=field_text(a, lang),
                anchor=self._survivor_anchor(i, sorted(matched + renamed), nf, n.span),
            )
        for i, j in matched:
            a, b = of[i], nf[j]
            fpath = f"{path}.{b.name}"
            if a.slot != b.slot:
                self.emit(
                    "FBS-T-02",
                    fpath,
                    f"slot changed from {a.slot} to {b.slot}",
                    old=a.span,
                    new=b.span,
                    old_decl=field_text(a, lang),
                    new_decl=field_text(b, lang),
                )
            self._fbs_field(a, b, fpath, check_type=True)

    def _enum_base_change(self, a: ir.TypeRef, b: ir.TypeRef) -> str:
        """For two matching enum-typed members: "byte → short" when the enum's base changed."""
        while isinstance(a, (ir.Vector, ir.FixedArray)) and isinstance(
            b, (ir.Vector, ir.FixedArray)
        ):
            a, b = a.element, b.element
        if isinstance(a, ir.Ref) and isinstance(b, ir.Ref):
            ea, eb = self.o.decls.get(a.qualname), self.n.decls.get(b.qualname)
            if (
                isinstance(ea, ir.Enum)
                and isinstance(eb, ir.Enum)
                and ea.base != eb.base
            ):
                return f"`{_sk(ea.base)}` → `{_sk(eb.base)}`"
        return ""

    def _fbs_field(
        self, a: ir.Field, b: ir.Field, fpath: str, *, check_type: bool
    ) -> None:
        lang: Lang = "fbs"
        ta, tb = field_text(a, lang), field_text(b, lang)

        def emit(rule_id: str, msg: str) -> None:
            self.emit(
                rule_id, fpath, msg, old=a.span, new=b.span, old_decl=ta, new_decl=tb
            )

        if check_type and not self.same_type(a.type, b.type):
            if _same_width_signedness(a.type, b.type):
                emit(
                    "FBS-T-12",
                    f"signedness changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}` (same width)",
                )
            else:
                emit(
                    "FBS-T-07",
                    f"type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
                )
        elif check_type and (bases := self._enum_base_change(a.type, b.type)):
            emit("FBS-T-07", f"stored width changes: enum's underlying type {bases}")
        if a.deprecated != b.deprecated:
            if b.deprecated:
                emit("FBS-T-04", "field deprecated")
            else:
                emit("FBS-T-13", "field no longer deprecated")
        if a.optional != b.optional:
            emit(
                "FBS-T-11",
                f"optional scalar (`= null`) {'added' if b.optional else 'removed'}",
            )
            # Absent fields switch between reading a value and reading null.
            da = (
                "null" if a.optional else _dv(a.default if a.default is not None else 0)
            )
            db = (
                "null" if b.optional else _dv(b.default if b.default is not None else 0)
            )
            emit("FBS-T-09", f"default changed from {da} to {db}")
        elif not _same_default(a.default, b.default) and self.same_type(a.type, b.type):
            emit(
                "FBS-T-09", f"default changed from {_dv(a.default)} to {_dv(b.default)}"
            )
        if a.required != b.required:
            emit(
                "FBS-T-10",
                f"(required) {'added: old writers may omit it and the verifier rejects their buffers' if b.required else 'removed: new writers may omit it and old verifiers reject their buffers'}",
            )
        if a.key != b.key:
            emit("FBS-A-01", f"(key) {'added' if b.key else 'removed'}")
        aa = _attr_map(a.attributes)
        ba = _attr_map(b.attributes)
        for name in sorted(set(aa) | set(ba)):
            skip = name in ("id", "deprecated", "required", "key")
            if skip or (name in aa and name in ba and aa[name] == ba[name]):
                continue
            rule_id = "FBS-T-08" if name in _OFFSET64_ATTRS else "FBS-A-01"
            emit(
                rule_id,
                f"attribute ({name}) changed from {_av(aa, name)} to {_av(ba, name)}",
            )
        self._doc(lang, fpath, a.doc, b.doc, a.span, b.span, ta, tb)

    # ---- FlatBuffers structs -----------------------------------------------------------------

    def _fbs_struct(self, o: ir.Struct, n: ir.Struct, path: str) -> None:
        lang: Lang = "fbs"
        lo = _fbs_struct_layout(o, self.o)
        ln = _fbs_struct_layout(n, self.n)
        of, nf = o.fields, n.fields
        matched, renamed, removed, added = self._pair(
            [f.name for f in of],
            [f.name for f in nf],
            lambda i, j: lo.offsets[i] == ln.offsets[j]
            and self.same_type(of[i].type, nf[j].type),
        )
        before = len(self.findings)
        for i, j in renamed:
            self.emit(
                "FBS-S-02",
                f"{path}.{nf[j].name}",
                f"field renamed from `{of[i].name}` (offset {ln.offsets[j]})",
                old=of[i].span,
                new=nf[j].span,
                old_decl=field_text(of[i], lang),
                new_decl=field_text(nf[j], lang),
            )
        structural = len(self.findings)
        for i in removed:
            self.emit(
                "FBS-S-01",
                f"{path}.{of[i].name}",
                f"field `{of[i].name}` removed (was at offset {lo.offsets[i]})",
                old=of[i].span,
                old_decl=field_text(of[i], lang),
                anchor=n.span,
            )
        for j in added:
            last = all(k in added for k in range(j, len(nf)))
            where = "appended" if last else "inserted"
            self.emit(
                "FBS-S-01",
                f"{path}.{nf[j].name}",
                f"field {where} at offset {ln.offsets[j]}; struct size {lo.size} → {ln.size}",
                new=nf[j].span,
                new_decl=field_text(nf[j], lang),
            )
        for i, j in matched:
            a, b = of[i], nf[j]
            fpath = f"{path}.{b.name}"
            ta, tb = field_text(a, lang), field_text(b, lang)
            if lo.offsets[i] != ln.offsets[j]:
                self.emit(
                    "FBS-S-01",
                    fpath,
                    f"offset changed from {lo.offsets[i]} to {ln.offsets[j]}",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            if not self.same_type(a.type, b.type):
                if _same_width_signedness(a.type, b.type):
                    self.emit(
                        "FBS-T-12",
                        fpath,
                        f"signedness changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}` (same width)",
                        old=a.span,
                        new=b.span,
                        old_decl=ta,
                        new_decl=tb,
                    )
                else:
                    self.emit(
                        "FBS-S-01",
                        fpath,
                        f"type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
                        old=a.span,
                        new=b.span,
                        old_decl=ta,
                        new_decl=tb,
                    )
            elif bases := self._enum_base_change(a.type, b.type):
                self.emit(
                    "FBS-S-01",
                    fpath,
                    f"stored width changes: enum's underlying type {bases}",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            self._doc(lang, fpath, a.doc, b.doc, a.span, b.span, ta, tb)
        explained = any(f.rule == "FBS-S-01" for f in self.findings[structural:])
        if o.force_align != n.force_align or (
            not explained and (lo.size, lo.align) != (ln.size, ln.align)
        ):
            self.emit(
                "FBS-S-01",
                path,
                f"size/alignment changed: {lo.size}/{lo.align} → {ln.size}/{ln.align}"
                + (
                    f" (force_align {o.force_align or '-'} → {n.force_align or '-'})"
                    if o.force_align != n.force_align
                    else ""
                ),
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        del before

    # ---- FlatBuffers unions ------------------------------------------------------------------

    def _fbs_union(self, o: ir.Union, n: ir.Union, path: str) -> None:
        lang: Lang = "fbs"
        if o.discriminant != n.discriminant:
            self.emit(
                "FBS-U-04",
                path,
                f"underlying type changed from `{_sk(o.discriminant)}` to `{_sk(n.discriminant)}`",
                old=o.span,
                new=n.span,
                old_decl=decl_text(o, lang),
                new_decl=decl_text(n, lang),
            )
        om, nm = o.members, n.members
        matched, renamed, removed, added = self._pair(
            [m.name for m in om],
            [m.name for m in nm],
            lambda i, j: om[i].value == nm[j].value
            and self.same_type(om[i].type, nm[j].type),
        )
        for i, j in renamed:
            self.emit(
                "FBS-U-05",
                f"{path}.{nm[j].name}",
                f"member renamed from `{om[i].name}` (discriminant {nm[j].value})",
                old=om[i].span,
                new=nm[j].span,
                old_decl=member_text(om[i], lang),
                new_decl=member_text(nm[j], lang),
            )
        for i in removed:
            self.emit(
                "FBS-U-02",
                f"{path}.{om[i].name}",
                f"member `{om[i].name}` (discriminant {om[i].value}) deleted",
                old=om[i].span,
                old_decl=member_text(om[i], lang),
                anchor=n.span,
            )
        for j in added:
            self.emit(
                "FBS-U-06",
                f"{path}.{nm[j].name}",
                f"member `{nm[j].name}` added with discriminant {nm[j].value}",
                new=nm[j].span,
                new_decl=member_text(nm[j], lang),
            )
        for i, j in matched:
            a, b = om[i], nm[j]
            ta, tb = member_text(a, lang), member_text(b, lang)
            if a.value != b.value:
                self.emit(
                    "FBS-U-01",
                    f"{path}.{b.name}",
                    f"discriminant changed from {a.value} to {b.value}",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            if not self.same_type(a.type, b.type):
                self.emit(
                    "FBS-U-03",
                    f"{path}.{b.name}",
                    f"member type changed from `{type_text(a.type, lang)}` to `{type_text(b.type, lang)}`",
                    old=a.span,
                    new=b.span,
                    old_decl=ta,
                    new_decl=tb,
                )
            self._doc(lang, f"{path}.{b.name}", a.doc, b.doc, a.span, b.span, ta, tb)

    # ---- FlatBuffers file-level --------------------------------------------------------------

    def _compare_files(self) -> None:
        fo = [f for f in self.o.schema.files if f.language == "fbs"]
        fn = [f for f in self.n.schema.files if f.language == "fbs"]
        if not fo or not fn:
            return
        roots_o = {
            self.canon_o.get(self._resolve_root(self.o, f), f.root_type): f
            for f in fo
            if f.root_type
        }
        roots_n = {
            self.canon_n.get(self._resolve_root(self.n, f), f.root_type): f
            for f in fn
            if f.root_type
        }
        if set(roots_o) != set(roots_n):
            a = ", ".join(sorted(f.root_type for f in roots_o.values())) or "(none)"
            b = ", ".join(sorted(f.root_type for f in roots_n.values())) or "(none)"
            sev = (
                Severity.BREAKING
                if roots_o and roots_n
                else (Severity.WARNING if roots_o else Severity.INFO)
            )
            self.emit(
                "FBS-F-01",
                "root_type",
                f"root_type changed from {a} to {b}",
                old=_first_span(roots_o.values()),
                new=_first_span(roots_n.values()),
                old_decl=f"root_type {a};",
                new_decl=f"root_type {b};",
                severity=sev,
                anchor=_first_span(fn),
            )
        ids_o = {f.file_identifier for f in fo if f.file_identifier}
        ids_n = {f.file_identifier for f in fn if f.file_identifier}
        if ids_o != ids_n:
            a = ", ".join(f'"{x}"' for x in sorted(ids_o)) or "(none)"
            b = ", ".join(f'"{x}"' for x in sorted(ids_n)) or "(none)"
            sev = Severity.WARNING if ids_o and not ids_n else Severity.BREAKING
            self.emit(
                "FBS-F-02",
                "file_identifier",
                f"file_identifier changed from {a} to {b}",
                old=_first_span(f for f in fo if f.file_identifier),
                new=_first_span(f for f in fn if f.file_identifier),
                old_decl=f"file_identifier {a};",
                new_decl=f"file_identifier {b};",
                severity=sev,
                anchor=_first_span(fn),
            )
        ext_o = {f.file_extension for f in fo if f.file_extension}
        ext_n = {f.file_extension for f in fn if f.file_extension}
        if ext_o != ext_n:
            a = ", ".join(sorted(ext_o)) or "(none)"
            b = ", ".join(sorted(ext_n)) or "(none)"
            self.emit(
                "FBS-F-04",
                "file_extension",
                f"file_extension changed from {a} to {b}",
                old_decl=f'file_extension "{a}";',
                new_decl=f'file_extension "{b}";',
                anchor=_first_span(fn),
            )


# ----------------------------------------------------------------------------------------------
# module helpers


def _first_span(files: Iterable[ir.SchemaFile]) -> ir.Span | None:
    for f in files:
        if f.span is not None:
            return f.span
        for d in f.decls:
            if d.span is not None:
                return ir.Span(d.span.file, 1, 1, 1, 1)
        return ir.Span(f.path, 1, 1, 1, 1)
    return None


def _dedup(names: list[str]) -> list[str]:
    """Overloaded HDI methods share a name: number the repeats so each is its own key."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for n in names:
        out.append(n if not seen[n] else f"{n}#{seen[n]}")
        seen[n] += 1
    return out


def _refs_of(d: ir.Decl) -> list[str]:
    out: list[str] = []

    def walk(t: ir.TypeRef) -> None:
        if isinstance(t, ir.Ref):
            out.append(t.qualname)
        elif isinstance(t, (ir.Vector, ir.FixedArray, ir.SharedMemQueue)):
            walk(t.element)
        elif isinstance(t, ir.Map):
            walk(t.key)
            walk(t.value)

    if isinstance(d, ir.Struct):
        for f in d.fields:
            walk(f.type)
        if d.parent:
            out.append(d.parent)
    elif isinstance(d, ir.Union):
        for m in d.members:
            walk(m.type)
    elif isinstance(d, ir.Interface):
        for me in d.methods:
            for p in me.params:
                walk(p.type)
        if d.parent:
            out.append(d.parent)
    elif isinstance(d, ir.Enum) and d.parent:
        out.append(d.parent)
    return out


def _same_width_signedness(a: ir.TypeRef, b: ir.TypeRef) -> bool:
    while isinstance(a, ir.Vector) and isinstance(b, ir.Vector):
        a, b = a.element, b.element
    if (
        isinstance(a, ir.FixedArray)
        and isinstance(b, ir.FixedArray)
        and a.length == b.length
    ):
        a, b = a.element, b.element
    return (
        isinstance(a, ir.Scalar)
        and isinstance(b, ir.Scalar)
        and a.kind.is_integer
        and b.kind.is_integer
        and a.kind.size == b.kind.size
        and a.kind.is_signed != b.kind.is_signed
    )


def _same_default(a: ir.DefaultValue, b: ir.DefaultValue) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # both NaN
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (a == b and type(a) is type(b))
    return a == b


def _dv(v: ir.DefaultValue) -> str:
    if v is None:
        return "(none)"
    if v == ():
        return "[]"
    return repr(v) if isinstance(v, str) else str(v)


def _attr_map(attrs: tuple[ir.Attribute, ...]) -> dict[str, str | int | None]:
    return {a.name: a.value for a in attrs}


def _av(m: dict[str, str | int | None], name: str) -> str:
    if name not in m:
        return "(absent)"
    v = m[name]
    return "(present)" if v is None else repr(v)


def _sk(k: ir.ScalarKind | None) -> str:
    return "ubyte" if k is None else type_text(ir.Scalar(k), "fbs")


@dataclass(frozen=True)
class _FbsLayout:
    size: int
    align: int
    offsets: tuple[int, ...]


def _fbs_size_align(t: ir.TypeRef, side: _Side) -> tuple[int, int]:
    if isinstance(t, ir.Scalar):
        return t.kind.size, t.kind.size
    if isinstance(t, ir.FixedArray):
        s, a = _fbs_size_align(t.element, side)
        return s * t.length, a
    if isinstance(t, ir.Ref):
        d = side.decls.get(t.qualname)
        if isinstance(d, ir.Enum):
            return d.base.size, d.base.size
        if isinstance(d, ir.Struct):
            lay = _fbs_struct_layout(d, side)
            return lay.size, lay.align
    return 4, 4  # not valid in a struct; the loader reports it


def _fbs_struct_layout(s: ir.Struct, side: _Side) -> _FbsLayout:
    """FlatBuffers struct layout: natural alignment, size a multiple of the alignment."""
    offset, align = 0, 1
    offsets = []
    for f in s.fields:
        size, a = _fbs_size_align(f.type, side)
        offset = (offset + a - 1) // a * a
        offsets.append(offset)
        offset += size
        align = max(align, a)
    align = max(align, s.force_align or 1)
    size = (offset + align - 1) // align * align
    return _FbsLayout(size, align, tuple(offsets))


def compare(old: ir.Schema, new: ir.Schema) -> list[Finding]:
    """Every change from ``old`` to ``new``, sorted most severe first (deterministic)."""
    return _Comparer(old, new).run()
