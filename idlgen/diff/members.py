"""The one member-diff routine: renamed / removed / added / moved / changed members.

Every kind of member (struct and table fields, enum values, union members, methods, parameters)
is diffed the same way: members are matched by name, what is left is paired as renames by a
kind-specific test (same position, slot, offset, value or command id), and each event becomes
a finding whose rule id and message come from the kind's ``MemberRules``. The routine fills in
what every finding of a member shares: the entity path, both locations, both declaration
texts, the anchor of a removal, and the documentation check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from .. import ir
from .findings import Categories, Severity
from .rules import LANG_RULES

if TYPE_CHECKING:
    from .matching import Comparison, Lang

__all__ = [
    "Change",
    "MemberRules",
    "MemberDiff",
    "diff_members",
    "pair_by_name",
    "out_of_order",
    "doc_changed",
]


class Member(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def span(self) -> ir.Span | None: ...


M = TypeVar("M", bound=Member)
Pairs = list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Change:
    """One event a rule reports: the rule id, the message, and a severity and categories when
    the rule's defaults do not apply."""

    rule: str
    message: str
    severity: Severity | None = None
    categories: Categories | None = None
    cause: str = ""  # the entity path of the root cause, when this change only follows from it


@dataclass
class MemberDiff(Generic[M]):
    """One member list compared: what the rule callbacks see."""

    c: Comparison
    lang: Lang
    path: str
    o: ir.Decl | ir.Method
    n: ir.Decl | ir.Method
    old: Sequence[M]
    new: Sequence[M]
    data: Any = None
    matched: Pairs = field(default_factory=list)
    renamed: Pairs = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    fired: set[str] = field(default_factory=set)  # rule ids after the renames

    @property
    def pairs(self) -> Pairs:
        """Every surviving member (matched or renamed), in old order."""
        return sorted(self.matched + self.renamed)


Event = Callable[[MemberDiff[M], int, int], Iterable[Change]]
OneSided = Callable[[MemberDiff[M], int], Iterable[Change]]


def _names(members: Sequence[Member]) -> list[str]:
    return [m.name for m in members]


@dataclass(frozen=True)
class MemberRules(Generic[M]):
    """What a language says about one kind of member; ``diff_members`` does the rest.

    ``same_slot(d, i, j)`` pairs an old and a new member left over by name as a rename;
    ``renamed``/``changed`` get the (old, new) indexes, ``removed``/``added`` one index;
    ``moves(d)`` lists the survivors that moved, each reported through ``moved``.
    """

    text: Callable[[M, Lang], str]
    same_slot: Callable[[MemberDiff[M], int, int], bool]
    renamed: Event[M]
    removed: OneSided[M]
    added: OneSided[M]
    changed: Event[M] | None = None
    moved: Event[M] | None = None
    moves: Callable[[MemberDiff[M]], Pairs] | None = None
    keys: Callable[[Sequence[M]], list[str]] = _names
    prepare: Callable[[MemberDiff[M]], Any] | None = None
    changed_on_renamed: bool = False  # renamed members also go through ``changed`` (and docs)
    doc: bool = True
    anchor_at_survivor: bool = False  # a removal points at its neighbour, not the parent
    parent_span_fallback: bool = False  # members without a span are located at the parent


