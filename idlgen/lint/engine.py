"""Running the lint rules: which rules apply (``[tool.idlgen.lint]``), inline ignores, findings.

Configuration (``[tool.idlgen.lint]``), as buf lint's:

- ``use``: rule ids or categories to run instead of the defaults (``"DEFAULT"`` names the
  default set, ``"ALL"`` every rule);
- ``except``: rule ids or categories taken out of that set;
- ``ignore``: ``{RULE = ["glob", ...]}`` paths (relative to the config) where a rule is not run;
  ``"*"`` as the rule applies to every rule.

Inline: a comment line ``// idlgen:lint:ignore RULE reason`` directly above the declaration (or
among the comment lines directly above it) turns RULE off for that declaration; one line names
one rule.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import ir
from ..errors import ConfigError
from .rules import CATEGORIES, RULES, Rule

__all__ = ["LintConfig", "LintFinding", "lint_schema", "parse_config", "selected_rules"]

BY_ID = {r.id: r for r in RULES}


@dataclass(frozen=True)
class LintConfig:
    use: tuple[str, ...] = ("DEFAULT",)
    except_: tuple[str, ...] = ()
    ignore: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path.cwd)


@dataclass(frozen=True)
class LintFinding:
    rule: Rule
    message: str
    span: ir.Span | None


def _names(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    v = table.get(key, [])
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: [tool.idlgen.lint] {key} must be a list of rule ids")
    for name in v:
        _expand(name, where)
    return tuple(v)


def parse_config(table: Mapping[str, Any], base_dir: Path, where: str = "") -> LintConfig:
    """``[tool.idlgen.lint]`` checked: known keys, known rule ids and categories."""
    where = where or str(base_dir / "pyproject.toml")
    known = {"use", "except", "ignore"}
    unknown = sorted(set(table) - known)
    if unknown:
        import difflib

        hints = [
            f"'{k}'"
            + (
                f" (did you mean '{c[0]}'?)"
                if (c := difflib.get_close_matches(k, known, 1))
                else ""
            )
            for k in unknown
        ]
        raise ConfigError(f"{where}: unknown [tool.idlgen.lint] key(s): {', '.join(hints)}")
    ignore = table.get("ignore", {})
    if not isinstance(ignore, dict):
        raise ConfigError(f"{where}: [tool.idlgen.lint] ignore must be a table {{RULE = [globs]}}")
    ig: dict[str, tuple[str, ...]] = {}
    for rule, globs in ignore.items():
        if rule != "*":
            _expand(rule, where)
        if isinstance(globs, str):
            globs = [globs]
        if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise ConfigError(f"{where}: [tool.idlgen.lint] ignore.{rule} must be a list of globs")
        ig[rule] = tuple(globs)
    use = _names(table, "use", where) or ("DEFAULT",)
    return LintConfig(use, _names(table, "except", where), ig, base_dir)


def _expand(name: str, where: str) -> set[str]:
    """Rule ids named by ``name``: a rule id, a category, ``DEFAULT`` or ``ALL``."""
    if name == "ALL":
        return set(BY_ID)
    if name == "DEFAULT":
        return {r.id for r in RULES if r.default}
    if name in CATEGORIES:
        return {r.id for r in RULES if r.category == name}
    if name in BY_ID:
        return {name}
    import difflib

    close = difflib.get_close_matches(name, [*BY_ID, *CATEGORIES, "DEFAULT", "ALL"], 1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise ConfigError(f"{where}: unknown lint rule or category '{name}'{hint}")


def selected_rules(cfg: LintConfig) -> list[Rule]:
    ids: set[str] = set()
    for name in cfg.use:
        ids |= _expand(name, "lint")
    for name in cfg.except_:
        ids -= _expand(name, "lint")
    return [r for r in RULES if r.id in ids]


_IGNORE = re.compile(r"idlgen:lint:ignore\s+([A-Z0-9_]+)")
_COMMENT_LINE = re.compile(r"\s*(//|/\*|\*|///)")


def _inline_ignores(text: str) -> dict[int, set[str]]:
    """line -> rules ignored for the declaration starting on that line: every
    ``idlgen:lint:ignore RULE`` in the run of comment lines right above it."""
    lines = text.splitlines()
    out: dict[int, set[str]] = {}
    pending: set[str] = set()
    for k, line in enumerate(lines, start=1):
        m = _IGNORE.search(line)
        if m:
            pending.add(m.group(1))
            continue
        if pending and (not line.strip() or _COMMENT_LINE.match(line)):
            if not line.strip():
                pending = set()  # a blank line ends the run: the ignore is for what follows it
            continue
        if pending:
            out[k] = pending
            pending = set()
    return out


def _ignored_by_path(rule: str, path: str, cfg: LintConfig) -> bool:
    try:
        rel = Path(path).resolve().relative_to(cfg.base_dir.resolve()).as_posix()
    except ValueError:
        rel = Path(path).as_posix()
    for key in (rule, "*"):
        for g in cfg.ignore.get(key, ()):
            if fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel, g.rstrip("/") + "/*"):
                return True
    return False


def lint_schema(
    schema: ir.Schema,
    inputs: Iterable[str],
    sources: Mapping[str, str],
    cfg: LintConfig,
    rules: Sequence[Rule] | None = None,
) -> list[LintFinding]:
    """Findings for the files ``inputs`` (display paths) of ``schema``; imported files that
    were not asked for are not linted."""
    wanted = set(inputs)
    rules = selected_rules(cfg) if rules is None else rules
    out: list[LintFinding] = []
    for f in schema.files:
        if f.path not in wanted:
            continue
        ignores = _inline_ignores(sources.get(f.path, ""))
        for rule in rules:
            if rule.language != f.language or _ignored_by_path(rule.id, f.path, cfg):
                continue
            for finding in rule.check(f, schema):
                span = finding.span or _anchored(f.path, sources.get(f.path, ""), finding.anchor)
                if span is not None and rule.id in ignores.get(span.line, ()):
                    continue
                out.append(LintFinding(rule, finding.message, span))
    out.sort(key=lambda x: (_key(x.span), x.rule.id, x.message))
    return out


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _anchored(path: str, text: str, pattern: str) -> ir.Span | None:
    """The span of the first match of ``pattern`` in ``text`` outside comments (line 1 when
    there is none): file-level findings always point at a real line."""
    if not text:
        return None
    blank = _COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    m = re.search(pattern, blank) if pattern else None
    start, stop = (m.start(), m.end()) if m else (0, 1)
    line = blank.count("\n", 0, start) + 1
    col = start - (blank.rfind("\n", 0, start) + 1) + 1
    return ir.Span(path, line, col, line, col + max(stop - start, 1))


def _key(s: ir.Span | None) -> tuple[str, int, int]:
    return (s.file, s.line, s.col) if s else ("", 0, 0)
