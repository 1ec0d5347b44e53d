"""A per-file cache of parse results, so re-parsing an unchanged schema costs one file read.

Parsing is most of ``idlgen parse``/``check`` (Lark's lexer and tree building run in pure
Python). A parse that produced no diagnostic is stored, pickled, under the user cache directory
(``IDLGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/idlgen`` or ``~/.cache/idlgen``;
``IDLGEN_CACHE_DIR=""`` disables it), keyed by the file's path and text and by everything that
shapes the result: the parser's and syntax tree's source, the grammar, Lark's and Python's
versions. Files with syntax errors are always parsed again, so their diagnostics are fresh.
The cache lives in the user's own directory, like the black cache: it is as trusted as the
user's files. Any problem reading or writing it means parsing as if it were not there.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from ..diagnostics import Diagnostics

__all__ = ["cache_dir", "memoize", "gc_paused"]

F = TypeVar("F", bound=Callable[[str, str, Diagnostics], Any])


def cache_dir(kind: str) -> Path | None:
    configured = os.environ.get("IDLGEN_CACHE_DIR")
    if configured == "":
        return None
    if configured:
        return Path(configured) / kind
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "idlgen" / kind


@functools.cache
def _digest(sources: tuple[str, ...]) -> bytes:
    import lark

    h = hashlib.sha256(f"{sys.version}|lark {lark.__version__}|".encode())
    for src in sources:
        try:
            h.update(Path(src).read_bytes())
        except OSError:
            h.update(f"missing {src}".encode())
    return h.digest()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while parsing one file, nor later over what it made.

    Parsing allocates many small objects (tokens, tree nodes, AST nodes) and keeps most of
    them, so the collector runs often and finds nothing: ~12% of parsing the HDI corpus.
    Afterwards the survivors are frozen (``gc.freeze``: left out of later collections; they
    hold no reference cycles, and reference counting still frees them).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def memoize(kind: str, shaped_by: Sequence[str | Path]) -> Callable[[F], F]:
    """Wrap ``parse(path, text, diags) -> tree | None``; ``shaped_by`` are the files (parser,
    AST, grammar) whose content decides what a parse returns."""
    files = tuple(str(p) for p in shaped_by)

    def wrap(parse: F) -> F:
        @functools.wraps(parse)
        def cached(path: str, text: str, diags: Diagnostics) -> Any:
            d = cache_dir(kind)
            if d is None:
                with gc_paused():
                    return parse(path, text, diags)
            h = hashlib.sha256(_digest(files))
            h.update(path.encode("utf-8", "surrogatepass") + b"\0")
            h.update(text.encode("utf-8", "surrogatepass"))
            key = h.hexdigest()
            entry = d / key[:2] / key
            try:
                return pickle.loads(entry.read_bytes())
            except Exception:  # noqa: BLE001 - missing, truncated or stale: parse again
                pass
            before = len(diags)
            with gc_paused():
                result = parse(path, text, diags)
            if result is not None and len(diags) == before:
                _store(entry, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
            return result

        return cast(F, cached)

    return wrap


def _store(entry: Path, data: bytes) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, entry)
    except OSError:
        pass
