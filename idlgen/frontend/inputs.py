"""Which files a run reads: schema files named directly, and every schema below a directory."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .files import Resolver
from ..diagnostics import Diagnostics

__all__ = ["SCHEMA_SUFFIXES", "expand_inputs"]

SCHEMA_SUFFIXES = (".idl", ".fbs")


def expand_inputs(paths: Iterable[Path], diags: Diagnostics) -> list[Path]:
    """Schema files named directly, and every ``.idl``/``.fbs`` below named directories."""
    out: list[Path] = []
    resolve = Resolver()
    for p in paths:
        if p.is_dir():
            real = p.resolve()
            for q in sorted(p.rglob("*")):
                if q.suffix not in SCHEMA_SUFFIXES or not q.is_file():
                    continue
                # A committed symlink must not smuggle a file from elsewhere into the build.
                if real not in resolve(q).parents:
                    diags.error("IDL009", f"'{q}' is a symlink to a file outside '{p}'")
                    continue
                out.append(q)
        elif p.is_file():
            out.append(p)
        else:
            diags.error("IDL001", f"input not found: {p}")
    return list(dict.fromkeys(out))
