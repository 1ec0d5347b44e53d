"""SARIF 2.1.0 logs (GitHub code scanning) from generic results: diff findings, diagnostics.

The API is deliberately small so every command shares it::

    log = sarif_log("idlgen", __version__, {"HDI-M-02": "one-line description", ...}, results)
    text = dumps(log)

One run; ``tool.driver.rules`` lists the given rule ids (sorted) with their descriptions and
each result refers to its rule by ``ruleId`` and ``ruleIndex``. File names below the working
directory are written relative to it (``uriBaseId`` ``%SRCROOT%``, percent-encoded), so the log
is the same on every machine; a file outside it gets an absolute ``file:`` URI.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .diagnostics import Diagnostic, Severity
from .escaping import visible_surrogates

__all__ = [
    "SARIF_SCHEMA",
    "SarifLocation",
    "SarifResult",
    "artifact_location",
    "diagnostics_sarif",
    "dumps",
    "sarif_log",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
Level = Literal["error", "warning", "note", "none"]
_SRCROOT = "%SRCROOT%"
_LEVEL: dict[Severity, Level] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.NOTE: "note",
}


@dataclass(frozen=True, slots=True)
class SarifLocation:
    """1-based line/column; ``end_col`` is exclusive (as SARIF's ``endColumn``)."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None


@dataclass(frozen=True, slots=True)
class SarifResult:
    rule_id: str
    level: Level
    message: str
    location: SarifLocation | None = None
    # What the result is about, e.g. the entity path ``Type.member`` of a diff finding.
    logical_name: str | None = None
    # Stable identity across runs (code scanning matches alerts by it).
    fingerprint: str | None = None


def artifact_location(path: str, base: Path | None = None) -> dict[str, str]:
    """``path`` relative to ``base`` (default: the working directory), percent-encoded with
    forward slashes; a path outside ``base`` becomes an absolute ``file:`` URI."""
    root = Path(os.path.normpath((base or Path.cwd()).resolve()))
    p = Path(path)
    absolute = Path(os.path.normpath(p if p.is_absolute() else root / p))
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    # os.fsencode: a name that is not UTF-8 (surrogate-escaped) is quoted as its real bytes.
    return {"uri": urllib.parse.quote(os.fsencode(rel.as_posix()), safe="/"), "uriBaseId": _SRCROOT}


def message_text(s: str) -> str:
    """SARIF plain-text message: literal ``[``/``]`` (and ``\\``) are escaped so they cannot
    form an embedded link (SARIF 2.1.0 §3.11.6)."""
    return s.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _region(loc: SarifLocation) -> dict[str, int]:
    region = {"startLine": max(loc.line, 1), "startColumn": max(loc.col, 1)}
    end_line, end_col = loc.end_line, loc.end_col
    if end_line is not None and end_line >= loc.line:
        region["endLine"] = end_line
        if end_col is not None and (end_line > loc.line or end_col > loc.col):
            region["endColumn"] = end_col
    return region


def _result(r: SarifResult, index: Mapping[str, int], base: Path | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": r.rule_id,
        "level": r.level,
        "message": {"text": message_text(r.message)},
    }
    if r.rule_id in index:
        out["ruleIndex"] = index[r.rule_id]
    loc: dict[str, Any] = {}
    if r.location is not None:
        loc["physicalLocation"] = {
            "artifactLocation": artifact_location(r.location.file, base),
            "region": _region(r.location),
        }
    if r.logical_name:
        loc["logicalLocations"] = [{"fullyQualifiedName": r.logical_name}]
    if loc:
        out["locations"] = [loc]
    if r.fingerprint:
        out["partialFingerprints"] = {"idlgenFingerprint/v1": r.fingerprint}
    return out


def sarif_log(
    tool_name: str,
    version: str,
    rules: Mapping[str, str],
    results: Iterable[SarifResult],
    *,
    information_uri: str | None = None,
    base: Path | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log object with one run (``json.dumps``-ready)."""
    ids = sorted(rules)
    index = {rid: k for k, rid in enumerate(ids)}
    driver: dict[str, Any] = {
        "name": tool_name,
        "version": version,
        "semanticVersion": version,
        "rules": [{"id": rid, "shortDescription": {"text": rules[rid]}} for rid in ids],
    }
    if information_uri:
        driver["informationUri"] = information_uri
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": [_result(r, index, base) for r in results],
            }
        ],
    }


def diagnostics_sarif(
    diags: Iterable[Diagnostic], version: str, *, base: Path | None = None
) -> dict[str, Any]:
    """Schema diagnostics as a SARIF log; one rule per diagnostic code that occurs."""
    rules: dict[str, str] = {}
    results: list[SarifResult] = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        rules.setdefault(d.code, d.code)
        text = "\n".join(
            [d.message, *(f"help: {h}" for h in d.help), *(f"note: {n}" for n in d.notes)]
        )
        loc = None
        if d.span is not None:
            s = d.span
            loc = SarifLocation(s.file, s.line, s.col, s.end_line, s.end_col)
        results.append(SarifResult(d.code, _LEVEL[d.severity], text, loc))
    return sarif_log("idlgen", version, rules, results, base=base)


def _clean(v: Any) -> Any:
    if isinstance(v, str):
        return visible_surrogates(v)
    if isinstance(v, Mapping):
        return {_clean(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def dumps(log: Mapping[str, Any]) -> str:
    text = json.dumps(log, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # rare: only then walk the log
        text = json.dumps(_clean(log), indent=2, ensure_ascii=False) + "\n"
    return text
