"""``idlgen fmt`` for FlatBuffers ``.fbs`` files (the style: README "Formatting schemas")."""

from __future__ import annotations

import re

from .printer import KeepComment, Piece, Printer
from .tokens import Tok, lex

__all__ = ["format_fbs", "tokens"]

_NUMBER = (
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|[+-](?:nan|infinity|inf)(?![A-Za-z0-9_])"
)
_STRING = r""""[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"""
_PATTERN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<line>//[^\n]*)"
    r"|(?P<block>/\*[^*]*\*+(?:[^/*][^*]*\*+)*/)"
    rf"|(?P<code>{_STRING}|{_NUMBER}|[A-Za-z_][A-Za-z0-9_]*|[{{}}()\[\];,:=.])"
)
_FUNCS = frozenset({"rad", "deg", "sin", "cos", "tan", "asin", "acos", "atan"})
_LIST_KW = frozenset({"enum", "union"})
_STMT_KW = frozenset({"table", "struct", "rpc_service"})


def tokens(text: str) -> list[Tok]:
    return lex(text, _PATTERN)


class _Stmt:
    __slots__ = ("prev", "prev2", "first", "brackets", "calls")

    def __init__(self) -> None:
        self.prev: str | None = None
        self.prev2: str | None = None
        self.first = ""  # the statement's first token
        self.brackets: list[str] = []  # "meta" for a '(' of attributes, "call", "["
        self.calls = 0  # '(' that are calls: an rpc method's request, a default's function

    def space(self, x: str, in_rpc: bool) -> bool:
        p = self.prev
        if p is None or x in (",", ";", ")", "]") or p in ("(", "["):
            return False
        if x == "." or p == ".":
            return False
        meta = bool(self.brackets) and self.brackets[-1] == "meta"
        header = self.first in _LIST_KW and not self.brackets
        if x == ":":
            return header
        if p == ":":
            return meta or header
        if x == "(":
            return not self._call(in_rpc)
        if x == "[":
            return p != ":"
        return True

    def _call(self, in_rpc: bool) -> bool:
        if in_rpc and self.calls == 0 and not self.brackets:
            return True
        return self.prev in _FUNCS and self.prev2 == "="

    def push(self, x: str, in_rpc: bool) -> None:
        if x == "(":
            call = self._call(in_rpc)
            self.calls += call
            self.brackets.append("call" if call else "meta")
        elif x == "[":
            self.brackets.append("[")
        elif x in (")", "]") and self.brackets:
            self.brackets.pop()
        if self.prev is None:
            self.first = x
        self.prev2, self.prev = self.prev, x


def format_fbs(text: str) -> str:
    """``text`` (a syntactically valid ``.fbs`` file) in the canonical layout."""
    toks = tokens(text)
    pr = Printer(2, KeepComment(frozenset({"///"})))
    st = _Stmt()
    for i, t in enumerate(toks):
        if t.comment:
            if t.nl == 0 and i > 0:
                pr.trailing(t.text, t.col)
            else:
                pr.own_line(t.text, t.col, t.nl)
            continue
        x = t.text
        if not pr.cur:
            pr.start_line(t)
            st = _Stmt()
        if x == "}":
            pr.close()
            continue
        if x == "{" and not st.brackets:
            if not pr.cur and not pr.blocks:  # the JSON document after the schema
                pr.verbatim(text[t.start :])
                break
            pr.add(Piece("{", space=True))
            pr.open(
                "list" if st.first in _LIST_KW else "stmt",
                "rpc" if st.first == "rpc_service" else "",
            )
            continue
        in_rpc = len(pr.blocks) == 1 and pr.blocks[0].kind == "stmt" and _rpc(pr)
        breakable = st.prev == "," and len(st.brackets) == 1
        pr.add(Piece(x, space=st.space(x, in_rpc), breakable=breakable))
        st.push(x, in_rpc)
        in_list = bool(pr.blocks) and pr.blocks[-1].kind == "list"
        if not st.brackets and (x == ";" or (x == "," and in_list)):
            pr.flush()
    return pr.text()


def _rpc(pr: Printer) -> bool:
    return pr.blocks[-1].closer == "rpc"
