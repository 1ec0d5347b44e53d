"""Load ``.fbs`` files and everything they include into the shared IR."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...diagnostics import Diagnostics
from ..contract import LoadResult, display_path
from ...bounds import MAX_INCLUDE_DEPTH
from ..encoding import decode_schema
from ..files import is_file, read_schema
from ...ir import Schema, Span
from . import ast as A
from .lower import lower
from .parser import parse

__all__ = ["load", "load_text"]


def load(
    paths: Sequence[Path],
    *,
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
    inferred_roots: Mapping[str, Path] | None = None,
) -> LoadResult:
    """Parse, check and lower ``paths``.

    Includes resolve relative to the including file, then against ``include_dirs``; every file
    is parsed once (by resolved path, and by content like flatc).
    """
    diags = Diagnostics()
    sources: dict[str, str] = {}
    ordered: list[tuple[A.FileAst, tuple[str, ...], str]] = []
    by_path: dict[Path, str] = {}
    by_digest: dict[str, str] = {}
    active: set[Path] = set()
    inputs: list[str] = []

    root_dirs: list[Path] = []
    # Includes may only resolve below the inputs' directories and -I directories: no
    # absolute paths, '..' escapes or symlinks out (the file is never read, so never shown).
    bases = frozenset(
        [Path(os.path.abspath(p)).parent.resolve() for p in paths]
        + [Path(d).resolve() for d in include_dirs]
    )

    def visit(path: Path, depth: int = 0, span: Span | None = None) -> str | None:
        if depth > MAX_INCLUDE_DEPTH:
            diags.error("FBS013", f"includes nested deeper than {MAX_INCLUDE_DEPTH} files", span)
            return None
        real = path.resolve()
        if real in by_path:
            return by_path[real]
        if real in active:
            return None  # include cycle: flatc tolerates it (the file is already being parsed)
        try:
            data = read_schema(real)
        except OSError as e:
            diags.error("FBS010", f"unable to load file: {path}: {e.strerror or e}", span)
            return None
        digest = hashlib.sha256(data).hexdigest()
        if digest in by_digest:
            by_path[real] = by_digest[digest]
            return by_digest[digest]
        display = display_path(path, up=1)
        text, bad = decode_schema(data, string_literals=True)
        if bad is not None:
            diags.error(
                "FBS004", bad.message, Span(display, bad.line, bad.col, bad.line, bad.col + 1)
            )
            sources[display] = text
            return None
        sources[display] = text
        by_path[real] = display
        by_digest[digest] = display
        active.add(real)
        f = parse(text, display, diags)
        if f is None:
            active.discard(real)
            return display
        includes: list[str] = []
        for it in f.items:
            if isinstance(it, A.Directive) and it.kind == "include":
                includes.append(it.value)
                # flatc searches the root file's directory; we also try the includer's own.
                target = _resolve_include(real.parent, it.value, [*root_dirs, *include_dirs])
                if target is None:
                    diags.error(
                        "FBS010",
                        f"unable to locate include file: {it.value}",
                        it.span,
                        help=["add the directory that holds it with -I"],
                    )
                    continue
                if bases.isdisjoint(target.resolve().parents):
                    diags.error(
                        "FBS012",
                        f"include file outside the schema directories: {it.value}",
                        it.span,
                        help=["includes resolve only below the inputs' directories and -I dirs"],
                    )
                    continue
                visit(target, depth + 1, it.span)
        active.discard(real)
        ordered.append((f, tuple(includes), digest))
        return display

    for p in paths:
        root_dirs[:] = [Path(p).resolve().parent]
        d = visit(Path(p))
        if d is not None and d not in inputs:
            inputs.append(d)
    # ``visit`` refers to itself: without this the cycle keeps every syntax tree alive until
    # the next full collection (a second copy of a 1 MB schema's AST, and a long GC pass).
    del visit
    files = lower(ordered, diags)
    schema = Schema(tuple(files))
    _check_json(schema, [f for f, _, _ in ordered], sources, diags)
    return LoadResult(schema, diags, sources, tuple(inputs))


def _check_json(
    schema: Schema, asts: Sequence[A.FileAst], sources: dict[str, str], diags: Diagnostics
) -> None:
    """flatc parses a JSON document after the schema as data for the root type: so do we."""
    todo = [f for f in asts if f.json is not None and f.json_span is not None]
    if not todo or diags.has_errors:
        return
    from ...errors import DecodeError
    from ...wire import fbjson
    from ...ir.fbs_descriptors import validation_descriptors

    rt = validation_descriptors(schema)
    for f in todo:
        sf = next((x for x in schema.files if x.path == f.path), None)
        span = f.json_span
        assert span is not None
        if sf is None or not sf.root_type:
            continue
        lines = sources[f.path].splitlines(keepends=True)
        start = sum(len(x) for x in lines[: span.line - 1]) + span.col - 1
        desc = rt[sf.root_type]
        try:
            desc.encode(fbjson.from_json(desc, sources[f.path][start:]))
        # AttributeError: fbjson given a list where it wants a scalar (``a: [[1]]`` for [int])
        except (DecodeError, ValueError, TypeError, AttributeError) as e:
            msg = e.reason if isinstance(e, DecodeError) else str(e)
            diags.error("FBS053", f"invalid JSON for root type {sf.root_type}: {msg}", span)


def _resolve_include(base: Path, name: str, include_dirs: Sequence[Path]) -> Path | None:
    for d in (base, *include_dirs):
        cand = Path(d) / name
        if is_file(cand):
            return cand
    return None


def load_text(text: str, name: str = "<string>.fbs") -> LoadResult:
    """Load one schema given as text (no includes); handy for tests and tools."""
    diags = Diagnostics()
    text = text.removeprefix("\ufeff")
    f = parse(text, name, diags)
    files = [] if f is None else lower([(f, (), hashlib.sha256(text.encode()).hexdigest())], diags)
    schema = Schema(tuple(files))
    if f is not None:
        _check_json(schema, [f], {name: text}, diags)
    return LoadResult(schema, diags, {name: text}, (name,))
