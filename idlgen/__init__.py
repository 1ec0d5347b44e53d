"""idlgen: OpenHarmony HDI and FlatBuffers schemas to typed, byte-compatible Python."""

from __future__ import annotations

from .errors import ConfigError, DecodeError, EncodeError, IdlgenError, SchemaError

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "DecodeError",
    "EncodeError",
    "IdlgenError",
    "SchemaError",
    "__version__",
]
