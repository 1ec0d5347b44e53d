"""Locate grammars and templates: inside the installed package, or in a source checkout.

The repository keeps ``grammars/`` and ``templates/`` at its top level; the wheel maps them to the
``idlgen.grammars`` and ``idlgen.templates`` packages (see pyproject.toml).
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

__all__ = ["resource_dir", "grammar_text"]


@functools.cache
def resource_dir(kind: str) -> Path:
    """The directory holding ``grammars`` or ``templates``."""
    try:
        found = resources.files(f"idlgen.{kind}")
        path = Path(str(found))
        if path.is_dir():
            return path
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / kind


def grammar_text(name: str) -> str:
    return (resource_dir("grammars") / name).read_text(encoding="utf-8")
