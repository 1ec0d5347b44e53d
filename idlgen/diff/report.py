"""Render a diff outcome: ``text``, ``markdown`` (PR comment), ``json`` (contract), ``github``.

All renderers are pure functions of the ``Report`` and sort findings the same way (most severe
first, then entity path, rule, message), so re-running on the same inputs gives the same bytes
and a PR comment does not churn. File names pass through ``Report.display`` (relative paths,
``REF:path`` for ``--against``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..ir import Span
from .findings import Finding, Severity
from .policy import VersionPolicy
from .rules import RULES

__all__ = [
    "Report",
    "render",
    "FORMATS",
    "render_text",
    "render_markdown",
    "render_json",
    "render_github",
]

FORMATS = ("text", "markdown", "json", "github")
# GitHub rejects comments over 65536 characters: long tables are cut (counts stay exact).
MAX_BREAKING_ROWS = 100
MAX_COLLAPSED_ROWS = 150


def _identity(path: str) -> str:
    return path


@dataclass
class Report:
    old: str
    new: str
    findings: list[Finding]
    suppressed: list[tuple[Finding, str]] = field(default_factory=list)
    policy: VersionPolicy | None = None
    display: Callable[[str], str] = _identity

    def __post_init__(self) -> None:
        self.findings = sorted(self.findings, key=Finding.sort_key)
        self.suppressed = sorted(self.suppressed, key=lambda fr: fr[0].sort_key())

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def by_severity(self, sev: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity is sev]

    def loc(self, span: Span | None) -> str:
        return f"{self.display(span.file)}:{span.line}:{span.col}" if span is not None else ""

    def verdict(self) -> str:
        c = self.counts()
        if c["breaking"]:
            return "breaking changes"
        if c["warning"]:
            return "compatible on the wire, with warnings"
        if c["info"]:
            return "compatible"
        return "no changes"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _counts_line(r: Report) -> str:
    c = r.counts()
    out = f"{c['breaking']} breaking, {_plural(c['warning'], 'warning')}, {c['info']} info"
    if r.suppressed:
        out += f" ({len(r.suppressed)} suppressed)"
    return out


# ----------------------------------------------------------------------------------------------
# text


def render_text(r: Report) -> str:
    lines = []
    for f in r.findings:
        where = r.loc(f.location) or r.display(r.new)
        lines.append(f"{where}: {f.severity.value}[{f.rule}]: {f.path}: {f.message}")
        if f.new is None and f.old is not None:
            lines.append(f"  = note: removed from {r.loc(f.old)}")
        elif f.old is not None and f.new is not None and f.old_decl != f.new_decl:
            lines.append(f"  = note: was `{f.old_decl}` at {r.loc(f.old)}")
    lines.append(f"idlgen diff {r.old} → {r.new}: {r.verdict()}: {_counts_line(r)}")
    if r.policy is not None:
        lines.append(f"version policy: {'ok' if r.policy.ok else 'VIOLATED'}: {r.policy.summary}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# markdown


def _cell(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(s: str) -> str:
    if not s:
        return "—"
    tick = "``" if "`" in s else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{_cell(s)}{pad}{tick}"


def _msg(s: str) -> str:
    return _cell(s)


def _table(r: Report, findings: Iterable[Finding], *, decls: bool) -> list[str]:
    if decls:
        out = [
            "| Rule | Entity | Change | Old → new location | Old declaration | New declaration |",
            "|---|---|---|---|---|---|",
        ]
    else:
        out = ["| Rule | Entity | Change | Location |", "|---|---|---|---|"]
    for f in findings:
        old = r.loc(f.old) or "—"
        new = r.loc(f.new) or (f"(removed; near {r.loc(f.anchor)})" if f.anchor else "—")
        rule = f"`{f.rule}`"
        if decls:
            out.append(
                f"| {rule} | `{_cell(f.path)}` | {_msg(f.message)} | {_cell(old)} → {_cell(new)} "
                f"| {_code(f.old_decl)} | {_code(f.new_decl)} |"
            )
        else:
            where = r.loc(f.new) or r.loc(f.old) or "—"
            out.append(f"| {rule} | `{_cell(f.path)}` | {_msg(f.message)} | {_cell(where)} |")
    return out


def render_markdown(r: Report, *, full: bool = False) -> str:
    """The PR-comment report; ``full`` lists every row (committed reports), otherwise long
    tables are cut to stay under GitHub's comment size limit."""
    c = r.counts()
    icon = "❌" if c["breaking"] else ("⚠️" if c["warning"] else "✅")
    lines = [
        f"## {icon} Schema diff: {r.verdict()}",
        "",
        f"**{c['breaking']} breaking** · **{_plural(c['warning'], 'warning')}** · **{c['info']} info**"
        + (f" · {len(r.suppressed)} suppressed" if r.suppressed else ""),
        "",
        f"`{_cell(r.display(r.old))}` → `{_cell(r.display(r.new))}`",
        "",
    ]
    if r.policy is not None:
        mark = "✅" if r.policy.ok else "❌"
        lines += [f"**Version policy:** {mark} {_cell(r.policy.summary)}", ""]
    breaking = r.by_severity(Severity.BREAKING)
    if breaking:
        lines += [f"### Breaking changes ({len(breaking)})", ""]
        cut = len(breaking) if full else MAX_BREAKING_ROWS
        lines += _table(r, breaking[:cut], decls=True)
        if len(breaking) > cut:
            rest = len(breaking) - cut
            lines += ["", f"… and {rest} more breaking changes (see `--format json`)."]
        lines.append("")
    for sev, title in ((Severity.WARNING, "Warnings"), (Severity.INFO, "Info")):
        fs = r.by_severity(sev)
        if not fs:
            continue
        lines += [f"<details><summary>{title} ({len(fs)})</summary>", ""]
        cut = len(fs) if full else MAX_COLLAPSED_ROWS
        lines += _table(r, fs[:cut], decls=sev is Severity.WARNING)
        if len(fs) > cut:
            rest = len(fs) - cut
            lines += ["", f"… and {rest} more (see `--format json`)."]
        lines += ["", "</details>", ""]
    if r.suppressed:
        lines += [f"<details><summary>Suppressed ({len(r.suppressed)})</summary>", ""]
        lines += ["| Rule | Entity | Change | Reason |", "|---|---|---|---|"]
        for f, reason in r.suppressed:
            lines.append(f"| `{f.rule}` | `{_cell(f.path)}` | {_msg(f.message)} | {_msg(reason)} |")
        lines += ["", "</details>", ""]
    used = sorted({f.rule for f in r.findings} | {f.rule for f, _ in r.suppressed})
    if used:
        lines += [f"<details><summary>Rules ({len(used)})</summary>", ""]
        for rid in used:
            rule = RULES[rid]
            lines.append(f"- `{rid}` {rule.name} ({rule.severity.value}): {rule.why}")
        lines += ["", "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# ----------------------------------------------------------------------------------------------
# json (contract shape; extra keys documented in report.schema.json)


def _loc_json(r: Report, span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    return {"file": r.display(span.file), "line": span.line, "col": span.col}


def _finding_json(r: Report, f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "path": f.path,
        "message": f.message,
        "old": _loc_json(r, f.old),
        "new": _loc_json(r, f.new),
        "fingerprint": f.fingerprint,
        "old_decl": f.old_decl or None,
        "new_decl": f.new_decl or None,
    }


def report_dict(r: Report) -> dict[str, Any]:
    out: dict[str, Any] = {
        "old": r.display(r.old),
        "new": r.display(r.new),
        "findings": [_finding_json(r, f) for f in r.findings],
        "summary": r.counts(),
        "policy": (None if r.policy is None else {"ok": r.policy.ok, "summary": r.policy.summary}),
        "suppressed": [dict(_finding_json(r, f), reason=reason) for f, reason in r.suppressed],
    }
    return out


def render_json(r: Report) -> str:
    return json.dumps(report_dict(r), indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------------------------
# github workflow commands


def _esc_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _esc_prop(s: str) -> str:
    return _esc_data(s).replace(":", "%3A").replace(",", "%2C")


_LEVEL = {
    Severity.BREAKING: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
}


def render_github(r: Report) -> str:
    """Annotations on the new file's lines; removals on the nearest surviving declaration."""
    lines = []
    for f in r.findings:
        span = f.location
        props = []
        if span is not None:
            props = [
                f"file={_esc_prop(r.display(span.file))}",
                f"line={span.line}",
                f"col={span.col}",
            ]
            if f.new is not None and span.end_line >= span.line:
                props += [f"endLine={span.end_line}"]
        props.append(f"title={_esc_prop(f'{f.rule} {f.path}')}")
        msg = f.message
        if f.new is None and f.old is not None:
            msg = f"(removed; was at {r.loc(f.old)}) {msg}"
        lines.append(f"::{_LEVEL[f.severity]} {','.join(props)}::{_esc_data(msg)}")
    lines.append(f"idlgen diff: {r.verdict()}: {_counts_line(r)}")
    return "\n".join(lines) + "\n"


_RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
}


def render(r: Report, fmt: str) -> str:
    return _RENDERERS[fmt](r)
