"""One escaping function per output context, for schema-originated text (names, paths, messages).

A schema is untrusted input: a file named ``x\\n::error::forged.idl`` or a string default
``| x | y |`` must not forge lines, table rows, headings, HTML, mentions, links or GitHub
workflow commands in a report or a CI log. Every template reaches these through filters
(:mod:`idlgen.diff.templating`), and anything printed without a filter gets the context's
default escaper.

* ``text``: one line per value. Control, format and line/paragraph-separator characters become
  visible ``\\n``/``\\x1b``/``\\u2028`` escapes (a literal backslash is left alone, so
  messages quoting a schema's ``\\q`` read as before), and a value starting with ``::``
  cannot open a workflow command at the start of a log line.
* ``github``: workflow-command data and properties (``%``/CR/LF percent-encoded as the runner
  decodes them; ``:``/``,`` too in properties), after the ``text`` escaping.
* ``markdown``: GitHub-flavoured markdown inline text and code spans, safe inside table cells.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "escape_text",
    "escape_github_data",
    "escape_github_prop",
    "escape_md",
    "escape_md_code",
    "escape_md_message",
    "clip",
    "visible_surrogates",
    "could_start_command",
    "log_line",
    "log_text",
    "log_json",
    "MAX_VALUE_CHARS",
]

# Longest schema value shown in a markdown cell (before escaping); the rest becomes "…".
MAX_VALUE_CHARS = 300

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def _needs_escape(ch: str) -> bool:
    # Cc: C0/C1 controls incl. CR/LF/NEL; Cf: bidi overrides, zero-width chars; Zl/Zp: U+2028/9.
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def _one_line(s: str) -> str:
    if s.isprintable():  # fast path: nothing to escape (the usual case)
        return s
    return "".join(_visible(ch) if _needs_escape(ch) else ch for ch in s)


# The Actions runner's parsers (actions/runner ActionCommand): a v2 command is a line that
# starts with ``::`` after C#'s ``TrimStart()``, which trims every Unicode white space
# (U+0009-U+000D, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028/9, U+202F, U+205F, U+3000);
# a v1 command is ``##[name ...]`` *anywhere* in a line. Python's ``str.lstrip()`` trims a
# superset of that set (it adds U+001C-U+001F), so whatever the runner would trim, we trim.
_V1 = "##["
_V1_SAFE = "#\\x23["  # shown as text; no longer ``##[``


def _no_command(out: str) -> str:
    stripped = out.lstrip()
    if stripped.startswith(":"):  # ``::cmd::`` at the start of a log line
        pad = len(out) - len(stripped)
        out = out[:pad] + "\\x3a" + stripped[1:]
    if _V1 in out:
        out = out.replace(_V1, _V1_SAFE)
    return out


def could_start_command(line: str) -> bool:
    """Whether the runner could read ``line`` as a workflow command (v2 or v1)."""
    return line.lstrip().startswith("::") or _V1 in line


def log_line(line: str) -> str:
    """A whole line for a CI log (a quoted source line, a composed message): no command."""
    return _no_command(line) if could_start_command(line) else line


def log_text(text: str, *, own_commands: bool = False) -> str:
    """Every line of ``text`` made safe for a CI log. With ``own_commands`` a line that starts
    with ``::`` in its first column is idlgen's own annotation (``--format github``; every
    value in it is escaped, so no schema text can start a line) and is kept."""
    if "::" not in text and _V1 not in text:
        return text
    # split as the runner reads lines (.NET ReadLine: \n, \r, \r\n), keeping the breaks
    parts = _LINE_BREAKS.split(text)
    for i in range(0, len(parts), 2):
        line = parts[i]
        if own_commands and line.startswith("::"):
            parts[i] = line.replace(_V1, _V1_SAFE) if _V1 in line else line
        else:
            parts[i] = log_line(line)
    return "".join(parts)


_LINE_BREAKS = re.compile(r"(\r\n|\r|\n)")


def log_json(text: str) -> str:
    """A JSON document for a CI log: ``##[`` inside a string becomes ``#\\u0023[`` (the same
    string to a JSON reader). No JSON line can start with ``::`` (strings hold no raw
    newlines), so nothing else changes."""
    return text.replace(_V1, "#\\u0023[") if _V1 in text else text


def escape_text(s: str) -> str:
    """A value on one visible line: controls and separators become backslash escapes."""
    return _no_command(_one_line(s))


def escape_github_data(s: str) -> str:
    """The message part of ``::error …::MESSAGE``."""
    return escape_text(s).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_github_prop(s: str) -> str:
    """A ``key=VALUE`` property of a workflow command."""
    return escape_github_data(s).replace(":", "%3A").replace(",", "%2C")


def clip(s: str, limit: int = MAX_VALUE_CHARS) -> str:
    return s if len(s) <= limit else s[: limit - 1] + "…"


_URLISH = re.compile(r"(?i)(://|www\.)")


def _md_inline(s: str, *, line_start: bool = True) -> str:
    # ``\``, ``|`` and `````` keep a table cell whole and code spans ours; ``<``/``>``/``&`` make HTML, comments and
    # autolinks literal; ``](``/``][`` stop inline and reference links and images; ``@`` + zero-width space stops
    # @mentions and e-mail autolinks; ``://``/``www.`` are broken so nothing is linkified.
    s = _no_command(_one_line(s)) if line_start else _one_line(s)
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("](", "\\](").replace("][", "\\][")
    s = s.replace("@", "@&#8203;")
    s = _URLISH.sub(lambda m: m.group(1)[0] + "&#8203;" + m.group(1)[1:], s)
    if line_start and s.startswith(
        ("#", "-", "+", "=", ">", "!", "~")
    ):  # block syntax at a line start
        s = "\\" + s
    return s


def escape_md(s: str, limit: int = MAX_VALUE_CHARS) -> str:
    """Markdown inline text, safe in a table cell (clipped to ``limit`` characters)."""
    return _md_inline(clip(s, limit))


def _code_span(s: str) -> str:
    s = escape_text(s).replace("\\", "\\\\").replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{tick}{pad}{s}{pad}{tick}"


def escape_md_code(s: str) -> str:
    """A markdown code span (``—`` for an empty value), safe in a table cell."""
    return _code_span(clip(s)) if s else "—"


def escape_md_message(s: str) -> str:
    """A finding message: prose with `` `name` `` code spans. Backtick pairs stay code spans;
    an unpaired backtick is shown literally."""
    s = clip(s)
    tail = ""
    if s.count("`") % 2:  # the last backtick has no partner
        s, rest = s.rsplit("`", 1)
        tail = "\\`" + _md_inline(rest, line_start=False)
    out = []
    for k, part in enumerate(s.split("`")):
        if k % 2:
            out.append(_code_span(part) if part else "\\`\\`")
        else:
            out.append(_md_inline(part, line_start=k == 0))
    return "".join(out) + tail


def visible_surrogates(s: str) -> str:
    """A file name that is not UTF-8 reaches Python with its bad bytes as lone surrogates
    (``os.fsdecode``), which no UTF-8 document or strict stdout can hold: each becomes visible
    ``\\xff`` text (other lone surrogates ``\\udXXX``). Fast when there are none."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(
            (
                (f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}")
                if 0xD800 <= ord(c) <= 0xDFFF
                else c
            )
            for c in s
        )
    return s
