"""FlexBuffers (``flexbuffer`` fields) as flatc reads and writes them."""

from __future__ import annotations

from typing import Any


def flex_loads(data: bytes) -> Any:
    """A FlexBuffer as Python values (the ``flatbuffers`` package's reader)."""
    from flatbuffers import flexbuffers  # type: ignore[import-untyped]

    return flexbuffers.Loads(bytes(data))


class _Pool:
    """Exact-match pool for FlexBuffer string/key sharing (the ``flatbuffers`` package's own
    ``Pool`` inserts at the wrong index and then misses entries)."""

    def __init__(self) -> None:
        self._d: dict[bytes, Any] = {}

    def FindOrInsert(self, data: bytes, offset: Any) -> Any:  # noqa: N802 - upstream's API
        prev = self._d.get(bytes(data))
        if prev is None:
            self._d[bytes(data)] = offset
        return prev

    def Clear(self) -> None:  # noqa: N802
        self._d.clear()


def flex_is_null(v: Any) -> bool:
    if not len(v):
        return False
    try:
        return flex_loads(bytes(v)) is None
    except Exception:  # not a flexbuffer at all
        return False


def flex_dumps(value: Any) -> bytes:
    """A FlexBuffer as flatc's JSON parser builds it (sharing strings and keys)."""
    from flatbuffers import flexbuffers

    fbb = flexbuffers.Builder(share_strings=True, share_keys=True)
    # The package's private pools, replaced: pyproject.toml caps flatbuffers to the versions
    # checked to have them (tests/fbs/test_flex_internals.py).
    fbb._string_pool = _Pool()
    fbb._key_pool = _Pool()
    fbb.Add(value)
    return bytes(fbb.Finish())
