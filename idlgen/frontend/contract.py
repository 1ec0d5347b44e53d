"""The contract every front end keeps: what loading returns, how paths are shown, the protocol.

Front ends (``frontend.hdi``, ``frontend.fbs``) import this module and nothing of each other;
:mod:`idlgen.frontend.loader` picks one by file suffix. Nothing here imports a front end, so
there is no import cycle between the dispatcher and the languages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..diagnostics import Diagnostics
from ..ir import Schema

__all__ = ["Frontend", "LoadResult", "display_path"]


@dataclass
class LoadResult:
    """What a front end produced.

    ``schema`` holds every file that lowered (inputs and what they import/include), even when
    other files had errors; ``inputs`` are the display paths of the files asked for (their
    ``SchemaFile.path``), ``sources`` maps display paths to text for rendering diagnostics.
    """

    schema: Schema
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    sources: dict[str, str] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.diagnostics.has_errors


class Frontend(Protocol):
    """One schema language: ``load`` parses, checks and lowers files of ``suffix`` into the IR.

    ``roots`` maps package prefixes to directories (HDI ``-r``), ``include_dirs`` are include /
    import search paths, ``inferred_roots`` are package roots guessed from file locations (used
    for lookups, never trusted as places imports may come from); a language ignores what it has
    no use for.
    """

    def __call__(
        self,
        paths: Sequence[Path],
        *,
        roots: Mapping[str, Path] | None = None,
        include_dirs: Sequence[Path] = (),
        inferred_roots: Mapping[str, Path] | None = None,
    ) -> LoadResult: ...


def display_path(p: Path, *, up: int = 0) -> str:
    """A path as messages show it: relative to the working directory when it lies below it (or
    at most ``up`` levels above it), otherwise as given."""
    try:
        rel = os.path.relpath(p)
    except ValueError:  # different drive on Windows
        return str(p)
    return str(p) if rel.startswith(os.sep.join([".."] * (up + 1))) else rel
