"""Diagnostics as values: front ends and checks append, the CLI renders.

Rendering (compiler style, what editors and CI problem matchers parse)::

    schemas/foo/v1_0/Types.idl:12:5: error[HDI201]: unknown type 'Strng'
       12 |     Strng name;
          |     ^^^^^
       = help: did you mean 'String'?
"""

from __future__ import annotations

import difflib
import enum
import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .escaping import escape_github_data, escape_github_prop, escape_text
from .ir import Span

__all__ = [
    "Severity",
    "Diagnostic",
    "Diagnostics",
    "render",
    "render_all",
    "render_github",
    "suggest",
]

# "Did you mean" must stay linear in the input: names longer than this get no suggestion, one
# call looks at most MAX_SUGGEST_CANDIDATES names, and one Diagnostics spends at most
# SUGGEST_BUDGET candidate looks in all (~0.2 s however many typos a file has).
MAX_SUGGEST_NAME = 64
# Source lines longer than this are shown as a window around the span.
_MAX_SHOWN = 200
MAX_SUGGEST_CANDIDATES = 1000
SUGGEST_BUDGET = 20_000


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    code: str
    message: str
    span: Span | None = None
    # Extra lines printed as ``= help: …`` / ``= note: …``.
    help: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str]:
        s = self.span
        return (s.file, s.line, s.col, self.code) if s else ("", 0, 0, self.code)


class Diagnostics(list[Diagnostic]):
    """A list of diagnostics with helpers for the common cases."""

    suggest_budget: int = SUGGEST_BUDGET

    def error(
        self,
        code: str,
        message: str,
        span: Span | None = None,
        *,
        help: Iterable[str] = (),
        notes: Iterable[str] = (),
    ) -> None:
        self.append(Diagnostic(Severity.ERROR, code, message, span, tuple(help), tuple(notes)))

    def warning(
        self,
        code: str,
        message: str,
        span: Span | None = None,
        *,
        help: Iterable[str] = (),
        notes: Iterable[str] = (),
    ) -> None:
        self.append(Diagnostic(Severity.WARNING, code, message, span, tuple(help), tuple(notes)))

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self)


def suggest(
    diags: Diagnostics, name: str, candidates: Iterable[str], *, n: int = 1, cutoff: float = 0.6
) -> list[str]:
    """Up to ``n`` close matches for ``name`` (``difflib``), within the bounds above.

    ``candidates`` may be a generator: it is consumed only as far as the bounds allow.
    """
    if len(name) > MAX_SUGGEST_NAME or diags.suggest_budget <= 0:
        return []
    pool: dict[str, None] = {}
    looked = 0
    for c in candidates:
        looked += 1
        if len(c) <= MAX_SUGGEST_NAME:
            pool[c] = None
        if looked >= MAX_SUGGEST_CANDIDATES or looked >= diags.suggest_budget:
            break
    diags.suggest_budget -= looked
    return difflib.get_close_matches(name, list(pool), n=n, cutoff=cutoff)


@functools.lru_cache(maxsize=16)
def _lines(text: str) -> list[str]:
    """Split once per source, not once per diagnostic (many errors must stay linear)."""
    return text.splitlines()


def _source_line(sources: Mapping[str, str], span: Span) -> str | None:
    text = sources.get(span.file)
    if text is None:
        return None
    lines = _lines(text)
    if 1 <= span.line <= len(lines):
        return lines[span.line - 1]
    if span.line == len(lines) + 1:
        return ""  # end of file
    return None


def render(d: Diagnostic, sources: Mapping[str, str]) -> str:
    """One diagnostic as text: header, source line with an underline, help/note lines."""
    # File names and messages may carry schema text: one visible line each (idlgen.escaping).
    where = f"{escape_text(str(d.span))}: " if d.span else ""
    out = [f"{where}{d.severity.value}[{d.code}]: {escape_text(d.message)}"]
    if d.span is not None:
        line = _source_line(sources, d.span)
        if line is not None:
            gutter = str(d.span.line)
            pad = " " * len(gutter)
            start = max(d.span.col - 1, 0)
            if d.span.end_line == d.span.line and d.span.end_col > d.span.col:
                width = d.span.end_col - d.span.col
            else:
                width = max(len(line) - start, 1) if d.span.end_line > d.span.line else 1
            if len(line) > _MAX_SHOWN:  # a huge line: show a window around the span
                left = max(start - _MAX_SHOWN // 2, 0)
                line = line[left : left + _MAX_SHOWN]
                start -= left
                width = max(min(width, len(line) - start), 1)
            # after the window: expanding a huge line per diagnostic would be quadratic
            # (expandtabs(1) maps each tab to one space, so columns do not move)
            line = line.expandtabs(1)
            if not line.isprintable():  # schema text: no terminal escapes or bidi overrides
                line = "".join(c if c.isprintable() else "?" for c in line)
            out.append(f" {gutter} | {line}")
            out.append(f" {pad} | {' ' * start}{'^' * width}")
    for h in d.help:
        out.append(f"  = help: {escape_text(h)}")
    for n in d.notes:
        out.append(f"  = note: {escape_text(n)}")
    return "\n".join(out)


def render_all(diags: Iterable[Diagnostic], sources: Mapping[str, str]) -> str:
    return "\n".join(render(d, sources) for d in sorted(diags, key=Diagnostic.sort_key))


_esc_data = escape_github_data
_esc_prop = escape_github_prop


def render_github(diags: Iterable[Diagnostic]) -> str:
    """GitHub Actions workflow commands (``::error file=…,line=…::message``)."""
    out = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        level = {"error": "error", "warning": "warning", "note": "notice"}[d.severity.value]
        props = [f"title={_esc_prop(d.code)}"]
        if d.span:
            props = [
                f"file={_esc_prop(d.span.file)}",
                f"line={d.span.line}",
                f"col={d.span.col}",
                f"endLine={d.span.end_line}",
                f"endColumn={d.span.end_col}",
            ] + props
        out.append(f"::{level} {','.join(props)}::{_esc_data(d.message)}")
    return "\n".join(out)


def to_json(diags: Iterable[Diagnostic]) -> str:
    rows = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        loc = (
            {"file": d.span.file, "line": d.span.line, "col": d.span.col}
            if d.span is not None
            else None
        )
        rows.append(
            {
                "severity": d.severity.value,
                "code": d.code,
                "message": d.message,
                "location": loc,
                "help": list(d.help),
                "notes": list(d.notes),
            }
        )
    return json.dumps(rows, indent=2)
