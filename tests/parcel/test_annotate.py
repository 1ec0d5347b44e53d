"""``idlgen annotate`` on MessageParcel bytes: every golden vector's bytes in exactly one
region (fields, lengths, strings, padding; nothing unreachable), and damaged parcels reported
as problems without crashing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.data.annotate import annotate
from idlgen.data.regions import KINDS

from .test_convert import LINES, _compiled


def _kinds(c: object, data: bytes) -> tuple[list[str], list[tuple[int, str]]]:
    claims = annotate(c, data)
    kinds: list[str | None] = [None] * len(data)
    for r in claims.finish():
        assert r.kind in KINDS and r.size > 0
        for i in range(r.offset, r.offset + r.size):
            assert kinds[i] is None, f"byte {i} in two regions"
            kinds[i] = r.kind
    assert None not in kinds
    return [k for k in kinds if k is not None], claims.problems


def test_every_golden_vector() -> None:
    if not LINES:
        pytest.skip("../shared/vectors/parcel not available")
    seen: set[str] = set()
    for v in LINES:
        c = _compiled(v["package"], v["file"], v["struct"])
        kinds, problems = _kinds(c, bytes.fromhex(v["hex"]))
        assert problems == [], (v["struct"], v["index"], problems)
        assert "unreachable" not in kinds
        seen.update(kinds)
    assert {"field", "vector", "string", "padding"} <= seen


def test_damaged_parcels() -> None:
    if not LINES:
        pytest.skip("../shared/vectors/parcel not available")
    v = next(x for x in LINES if x["struct"] == "ModelConfig" and len(x["hex"]) > 40)
    c = _compiled(v["package"], v["file"], v["struct"])
    good = bytes.fromhex(v["hex"])

    @settings(max_examples=200, deadline=None, database=None)
    @given(
        st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 255)), max_size=4),
        st.integers(0, len(good) + 8),
    )
    def run(flips: list[tuple[int, int]], cut: int) -> None:
        data = bytearray(good + bytes(8))
        for i, b in flips:
            data[i] = b
        _kinds(c, bytes(data[:cut]))

    run()
    _, problems = _kinds(c, good[:-1])
    assert problems
