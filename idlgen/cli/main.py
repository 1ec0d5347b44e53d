"""The ``idlgen`` command line: build, check, parse, diff, run, completion, version.

Exit codes: 0 success, 1 findings (schema errors, stale output, breaking changes), 2 usage or
configuration error (including a missing install extra), 123 internal error.

Only the standard library is imported at start-up, so ``--version``, ``run`` and ``completion``
work with the runtime profile alone (numpy + flatbuffers); the compiler commands check for the
``[compiler]`` extra first and say how to install it when it is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .. import __version__
from .gctuning import batch_gc, no_cyclic_gc
from ..config import Config, ConfigError, load_config
from ..diagnostics import Diagnostics, render_all, render_github, to_json
from ..escaping import log_json, log_text
from ..extras import compiler_hint, missing_compiler

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 123
COMPILER_COMMANDS = ("build", "check", "parse", "diff", "convert", "annotate", "fmt", "lint")
# commands that never read diff's flags
_NO_DIFF = ("build", "check", "parse", "version", "run", "convert", "annotate", "fmt", "lint")
DIAG_FORMATS = ("text", "github", "json", "sarif")
# Third-party modules a command may lack, and the extra that provides each.
_EXTRA_OF = {"lark": "compiler", "jinja2": "compiler", "black": "compiler", "onnx": "onnx"}

EXIT_CODES = """exit codes:
  0    success
  1    findings: schema errors, stale output, breaking changes
  2    usage or configuration error (bad flag, missing input, missing install extra)
  123  internal error (a bug: please report it with the input)"""

FORMAT_HELP = (
    "how diagnostics are printed: text (compiler style with carets, on stderr), github "
    "(workflow commands for annotations), json (a list), sarif (SARIF 2.1.0 for code "
    "scanning); all but text go to stdout, which then holds nothing else"
)


def _suggest(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2))
            message += _suggest(m.group(1), choices)
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _doc(description: str, examples: str) -> dict[str, Any]:
    return {
        "description": description,
        "epilog": f"examples:\n{examples}\n\n{EXIT_CODES}",
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def _common(p: argparse.ArgumentParser, *, formats: bool = True) -> None:
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
    if formats:
        p.add_argument(
            "--format", dest="diag_format", choices=DIAG_FORMATS, default="text", help=FORMAT_HELP
        )


def _kernels_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kernels",
        action="append",
        default=[],
        metavar="PACKAGE",
        help="give this HDI package NNRt kernel stubs (like [tool.idlgen] kernels)",
    )


def build_parser(*, diff: bool = True) -> argparse.ArgumentParser:
    """The argument parser; ``diff=False`` skips importing the diff package (start-up time)."""
    p = _Parser(
        prog="idlgen",
        description="OpenHarmony HDI and FlatBuffers schemas to typed, byte-compatible Python.",
        epilog=f"Run 'idlgen COMMAND --help' for a command's options and examples.\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action=_LazyVersion)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    b = sub.add_parser(
        "build",
        help="parse, check and generate the Python package",
        **_doc(
            "Parse and check the schemas, then write the generated package: only changed files, "
            "atomically; files generated earlier and no longer produced are removed.",
            "  idlgen build                          # inputs and output from [tool.idlgen]\n"
            "  idlgen build schemas/fbs --out gen    # one directory into package 'gen'\n"
            "  idlgen build hdi --root ohos.hdi:hdi --out out/gen -v",
        ),
    )
    _common(b)
    b.add_argument("--out", help="output root package directory")
    _kernels_flag(b)
    b.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    b.add_argument(
        "-v", "--verbose", action="store_true", help="list every file written; one line per phase"
    )

    c = sub.add_parser(
        "check",
        help="exit 1 if the generated output is not up to date",
        **_doc(
            "Do everything 'build' does but write nothing; list stale files and exit 1 when the "
            "output is not what 'build' would write.",
            "  idlgen check                          # in CI or a pre-commit hook\n"
            "  idlgen check --diff                   # show what changed\n"
            "  idlgen check --format sarif > idlgen.sarif",
        ),
    )
    _common(c)
    c.add_argument("--out", help="output root package directory")
    _kernels_flag(c)
    c.add_argument("--diff", action="store_true", help="print unified diffs of stale files")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    c.add_argument("-v", "--verbose", action="store_true", help="one line per phase")

    pa = sub.add_parser(
        "parse",
        help="parse and check only; print diagnostics or the IR",
        **_doc(
            "Parse and check the named schemas without generating anything.",
            "  idlgen parse schemas/hdi/nnrt/v2_1 --root ohos.hdi:schemas/hdi\n"
            "  idlgen parse monster.fbs --json       # the schema IR as JSON\n"
            "  idlgen parse foo.idl --format github  # annotations in a GitHub workflow",
        ),
    )
    _common(pa)
    pa.add_argument("--json", action="store_true", help="print the schema IR as JSON on stdout")

    d = sub.add_parser(
        "diff",
        help="compare two versions of a schema",
        **_doc(
            "Compare two versions of a schema (files or directories) and report every change "
            "with a rule id and severity. Here --format chooses the report's format.",
            "  idlgen diff old/v1_0 new/v2_1 --root ohos.hdi:schemas/hdi\n"
            "  idlgen diff schemas/fbs --against origin/main --format markdown\n"
            "  idlgen diff a.fbs b.fbs --fail-on warning",
        ),
    )
    diff_cli = _diff_cli() if diff else None
    if diff_cli is not None:
        diff_cli.add_arguments(d)
    else:  # no compiler extra: accept anything so that main() can name the missing extra
        d.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    r = sub.add_parser(
        "run",
        help="import an ONNX or TFLite model and run it on the NumPy runtime",
        add_help=False,
        **_doc(
            "Run a model on the NumPy NNRt runtime; all arguments go to the runtime's command "
            "(see 'idlgen run --help').",
            "  idlgen run model.onnx --output-dir out --compare",
        ),
    )
    r.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    co = sub.add_parser(
        "completion",
        help="print a shell completion script",
        **_doc(
            "Print a completion script for bash, zsh or fish.",
            '  eval "$(idlgen completion bash)"      # in ~/.bashrc\n'
            '  eval "$(idlgen completion zsh)"       # in ~/.zshrc\n'
            "  idlgen completion fish > ~/.config/fish/completions/idlgen.fish",
        ),
    )
    from .completion import SHELLS

    co.add_argument("shell", choices=SHELLS)

    from ..data.cli import add_parsers as _data_parsers  # convert, annotate (argparse only)

    _data_parsers(sub, _doc)
    from ..lsp.cli import add_parsers as _lsp_parsers  # lsp (argparse only; pygls when run)

    _lsp_parsers(sub, _doc)
    from ..fmt.cli import add_parsers as _fmt_parsers  # fmt (argparse only)

    _fmt_parsers(sub, _doc)
    from ..lint.cli import add_parser as _lint_parser  # argparse only; rules load when run

    _lint_parser(sub, _doc)

    sub.add_parser(
        "version",
        help="print idlgen's version and its compiler dependencies' versions",
        **_doc("Print the versions of idlgen, lark, jinja2 and black.", "  idlgen version"),
    )
    return p


def _diff_cli() -> Any:
    if missing_compiler():
        return None
    try:
        import idlgen.diff.cli

        return idlgen.diff.cli
    except ModuleNotFoundError as e:
        if e.name in _EXTRA_OF:
            return None
        raise


class _LazyVersion(argparse._VersionAction):
    """``--version`` whose text (package metadata look-ups, ~10 ms) is made only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        self.version = _version_text()
        super().__call__(parser, *args, **kwargs)


