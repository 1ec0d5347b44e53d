"""idlgen.frontend.lalr against Lark itself (differential).

The driver must give what Lark's own LALR parser and ``Transformer.transform`` give: the same
raw AST (every field, spans included) for every file of the corpora, and the same sequence of
syntax errors (token, position, expected set) for mutated and random inputs, with and without
the HDI parser's ``;``/``)`` repair.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from idlgen.frontend import lalr
from idlgen.frontend.fbs import parser as fbs_parser
from idlgen.frontend.hdi import parser as hdi_parser
from idlgen.resources import grammar_text
from tests.conftest import HDI_CORPUS, HDIGEN_TESTS, REPO, SHARED

FBS_CORPUS = SHARED / "corpus" / "fbs"
_REPAIRABLE = {"SEMICOLON": ";", "RPAR": ")"}


# ---- the reference: Lark's own parser, tree and transformer


class _Reference:
    def __init__(self, grammar: str) -> None:
        self.docs: list[lark.Token] = []

        def sink(tok: lark.Token) -> lark.Token:
            self.docs.append(tok)
            return tok

        callbacks = {"DOC_COMMENT": sink} if grammar == "hdi.lark" else {}
        self.lark = lark.Lark(
            grammar_text(grammar),
            parser="lalr",
            lexer="contextual",
            propagate_positions=True,
            maybe_placeholders=False,
            lexer_callbacks=callbacks,
        )

    def errors(self, text: str, repair: bool) -> tuple[list[Any], Any]:
        """Lark's errors for ``text`` (each one offered to the HDI-style repair), and how it
        ended: the tree, or the error that stopped it."""
        seen: list[Any] = []

        def on_error(e: UnexpectedInput) -> bool:
            if not isinstance(e, UnexpectedToken) or e.token.type == "$END":
                return False
            seen.append(_describe(e))
            expected = set(e.expected)
            if not repair or len(expected) != 1 or not expected <= _REPAIRABLE.keys():
                return False
            if len(seen) > 20:
                return False
            (kind,) = expected
            try:
                e.interactive_parser.feed_token(lark.Token(kind, _REPAIRABLE[kind]))
                e.interactive_parser.feed_token(e.token)
            except UnexpectedInput:
                return False
            return True

        self.docs.clear()
        try:
            return seen, self.lark.parse(text, on_error=on_error)
        except UnexpectedInput as e:
            return seen, _describe(e)


def _describe(e: UnexpectedInput) -> tuple[Any, ...]:
    if isinstance(e, UnexpectedToken):
        t = e.token
        pos = (t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos)
        return ("token", t.type, str(t), pos, frozenset(e.expected))
    assert isinstance(e, UnexpectedCharacters)
    return ("char", e.pos_in_stream, e.line, e.column, frozenset(e.allowed or ()))


def _ours(
    grammar: lalr.Grammar, transformer: Any, text: str, repair: bool, docs: list[lark.Token]
) -> tuple[list[Any], Any]:
    seen: list[Any] = []

    def on_error(e: UnexpectedToken) -> str | None:
        seen.append(_describe(e))
        expected = set(e.expected)
        if not repair or len(expected) != 1 or not expected <= _REPAIRABLE.keys():
            return None
        return None if len(seen) > 20 else next(iter(expected))

    collect = (frozenset({"DOC_COMMENT"}), docs.append)
    try:
        return seen, grammar.parse(text, transformer, on_error=on_error, collect=collect)
    except UnexpectedInput as e:
        return seen, _describe(e)


def _same(a: Any, b: Any, where: str = "") -> None:
    """Deep equality over every dataclass field (spans too) and exact types."""
    assert type(a) is type(b), (where, type(a), type(b))
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, lark.Token):
        assert (a.type, str(a)) == (b.type, str(b)), where
    else:
        assert a == b, (where, a, b)


# ---- the two languages


class _Lang:
    def __init__(
        self,
        grammar: str,
        ours: Callable[[], lalr.Grammar],
        transformer: Callable[[], Any],
        finish: Callable[[Any, list[lark.Token], str], Any],
    ) -> None:
        self.ref = _Reference(grammar)
        self.grammar = ours()
        self.transformer = transformer
        self.finish = finish

    def compare(self, text: str, repair: bool = False) -> bool:
        """Assert both agree on ``text``; True when it parsed without any error."""
        want_seen, want = self.ref.errors(text, repair)
        transformer = self.transformer()
        docs: list[lark.Token] = []
        got_seen, got = _ours(self.grammar, transformer, text, repair, docs)
        assert got_seen == want_seen, text
        if isinstance(want, tuple):
            assert got == want, text
            return False
        assert not isinstance(got, tuple), (text, got)
        if want_seen:
            return False  # a repaired parse: Lark's inserted token has no position, ours does
        expected = self.finish(self.transformer().transform(want), self.ref.docs, text)
        _same(self.finish(got, docs, text), expected)
        return True


def _hdi_transformer() -> Any:
    t = hdi_parser._ToRaw()
    t.path = "x.idl"
    return t


def _hdi_finish(raw: Any, docs: list[lark.Token], text: str) -> Any:
    hdi_parser._attach_docs(raw, docs, text)
    return raw


def _fbs_transformer() -> Any:
    return fbs_parser._ToAst("x.fbs", {})


def _memo(make: Callable[[], _Lang]) -> Callable[[], _Lang]:
    cell: list[_Lang] = []

    def get() -> _Lang:
        if not cell:
            cell.append(make())
        return cell[0]

    return get


_HDI_LANG = _memo(lambda: _Lang("hdi.lark", hdi_parser._grammar, _hdi_transformer, _hdi_finish))
_FBS_LANG = _memo(
    lambda: _Lang("fbs.lark", fbs_parser._grammar, _fbs_transformer, lambda v, d, t: v)
)


@pytest.fixture(scope="module")
def hdi() -> _Lang:
    return _HDI_LANG()


@pytest.fixture(scope="module")
def fbs() -> _Lang:
    return _FBS_LANG()


def _files(*dirs_and_globs: tuple[Path, str]) -> list[Path]:
    out: list[Path] = []
    for d, glob in dirs_and_globs:
        if d.exists():
            out += sorted(d.rglob(glob))
    return out


def _hdi_files() -> list[Path]:
    return _files(
        (HDI_CORPUS, "*.idl"),
        (HDIGEN_TESTS, "*.idl"),
        (REPO / "schemas", "*.idl"),
        (REPO / "tests" / "hdi" / "bad", "*.idl"),
    )


def _fbs_files() -> list[Path]:
    return _files((FBS_CORPUS, "*.fbs"), (REPO / "schemas", "*.fbs"), (REPO / "tests", "*.fbs"))


def _read(p: Path) -> str:
    return p.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")


# ---- every file as it is


def test_every_hdi_file_parses_as_lark_does(hdi: _Lang) -> None:
    files = _hdi_files()
    parsed = sum(hdi.compare(_read(f), repair=True) for f in files)
    assert parsed >= len(files) * 0.9 if len(files) > 100 else parsed > 5


def test_every_fbs_file_parses_as_lark_does(fbs: _Lang) -> None:
    files = _fbs_files()
    parsed = sum(fbs.compare(_read(f)) for f in files)
    assert parsed >= len(files) * 0.8


# ---- mutated files: the error paths

# punctuation both languages share, then each one's own tokens and traps
_PUNCT = [";", ",", "(", ")", "{", "}", "[", "]"]
_HDI_PIECES = [
    *_PUNCT,
    "<",
    ">",
    "=",
    ":",
    "[]",
    "in",
    "out",
    "struct",
    "enum",
    "List",
    "/*",
    "/** d */",
    "//",
    "0x1u",
    "++",
    "$",
    "\n",
    "x.y",
]
_FBS_PIECES = [
    *_PUNCT,
    ":",
    "=",
    ".",
    "table",
    "struct",
    "enum",
    "union",
    '"s"',
    "'",
    "/*",
    "///",
    "-",
    "+inf",
    "0x",
    "1e",
    "$",
    "\n",
]


def _mutants(text: str, pieces: list[str], rng: random.Random, n: int) -> Iterator[str]:
    for _ in range(n):
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.randrange(6))
        op = rng.randrange(3)
        if op == 0:
            yield text[:i] + text[j:]
        elif op == 1:
            yield text[:i] + rng.choice(pieces) + text[i:]
        else:
            yield text[:i] + rng.choice(pieces) + text[j:]


def test_mutated_hdi_files_fail_as_lark_does(hdi: _Lang) -> None:
    rng = random.Random(11)
    files = _hdi_files()
    for f in rng.sample(files, min(60, len(files))):
        text = _read(f)
        for m in _mutants(text, _HDI_PIECES, rng, 12):
            hdi.compare(m, repair=True)
            hdi.compare(m, repair=False)


def test_mutated_fbs_files_fail_as_lark_does(fbs: _Lang) -> None:
    rng = random.Random(12)
    files = _fbs_files()
    for f in rng.sample(files, min(40, len(files))):
        text = _read(f)
        for m in _mutants(text, _FBS_PIECES, rng, 12):
            fbs.compare(m)


# ---- random token soup: every state's lexer and every error kind

_HDI_WORDS = _HDI_PIECES + [
    "package a.b;",
    "import a.b;",
    "sequenceable a.b;",
    "interface",
    "extends",
    "union",
    "unsigned",
    "int",
    "Map",
    "String",
    "[in]",
    "oneway",
    "callback",
    "1",
    "0b2",
    "A",
    "B",
    "-",
    "~",
    "<<",
    "|",
]
_FBS_WORDS = _FBS_PIECES + [
    "namespace",
    "include",
    "attribute",
    "root_type",
    "rpc_service",
    "file_identifier",
    "int",
    "string",
    "[ubyte]",
    "A",
    "b",
    "1",
    "2.5",
    "true",
    "deprecated",
    "id",
    "deg(1)",
    "nan",
    "-nan",
]


def _soup(words: list[str]) -> st.SearchStrategy[str]:
    seps = st.sampled_from([" ", "", "\n", "\t"])
    return st.lists(st.tuples(st.sampled_from(words), seps), max_size=40).map(
        lambda xs: "".join(w + s for w, s in xs)
    )


@settings(max_examples=300, deadline=None)
@given(_soup(_HDI_WORDS), st.booleans())
def test_random_hdi_text_as_lark(text: str, repair: bool) -> None:
    _HDI_LANG().compare(text, repair=repair)


@settings(max_examples=300, deadline=None)
@given(_soup(_FBS_WORDS))
def test_random_fbs_text_as_lark(text: str) -> None:
    _FBS_LANG().compare(text)


# ---- limits


def test_depth_limit_stops_at_the_first_too_deep_node() -> None:
    g = hdi_parser._grammar()
    t = _hdi_transformer()
    text = "package a.b;\nenum E { A = " + "(" * 300 + "1" + ")" * 300 + " };"
    with pytest.raises(lalr.TooDeep) as e:
        g.parse(text, t, max_depth=100)
    assert e.value.line == 2 and 14 <= e.value.column <= 14 + 300
    # the same text without a limit parses
    assert g.parse(text, t) is not None
