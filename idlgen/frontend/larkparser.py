"""How idlgen builds its Lark LALR parsers: with the parse table cached on disk.

The LALR table is cached under the user cache directory (``IDLGEN_CACHE_DIR``, else
``$XDG_CACHE_HOME/idlgen`` or ``~/.cache/idlgen``; ``IDLGEN_CACHE_DIR=""`` disables it), keyed
by Lark's own hash of the grammar and options, so a start-up loads the table instead of
analysing the grammar again. An unwritable cache directory just means no cache.

idlgen runs the tables with its own driver (``idlgen.frontend.lalr``); the ``Lark`` object is
what analyses the grammar and holds the tables, terminals and rules.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import lark

__all__ = ["lalr", "cache_path", "shipped_table"]


def shipped_table(name: str) -> Path:
    """The LALR table shipped beside the grammars for this Lark and Python version.

    Lark's table is keyed by the grammar, the options, Lark's version and Python's minor
    version; the repository commits the one for the versions it is developed with, so a cold
    run (no user cache, as in CI) does not analyse the grammar again. For any other version the
    user cache is used instead. It is data of the installation, as trusted as the code.
    """
    from ..resources import resource_dir

    py = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return resource_dir("grammars") / f"{name}-lark{lark.__version__}-{py}.lalr"


def cache_path(name: str) -> str | bool:
    """Lark's ``cache`` argument: a file under the user cache dir, or False when disabled."""
    configured = os.environ.get("IDLGEN_CACHE_DIR")
    if configured == "":
        return False
    base = (
        Path(configured)
        if configured
        else (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "idlgen")
    )
    d = base / "lark"
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    if not os.access(d, os.W_OK):
        return False
    # Lark appends nothing to a given file name, so the name carries the version: a table
    # written by another Lark is never read. Grammar changes are caught by Lark's own hash.
    return str(d / f"{name}-lark{lark.__version__}.cache")


def lalr(grammar: str, name: str, **options: Any) -> lark.Lark:
    """A Lark LALR parser for ``grammar`` whose table is cached as ``name``.

    ``options`` are Lark's (``lexer``, ``propagate_positions``, ...).
    """
    shipped = shipped_table(name)
    cache = str(shipped) if shipped.is_file() else cache_path(name)
    return lark.Lark(grammar, parser="lalr", cache=cache, **options)
