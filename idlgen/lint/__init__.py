"""``idlgen lint``: style rules for HDI and FlatBuffers schemas, separate from validity."""

from .engine import LintConfig, LintFinding, lint_schema, parse_config, selected_rules
from .rules import CATEGORIES, RULES, Rule

__all__ = [
    "CATEGORIES",
    "RULES",
    "LintConfig",
    "LintFinding",
    "Rule",
    "lint_schema",
    "parse_config",
    "selected_rules",
]
