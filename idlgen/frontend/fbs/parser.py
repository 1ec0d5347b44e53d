"""Parse ``.fbs`` text into :mod:`idlgen.frontend.fbs.ast` with Lark (LALR), plus doc comments.

Doc comments are not grammar tokens: flatc collects ``///`` lines while skipping whitespace
and hands them to whatever declaration starts at the next token. ``_scan_trivia`` reproduces
that by mapping the offset of every token that follows comments to the doc lines before it.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Literal

import lark
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ... import resources
from ...bounds import MAX_TREE_DEPTH
from ...diagnostics import Diagnostics
from ..lalr import Grammar, TooDeep
from ..larkparser import lalr
from ...ir import Span
from ...wire.fbliterals import unescape
from . import ast as A

__all__ = ["parse", "unescape", "grammar_text"]


def grammar_text() -> str:
    return resources.grammar_text("fbs.lark")


def lark_spec() -> tuple[str, str, dict[str, Any]]:
    """(name, grammar, Lark options) of the parser whose tables ``lalr.Grammar`` runs; the
    options name what the driver reproduces."""
    options = {"lexer": "contextual", "propagate_positions": True, "maybe_placeholders": False}
    return "fbs", grammar_text(), options


@functools.cache
def _parser() -> Lark:
    name, grammar, options = lark_spec()
    return lalr(grammar, name, **options)


# Comments and strings; what lies between them is code or blanks.
_TRIVIA = re.compile(
    r"""(?P<doc>///[^\n]*)
    |//[^\n]*
    |/\*[\s\S]*?(?:\*/|\Z)
    |(?P<str>"(?:[^"\\\n]|\\[\s\S])*"?|'(?:[^'\\\n]|\\[\s\S])*'?)""",
    re.VERBOSE,
)
_BLANKS = " \t\r\f\n"
_CODE = re.compile(r"[^ \t\r\f\n]")


def _scan_trivia(text: str, file: str, diags: Diagnostics) -> dict[int, list[str]]:
    """Offsets of tokens that are preceded by ``///`` doc lines -> those lines.

    As flatc: a ``///`` line documents the next declaration, and one that follows code on its
    line is an error. Only comments and strings are visited; the code between them is found
    with one search per gap.
    """
    docs: dict[int, list[str]] = {}
    pending: list[str] = []
    last_code = -1  # offset of the last code character seen
    line, counted = 1, 0  # line numbers, counted only as far as a diagnostic needs them
    prev = 0
    for m in _TRIVIA.finditer(text):
        start = m.start()
        code = _CODE.search(text, prev, start)
        if code is not None:
            if pending:
                docs[code.start()] = pending
                pending = []
            last_code = _last_code(text, start)
        prev = m.end()
        if m.lastgroup == "str":
            if pending:
                docs[start] = pending
                pending = []
            last_code = start
        elif m.lastgroup == "doc":
            if last_code > text.rfind("\n", 0, start):
                line += text.count("\n", counted, start)
                counted = start
                col = start - text.rfind("\n", 0, start)
                diags.error(
                    "FBS002",
                    "a documentation comment should be on a line on its own",
                    Span(file, line, col, line, col + (prev - start)),
                )
            body = m.group()[3:].rstrip("\r")
            pending.append(body[1:] if body.startswith(" ") else body)
    if pending:
        code = _CODE.search(text, prev)
        if code is not None:
            docs[code.start()] = pending
    return docs


def _last_code(text: str, end: int) -> int:
    """Offset of the last non-blank character before ``end`` (one exists)."""
    i = end - 1
    while text[i] in _BLANKS:
        i -= 1
    return i


def _span(file: str, meta: Any) -> Span:
    if getattr(meta, "empty", True):
        return Span(file, 1, 1, 1, 1)
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(file: str, t: Token) -> Span:
    return Span(file, t.line or 1, t.column or 1, t.end_line or t.line or 1, t.end_column or 1)


