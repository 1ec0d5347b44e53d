"""The layout engine both languages share: statements and blocks from the token stream,
comments kept where they were, long lines filled at their top-level commas.

A language (``hdi``, ``fbs``) says how wide an indent is, which blocks hold comma-separated
items (enums, unions) and which hold ``;``-terminated ones, and where spaces go between two
code tokens. Every decision depends only on the tokens and on whether each comment stood on its
own line or after code (and, for a blank line between statements, whether one was there), never
on the old layout otherwise: that is what makes a second run change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tokens import Tok

__all__ = ["LINE_LIMIT", "CONTINUATION", "Piece", "Printer"]

#: Lines longer than this are wrapped at the commas of their outermost bracket.
LINE_LIMIT = 100
#: Extra indentation of a wrapped statement's continuation lines.
CONTINUATION = 4


@dataclass(slots=True)
class Piece:
    """A token of the statement being built, with what goes before it."""

    text: str
    space: bool = False  # a space before it (when on the same line as the previous piece)
    breakable: bool = False  # the line may break before it (after a top-level comma)
    forced: bool = False  # the line must break before it (after a // comment)
    comment: bool = False
    col: int = 0  # a multi-line comment: its column in the source


@dataclass(slots=True)
class Block:
    kind: str  # "list" (comma-separated items) or "stmt" (';'-terminated items)
    closer: str  # what follows its '}': "semi" (a ';'), "drop" (drop a ';'), "" (nothing)


@dataclass
class Printer:
    """Feeds tokens in order (:meth:`code`, :meth:`comment`), then :meth:`text`."""

    unit: int
    keep_comment: "KeepComment"
    out: list[str] = field(default_factory=list)
    cur: list[Piece] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    # the last output line can take more code: a '}' waiting for its ';'
    close_open: bool = False
    just_opened: bool = False  # no line since the last '{' (no blank line may follow it)
    bare_open: bool = False  # the last output line ends with that '{' (an empty block: '{}')
    force_blank: bool = False  # a blank line before the next line (after a top-level block)
    blank: bool = False  # the next line starts a statement that had a blank line before it
    break_next: bool = False  # the next piece starts a new line (after a // comment)

    @property
    def depth(self) -> int:
        return len(self.blocks)

    # ---- lines
    def _emit(self, line: str, strip: bool = True) -> None:
        if self.out and (self.blank or self.force_blank) and not self.just_opened:
            self.out.append("")
        self.blank = self.force_blank = False
        self.just_opened = self.bare_open = False
        self.close_open = False
        self.out.append(line.rstrip() if strip else line)

    def start_line(self, tok: Tok) -> None:
        """``tok`` begins a new line between statements: remember a blank line before it."""
        if tok.nl >= 2:
            self.blank = True

    def add(self, piece: Piece) -> None:
        if self.break_next:
            piece.forced = True
            self.break_next = False
        self.cur.append(piece)

    def flush(self) -> None:
        """Lay out the statement built so far."""
        if not self.cur:
            return
        pieces, self.cur = self.cur, []
        self.break_next = False
        indent = " " * (self.unit * self.depth)
        cont = indent + " " * CONTINUATION
        # segments: runs of pieces between the places the line may or must break
        segments: list[list[Piece]] = []
        for p in pieces:
            if not segments or p.breakable or p.forced:
                segments.append([p])
            else:
                segments[-1].append(p)
        lines: list[str] = []
        line = indent
        for i, seg in enumerate(segments):
            head = seg[0]
            if i > 0:
                width = sum(_width(p) + (p.space and j > 0) for j, p in enumerate(seg))
                if head.forced or len(line) + head.space + width > LINE_LIMIT:
                    lines.append(line)
                    line = cont
                elif head.space:
                    line += " "
            for j, p in enumerate(seg):
                if j > 0 and p.space:
                    line += " "
                if p.comment:
                    first, *rest = self.keep_comment(p.text, p.col, len(line)).split("\n")
                    if rest:
                        lines.append(line + first)
                        lines.extend(rest[:-1])
                        line = rest[-1]
                    else:
                        line += first
                else:
                    line += p.text
        lines.append(line)
        for ln in lines:
            self._emit(ln, strip=False)

    # ---- comments
    def trailing(self, text: str, col: int) -> None:
        """A comment that followed code on its line: it stays after that code."""
        if self.cur:
            # on the line of what it followed, even a comment on a line of its own: a break
            # owed after that comment is owed after this one
            owed, self.break_next = self.break_next, False
            self.add(Piece(text, space=True, col=col, comment=True))
            self.break_next = owed or text.startswith("//")
            return
        if not self.out or not self.out[-1]:
            self.own_line(text, col, 0)
            return
        last = self.out[-1] + " "
        first, *rest = self.keep_comment(text, col, len(last)).split("\n")
        self.out[-1] = last + first
        self.out.extend(rest)
        self.bare_open = False
        if text.startswith("//"):
            self.close_open = False

    def own_line(self, text: str, col: int, nl: int) -> None:
        """A comment on a line of its own."""
        if self.cur:  # inside a statement: on a continuation line of its own
            self.add(Piece(text, forced=True, col=col, comment=True))
            self.break_next = True
            return
        if nl >= 2:
            self.blank = True
        indent = self.unit * self.depth
        lines = self.keep_comment(text, col, indent).split("\n")
        self._emit(" " * indent + lines[0], strip=False)
        self.out.extend(lines[1:])

    # ---- blocks
    def open(self, kind: str, closer: str) -> None:
        self.flush()
        self.blocks.append(Block(kind, closer))
        self.just_opened = self.bare_open = True

    def close(self) -> Block:
        """The ``}`` of the innermost block: its own line (or ``{}`` when the block is empty)."""
        self.flush()
        block = self.blocks.pop()
        if self.bare_open and self.out:
            self.out[-1] += "}"
            self.just_opened = self.bare_open = False
        else:
            self.blank = False
            self._emit(" " * (self.unit * self.depth) + "}")
        self.close_open = True
        if block.closer != "semi" and not self.blocks:
            self.force_blank = True
        return block

    def semicolon_after_close(self) -> None:
        """The ``;`` after a ``}``: on the ``}``'s line unless a comment came between."""
        if self.close_open:
            self.out[-1] += ";"
        else:
            self._emit(" " * (self.unit * self.depth) + ";")
        self.close_open = False
        if not self.blocks:
            self.force_blank = True

    def verbatim(self, text: str) -> None:
        """Text kept as written (a FlatBuffers schema's trailing JSON document)."""
        self.flush()
        lines = text.rstrip().split("\n")
        self._emit(" " * (self.unit * self.depth) + lines[0])
        self.out.extend(ln.rstrip() for ln in lines[1:])

    def text(self) -> str:
        self.flush()
        while self.out and not self.out[-1]:
            self.out.pop()
        return "\n".join(self.out) + "\n" if self.out else ""


def _width(p: Piece) -> int:
    return len(p.text.split("\n", 1)[0])


class KeepComment:
    """Re-indents a comment's continuation lines by as much as its first line moved and drops
    trailing blanks (``raw``: a comment whose text is kept byte for byte)."""

    def __init__(self, raw: "frozenset[str] | None" = None) -> None:
        self.raw_prefixes = tuple(raw or ())

    def __call__(self, text: str, col: int, new_col: int) -> str:
        if self.raw_prefixes and text.startswith(self.raw_prefixes):
            return text.rstrip("\r")
        lines = text.split("\n")
        if len(lines) == 1:
            return text.rstrip()
        delta = new_col - col
        out = [lines[0].rstrip()]
        for ln in lines[1:]:
            ln = ln.rstrip()
            if delta < 0:
                strip = len(ln) - len(ln.lstrip())
                ln = ln[min(strip, -delta) :]
            elif delta > 0 and ln:
                ln = " " * delta + ln
            out.append(ln)
        return "\n".join(out)
