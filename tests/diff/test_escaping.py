"""Hostile schema text in reports: markdown, text and GitHub output cannot be forged.

Findings are built directly with random names, paths, messages, declarations and file names
drawn from the characters markdown, GitHub comments and the Actions runner give meaning to.
The checks parse the output the way GFM / the runner do (unescaped pipes split cells, code
spans are backtick runs of equal length, a workflow command is a line starting with ``::``).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from idlgen.diagnostics import render_github as render_github_diags
from idlgen.diff import Finding, Severity, cli
from idlgen.escaping import escape_github_prop, escape_md, escape_md_code, escape_text
from idlgen.diff.report import (
    MAX_MARKDOWN_CHARS,
    Report,
    render_github,
    render_markdown,
    render_text,
)
from idlgen.diff.sources import load_paths
from idlgen.ir import Span

PIECES = [
    "|",
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b",
    "\x0c",
    "\x1b[31m",
    "\u202e",
    "\u200b",
    "#",
    "## ",
    "<!--",
    "-->",
    "<details>",
    "</details>",
    "<img src=x>",
    "@user",
    "a@b.com",
    "[x](http://e.vil)",
    "![i](y)",
    "[r][1]",
    "`",
    "``",
    "```",
    "::error::forged",
    "::warning file=x::",
    "%0A",
    "%",
    ",",
    ":",
    "\\",
    "\\|",
    "&amp;",
    "&#64;",
    "www.evil.com",
    "https://evil",
    "*",
    "_",
    "- ",
    "> ",
    " ",
    "\t",
    "A",
    "Type.member",
]
hostile = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.text(max_size=40),
)
spans = st.builds(
    Span,
    hostile,
    st.integers(1, 10_000),
    st.integers(1, 500),
    st.integers(1, 10_000),
    st.integers(1, 500),
)
rules = st.sampled_from(["FBS-T-03", "FBS-T-05", "FBS-D-01", "HDI-S-02", "HDI-M-04", "HDI-Y-01"])
findings = st.builds(
    Finding,
    rules,
    st.sampled_from(list(Severity)),
    hostile,
    hostile,
    st.none() | spans,
    st.none() | spans,
    hostile,
    hostile,
    st.none() | spans,
)
reports = st.builds(
    lambda fs, sup, old, new: Report(old, new, fs, sup),
    st.lists(findings, max_size=25),
    st.lists(st.tuples(findings, hostile), max_size=4),
    hostile,
    hostile,
)

ALLOWED_HTML = re.compile(r"</?details>|</?summary>|<!-- idlgen-diff -->")


def unescaped_pipes(line: str) -> int:
    n, k = 0, 0
    while k < len(line):
        if line[k] == "\\":
            k += 2
            continue
        n += line[k] == "|"
        k += 1
    return n


def outside_code(text: str) -> str:
    """The text outside code spans (CommonMark: a backtick run closes at the next run of the
    same length; a backslash-escaped backtick opens nothing)."""
    out, k = [], 0
    while k < len(text):
        if text[k] == "\\":  # an escaped character is literal: keep a placeholder
            out.append("\x00")
            k += 2
            continue
        if text[k] == "`":
            run = re.match(r"`+", text[k:])
            assert run is not None
            n = len(run.group())
            close = re.compile(rf"(?<!`)`{{{n}}}(?!`)").search(text, k + n)
            if close is not None:
                k = close.end()
                continue
            out.append(run.group())
            k += n
            continue
        out.append(text[k])
        k += 1
    return "".join(out)


def cells(row: str) -> list[str]:
    """A table row split at unescaped pipes, as GFM does before parsing each cell."""
    out, cur, k = [], "", 0
    while k < len(row):
        if row[k] == "\\":
            cur += row[k : k + 2]
            k += 2
        elif row[k] == "|":
            out.append(cur)
            cur, k = "", k + 1
        else:
            cur += row[k]
            k += 1
    return out + [cur]


def omitted(md: str) -> int:
    return sum(int(n) for n in re.findall(r"^… and (\d+) more", md, re.M))


FAST = [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]


@settings(
    max_examples=100, deadline=None, phases=FAST, suppress_health_check=[HealthCheck.too_slow]
)
@given(reports)
def test_markdown_cannot_be_forged(r: Report) -> None:
    md = render_markdown(r)
    assert len(md) < MAX_MARKDOWN_CHARS
    lines = md.splitlines()
    assert lines[0] == "<!-- idlgen-diff -->"
    # Exactly one row per listed finding, each with exactly its columns.
    rows = [x for x in lines if x.startswith("| `") or x.startswith("| ``")]
    listed = len(r.findings) + len(r.suppressed) - omitted(md)
    assert len(rows) == listed
    assert all(
        x.startswith("|") == (x in rows or x.startswith("| Rule") or x.startswith("|---"))
        for x in lines
    )
    for x in rows:
        assert unescaped_pipes(x) in (6, 8), x
        # the second column says what the change breaks, and nothing else
        breaks = x.split(" | ")[1]
        assert breaks == "—" or set(breaks.split(", ")) <= {"WIRE", "JSON", "SOURCE"}, x
    headings = [x for x in lines if x.lstrip().startswith("#")]
    assert headings[0].startswith("## ") and all(
        h.startswith("### Breaking changes (") for h in headings[1:]
    )
    assert len(headings) <= 2
    for x in lines:
        assert not x.lstrip().startswith("::"), x
        assert not re.search(r"[\r\x0b\x0c\x85\u2028\u2029]", x), repr(x)
        prose = "|".join(outside_code(c) for c in cells(x))
        assert ALLOWED_HTML.sub("", prose).count("<") == 0, x
        assert "](" not in prose and "][" not in prose, x
        assert not re.search(r"@(?!&#8203;)", prose), x
        assert not re.search(r"(?i)://|www\.", prose), x
        assert "<!--" not in prose or x == lines[0]


@settings(max_examples=100, deadline=None, phases=FAST)
@given(reports)
def test_github_one_command_per_finding(r: Report) -> None:
    out = render_github(r)
    lines = out.split("\n")
    assert lines[-1] == ""
    commands = [x for x in lines if x.lstrip().startswith("::")]
    assert len(commands) == len(r.findings) == len(lines) - 2
    assert lines[-2].startswith("idlgen diff: ")
    for x, f in zip(commands, r.findings):
        m = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", x)
        assert m is not None, x
        props = dict(kv.split("=", 1) for kv in m.group(2).split(","))
        assert set(props) <= {"file", "line", "col", "endLine", "title"}
        assert props["title"] == escape_github_prop(f"{f.rule} {f.path}")
        assert ("file" in props) == (f.location is not None)
        assert not re.search(r"[\r\x0b\x0c\x85\u2028\u2029]", x)


@settings(max_examples=100, deadline=None, phases=FAST)
@given(reports)
def test_text_one_line_per_finding(r: Report) -> None:
    out = render_text(r)
    lines = out.split("\n")
    notes = sum(
        f.old is not None and (f.new is None or f.old_decl != f.new_decl) for f in r.findings
    )
    assert len(lines) == len(r.findings) + notes + 2
    for x in lines:
        assert not x.lstrip().startswith("::"), x
        assert not re.search(r"[\r\x0b\x0c\x85\u2028\u2029\x1b\u202e]", x), repr(x)


def test_markdown_stays_under_the_limit_with_long_names() -> None:
    long = "N" * 5000 + "@|<" * 2000
    fs = [
        Finding("HDI-S-02", Severity.BREAKING, f"{long}{k}", long, new=Span(long, 1, 1, 1, 2))
        for k in range(60)
    ]
    fs += [Finding("HDI-Y-01", Severity.INFO, f"T{k}{long}", long) for k in range(90)]
    r = Report(long, long, fs, [(fs[0], long)])
    md = render_markdown(r)
    assert len(md) < MAX_MARKDOWN_CHARS
    rows = [x for x in md.splitlines() if x.startswith("| `")]
    assert 0 < len(rows) and len(rows) + omitted(md) == len(fs) + 1
    full = render_markdown(r, full=True)  # committed reports list everything
    assert len([x for x in full.splitlines() if x.startswith("| `")]) == len(fs) + 1


def test_escapers_by_example() -> None:
    assert escape_text("x\n::error::forged.idl") == "x\\n::error::forged.idl"
    assert escape_text("::error::x") == "\\x3a:error::x"
    assert escape_text("a\u2028b\\") == "a\\u2028b\\"
    assert escape_md("a|b <!-- c --> @d [e](f)") == ("a\\|b &lt;!-- c --&gt; @&#8203;d [e\\](f)")
    assert escape_md("# title") == "\\# title"
    assert escape_md_code("a`b") == "`` a`b ``" and escape_md_code("") == "—"
    assert escape_md_code("x|y") == "`x\\|y`"


def test_template_values_are_data_not_code(tmp_path: object) -> None:
    f = Finding("FBS-T-05", Severity.WARNING, "{{ 7*7 }}", "{% raw %}x{{ report }}")
    r = Report("{{ 6*7 }}", "b", [f])
    for out in (render_markdown(r), render_text(r), render_github(r)):
        assert "{{ 7*7 }}" in out and "49" not in out and "42" not in out


def test_hostile_file_name_in_plain_and_github_diagnostics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schema file named ``x\\n::error::forged.fbs`` with an error: every diagnostic stays on
    its own lines and no line of the log starts a workflow command."""
    monkeypatch.chdir(tmp_path)
    name = "x\n::error::forged\u2028.fbs"
    (tmp_path / "ok.fbs").write_text("table T { a:int; }\nroot_type T;\n")
    (tmp_path / name).write_text("table T { a:nosuchtype; }\nroot_type T;\n")
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    assert cli.run(p.parse_args(["ok.fbs", name]), {}) == 1
    err = capsys.readouterr().err
    assert "x\\n::error::forged\\u2028.fbs:1:" in err
    assert not [x for x in err.splitlines() if x.lstrip().startswith("::")]
    res = load_paths([tmp_path / name])
    gh = render_github_diags(res.diagnostics)
    assert gh and all(x.startswith("::error file=") for x in gh.split("\n"))
    assert len(gh.split("\n")) == len(res.diagnostics)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    code = cli.run(p.parse_args(argv), {})
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_user_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "o.fbs").write_text('table T { a:int; b:int; }\nfile_extension "bin";\n')
    (tmp_path / "n.fbs").write_text('table T { a:long; c:int; }\nfile_extension "|@x";\n')
    (tmp_path / "r.md.j2").write_text(
        "{{ report.counts.breaking }}/{{ report.findings|length }} {{ report.new }}\n"
        "{% for f in report.findings %}{{ f.rule }} {{ f.path }} {{ f.message }} "
        "{{ f.location }} {{ f.fingerprint }}\n{% endfor %}"
    )
    code, out, _ = _run(["o.fbs", "n.fbs", "--template", "r.md.j2", "--fail-on", "never"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "1/3 n.fbs"
    assert any(x.startswith("FBS-T-07 T.a ") and " n.fbs:1:11 " in x for x in lines)
    # markdown context: the schema's "|@x" is escaped even without a filter
    assert "\\|@&#8203;x" in out and "|@x" not in out.replace("\\|@", "")
    (tmp_path / "r.txt").write_text("{{ report.findings[0].message }}")
    _, txt, _ = _run(["o.fbs", "n.fbs", "--template", "r.txt", "--fail-on", "never"], capsys)
    assert txt.count("\n") == 0 and txt


@pytest.mark.parametrize(
    "source",
    [
        "{{ report.__class__.__mro__ }}",
        "{{ report.findings[0].__init__.__globals__ }}",
        "{{ report.findings.append(1) }}",
        "{{ report.counts.update(x=1) }}",
        "{% for x in %}",
        "{{ nosuch.field }}",
    ],
)
def test_user_template_is_sandboxed(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "o.fbs").write_text("table T { a:int; }\n")
    (tmp_path / "n.fbs").write_text("table T { a:uint; }\n")
    (tmp_path / "t.txt").write_text(source)
    code, out, err = _run(["o.fbs", "n.fbs", "--template", "t.txt"], capsys)
    assert code == 2 and out == "" and "--template t.txt:" in err


def test_template_context_from_file_name(tmp_path: Path) -> None:
    f = Finding("FBS-T-05", Severity.WARNING, "<b>|x</b>", "m\nn")
    r = Report("a", "b", [f])
    for name, want in [
        ("t.html.j2", "&lt;b&gt;|x&lt;/b&gt;"),
        ("t.md", "&lt;b&gt;\\|x&lt;/b&gt;"),
        ("t.markdown.jinja", "&lt;b&gt;\\|x&lt;/b&gt;"),
        ("t.txt", "<b>|x</b>"),
    ]:
        (tmp_path / name).write_text("{{ report.findings[0].path }}")
        assert r.render_template(tmp_path / name) == want, name
    (tmp_path / "m.txt").write_text("{{ report.findings[0].message }}|{{ 'x'|md_code }}")
    assert r.render_template(tmp_path / "m.txt") == "m\\nn|`x`"
