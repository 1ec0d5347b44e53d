"""Bounded work: deep nesting, long chains, typos and zero-size Parcel elements."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.bounds import MAX_TREE_DEPTH
from idlgen.diagnostics import SUGGEST_BUDGET, Diagnostics, suggest
from idlgen.errors import DecodeError
from idlgen.frontend.fbs.loader import load_text
from idlgen.frontend import load
from idlgen.wire import parcel

from ._support import run

HDI_NESTS = {
    "parens": lambda k: f"enum E {{ A = {'(' * k}1{')' * k} }};",
    "unary": lambda k: f"enum E {{ A = {'- ~' * k}1 }};",
    "binary": lambda k: f"enum E {{ A = 1{' + 1' * k} }};",
    "shift": lambda k: f"enum E {{ A = 1{' << 0' * k} }};",
    "list": lambda k: f"struct S {{ {'List<' * k}int{'>' * k} x; }};",
    "map": lambda k: f"struct S {{ {'Map<int, ' * k}int{'>' * k} x; }};",
    "array": lambda k: f"struct S {{ int{'[]' * k} x; }};",
}
FBS_NESTS = {
    "vector": lambda k: f"table T {{ a:{'[' * k}int{']' * k}; }}",
    "json": lambda k: f"table T {{ a:int; }}\nroot_type T;\n{'{ a: ' * k}1{' }' * k}",
    "json_list": lambda k: f"table T {{ a:[int]; }}\nroot_type T;\n{{ a: {'[' * k}{']' * k} }}",
}


def _codes(tmp: Path, name: str, text: str) -> list[str]:
    p = tmp / name
    p.write_text(text)
    return [d.code for d in load([p]).diagnostics]


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(HDI_NESTS)), k=st.integers(0, 3000))
def test_hdi_nesting_never_recurses_too_far(
    tmp_path_factory: pytest.TempPathFactory, kind: str, k: int
) -> None:
    d = tmp_path_factory.mktemp("n") / "a" / "v1_0"
    d.mkdir(parents=True)
    text = "package a.v1_0;\n" + HDI_NESTS[kind](k) + "\n"
    codes = _codes(d, "N.idl", text)  # no RecursionError escapes
    if k <= 10:
        assert "HDI005" not in codes


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(sorted(FBS_NESTS)), k=st.integers(0, 3000))
def test_fbs_nesting_never_recurses_too_far(kind: str, k: int) -> None:
    r = load_text(FBS_NESTS[kind](k))
    codes = [d.code for d in r.diagnostics]
    if k == 1 and kind == "json":
        assert r.ok, codes
    if k > 2 * MAX_TREE_DEPTH:
        assert codes and all(d.span is not None for d in r.diagnostics if d.is_error)


def test_nested_json_list_for_a_scalar_vector_is_an_error() -> None:
    r = load_text("table T { a:[int]; }\nroot_type T;\n{ a: [[1]] }")
    assert [d.code for d in r.diagnostics] == ["FBS053"]


def test_deep_nesting_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "a" / "v1_0").mkdir(parents=True)
    f = tmp_path / "a" / "v1_0" / "D.idl"
    f.write_text("package a.v1_0;\nenum E { A = " + "(" * 5000 + "1" + ")" * 5000 + " };\n")
    rc, _, err = run("parse", str(f))
    assert rc == 1 and "D.idl:2:" in err and "HDI005" in err and "nesting too deep" in err


@pytest.mark.parametrize(
    "text",
    [
        # long inheritance chains, both declaration orders
        "".join(
            f"struct S{i} : S{i - 1} {{ int x{i}; }};\n" if i else "struct S0 { int x0; };\n"
            for i in range(2000)
        ),
        "".join(
            (
                f"struct S{i} : S{i + 1} {{ int x{i}; }};\n"
                if i < 1999
                else "struct S1999 { int x; };\n"
            )
            for i in range(2000)
        ),
    ],
)
def test_long_inheritance_chains(tmp_path: Path, text: str) -> None:
    (tmp_path / "a" / "v1_0").mkdir(parents=True)
    f = tmp_path / "a" / "v1_0" / "C.idl"
    f.write_text("package a.v1_0;\n" + text)
    rc, _, err = run("parse", str(f))
    assert rc == 1 and "HDI314" in err and "Traceback" not in err


def test_long_struct_chain_fbs() -> None:
    n = 3000
    text = "".join(
        f"struct S{i} {{ a:{f'S{i + 1}' if i < n - 1 else 'int'}; }}\n" for i in range(n)
    )
    assert load_text(text).ok


def test_long_import_chain(tmp_path: Path) -> None:
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    n = 1500
    for i in range(n):
        imp = f"import a.v1_0.F{i + 1};\n" if i < n - 1 else ""
        d.joinpath(f"F{i}.idl").write_text(f"package a.v1_0;\n{imp}struct S{i} {{ int x; }};\n")
    d.joinpath(f"F{n - 1}.idl").write_text(
        f"package a.v1_0;\nimport a.v1_0.F0;\nstruct Z {{ int x; }};\n"
    )
    r = load([d / "F0.idl"])
    assert [x.code for x in r.diagnostics] == ["HDI106"]  # the one cycle, no RecursionError


def test_long_include_chain_fbs(tmp_path: Path) -> None:
    n = 300
    for i in range(n):
        inc = f'include "f{i + 1}.fbs";\n' if i < n - 1 else ""
        (tmp_path / f"f{i}.fbs").write_text(f"{inc}table T{i} {{ a:int; }}\n")
    r = load([tmp_path / "f0.fbs"])
    assert "FBS013" in [x.code for x in r.diagnostics]


def test_suggestions_are_bounded() -> None:
    diags = Diagnostics()
    calls = {"n": 0}

    def candidates():  # type: ignore[no-untyped-def]
        for i in range(10**6):
            calls["n"] += 1
            yield f"Name{i}"

    for _ in range(1000):
        suggest(diags, "Nmae1", candidates())
    assert calls["n"] <= SUGGEST_BUDGET + 1000
    assert suggest(diags, "x" * 10_000, ["x" * 10_000]) == []
    assert suggest(Diagnostics(), "Strng", ["String", "int"]) == ["String"]


def test_many_typos_still_suggest_and_stay_bounded(tmp_path: Path) -> None:
    (tmp_path / "a" / "v1_0").mkdir(parents=True)
    f = tmp_path / "a" / "v1_0" / "T.idl"
    decls = "".join(f"struct Type{i} {{ int x; }};\n" for i in range(3000))
    uses = "".join(f"struct U{i} {{ Tpye{i} x; }};\n" for i in range(3000))
    f.write_text("package a.v1_0;\n" + decls + uses)
    r = load([f])
    errors = [d for d in r.diagnostics if d.code == "HDI202"]
    assert len(errors) == 3000
    assert errors[0].help  # the first ones still get a suggestion


def test_zero_size_parcel_elements_are_bounded() -> None:
    """An array of interface-only structs takes no in-band bytes per element."""

    class OnlyRemote:
        def __init__(self, cb: object = None) -> None:
            self.cb = cb

    elem = parcel.Struct(OnlyRemote, fields={"cb": parcel.NOTHING})
    assert elem.min_size == 0
    nested = parcel.Array(parcel.Array(elem))
    outer = 64
    data = (outer).to_bytes(4, "little") + (20000).to_bytes(4, "little") * outer
    with pytest.raises(DecodeError, match="zero-size"):
        nested.read(parcel.Reader(data))
    small = (2).to_bytes(4, "little") + (3).to_bytes(4, "little") * 2
    got = nested.read(parcel.Reader(small))
    assert [len(x) for x in got] == [3, 3]


def test_batch_gc_raises_thresholds_for_one_command_and_restores_them() -> None:
    import gc

    from idlgen.cli.gctuning import batch_gc

    before = gc.get_threshold()
    with pytest.raises(RuntimeError):
        with batch_gc():
            assert gc.get_threshold()[0] >= 100_000 and gc.isenabled()
            raise RuntimeError
    assert gc.get_threshold() == before


@pytest.mark.parametrize(
    "text,code",
    [
        # int() refuses decimals of more than 4300 digits: these used to be tracebacks
        ("package a.v1_0;\nenum E { A = " + "1" * 5000 + " };\n", "HDI304"),
        ("package a.v1_0;\nenum E { A = 0x" + "f" * 5000 + " };\n", "HDI304"),
        ("package a.v" + "1" * 5000 + "_0;\nenum E { A = 1 };\n", "HDI101"),
    ],
)
def test_numbers_too_long_to_convert_are_diagnosed(tmp_path: Path, text: str, code: str) -> None:
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    assert code in _codes(d, "T.idl", text)


def test_fbs_union_value_too_long_to_convert_is_diagnosed(tmp_path: Path) -> None:
    text = "table A {}\nunion U { A = " + "1" * 5000 + " }\n"
    assert _codes(tmp_path, "u.fbs", text) == ["FBS024"]
