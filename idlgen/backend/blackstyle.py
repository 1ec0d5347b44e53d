"""black's layout for the few statement shapes generated modules have, without running black.

``layout(stmt, indent, line_length)`` returns the lines black would print for one logical line,
or None when the statement is outside what is modelled here (the caller then runs black). The
shapes: calls and tuple/list/dict literals nested in each other (the codec tables), ``from …
import …``, ``def`` headers, and short assignments whose only change is string quotes. The
rules are black's right-hand split (split at the last bracket; a call's arguments stay on one
line if they fit, a collection literal's elements never do), its delimiter split at commas
(one element per line, trailing comma added), magic trailing commas, and its string quote
preference. Tests compare the output with black's over ``generated/`` and the HDI corpus.
"""

from __future__ import annotations

import re
import string
from array import array
from bisect import bisect_left
from itertools import accumulate, chain

__all__ = ["layout", "normalize_quotes"]

_STR = r"""[bBrRuU]{0,2}(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
# Operators first (the most common tokens; none of the others starts like one), a string before
# a name (``b"x"`` is a bytes literal).
_ONE = rf"""->|[()\[\]{{}},.:=|\-]|[0-9][0-9A-Za-z_.]*|{_STR}|[A-Za-z_][A-Za-z_0-9]*"""
# A token (string, name, number, operator), and the whitespace before it.
_TOKEN = re.compile(rf"\s*({_ONE})")
_SPACE = re.compile(rf"(\s*)(?:{_ONE})")  # the same matches; the whitespace before each
_OPEN = "([{"
_CLOSE = ")]}"
_PAIR = {")": "(", "]": "[", "}": "{"}
_BRACKETS = frozenset("()[]{}")
_QUOTES = "'\""
# black prints no space after these (``""``: the first token) or before those.
_TIGHT_AFTER = frozenset(("", "(", "[", "{", "."))
_TIGHT_BEFORE = frozenset((")", "]", "}", ",", "."))
# First characters of names and strings: a bracket after one is a call or subscript.
_CALLER = frozenset(string.ascii_letters + "_" + _QUOTES)
_NAME_START = frozenset(string.ascii_letters + "_")


class _Unsupported(Exception):
    pass


def normalize_quotes(lit: str) -> str:
    """black's ``normalize_string_quotes`` for a one-line literal: double quotes unless that
    needs more escapes."""
    i = 0
    while lit[i] not in "'\"":
        i += 1
    prefix, body = lit[:i], lit[i:]
    if body[0] == '"':
        orig, new = '"', "'"
    else:
        orig, new = "'", '"'
    if body[:3] == orig * 3:
        return lit
    first = body.index(orig)
    inner = body[first + 1 : -1]
    if "f" in prefix.lower():
        raise _Unsupported  # f-strings: black has extra rules
    if "\\" not in inner:  # no escapes to trade (the common case)
        if orig == '"':
            return lit
        if '"' not in inner:
            return f'{prefix}"{inner}"'
    unescaped_new = re.compile(rf"(([^\\]|^)(\\\\)*){new}")
    escaped_new = re.compile(rf"([^\\]|^)\\((?:\\\\)*){new}")
    escaped_orig = re.compile(rf"([^\\]|^)\\((?:\\\\)*){orig}")
    if "r" in prefix.lower():
        if unescaped_new.search(inner):
            return lit
        new_body = inner
    else:
        new_body = _sub_twice(escaped_new, rf"\1\2{new}", inner)
        if inner != new_body:
            inner = new_body
            new_body = _sub_twice(escaped_orig, rf"\1\2{orig}", inner)
        new_body = _sub_twice(escaped_orig, rf"\1\2{orig}", inner)
        new_body = _sub_twice(unescaped_new, rf"\1\\{new}", new_body)
    new_escapes = new_body.count("\\")
    orig_escapes = inner.count("\\")
    if new_escapes > orig_escapes:
        return lit
    if new_escapes == orig_escapes and orig == '"':
        return lit
    return f"{prefix}{new}{new_body}{new}"


def _sub_twice(regex: re.Pattern[str], replacement: str, original: str) -> str:
    return regex.sub(replacement, regex.sub(replacement, original))


class _Line:
    """One tokenized logical line. The layout works on index ranges ``[lo, hi)`` of it, with an
    optional comma appended (black adds trailing commas): no token lists are copied, and a
    range's flat width comes from prefix sums, so laying out a statement is linear in its
    tokens rather than in tokens times nesting depth. Per-token work is done by comprehensions
    and regexes; only brackets go through a Python loop."""

    __slots__ = ("text", "match", "specials", "opens", "flat", "pos")

    def __init__(self, src: str) -> None:
        # Two scans rather than one list of (space, token) pairs: a 2 MB statement has 600k
        # tokens, and the pairs alone would take 40 MB.
        text: list[str] = _TOKEN.findall(src)
        spaces: list[str] = _SPACE.findall(src)
        # findall skips what no token matches: the matches must cover all but trailing space.
        if sum(map(len, text)) + sum(map(len, spaces)) != len(src.rstrip()):
            raise _Unsupported
        if "'" in src or "\\" in src:
            text = [normalize_quotes(t) if t[-1] in _QUOTES else t for t in text]
        strs = [i for i, t in enumerate(text) if t[-1] in _QUOTES]
        if any(b - a == 1 for a, b in zip(strs, strs[1:])):
            raise _Unsupported  # implicit concatenation
        # black's spacing: none inside brackets, before commas and around dots
        pieces = [
            t if p in _TIGHT_AFTER or t in _TIGHT_BEFORE else " " + t if w or p == "," else t
            for p, w, t in zip(chain(("",), text), spaces, text)
        ]
        self.flat = "".join(pieces)
        self.pos = array("q", accumulate(map(len, pieces), initial=0))
        del pieces
        n = len(text)
        match = array("q", [-1]) * n
        stack: list[int] = []
        opens: list[int] = []
        closes: list[int] = []
        for i in [i for i, t in enumerate(text) if t in _BRACKETS]:
            t = text[i]
            if t in _OPEN:
                stack.append(i)
                opens.append(i)
            else:
                if not stack or text[stack[-1]] != _PAIR[t]:
                    raise _Unsupported
                o = stack.pop()
                match[o] = i
                match[i] = o
                closes.append(i)
        if stack:
            raise _Unsupported
        self.text = text
        self.match = match
        self.opens = opens
        # Closing brackets after a comma, but for a one-tuple's: black keeps them exploded.
        self.specials = [
            i
            for i in closes
            if text[i - 1] == ","
            and not (text[i] == ")" and self.atom(match[i]) and self.commas(match[i]) == 1)
        ]

    def atom(self, o: int) -> bool:
        """The opening bracket ``o`` starts a literal (tuple, list, dict), not a call."""
        if o == 0:
            return True
        prev = self.text[o - 1]
        return not (prev[0] in _CALLER or prev in _CLOSE)

    def commas(self, o: int) -> int:
        """Commas at the top level inside the bracket pair opened at ``o``."""
        text = self.text
        return sum(text[i] == "," for i in self.top(o + 1, self.match[o]))

    def is_name(self, i: int) -> bool:
        t = self.text[i]
        return t[0] in _NAME_START and t[-1] not in _QUOTES

    # A piece starts with a space exactly when black puts one before its token (tokens never
    # start with whitespace); a range's first token goes without it.
    def width(self, lo: int, hi: int, comma: bool) -> int:
        if hi <= lo:
            return int(comma)
        a = self.pos[lo]
        return self.pos[hi] - a - (self.flat[a] == " ") + comma

    def joined(self, lo: int, hi: int, comma: bool) -> str:
        """``[lo, hi)`` on one line, as black spaces it."""
        if hi <= lo:
            return "," if comma else ""
        a = self.pos[lo]
        s = self.flat[a + (self.flat[a] == " ") : self.pos[hi]]
        return s + "," if comma else s

    def magic(self, lo: int, hi: int) -> bool:
        """A comma before a closing bracket that black keeps exploded (not a one-tuple's), in
        the balanced range ``[lo, hi)``."""
        specials = self.specials
        k = bisect_left(specials, lo)
        if k == len(specials) or specials[k] >= hi:
            return False
        i = specials[k]
        if self.text[i] == ")" and not self.atom(self.match[i]):
            raise _Unsupported  # a call with a trailing comma: not modelled
        return True

    def top(self, lo: int, hi: int) -> list[int]:
        """The indices of ``[lo, hi)`` at its top bracket level."""
        out: list[int] = []
        match = self.match
        i = lo
        while i < hi:
            out.append(i)
            m = match[i]
            i = m + 1 if m > i else i + 1
        return out

    def has_open(self, lo: int, hi: int) -> bool:
        opens = self.opens
        k = bisect_left(opens, lo)
        return k < len(opens) and opens[k] < hi


def _line(
    ln: _Line, lo: int, hi: int, comma: bool, depth: int, limit: int, body: bool, explode: bool
) -> list[str]:
    """black's ``transform_line`` for the expression ``[lo, hi)`` (+ ``,``) ``depth`` levels
    deep."""
    pad = "    " * depth
    if not explode and not ln.magic(lo, hi):
        if len(pad) + ln.width(lo, hi, comma) <= limit:
            return [pad + ln.joined(lo, hi, comma)]
    text = ln.text
    if body:
        top = ln.top(lo, hi)
        cuts = [i for i in top if text[i] == ","]
        if cuts or comma:
            # delimiter split at commas: one element per line, with a trailing comma
            parts = []
            start = lo
            for c in cuts:
                parts.append((start, c + 1))
                start = c + 1
            if start < hi:
                parts.append((start, hi))
            ends_comma = comma or text[hi - 1] == ","
            if len(parts) == 1 and ends_comma:
                return _rhs(ln, lo, hi, comma, depth, limit)  # nothing to split: on to rhs
            out: list[str] = []
            last = len(parts) - 1
            for n, (a, b) in enumerate(parts):
                extra = n == last and text[b - 1] != ","
                out.extend(_line(ln, a, b, extra, depth, limit, True, False))
            return out
    else:
        top = ln.top(lo, hi)
    if any(text[i] in ("|", "=", ":", "->", "-") for i in top) and not _is_entry(ln, top):
        raise _Unsupported  # other delimiters: black's rules are not modelled here
    return _rhs(ln, lo, hi, comma, depth, limit)


def _is_entry(ln: _Line, top: list[int]) -> bool:
    """``key: a.b(…)`` (a dict entry) or ``key=a.b(…)`` (a keyword argument): neither the
    ``:`` nor the ``=`` is one of black's delimiters, nor is a dot after a name, so black splits
    it at the call's brackets like the call alone."""
    return (
        len(top) >= 4
        and ln.text[top[1]] in (":", "=")
        and (ln.is_name(top[0]) or ln.text[top[0]][-1] in _QUOTES)
        and _is_call(ln, top[2:])
    )


def _rhs(ln: _Line, lo: int, hi: int, comma: bool, depth: int, limit: int) -> list[str]:
    """Split at the last bracket pair: head, body one level deeper, tail."""
    pad = "    " * depth
    if not ln.has_open(lo, hi):
        return [pad + ln.joined(lo, hi, comma)]  # nothing to split: black leaves it long
    text = ln.text
    end = hi - 1
    while end >= lo and text[end] not in _CLOSE:
        if text[end] != ",":
            raise _Unsupported
        end -= 1
    if end < lo:
        raise _Unsupported
    start = ln.match[end]
    if start == end - 1:
        raise _Unsupported  # empty brackets cannot be split
    head_text = pad + ln.joined(lo, start + 1, False)
    if len(head_text) > limit:
        raise _Unsupported
    # A literal's elements go one per line once it is split (a one-tuple's lone comma aside).
    explode = ln.atom(start) and ln.commas(start) > (1 if text[end - 1] == "," else 0)
    out = [head_text, *_line(ln, start + 1, end, False, depth + 1, limit, True, explode)]
    tail_text = pad + ln.joined(end, hi, comma)
    if len(tail_text) > limit:
        raise _Unsupported
    out.append(tail_text)
    return out


def _import(stmt: str, depth: int, limit: int) -> list[str] | None:
    head, sep, names = stmt.partition(" import ")
    if not sep or "(" in names or not head.startswith("from "):
        return None
    pad = "    " * depth
    items = [n.strip() for n in names.split(",") if n.strip()]
    if len(pad) + len(stmt) <= limit:
        return [pad + f"{head} import {', '.join(items)}"]
    lines = [pad + f"{head} import ("]
    lines += [f"{pad}    {n}," for n in items]
    lines.append(pad + ")")
    return lines if all(len(ln) <= limit for ln in lines) else None


def _def(stmt: str, depth: int, limit: int) -> list[str]:
    ln = _Line(stmt)
    n = len(ln.text)
    start = ln.text.index("(")
    end = ln.match[start]
    pad = "    " * depth
    if len(pad) + ln.width(0, n, False) <= limit and not ln.magic(0, n):
        return [pad + ln.joined(0, n, False)]
    head = pad + ln.joined(0, start + 1, False)
    tail = pad + ln.joined(end, n, False)
    if start + 1 == end or len(head) > limit or len(tail) > limit:
        raise _Unsupported
    explode = comma = False
    if ln.commas(start) == 0:
        comma = explode = True  # black adds a comma to a lone parameter
    elif ln.text[end - 1] == ",":
        explode = True
    return [head, *_line(ln, start + 1, end, comma, depth + 1, limit, True, explode), tail]


def _is_call(ln: _Line, top: list[int]) -> bool:
    if len(top) < 2 or ln.text[top[-1]] != "(" or not ln.is_name(top[0]):
        return False
    names = top[:-1]
    return (
        all(ln.is_name(t) if i % 2 == 0 else ln.text[t] == "." for i, t in enumerate(names))
        and len(names) % 2 == 1
    )


def layout(stmt: str, depth: int, line_length: int) -> list[str] | None:
    """black's lines for the logical line ``stmt`` (no indent) at ``depth``, or None."""
    if not stmt.isascii():
        return None  # black counts East Asian wide characters as two columns
    try:
        if stmt.startswith("from "):
            return _import(stmt, depth, line_length)
        if stmt.startswith("def ") and stmt.endswith(":"):
            lines = _def(stmt, depth, line_length)
        else:
            ln = _Line(stmt)
            n = len(ln.text)
            top = ln.top(0, n)
            if any(ln.text[i] in ("=", ":", "->", "|") for i in top):
                # an assignment: only a quote change or nothing at all
                if ln.magic(0, n):
                    return None
                lines = ["    " * depth + ln.joined(0, n, False)]
                if len(lines[0]) > line_length:
                    return None  # black wraps a long right-hand side in parentheses
            else:
                # a bare call: a dotted name, then one argument list ending the line
                if not _is_call(ln, top):
                    return None
                lines = _line(ln, 0, n, False, depth, line_length, False, False)
    except _Unsupported:
        return None
    if any(len(ln) > line_length and not _unsplittable(ln) for ln in lines):
        return None
    return lines


def _unsplittable(line: str) -> bool:
    """An element line without brackets (``"<IIII…",`` in an argument list): black cannot
    shorten it and leaves it long."""
    try:
        ln = _Line(line.strip())
        return not ln.has_open(0, len(ln.text))
    except _Unsupported:
        return False
