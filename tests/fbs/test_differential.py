"""Random values of every corpus root type, checked against the real flatc both ways:

our bytes == flatc -b of our JSON; flatc --json of our bytes == our JSON; decoding either
buffer gives back the value we started from (up to flatc's key sorting). Buffers flatc writes
with ``--force-defaults`` (every default stored explicitly) decode to values that print exactly
as flatc prints them and re-encode to flatc -b of that JSON (presence-exact round trips)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from idlgen.wire import fbjson

from . import strategies
from .common import (
    FBS,
    REAL,
    REPO,
    TESTS,
    flatc_binary,
    flatc_json,
    need_flatc,
    need_shared,
    root_of,
    runtime,
)

ROOTED = [
    TESTS / "monster_test.fbs",
    TESTS / "annotated_binary" / "annotated_binary.fbs",
    TESTS / "monster_extra.fbs",
    TESTS / "cross_namespace_pack_test.fbs",
    TESTS / "ts" / "arrays_test_complex" / "arrays_test_complex.fbs",
    TESTS / "swift" / "fuzzer" / "Sources" / "fuzzer" / "fuzzer.fbs",
    REAL / "tflite" / "schema.fbs",
    REAL / "tflite" / "history" / "schema_2022-03-26_7f018add.fbs",
    REAL / "mindspore-lite" / "model.fbs",
    REAL / "mindspore-lite" / "gpu_cache.fbs",
    REAL / "mindspore-lite" / "v0" / "model_v0.fbs",
    REAL / "armnn" / "ArmnnSchema.fbs",
    REAL / "armnn" / "history" / "ArmnnSchema_19_08.fbs",
    REAL / "armnn" / "history" / "Schema_2019-01-30_969eea33.fbs",
    REAL / "arrow" / "File.fbs",
    REAL / "flatbuffers" / "reflection.fbs",
    Path(__file__).parent / "data" / "features.fbs",
    REPO / "schemas" / "fbs" / "armnn_schema.fbs",
    REPO / "schemas" / "fbs" / "mindspore_model_v0.fbs",
]

BATCH = 12


def _check(schema: Path, values: list[Any]) -> None:
    _, rt = runtime(schema)
    desc = rt["desc:" + root_of(schema)]
    ours = {f"v{i}": desc.encode(v) for i, v in enumerate(values)}
    texts = {k: fbjson.to_json(desc, desc.decode(b)) for k, b in ours.items()}
    # flatc reads our JSON into exactly our bytes
    theirs = flatc_binary(schema, texts)
    for k in ours:
        assert theirs[k] == ours[k], (k, texts[k])
    # flatc prints our bytes as exactly our JSON
    printed = flatc_json(schema, ours)
    for k in ours:
        assert printed[k] == texts[k]
    for k, v in zip(ours, values):
        back = desc.decode(theirs[k])
        assert desc.decode(desc.encode(back)) == back
        assert fbjson.to_json(desc, v) == texts[k]  # the value itself prints the same
        assert desc.encode(fbjson.from_json(desc, texts[k])) == ours[k]
    # presence: flatc stores every default; we print and re-encode what flatc would
    forced = flatc_binary(schema, texts, "--force-defaults")
    forced_json = flatc_json(schema, forced)
    plain = flatc_binary(schema, forced_json)
    for k in ours:
        back = desc.decode(forced[k])
        assert fbjson.to_json(desc, back) == forced_json[k], k
        assert desc.encode(back) == plain[k], k
        assert desc.encode(fbjson.from_json(desc, forced_json[k])) == plain[k], k


@pytest.mark.parametrize("schema", ROOTED, ids=lambda p: p.name)
def test_random_values_agree_with_flatc(schema: Path) -> None:
    if schema.is_relative_to(FBS):
        need_shared()
    need_flatc()
    if not schema.exists():
        pytest.skip(f"{schema} not in this corpus copy")
    _, rt = runtime(schema)
    desc = rt["desc:" + root_of(schema)]

    @settings(
        max_examples=5,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a shrink costs many flatc runs
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(strategies.table(desc), min_size=BATCH, max_size=BATCH))
    def run(values: list[Any]) -> None:
        _check(schema, values)

    run()
