"""Generated code for flatc's monster_test against flatc itself: enum members renamed in Python
(``Race.None_``) read and written by schema name, every enum spelling flatc reads, deprecated
fields carried through, explicit defaults printed, file identifiers checked."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from idlgen import DecodeError
from idlgen.cli import main
from idlgen.wire import fbjson

from .common import (
    REAL,
    TESTS,
    flatc_binary,
    flatc_json,
    include_dirs,
    need_flatc,
    need_shared,
    runtime,
)

MONSTER = TESTS / "monster_test.fbs"


@pytest.fixture(scope="module")
def ex(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    need_shared()
    root = tmp_path_factory.mktemp("fbsmon")
    inc = [a for d in include_dirs(MONSTER) for a in ("-I", str(d))]
    assert main(["build", str(MONSTER), *inc, "--out", str(root / "fbsgen_mon"), "-q"]) == 0
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("fbsgen_mon.MyGame.Example")
    finally:
        sys.path.remove(str(root))


def test_keyword_member_by_schema_name(ex: ModuleType) -> None:
    m = ex.Monster.from_json('{"name": "m", "signed_enum": "None"}')
    assert m.signed_enum == ex.Race.None_ == -1
    m = ex.Monster.from_json('{"name": "m", "signed_enum": "Elf"}')
    assert m.signed_enum == ex.Race.Elf
    for python_only in ("None_", "Nobody"):  # JSON knows the schema's names, as flatc does
        with pytest.raises(DecodeError):
            ex.Monster.from_json(f'{{"name": "m", "signed_enum": "{python_only}"}}')


# accepted by flatc 25.12
ENUM_TEXTS = [
    '{name: "m", color: "Red Blue"}',
    '{name: "m", color: Green}',
    '{name: "m", color: 8}',
    '{name: "m", color: 0}',
    '{name: "m", color: "0x2"}',
    '{name: "m", color: "Blue Red"}',
    '{name: "m", signed_enum: "-1"}',
    '{name: "m", signed_enum: "Elf Dwarf"}',
    '{name: "m", signed_enum: -1}',
    '{name: "m", signed_enum: Dwarf}',
    '{name: "m", testarrayofbools: [true, false], vector_of_enums: ["Red", "Blue Green", 2]}',
]


@pytest.mark.parametrize("text", ENUM_TEXTS)
def test_enum_spellings_agree_with_flatc(ex: ModuleType, text: str) -> None:
    need_flatc()
    theirs = flatc_binary(MONSTER, {"x": text})["x"]
    ours = ex.Monster.from_json(text)
    assert ours.to_flatbuffer() == theirs
    assert ours.to_json() == flatc_json(MONSTER, {"x": theirs})["x"]


def test_unknown_enum_names_rejected_like_flatc(ex: ModuleType) -> None:
    # each rejected by flatc 25.12 as well (scoped names only qualify plain integer fields)
    for text in (
        '{name: "m", color: "Purple"}',
        '{name: "m", color: "Race.Elf"}',
        '{name: "m", color: "Color.Red"}',
        '{name: "m", color: Color.Red}',
        '{name: "m", color: "Blue  Red"}',
        '{name: "m", color: "Red 8"}',
        '{name: "m", color: "Red "}',
    ):
        with pytest.raises(DecodeError):
            ex.Monster.from_json(text)


FORCED = [
    '{name: "x", friendly: true, hp: 100, mana: 150, signed_enum: "None", color: Blue}',
    '{name: "x", friendly: false, testf: 3.14159, testbool: false, '
    'test_type: Monster, test: {name: "inner", hp: 100}}',
    '{name: "x", testarrayoftables: [{name: "b", hp: 100}, {name: "a", friendly: true}]}',
]


@pytest.mark.parametrize("text", FORCED)
def test_flatc_force_defaults_round_trip(ex: ModuleType, text: str) -> None:
    """Buffers that store defaults explicitly (and deprecated fields) print as flatc prints
    them and re-encode to flatc -b of that JSON."""
    need_flatc()
    forced = flatc_binary(MONSTER, {"x": text}, "--force-defaults")["x"]
    printed = flatc_json(MONSTER, {"x": forced})["x"]
    m = ex.Monster.from_flatbuffer(forced)
    assert m.to_json() == printed
    assert m.to_flatbuffer() == flatc_binary(MONSTER, {"x": printed})["x"]
    # a value built in Python omits defaults, like flatc -b
    fresh = ex.Monster(name="x")
    assert fresh.to_json() == '{\n  "name": "x"\n}\n'


def test_deprecated_field_carried(ex: ModuleType) -> None:
    need_flatc()
    text = '{name: "x", friendly: true}'
    theirs = flatc_binary(MONSTER, {"x": text})["x"]
    assert ex.Monster.from_json(text).to_flatbuffer() == theirs
    m = ex.Monster.from_flatbuffer(theirs)
    assert '"friendly": true' in m.to_json()
    assert m.to_flatbuffer() == theirs
    assert not hasattr(m, "friendly")  # not part of the typed API
    assert "friendly" not in ex.Monster.__dataclass_fields__
    assert "friendly" not in m.to_dict()


def test_identifier_mismatch_from_flatc_bytes(ex: ModuleType) -> None:
    need_flatc()
    theirs = flatc_binary(MONSTER, {"x": '{name: "x"}'})["x"]
    assert theirs[4:8] == b"MONS"
    bad = theirs[:4] + b"NOPE" + theirs[8:]
    with pytest.raises(DecodeError, match="identifier"):
        ex.Monster.from_flatbuffer(bad)
    assert ex.Monster.from_flatbuffer(bad, check_identifier=False).name == "x"


REAL_CASES = [
    (
        "tflite/schema.fbs",
        "tflite.Model",
        "{version: 3, operator_codes: [{deprecated_builtin_code: 3, version: 1, builtin_code: "
        'CONV_2D}], signature_defs: [{deprecated_tag: "serve", signature_key: "k"}], '
        "subgraphs: [{operators: [{opcode_index: 0, builtin_options_type: ResizeBilinearOptions,"
        " builtin_options: {new_height: 4, new_width: 5, align_corners: true}}]}]}",
    ),
    (
        "mindspore-lite/model.fbs",
        "mindspore.schema.MetaGraph",
        '{name: "g", nodes: [{name: "n", nodeType: 7, quantType: QUANT_NONE, deviceType: -1}]}',
    ),
]


@pytest.mark.parametrize("case", REAL_CASES, ids=lambda c: c[0])
def test_real_schemas_presence(case: tuple[str, str, str]) -> None:
    """TFLite's OperatorCode.version stored as its default 1, deprecated SignatureDef.deprecated_tag
    and ResizeBilinearOptions.new_height, MindSpore Lite's deprecated CNode.nodeType: through
    decode, JSON and re-encode exactly as flatc does."""
    need_shared()
    need_flatc()
    schema = REAL / case[0]
    _, rt = runtime(schema)
    desc = rt["desc:" + case[1]]
    for flags in ((), ("--force-defaults",)):
        data = flatc_binary(schema, {"x": case[2]}, *flags)["x"]
        printed = flatc_json(schema, {"x": data})["x"]
        v = desc.decode(data)
        assert fbjson.to_json(desc, v) == printed
        assert desc.encode(v) == flatc_binary(schema, {"x": printed})["x"]
        assert (
            desc.encode(fbjson.from_json(desc, case[2]))
            == flatc_binary(schema, {"x": case[2]})["x"]
        )
    assert "deprecated_tag" in printed or "nodeType" in printed
