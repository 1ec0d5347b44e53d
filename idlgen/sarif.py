"""SARIF 2.1.0 logs (for GitHub code scanning): one run, rule ids = diagnostic codes.

``sarif_log`` is the shared core: any producer (schema diagnostics here, diff findings in
:mod:`idlgen.diff`) passes its rules and results and gets a dict ready for ``json.dumps``.
Locations are made relative to the working directory (``%SRCROOT%``) where possible, which is
what code scanning resolves against the repository checkout.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .diagnostics import Diagnostic, Severity

__all__ = ["SCHEMA_URI", "sarif_log", "artifact_location", "diagnostics_sarif", "region"]

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_SRCROOT = "%SRCROOT%"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def artifact_location(path: str, cwd: Path | None = None) -> dict[str, str]:
    """``path`` relative to ``cwd`` (URI-escaped, forward slashes), else an absolute file URI."""
    base = (cwd or Path.cwd()).resolve()
    p = Path(path)
    absolute = p if p.is_absolute() else base / p
    try:
        rel = Path(os.path.normpath(absolute)).relative_to(base)
    except ValueError:
        return {"uri": Path(os.path.normpath(absolute)).as_uri()}
    return {"uri": quote(rel.as_posix()), "uriBaseId": _SRCROOT}


def region(
    line: int, col: int, end_line: int | None = None, end_col: int | None = None
) -> dict[str, int]:
    r = {"startLine": max(line, 1), "startColumn": max(col, 1)}
    if end_line is not None and end_col is not None and (end_line, end_col) > (line, col):
        r["endLine"] = end_line
        r["endColumn"] = end_col
    return r


def sarif_log(
    tool_name: str,
    version: str,
    rules: Sequence[Mapping[str, Any]],
    results: Iterable[Mapping[str, Any]],
    *,
    cwd: Path | None = None,
    information_uri: str | None = None,
) -> dict[str, Any]:
    """A complete SARIF log with one run.

    ``rules`` are reportingDescriptor objects (at least ``id``); each result names its rule by
    ``ruleId`` and gets the matching ``ruleIndex`` filled in here.
    """
    index = {r["id"]: i for i, r in enumerate(rules)}
    out_results = []
    for res in results:
        r = dict(res)
        if r.get("ruleId") in index:
            r["ruleIndex"] = index[r["ruleId"]]
        out_results.append(r)
    driver: dict[str, Any] = {
        "name": tool_name,
        "version": version,
        "rules": [dict(r) for r in rules],
    }
    if information_uri:
        driver["informationUri"] = information_uri
    base = (cwd or Path.cwd()).resolve()
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {_SRCROOT: {"uri": base.as_uri() + "/"}},
                "results": out_results,
            }
        ],
    }


def _message(d: Diagnostic) -> str:
    extra = [f"help: {h}" for h in d.help] + [f"note: {n}" for n in d.notes]
    return "\n".join([d.message, *extra])


def diagnostics_sarif(
    diags: Iterable[Diagnostic], version: str, *, cwd: Path | None = None
) -> dict[str, Any]:
    """Schema diagnostics as a SARIF log; one rule per diagnostic code that occurs."""
    ordered = sorted(diags, key=Diagnostic.sort_key)
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for d in ordered:
        level = _LEVEL[d.severity]
        rules.setdefault(
            d.code,
            {"id": d.code, "name": d.code, "defaultConfiguration": {"level": level}},
        )
        res: dict[str, Any] = {"ruleId": d.code, "level": level, "message": {"text": _message(d)}}
        if d.span is not None:
            s = d.span
            res["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact_location(s.file, cwd),
                        "region": region(s.line, s.col, s.end_line, s.end_col),
                    }
                }
            ]
        results.append(res)
    return sarif_log("idlgen", version, [rules[k] for k in sorted(rules)], results, cwd=cwd)