def _string(tok: Token) -> str:
    return unescape(str(tok)[1:-1])


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    def __init__(self, file: str, docs: dict[int, list[str]]) -> None:
        super().__init__()
        self.file = file
        self.docs = docs

    def _doc(self, meta: Any) -> str:
        return "\n".join(self.docs.get(meta.start_pos, [])) if not meta.empty else ""

    def _sp(self, meta: Any) -> Span:
        return _span(self.file, meta)

    # --- directives
    def include(self, meta: Any, c: list[Any]) -> A.Directive:
        return A.Directive("include", _string(c[0]), self._sp(meta))

    def native_include(self, meta: Any, c: list[Any]) -> A.Directive:
        return A.Directive("native_include", _string(c[0]), self._sp(meta))

    def namespace_decl(self, meta: Any, c: list[Any]) -> A.Directive:
        return A.Directive("namespace", c[0].name if c else "", self._sp(meta))

    def attribute_decl(self, meta: Any, c: list[Any]) -> A.Directive:
        t = c[0]
        return A.Directive(
            "attribute", _string(t) if t.type == "STRING" else str(t), self._sp(meta)
        )

    def root_decl(self, meta: Any, c: list[Any]) -> A.Directive:
        return A.Directive("root_type", c[0].name, self._sp(meta))

    def file_ident(self, meta: Any, c: list[Any]) -> A.Directive:
        return A.Directive("file_identifier", _string(c[0]), self._sp(meta))

    def file_ext(self, meta: Any, c: list[Any]) -> A.Directive:
        return A.Directive("file_extension", _string(c[0]), self._sp(meta))

    # --- types
    def qualified(self, meta: Any, c: list[Token]) -> A.NamedType:
        return A.NamedType(".".join(str(t) for t in c), self._sp(meta))

    def vector_type(self, meta: Any, c: list[Any]) -> A.VectorTypeAst:
        return A.VectorTypeAst(c[0], self._sp(meta))

    def array_type(self, meta: Any, c: list[Any]) -> A.ArrayTypeAst:
        return A.ArrayTypeAst(c[0], str(c[1]), self._sp(meta))

    # --- metadata
    def metadata(self, meta: Any, c: list[A.AttrAst]) -> list[A.AttrAst]:
        return list(c)

    def attr(self, meta: Any, c: list[Token]) -> A.AttrAst:
        name = _string(c[0]) if c[0].type == "STRING" else str(c[0])
        value: str | None = None
        if len(c) > 1:
            v = c[1]
            value = _string(v) if v.type == "STRING" else str(v)
        return A.AttrAst(name, value, self._sp(meta))

    # --- defaults
    def default_number(self, meta: Any, c: list[Token]) -> A.DefaultAst:
        return A.DefaultAst("number", str(c[0]), self._sp(meta))

    def default_string(self, meta: Any, c: list[Token]) -> A.DefaultAst:
        return A.DefaultAst("string", _string(c[0]), self._sp(meta))

    def default_idents(self, meta: Any, c: list[Token]) -> A.DefaultAst:
        return A.DefaultAst("idents", [str(t) for t in c], self._sp(meta))

    def default_empty_vector(self, meta: Any, c: list[Token]) -> A.DefaultAst:
        return A.DefaultAst("empty", None, self._sp(meta))

    def default_func(self, meta: Any, c: list[Token]) -> A.DefaultAst:
        return A.DefaultAst("func", (str(c[0]), str(c[1])), self._sp(meta))

    # --- declarations
    def field(self, meta: Any, c: list[Any]) -> A.FieldAst:
        name, typ = str(c[0]), c[1]
        default = next((x for x in c[2:] if isinstance(x, A.DefaultAst)), None)
        attrs = next((x for x in c[2:] if isinstance(x, list)), [])
        return A.FieldAst(name, typ, default, attrs, self._doc(meta), self._sp(meta))

    def type_decl(self, meta: Any, c: list[Any]) -> A.TypeDeclAst:
        kind: Literal["table", "struct"] = "table" if str(c[0]) == "table" else "struct"
        attrs = next((x for x in c[2:] if isinstance(x, list)), [])
        fields = [x for x in c[2:] if isinstance(x, A.FieldAst)]
        return A.TypeDeclAst(kind, str(c[1]), attrs, fields, self._doc(meta), self._sp(meta))

    def enum_val(self, meta: Any, c: list[Any]) -> A.EnumValAst:
        value = next((str(x) for x in c[1:] if isinstance(x, Token)), None)
        attrs = next((x for x in c[1:] if isinstance(x, list)), [])
        return A.EnumValAst(str(c[0]), value, attrs, self._doc(meta), self._sp(meta))

    def enum_decl(self, meta: Any, c: list[Any]) -> A.EnumDeclAst:
        attrs = next((x for x in c[2:] if isinstance(x, list)), [])
        vals = [x for x in c[2:] if isinstance(x, A.EnumValAst)]
        return A.EnumDeclAst(str(c[0]), c[1], attrs, vals, self._doc(meta), self._sp(meta))

    def union_val(self, meta: Any, c: list[Any]) -> A.UnionValAst:
        first: A.NamedType = c[0]
        rest = c[1:]
        typ = (
            rest.pop(0)
            if rest and isinstance(rest[0], (A.NamedType, A.VectorTypeAst, A.ArrayTypeAst))
            else None
        )
        value = next((str(x) for x in rest if isinstance(x, Token)), None)
        attrs = next((x for x in rest if isinstance(x, list)), [])
        return A.UnionValAst(first.name, typ, value, attrs, self._doc(meta), self._sp(meta))

    def union_decl(self, meta: Any, c: list[Any]) -> A.UnionDeclAst:
        rest = c[1:]
        base = rest.pop(0) if rest and isinstance(rest[0], A.NamedType) else None
        attrs = next((x for x in rest if isinstance(x, list)), [])
        vals = [x for x in rest if isinstance(x, A.UnionValAst)]
        return A.UnionDeclAst(str(c[0]), base, attrs, vals, self._doc(meta), self._sp(meta))

    def rpc_method(self, meta: Any, c: list[Any]) -> A.RpcAst:
        attrs = c[3] if len(c) > 3 else []
        return A.RpcAst(str(c[0]), c[1], c[2], attrs, self._doc(meta), self._sp(meta))

    def rpc_decl(self, meta: Any, c: list[Any]) -> A.RpcDeclAst:
        attrs = next((x for x in c[1:] if isinstance(x, list)), [])
        methods = [x for x in c[1:] if isinstance(x, A.RpcAst)]
        return A.RpcDeclAst(str(c[0]), attrs, methods, self._doc(meta), self._sp(meta))

    # --- trailing JSON document (kept as plain Python values; numbers stay text)
    def json_object(self, meta: Any, c: list[Any]) -> dict[str, Any]:
        return dict(c)

    def json_root(self, meta: Any, c: list[Any]) -> tuple[str, tuple[Any, Span]]:
        return ("json", (c[0], self._sp(meta)))

    def json_pair(self, meta: Any, c: list[Any]) -> tuple[str, Any]:
        k = c[0]
        return (_string(k) if k.type == "STRING" else str(k), c[1])

    def json_array(self, meta: Any, c: list[Any]) -> list[Any]:
        return list(c)

    def json_string(self, meta: Any, c: list[Token]) -> str:
        return _string(c[0])

    def json_number(self, meta: Any, c: list[Token]) -> Any:
        return lark.Token("NUMBER", str(c[0]))

    def json_ident(self, meta: Any, c: list[Token]) -> Any:
        return lark.Token("IDENT", str(c[0]))

    def start(self, meta: Any, c: list[Any]) -> A.FileAst:
        f = A.FileAst(self.file)
        for x in c:
            if isinstance(x, tuple) and len(x) == 2 and x[0] == "json":
                f.json, f.json_span = x[1]
            elif isinstance(x, dict):
                f.json = x
            else:
                f.items.append(x)
        return f


