"""Hostile input: flatc's 21 malformed buffers, verifier limits, and a mutation fuzz."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen import DecodeError
from idlgen.wire import flatbuffers as fb

from .._gen import generate_schema
from .common import TESTS, classes_and_descriptors, need_shared, runtime

ANNOTATED = TESTS / "annotated_binary" / "annotated_binary.fbs"
INVALID = (
    sorted((TESTS / "annotated_binary" / "tests").glob("invalid_*.bin")) if TESTS.is_dir() else []
)


def _foo() -> fb.Table[Any]:
    need_shared()
    _, rt = runtime(ANNOTATED)
    d: fb.Table[Any] = rt["desc:AnnotatedBinary.Foo"]
    return d


def test_invalid_corpus_present() -> None:
    need_shared()
    assert len(INVALID) >= 21


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_malformed_buffers_rejected(path: Path) -> None:
    with pytest.raises(DecodeError) as e:
        _foo().decode(path.read_bytes())
    assert isinstance(e.value, ValueError)
    assert e.value.path.startswith("AnnotatedBinary.Foo") or e.value.offset is not None


def test_valid_annotated_binary_accepted() -> None:
    desc = _foo()
    obj = desc.decode((TESTS / "annotated_binary" / "annotated_binary.bin").read_bytes())
    assert obj.name.startswith("This is a long string")


def _runtime(src: str) -> dict[str, Any]:
    return classes_and_descriptors(generate_schema(src, suffix=".fbs"))


def test_depth_limit() -> None:
    rt = _runtime("table N { next:N; v:int; } root_type N;")
    N, desc = rt["N"], rt["desc:N"]
    node = N(v=1)
    for _ in range(fb.MAX_DEPTH + 5):
        node = N(next=node)
    data = desc.encode(node)
    with pytest.raises(DecodeError, match="depth"):
        desc.decode(data)
    shallow = N(v=1)
    for _ in range(fb.MAX_DEPTH - 2):
        shallow = N(next=shallow)
    assert desc.decode(desc.encode(shallow)) == shallow


def test_required_field_missing() -> None:
    rt = _runtime("table A { s:string (required); } table B { s:string; } root_type A;")
    data = rt["desc:B"].encode(rt["B"]())
    with pytest.raises(DecodeError, match="required"):
        rt["desc:A"].decode(data)
    assert rt["desc:A"].decode(data, verify=False).s is None


def test_string_without_terminator() -> None:
    rt = _runtime("table A { s:string; } root_type A;")
    data = bytearray(rt["desc:A"].encode(rt["A"](s="abc")))
    i = data.index(b"abc")
    data[i + 3] = ord("x")
    with pytest.raises(DecodeError, match="NUL"):
        rt["desc:A"].decode(bytes(data))


def test_unaligned_and_tiny_buffers() -> None:
    rt = _runtime("table A { x:long; } root_type A;")
    desc = rt["desc:A"]
    for n in range(12):
        with pytest.raises(DecodeError):
            desc.decode(bytes(n))
    data = desc.encode(rt["A"](x=5))
    with pytest.raises(DecodeError):
        desc.decode(b"\0\0\0\0" + data)  # every offset now points 4 bytes too early


def test_huge_vector_length_does_not_allocate() -> None:
    rt = _runtime("table A { v:[long]; } root_type A;")
    desc = rt["desc:A"]
    data = bytearray(desc.encode(rt["A"](v=[1, 2, 3])))
    i = data.index(struct.pack("<I", 3) + struct.pack("<q", 1))
    data[i : i + 4] = struct.pack("<I", 0x7FFFFFFF)
    with pytest.raises(DecodeError, match="out of bounds"):
        desc.decode(bytes(data))


def test_table_count_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    rt = _runtime("table L { v:int; } table A { l:[L]; } root_type A;")
    desc = rt["desc:A"]
    data = desc.encode(rt["A"](l=[rt["L"](v=i) for i in range(50)]))
    monkeypatch.setattr(fb.decoder, "MAX_TABLES", 20)
    with pytest.raises(DecodeError, match="too many tables"):
        desc.decode(data)


def test_unknown_union_type_rejected_only_when_verifying() -> None:
    rt = _runtime("table X { a:int; } union U { X } table A { u:U; } root_type A;")
    desc = rt["desc:A"]
    data = bytearray(desc.encode(rt["A"](u=rt["X"](a=7))))
    # the utype byte is the only 0x01 byte in the table's inline data
    vt = len(data) - 0
    pos = struct.unpack_from("<I", data, 0)[0]
    vtab = pos - struct.unpack_from("<i", data, pos)[0]
    off = struct.unpack_from("<H", data, vtab + 4)[0]
    assert data[pos + off] == 1
    data[pos + off] = 9
    with pytest.raises(DecodeError, match="union"):
        desc.decode(bytes(data))
    assert desc.decode(bytes(data), verify=False).u is None
    del vt


SEEDS = [
    (TESTS / "monsterdata_test.mon", "MyGame.Example.Monster", TESTS / "monster_test.fbs"),
    (TESTS / "annotated_binary" / "annotated_binary.bin", "AnnotatedBinary.Foo", ANNOTATED),
]


@pytest.mark.parametrize("seed,root,schema", SEEDS, ids=lambda x: getattr(x, "name", x))
def test_mutation_fuzz(seed: Path, root: str, schema: Path) -> None:
    """Flipped, overwritten, truncated or extended buffers: a value or DecodeError, nothing else."""
    need_shared()
    _, rt = runtime(schema)
    desc = rt["desc:" + root]
    base = seed.read_bytes()

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(
            st.tuples(st.integers(0, len(base) - 1), st.integers(0, 255)), min_size=1, max_size=6
        ),
        st.integers(0, len(base)),
        st.binary(max_size=8),
    )
    def run(edits: list[tuple[int, int]], cut: int, tail: bytes) -> None:
        data = bytearray(base)
        for i, b in edits:
            data[i] = b
        mutated = bytes(data[:cut]) + tail if cut < len(base) // 2 else bytes(data)
        for verify in (True, False):
            try:
                v = desc.decode(mutated, verify=verify)
            except DecodeError:
                continue
            assert type(v).__name__ == root.rsplit(".", 1)[-1]
            if verify:
                # whatever verifies also re-encodes
                desc.decode(desc.encode(v))

    run()


def test_union_vector_with_none_entry_reencodes() -> None:
    """Found by the mutation fuzz: a verified buffer whose union vector holds a NONE entry
    decodes to a None element, which must encode again (type 0, null offset)."""
    need_shared()
    [(seed, root, schema)] = [s for s in SEEDS if "annotated" in str(s[0])]
    _, rt = runtime(schema)
    desc = rt["desc:" + root]
    data = bytearray(seed.read_bytes())
    data[304] = 0
    v = desc.decode(bytes(data), verify=True)
    assert None in [x for vec in vars(v).values() if isinstance(vec, list) for x in vec]
    assert desc.decode(desc.encode(v)) == v
