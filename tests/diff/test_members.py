"""The one member-diff routine and the per-language rule tables (diff rules as data)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings, strategies as st

from idlgen import ir
from idlgen.diff import compare, fbs_rules, hdi_rules
from idlgen.diff.compare import ENUM_VALUES
from idlgen.diff.matching import Comparison
from idlgen.diff.members import Change, MemberRules, diff_members, out_of_order, pair_by_name
from idlgen.diff.rules import FBS_RULES, HDI_RULES, LANG_RULES, RULES

from ._build import INT, LONG, Lines, hdi_schema

DIFF = Path(__file__).resolve().parents[2] / "idlgen" / "diff"


def test_rule_tables_are_per_language() -> None:
    assert {r[0] for r in HDI_RULES} | {r[0] for r in FBS_RULES} == set(RULES)
    assert all(r[0].startswith("HDI-") for r in HDI_RULES)
    assert all(r[0].startswith("FBS-") for r in FBS_RULES)
    for lang, lr in LANG_RULES.items():
        prefix = lang.upper() + "-"
        ids = [lr.doc, lr.signedness, lr.kind_changed, lr.namespace_moved]
        ids += [*lr.deleted.values(), *lr.added.values(), *lr.type_renamed.values()]
        for rid in ids:
            assert rid in RULES and (rid.startswith(prefix) or rid == "HDI-IF-03"), rid


def test_every_rule_id_in_the_rule_modules_is_catalogued() -> None:
    """A rule id written anywhere in the comparison code exists in the catalogue."""
    for name in ("compare", "hdi_rules", "fbs_rules", "matching", "members", "policy"):
        tree = ast.parse((DIFF / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                v = node.value
                if v[:4] in ("HDI-", "FBS-") and v.count("-") == 2 and " " not in v:
                    assert v in RULES, (name, v)


def test_no_mixins() -> None:
    """Rules are composed (tables and functions over one Comparison), not inherited."""
    assert Comparison.__bases__ == (object,)
    for mod in (hdi_rules, fbs_rules):
        assert not [
            v
            for v in vars(mod).values()
            if isinstance(v, type) and issubclass(v, Comparison) and v is not Comparison
        ]
    rule_tables = [
        hdi_rules.STRUCT_MEMBERS,
        hdi_rules.UNION_MEMBERS,
        hdi_rules.METHODS,
        hdi_rules.PARAMS,
        fbs_rules.TABLE_FIELDS,
        fbs_rules.STRUCT_FIELDS,
        fbs_rules.UNION_MEMBERS,
        fbs_rules.RPC_METHODS,
        *ENUM_VALUES.values(),
    ]
    assert all(isinstance(t, MemberRules) for t in rule_tables)


# ---- the generic routine, on a toy member kind ------------------------------------------------


@dataclass(frozen=True)
class Toy:
    name: str
    slot: int
    span: ir.Span | None = None
    doc: str = ""


def _toy_text(m: Toy, lang: str) -> str:
    return f"{m.name}@{m.slot}"


TOY: MemberRules[Toy] = MemberRules(
    text=_toy_text,  # type: ignore[arg-type]
    same_slot=lambda d, i, j: d.old[i].slot == d.new[j].slot,
    renamed=lambda d, i, j: [Change("HDI-S-06", f"renamed from {d.old[i].name}")],
    removed=lambda d, i: [Change("HDI-S-04", "removed")],
    added=lambda d, j: [Change("HDI-S-02", "added")],
    changed=lambda d, i, j: (
        [Change("HDI-S-05", "slot")] if d.old[i].slot != d.new[j].slot else []
    ),
    moves=lambda d: out_of_order(d.pairs),
    moved=lambda d, i, j: [Change("HDI-S-03", f"moved {i}->{j}")],
)

names = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=7)


@settings(max_examples=200, deadline=None)
@given(old=names, new=names, slots=st.data())
def test_diff_members_accounts_for_every_member_once(old, new, slots) -> None:  # type: ignore[no-untyped-def]
    so = [
        Toy(n, slots.draw(st.integers(0, 4)), ir.Span("o", k + 1, 1, k + 1, 2))
        for k, n in enumerate(old)
    ]
    sn = [
        Toy(n, slots.draw(st.integers(0, 4)), ir.Span("n", k + 1, 1, k + 1, 2))
        for k, n in enumerate(new)
    ]
    parent = ir.Struct("P", "ns", (), span=ir.Span("n", 99, 1, 99, 2))
    c = Comparison(ir.Schema(()), ir.Schema(()))
    d = diff_members(c, TOY, "hdi", "P", parent, parent, so, sn)  # type: ignore[arg-type]
    # every old member is matched, renamed or removed exactly once; every new one likewise
    olds = [i for i, _ in d.matched + d.renamed] + d.removed
    news = [j for _, j in d.matched + d.renamed] + d.added
    assert sorted(olds) == list(range(len(so)))
    assert sorted(news) == list(range(len(sn)))
    by_rule: dict[str, list[object]] = {}
    for f in c.findings:
        by_rule.setdefault(f.rule, []).append(f)
    assert len(by_rule.get("HDI-S-04", [])) == len(d.removed)
    assert len(by_rule.get("HDI-S-02", [])) == len(d.added)
    assert len(by_rule.get("HDI-S-06", [])) == len(d.renamed)
    for f in c.findings:
        if f.rule == "HDI-S-04":  # a removal: old side only, anchored in the new parent
            assert f.new is None and f.old is not None and f.anchor == parent.span
            assert f.old_decl and not f.new_decl
        elif f.rule == "HDI-S-02":
            assert f.old is None and f.new is not None and f.new_decl and not f.old_decl
        else:
            assert f.old is not None and f.new is not None
        assert f.path.startswith("P.")
    # renames pair only members that share a slot, and only leftovers by name
    for i, j in d.renamed:
        assert so[i].slot == sn[j].slot and so[i].name not in new and sn[j].name not in old


@given(old=names, new=names)
def test_pair_by_name_without_renames(old, new) -> None:  # type: ignore[no-untyped-def]
    matched, renamed, removed, added = pair_by_name(old, new, lambda i, j: False)
    assert renamed == []
    assert {old[i] for i, _ in matched} == set(old) & set(new)
    assert {old[i] for i in removed} == set(old) - set(new)
    assert {new[j] for j in added} == set(new) - set(old)


def test_language_tables_drive_the_same_routine() -> None:
    """One HDI struct change seen through the HDI table: an inserted member is HDI-S-03."""
    line = Lines("Types.idl")
    old = hdi_schema("p.v1_0", [ir.Struct("S", "p.v1_0", (ir.Field("a", INT, span=line()),))])
    new = hdi_schema(
        "p.v2_0",
        [
            ir.Struct(
                "S",
                "p.v2_0",
                (ir.Field("z", LONG, span=line()), ir.Field("a", INT, span=line())),
            )
        ],
    )
    rules = {(f.rule, f.path) for f in compare(old, new)}
    assert ("HDI-S-03", "S.z") in rules
