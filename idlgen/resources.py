"""Locate grammars and templates: inside the installed package, or in a source checkout.

The repository keeps ``grammars/`` and ``templates/`` at its top level; the wheel maps them
into the package as ``idlgen/grammars`` and ``idlgen/templates`` (see pyproject.toml).
"""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["resource_dir", "grammar_text"]

_PKG = Path(__file__).resolve().parent


@functools.cache
def resource_dir(kind: str) -> Path:
    """The directory holding ``grammars`` or ``templates``."""
    installed = _PKG / kind
    if installed.is_dir():
        return installed
    return _PKG.parent / kind  # source checkout or editable install


def grammar_text(name: str) -> str:
    return (resource_dir("grammars") / name).read_text(encoding="utf-8")
