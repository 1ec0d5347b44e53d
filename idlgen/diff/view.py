"""The report object templates see (``report`` in every diff template, built-in or ``--template``).

Plain frozen values only: a template can read them but not reach the compiler's internals (the
sandbox forbids private attributes and mutation). The README's "Report template fields"
section documents these names; keep the two in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..ir import Span
from .findings import Finding, Severity
from .policy import VersionPolicy
from .rules import RULES

__all__ = ["Loc", "FindingView", "RuleView", "PolicyView", "ReportView", "build_view"]


@dataclass(frozen=True, slots=True)
class Loc:
    """A source location; prints as ``file:line:col``."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class FindingView:
    rule: str
    rule_name: str
    severity: str
    categories: tuple[str, ...]
    path: str
    message: str
    old: Loc | None
    new: Loc | None
    anchor: Loc | None
    location: Loc | None
    old_decl: str
    new_decl: str
    fingerprint: str
    removed: bool
    reason: str
    cause: str = ""  # the root cause's entity path when this finding follows from another one
    follows: int = 0  # how many findings follow from this one (a root cause)

    @property
    def breaks(self) -> str:
        """``JSON, SOURCE``: what the change breaks ("" when nothing)."""
        return ", ".join(self.categories)

    @property
    def breaks_note(self) -> str:
        """`` [breaks JSON, SOURCE]`` after a one-line message ("" when nothing)."""
        return f" [breaks {self.breaks}]" if self.categories else ""

    @property
    def cause_note(self) -> str:
        """`` (follows from Type.member)`` / `` (root cause of 5 more)`` ("" when neither)."""
        if self.cause:
            return f" (follows from {self.cause})"
        if self.follows:
            return f" (root cause of {self.follows} more)"
        return ""


@dataclass(frozen=True, slots=True)
class RuleView:
    id: str
    name: str
    severity: str
    categories: tuple[str, ...]
    why: str


@dataclass(frozen=True, slots=True)
class PolicyView:
    ok: bool
    summary: str


@dataclass(frozen=True, slots=True)
class ReportView:
    old: str
    new: str
    old_arg: str
    new_arg: str
    verdict: str
    counts: Mapping[str, int]
    findings: Sequence[FindingView]
    breaking: Sequence[FindingView]
    warnings: Sequence[FindingView]
    infos: Sequence[FindingView]
    suppressed: Sequence[FindingView]
    policy: PolicyView | None
    rules: Sequence[RuleView]


def _verdict(counts: Mapping[str, int]) -> str:
    if counts["breaking"]:
        return "breaking changes"
    if counts["warning"]:
        return "compatible on the wire, with warnings"
    if counts["info"]:
        return "compatible"
    return "no changes"


def build_view(
    old: str,
    new: str,
    findings: Sequence[Finding],
    suppressed: Sequence[tuple[Finding, str]],
    policy: VersionPolicy | None,
    display: Callable[[str], str],
) -> ReportView:
    """``findings``/``suppressed`` must already be in report order."""
    shown: dict[str, str] = {}  # a report names few files, many times

    def loc(span: Span | None) -> Loc | None:
        if span is None:
            return None
        name = shown.get(span.file)
        if name is None:
            name = shown[span.file] = display(span.file)
        return Loc(name, span.line, span.col, span.end_line, span.end_col)

    root_path = {f.fingerprint: f.path for f in findings if not f.cause}
    for f, _ in suppressed:
        root_path.setdefault(f.fingerprint, f.path)
    follows: dict[str, int] = {}
    for f in findings:
        if f.cause in root_path:
            follows[f.cause] = follows.get(f.cause, 0) + 1

    def view(f: Finding, reason: str = "") -> FindingView:
        return FindingView(
            rule=f.rule,
            rule_name=RULES[f.rule].name if f.rule in RULES else "",
            severity=f.severity.value,
            categories=f.categories,
            path=f.path,
            message=f.message,
            old=loc(f.old),
            new=loc(f.new),
            anchor=loc(f.anchor),
            location=loc(f.location),
            old_decl=f.old_decl,
            new_decl=f.new_decl,
            fingerprint=f.fingerprint,
            removed=f.new is None and f.old is not None,
            reason=reason,
            cause=root_path.get(f.cause, "") if f.cause else "",
            follows=0 if f.cause else follows.get(f.fingerprint, 0),
        )

    fs = tuple(view(f) for f in findings)
    counts = {s.value: 0 for s in Severity}
    for f in findings:
        counts[f.severity.value] += 1
    used = sorted({f.rule for f in findings} | {f.rule for f, _ in suppressed})
    return ReportView(
        old=display(old),
        new=display(new),
        old_arg=old,
        new_arg=new,
        verdict=_verdict(counts),
        counts=counts,
        findings=fs,
        breaking=tuple(f for f in fs if f.severity == "breaking"),
        warnings=tuple(f for f in fs if f.severity == "warning"),
        infos=tuple(f for f in fs if f.severity == "info"),
        suppressed=tuple(view(f, reason) for f, reason in suppressed),
        policy=None if policy is None else PolicyView(policy.ok, policy.summary),
        rules=tuple(
            RuleView(
                rid,
                RULES[rid].name,
                RULES[rid].severity.value,
                RULES[rid].categories,
                RULES[rid].why,
            )
            for rid in used
            if rid in RULES
        ),
    )
