"""How idlgen gets its Lark LALR parsers: analysed once, then loaded.

Analysing a grammar into LALR tables takes a few tenths of a second, so the result is saved
with ``Lark.save`` behind a header naming what it was built from: a hash of the grammar text,
the options, Lark's version and Python's minor version. The repository ships the tables for the
versions it is developed with (``grammars/<name>-lark<version>-py<XY>.lalr``; refresh them with
``python -m idlgen.tools.lalr_tables``); any other version builds its tables once into the
user cache directory (``IDLGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/idlgen`` or
``~/.cache/idlgen``; ``IDLGEN_CACHE_DIR=""`` disables it). A file whose header does not match
is ignored, never rewritten in place: the shipped tables stay as installed wherever the
package lives. Both are pickles, trusted like the installation (SECURITY.md).

idlgen runs the tables with its own driver (``idlgen.frontend.lalr``); the ``Lark`` object is
what holds the tables, terminals and rules.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import lark

__all__ = ["lalr", "save", "shipped_table", "table_key", "user_table"]


def shipped_table(name: str) -> Path:
    """The table shipped beside the grammars for this Lark and Python version."""
    from ..resources import resource_dir

    py = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return resource_dir("grammars") / f"{name}-lark{lark.__version__}-{py}.lalr"


def user_table(name: str) -> Path | None:
    """Where tables built here are kept, or None when the user cache is disabled."""
    configured = os.environ.get("IDLGEN_CACHE_DIR")
    if configured == "":
        return None
    base = (
        Path(configured)
        if configured
        else (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "idlgen")
    )
    return base / "lark" / shipped_table(name).name


def table_key(grammar: str, options: dict[str, Any]) -> bytes:
    """The header line of a saved table: what it was built from (never where it lives)."""
    h = hashlib.sha256(grammar.encode("utf-8"))
    h.update(repr(sorted(options.items())).encode("utf-8"))
    h.update(f"lark {lark.__version__} python {sys.version_info[:2]}".encode())
    return b"idlgen-lalr " + h.hexdigest().encode("ascii")


def _load(path: Path, key: bytes) -> lark.Lark | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header, sep, body = data.partition(b"\n")
    if not sep or header != key:
        return None
    try:
        return lark.Lark.load(io.BytesIO(body))
    except Exception:  # noqa: BLE001 - truncated or from another Lark: build it again
        return None


def save(parser: lark.Lark, key: bytes, path: Path) -> None:
    """Write atomically (a concurrent reader sees the old file or the new one)."""
    buf = io.BytesIO()
    parser.save(buf)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(key + b"\n" + buf.getvalue())
        os.replace(tmp, path)
    except OSError:
        pass  # an unwritable cache just means building again next time


def lalr(grammar: str, name: str, **options: Any) -> lark.Lark:
    """The Lark LALR parser for ``grammar`` (saved as ``name``); ``options`` are Lark's."""
    key = table_key(grammar, options)
    user = user_table(name)
    for path in (shipped_table(name), user):
        if path is not None and (parser := _load(path, key)) is not None:
            return parser
    parser = lark.Lark(grammar, parser="lalr", **options)
    if user is not None:
        save(parser, key, user)
    return parser
