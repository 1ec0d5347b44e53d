"""How idlgen builds its Lark LALR parsers: with the parse table cached on disk.

The LALR table is cached under the user cache directory (``IDLGEN_CACHE_DIR``, else
``$XDG_CACHE_HOME/idlgen`` or ``~/.cache/idlgen``; ``IDLGEN_CACHE_DIR=""`` disables it), keyed
by Lark's own hash of the grammar and options, so a start-up loads the table instead of
analysing the grammar again. An unwritable cache directory just means no cache.

Position propagation (``propagate_positions=True``) runs on every reduction; ``_FastPositions``
computes the same ``meta`` as Lark's ``PropagatePositions`` with fewer attribute probes (~9%
of parsing the HDI corpus once the garbage collector is out of the way, see parsecache).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lark
import lark.parse_tree_builder as _ptb
from lark import Token, Tree

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


class _FastPositions:
    """Lark's ``PropagatePositions`` (lark 1.x) without a node filter, same results: a node
    starts where its first positioned child's container starts and ends where its last one's
    ends; ``line``/``end_line`` set once (an inlined rule keeps its own), containers always."""

    __slots__ = ("node_builder",)

    def __init__(self, node_builder: Callable[[list[Any]], Any]) -> None:
        self.node_builder = node_builder

    def __call__(self, children: list[Any]) -> Any:
        res = self.node_builder(children)
        if not isinstance(res, Tree):
            return res
        for c in children:
            if isinstance(c, Tree):
                cm: Any = c.meta
                if not cm.empty:
                    line, col, pos = cm.container_line, cm.container_column, cm.container_start_pos
                    break
            elif isinstance(c, Token):
                line, col, pos = c.line, c.column, c.start_pos
                break
        else:
            return res  # no positioned child: Lark leaves meta alone too
        for c in reversed(children):
            if isinstance(c, Tree):
                cm = c.meta
                if not cm.empty:
                    eline, ecol, epos = (
                        cm.container_end_line,
                        cm.container_end_column,
                        cm.container_end_pos,
                    )
                    break
            elif isinstance(c, Token):
                eline, ecol, epos = c.end_line, c.end_column, c.end_pos
                break
        m: Any = res.meta
        d = vars(m)
        if "line" not in d:
            m.line, m.column, m.start_pos = line, col, pos
            m.empty = False
        m.container_line, m.container_column, m.container_start_pos = line, col, pos
        if "end_line" not in d:
            m.end_line, m.end_column, m.end_pos = eline, ecol, epos
            m.empty = False
        m.container_end_line, m.container_end_column, m.container_end_pos = eline, ecol, epos
        return res


def lalr(grammar: str, name: str, **options: Any) -> lark.Lark:
    """A Lark LALR parser for ``grammar`` whose table is cached as ``name``.

    ``options`` are Lark's (``lexer``, ``propagate_positions``, ``lexer_callbacks``, ...).
    """
    fast = options.get("propagate_positions") is True
    # Lark picks its position wrapper when it builds the parse tree builder, here, by name.
    saved = _ptb.PropagatePositions
    if fast:
        _ptb.PropagatePositions = _FastPositions  # type: ignore[assignment,misc]
    try:
        shipped = shipped_table(name)
        cache = str(shipped) if shipped.is_file() else cache_path(name)
        return lark.Lark(grammar, parser="lalr", cache=cache, **options)
    finally:
        _ptb.PropagatePositions = saved  # type: ignore[misc]