_HUMAN = {
    "IDENT": "identifier",
    "STRING": "string literal",
    "NUMBER": "number",
    "TYPE_KW": "'table' or 'struct'",
    "FUNC": "function name",
    "$END": "end of file",
}


def _human(name: str) -> str:
    if name in _HUMAN:
        return _HUMAN[name]
    for t in _parser().terminals:
        if t.name == name:
            pat = t.pattern
            if isinstance(pat, lark.lexer.PatternStr):
                return f"'{pat.value}'"
    return name.lower()


def _expected(names: set[str]) -> str:
    items = sorted({_human(n) for n in names})
    if len(items) > 8:
        items = items[:8] + ["..."]
    return ", ".join(items)


def parse(text: str, file: str, diags: Diagnostics) -> A.FileAst | None:
    """Parse one file; on a syntax error append a located diagnostic and return None."""
    n_before = len(diags)
    docs = _scan_trivia(text, file, diags)
    if len(diags) > n_before:
        return None
    repaired: list[UnexpectedToken] = []

    def recover(e: UnexpectedToken) -> tuple[str, ...] | None:
        """Insert a ';' missing at the end of a line, or the '}' missing at the end of the
        file, and go on (the error is reported), so one slip hides nothing else."""
        if len(repaired) >= 20:
            return None
        expected = set(e.expected)
        fix: tuple[str, ...] | None = None
        if e.token.type == "$END":
            if "RBRACE" in expected:
                fix = ("RBRACE",)
        elif _missing_semicolon(e, text):
            fix = ("SEMICOLON",)
        if fix is not None:
            repaired.append(e)
        return fix

    planned: dict[int, str] = {}

    def run() -> Any:
        repaired.clear()
        return _grammar().parse(
            text,
            _ToAst(file, docs),
            max_depth=MAX_TREE_DEPTH,
            on_error=recover,
            repair_at_end=True,
            insert={at: ("RBRACE",) for at in planned},
            relex=True,
        )

    try:
        try:
            result = run()
        except UnexpectedToken as e:
            # A '}' is missing before a declaration that starts a line: parse again with it.
            closes = _missing_braces(text)
            if not closes or min(closes) > (e.token.start_pos or len(text)):
                raise
            planned = closes
            result = run()
    except TooDeep as e:
        e.report(diags, "FBS003", file, MAX_TREE_DEPTH)
        return None
    except UnexpectedInput as e:
        _report_repairs(file, text, planned, repaired, diags, failed=e)
        line, col = getattr(e, "line", 1) or 1, getattr(e, "column", 1) or 1
        if isinstance(e, UnexpectedToken):
            tok = e.token
            what = "end of file" if tok.type == "$END" else f"'{tok}'"
            width = max(len(str(tok)), 1) if tok.type != "$END" else 1
            if tok.type == "$END":
                lines = text.splitlines() or [""]
                line, col = len(lines), len(lines[-1]) + 1
            diags.error(
                "FBS001",
                f"syntax error: unexpected {what}",
                Span(file, line, col, line, col + width),
                help=[f"expected {_expected(set(e.expected))}"],
            )
        elif isinstance(e, UnexpectedCharacters):
            pos = e.pos_in_stream or 0
            ch = text[pos] if pos < len(text) else ""
            diags.error(
                "FBS001",
                f"syntax error: unexpected character {ch!r}",
                Span(file, line, col, line, col + 1),
                help=[f"expected {_expected(set(e.allowed))}"] if e.allowed else [],
            )
        elif isinstance(e, UnexpectedEOF):
            lines = text.splitlines() or [""]
            diags.error(
                "FBS001",
                "syntax error: unexpected end of file",
                Span(file, len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 2),
                help=[f"expected {_expected(set(e.expected))}"],
            )
        else:  # pragma: no cover - lark has no other subclasses
            diags.error("FBS001", f"syntax error: {e}", Span(file, line, col, line, col + 1))
        return None
    assert isinstance(result, A.FileAst)
    # A repaired file is still checked (its other errors are worth seeing), never generated.
    _report_repairs(file, text, planned, repaired, diags)
    return result


