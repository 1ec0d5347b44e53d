"""What to do with raw findings: HDI version policy, suppressions, baselines, the exit code.

Kept apart from ``compare`` so the findings stay a plain description of what changed, and
every acceptance of a change is explicit and explained (a suppression has a reason, a baseline
entry a fingerprint).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import ir
from ..errors import ConfigError
from .compare import hdi_package_base
from .findings import CATEGORIES, DEFAULT_BREAKING, Categories, Finding, Severity
from .rules import RULES

__all__ = [
    "ConfigError",
    "Suppression",
    "ReportPair",
    "DiffConfig",
    "VersionPolicy",
    "Outcome",
    "hdi_version_policy",
    "apply_acceptances",
    "load_baseline",
    "baseline_text",
    "exit_code",
    "FAIL_ON",
]

FAIL_ON = ("breaking", "warning", "info", "never")


@dataclass(frozen=True, slots=True)
class Suppression:
    """Accept findings of ``rule`` at ``path`` (both may use ``*`` / ``?`` globs)."""

    rule: str
    path: str
    reason: str

    def matches(self, f: Finding) -> bool:
        return fnmatch.fnmatchcase(f.rule, self.rule) and fnmatch.fnmatchcase(f.path, self.path)


@dataclass(frozen=True, slots=True)
class ReportPair:
    name: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class DiffConfig:
    suppress: tuple[Suppression, ...] = ()
    baseline: str | None = None
    policy: str = "auto"  # "auto": HDI version rules when versions are known; "none"
    reports: tuple[ReportPair, ...] = ()
    breaking: Categories = DEFAULT_BREAKING  # the categories whose breaks are breaking

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any]) -> DiffConfig:
        """Parse the ``[tool.idlgen.diff]`` table."""
        known = {"suppress", "baseline", "policy", "reports", "breaking"}
        unknown = sorted(set(cfg) - known)
        if unknown:
            import difflib

            hints = []
            for key in unknown:
                close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
                hints.append(f"'{key}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
            raise ConfigError(
                f"[tool.idlgen.diff]: unknown key(s) {', '.join(hints)}; "
                f"known: {', '.join(sorted(known))}"
            )
        sups = []
        for k, s in enumerate(cfg.get("suppress", ())):
            if not isinstance(s, Mapping):
                raise ConfigError(f"[tool.idlgen.diff] suppress[{k}]: expected a table")
            missing = [x for x in ("rule", "path", "reason") if not str(s.get(x, "")).strip()]
            if missing:
                raise ConfigError(
                    f"[tool.idlgen.diff] suppress[{k}]: missing {', '.join(missing)} "
                    "(a suppression names a rule id, an entity path and the reason)"
                )
            rule = str(s["rule"])
            if not any(fnmatch.fnmatchcase(r, rule) for r in RULES):
                raise ConfigError(f"[tool.idlgen.diff] suppress[{k}]: unknown rule id {rule!r}")
            sups.append(Suppression(rule, str(s["path"]), str(s["reason"])))
        policy = str(cfg.get("policy", "auto"))
        if policy not in ("auto", "none"):
            raise ConfigError(
                f"[tool.idlgen.diff] policy: expected 'auto' or 'none', got {policy!r}"
            )
        pairs = []
        for k, p in enumerate(cfg.get("reports", ())):
            if not isinstance(p, Mapping) or not all(
                isinstance(p.get(x), str) for x in ("name", "old", "new")
            ):
                raise ConfigError(
                    f"[tool.idlgen.diff] reports[{k}]: needs name, old and new strings"
                )
            pairs.append(ReportPair(p["name"], p["old"], p["new"]))
        baseline = cfg.get("baseline")
        if baseline is not None and not isinstance(baseline, str):
            raise ConfigError("[tool.idlgen.diff] baseline: expected a file name")
        return cls(tuple(sups), baseline, policy, tuple(pairs), _categories(cfg))


def _categories(cfg: Mapping[str, Any]) -> Categories:
    """``breaking = ["WIRE", "JSON"]``: known category names, kept in CATEGORIES order."""
    raw = cfg.get("breaking", list(DEFAULT_BREAKING))
    if not isinstance(raw, (list, tuple)) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(
            f"[tool.idlgen.diff] breaking: expected a list of categories ({', '.join(CATEGORIES)})"
        )
    unknown = sorted(set(raw) - set(CATEGORIES))
    if unknown:
        raise ConfigError(
            f"[tool.idlgen.diff] breaking: unknown categor{'y' if len(unknown) == 1 else 'ies'} "
            f"{', '.join(map(repr, unknown))} (known: {', '.join(CATEGORIES)})"
        )
    return tuple(c for c in CATEGORIES if c in raw)


# ----------------------------------------------------------------------------------------------
# HDI version policy


@dataclass(frozen=True, slots=True)
class VersionPolicy:
    """The verdict of the version rules; ``findings`` holds the violations (HDI-PKG-01/02)."""

    ok: bool
    summary: str
    findings: tuple[Finding, ...] = ()


def _versions(schema: ir.Schema) -> dict[str, tuple[tuple[int, int], ir.SchemaFile]]:
    out: dict[str, tuple[tuple[int, int], ir.SchemaFile]] = {}
    for f in schema.files:
        if f.language != "hdi" or f.version is None:
            continue
        base = hdi_package_base(f.namespace)
        if base not in out or f.version > out[base][0]:
            out[base] = (f.version, f)
    return out


def _v(v: tuple[int, int]) -> str:
    return f"v{v[0]}_{v[1]}"


def hdi_version_policy(
    old: ir.Schema, new: ir.Schema, findings: Sequence[Finding]
) -> VersionPolicy | None:
    """HDI rules: a minor (or no) bump must be compatible, breaking needs a major bump, and the
    version may not decrease. None when no HDI package is on both sides."""
    vo, vn = _versions(old), _versions(new)
    common = sorted(set(vo) & set(vn))
    if not common:
        return None
    breaking = [
        f for f in findings if f.severity is Severity.BREAKING and f.rule.startswith("HDI-")
    ]
    violations: list[Finding] = []
    notes: list[str] = []
    for base in common:
        (a, fa), (b, fb) = vo[base], vn[base]

        def violation(rule_id: str, message: str, cats: Categories = ("WIRE",)) -> Finding:
            return Finding(
                rule_id,
                Severity.BREAKING,
                base,
                message,
                fa.span,
                fb.span,
                f"package {fa.namespace};",
                f"package {fb.namespace};",
                categories=cats,
            )

        if b < a:
            violations.append(violation("HDI-PKG-02", f"version decreased from {_v(a)} to {_v(b)}"))
            notes.append(f"{base}: {_v(a)} → {_v(b)} decreased")
        elif b[0] > a[0]:
            notes.append(f"{base}: major bump {_v(a)} → {_v(b)} permits breaking changes")
        elif breaking:
            bump = "a minor bump" if b != a else "no version bump"
            violations.append(
                violation(
                    "HDI-PKG-01",
                    f"{len(breaking)} breaking change(s) with {bump} ({_v(a)} → {_v(b)}); "
                    "breaking changes need a new major version",
                    # what the breaking changes break
                    tuple(c for c in CATEGORIES if any(c in f.categories for f in breaking)),
                )
            )
            notes.append(f"{base}: {_v(a)} → {_v(b)} has breaking changes without a major bump")
        else:
            kind = "minor bump" if b != a else "same version"
            notes.append(f"{base}: {kind} {_v(a)} → {_v(b)} is compatible")
    return VersionPolicy(not violations, "; ".join(notes), tuple(violations))


# ----------------------------------------------------------------------------------------------
# suppressions and baselines


@dataclass
class Outcome:
    """Findings after policy and acceptances. ``active`` decide the exit code."""

    active: list[Finding]
    suppressed: list[tuple[Finding, str]] = field(default_factory=list)
    policy: VersionPolicy | None = None


def apply_acceptances(
    findings: Iterable[Finding],
    suppressions: Sequence[Suppression] = (),
    baseline: frozenset[str] = frozenset(),
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    active: list[Finding] = []
    suppressed: list[tuple[Finding, str]] = []
    for f in findings:
        s = next((s for s in suppressions if s.matches(f)), None)
        if s is not None:
            suppressed.append((f, s.reason))
        elif f.fingerprint in baseline:
            suppressed.append((f, "in baseline"))
        else:
            active.append(f)
    return active, suppressed


def load_baseline(path: Path) -> frozenset[str]:
    """Fingerprints accepted by a baseline file (written by ``--update-baseline``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"baseline file {path} does not exist (create it with --update-baseline)")
    except (OSError, ValueError) as e:
        raise ConfigError(f"baseline file {path}: {e}") from None
    rows = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and isinstance(r.get("fingerprint"), str) for r in rows
    ):
        raise ConfigError(
            f'baseline file {path}: expected {{"findings": [{{"fingerprint": ...}}]}}'
        )
    return frozenset(r["fingerprint"] for r in rows)


def baseline_text(findings: Iterable[Finding]) -> str:
    rows = sorted(
        (
            {
                "fingerprint": f.fingerprint,
                "rule": f.rule,
                "path": f.path,
                "message": f.message,
            }
            for f in findings
        ),
        key=lambda r: (r["path"], r["rule"], r["fingerprint"]),
    )
    return json.dumps({"version": 1, "findings": rows}, indent=2, ensure_ascii=False) + "\n"


def exit_code(active: Iterable[Finding], fail_on: str) -> int:
    """1 when an active finding is at or above ``fail_on`` (contract), else 0."""
    if fail_on == "never":
        return 0
    threshold = Severity(fail_on).rank
    return 1 if any(f.severity.rank >= threshold for f in active) else 0
