"""HDI structs and unions held by value: cycles and deep chains are located errors.

C++ cannot compile a struct that holds itself by value (infinite size; hdi-gen's output fails
with "field has incomplete type"), and the POD and layout rules recurse once per level.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.bounds import MAX_VALUE_NESTING
from idlgen.frontend import load

from ._support import run


def _file(tmp: Path, text: str, name: str = "Types.idl") -> Path:
    d = tmp / "a" / "v1_0"
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text("package a.v1_0;\n" + text)
    return p


def _chain(n: int) -> str:
    """S0 holds S1 holds … S{n-1} (which holds an int): n levels."""
    return "".join(
        f"struct S{i} {{ S{i + 1} a; }};\n" if i < n - 1 else f"struct S{i} {{ int x; }};\n"
        for i in range(n)
    )


@pytest.mark.parametrize(
    "text, chain",
    [
        ("struct T { T t; };", "T -> T"),
        (
            "struct S0 { S1 a; };\nstruct S1 { S2 b; };\nstruct S2 { int x; S0 c; };",
            "S0 -> S1 -> S2 -> S0",
        ),
        ("struct T { T t; };\nunion U { T x; };", "T -> T"),
        ("union U { S s; };\nstruct S { int a; U u; };", "U -> S -> U"),
        ("struct P { C c; };\nstruct C : P { int x; };", "P -> C -> P"),
    ],
)
def test_value_cycles_are_located_errors_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, chain: str
) -> None:
    monkeypatch.chdir(tmp_path)
    f = _file(tmp_path, text + "\n")
    rc, _, err = run("parse", str(f))
    assert rc == 1 and "HDI315" in err and chain in err, err
    assert "Types.idl:" in err and "^" in err
    # diff compares even a side with errors, and build must stop before layouts
    assert run("diff", str(f), str(f))[0] == 1
    assert run("build", "--out", str(tmp_path / "out"), str(f))[0] == 1


def test_extends_cycles_stay_hdi310(tmp_path: Path) -> None:
    f = _file(
        tmp_path, "struct A : A { int x; };\nstruct B : D { int y; };\nstruct D : B { int z; };\n"
    )
    codes = [d.code for d in load([f]).diagnostics]
    assert "HDI310" in codes and "HDI315" not in codes


@pytest.mark.parametrize(
    "text, chain",
    [
        ("struct Node { int v; List<Node> kids; };", "Node -> Node"),
        ("struct T { T[] more; };", "T -> T"),
        ("struct T { Map<int, T> byId; };", "T -> T"),
        ("union U { int a; List<U> b; };", "U -> U"),
        ("struct A { List<B> b; };\nstruct B { A[] a; };", "A -> B -> A"),
        ("struct A { int x; };\nstruct B : A { List<B> kids; };", "B -> B"),
        ("struct A { List<B> b; };\nstruct B : A { int y; };", "A -> B -> A"),
    ],
)
def test_sequences_of_itself_are_located_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, chain: str
) -> None:
    """hdi-gen declares a struct after its members: ``List<Node>`` inside ``Node`` is its
    "this type was not declared in this scope". It used to build (exit 0) into a package
    that did not import (``Node has no Parcel codec``)."""
    monkeypatch.chdir(tmp_path)
    f = _file(tmp_path, text + "\n")
    rc, _, err = run("parse", str(f))
    assert rc == 1 and "HDI317" in err and chain in err and "Types.idl:" in err, err
    assert run("build", "--out", str(tmp_path / "out"), str(f))[0] == 1
    assert not (tmp_path / "out").exists()


def test_acyclic_sequences_build_import_and_round_trip(tmp_path: Path) -> None:
    from tests._gen import generated_classes

    cls = generated_classes(
        "package ohos.hdi.demo.v1_0;\n"
        "struct A { int v; List<B> bs; B[] more; Map<int, B> byId; };\nstruct B { int x; };\n",
        suffix=".idl",
    )
    A = next(c for k, c in cls.items() if k.endswith(".A"))
    B = next(c for k, c in cls.items() if k.endswith(".B"))
    a = A(v=1, bs=[B(x=2), B(x=3)], more=[B(x=4)], byId={5: B(x=6)})
    assert A.from_parcel(a.to_parcel()) == a


def test_deep_value_chains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ok = _file(tmp_path, _chain(MAX_VALUE_NESTING), "Ok.idl")
    assert load([ok]).ok
    deep = _file(tmp_path, _chain(3000), "Deep.idl")
    r = load([deep])
    assert [d.code for d in r.diagnostics] == ["HDI316"]  # reported once, not per level
    for argv in (["parse", str(deep)], ["diff", str(deep), str(deep)]):
        rc, _, err = run(*argv)
        assert rc == 1 and "Traceback" not in err


@settings(max_examples=80, deadline=None)
@given(
    edges=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from(["", "[]", "List"])),
        max_size=12,
    )
)
def test_cycles_reported_iff_the_by_value_graph_has_one(
    tmp_path_factory: pytest.TempPathFactory, edges: list[tuple[int, int, str]]
) -> None:
    members: dict[int, list[str]] = {i: ["int z;"] for i in range(6)}
    graph: dict[int, set[int]] = {i: set() for i in range(6)}
    for k, (a, b, how) in enumerate(edges):
        ty = {"": f"S{b}", "[]": f"S{b}[]", "List": f"List<S{b}>"}[how]
        members[a].append(f"{ty} m{k};")
        if how == "":
            graph[a].add(b)
    text = "".join(f"struct S{i} {{ {' '.join(m)} }};\n" for i, m in members.items())
    f = _file(tmp_path_factory.mktemp("g"), text)
    codes = [d.code for d in load([f]).diagnostics]

    def cyclic() -> bool:  # the oracle: plain recursive DFS (the graph is tiny)
        state: dict[int, int] = {}

        def visit(n: int) -> bool:
            state[n] = 1
            for m in graph[n]:
                if state.get(m) == 1 or (m not in state and visit(m)):
                    return True
            state[n] = 2
            return False

        return any(n not in state and visit(n) for n in graph)

    assert ("HDI315" in codes) == cyclic(), (text, codes)
    assert set(codes) <= {"HDI315", "HDI317"}, codes
    if not cyclic():  # no by-value cycle: HDI317 iff the graph with sequences is cyclic
        for k, (a, b, how) in enumerate(edges):
            graph[a].add(b)
        assert ("HDI317" in codes) == cyclic(), (text, codes)