def _missing_semicolon(e: UnexpectedToken, text: str) -> bool:
    """A ';' could come before the unexpected token, and the token starts what follows one: a
    later line (a ';' forgotten at the end of a line) or, on the same line, a new field (a
    name followed by ':', as in ``a:int b:int;``)."""
    prev_end = getattr(e, "prev_end", -1)
    tok = e.token
    if tok.type == "$END" or prev_end < 0 or "SEMICOLON" not in e.expected:
        return False
    start = tok.start_pos or 0
    if "\n" in text[prev_end:start]:
        return True
    return tok.type == "IDENT" and _STARTS_FIELD.match(text, start + len(str(tok))) is not None


_STARTS_FIELD = re.compile(r"[ \t]*:")


# Code tokens outside comments and strings, for the brace plan.
_CODE_TOKENS = re.compile(
    r"""(?P<c>/\*[\s\S]*?\*/|//[^\n]*)|(?P<w>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'"""
    r"""|[A-Za-z_][A-Za-z0-9_]*|\S)"""
)
_DECL_KEYWORDS = frozenset({"table", "struct", "enum", "union", "rpc_service"})
_STMT_KEYWORDS = frozenset(
    {"namespace", "include", "native_include", "attribute", "root_type", "file_identifier",
     "file_extension"}
)  # fmt: skip


