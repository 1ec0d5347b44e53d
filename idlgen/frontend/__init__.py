"""Front ends: schema text in, one frozen IR plus diagnostics out.

``contract`` is what every language keeps to, ``loader`` dispatches by file suffix, and each
language is a package of the same shape: ``parser`` (Lark LALR grammar to a syntax tree),
``ast`` (the syntax tree), ``lower`` (checks and lowering to :mod:`idlgen.ir`), ``loader``
(files, includes/imports, order).
"""

from __future__ import annotations

from .contract import Frontend, LoadResult, display_path
from .loader import load

__all__ = ["Frontend", "LoadResult", "display_path", "load"]
