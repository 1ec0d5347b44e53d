"""The ``convert`` and ``annotate`` subcommands (arguments and running; ``idlgen.cli.main``
adds them to its parser and calls :func:`run` with the merged configuration)."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DecodeError

__all__ = ["add_parsers", "run", "COMMANDS"]

COMMANDS = ("convert", "annotate")


def _schema_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("schema", metavar="SCHEMA", help="the .fbs or .idl schema file")
    p.add_argument(
        "-I", dest="include", action="append", default=[], metavar="DIR",
        help="add an include/import search directory",
    )  # fmt: skip
    p.add_argument(
        "--root", dest="roots", action="append", default=[], metavar="PREFIX:DIR",
        help="map an HDI package prefix to a directory (like hdi-gen -r)",
    )  # fmt: skip
    p.add_argument("--config", type=Path, help="pyproject.toml to read [tool.idlgen] from")
    p.add_argument(
        "--root-type", metavar="T",
        help="the table (FlatBuffers; default: the schema's root_type) or struct (HDI) held",
    )  # fmt: skip
    p.add_argument("-o", "--out", default="-", metavar="OUT", help="output file ('-': stdout)")
    p.add_argument("--size-prefixed", action="store_true", help="FlatBuffers: a 4-byte size prefix")


def add_parsers(sub: Any, doc: Callable[[str, str], dict[str, Any]]) -> None:
    """Add ``convert`` and ``annotate`` to the subcommand parsers ``sub``."""
    c = sub.add_parser(
        "convert",
        help="convert data between JSON and FlatBuffers / Parcel bytes",
        **doc(
            "FlatBuffers: JSON to the bytes 'flatc -b' writes, bytes to the JSON 'flatc --json "
            "--strict-json' writes. HDI: JSON to the MessageParcel bytes of --root-type and "
            "back. The direction comes from --to, else from INPUT ('.json' or text: to bytes).",
            "  idlgen convert monster.fbs monster.json -o monster.bin\n"
            "  idlgen convert monster.fbs monster.bin              # JSON on stdout\n"
            "  idlgen convert NodeAttrTypes.idl --root ohos.hdi:hdi --root-type Activation \\\n"
            "      act.json --to binary -o act.parcel",
        ),
    )
    _schema_flags(c)
    c.add_argument("input", metavar="INPUT", help="JSON or binary input ('-': stdin)")
    c.add_argument("--to", choices=("json", "binary"), help="output kind (default: inferred)")
    c.add_argument(
        "--raw-binary", action="store_true",
        help="read a FlatBuffer whose file_identifier differs (flatc --raw-binary)",
    )  # fmt: skip
    a = sub.add_parser(
        "annotate",
        help="label every byte of a FlatBuffers or Parcel binary",
        **doc(
            "Print every byte of BINARY in a labelled region (header, vtable, table, field, "
            "vector, string, union, padding, unreachable), like 'flatc --annotate'.",
            "  idlgen annotate monster.fbs monster.bin\n"
            "  idlgen annotate monster.fbs monster.bin --format json\n"
            "  idlgen annotate Types.idl --root ohos.hdi:hdi --root-type Tensor t.parcel",
        ),
    )
    _schema_flags(a)
    a.add_argument("binary", metavar="BINARY", help="the binary ('-': stdin)")
    a.add_argument(
        "--format", dest="annotate_format", choices=("text", "json"), default="text",
        help="output format",
    )  # fmt: skip


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        if not stat.S_ISREG(os.stat(name).st_mode):  # no FIFO, device or directory
            raise ConfigError(f"{name}: not a regular file")
        return Path(name).read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read {name}: {e.strerror or e}") from None


def _write(name: str, data: bytes) -> None:
    if name == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        Path(name).write_bytes(data)
    except OSError as e:
        raise ConfigError(f"cannot write {name}: {e.strerror or e}") from None


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DecodeError(f"JSON input is not UTF-8 (byte {e.start})") from None


def _looks_like_json(name: str, data: bytes) -> bool:
    if name != "-" and Path(name).suffix.lower() == ".json":
        return True
    head = data.lstrip()[:1]
    return head in (b"{", b"/")


def run(args: argparse.Namespace, roots: dict[str, Path], include: list[Path]) -> int:
    """Run ``convert`` or ``annotate``: 0 ok, 1 bad data (a DecodeError), 2 usage/schema."""
    from ..diagnostics import render_all
    from ..escaping import log_text
    from .schema import SchemaFailure, compile_schema

    try:
        compiled = compile_schema(
            Path(args.schema), root_type=args.root_type, roots=roots, include_dirs=include
        )
    except SchemaFailure as e:
        print(log_text(render_all(e.diagnostics, e.sources)), file=sys.stderr)
        raise ConfigError(f"{args.schema}: the schema has errors") from None
    if args.size_prefixed and compiled.kind != "fbs":
        raise ConfigError("--size-prefixed is for FlatBuffers")
    try:
        if args.command == "convert":
            out = _convert(args, compiled)
        else:
            text, problem = _annotate(args, compiled)
            _write(args.out, text)  # printed even for a malformed binary, then exit 1
            if problem is not None:
                raise problem
            return 0
    except DecodeError as e:
        print(log_text(f"idlgen: error: {e}"), file=sys.stderr)
        return 1
    _write(args.out, out)
    return 0


def _convert(args: argparse.Namespace, compiled: Any) -> bytes:
    from .convert import to_binary, to_json

    data = _read(args.input)
    to = args.to or ("binary" if _looks_like_json(args.input, data) else "json")
    if to == "binary":
        return to_binary(compiled, _text(data), size_prefixed=args.size_prefixed)
    text = to_json(compiled, data, raw_binary=args.raw_binary, size_prefixed=args.size_prefixed)
    return text.encode("utf-8")


def _annotate(args: argparse.Namespace, compiled: Any) -> tuple[bytes, DecodeError | None]:
    """The annotation, and the first problem of a malformed binary (printed, then exit 1)."""
    from .annotate import annotate, render_json, render_text

    data = _read(args.binary)
    claims = annotate(compiled, data, size_prefixed=args.size_prefixed)
    if args.annotate_format == "json":
        text = render_json(compiled, args.binary, data, claims)
    else:
        text = render_text(compiled, args.schema, args.binary, data, claims)
    error = None
    if claims.problems:
        offset, message = claims.problems[0]
        more = len(claims.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        error = DecodeError(f"malformed {compiled.qualname}: {message}{suffix}", offset=offset)
    return text.encode("utf-8"), error