def _missing_braces(text: str) -> dict[int, str]:
    """Offsets after the last token before a declaration that starts a line inside an open
    block, where a '}' went missing -> the declaration's first word."""
    depth = 0
    closes: dict[int, str] = {}
    prev_end = -1
    toks = [m for m in _CODE_TOKENS.finditer(text) if m.lastgroup == "w"]
    for i, m in enumerate(toks):
        w = m.group()
        line_start = text.rfind("\n", 0, m.start()) + 1
        at_line_start = not text[line_start : m.start()].strip()  # first on its line
        nxt = toks[i + 1].group() if i + 1 < len(toks) else ""
        starts_decl = (w in _DECL_KEYWORDS and (nxt[:1].isalpha() or nxt[:1] == "_")) or (
            w in _STMT_KEYWORDS and nxt not in (":", ",", "=", "(")
        )
        if depth > 0 and at_line_start and starts_decl and prev_end >= 0:
            closes[prev_end] = w
            depth -= 1
        if w == "{":
            depth += 1
        elif w == "}" and depth:
            depth -= 1
        prev_end = m.end()
    return closes


def _report_repairs(
    file: str,
    text: str,
    planned: dict[int, str],
    repaired: list[UnexpectedToken],
    diags: Diagnostics,
    failed: UnexpectedInput | None = None,
) -> None:
    """One error per repair, located right after the token the missing one follows."""
    found: list[tuple[int, str, str, list[str]]] = []
    for at, word in planned.items():
        found.append(
            (at, "'}'", f"'{word}'", ["the declaration above is not closed; one starts here"])
        )
    for e in repaired:
        if e is failed:  # the repair did not help: reported as it is
            continue
        at = getattr(e, "prev_end", -1)
        if e.token.type == "$END":
            found.append((at, "'}'", "end of file", ["the last declaration is not closed"]))
        else:
            found.append((at, "';'", f"'{e.token}'", []))
    for at, want, before, help in sorted(found, key=lambda x: x[0]):
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        diags.error(
            "FBS001",
            f"syntax error: expected {want} before {before}",
            Span(file, line, col, line, col + 1),
            help=help,
        )


@functools.cache
def _grammar() -> Grammar:
    return Grammar(_parser(), _ToAst)
