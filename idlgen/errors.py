"""Exceptions users catch."""

from __future__ import annotations

__all__ = ["DecodeError", "IdlgenError"]


class IdlgenError(Exception):
    """Base class of idlgen's own exceptions."""


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
