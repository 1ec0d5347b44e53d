"""``idlgen fmt``: one canonical layout per schema language, every comment kept in its place.

:func:`format_text` lays out a file's tokens and comments (the lexers here keep what the
parser's lexer ignores) after the language's own parser has accepted the file; a file with a
syntax error is returned as it is, with the parser's diagnostics. The result is checked to hold
the same code tokens and the same comments as the input before anyone writes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from ..diagnostics import Diagnostics
from .tokens import FormatError, Tok

__all__ = ["FormatError", "Formatted", "format_text", "language_of"]


@dataclass
class Formatted:
    """The formatted text (the input itself when it has syntax errors) and the diagnostics."""

    text: str
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    @property
    def ok(self) -> bool:
        return not self.diagnostics.has_errors


def language_of(path: str) -> str | None:
    suffix = PurePath(path).suffix
    return {".idl": "hdi", ".fbs": "fbs"}.get(suffix)


def _syntax(language: str, path: str, text: str, diags: Diagnostics) -> None:
    if language == "hdi":
        from ..frontend.hdi.parser import parse as parse_hdi

        parse_hdi(path, text, diags)
    else:
        from ..frontend.fbs.parser import parse as parse_fbs

        parse_fbs(text, path, diags)


def layout(language: str, text: str) -> str:
    """The canonical layout of ``text`` (which must parse)."""
    if language == "hdi":
        from .hdi import format_hdi

        return format_hdi(text)
    from .fbs import format_fbs

    return format_fbs(text)


def format_text(text: str, path: str, language: str | None = None) -> Formatted:
    """Format ``text`` (the contents of ``path``; the language comes from its suffix unless
    given). Syntax errors leave the text as it is; a layout that would lose or change a token
    raises :class:`FormatError` (a bug)."""
    lang = language or language_of(path)
    if lang is None:
        raise ValueError(f"{path}: not an .idl or .fbs file")
    if text.startswith("\ufeff"):  # a byte order mark stays, and the rest is formatted
        rest = format_text(text[1:], path, lang)
        return Formatted("\ufeff" + rest.text, rest.diagnostics)
    diags = Diagnostics()
    _syntax(lang, path, text, diags)
    if diags.has_errors:
        return Formatted(text, diags)
    out = layout(lang, text)
    if out != text:
        _same_tokens(lang, text, out)
        check = Diagnostics()
        _syntax(lang, path, out, check)
        if check.has_errors:
            raise FormatError(f"{path}: the formatted text does not parse: {check[0]}", 0)
    return Formatted(out, diags)


def _signature(lang: str, text: str) -> list[tuple[str, str]]:
    """The code tokens and comments of ``text``, whitespace aside (and the ``;`` an HDI
    interface's ``}`` may have, which the layout drops)."""
    if lang == "hdi":
        from .hdi import tokens
    else:
        from .fbs import tokens
    toks: list[Tok] = tokens(text)
    sig: list[tuple[str, str]] = []
    for t in toks:
        if t.comment:
            sig.append(("comment", " ".join(ln.strip() for ln in t.text.split("\n"))))
        elif t.text == ";" and lang == "hdi" and _after_interface(sig):
            continue
        else:
            sig.append(("code", t.text))
    return sig


def _after_interface(sig: list[tuple[str, str]]) -> bool:
    """The last code token closes an interface (an HDI ``}`` at depth 0 whose block began with
    ``interface``)."""
    code = [t for k, t in sig if k == "code"]
    if not code or code[-1] != "}":
        return False
    depth = 0
    for i in range(len(code) - 1, -1, -1):
        if code[i] == "}":
            depth += 1
        elif code[i] == "{":
            depth -= 1
            if depth == 0:
                j = i - 1
                while j >= 0 and code[j] not in (";", "}", "{"):
                    if code[j] == "interface":
                        return True
                    j -= 1
                return False
    return False


def _same_tokens(lang: str, before: str, after: str) -> None:
    a, b = _signature(lang, before), _signature(lang, after)
    if a != b:
        n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        raise FormatError(
            f"the layout changed the tokens at token {n}: "
            f"{a[n: n + 3]!r} became {b[n: n + 3]!r}",
            0,
        )
