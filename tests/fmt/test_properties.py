"""Hypothesis: random schemas, laid out at random with comments in random places, format to
text that keeps every comment in order, parses to the same IR and is stable."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.fmt import format_text
from idlgen.frontend.loader import load
from tests.fmt.common import comments, same_ir

# ---- schemas as token lists ("atoms": pieces no whitespace or comment may split)

_NAMES = st.text("abcdxyz", min_size=1, max_size=4)
_HDI_PRIM = ["int", "boolean", "byte", "short", "long", "float", "double", "String", "unsigned int"]


def _unique(prefix: str, n: int) -> st.SearchStrategy[list[str]]:
    return st.lists(_NAMES, min_size=n, max_size=n, unique=True).map(
        lambda xs: [prefix + x for x in xs]
    )


@st.composite
def hdi_type(draw: st.DrawFn, named: list[str]) -> list[str]:
    base = draw(st.sampled_from(_HDI_PRIM + named))
    kind = draw(st.sampled_from(["plain", "array", "list", "map"]))
    if kind == "array":
        return [*base.split(), "[]"]
    if kind == "list":
        return ["List", "<", *base.split(), ">"]
    if kind == "map":
        return ["Map", "<", "int", ",", *base.split(), ">"]
    return base.split()


@st.composite
def hdi_expr(draw: st.DrawFn, refs: list[str], depth: int = 0) -> list[str]:
    choice = draw(st.integers(0, 4 if depth < 2 else 1))
    if choice == 0:
        return [str(draw(st.integers(0, 99)))]
    if choice == 1:
        return [draw(st.sampled_from(refs))] if refs else ["7"]
    if choice == 2:
        op = draw(st.sampled_from(["|", "&", "<<", "+", "-", "*"]))
        left = draw(hdi_expr(refs, depth + 1))
        return [*left, op, *draw(hdi_expr(refs, depth + 1))]
    if choice == 3:
        return [draw(st.sampled_from(["-", "~"])), *draw(hdi_expr(refs, depth + 1))]
    return ["(", *draw(hdi_expr(refs, depth + 1)), ")"]


@st.composite
def hdi_types_file(draw: st.DrawFn) -> list[str]:
    atoms = ["package", "ohos.hdi.fuzz.v1_0", ";"]
    n_enum, n_struct = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    enums, structs = draw(_unique("E", n_enum)), draw(_unique("S", n_struct))
    for e in enums:
        atoms += ["enum", e]
        if draw(st.booleans()):
            atoms += [":", "int"]
        atoms += ["{"]
        members = draw(_unique(e.upper() + "_", draw(st.integers(1, 4))))
        for i, m in enumerate(members):
            atoms.append(m)
            if draw(st.booleans()):
                atoms += ["=", *draw(hdi_expr(members[:i]))]
            if i < len(members) - 1 or draw(st.booleans()):
                atoms.append(",")
        atoms += ["}", ";"]
    for i, s in enumerate(structs):
        union = draw(st.booleans())
        atoms += ["union" if union else "struct", s, "{"]
        fields = draw(_unique("f", draw(st.integers(1, 4))))
        for j, f in enumerate(fields):
            if union:  # plain data only
                atoms += [*draw(st.sampled_from(["int", "unsigned int", "double", *enums])).split()]
            else:
                atoms += draw(hdi_type(enums + structs[:i]))
            atoms.append(f)
            if j < len(fields) - 1 or draw(st.booleans()):
                atoms.append(";")
        atoms += ["}", ";"]
    return atoms


@st.composite
def hdi_interface_file(draw: st.DrawFn) -> list[str]:
    atoms = ["package", "ohos.hdi.fuzz.v1_0", ";"]
    if draw(st.booleans()):
        atoms += ["[", "callback", "]"]
    atoms += ["interface", "IFoo", "{"]
    for m in draw(_unique("M", draw(st.integers(1, 3)))):
        oneway = draw(st.booleans())
        if oneway:
            atoms += ["[", "oneway", "]"]
        atoms += [m, "("]
        params = draw(_unique("p", draw(st.integers(0, 6))))
        for k, p in enumerate(params):
            if k:
                atoms.append(",")
            d = "in" if oneway else draw(st.sampled_from(["in", "out"]))
            atoms += ["[", d, "]", *draw(hdi_type([])), p + "LongParameterName" * (k % 2)]
        atoms += [")", ";"]
    atoms += ["}"] + ([";"] if draw(st.booleans()) else [])
    return atoms


@st.composite
def fbs_file(draw: st.DrawFn) -> list[str]:
    atoms = ["namespace", "Fuzz", ".", "Game", ";", "attribute", '"some_long_attribute_name"', ";"]
    enums = draw(_unique("E", draw(st.integers(0, 2))))
    tables = draw(_unique("T", draw(st.integers(1, 3))))
    for e in enums:
        atoms += ["enum", e, ":", "ubyte"]
        if draw(st.booleans()):
            atoms += ["(", "bit_flags", ")"]
        atoms += ["{"]
        vals = draw(_unique("V", draw(st.integers(1, 4))))
        for i, v in enumerate(vals):
            atoms += [v] + (["=", str(i)] if draw(st.booleans()) else [])
            if i < len(vals) - 1 or draw(st.booleans()):
                atoms.append(",")
        atoms += ["}"]
    if len(tables) > 1:
        atoms += ["union", "U", "{", tables[0], ",", "A", ":", tables[-1], "}"]
    for t in tables:
        atoms += ["table", t, "{"]
        ids = draw(st.booleans())  # all fields have an id, or none
        for j, f in enumerate(draw(_unique("f", draw(st.integers(0, 4))))):
            typ = draw(st.sampled_from(["int", "string", "[ubyte]", "float", *enums]))
            atoms += [f, ":", *(["[", typ[1:-1], "]"] if typ.startswith("[") else [typ])]
            if typ in ("int", "float") and draw(st.booleans()):
                atoms += ["=", draw(st.sampled_from(["1", "-2", "3.5", "0x10"]))]
            if ids:
                atoms += ["(", "id", ":", str(j)]
                if draw(st.booleans()):
                    atoms += [",", "deprecated", ",", "some_long_attribute_name", ":", '"xyzzy"']
                atoms += [")"]
            atoms.append(";")
        atoms += ["}"]
    atoms += ["root_type", tables[0], ";"]
    return atoms


# ---- random layout and comments between the atoms

_WS = st.sampled_from([" ", "  ", "\n", "\n\n", "\n\n\n", "\t", " \n    ", "\n  "])


@st.composite
def laid_out(draw: st.DrawFn, atoms: list[str], language: str) -> str:
    docs = ["/** doc */", "/**< post */", "/** two\n   *  lines */"] if language == "hdi" else []
    kinds = ["// line", "/* block */", "/* two\n       lines */", *docs]
    out = []
    for i, a in enumerate(atoms):
        out.append(a)
        if i == len(atoms) - 1:
            break
        out.append(draw(_WS))
        for _ in range(max(0, draw(st.integers(-4, 2)))):  # mostly none, up to two
            c = draw(st.sampled_from(kinds + (["///"] if language == "fbs" else [])))
            if c == "///":  # a FlatBuffers doc comment is a line of its own
                out.append("\n/// doc\n")
            else:
                out.append(c + ("\n" if c.startswith("//") else draw(_WS)))
    return "".join(out) + draw(st.sampled_from(["", "\n", "\n\n"]))


def _check(text: str, name: str, language: str, **load_args: object) -> None:
    r = format_text(text, name)
    assert r.ok, (text, list(r.diagnostics))
    assert format_text(r.text, name).text == r.text, r.text
    assert comments(r.text, language) == comments(text, language)
    with tempfile.TemporaryDirectory() as d:
        a_root, b_root = Path(d, "a"), Path(d, "b")
        for root, body in ((a_root, text), (b_root, r.text)):
            f = root / name
            f.parent.mkdir(parents=True)
            f.write_text(body, encoding="utf-8")
        roots = {"a": {"ohos.hdi": a_root}, "b": {"ohos.hdi": b_root}}
        a = load([a_root / name], roots=roots["a"] if language == "hdi" else None)
        b = load([b_root / name], roots=roots["b"] if language == "hdi" else None)
        same_ir(a, b, a_root, b_root)


_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_hdi_types_files(data: st.DataObject) -> None:
    text = data.draw(laid_out(data.draw(hdi_types_file()), "hdi"))
    _check(text, "fuzz/v1_0/Types.idl", "hdi")


@_SETTINGS
@given(st.data())
def test_hdi_interface_files(data: st.DataObject) -> None:
    text = data.draw(laid_out(data.draw(hdi_interface_file()), "hdi"))
    _check(text, "fuzz/v1_0/IFoo.idl", "hdi")


@_SETTINGS
@given(st.data())
def test_fbs_files(data: st.DataObject) -> None:
    text = data.draw(laid_out(data.draw(fbs_file()), "fbs"))
    _check(text, "game.fbs", "fbs")


_LONG = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@_LONG
@given(st.data())
def test_long_run_every_shape(data: st.DataObject) -> None:
    """The three properties above with many more examples (the slow tier)."""
    shape = data.draw(st.sampled_from(["types", "interface", "fbs"]))
    if shape == "fbs":
        _check(data.draw(laid_out(data.draw(fbs_file()), "fbs")), "game.fbs", "fbs")
        return
    gen = hdi_types_file() if shape == "types" else hdi_interface_file()
    name = "fuzz/v1_0/Types.idl" if shape == "types" else "fuzz/v1_0/IFoo.idl"
    _check(data.draw(laid_out(data.draw(gen), "hdi")), name, "hdi")
