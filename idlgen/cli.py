"""The ``idlgen`` command line: build, check, parse, diff, version.

Exit codes: 0 success, 1 findings (schema errors, stale output, breaking changes), 2 usage or
configuration error, 123 internal error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .config import Config, ConfigError, load_config
from .diagnostics import Diagnostics, render_all, render_github, to_json

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 123


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits with 2 already; keep its wording
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(p: argparse.ArgumentParser, *, inputs: bool = True) -> None:
    if inputs:
        p.add_argument("inputs", nargs="*", metavar="INPUT", help="schema files or directories")
    p.add_argument(
        "-I",
        dest="include",
        action="append",
        default=[],
        metavar="DIR",
        help="add an include/import search directory",
    )
    p.add_argument(
        "--root",
        dest="roots",
        action="append",
        default=[],
        metavar="PREFIX:DIR",
        help="map an HDI package prefix to a directory (like hdi-gen -r)",
    )
    p.add_argument("--config", type=Path, help="pyproject.toml to read [tool.idlgen] from")
    p.add_argument(
        "--format",
        dest="diag_format",
        choices=["text", "github", "json"],
        default="text",
        help="how diagnostics are printed",
    )


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="idlgen", description="HDI and FlatBuffers schemas to typed Python.")
    p.add_argument("--version", action="version", version=_version_text())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    b = sub.add_parser("build", help="parse, check and generate the Python package")
    _common(b)
    b.add_argument("--out", help="output root package directory")
    b.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    b.add_argument("-v", "--verbose", action="store_true", help="list every file written")
    c = sub.add_parser("check", help="exit 1 if the generated output is not up to date")
    _common(c)
    c.add_argument("--out", help="output root package directory")
    c.add_argument("--diff", action="store_true", help="print unified diffs of stale files")
    pa = sub.add_parser("parse", help="parse and check only; print diagnostics or the IR")
    _common(pa)
    pa.add_argument("--json", action="store_true", help="print the schema IR as JSON")
    d = sub.add_parser("diff", help="compare two versions of a schema")
    diff_cli = _diff_cli()
    if diff_cli is not None:
        diff_cli.add_arguments(d)
    sub.add_parser("version", help="print idlgen's and its formatter's versions")
    sub.add_parser("run", help="import an ONNX/TFLite model and run it with NumPy", add_help=False)
    return p


def _diff_cli() -> Any:
    try:
        return importlib.import_module("idlgen.diff.cli")
    except ModuleNotFoundError:
        return None


def _version_text() -> str:
    from importlib.metadata import version

    deps = ", ".join(f"{d} {version(d)}" for d in ("lark", "jinja2", "black"))
    return f"idlgen {__version__} ({deps})"


def _print_diags(diags: Diagnostics, sources: dict[str, str], fmt: str) -> None:
    if not diags:
        return
    if fmt == "github":
        print(render_github(diags))
    elif fmt == "json":
        print(to_json(diags))
    else:
        print(render_all(diags, sources), file=sys.stderr)
        errors = sum(d.is_error for d in diags)
        warnings = len(diags) - errors
        print(f"idlgen: {errors} error(s), {warnings} warning(s)", file=sys.stderr)


def _config(args: argparse.Namespace) -> Config:
    return load_config(
        args.config,
        inputs=getattr(args, "inputs", []) or [],
        out=getattr(args, "out", None),
        roots=args.roots,
        include=args.include,
    )


def _reports_hook(cfg: Config, args: argparse.Namespace) -> Any:
    """Committed diff reports ([tool.idlgen.diff] reports), when the diff package offers them.

    They belong to the configured build only: naming inputs or an output on the command line
    builds just those, without the project's reports.
    """
    if not cfg.diff.get("reports") or args.inputs or args.out:
        return None
    try:
        mod = importlib.import_module("idlgen.diff.committed")
    except ModuleNotFoundError:
        return None
    return getattr(mod, "build_reports", None)


def _cmd_build(args: argparse.Namespace, check: bool) -> int:
    from .build import run_build

    cfg = _config(args)
    res, diags = run_build(
        cfg,
        check=check,
        want_diffs=getattr(args, "diff", False),
        extra_files=_reports_hook(cfg, args),
    )
    sources = res.load.sources if res.load else {}
    _print_diags(diags, sources, args.diag_format)
    if diags.has_errors:
        if not check:
            print("idlgen: failed; nothing was written", file=sys.stderr)
        return EXIT_FINDINGS
    out = cfg.out
    if check:
        if res.stale or res.extra:
            for rel in res.stale:
                print(f"stale: {out}/{rel}" if out else rel)
            for rel in res.extra:
                print(f"would remove: {out}/{rel}" if out else rel)
            for d in res.diffs:
                sys.stdout.write(d)
            print(
                f"idlgen: {len(res.stale) + len(res.extra)} file(s) out of date; "
                "run 'idlgen build' and commit the result",
                file=sys.stderr,
            )
            return EXIT_FINDINGS
        print(f"idlgen: {len(res.unchanged)} file(s) up to date")
        return EXIT_OK
    if args.verbose:
        for rel in res.written:
            print(f"wrote {rel}")
        for rel in res.removed:
            print(f"removed {rel}")
    if not args.quiet:
        how = " (cached)" if res.cached else ""
        print(
            f"idlgen: wrote {len(res.written)}, unchanged {len(res.unchanged)}, "
            f"removed {len(res.removed)} in {out}{how}"
        )
    return EXIT_OK


def _cmd_parse(args: argparse.Namespace) -> int:
    from .build import expand_inputs
    from .frontend import load
    from .irjson import schema_to_json

    if not args.inputs:
        raise ConfigError("parse needs at least one schema file")
    cfg = _config(args)
    diags = Diagnostics()
    inputs = expand_inputs(cfg.inputs, diags)
    if diags.has_errors:
        _print_diags(diags, {}, args.diag_format)
        return EXIT_FINDINGS
    lr = load(inputs, roots=cfg.roots, include_dirs=cfg.include)
    _print_diags(lr.diagnostics, lr.sources, args.diag_format)
    if args.json and not lr.diagnostics.has_errors:
        print(json.dumps(schema_to_json(lr.schema), indent=2))
    return EXIT_FINDINGS if lr.diagnostics.has_errors else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:  # `idlgen run` lives in the runtime: no compiler imports
        from .runtime.cli_run import main as run_main

        return run_main(argv[1:])
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        if args.command == "version":
            print(_version_text())
            return EXIT_OK
        if args.command in ("build", "check"):
            return _cmd_build(args, args.command == "check")
        if args.command == "parse":
            return _cmd_parse(args)
        if args.command == "diff":
            diff_cli = _diff_cli()
            if diff_cli is None:
                raise ConfigError("diff support is not installed")
            cfg = load_config(getattr(args, "config", None))
            return int(diff_cli.run(args, cfg))
        raise ConfigError(f"unknown command {args.command}")  # pragma: no cover
    except ConfigError as e:
        print(f"idlgen: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception:  # noqa: BLE001 - report bugs as such, with the details a bug report needs
        print(
            "idlgen: internal error (please report this with the input that caused it):",
            file=sys.stderr,
        )
        traceback.print_exc()
        return EXIT_INTERNAL
