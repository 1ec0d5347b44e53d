"""``idlgen fmt`` for OpenHarmony HDI ``.idl`` files (the style: README "Formatting schemas")."""

from __future__ import annotations

import re

from .printer import KeepComment, Piece, Printer
from .tokens import Tok, lex

__all__ = ["format_hdi", "tokens"]

_PATTERN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<block>/\*[\s\S]*?\*/)
    |(?P<line>//[^\n]*)
    |(?P<code>[A-Za-z_][A-Za-z0-9_.]*|0[xX][0-9a-fA-F]+|[0-9][A-Za-z0-9_.]*
        |<<|>>|\+\+|--|[{}()\[\];,:=<>|^&+\-*/%~])""",
    re.VERBOSE,
)
_OPS = frozenset("| ^ & << >> + - * / % ~ ++ --".split())
_DECL_KW = frozenset({"enum", "struct", "union", "interface"})


def tokens(text: str) -> list[Tok]:
    return lex(text, _PATTERN)


class _Stmt:
    """What the statement being built has seen so far."""

    __slots__ = ("prev", "kw", "brackets", "expr", "unary")

    def __init__(self) -> None:
        self.prev: str | None = None
        self.kw = ""  # the declaration keyword (enum, struct, union, interface), if any
        self.brackets: list[str] = []
        self.expr = False  # inside an enum member's value
        self.unary = False  # the previous token is a unary operator

    def space(self, x: str) -> bool:
        p = self.prev
        if p is None or x in (",", ";", ")", "]") or p in ("(", "["):
            return False
        if self.expr:
            if self.unary:  # '- -x' must not become the '--' C++ reads as a decrement
                return p in ("+", "-") and x[0] == p
            return True
        if x == "(":
            return False  # a method's name and its parameters
        if x == "[":
            return not (p[0].isalnum() or p[0] == "_" or p in ("]", ">", ">>"))
        if x in ("<", ">", ">>") or p == "<":
            return False
        return True

    def push(self, x: str, in_list: bool) -> None:
        if self.expr and x in _OPS:
            self.unary = x == "~" or self.prev in ("=", "(") or (self.prev in _OPS)
        else:
            self.unary = False
        if x in ("(", "[", "<"):
            self.brackets.append(x)
        elif x in (")", "]", ">") and self.brackets:
            self.brackets.pop()
        elif x == ">>" and not self.expr:
            del self.brackets[-2:]
        elif x == "=" and in_list and not self.brackets:
            self.expr = True
        elif x in _DECL_KW and not self.kw and not self.brackets:
            self.kw = x
        self.prev = x


def format_hdi(text: str) -> str:
    """``text`` (a syntactically valid ``.idl`` file) in the canonical layout."""
    toks = tokens(text)
    pr = Printer(4, KeepComment())
    st = _Stmt()
    after_close: str | None = None  # the closer of the block whose '}' came last
    breaks = 0  # line breaks since the last code token
    commented = False  # a comment came after the last '}'
    separator_on_new_line = False  # the last code token is a ',' or ';' that began a line
    for i, t in enumerate(toks):
        breaks += t.nl
        if t.comment:
            commented = True
            breaks += t.text.count("\n")
            # '/**<' documents the member before it only when nothing but blanks and one ','
            # or ';' stand between them on one line: a doc after a separator that began its
            # line documents nothing, and must not come to, so it goes on a line of its own.
            stray = separator_on_new_line and t.text.startswith("/**<")
            if t.nl == 0 and i > 0 and not stray:
                pr.trailing(t.text, t.col)
            else:
                pr.own_line(t.text, t.col, t.nl)
            continue
        block = pr.blocks[-1] if pr.blocks else None
        separator_on_new_line = breaks > 0 and (
            # the ',' after an enum member, the ';' after a struct or union member (a method's
            # ';' and the one after '}' belong to what they end: a doc after them still does)
            (t.text == "," and block is not None and block.kind == "list")
            or (t.text == ";" and block is not None and block.closer == "semi" and bool(pr.cur))
        )
        breaks = 0
        x = t.text
        if after_close is not None:
            closer, after_close = after_close, None
            if x == ";":
                # An interface's '}' takes no ';', unless a comment stands between them (a
                # '/**<' there would come to document the interface).
                if closer == "semi" or commented:
                    pr.semicolon_after_close()
                continue
        if not pr.cur:
            pr.start_line(t)
            st = _Stmt()
        if x == "}":
            after_close = pr.close().closer
            commented = False
            continue
        if x == "{" and not st.brackets:
            pr.add(Piece("{", space=True))
            pr.open(
                "list" if st.kw == "enum" else "stmt", "drop" if st.kw == "interface" else "semi"
            )
            continue
        in_list = bool(pr.blocks) and pr.blocks[-1].kind == "list"
        breakable = st.prev == "," and len(st.brackets) == 1
        pr.add(Piece(x, space=st.space(x), breakable=breakable))
        st.push(x, in_list)
        if not st.brackets and (x == ";" or (x == "," and in_list)):
            pr.flush()
    return pr.text()
