"""Byte identity with flatc's golden buffers, JSON identity with flatc's printer, and decoding
buffers written by other FlatBuffers implementations."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from idlgen import DecodeError
from idlgen.wire import fbjson
from idlgen.wire import flatbuffers as fb

from .common import TESTS, flatc_binary, flatc_json, need_shared, runtime

MONSTER = TESTS / "monster_test.fbs"
ANNOTATED = TESTS / "annotated_binary" / "annotated_binary.fbs"

GOLDEN = [
    (
        MONSTER,
        "MyGame.Example.Monster",
        TESTS / "monsterdata_test.json",
        TESTS / "monsterdata_test.mon",
        600,
    ),
    (
        MONSTER,
        "MyGame.Example.Monster",
        TESTS / "unicode_test.json",
        TESTS / "unicode_test.mon",
        None,
    ),
    (
        ANNOTATED,
        "AnnotatedBinary.Foo",
        TESTS / "annotated_binary" / "annotated_binary.json",
        TESTS / "annotated_binary" / "annotated_binary.bin",
        None,
    ),
]


def _desc(schema: Path, root: str) -> fb.Table[object]:
    need_shared()
    _, rt = runtime(schema)
    d: fb.Table[object] = rt["desc:" + root]
    return d


@pytest.mark.parametrize(
    "schema,root,js,golden,size", GOLDEN, ids=lambda x: getattr(x, "name", None)
)
def test_json_to_bytes_identical(
    schema: Path, root: str, js: Path, golden: Path, size: int | None
) -> None:
    desc = _desc(schema, root)
    data = golden.read_bytes()
    if size is not None:
        assert len(data) == size
    obj = fbjson.from_json(desc, js.read_text(encoding="utf-8"))
    assert desc.encode(obj) == data


@pytest.mark.parametrize(
    "schema,root,js,golden,size", GOLDEN, ids=lambda x: getattr(x, "name", None)
)
def test_decode_reencode_identical(
    schema: Path, root: str, js: Path, golden: Path, size: int | None
) -> None:
    desc = _desc(schema, root)
    data = golden.read_bytes()
    obj = desc.decode(data)
    assert desc.decode(desc.encode(obj)) == obj
    if js.name != "monsterdata_test.json":  # that JSON lists fields out of schema order
        assert desc.encode(obj) == data
    # and the decoded value equals what the JSON says (vectors flatc sorts come back sorted)
    again = desc.decode(desc.encode(fbjson.from_json(desc, js.read_text(encoding="utf-8"))))
    assert again == obj


@pytest.mark.parametrize(
    "schema,root,js,golden,size", GOLDEN, ids=lambda x: getattr(x, "name", None)
)
def test_to_json_matches_flatc(
    schema: Path, root: str, js: Path, golden: Path, size: int | None
) -> None:
    desc = _desc(schema, root)
    obj = desc.decode(golden.read_bytes())
    ref = flatc_json(schema, {"x": golden.read_bytes()})["x"]
    assert fbjson.to_json(desc, obj) == ref
    # what we print, flatc reads back into the very same bytes
    assert flatc_binary(schema, {"x": fbjson.to_json(desc, obj)})["x"] == desc.encode(obj)


def test_monster_values() -> None:
    desc = _desc(MONSTER, "MyGame.Example.Monster")
    m = desc.decode((TESTS / "monsterdata_test.mon").read_bytes())
    assert m.name == "MyMonster" and m.hp == 80 and m.mana == 150  # type: ignore[attr-defined]
    assert bytes(m.inventory) == bytes(range(5))  # type: ignore[attr-defined]
    assert m.test.name == "Fred"  # type: ignore[attr-defined]  # union -> typed value
    assert [a.id for a in m.testarrayofsortedstruct] == [0, 1, 5]  # type: ignore[attr-defined]
    assert [t.id for t in m.scalar_key_sorted_tables] == ["miss", "hit"]  # type: ignore[attr-defined]
    assert m.testhashu32_fnv1a == 2390860913  # type: ignore[attr-defined]
    assert math.isnan(m.nan_default)  # type: ignore[attr-defined]
    assert m.pos.test3.b == 6  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name,size_prefixed",
    [
        ("monsterdata_python_wire.mon", False),
        ("FlatBuffers.Test/monsterdata_cstest.mon", False),
        ("FlatBuffers.Test/monsterdata_cstest_sp.mon", True),
    ],
)
def test_other_builders_decode(name: str, size_prefixed: bool) -> None:
    """Buffers laid out by the Python/C#/Java builders decode; flatc agrees on their JSON."""
    desc = _desc(MONSTER, "MyGame.Example.Monster")
    path = TESTS / name
    if not path.exists():
        pytest.skip(f"{name} not in this corpus copy")
    data = path.read_bytes()
    obj = desc.decode(data, size_prefixed=size_prefixed)
    if not size_prefixed:
        assert fbjson.to_json(desc, obj) == flatc_json(MONSTER, {"x": data})["x"]
    assert obj.name == "MyMonster"  # type: ignore[attr-defined]
    # re-encoding produces flatc's layout, which decodes to the same value
    assert desc.decode(desc.encode(obj)) == obj


