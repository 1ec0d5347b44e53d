"""The ``idlgen`` command line: ``main`` parses arguments and dispatches to the commands."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