def _version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    missing = set(missing_compiler())
    parts = []
    for dist in ("lark", "jinja2", "black"):
        try:
            parts.append(f"{dist} {version(dist)}" if dist not in missing else "")
        except PackageNotFoundError:
            pass
    deps = ", ".join(p for p in parts if p)
    if not deps or missing:
        deps = "runtime only; compiler extra not installed"
    return f"idlgen {__version__} ({deps})"


def _machine(fmt: str) -> bool:
    """Formats whose stdout is a document that nothing else may be mixed into."""
    return fmt in ("json", "sarif")


def _print_diags(diags: Diagnostics, sources: dict[str, str], fmt: str) -> None:
    if fmt == "sarif":
        from ..sarif import diagnostics_sarif, dumps

        print(log_json(dumps(diagnostics_sarif(diags, __version__))), end="")
        return
    if fmt == "json":
        print(log_json(to_json(diags)))
        return
    if not diags:
        return
    # CI logs: no line of schema text may read as a workflow command (idlgen.escaping)
    if fmt == "github":
        print(log_text(render_github(diags), own_commands=True))
    else:
        print(log_text(render_all(diags, sources)), file=sys.stderr)
        errors = sum(d.is_error for d in diags)
        warnings = len(diags) - errors
        print(f"idlgen: {errors} error(s), {warnings} warning(s)", file=sys.stderr)


