"""Generated code is black's output without running black over it (idlgen.backend.formatting).

Differential tests against black itself: the cheap layout (``stabilize``) must equal
``black.format_str`` on real generated modules (a sample of the 611-file HDI corpus), and the
black-layout model (``blackstyle.layout``) and docstring layout must equal black on random input.
"""

from __future__ import annotations

import keyword
import pathlib
import random
import string

import black
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from idlgen.backend.blackstyle import layout, normalize_quotes
from idlgen.backend.formatting import docstring_at, stabilize
from idlgen.backend.generate import GenerateOptions, generate
from idlgen.backend.naming import docstring
from idlgen.diagnostics import Diagnostics
from tests.conftest import HDI_CORPUS, need


def _black(src: str, line_length: int = 100) -> str:
    return black.format_str(src, mode=black.Mode(line_length=line_length))


def test_corpus_sample_is_black_stable() -> None:
    """Modules generated from a fixed random sample of the HDI corpus (with everything they
    import) equal black's formatting of themselves, byte for byte."""
    from idlgen.frontend.hdi.loader import load

    root = need(HDI_CORPUS)
    files = sorted(root.rglob("*.idl"))
    sample = random.Random(11).sample(files, 60)
    res = load(sample, roots={"ohos.hdi": root})
    assert not res.diagnostics.has_errors
    wanted = {str(p) for p in sample}
    chosen = [f for f in res.schema.files if f.path in wanted or f.path.endswith("Types.idl")]
    tree = generate(res.schema, chosen, Diagnostics(), GenerateOptions(base_dir=root))
    assert len(tree) > 60
    bad = [rel for rel, src in tree.items() if _black(src) != src]
    assert bad == []


@pytest.mark.parametrize("line_length", [60, 79])
def test_configured_line_length_is_black_stable(line_length: int, tmp_path: pathlib.Path) -> None:
    """`line-length` below the default: docstrings (laid out by the templates, not black) and
    code follow it too. A doc of several lines whose last line fits 100 columns but not ``line_length`` needs
    its closing quotes moved, as black moves them; plus the repository's NNRt v2_1 schemas."""
    from idlgen.frontend.hdi.loader import load

    d = tmp_path / "demo" / "v1_0"
    d.mkdir(parents=True)
    words = " ".join(["word"] * 16)  # 79 characters: over 60 and 79 once indented, under 100
    (d / "Types.idl").write_text(
        "package ohos.hdi.demo.v1_0;\n"
        f"/**\n * First line.\n * {words}\n */\nstruct S {{\n    /** Member.\n     * {words} */\n"
        "    int a;\n};\n"
    )
    repo = pathlib.Path(__file__).resolve().parents[1]
    nnrt = sorted((repo / "schemas/hdi/nnrt/v2_1").glob("*.idl"))
    tree: dict[str, str] = {}
    for paths, root, kernels in (
        ([d / "Types.idl"], tmp_path, frozenset[str]()),
        (nnrt, repo / "schemas/hdi", frozenset({"ohos.hdi.nnrt.v2_1"})),
    ):
        options = GenerateOptions(base_dir=repo, line_length=line_length, kernels=kernels)
        res = load(paths, roots={"ohos.hdi": root})
        assert not res.diagnostics.has_errors
        tree.update(generate(res.schema, list(res.schema.files), Diagnostics(), options))
    assert any(rel.endswith("kernels.py") for rel in tree)
    bad = [rel for rel, src in tree.items() if _black(src, line_length) != src]
    assert bad == []


def test_unformatted_and_stabilized_differ_only_in_layout() -> None:
    """The cheap path really changes what the templates print (so the test above means
    something) and its result is what black makes of the raw template output."""
    from idlgen.frontend.hdi.loader import load

    root = need(HDI_CORPUS)
    # nnrt v1_0 has docstrings black leaves alone (a backslash ends some of their lines)
    files = sorted((root / "nnrt" / "v1_0").glob("*.idl")) + sorted(
        (root / "nnrt" / "v2_0").glob("*.idl")
    )
    res = load(files, roots={"ohos.hdi": root})
    raw = generate(res.schema, list(res.schema.files), Diagnostics(), GenerateOptions(format=False))
    changed = 0
    for rel, src in raw.items():
        got = stabilize(src, 100, rel)
        changed += got != src
        assert got == _black(src), rel
    assert changed > 0


