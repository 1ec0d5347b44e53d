"""Render a diff outcome: ``text``, ``markdown`` (PR comment), ``json`` (contract), ``github``,
``sarif`` (code scanning).

Text, markdown and GitHub output are Jinja templates under ``templates/diff/`` rendered in a
sandbox that escapes schema text for the output context (:mod:`idlgen.diff.templating`); JSON
is a plain data dump. All renderers are pure functions of the ``Report`` and sort findings the same way (most severe
first, then entity path, rule, message), so re-running on the same inputs gives the same bytes
and a PR comment does not churn. File names pass through ``Report.display`` (relative paths,
``REF:path`` for ``--against``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..ir import Span
from ..sarif import Level, SarifLocation, SarifResult, dumps, sarif_log
from .findings import Finding, Severity, report_order
from .policy import VersionPolicy
from .rules import RULES
from .templating import render_builtin, render_user
from .view import ReportView, build_view

__all__ = [
    "Report",
    "render",
    "FORMATS",
    "render_text",
    "render_markdown",
    "render_json",
    "render_github",
    "render_sarif",
]

FORMATS = ("text", "markdown", "json", "github", "sarif")
# GitHub rejects comments of 65536 characters or more: long tables are cut (counts stay exact).
MAX_MARKDOWN_CHARS = 65_536
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
        self.findings = report_order(self.findings)
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
        return self.view().verdict

    def view(self) -> ReportView:
        """What templates see as ``report``."""
        return build_view(
            self.old, self.new, self.findings, self.suppressed, self.policy, self.display
        )

    def render_template(self, path: Path) -> str:
        """A user's template (``idlgen diff --template FILE``) over the same ``report``."""
        return render_user(path, report=self.view())


def _limits(view: ReportView, full: bool) -> dict[str, int]:
    sizes = {
        "breaking": len(view.breaking),
        "warning": len(view.warnings),
        "info": len(view.infos),
        "suppressed": len(view.suppressed),
    }
    if full:
        return sizes
    caps = {"breaking": MAX_BREAKING_ROWS}
    return {k: min(n, caps.get(k, MAX_COLLAPSED_ROWS)) for k, n in sizes.items()}


def render_text(r: Report) -> str:
    return render_builtin("report.txt.j2", "text", report=r.view())


def render_markdown(r: Report, *, full: bool = False) -> str:
    """The PR-comment report; ``full`` lists every row (committed reports). Otherwise tables are
    cut (with an exact count of the rows left out) until the comment fits GitHub's limit."""
    view = r.view()
    limits = _limits(view, full)
    while True:
        out = render_builtin("report.md.j2", "markdown", report=view, limits=limits)
        out = out.rstrip("\n") + "\n"
        if full or len(out) < MAX_MARKDOWN_CHARS or not any(limits.values()):
            return out
        # Scale every table down in proportion to the excess; always drop at least one row.
        scale = MAX_MARKDOWN_CHARS * 0.9 / len(out)
        limits = {k: max(0, min(n - 1, int(n * scale))) for k, n in limits.items()}


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
        "categories": list(f.categories),
        "path": f.path,
        "message": f.message,
        "old": _loc_json(r, f.old),
        "new": _loc_json(r, f.new),
        "fingerprint": f.fingerprint,
        "old_decl": f.old_decl or None,
        "new_decl": f.new_decl or None,
        "cause": f.cause or None,
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


def render_github(r: Report) -> str:
    """Annotations on the new file's lines; removals on the nearest surviving declaration."""
    return render_builtin("report.github.j2", "github", report=r.view())


# ----------------------------------------------------------------------------------------------
# sarif (GitHub code scanning)

_SARIF_LEVEL: dict[str, Level] = {"breaking": "error", "warning": "warning", "info": "note"}


def sarif_dict(r: Report) -> dict[str, Any]:
    """One SARIF run: the rules that occur, one result per (unsuppressed) finding at its new
    location (a removal at the nearest surviving declaration)."""
    results = []
    view = r.view()
    for f in view.findings:
        at = f.location
        msg = f"{f.path}: {f.message}"
        if f.removed:
            msg = f"{f.path}: (removed; was at {f.old}) {f.message}"
        msg += f.breaks_note + f.cause_note
        results.append(
            SarifResult(
                rule_id=f.rule,
                level=_SARIF_LEVEL[f.severity],
                message=msg,
                location=(
                    None
                    if at is None
                    else SarifLocation(at.file, at.line, at.col, at.end_line, at.end_col)
                ),
                logical_name=f.path,
                fingerprint=f.fingerprint,
            )
        )
    used = {f.rule for f in view.findings}
    rules = {rid: f"{RULES[rid].name}: {RULES[rid].why}" for rid in used if rid in RULES}
    log = sarif_log("idlgen", __version__, rules, results)
    # What each finding (and each rule by default) breaks, as SARIF property bags.
    run = log["runs"][0]
    for res, raw in zip(run["results"], r.findings):  # view.findings follow r.findings
        res["properties"] = {"categories": list(raw.categories)}
        if raw.cause:
            res["properties"]["cause"] = raw.cause  # the root cause's fingerprint
    for desc in run["tool"]["driver"]["rules"]:
        desc["properties"] = {"categories": list(RULES[desc["id"]].categories)}
    return log


def render_sarif(r: Report) -> str:
    return dumps(sarif_dict(r))


_RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}


def render(r: Report, fmt: str) -> str:
    return _RENDERERS[fmt](r)