def diff_members(
    c: Comparison,
    rules: MemberRules[M],
    lang: Lang,
    path: str,
    o: ir.Decl | ir.Method,
    n: ir.Decl | ir.Method,
    old: Sequence[M],
    new: Sequence[M],
) -> MemberDiff[M]:
    d = MemberDiff(c, lang, path, o, n, old, new)
    if rules.prepare is not None:
        d.data = rules.prepare(d)
    d.matched, d.renamed, d.removed, d.added = pair_by_name(
        rules.keys(old), rules.keys(new), partial(rules.same_slot, d)
    )
    text = rules.text

    def span(m: M | None, parent: ir.Decl | ir.Method) -> ir.Span | None:
        if m is None:
            return None
        return m.span or (parent.span if rules.parent_span_fallback else None)

    def emit(
        changes: Iterable[Change], i: int | None, j: int | None, anchor: ir.Span | None = None
    ) -> None:
        a = None if i is None else old[i]
        b = None if j is None else new[j]
        named = b or a
        assert named is not None
        for ch in changes:
            d.fired.add(ch.rule)
            c.emit(
                ch.rule,
                f"{path}.{named.name}",
                ch.message,
                old=span(a, o),
                new=span(b, n),
                old_decl="" if a is None else partial(text, a, lang),
                new_decl="" if b is None else partial(text, b, lang),
                anchor=anchor,
                severity=ch.severity,
                categories=ch.categories,
                cause=ch.cause,
            )

    for i, j in d.renamed:
        emit(rules.renamed(d, i, j), i, j)
    d.fired.clear()
    if rules.moved is not None and rules.moves is not None:
        for i, j in rules.moves(d):
            emit(rules.moved(d, i, j), i, j)
    for j in d.added:
        emit(rules.added(d, j), None, j)
    pairs = d.pairs
    for i in d.removed:
        anchor = n.span
        if rules.anchor_at_survivor:
            anchor = survivor_anchor(i, pairs, new, n.span)
        emit(rules.removed(d, i), i, None, anchor)
    for i, j in pairs if rules.changed_on_renamed else d.matched:
        if rules.changed is not None:
            emit(rules.changed(d, i, j), i, j)
        if rules.doc:
            emit(doc_changed(lang, old[i], new[j]), i, j)
    return d


def first_shift_cause(
    d: MemberDiff[M],
    i: int,
    j: int,
    key: Callable[[M], int | None] | None = None,
    width: Callable[[M], int] | None = None,
    *,
    exact: bool = True,
) -> str:
    """The root cause of a member (old index ``i``, new index ``j``) whose position-derived
    number (slot, offset, command id, implicit value, discriminant) changed: the entity path of
    the first member added or removed before it, when those additions and removals account for
    the whole shift (else "": a renumbering of its own). ``key`` gives a member's number
    (default: its position), ``width`` how many numbers it takes (default 1); ``exact=False``
    takes any addition or removal before it (an implicit enum value follows the member before
    it, whatever that member's value)."""
    num = key or (lambda m: None)
    size = width or (lambda m: 1)

    def at(members: Sequence[M], k: int) -> int | None:
        return k if key is None else num(members[k])

    mine_old, mine_new = at(d.old, i), at(d.new, j)
    if mine_old is None or mine_new is None:
        return ""
    before: list[tuple[int, int, str]] = []
    shift = 0
    for k in d.added:
        n = at(d.new, k)
        if n is not None and n < mine_new:
            before.append((n, 0, d.new[k].name))
            shift += size(d.new[k])
    for k in d.removed:
        n = at(d.old, k)
        if n is not None and n < mine_old:
            before.append((n, 1, d.old[k].name))
            shift -= size(d.old[k])
    if not before or (exact and shift != mine_new - mine_old):
        return ""
    return f"{d.path}.{min(before)[2]}"


def doc_changed(lang: Lang, a: object, b: object) -> Iterator[Change]:
    """Documentation is compared with whitespace folded."""
    if " ".join(getattr(a, "doc", "").split()) != " ".join(getattr(b, "doc", "").split()):
        yield Change(LANG_RULES[lang].doc, "documentation changed")


def pair_by_name(
    old: Sequence[str],
    new: Sequence[str],
    rename_ok: Callable[[int, int], bool],
) -> tuple[Pairs, Pairs, list[int], list[int]]:
    """Match members by name, then pair leftovers as renames: (matched, renamed, removed,
    added) as index pairs/lists."""
    new_at = {n: j for j, n in enumerate(new)}
    old_names = set(old)
    matched = [(i, new_at[n]) for i, n in enumerate(old) if n in new_at]
    removed = [i for i, n in enumerate(old) if n not in new_at]
    added = [j for j, n in enumerate(new) if n not in old_names]
    renamed: Pairs = []
    for i in list(removed):
        for j in added:
            if rename_ok(i, j):
                renamed.append((i, j))
                added.remove(j)
                removed.remove(i)
                break
    return matched, renamed, removed, added


def out_of_order(pairs: Pairs) -> Pairs:
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


def survivor_anchor(
    i: int, pairs: Pairs, new: Sequence[Member], fallback: ir.Span | None
) -> ir.Span | None:
    """For a removed member: the surviving member before it (else after it), else the parent."""
    before = [j for oi, j in pairs if oi < i]
    if before:
        return new[max(before)].span or fallback
    after = [j for oi, j in pairs if oi > i]
    if after:
        return new[min(after)].span or fallback
    return fallback
