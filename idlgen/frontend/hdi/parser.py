"""Parse one HDI file into the raw syntax tree, or a located syntax diagnostic."""

from __future__ import annotations

import bisect
import functools
import re
from typing import Any

import lark
from lark import Token, Transformer, v_args

from ...bounds import MAX_TREE_DEPTH
from ...diagnostics import Diagnostics
from ...ir import Span
from ...resources import grammar_text
from ..lalr import Grammar, TooDeep
from ..larkparser import lalr
from . import ast as A

__all__ = ["parse"]

# Human names for terminals in "expected …" lists.
_TOKEN_NAMES = {
    "ID": "identifier",
    "NUMBER": "number",
    "ARRAY": '"[]"',
    "IN": '"in"',
    "OUT": '"out"',
    "$END": "end of file",
    "ADD": '"+", "-"',
    "MUL": '"*", "/", "%"',
    "SHIFT": '"<<", ">>"',
    "INCDEC": '"++", "--"',
}


def lark_spec() -> tuple[str, str, dict[str, Any]]:
    """(name, grammar, Lark options) of the parser whose tables ``lalr.Grammar`` runs; the
    options name what the driver reproduces."""
    options = {"lexer": "contextual", "propagate_positions": True, "maybe_placeholders": False}
    return "hdi", grammar_text("hdi.lark"), options


@functools.cache
def _parser() -> lark.Lark:
    name, grammar, options = lark_spec()
    return lalr(grammar, name, **options)


@functools.cache
def _terminal_names() -> dict[str, str]:
    names = dict(_TOKEN_NAMES)
    for t in _parser().terminals:
        if t.name not in names and isinstance(t.pattern, lark.lexer.PatternStr):
            names[t.name] = f'"{t.pattern.value}"'
    return names


# ``Span(...)`` without the named tuple's ``__new__`` frame (one per node and name)
_new_tuple = tuple.__new__


def _span(path: str, meta: Any) -> Span:
    return _new_tuple(Span, (path, meta.line, meta.column, meta.end_line, meta.end_column))


def _tok_span(path: str, tok: Token) -> Span:
    line = tok.line or 1
    col = tok.column or 1
    return _new_tuple(
        Span, (path, line, col, tok.end_line or line, tok.end_column or col + len(tok))
    )


# constructors that skip the frozen ``__init__`` (once per type and name of a file)
_Name = A.fast_constructor(A.Name, "text", "span")
_RawType = A.fast_constructor(A.RawType, "kind", "name", "span", "args", "prefix", "dims")
_Num = A.fast_constructor(A.Num, "text", "span")
_NameRef = A.fast_constructor(A.NameRef, "name", "span")


@functools.lru_cache(maxsize=4096)  # a package's versions repeat most of their comments
def _clean_doc(text: str) -> str:
    """``/** … */`` → the comment's text: markers and leading ``*`` removed, dedented."""
    body = text[3:-2]
    if body.startswith("<"):
        body = body[1:]
    # each line stripped, then a leading '*' or '* ' removed (so none ends blank)
    out = [
        s[2:] if s[:2] == "* " else s[1:] if s[:1] == "*" else s
        for s in map(str.strip, body.splitlines())
    ]
    i, j = 0, len(out)
    while i < j and not out[i].strip():
        i += 1
    while j > i and not out[j - 1].strip():
        j -= 1
    return "\n".join(out[i:j])


