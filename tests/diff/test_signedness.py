"""One severity policy for same-width signedness changes, in HDI and FlatBuffers alike.

Same width → the same bytes reach the reader → ``warning`` (HDI-T-02 / FBS-T-12), wherever the
type occurs (parameter, member, element, map key, union member, raw plain-data block, enum
base). A change of width stays ``breaking``. Schemas are real source text parsed by the front
ends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from idlgen.diff import Finding, Severity
from idlgen.diff.cli import diff_paths
from idlgen.diff.rules import RULES

# (HDI old, HDI new, FBS old, FBS new, same width?)
PAIRS = [
    ("int", "unsigned int", "int", "uint", True),
    ("unsigned int", "int", "uint", "int", True),
    ("short", "unsigned short", "short", "ushort", True),
    ("byte", "unsigned char", "byte", "ubyte", True),
    ("long", "unsigned long", "long", "ulong", True),
    ("int", "long", "int", "long", False),
    ("unsigned short", "unsigned int", "ushort", "uint", False),
    ("byte", "short", "byte", "short", False),
]


def hdi_pair(tmp: Path, old: str, new: str, *, pod: bool, wrap: str = "{}") -> list[Finding]:
    for version, t in (("v1_0", old), ("v2_0", new)):
        d = tmp / "foo" / version
        d.mkdir(parents=True)
        tail = " float f;" if pod else " String s;"
        (d / "Types.idl").write_text(
            f"package ohos.hdi.foo.{version};\n\nstruct S {{ {wrap.format(t)} a;{tail} }};\n"
        )
    _, _, findings, _ = diff_paths(
        [tmp / "foo" / "v1_0"], [tmp / "foo" / "v2_0"], roots={"ohos.hdi": tmp}
    )
    return [f for f in findings if not f.rule.startswith("HDI-PKG")]


def fbs_pair(tmp: Path, old: str, new: str, *, struct: bool, wrap: str = "{}") -> list[Finding]:
    kind = "struct" if struct else "table"
    for name, t in (("o.fbs", old), ("n.fbs", new)):
        (tmp / name).write_text(f"{kind} S {{ a:{wrap.format(t)}; f:float; }}\n")
    _, _, findings, _ = diff_paths([tmp / "o.fbs"], [tmp / "n.fbs"])
    return findings


def severities(fs: list[Finding]) -> set[tuple[str, Severity]]:
    return {(f.rule, f.severity) for f in fs}


@pytest.mark.parametrize("h_old,h_new,f_old,f_new,same", PAIRS)
@pytest.mark.parametrize("raw", [False, True], ids=["marshalled/table", "pod/struct"])
def test_same_policy_in_both_languages(
    tmp_path: Path, h_old: str, h_new: str, f_old: str, f_new: str, same: bool, raw: bool
) -> None:
    h = hdi_pair(tmp_path / "h", h_old, h_new, pod=raw)
    f = fbs_pair(tmp_path, f_old, f_new, struct=raw)
    worst_h = max(x.severity.rank for x in h)
    worst_f = max(x.severity.rank for x in f)
    assert worst_h == worst_f, (h, f)
    if same:
        assert severities(h) == {("HDI-T-02", Severity.WARNING)}
        assert severities(f) == {("FBS-T-12", Severity.WARNING)}
        assert all("(same width)" in x.message for x in h + f)
    else:
        assert worst_h == Severity.BREAKING.rank
        assert "HDI-T-02" not in {x.rule for x in h} and "FBS-T-12" not in {x.rule for x in f}


@pytest.mark.parametrize("wrap", ["{}[]", "List<{}>", "Map<{}, String>"])
def test_hdi_containers(tmp_path: Path, wrap: str) -> None:
    fs = hdi_pair(tmp_path, "int", "unsigned int", pod=False, wrap=wrap)
    assert severities(fs) == {("HDI-T-02", Severity.WARNING)}
    fs = hdi_pair(tmp_path / "w", "int", "long", pod=False, wrap=wrap)
    assert {x.severity for x in fs} == {Severity.BREAKING}


def test_fbs_vector(tmp_path: Path) -> None:
    assert severities(fbs_pair(tmp_path, "ushort", "short", struct=False, wrap="[{}]")) == {
        ("FBS-T-12", Severity.WARNING)
    }


HDI_ENUM = """package ohos.hdi.foo.{v};

enum E : {base} {{ A = 0, B = 1 }};
struct P {{ enum E e; float x; }};
union U {{ enum E e; int i; }};
interface IFoo {{
    Set([in] enum E e, [in] enum E[] es);
}}
"""


@pytest.mark.parametrize(
    "old,new,expected",
    [
        # same width: raw blocks (P, U, E[]) keep their bytes, the uint64 of every member is equal
        ("int", "unsigned int", {("HDI-T-02", "E", Severity.WARNING)}),
        ("unsigned char", "byte", {("HDI-T-02", "E", Severity.WARNING)}),
        # width: the raw blocks change (P's layout; U keeps its 8-byte size), so breaking
        (
            "byte",
            "int",
            {
                ("HDI-E-06", "E", Severity.BREAKING),
                ("HDI-S-07", "P", Severity.BREAKING),
            },
        ),
    ],
)
def test_hdi_enum_base(
    tmp_path: Path, old: str, new: str, expected: set[tuple[str, str, Severity]]
) -> None:
    for v, base in (("v1_0", old), ("v2_0", new)):
        d = tmp_path / "foo" / v
        d.mkdir(parents=True)
        text = HDI_ENUM.format(v=v, base=base)
        (d / "Types.idl").write_text(text.split("interface")[0])
        (d / "IFoo.idl").write_text(
            f"package ohos.hdi.foo.{v};\n\nimport ohos.hdi.foo.{v}.Types;\n\ninterface"
            + text.split("interface")[1]
        )
    lo, ln, findings, _ = diff_paths(
        [tmp_path / "foo" / "v1_0"], [tmp_path / "foo" / "v2_0"], roots={"ohos.hdi": tmp_path}
    )
    assert lo.ok and ln.ok
    got = {(f.rule, f.path, f.severity) for f in findings if not f.rule.startswith("HDI-PKG")}
    assert got == expected


@pytest.mark.parametrize(
    "old,new,expected",
    [
        ("byte", "ubyte", {("FBS-T-12", "E", Severity.WARNING)}),
        ("uint", "int", {("FBS-T-12", "E", Severity.WARNING)}),
        (
            "byte",
            "short",
            {
                ("FBS-E-04", "E", Severity.BREAKING),
                ("FBS-T-07", "T.e", Severity.BREAKING),
                ("FBS-S-01", "V.e", Severity.BREAKING),
            },
        ),
    ],
)
def test_fbs_enum_base(
    tmp_path: Path, old: str, new: str, expected: set[tuple[str, str, Severity]]
) -> None:
    for name, base in (("o.fbs", old), ("n.fbs", new)):
        (tmp_path / name).write_text(
            f"enum E : {base} {{ A = 0, B = 1 }}\n"
            "struct V { e:E; f:float; }\ntable T { e:E; v:V; }\nroot_type T;\n"
        )
    _, _, findings, _ = diff_paths([tmp_path / "o.fbs"], [tmp_path / "n.fbs"])
    assert {(f.rule, f.path, f.severity) for f in findings} == expected


def test_catalogue_states_the_policy() -> None:
    for rid in ("HDI-T-02", "FBS-T-12"):
        assert RULES[rid].severity is Severity.WARNING and "same width" in RULES[rid].why
