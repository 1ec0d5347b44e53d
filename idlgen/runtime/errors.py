"""The runtime's error type."""

from __future__ import annotations

from idlgen.errors import IdlgenError

__all__ = ["KernelError"]


class KernelError(IdlgenError, ValueError):
    """An operator cannot run: unsupported attribute combination, bad input, or a broken model.

    ``op`` names the operator (or node) so the message points at the culprit.
    """

    def __init__(self, op: str, message: str) -> None:
        self.op = op
        self.reason = message
        super().__init__(f"{op}: {message}")
