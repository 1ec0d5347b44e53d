"""FlatBuffers front end: ``.fbs`` grammar, lowering into the shared IR, flatc's checks."""

from __future__ import annotations

__all__: list[str] = []
