"""The token stream ``fmt`` works on: the code tokens of a schema plus every comment between
them, each with how many line breaks precede it (trivia the parser's lexer throws away)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Tok", "lex", "FormatError"]


class FormatError(Exception):
    """The text cannot be formatted (a character no token starts with); ``pos`` is its offset."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


@dataclass(frozen=True, slots=True)
class Tok:
    """One token. ``kind``: ``code``, ``line`` (``//`` comment), ``block`` (``/* */``, any
    kind). ``nl``: line breaks between the previous token and this one (the first token counts
    from the start of the file). ``col``: its 0-based column in the source."""

    kind: str
    text: str
    start: int
    nl: int
    col: int

    @property
    def comment(self) -> bool:
        return self.kind != "code"


def lex(text: str, pattern: re.Pattern[str]) -> list[Tok]:
    """Split ``text`` with ``pattern``, whose named groups are ``ws``, ``line``, ``block`` and
    ``code`` (tried in the pattern's order)."""
    out: list[Tok] = []
    pos, n = 0, len(text)
    nl = 0
    line_start = 0
    match = pattern.match
    while pos < n:
        m = match(text, pos)
        if m is None or m.end() == pos:
            raise FormatError(f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup or "code"
        s = m.group()
        if kind == "ws":
            k = s.count("\n")
            if k:
                nl += k
                line_start = pos + s.rfind("\n") + 1
        else:
            out.append(Tok(kind, s, pos, nl, pos - line_start))
            nl = 0
            k = s.count("\n")
            if k:
                line_start = pos + s.rfind("\n") + 1
                # a multi-line token's own line breaks are not "before" the next token
        pos = m.end()
    return out
