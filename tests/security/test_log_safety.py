"""Issue 20, point 2: nothing a schema or a file name holds can forge a workflow command in a CI log.

``runner_commands`` models the GitHub Actions runner's parsers (actions/runner,
``ActionCommand.TryParseV2`` / ``TryParse``): the log is split into lines as .NET's
``ReadLine`` does (``\\n``, ``\\r``, ``\\r\\n``); a line is a v2 command when it starts with ``::``
after ``string.TrimStart()``, which trims every character ``char.IsWhiteSpace`` accepts (Unicode
Zs/Zl/Zp, U+0009-U+000D, U+0085; so U+3000 and U+00A0 too); it is a v1 command when ``##[``
occurs *anywhere* in it. The only commands allowed in idlgen's output are its own annotations
(``--format github``): at the first column, with escaped properties, one per finding.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.escaping import escape_github_data, escape_text, log_json, log_text

from ._support import run

EXAMPLES = int(os.environ.get("IDLGEN_FUZZ_EXAMPLES", "25"))

# C#'s char.IsWhiteSpace
CS_WHITESPACE = "".join(
    chr(c)
    for c in range(sys.maxunicode + 1)
    if unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp") or c in (*range(9, 14), 0x85)
)
OWN = re.compile(r"^::(error|warning|notice) (?:[a-zA-Z]+=[^,:\r\n]*,)*title=[^,:\r\n]*::")


def runner_lines(log: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", log)


def runner_commands(log: str) -> list[tuple[str, str]]:
    """(kind, line) for every line the runner would try to run as a command."""
    found = []
    for line in runner_lines(log):
        if line.lstrip(CS_WHITESPACE).startswith("::"):
            found.append(("v2", line))
        if "##[" in line:
            found.append(("v1", line))
    return found


def assert_no_forged(log: str, *, own: bool = False) -> None:
    for kind, line in runner_commands(log):
        assert own and kind == "v2" and OWN.match(line), f"forged {kind} command: {line!r}"


# Text an attacker can put before a command: every kind of white space the runner trims, the
# characters it does not trim but a naive check might (zero-width, BOM), line breaks.
PREFIX = st.lists(
    st.sampled_from(
        [" ", "\t", "\u3000", "\u00a0", "\u2028", "\u2029", "\u1680", "\u2003", "\u200a", "\u202f",
         "\u205f", "\x85", "\x0b", "\x0c", "\r", "\n", "\r\n", "\u200b", "\ufeff", "x", "|", "`"]
    ),
    max_size=4,
).map("".join)  # fmt: skip
COMMAND = st.sampled_from(
    ["::error::forged", "::warning file=a.fbs,line=1::forged", "##[error]forged",
     "##[group]x", "::add-mask::s", "::stop-commands::t", "x ##[warning]y", ":: error ::z"]
)  # fmt: skip
HOSTILE = st.tuples(PREFIX, COMMAND, PREFIX).map("".join)


@settings(max_examples=EXAMPLES * 20, deadline=None)
@given(HOSTILE)
def test_escapers_never_leave_a_command(s: str) -> None:
    for esc in (escape_text, escape_github_data):
        out = esc(s)
        assert "\n" not in out and "\r" not in out
        assert_no_forged(out)
        assert_no_forged("prefix " + out)  # a value mid-line cannot start one either
    assert_no_forged(log_text(s))
    assert_no_forged(log_json('{"a": "' + s.replace("\n", "\\n").replace("\r", "\\r") + '"}'))


@settings(max_examples=EXAMPLES * 20, deadline=None)
@given(st.text(min_size=0, max_size=40))
def test_log_text_neutralises_any_line(s: str) -> None:
    assert_no_forged(log_text(s))


def _name(s: str) -> str:
    """A file name from hostile text (no '/' or NUL; at most 200 bytes)."""
    s = s.replace("/", "_").replace("\x00", "_")
    while len(os.fsencode(s)) > 200:
        s = s[:-1]
    return s


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=HOSTILE, text=HOSTILE)
def test_diagnostics_in_every_format(
    tmp_path_factory: pytest.TempPathFactory, name: str, text: str
) -> None:
    d = tmp_path_factory.mktemp("log")
    f = d / (_name(name) + ".fbs")
    # the hostile text in a comment above the error (echoed with the source line when on the
    # same line), in a string and in a bad token
    src = f'table T {{ a: Nope; }} // {text}\nattribute "{text}";\n'
    f.write_bytes(src.encode("utf-8", "surrogatepass"))
    for fmt in ("text", "github", "json", "sarif"):
        rc, out, err = run("parse", str(f), "--format", fmt)
        assert rc in (1, 2), err
        assert_no_forged(err)
        assert_no_forged(out, own=fmt == "github")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=HOSTILE, text=HOSTILE)
def test_diff_in_every_format(
    tmp_path_factory: pytest.TempPathFactory, name: str, text: str
) -> None:
    d = tmp_path_factory.mktemp("logdiff")
    safe = _name(name)
    old, new = d / f"{safe}.old.fbs", d / f"{safe}.new.fbs"
    lit = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    old.write_text(
        f'attribute "x";\n/// {text}\ntable T {{ a: int (x: "{lit}"); b: string; }}\nroot_type T;\n'
    )
    new.write_text(
        f'attribute "x";\n/// {text}\ntable T {{ a: long (x: "{lit}2"); }}\nroot_type T;\n'
    )
    for fmt in ("text", "markdown", "json", "github", "sarif"):
        rc, out, err = run("diff", str(old), str(new), "--format", fmt)
        assert rc in (0, 1), err
        assert_no_forged(err)
        assert_no_forged(out, own=fmt == "github")


def test_known_forgeries_are_neutralised(tmp_path: Path) -> None:
    """The issue's two cases, concretely: U+3000 before ``::`` and ``##[`` mid-line, in a
    source line, a file name and a diff."""
    f = tmp_path / "\u3000::error::forged.fbs"
    f.write_text("table T { a: Nope; } // x ##[error]forged\n")
    for fmt in ("text", "github"):
        rc, out, err = run("parse", str(f), "--format", fmt)
        assert rc == 1
        assert_no_forged(err)
        assert_no_forged(out, own=fmt == "github")
        assert "forged" in out + err  # shown, as text