def test_size_prefix_and_identifier() -> None:
    desc = _desc(MONSTER, "MyGame.Example.Monster")
    obj = desc.decode((TESTS / "monsterdata_test.mon").read_bytes())
    plain = desc.encode(obj)
    sp = desc.encode(obj, size_prefixed=True)
    assert plain[4:8] == b"MONS" and sp[8:12] == b"MONS"
    assert int.from_bytes(sp[:4], "little") == len(sp) - 4
    assert desc.decode(sp, size_prefixed=True) == obj
    assert len(desc.encode(obj, file_identifier="")) % 8 == 0


def test_key_lookup() -> None:
    desc = _desc(MONSTER, "MyGame.Example.Monster")
    _, rt = runtime(MONSTER)
    obj = desc.decode((TESTS / "monsterdata_test.mon").read_bytes())
    abil = rt["desc:MyGame.Example.Ability"]
    stat = rt["desc:MyGame.Example.Stat"]
    assert fb.lookup_by_key(abil, obj.testarrayofsortedstruct, 5).distance == 12  # type: ignore[attr-defined]
    assert fb.lookup_by_key(abil, obj.testarrayofsortedstruct, 4) is None  # type: ignore[attr-defined]
    assert fb.lookup_by_key(stat, obj.scalar_key_sorted_tables, 1).id == "hit"  # type: ignore[attr-defined]


def test_nested_flatbuffer_roundtrip() -> None:
    desc = _desc(MONSTER, "MyGame.Example.Monster")
    _, rt = runtime(MONSTER)
    Monster = rt["MyGame.Example.Monster"]
    inner = Monster(name="inner", hp=7)
    outer = Monster(name="outer", testnestedflatbuffer=desc.encode(inner))
    back = desc.decode(desc.encode(outer))
    nested = fb.decode_nested(back, "testnestedflatbuffer")
    assert nested == desc.decode(desc.encode(inner))
    # a corrupt nested buffer is caught by the verifier
    bad = dataclasses.replace(outer, testnestedflatbuffer=b"\xff" * 16)
    with pytest.raises(DecodeError):
        desc.decode(desc.encode(bad))


def test_zero_copy_scalar_vectors() -> None:
    desc = _desc(MONSTER, "MyGame.Example.Monster")
    _, rt = runtime(MONSTER)
    Monster = rt["MyGame.Example.Monster"]
    big = list(range(5000))
    data = desc.encode(Monster(name="v", vector_of_longs=big, inventory=bytes(range(256)) * 40))
    m = desc.decode(data)
    assert isinstance(m.vector_of_longs, fb.ScalarVector)  # type: ignore[attr-defined]
    arr = m.vector_of_longs.numpy()  # type: ignore[attr-defined]
    assert not arr.flags.writeable and arr.base is not None
    assert m.vector_of_longs == big and m.inventory == bytes(range(256)) * 40  # type: ignore[attr-defined]
    assert m.vector_of_longs != big[:-1] + [0]  # type: ignore[attr-defined]
    assert desc.encode(m) == data
