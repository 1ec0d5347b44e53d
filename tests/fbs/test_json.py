"""JSON: what flatc's parser reads, we read into the same bytes; bad JSON is a DecodeError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from idlgen import DecodeError
from idlgen.wire import fbjson
from idlgen.wire import flatbuffers as fb

from . import strategies
from .common import flatc_binary, need_flatc, runtime

FEATURES = Path(__file__).parent / "data" / "features.fbs"

QUIRKS = [
    '{ e: Z, f: "P R", name: "a" }',
    "{ e: 'Z', // comment\n name: 'sq\\u00e9', /* block */ }",
    '{ "e": "-3", "arr": [0x10, 0XfF, 3,], "d": nan }',
    "{ d: -inf, u64: 18446744073709551615, b: [true, false, 1] }",
    '{ u: { x: 1 }, u_type: A, v_type: "S", v: { a: -1, b: 2.5 } }',
    '{ us_type: ["A", "Str", "S"], us: [{x: 2}, "txt", {a: 1, b: 0.5}] }',
    '{ ks: [{k: 3, v: 1}, {k: 1, v: 2}, {k: 2, v: 3}], kts: [{name: "b"}, {name: "a", n: 4}] }',
    '{ nested: { x: 9, s: "in" }, strs: ["x", "y\\n\\t\\"z\\""], es: [X, "Z", 7] }',
    '{ u_type: "A2", u: { x: 5 }, name: "same", name2: "same" }',
    "{ u_type: 100, u: {}, f: 0, e: Y }",
]


def _desc() -> fb.Table[Any]:
    _, rt = runtime(FEATURES)
    d: fb.Table[Any] = rt["desc:Ex.Root"]
    return d


def test_flatc_json_quirks_give_flatc_bytes() -> None:
    need_flatc()
    desc = _desc()
    texts = {f"q{i}": t for i, t in enumerate(QUIRKS)}
    theirs = flatc_binary(FEATURES, texts)
    for k, t in texts.items():
        assert desc.encode(fbjson.from_json(desc, t)) == theirs[k], t


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "{ e: }",
        "{ nosuchfield: 1 }",
        "{ e: NOPE }",
        "{ u: { x: 1 } }",
        "{ arr: [1, 2 }",
        "[1, 2]",
        '{ name: "x" } trailing',
        "{ arr: [70000] }",
        "{ u_type: Q, u: {} }",
        "{ u_type: NONE, u: {} }",
    ],
)
def test_bad_json(text: str) -> None:
    desc = _desc()
    with pytest.raises(DecodeError):
        desc.encode(fbjson.from_json(desc, text))


def test_roundtrip_property() -> None:
    desc = _desc()

    @settings(max_examples=60, deadline=None)
    @given(strategies.table(desc))
    def run(v: Any) -> None:
        text = fbjson.to_json(desc, v)
        back = fbjson.from_json(desc, text)
        assert desc.encode(back) == desc.encode(v)
        assert desc.decode(desc.encode(back)) == desc.decode(desc.encode(v))

    run()
