"""The ``lint`` subcommand: ``idlgen lint [INPUT ...] [--format text|json|github|sarif]``.

Exit 0 when nothing fires, 1 on findings (or schema errors, printed as the other commands print
them), 2 on usage or configuration errors."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, Diagnostics, Severity, render_all, render_github
from ..errors import ConfigError
from ..escaping import log_json, log_text
from .engine import LintFinding, lint_schema, parse_config, selected_rules
from .rules import RULES

__all__ = ["add_parser", "run"]

FORMATS = ("text", "json", "github", "sarif")


def add_parser(sub: Any, doc: Callable[[str, str], dict[str, Any]]) -> None:
    p = sub.add_parser(
        "lint",
        help="check schema style (naming, enums, packages, comments, fields, methods)",
        **doc(
            "Style rules, separate from validity. Configure with [tool.idlgen.lint] use / except "
            "/ ignore; turn a rule off for one declaration with a comment line "
            "'// idlgen:lint:ignore RULE reason' above it. Exit 1 on findings.",
            "  idlgen lint                       # the configured inputs\n"
            "  idlgen lint schemas/hdi --root ohos.hdi:schemas/hdi --format github\n"
            "  idlgen lint --list-rules",
        ),
    )
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="schema files or directories")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                   help="add an include/import search directory")  # fmt: skip
    p.add_argument("--root", dest="roots", action="append", default=[], metavar="PREFIX:DIR",
                   help="map an HDI package prefix to a directory (like hdi-gen -r)")  # fmt: skip
    p.add_argument("--config", type=Path, help="pyproject.toml to read [tool.idlgen] from")
    p.add_argument("--format", dest="diag_format", choices=FORMATS, default="text",
                   help="output format (default: text)")  # fmt: skip
    p.add_argument("--list-rules", action="store_true",
                   help="print every rule: id, category, default, why")  # fmt: skip


def _diagnostic(f: LintFinding) -> Diagnostic:
    return Diagnostic(Severity.WARNING, f.rule.id, f.message, f.span, help=(f.rule.why,))


def run(args: argparse.Namespace, version: str) -> int:
    from ..config import load_config
    from ..frontend import load
    from ..frontend.inputs import expand_inputs

    if args.list_rules:
        for r in RULES:
            flag = "default" if r.default else "opt-in"
            print(f"{r.id:36} {r.category:9} {flag:8} {r.why}")
        return 0
    cfg = load_config(args.config, inputs=args.inputs, roots=args.roots, include=args.include)
    if not cfg.inputs:
        raise ConfigError("lint needs schema files or directories, or [tool.idlgen] inputs")
    lint_cfg = parse_config(cfg.lint, cfg.base_dir, str(cfg.source or ""))
    diags = Diagnostics()
    inputs = expand_inputs(cfg.inputs, diags)
    if diags.has_errors:
        _print(diags, {}, args.diag_format, version, {})
        return 1
    lr = load(inputs, roots=cfg.roots, include_dirs=cfg.include)
    if lr.diagnostics.has_errors:
        _print(lr.diagnostics, lr.sources, args.diag_format, version, {})
        return 1
    rules = selected_rules(lint_cfg)
    findings = lint_schema(lr.schema, lr.inputs, lr.sources, lint_cfg, rules)
    if args.diag_format == "json":
        rows = [
            {
                "rule": f.rule.id,
                "category": f.rule.category,
                "message": f.message,
                "file": f.span.file if f.span else None,
                "line": f.span.line if f.span else None,
                "col": f.span.col if f.span else None,
            }
            for f in findings
        ]
        print(log_json(json.dumps(rows, indent=2)))
    else:
        why = {r.id: f"{r.category}: {r.why}" for r in rules}
        _print(
            Diagnostics(_diagnostic(f) for f in findings),
            lr.sources,
            args.diag_format,
            version,
            why,
        )
        if args.diag_format == "text":
            print(
                f"idlgen lint: {len(findings)} finding(s) in {len(lr.inputs)} file(s)",
                file=sys.stderr,
            )
    return 1 if findings else 0


def _print(
    diags: Diagnostics, sources: dict[str, str], fmt: str, version: str, why: dict[str, str]
) -> None:
    if fmt == "sarif":
        from ..sarif import diagnostics_sarif, dumps

        log = diagnostics_sarif(diags, version)
        for rule in log["runs"][0]["tool"]["driver"].get("rules", []):
            if rule.get("id") in why:
                rule["shortDescription"] = {"text": why[rule["id"]]}
        print(log_json(dumps(log)), end="")
    elif fmt == "json":
        from ..diagnostics import to_json

        print(log_json(to_json(diags)))
    elif fmt == "github":
        if diags:
            print(log_text(render_github(diags), own_commands=True))
    elif diags:
        print(log_text(render_all(diags, sources)), file=sys.stderr)
