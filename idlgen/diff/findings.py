"""The raw result of a schema comparison: one ``Finding`` per change, before any policy."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from ..ir import Span

__all__ = [
    "Severity",
    "Finding",
    "Category",
    "Categories",
    "CATEGORIES",
    "DEFAULT_BREAKING",
    "report_order",
    "resolve_causes",
]

# What a change breaks: WIRE (the bytes), JSON (FlatBuffers JSON and ``to_dict`` names), SOURCE
# (the generated Python API). ``[tool.idlgen.diff] breaking`` selects which are breaking.
Category = Literal["WIRE", "JSON", "SOURCE"]
Categories = tuple[Category, ...]
CATEGORIES: Categories = ("WIRE", "JSON", "SOURCE")
DEFAULT_BREAKING: Categories = ("WIRE",)


class Severity(str, enum.Enum):
    """Contract severities; ``rank`` orders them for thresholds (higher = worse)."""

    BREAKING = "breaking"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"breaking": 3, "warning": 2, "info": 1}[self.value]


@dataclass(frozen=True, slots=True)
class Finding:
    """One change between two schema versions.

    ``path`` is the entity (``Type``, ``Type.member``, ``Interface.Method.param``); ``old``/``new``
    locate it on each side (``None`` when it does not exist there). ``old_decl``/``new_decl`` are
    normalised declaration texts for side-by-side display, and also the decl identity that the
    fingerprint hashes, so a fingerprint survives moving lines around. ``anchor`` is where a
    removal is annotated in the new file (the nearest surviving declaration).
    """

    rule: str
    severity: Severity
    path: str
    message: str
    old: Span | None = None
    new: Span | None = None
    old_decl: str = ""
    new_decl: str = ""
    anchor: Span | None = field(default=None, compare=False)
    categories: Categories = ()  # what the change breaks, in CATEGORIES order
    # The root cause's fingerprint when this finding only follows from another one (a slot or
    # command id shifted by an inserted member), else "".
    cause: str = ""

    @property
    def fingerprint(self) -> str:
        text = "\x1f".join((self.rule, self.path, self.old_decl, self.new_decl))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def location(self) -> Span | None:
        """Where to point in the new version: the entity itself, else the nearest survivor."""
        return self.new or self.anchor

    def under(self, breaking: Collection[str]) -> Finding:
        """This finding with the severity that ``breaking`` (the categories whose breaks are
        breaking) gives it: breaking when it breaks one of them, a warning when it breaks only
        others, else its own severity (a warning when meaning changes, info when compatible)."""
        if any(c in breaking for c in self.categories):
            sev = Severity.BREAKING
        elif self.categories:
            sev = Severity.WARNING
        else:  # breaks nothing (every breaking rule names a category; tests keep it so)
            return self
        return self if sev is self.severity else replace(self, severity=sev)

    def sort_key(self) -> tuple[int, str, str, str]:
        return (-self.severity.rank, self.path, self.rule, self.message)


def resolve_causes(findings: Iterable[Finding]) -> list[Finding]:
    """While comparing, ``cause`` holds the root cause's entity path; here it becomes that
    finding's fingerprint (the most severe finding at the path that has no cause itself), or ""
    when no such finding exists."""
    items = list(findings)
    roots: dict[str, Finding] = {}
    for f in sorted((f for f in items if not f.cause), key=Finding.sort_key):
        roots.setdefault(f.path, f)
    out = []
    for f in items:
        if f.cause:
            root = roots.get(f.cause)
            f = replace(f, cause=root.fingerprint if root is not None and root is not f else "")
        out.append(f)
    return out


def report_order(findings: Iterable[Finding]) -> list[Finding]:
    """Report order: findings that follow from one root cause are listed right after it (by
    entity path), and the group stands where its most severe finding would; everything else
    most severe first, then by entity path, rule and message."""
    items = sorted(findings, key=Finding.sort_key)
    present = {f.fingerprint for f in items}
    children: dict[str, list[Finding]] = {}
    for f in items:
        if f.cause and f.cause in present:
            children.setdefault(f.cause, []).append(f)

    def group_key(root: Finding) -> tuple[int, str, str, str]:
        rank = max(
            [root.severity.rank] + [c.severity.rank for c in children.get(root.fingerprint, [])]
        )
        return (-rank,) + root.sort_key()[1:]

    roots = [f for f in items if not (f.cause and f.cause in present)]
    out: list[Finding] = []
    for root in sorted(roots, key=group_key):
        out.append(root)
        # pop: a fingerprint shared by two roots gets its group once
        out += sorted(children.pop(root.fingerprint, []), key=lambda c: (c.path, c.sort_key()))
    return out
