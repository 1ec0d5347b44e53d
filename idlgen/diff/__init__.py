"""Schema version diff: wire-aware findings, version policy, reports (``idlgen diff``)."""

from __future__ import annotations

from .compare import compare
from .findings import Finding, Severity
from .rules import RULES, Rule

__all__ = ["compare", "Finding", "Severity", "RULES", "Rule"]