# Random codec-table-like statements: calls and literals nested in each other.
_names = st.text(string.ascii_letters + "_", min_size=1, max_size=24).filter(
    lambda s: s.isidentifier() and not keyword.iskeyword(s)
)
_atoms = st.one_of(
    st.integers(-(2**40), 2**40).map(str),
    st.text(string.printable.replace("\x0b", "").replace("\x0c", ""), max_size=30).map(repr),
    st.sampled_from(["None", "True", "False", "_parcel.INT32", "_parcel.STRING"]),
    _names,
    # longer than any width: black leaves such an element unsplit on a line of its own
    st.text(string.ascii_letters, min_size=100, max_size=160).map(repr),
)


def _exprs() -> st.SearchStrategy[str]:
    return st.recursive(
        _atoms,
        lambda inner: st.one_of(
            st.tuples(_names, st.lists(inner, max_size=6)).map(
                lambda t: f"_parcel.{t[0]}({', '.join(t[1])})"
            ),
            st.lists(inner, max_size=6).map(
                lambda xs: f"({xs[0]},)" if len(xs) == 1 else f"({', '.join(xs)})"
            ),
            st.lists(inner, min_size=1, max_size=6).map(lambda xs: f"[{', '.join(xs)}, ]"),
            st.lists(st.tuples(_atoms, inner), max_size=4).map(
                lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
            ),
        ),
        max_leaves=40,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.tuples(_names, st.lists(_exprs(), max_size=8)),
    st.integers(0, 2),
    st.sampled_from([40, 60, 100]),
)
def test_layout_matches_black(call: tuple[str, list[str]], depth: int, width: int) -> None:
    stmt = f"_ipc.{call[0]}({', '.join(call[1])})"
    got = layout(stmt, depth, width)
    assume(got is not None)  # outside the model the caller runs black; not what is tested
    pad = "    " * depth
    assert "\n".join(got) + "\n" == "".join(
        pad + ln if ln else ln for ln in _black(stmt + "\n", width - 4 * depth).splitlines(True)
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_names, min_size=1, max_size=40),
    st.sampled_from(["from .types import", "from ..v1_0.i_foo import"]),
)
def test_import_layout_matches_black(names: list[str], head: str) -> None:
    stmt = f"{head} {', '.join(names)}"
    got = layout(stmt, 0, 100)
    assert got is not None
    assert "\n".join(got) + "\n" == _black(stmt + "\n")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_names, st.sampled_from(["int", "str", "list[Foo] | None", "bytes"]))),
    st.sampled_from(["None", "int", "IPreparedModel | None", "tuple[int, list[str]]"]),
    st.integers(1, 2),
)
def test_def_layout_matches_black(params: list[tuple[str, str]], ret: str, depth: int) -> None:
    sig = ", ".join(["self", *(f"{n}: {t}" for n, t in params)])
    stmt = f"def Method{len(params)}({sig}) -> {ret}:"
    got = layout(stmt, depth, 100)
    assume(got is not None)
    # with a docstring, as generated methods have (black joins a bare ``...`` to the def)
    pad = "    " * depth
    nest = "".join("    " * i + "class C:\n" for i in range(depth))
    src = f'{nest}{pad}{stmt}\n{pad}    """Doc."""\n'
    assert "\n".join(got) + "\n" in _black(src)


