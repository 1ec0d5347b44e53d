"""The ``lsp`` subcommand: arguments (argparse only, so adding it imports no pygls) and
running the server (``idlgen.cli.main`` adds it and calls :func:`run`)."""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError

__all__ = ["COMMANDS", "LSP_MODULES", "add_parsers", "missing_lsp", "run"]

COMMANDS = ("lsp",)
# the [lsp] extra (and the compiler extra the front end needs)
LSP_MODULES = ("pygls", "lsprotocol", "lark")


def add_parsers(sub: Any, doc: Callable[[str, str], dict[str, Any]]) -> None:
    """Add ``lsp`` to the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "lsp",
        help="run the language server (LSP over stdio) for .idl and .fbs",
        **doc(
            "Serve the Language Server Protocol on stdin/stdout for HDI .idl and FlatBuffers "
            ".fbs files: the same diagnostics as 'idlgen parse' (with [tool.idlgen] from the "
            "workspace's pyproject.toml), hover with wire facts, definition, references, "
            "symbols, completion and formatting. Editors start it; see the README for VS Code, "
            "Neovim and Helix. Needs: pip install 'idlgen[lsp]'.",
            "  idlgen lsp                      # started by the editor\n"
            "  idlgen lsp --stdio              # the same (for clients that always pass it)",
        ),
    )
    p.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def missing_lsp() -> list[str]:
    return [m for m in LSP_MODULES if not _importable(m)]


def run(args: argparse.Namespace) -> int:
    """Serve until the client exits; exit 2 naming the extra when it is not installed."""
    missing = missing_lsp()
    if missing:
        raise ConfigError(
            f"'idlgen lsp' needs the lsp extra (missing: {', '.join(missing)}); "
            "install it with: pip install 'idlgen[lsp]'"
        )
    from .server import serve

    serve()
    return 0