class _ToRaw(Transformer[Token, Any]):
    """Syntax → raw AST, one method per grammar rule, called by ``lalr.Grammar.parse`` as
    each rule is reduced. One shared instance (its ``path`` set per file)."""

    def __init__(self) -> None:
        super().__init__()
        self.path = ""

    def __default__(self, data: str, children: list[Any], meta: Any) -> Any:
        raise TypeError(f"grammar rule without a handler: {data}")

    def _name(self, tok: Token) -> A.Name:
        return _Name(str(tok), _tok_span(self.path, tok))

    # ---- file structure
    @v_args(meta=True)
    def start(self, meta: Any, children: list[Any]) -> A.RawFile:
        f = A.RawFile(self.path, children[0])
        for c in children[1:]:
            if isinstance(c, tuple) and c[0] == "import":
                f.imports.append(c[1])
            elif isinstance(c, tuple) and c[0] == "seq":
                f.sequenceables.append(c[1])
            else:
                f.decls.append(c)
        return f

    def package_decl(self, children: list[Any]) -> A.Name:
        return self._name(children[0])

    def import_decl(self, children: list[Any]) -> tuple[str, A.Name]:
        return ("import", self._name(children[0]))

    def seq_decl(self, children: list[Any]) -> tuple[str, A.Name]:
        return ("seq", self._name(children[1]))

    @v_args(meta=True)
    def type_decl(self, meta: Any, children: list[Any]) -> A.RawDecl:
        # ``?type_decl``: called only for a declaration with attributes, which its span covers
        decl: A.RawDecl = children[1]
        decl.attrs = children[0]
        decl.span = _span(self.path, meta)
        decl.start = meta.start_pos
        return decl

    def attrs(self, children: list[Any]) -> list[A.Name]:
        return list(children)

    def attr(self, children: list[Any]) -> A.Name:
        return self._name(children[0])

    # ---- interfaces
    @v_args(meta=True)
    def interface_decl(self, meta: Any, children: list[Any]) -> A.RawInterface:
        name = self._name(children[0])
        rest = children[1:]
        ext = rest.pop(0) if rest and isinstance(rest[0], A.Name) else None
        return A.RawInterface(
            name, ext, list(rest), [], _span(self.path, meta), meta.start_pos, meta.end_pos
        )

    def extends(self, children: list[Any]) -> A.Name:
        return self._name(children[0])

    @v_args(meta=True)
    def method(self, meta: Any, children: list[Any]) -> A.RawMethod:
        attrs: list[A.Name] = []
        if isinstance(children[0], list):
            attrs = children.pop(0)
        name = self._name(children[0])
        params = children[1] if len(children) > 1 else []
        return A.RawMethod(
            name, params, attrs, _span(self.path, meta), meta.start_pos, meta.end_pos
        )

    def params(self, children: list[Any]) -> list[A.RawParam]:
        return list(children)

    @v_args(meta=True)
    def param(self, meta: Any, children: list[Any]) -> A.RawParam:
        return A.RawParam(
            str(children[0]), children[1], self._name(children[2]), _span(self.path, meta)
        )

    # ---- enums
    @v_args(meta=True)
    def enum_decl(self, meta: Any, children: list[Any]) -> A.RawEnum:
        name = self._name(children[1])
        base = None
        members: list[A.RawEnumMember] = []
        for c in children[2:]:
            if isinstance(c, A.RawType):
                base = c
            elif isinstance(c, list):
                members = c
        return A.RawEnum(
            name, base, members, [], _span(self.path, meta), meta.start_pos, meta.end_pos
        )

    def enum_base(self, children: list[Any]) -> A.RawType:
        return children[0]  # type: ignore[no-any-return]

    def enum_members(self, children: list[Any]) -> list[A.RawEnumMember]:
        return list(children)

    @v_args(meta=True)
    def enum_member(self, meta: Any, children: list[Any]) -> A.RawEnumMember:
        value = children[1] if len(children) > 1 else None
        return A.RawEnumMember(
            self._name(children[0]), value, _span(self.path, meta), meta.start_pos, meta.end_pos
        )

    # ---- structs and unions
    @v_args(meta=True)
    def struct_decl(self, meta: Any, children: list[Any]) -> A.RawStruct:
        name = self._name(children[1])
        parent = children[2] if len(children) == 4 else None
        return A.RawStruct(
            name, parent, children[-1], [], _span(self.path, meta), meta.start_pos, meta.end_pos
        )

    def struct_parent(self, children: list[Any]) -> A.RawType:
        return children[0]  # type: ignore[no-any-return]

    @v_args(meta=True)
    def union_decl(self, meta: Any, children: list[Any]) -> A.RawUnion:
        return A.RawUnion(
            self._name(children[1]),
            children[2],
            [],
            _span(self.path, meta),
            meta.start_pos,
            meta.end_pos,
        )

    def members(self, children: list[Any]) -> list[A.RawMember]:
        return list(children)

    @v_args(meta=True)
    def member(self, meta: Any, children: list[Any]) -> A.RawMember:
        return A.RawMember(
            children[0],
            self._name(children[1]),
            _span(self.path, meta),
            meta.start_pos,
            meta.end_pos,
        )

    # ---- types
    @v_args(meta=True)
    def type(self, meta: Any, children: list[Any]) -> A.RawType:
        # ``?type``: a type without ``[]`` suffixes is its base type, with no node of its own
        base: A.RawType = children[0]
        dims = len(children) - 1
        return _RawType(
            base.kind, base.name, _span(self.path, meta), base.args, base.prefix, base.dims + dims
        )

    @v_args(meta=True)
    def prim_type(self, meta: Any, children: list[Any]) -> A.RawType:
        return _RawType("prim", str(children[0]), _span(self.path, meta), (), "", 0)

    @v_args(meta=True)
    def unsigned_type(self, meta: Any, children: list[Any]) -> A.RawType:
        return _RawType("unsigned", str(children[0]), _span(self.path, meta), (), "", 0)

    @v_args(meta=True)
    def list_type(self, meta: Any, children: list[Any]) -> A.RawType:
        return _RawType("list", "List", _span(self.path, meta), (children[0],), "", 0)

    @v_args(meta=True)
    def map_type(self, meta: Any, children: list[Any]) -> A.RawType:
        return _RawType("map", "Map", _span(self.path, meta), (children[0], children[1]), "", 0)

    @v_args(meta=True)
    def smq_type(self, meta: Any, children: list[Any]) -> A.RawType:
        return _RawType("smq", "SharedMemQueue", _span(self.path, meta), (children[0],), "", 0)

    @v_args(meta=True)
    def named_type(self, meta: Any, children: list[Any]) -> A.RawType:
        prefix = str(children[0]) if len(children) == 2 else ""
        return _RawType("named", str(children[-1]), _span(self.path, meta), (), prefix, 0)

    # ---- expressions
    @v_args(meta=True)
    def binop(self, meta: Any, children: list[Any]) -> A.Binary:
        return A.Binary(str(children[1]), children[0], children[2], _span(self.path, meta))

    @v_args(meta=True)
    def unop(self, meta: Any, children: list[Any]) -> A.Unary:
        return A.Unary(str(children[0]), children[1], _span(self.path, meta))

    @v_args(meta=True)
    def paren(self, meta: Any, children: list[Any]) -> A.Paren:
        return A.Paren(children[0], _span(self.path, meta))

    def num(self, children: list[Any]) -> A.Num:
        tok = children[0]
        return _Num(str(tok), _tok_span(self.path, tok))

    def ref(self, children: list[Any]) -> A.NameRef:
        tok = children[0]
        return _NameRef(str(tok), _tok_span(self.path, tok))


