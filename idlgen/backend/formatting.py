"""Making generated source black-clean without running black over whole modules.

The templates emit text that is already black's output for everything but a few kinds of
line (``stabilize_many``): lines longer than the limit, lines with a single-quoted string and
lines with a magic trailing comma. Those lines are laid out by the model of black's line
splitting (``blackstyle``); what the model declines goes through black, each line as a
statement of its own (dedented, with the line length reduced by the indent it had: black's
choices depend on the full width only), batched per file and depth so black runs a handful of
times per file on a fraction of its text. A line black cannot take alone (part of a bracketed
construct spanning lines) sends its whole file through black. Tests hold the result equal to
black's on ``generated/`` and the HDI corpus (``tests/test_black_stable.py``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .blackstyle import layout

if TYPE_CHECKING:
    import black

__all__ = ["format_source", "stabilize", "stabilize_many", "docstring_at"]


@functools.cache
def _mode(line_length: int) -> black.Mode:
    import black  # imported on first use: most builds never need it (~0.1 s)
    from black.mode import TargetVersion

    return black.Mode(target_versions={TargetVersion.PY311}, line_length=line_length)


def _format_str(src: str, line_length: int) -> str:
    import black

    return black.format_str(src, mode=_mode(line_length))


def format_source(src: str, line_length: int, what: str) -> str:
    from black.parsing import InvalidInput

    try:
        return _format_str(src, line_length)
    except InvalidInput as e:  # a template bug: show where
        raise RuntimeError(f"generated code for {what} is not valid Python: {e}\n{src}") from e


# A comma right before a closing bracket (``[a, ]``): black explodes the brackets.
_MAGIC_COMMA = re.compile(r",\s+[)\]}]")
_MARK = "_idlgen_statement_boundary_ = 0"
_BACKSLASH_NEWLINE = re.compile(r"\\\s*\n")


def _needs_black(line: str, line_length: int) -> bool:
    return (
        len(line) > line_length
        or "'" in line
        or _MAGIC_COMMA.search(line) is not None
        or not line.isascii()  # black measures wide characters as two columns
    )


def stabilize(src: str, line_length: int, what: str) -> str:
    """``black.format_str(src)``, running black only on the lines that need it (see above)."""
    lines = src.split("\n")
    by_depth: dict[int, list[int]] = {}
    in_doc = False
    # Only lines that need black or open/close a docstring matter below; the rest (most of a
    # module) are left out in one pass.
    candidates = [
        i
        for i, line in enumerate(lines)
        if '"""' in line
        or len(line) > line_length
        or "'" in line
        or ("," in line and _MAGIC_COMMA.search(line) is not None)
        or not line.isascii()
    ]
    for i in candidates:
        line = lines[i]
        # Docstrings are emitted in black's layout; one starts its line, ends at ``\"\"\"``.
        stripped = line.lstrip(" ")
        if in_doc:
            in_doc = '"""' not in line
            continue
        if stripped.startswith('"""'):
            in_doc = stripped.count('"""') == 1
            continue
        if _needs_black(line, line_length):
            if stripped.startswith("#"):
                continue  # black leaves comments as they are
            depth, rem = divmod(len(line) - len(stripped), 4)
            if rem or stripped[:1] in (")", "]", "}"):
                return format_source(src, line_length, what)
            fresh = layout(stripped, depth, line_length)
            if fresh is not None:
                lines[i] = "\n".join(fresh)
            else:
                by_depth.setdefault(depth, []).append(i)
    for depth, indices in by_depth.items():
        cut = 4 * depth
        batch: list[str] = []
        for i in indices:
            stmt = lines[i][cut:]
            # A compound statement's header needs a body to parse; it is dropped again below.
            batch.append(f"{stmt}\n    pass\n{_MARK}" if stmt.endswith(":") else f"{stmt}\n{_MARK}")
        from black.parsing import InvalidInput

        try:
            out = _format_str("\n".join(batch) + "\n", line_length - cut)
        except InvalidInput:  # a line that is only part of a statement
            return format_source(src, line_length, what)
        chunks = out.split(f"{_MARK}\n")
        if len(chunks) != len(indices) + 1:
            return format_source(src, line_length, what)
        pad = " " * cut
        for i, chunk in zip(indices, chunks):
            body = chunk.strip("\n").split("\n")
            if lines[i].endswith(":"):
                body = body[:-1]  # the placeholder ``pass``
            lines[i] = "\n".join(pad + b if b else b for b in body)
    return "\n".join(lines)


def stabilize_many(sources: Mapping[str, str], line_length: int) -> dict[str, str]:
    return {rel: stabilize(src, line_length, rel) for rel, src in sources.items()}


def docstring_at(literal: str, depth: int, line_length: int = 100) -> str:
    """A ``\"\"\"…\"\"\"`` docstring literal laid out as black lays it out ``depth`` levels deep
    (black's ``visit_STRING`` and ``fix_multiline_docstring``): the first line stripped; the
    others re-indented (leading tabs expanded, common indent replaced, trailing blanks dropped);
    padding where the text would touch the quotes; the closing quotes on a line of their own
    when they would overflow the last line."""
    if not (literal.startswith('"""') and literal.endswith('"""')) or len(literal) < 7:
        return literal
    if _BACKSLASH_NEWLINE.search(literal):
        return literal  # black leaves a docstring with a backslash at a line's end alone
    body = literal[3:-3]
    prefix = " " * (4 * depth)
    if "\n" in body:
        lines = [_expand_leading_tabs(ln) for ln in body.split("\n")]
        widths = [len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.lstrip()]
        doc_lines = [lines[0].strip()]
        if widths:
            common = min(widths)
            last = len(lines) - 2
            for i, ln in enumerate(lines[1:]):
                text = ln[common:].rstrip()
                doc_lines.append(prefix + text if text or i == last else "")
        doc = "\n".join(doc_lines)
    else:
        doc = body.strip()
    trailing_backslash = False
    if doc:
        if doc[0] == '"':
            doc = " " + doc
        if doc[-1] == '"':
            doc += " "
        if doc[-1] == "\\" and (len(doc) - len(doc.rstrip("\\"))) % 2:
            doc += " "
            trailing_backslash = True
    elif body:
        doc = " "
    lines = doc.splitlines()
    if (
        len(lines) > 1
        and len(lines[-1]) + 3 > line_length
        and len(prefix) + 3 <= line_length
        and not trailing_backslash
    ):
        return f'"""{doc}\n{prefix}"""'
    return f'"""{doc}"""'


def _expand_leading_tabs(line: str) -> str:
    stripped = line.lstrip()
    if not stripped or stripped == line:
        return line
    return line[: len(line) - len(stripped)].expandtabs(4) + stripped