def _config(args: argparse.Namespace) -> Config:
    cfg = load_config(
        args.config,
        inputs=getattr(args, "inputs", []) or [],
        out=getattr(args, "out", None),
        roots=args.roots,
        include=args.include,
        kernels=getattr(args, "kernels", []),
    )
    _check_inputs(cfg.inputs)
    return cfg


def _no_config(cfg: Config, key: str, flag: str) -> ConfigError:
    """Exit 2 naming what is missing: no config file, no [tool.idlgen] table, or no key."""
    if cfg.source is None:
        where = f"no pyproject.toml with a [tool.idlgen] table in {Path.cwd()} or above"
    elif not cfg.table_found:
        where = f"{cfg.source} has no [tool.idlgen] table"
    else:
        where = f"{cfg.source}: [tool.idlgen] has no '{key}'"
    return ConfigError(f"{where}; set {key} there or pass {flag}")


def _require_build(cfg: Config) -> None:
    if cfg.out is None:
        raise _no_config(cfg, "out", "--out DIR")
    if not cfg.inputs:
        raise _no_config(cfg, "inputs", "schema files or directories")


def _check_inputs(inputs: Sequence[Path]) -> None:
    """A missing input or a file that is not a schema is a usage error (exit 2)."""
    from ..frontend.inputs import SCHEMA_SUFFIXES  # the front end needs the compiler extra

    for p in inputs:
        if not p.exists():
            raise ConfigError(f"input not found: {p}")
        if p.is_file() and p.suffix not in SCHEMA_SUFFIXES:
            raise ConfigError(f"not a schema file: {p} (expected .idl or .fbs, or a directory)")


def _reports_hook(cfg: Config, args: argparse.Namespace) -> Any:
    """Committed diff reports ([tool.idlgen.diff] reports), when the diff package offers them.

    They belong to the configured build only: naming inputs or an output on the command line
    builds just those, without the project's reports.
    """
    if not cfg.diff.get("reports") or args.inputs or args.out:
        return None
    try:
        import idlgen.diff.committed as mod
    except ModuleNotFoundError:
        return None
    return getattr(mod, "build_reports", None)


def _cmd_build(args: argparse.Namespace, check: bool) -> int:
    from ..build import run_build
    from .progress import Progress

    cfg = _config(args)
    _require_build(cfg)
    fmt = args.diag_format
    info = sys.stderr if _machine(fmt) else sys.stdout  # keep a machine document clean
    progress = Progress(quiet=args.quiet, verbose=args.verbose)
    try:
        res, diags = run_build(
            cfg,
            check=check,
            want_diffs=getattr(args, "diff", False),
            extra_files=_reports_hook(cfg, args),
            progress=progress,
        )
    finally:
        progress.close()
    sources = res.load.sources if res.load else res.sources
    _print_diags(diags, sources, fmt)
    if diags.has_errors:
        if not check:
            print("idlgen: failed; nothing was written", file=sys.stderr)
        return EXIT_FINDINGS
    out = cfg.out
    if check:
        if res.stale or res.extra:
            for rel in res.stale:
                print(f"stale: {out}/{rel}" if out else rel, file=info)
            for rel in res.extra:
                print(f"would remove: {out}/{rel}" if out else rel, file=info)
            for d in res.diffs:
                info.write(log_text(d))  # generated code quotes schema doc comments
            print(
                f"idlgen: {len(res.stale) + len(res.extra)} file(s) out of date; "
                "run 'idlgen build' and commit the result",
                file=sys.stderr,
            )
            return EXIT_FINDINGS
        if not args.quiet:
            print(f"idlgen: {len(res.unchanged)} file(s) up to date", file=info)
        return EXIT_OK
    if args.verbose:
        for rel in res.written:
            print(f"wrote {rel}", file=info)
        for rel in res.removed:
            print(f"removed {rel}", file=info)
    if not args.quiet:
        how = " (cached)" if res.cached else ""
        print(
            f"idlgen: wrote {len(res.written)}, unchanged {len(res.unchanged)}, "
            f"removed {len(res.removed)} in {out}{how}",
            file=info,
        )
    return EXIT_OK