_DOC_GAP = re.compile(r"(?:\s|//[^\n]*|/\*(?!\*)[\s\S]*?\*/)*")
_POST_GAP = re.compile(r"[ \t]*[,;]?[ \t]*")


def _attach_docs(raw: A.RawFile, docs: list[Token], text: str) -> None:
    """Give each declaration the ``/** */`` right before it (or ``/**< */`` right after it)."""
    _attach_doc_spans(raw, [(d.start_pos or 0, d.end_pos or 0) for d in docs], text)


def _attach_doc_spans(raw: A.RawFile, docs: list[tuple[int, int]], text: str) -> None:
    """``_attach_docs`` for doc comments given as (start, end) offsets into ``text``."""
    starts_with = text.startswith
    pre = [d for d in docs if not starts_with("/**<", d[0])]
    post = [d for d in docs if starts_with("/**<", d[0])]
    pre_ends = [e for _, e in pre]
    post_starts = [b for b, _ in post]

    def doc_for(start: int, end: int) -> str:
        i = bisect.bisect_right(pre_ends, start) - 1
        if i >= 0:
            gap_start = pre_ends[i]
            m = _DOC_GAP.match(text, gap_start)
            if m is not None and m.end() >= start:
                return _clean_doc(text[pre[i][0] : gap_start])
        j = bisect.bisect_left(post_starts, end)
        if j < len(post):
            m = _POST_GAP.match(text, end)
            if m is not None and m.end() == post_starts[j]:
                return _clean_doc(text[post_starts[j] : post[j][1]])
        return ""

    for d in raw.decls:
        d.doc = doc_for(d.start, d.end)
        if isinstance(d, A.RawEnum):
            for em in d.members:
                em.doc = doc_for(em.start, em.end)
        elif isinstance(d, A.RawInterface):
            for m in d.methods:
                m.doc = doc_for(m.start, m.end)
        else:
            for mem in d.members:
                mem.doc = doc_for(mem.start, mem.end)