# Any text but surrogates and the line breaks str.splitlines knows beyond "\n" (docstring()
# escapes those; black and this layout only ever see "\n").
_doc_text = st.text(
    st.characters(
        exclude_categories=["Cs"],
        exclude_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(_doc_text, st.integers(0, 2))
def test_docstring_layout_matches_black(text: str, depth: int) -> None:
    if not text.strip():
        return
    raw = docstring(text)
    nest = "".join("    " * i + "class C:\n" for i in range(depth)) + "    " * depth
    laid = f"{nest}{docstring_at(raw, depth)}\n"
    assert _black(f"{nest}{raw}\n") == laid  # what black makes of the raw literal
    assert _black(laid) == laid


@pytest.mark.parametrize(
    ("text", "width"),
    [("0\t\n0", 100), ("a \n b", 100), ("x\n\t\ty\n z", 100), ("a\n" + "b" * 20 + "\\", 20)],
)
def test_docstring_layout_edge_cases(text: str, width: int) -> None:
    """Found by the test above: black strips the first line's trailing blanks, expands
    leading tabs before measuring indents, and never moves the closing quotes of a docstring
    that ends in a lone backslash."""
    raw = docstring(text)
    for depth in (0, 1):
        nest = "".join("    " * i + "class C:\n" for i in range(depth)) + "    " * depth
        assert _black(f"{nest}{raw}\n", width) == f"{nest}{docstring_at(raw, depth, width)}\n"


def test_docstring_with_backslash_newline_is_left_alone() -> None:
    """black does not touch a docstring with a backslash ending a line (Doxygen ``\\``)."""
    raw = docstring("Matrix:\n  [1 2],\\\n  [3 4]")
    assert "\\\n" in raw
    assert docstring_at(raw, 1) == raw
    src = f"class C:\n    {raw}\n"
    assert _black(src) == src


@pytest.mark.parametrize(
    "lit", ["'a'", "'it\\'s'", "'say \"hi\"'", "b''", "'\\\\'", "'\"'", "'\\''", "'\\\\\"'"]
)
def test_normalize_quotes_matches_black(lit: str) -> None:
    assert normalize_quotes(lit) + "\n" == _black(lit + "\n")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_names, _names, _exprs(), st.integers(0, 2), st.sampled_from([40, 60, 100]))
def test_assignment_layout_matches_black(
    name: str, ann: str, value: str, depth: int, width: int
) -> None:
    """Class-body assignments (record fields with defaults): black wraps a right-hand side
    that does not fit in parentheses, so a long one must not be returned as one line."""
    stmt = f"{name}: {ann} = {value}"
    got = layout(stmt, depth, width)
    assume(got is not None)
    pad = "    " * depth
    nest = "".join("    " * i + "class C:\n" for i in range(depth))
    assert _black(f"{nest}{pad}{stmt}\n", width) == nest + "\n".join(got) + "\n"


def test_long_enum_default_is_left_to_black() -> None:
    """The NNRt default ``ActivationType.ACTIVATION_TYPE_NO_ACTIVATION`` at 60 columns."""
    stmt = "activationType: ActivationType = ActivationType.ACTIVATION_TYPE_NO_ACTIVATION"
    assert layout(stmt, 1, 60) is None
    assert layout(stmt, 1, 100) == ["    " + stmt]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_exprs(), min_size=1, max_size=8), st.integers(10, 80), st.sampled_from([40, 100]))
def test_long_table_layout_matches_black(elements: list[str], copies: int, width: int) -> None:
    """Statements the size of a big interface's codec table (the layout works on index ranges
    of one token array; many elements and nesting levels exercise the offsets)."""
    items = [f"_ipc.M{i}({e}, ({e},))" for i in range(copies) for e in elements]
    stmt = f"_ipc.InterfaceCodec({', '.join(items)})"
    got = layout(stmt, 0, width)
    assume(got is not None)
    assert "\n".join(got) + "\n" == _black(stmt + "\n", width)


@pytest.mark.parametrize(
    "stmt",
    ["f(a + b)", "f(a, b", "f(a, b))", "f(a]", 'f("a" "b")', "f(x, 'unterminated)", "f(a, b,)"],
)
def test_layout_declines_what_it_does_not_model(stmt: str) -> None:
    """Operators it has no rule for, unbalanced brackets, implicit concatenation, a call's
    magic trailing comma: left to black."""
    assert layout(stmt, 0, 5) is None


# The same statements built as trees (how the codec renderers hand them over): no magic commas,
# string atoms already in black's quotes.
