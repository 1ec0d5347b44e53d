"""The ``fmt`` subcommand (arguments and running; ``idlgen.cli.main`` adds it to its parser and
calls :func:`run`). Importing this module imports no parser: the formatter loads when it runs."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_parsers", "run", "COMMANDS"]

COMMANDS = ("fmt",)
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 123


def add_parsers(sub: Any, doc: Callable[[str, str], dict[str, Any]]) -> None:
    """Add ``fmt`` to the subcommand parsers ``sub``."""
    f = sub.add_parser(
        "fmt",
        help="format .idl and .fbs schemas in their canonical layout",
        **doc(
            "Format HDI (.idl) and FlatBuffers (.fbs) schemas in place, in one canonical layout "
            "per language (README: 'Formatting schemas'); every comment stays where it was. A "
            "file with a syntax error is left as it is (its diagnostics, exit 1). With no PATH, "
            "formats the inputs of [tool.idlgen] in pyproject.toml.",
            "  idlgen fmt                          # the configured inputs\n"
            "  idlgen fmt schemas/ --check         # exit 1 and list what would change\n"
            "  idlgen fmt IFoo.idl --diff          # print the changes, write nothing\n"
            "  idlgen fmt - --stdin-filename IFoo.idl < IFoo.idl   # stdin to stdout",
        ),
    )
    f.add_argument(
        "paths", nargs="*", metavar="PATH", help="schema files or directories ('-': stdin)"
    )
    f.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a file would change"
    )
    f.add_argument("--diff", action="store_true", help="print unified diffs; write nothing")
    f.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="the name of the file read from '-' (diagnostics and, by its suffix, the language)",
    )
    f.add_argument("--config", type=Path, help="pyproject.toml to read [tool.idlgen] from")
    f.add_argument("-q", "--quiet", action="store_true", help="print errors only")


def run(args: argparse.Namespace) -> int:
    """Run ``fmt``: 0 done (or nothing to change), 1 files would change (``--check``) or have
    syntax errors, 2 usage, 123 a layout the safety check refused (a bug)."""
    from ..config import ConfigError, load_config
    from ..diagnostics import Diagnostics
    from ..frontend.inputs import expand_inputs

    paths: list[str] = list(args.paths)
    if "-" in paths:
        if len(paths) > 1:
            raise ConfigError("fmt: '-' (stdin) cannot be combined with other paths")
        return _stdin(args)
    if args.stdin_filename:
        raise ConfigError("fmt: --stdin-filename needs '-' as the path")
    if paths:
        targets = [Path(p) for p in paths]
    else:
        cfg = load_config(args.config)
        if not cfg.inputs:
            raise ConfigError("fmt: no PATH given and no [tool.idlgen] inputs configured")
        targets = list(cfg.inputs)
    diags = Diagnostics()
    files = expand_inputs(targets, diags)
    for d in diags:
        print(f"idlgen: error: {d.message}", file=sys.stderr)
    if diags.has_errors:
        return EXIT_USAGE
    counts = {"changed": 0, "unchanged": 0, "failed": 0, "internal": 0}
    for path in files:
        counts[_one(path, args)] += 1
    if not args.quiet:
        verb = "would reformat" if args.check or args.diff else "reformatted"
        parts = [f"{verb} {counts['changed']}", f"unchanged {counts['unchanged']}"]
        if counts["failed"] or counts["internal"]:
            parts.append(f"not formatted {counts['failed'] + counts['internal']}")
        print(f"idlgen fmt: {', '.join(parts)}", file=sys.stderr)
    if counts["internal"]:
        return EXIT_INTERNAL
    if counts["failed"] or (args.check and counts["changed"]):
        return EXIT_FINDINGS
    return EXIT_OK


def _shown(path: Path) -> str:
    from ..frontend.contract import display_path

    return display_path(path)


def _one(path: Path, args: argparse.Namespace) -> str:
    """Format one file; what happened: changed, unchanged, failed (syntax), internal."""
    from ..escaping import log_text
    from . import FormatError, format_text

    shown = _shown(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        print(f"idlgen: error: cannot read {shown}: {e.strerror or e}", file=sys.stderr)
        return "failed"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"idlgen: error: {shown}: not UTF-8 (byte {e.start})", file=sys.stderr)
        return "failed"
    try:
        result = format_text(text, shown)
    except FormatError as e:
        print(
            log_text(f"idlgen: internal error: {shown}: {e}; the file is left as it was"),
            file=sys.stderr,
        )
        return "internal"
    if not result.ok:
        _print_diags(result.diagnostics, {shown: text})
        return "failed"
    if result.text == text:
        return "unchanged"
    if args.diff:
        sys.stdout.write(_unified(text, result.text, shown))
    if args.check and not args.quiet:
        print(f"would reformat {shown}", file=sys.stderr if args.diff else sys.stdout)
    if not (args.check or args.diff):
        _write_atomic(path, result.text)
        if not args.quiet:
            print(f"reformatted {shown}", file=sys.stderr)
    return "changed"


def _stdin(args: argparse.Namespace) -> int:
    from . import FormatError, format_text, language_of

    name = args.stdin_filename or "<stdin>"
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"idlgen: error: {name}: not UTF-8 (byte {e.start})", file=sys.stderr)
        return EXIT_FINDINGS
    lang = language_of(name) if args.stdin_filename else None
    if args.stdin_filename and lang is None:
        from ..config import ConfigError

        raise ConfigError(f"fmt: --stdin-filename {name}: not an .idl or .fbs name")
    try:
        result = format_text(text, name, lang or _guess(text))
    except FormatError as e:
        print(f"idlgen: internal error: {name}: {e}", file=sys.stderr)
        if not (args.check or args.diff):
            sys.stdout.write(text)
        return EXIT_INTERNAL
    if not result.ok:
        _print_diags(result.diagnostics, {name: text})
        if not (args.check or args.diff):
            sys.stdout.write(text)  # untouched, so a pipe never loses the buffer
        return EXIT_FINDINGS
    changed = result.text != text
    if args.diff:
        if changed:
            sys.stdout.write(_unified(text, result.text, name))
    elif not args.check:
        sys.stdout.write(result.text)
    if args.check and changed:
        if not args.quiet:
            print(f"would reformat {name}", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


def _guess(text: str) -> str:
    """The language of unnamed text: HDI files start (after comments) with ``package``."""
    from .hdi import tokens

    try:
        code = next((t.text for t in tokens(text) if not t.comment), "")
    except Exception:  # noqa: BLE001 - not HDI's tokens: FlatBuffers, or an error it reports
        return "fbs"
    return "hdi" if code == "package" else "fbs"


def _print_diags(diags: Any, sources: dict[str, str]) -> None:
    from ..diagnostics import render_all
    from ..escaping import log_text

    print(log_text(render_all(diags, sources)), file=sys.stderr)


def _unified(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), name, name
    )
    out = []
    for ln in lines:
        out.append(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n")
    return "".join(out)


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s contents (same permissions) so a crash leaves old or new text."""
    path = path.resolve()  # a symlinked file is written where it points, as an editor does
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".fmt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