_HEX_BEFORE = re.compile(r"0[xX][0-9a-fA-F]+$")


def _unexpected_token(
    path: str, text: str, e: lark.exceptions.UnexpectedToken, diags: Diagnostics
) -> None:
    """Turn a parser error into one diagnostic, with a hint for the common mistakes."""
    tok = e.token
    expected = set(e.expected)
    if tok.type == "$END":
        lines = text.split("\n")
        span = Span(path, len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 2)
    else:
        span = _tok_span(path, tok)
    start = tok.start_pos or 0
    if expected == {"PACKAGE"}:
        diags.error("HDI002", f"expected 'package' before {_describe(tok)}", span)
        return
    missing = _missing(e, text)
    if tok.type == "$END" and "RBRACE" in expected:
        diags.error(
            "HDI001",
            "expected '}' at end of file",
            _after_previous(path, text, getattr(e, "prev_end", -1), len(text)),
            help=["the last declaration is not closed"],
        )
        return
    if missing is not None or (len(expected) == 1 and tok.type != "$END"):
        # A missing token (a ';' at the end of a line, a ')'): point just after the previous
        # token, where it belongs, not at the next one (maybe lines and comments further on).
        want = _terminal_names().get(missing or next(iter(expected)), "?").replace('"', "'")
        diags.error(
            "HDI001",
            f"expected {want} before {_describe(tok)}",
            _after_previous(path, text, getattr(e, "prev_end", -1), start),
        )
        return
    help = [f"expected one of: {_expected(expected)}"]
    if tok.type == "ID" and _HEX_BEFORE.search(text, 0, start):
        help = ["hexadecimal literals take no suffix (hdi-gen reads '0x10u' as '0x10' then 'u')"]
    elif expected == {"RPAR", "LSQB"}:
        help = ["every parameter starts with its direction: '[in]' or '[out]'"]
    diags.error("HDI001", f"unexpected {_describe(tok)}", span, help=help)


def _after_previous(path: str, text: str, prev_end: int, pos: int) -> Span:
    """A one-column span right after the previous token (it ends at ``prev_end``; unknown:
    the last non-blank character before ``pos``)."""
    p = prev_end
    if p < 0:
        p = pos
        while p > 0 and text[p - 1].isspace():
            p -= 1
    line = text.count("\n", 0, p) + 1
    col = p - (text.rfind("\n", 0, p) + 1) + 1
    return Span(path, line, col, line, col + 1)


def _expected(expected: set[str]) -> str:
    names = _terminal_names()
    words = sorted({names.get(e, e) for e in expected})
    if len(words) > 8:
        words = words[:8] + ["…"]
    return ", ".join(words)