def _cmd_parse(args: argparse.Namespace) -> int:
    from ..frontend.inputs import expand_inputs
    from ..frontend import load
    from ..ir.jsondump import schema_to_json

    if not args.inputs:
        raise ConfigError("parse needs at least one schema file or directory")
    if args.json and _machine(args.diag_format):
        raise ConfigError(f"--json and --format {args.diag_format} both write to stdout")
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


def _cmd_run(argv: list[str]) -> int:
    """``idlgen run``: implemented by the runtime (``idlgen.runtime.cli_run.main(argv)``)."""
    try:
        import idlgen.runtime.cli_run as mod
    except ModuleNotFoundError as e:
        if e.name == "idlgen.runtime.cli_run":
            raise ConfigError("'idlgen run' is not available in this idlgen build") from e
        raise
    return int(mod.main(argv))


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand word: top-level options take no value, so it is the first non-option."""
    for a in argv:
        if not a.startswith("-"):
            return a
        if a == "--":
            return None
    return None


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction) and command in a.choices:
            return a.choices[command]  # type: ignore[no-any-return]
    return parser


def _unknown_options(
    parser: argparse.ArgumentParser, command: str | None, extras: list[str]
) -> str:
    sub = _subparser(parser, command)
    known = [o for a in sub._actions for o in a.option_strings]
    msgs = []
    for x in extras:
        hint = _suggest(x.split("=", 1)[0], known) if x.startswith("-") else ""
        msgs.append(f"{x}{hint}")
    return "unrecognized arguments: " + ", ".join(msgs)


def _dispatch(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    command = _command_of(argv)
    if command == "run":
        return _cmd_run(argv[argv.index("run") + 1 :])
    if command in COMPILER_COMMANDS and not {"-h", "--help"} & set(argv):
        missing = missing_compiler()
        if missing:
            raise ConfigError(compiler_hint(command, missing))
    args, extras = parser.parse_known_args(argv)
    if extras:
        _subparser(parser, args.command).print_usage(sys.stderr)
        print(f"idlgen: error: {_unknown_options(parser, args.command, extras)}", file=sys.stderr)
        return EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "version":
        print(_version_text())
        return EXIT_OK
    if args.command == "completion":
        from .completion import script

        sys.stdout.write(script(args.shell, parser))
        return EXIT_OK
    if args.command in ("build", "check"):
        return _cmd_build(args, args.command == "check")
    if args.command == "parse":
        return _cmd_parse(args)
    if args.command == "lint":
        from ..lint.cli import run as run_lint

        return run_lint(args, __version__)
    if args.command == "fmt":
        from ..fmt.cli import run as run_fmt

        return run_fmt(args)
    if args.command == "lsp":
        from ..lsp.cli import run as run_lsp

        return run_lsp(args)
    if args.command in ("convert", "annotate"):
        from ..data.cli import run as run_data

        cfg = load_config(args.config, roots=args.roots, include=args.include)
        return run_data(args, dict(cfg.roots), list(cfg.include))
    if args.command == "diff":
        diff_cli = _diff_cli()
        if diff_cli is None:  # pragma: no cover - the compiler check above comes first
            raise ConfigError(compiler_hint("diff", missing_compiler() or ["idlgen.diff"]))
        cfg = load_config(getattr(args, "config", None))
        return int(diff_cli.run(args, cfg))
    raise ConfigError(f"unknown command {args.command}")  # pragma: no cover


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        command = _command_of(args)
        # The collector is tuned for this process only (gctuning): a compiler command builds
        # one large graph (AST, IR, views) and makes no cyclic garbage worth collecting.
        paused = no_cyclic_gc() if command in COMPILER_COMMANDS else contextlib.nullcontext()
        with batch_gc(), paused:
            return _dispatch(build_parser(diff=command not in _NO_DIFF), args)
    except SystemExit as e:  # argparse: --help, --version (0) and usage errors (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except ConfigError as e:
        print(f"idlgen: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as e:
        extra = _EXTRA_OF.get((e.name or "").split(".")[0])
        if extra is None:
            return _internal()
        print(
            f"idlgen: error: this needs the '{e.name}' module; "
            f"install it with: pip install 'idlgen[{extra}]'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception:  # noqa: BLE001 - report bugs as such, with the details a bug report needs
        return _internal()


def _internal() -> int:
    print(
        "idlgen: internal error (please report this with the input that caused it):",
        file=sys.stderr,
    )
    traceback.print_exc()
    return EXIT_INTERNAL
