"""idlgen: OpenHarmony HDI and FlatBuffers schemas to typed, byte-compatible Python."""

from __future__ import annotations

from .errors import DecodeError, IdlgenError

__version__ = "0.1.0"

__all__ = ["DecodeError", "IdlgenError", "__version__"]
