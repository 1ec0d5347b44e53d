"""Which install profile is present: the runtime alone, or the ``[compiler]`` extra too.

``pip install idlgen`` brings numpy and flatbuffers only; ``build``/``check``/``parse``/``diff``
need lark, jinja2 and black from ``pip install 'idlgen[compiler]'``. The CLI asks here first, so
a missing extra is a usage error naming the extra, not an ImportError traceback.
"""

from __future__ import annotations

import importlib.util

from .errors import ConfigError

__all__ = ["COMPILER_MODULES", "missing_compiler", "require_compiler", "compiler_hint"]

COMPILER_MODULES = ("lark", "jinja2", "black")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken install or an import blocker
        return False


def missing_compiler() -> list[str]:
    """The compiler extra's modules that cannot be imported, in a fixed order."""
    return [m for m in COMPILER_MODULES if not _importable(m)]


def compiler_hint(command: str, missing: list[str]) -> str:
    return (
        f"'idlgen {command}' needs the compiler extra (missing: {', '.join(missing)}); "
        "install it with: pip install 'idlgen[compiler]'"
    )


def require_compiler(command: str) -> None:
    """Raise :class:`ConfigError` (exit 2) when the ``[compiler]`` extra is not installed."""
    missing = missing_compiler()
    if missing:
        raise ConfigError(compiler_hint(command, missing))
