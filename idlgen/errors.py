"""Exceptions users catch: one hierarchy for the compiler, both wire formats and the runtime.

``IdlgenError`` is the root. ``SchemaError`` and ``ConfigError`` come from the compiler (a
schema with errors, a bad command line or ``[tool.idlgen]`` table); ``EncodeError`` and
``DecodeError`` come from the wire formats and are ``ValueError``s, so code that already
catches ``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["ConfigError", "DecodeError", "EncodeError", "IdlgenError", "SchemaError"]


class IdlgenError(Exception):
    """Base class of idlgen's own exceptions."""


class SchemaError(IdlgenError):
    """A schema that does not load; ``diagnostics`` holds the located errors, when known."""

    def __init__(self, message: str, diagnostics: object = None) -> None:
        self.diagnostics = diagnostics
        super().__init__(message)


class ConfigError(IdlgenError):
    """A usage or configuration error (exit code 2)."""


class EncodeError(IdlgenError, ValueError):
    """A value that cannot be written (out of range, wrong type, embedded NUL, too large).

    ``path`` names the field being encoded (``Model.nodes[3].name``), when known.
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        self.reason = message
        self.path = path
        super().__init__(f"{message} ({path})" if path else message)


class DecodeError(IdlgenError, ValueError):
    """Bytes that are not a valid encoding.

    ``path`` names the struct/field being decoded (``Model.nodes[3].name``) and ``offset`` the
    byte offset where decoding failed, when known.
    """

    def __init__(self, message: str, *, path: str = "", offset: int | None = None) -> None:
        self.reason = message
        self.path = path
        self.offset = offset
        where = []
        if path:
            where.append(path)
        if offset is not None:
            where.append(f"offset {offset}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)
