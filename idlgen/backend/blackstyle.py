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
from dataclasses import dataclass

__all__ = ["layout", "normalize_quotes"]

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<str>[bBrRuU]{0,2}(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))
    |(?P<name>[A-Za-z_][A-Za-z_0-9]*)
    |(?P<num>[0-9][0-9A-Za-z_.]*)
    |(?P<op>->|[()\[\]{},.:=|\-])
    """,
    re.VERBOSE,
)
_OPEN = "([{"
_CLOSE = ")]}"


class _Unsupported(Exception):
    pass


@dataclass(slots=True)
class _Tok:
    text: str
    space: bool  # whitespace before it in the emitted text
    kind: str
    match: int = -1  # index of the matching bracket
    atom: bool = False  # an opening bracket of a literal (tuple, list, dict), not a call


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


def _tokens(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos, space = 0, False
    stack: list[int] = []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Unsupported
        pos = m.end()
        kind = m.lastgroup or ""
        if kind == "ws":
            space = True
            continue
        value = m.group()
        if kind == "str":
            if toks and toks[-1].kind == "str":
                raise _Unsupported  # implicit concatenation
            value = normalize_quotes(value)
        tok = _Tok(value, space, kind)
        space = False
        if value in _OPEN:
            prev = toks[-1] if toks else None
            # After a name or a closing bracket it is a call or subscript, else a literal.
            tok.atom = prev is None or not (prev.kind in ("name", "str") or prev.text in _CLOSE)
            stack.append(len(toks))
        elif value in _CLOSE:
            if not stack or _OPEN.index(toks[stack[-1]].text) != _CLOSE.index(value):
                raise _Unsupported
            j = stack.pop()
            toks[j].match = len(toks)
            tok.match = j
        toks.append(tok)
    if stack:
        raise _Unsupported
    return toks


def _flat(toks: list[_Tok]) -> str:
    out: list[str] = []
    prev: _Tok | None = None
    for t in toks:
        if prev is not None:
            if prev.text in _OPEN or t.text in _CLOSE or t.text in (",", ".") or prev.text == ".":
                pass
            elif prev.text == ",":
                out.append(" ")
            elif t.space:
                out.append(" ")
        out.append(t.text)
        prev = t
    return "".join(out)


def _magic_comma(toks: list[_Tok]) -> bool:
    """A comma before a closing bracket that black keeps exploded (not a one-tuple's)."""
    for i in range(1, len(toks)):
        t = toks[i]
        if t.text in _CLOSE and toks[i - 1].text == ",":
            opening = toks[t.match]
            if t.text == ")" and _commas(toks, t.match + 1, i) == 1 and opening.atom:
                continue  # ``(x,)``
            if t.text == ")" and not opening.atom:
                raise _Unsupported  # a call with a trailing comma: not modelled
            return True
    return False


def _commas(toks: list[_Tok], start: int, end: int) -> int:
    """Commas at the top bracket level of ``toks[start:end]``."""
    n, i = 0, start
    while i < end:
        t = toks[i]
        if t.text in _OPEN:
            i = t.match
        elif t.text == ",":
            n += 1
        i += 1
    return n


def _split_commas(toks: list[_Tok]) -> list[list[_Tok]]:
    parts: list[list[_Tok]] = [[]]
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text in _OPEN:
            parts[-1].extend(toks[i : t.match + 1])
            i = t.match + 1
            continue
        parts[-1].append(t)
        if t.text == ",":
            parts.append([])
        i += 1
    return [p for p in parts if p]


def _rebase(toks: list[_Tok]) -> list[_Tok]:
    """A copy of a slice with bracket matches renumbered for it."""
    out = [_Tok(t.text, t.space, t.kind, -1, t.atom) for t in toks]
    stack: list[int] = []
    for i, t in enumerate(out):
        if t.text in _OPEN:
            stack.append(i)
        elif t.text in _CLOSE:
            j = stack.pop()
            out[j].match = i
            t.match = j
    return out


def _line(toks: list[_Tok], depth: int, limit: int, body: bool, explode: bool) -> list[str]:
    """black's ``transform_line`` for an expression line ``depth`` levels deep."""
    pad = "    " * depth
    if not explode and not _magic_comma(toks):
        flat = _flat(toks)
        if len(pad) + len(flat) <= limit:
            return [pad + flat]
    if body and _commas(toks, 0, len(toks)):
        # delimiter split at commas: one element per line, with a trailing comma
        parts = _split_commas(toks)
        if len(parts) == 1 and toks[-1].text == ",":
            return _rhs(toks, depth, limit)  # nothing to split: black moves on to rhs
        if parts[-1][-1].text != ",":
            parts[-1] = [*parts[-1], _Tok(",", False, "op")]
        out: list[str] = []
        for p in parts:
            out.extend(_line(_rebase(p), depth, limit, True, False))
        return out
    if any(t.text in ("|", "=", ":", "->", "-") for t in _top(toks)):
        raise _Unsupported  # other delimiters: black's rules are not modelled here
    return _rhs(toks, depth, limit)


def _top(toks: list[_Tok]) -> list[_Tok]:
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        out.append(toks[i])
        i = toks[i].match + 1 if toks[i].text in _OPEN else i + 1
    return out


def _rhs(toks: list[_Tok], depth: int, limit: int) -> list[str]:
    """Split at the last bracket pair: head, body one level deeper, tail."""
    if not any(t.text in _OPEN for t in toks):
        return ["    " * depth + _flat(toks)]  # nothing to split: black leaves it long
    end = len(toks) - 1
    while end >= 0 and toks[end].text not in _CLOSE:
        if toks[end].text != ",":
            raise _Unsupported
        end -= 1
    if end < 0:
        raise _Unsupported
    start = toks[end].match
    if start == end - 1:
        raise _Unsupported  # empty brackets cannot be split
    head, inner, tail = toks[: start + 1], toks[start + 1 : end], toks[end:]
    pad = "    " * depth
    head_text = pad + _flat(head)
    if len(head_text) > limit:
        raise _Unsupported
    inner = _rebase(inner)
    # A literal's elements go one per line once it is split (a one-tuple's lone comma aside).
    explode = toks[start].atom and _commas(inner, 0, len(inner)) > (
        1 if inner[-1].text == "," else 0
    )
    out = [head_text, *_line(inner, depth + 1, limit, True, explode)]
    tail_text = pad + _flat(tail)
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
    toks = _tokens(stmt)
    start = next(i for i, t in enumerate(toks) if t.text == "(")
    end = toks[start].match
    pad = "    " * depth
    flat = _flat(toks)
    if len(pad) + len(flat) <= limit and not _magic_comma(toks):
        return [pad + flat]
    head = pad + _flat(toks[: start + 1])
    tail = pad + _flat(toks[end:])
    inner = _rebase(toks[start + 1 : end])
    if not inner or len(head) > limit or len(tail) > limit:
        raise _Unsupported
    explode = False
    if _commas(inner, 0, len(inner)) == 0:
        inner = [*inner, _Tok(",", False, "op")]  # black adds one to a lone parameter
        explode = True
    elif inner[-1].text == ",":
        explode = True
    return [head, *_line(inner, depth + 1, limit, True, explode), tail]


def _is_call(top: list[_Tok]) -> bool:
    if len(top) < 2 or top[-1].text != "(" or top[0].kind != "name":
        return False
    names = top[:-1]
    return (
        all(t.kind == "name" if i % 2 == 0 else t.text == "." for i, t in enumerate(names))
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
            toks = _tokens(stmt)
            top = _top(toks)
            if any(t.text in ("=", ":", "->", "|") for t in top):
                # an assignment: only a quote change or nothing at all
                if _magic_comma(toks):
                    return None
                line = "    " * depth + _flat(toks)
                # too long: black wraps the right-hand side in parentheses (not modelled)
                return [line] if len(line) <= line_length else None
            else:
                # a bare call: a dotted name, then one argument list ending the line
                if not _is_call(top):
                    return None
                lines = _line(toks, depth, line_length, False, False)
    except _Unsupported:
        return None
    if any(len(ln) > line_length and not _unsplittable(ln) for ln in lines):
        return None
    return lines


def _unsplittable(line: str) -> bool:
    """An element line without brackets (``"<IIII…",`` in an argument list): black cannot
    shorten it and leaves it long."""
    try:
        return not any(t.text in _OPEN for t in _tokens(line.strip()))
    except _Unsupported:
        return False