def _describe(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    return f"'{tok}'"


def parse(path: str, text: str, diags: Diagnostics) -> A.RawFile | None:
    """Parse ``text`` (the contents of ``path``); on a syntax error report it and return None."""
    docs: list[tuple[int, int]] = []  # the doc comments' offsets
    _TRANSFORMER.path = path
    repaired: list[lark.exceptions.UnexpectedToken] = []

    def recover(e: lark.exceptions.UnexpectedToken) -> str | tuple[str, ...] | None:
        """Insert a missing ';' or ')' (or the '}' at the end of the file) and go on, so one
        slip does not hide later errors nor leave the file's declarations unknown."""
        if len(repaired) >= 20:
            return None
        expected = set(e.expected)
        fix: str | tuple[str, ...] | None = None
        if e.token.type == "$END":
            if "RBRACE" in expected:
                fix = _close_at_end(text)
        elif _missing(e, text) is not None:
            fix = "SEMICOLON"
        elif len(expected) == 1 and expected <= _REPAIRABLE:
            fix = next(iter(expected))
        if fix is not None:
            repaired.append(e)
        return fix

    planned: dict[int, tuple[tuple[str, ...], str]] = {}

    def run() -> A.RawFile:
        docs.clear()
        repaired.clear()
        return _grammar().parse(  # type: ignore[no-any-return]
            text,
            _TRANSFORMER,
            on_error=recover,
            collect_offsets=(_DOC_TERMINALS, docs.append),
            max_depth=MAX_TREE_DEPTH,
            repair_at_end=True,
            insert={at: kinds for at, (kinds, _) in planned.items()},
            relex=True,
        )

    try:
        try:
            raw = run()
        except lark.exceptions.UnexpectedToken as e:
            # A '}' is missing before a declaration that starts a line: parse again with it.
            closes = _missing_braces(text)
            if not closes or min(closes) > (e.token.start_pos or len(text)):
                raise
            planned = closes
            raw = run()
    except TooDeep as e:
        e.report(diags, "HDI005", path, MAX_TREE_DEPTH)
        return None
    except lark.exceptions.UnexpectedToken as e:
        _report_closes(path, text, planned, diags)
        if repaired and repaired[-1] is e:  # the repair itself failed: reported once
            repaired.pop()
        for r in repaired:
            _unexpected_token(path, text, r, diags)
        _unexpected_token(path, text, e, diags)
        return None
    except lark.exceptions.UnexpectedCharacters as e:
        span = Span(path, e.line, e.column, e.line, e.column + 1)
        pos = e.pos_in_stream or 0
        if text.startswith("/*", pos):
            diags.error("HDI003", "unterminated comment", span)
        else:
            ch = text[pos]
            shown = repr(ch) if not ch.isprintable() else f"'{ch}'"
            diags.error("HDI003", f"unexpected character {shown}", span)
        return None
    _report_closes(path, text, planned, diags)
    for r in repaired:
        _unexpected_token(path, text, r, diags)
    _attach_doc_spans(raw, docs, text)
    # A repaired file is still checked (its other errors are worth seeing), never generated.
    return raw


def _missing(e: lark.exceptions.UnexpectedToken, text: str) -> str | None:
    """``SEMICOLON`` when a ';' could come before the unexpected token and the token starts
    what follows one: a later line (a ';' forgotten at the end of a line), or, on the same
    line, a new member or parameter list (a type keyword, or a name followed by a name, '<',
    '[' or '(': ``int a int b;``). Anything else stays a plain syntax error."""
    prev_end = getattr(e, "prev_end", -1)
    tok = e.token
    if tok.type == "$END" or prev_end < 0 or "SEMICOLON" not in e.expected:
        return None
    start = tok.start_pos or 0
    if "\n" in text[prev_end:start]:
        return "SEMICOLON"
    if tok.type in _TYPE_KEYWORDS:
        return "SEMICOLON"
    if tok.type == "ID" and _STARTS_MEMBER.match(text, start + len(str(tok))):
        return "SEMICOLON"
    return None


# Terminals that begin a type: a member or statement can start with them.
_TYPE_KEYWORDS = frozenset(
    "BOOLEAN BYTE SHORT INT LONG FLOAT DOUBLE STRING_KW FILEDESCRIPTOR ASHMEM NATIVEBUFFER"
    " POINTER CHAR SEQ_KW ENUM_KW STRUCT_KW UNION_KW LIST MAP UNSIGNED".split()
)
# After a name: another name (a type then its member), '<' or '[' (a generic or array type)
# or '(' (a method): the name begins a new member.
_STARTS_MEMBER = re.compile(r"[ \t]*(?:[A-Za-z_]|<|\[|\()")


# Code tokens outside comments, for the brace plan (HDI has no strings).
_CODE_TOKENS = re.compile(r"(?P<c>/\*[\s\S]*?\*/|//[^\n]*)|(?P<w>[A-Za-z_][A-Za-z0-9_.]*|\S)")
_DECL_KEYWORDS = frozenset({"struct", "enum", "union", "interface"})
# After struct/enum/union: a name, then '{' or ':' (a declaration, not a member's type).
_DECL_HEAD = re.compile(r"\s+[A-Za-z_][A-Za-z0-9_]*\s*[{:]")
# '[attrs]' then a declaration keyword (a method's '[oneway]' is not a declaration)
_ATTRS_DECL = re.compile(r"[^\]\n]*\][ \t]*(?:struct|enum|union|interface)\b")


def _blocks(text: str) -> tuple[list[tuple[str, int]], dict[int, tuple[tuple[str, ...], str]]]:
    """Scan ``text``'s braces: the blocks still open at the end (keyword, offset of '{'), and
    the '}' missing before a declaration that starts a line inside an open block: the offset
    after the last token before that declaration -> (terminals to insert, keyword of the
    unclosed block)."""
    open_: list[tuple[str, int]] = []
    closes: dict[int, tuple[tuple[str, ...], str]] = {}
    last_kw = ""
    prev_end = -1
    for m in _CODE_TOKENS.finditer(text):
        if m.lastgroup == "c":
            continue
        w = m.group()
        line_start = text.rfind("\n", 0, m.start()) + 1
        at_line_start = m.start() == line_start
        first_on_line = not text[line_start : m.start()].strip()
        starts_decl = w in _DECL_KEYWORDS or (w == "[" and bool(_ATTRS_DECL.match(text, m.end())))
        # Indented, 'struct Point p;' is a member; 'struct B {' (or 'enum E : int {') is not.
        head = w == "interface" or bool(_DECL_HEAD.match(text, m.end())) or w == "["
        if open_ and starts_decl and prev_end >= 0 and (at_line_start or first_on_line and head):
            # a declaration starting a line inside a block: its '}' (and ';') went missing
            kw = open_.pop()[0]
            closes[prev_end] = (("RBRACE",) if kw == "interface" else ("RBRACE", "SEMICOLON"), kw)
            last_kw = ""
        if w in _DECL_KEYWORDS and not open_:
            last_kw = w
        if w == "{":
            open_.append((last_kw, m.start()))
        elif w == "}" and open_:
            open_.pop()
        prev_end = m.end()
    return open_, closes


def _missing_braces(text: str) -> dict[int, tuple[tuple[str, ...], str]]:
    return _blocks(text)[1]


def _close_at_end(text: str) -> tuple[str, ...] | None:
    """What closes the block open at the end of the file: '}' (and ';' after a struct, enum
    or union)."""
    open_, _ = _blocks(text)
    if not open_:
        return ("RBRACE",)
    return ("RBRACE",) if open_[-1][0] == "interface" else ("RBRACE", "SEMICOLON")


def _report_closes(
    path: str, text: str, planned: dict[int, tuple[tuple[str, ...], str]], diags: Diagnostics
) -> None:
    for at, (_, kw) in sorted(planned.items()):
        nxt = _CODE_TOKENS.search(text, at)
        while nxt is not None and nxt.lastgroup == "c":
            nxt = _CODE_TOKENS.search(text, nxt.end())
        before = f"'{nxt.group()}'" if nxt is not None else "end of file"
        what = f"the {kw}" if kw else "the block"
        diags.error(
            "HDI001",
            f"expected '}}' before {before}",
            _after_previous(path, text, at, at),
            help=[f"{what} above is not closed; a declaration starts on the next line"],
        )


# Tokens the parser may insert to recover from a syntax error (the error is still reported).
_REPAIRABLE = frozenset({"SEMICOLON", "RPAR"})
_DOC_TERMINALS = frozenset({"DOC_COMMENT"})
_TRANSFORMER = _ToRaw()


# Kept terminals ``_ToRaw`` reads only as text (keywords, operators, ``[]``): plain ``str``.
_TEXT_TERMINALS = frozenset(
    "BOOLEAN BYTE SHORT INT LONG FLOAT DOUBLE STRING_KW FILEDESCRIPTOR ASHMEM NATIVEBUFFER"
    " POINTER CHAR IN OUT ENUM_KW STRUCT_KW UNION_KW SEQ_KW ARRAY OR XOR AND SHIFT ADD MUL"
    " TILDE INCDEC".split()
)


@functools.cache
def _grammar() -> Grammar:
    return Grammar(_parser(), _ToRaw, _TEXT_TERMINALS)
