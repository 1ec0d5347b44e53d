"""The ``flatbuffers`` internals that :func:`idlgen.wire.flatbuffers.flex_dumps` replaces.

``flex.py`` swaps ``flexbuffers.Builder``'s private ``_string_pool`` and ``_key_pool`` for an
exact-match pool; ``pyproject.toml`` caps ``flatbuffers`` to the releases checked to have them.
This fails first if an installed release moves them.
"""

from __future__ import annotations

from flatbuffers import flexbuffers  # type: ignore[import-untyped]

from idlgen.wire.flatbuffers import flex_dumps, flex_loads
from idlgen.wire.flatbuffers.flex import _Pool


def test_the_builder_still_has_the_pools_flex_replaces() -> None:
    fbb = flexbuffers.Builder(share_strings=True, share_keys=True)
    for name in ("_string_pool", "_key_pool"):
        pool = getattr(fbb, name)
        assert callable(pool.FindOrInsert) and callable(pool.Clear)
    fbb._string_pool = _Pool()
    fbb._key_pool = _Pool()
    fbb.Add({"a": "x"})
    assert isinstance(fbb._string_pool, _Pool)  # the builder did not replace ours


def test_shared_strings_and_keys_round_trip() -> None:
    value = {"k": ["s", "s", {"k": "s"}], "j": "s"}
    data = flex_dumps(value)
    assert flex_loads(data) == value
    assert data.count(b"s\x00") == 1  # the string is written once and shared
