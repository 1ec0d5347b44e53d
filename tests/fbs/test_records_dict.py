"""Records: ``to_dict``/``from_dict`` round-trip every FlatBuffers table (unions, aliased union
members and string members included), and ``to_json`` of a decoded value prints the bytes'
order of key-sorted vectors, as ``flatc --json`` does, even when keys tie."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.wire import fbjson
from idlgen.wire import flatbuffers as fb

from . import strategies
from .common import FBS, flatc_binary, flatc_json, need_flatc, need_shared, root_of, runtime
from .test_differential import ROOTED

FEATURES = (Path(__file__).parent / "data" / "features.fbs").resolve()


def _rt() -> dict[str, Any]:
    return runtime(FEATURES)[1]


def test_ambiguous_union_to_dict() -> None:
    rt = _rt()
    Root, A, S = rt["Ex.Root"], rt["Ex.A"], rt["Ex.S"]
    r = Root(
        u=fb.UnionValue("A2", A(x=5)),
        us=[fb.UnionValue("A2", A(x=1)), "txt", S(a=1, b=2.0), fb.UnionValue("A", A(x=2))],
        v=S(a=3, b=1.5),
    )
    d = r.to_dict()
    assert d["u"] == {"A2": {"x": 5, "s": "hello", "v": [], "o": None}}
    assert [next(iter(x)) for x in d["us"]] == ["A2", "Str", "S", "A"]
    assert d["v"] == {"S": {"a": 3, "b": 1.5}}
    back = Root.from_dict(json.loads(json.dumps(d)))  # plain JSON types all the way
    assert back == r and back.to_flatbuffer() == r.to_flatbuffer()
    # the member value itself is still accepted, as by the constructor
    assert Root.from_dict({"u": fb.UnionValue("A2", A(x=5))}).u == r.u
    assert Root.from_dict({"v": S(a=3, b=1.5)}).v == r.v


@pytest.mark.parametrize(
    "bad", [{"u": {"Nope": {}}}, {"u": {"A": {}, "A2": {}}}, {"us": [{"Str": 3}]}]
)
def test_bad_union_dict(bad: dict[str, Any]) -> None:
    with pytest.raises((ValueError, TypeError)):
        _rt()["Ex.Root"].from_dict(bad)


def _schemas() -> list[Path]:
    return [FEATURES] + [p for p in ROOTED if p != FEATURES and p.is_relative_to(FBS)]


@pytest.mark.parametrize("schema", _schemas(), ids=lambda p: p.name)
def test_dict_round_trip_property(schema: Path) -> None:
    if schema != FEATURES:
        need_shared()
        if not schema.exists():
            pytest.skip(f"{schema} not in this corpus copy")
    _, rt = runtime(schema)
    desc = rt["desc:" + root_of(schema)]
    cls = desc.cls

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(strategies.table(desc))
    def run(v: Any) -> None:
        data = desc.encode(v)
        back = cls.from_dict(v.to_dict())
        assert back == v
        assert desc.encode(back) == data
        decoded = desc.decode(data)
        again = cls.from_dict(decoded.to_dict())
        assert again == decoded
        assert desc.encode(again) == desc.encode(decoded)

    run()


def _tied(rt: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Root values whose key-sorted vectors have many equal keys."""
    KT, K = rt["Ex.KT"], rt["Ex.K"]
    kt = st.builds(KT, name=st.sampled_from(["a", "b", ""]), n=st.integers(0, 9))
    k = st.builds(K, k=st.integers(0, 2), v=st.integers(0, 9).map(float))
    return st.builds(
        rt["Ex.Root"], kts=st.lists(kt, min_size=2, max_size=9), ks=st.lists(k, max_size=9)
    )


def test_decoded_json_keeps_the_bytes_order() -> None:
    """Without flatc: a decoded value prints its vectors as stored, JSON reads back as stored."""
    rt = _rt()
    desc = rt["desc:Ex.Root"]

    @settings(max_examples=80, deadline=None)
    @given(_tied(rt))
    def run(v: Any) -> None:
        decoded = desc.decode(desc.encode(v))
        text = fbjson.to_json(desc, decoded)
        again = fbjson.from_json(desc, text)
        assert [x.n for x in again.kts] == [x.n for x in decoded.kts]
        assert [x.v for x in again.ks or []] == [x.v for x in decoded.ks or []]
        assert fbjson.to_json(desc, again) == text  # read from JSON: printed in that order
        assert desc.encode(again) == desc.encode(decoded)

    run()


def test_tied_keys_agree_with_flatc() -> None:
    """110 random values with tied keys: flatc --json of our bytes is to_json of the decoded
    value, and flatc -b of any value's to_json is its to_flatbuffer (decoded, from JSON, built)."""
    need_flatc()
    rt = _rt()
    desc = rt["desc:Ex.Root"]
    values: list[Any] = []

    @settings(max_examples=110, deadline=None, database=None)
    @given(_tied(rt))
    def collect(v: Any) -> None:
        values.append(v)

    collect()
    ours = {f"v{i}": desc.encode(v) for i, v in enumerate(values)}
    printed = flatc_json(FEATURES, ours)
    decoded = {k: desc.decode(b) for k, b in ours.items()}
    for k in ours:
        assert fbjson.to_json(desc, decoded[k]) == printed[k], k
    built = {k: fbjson.to_json(desc, v) for k, v in zip(ours, values)}
    read = {k: fbjson.from_json(desc, printed[k]) for k in ours}
    texts = {
        **{f"b{k}": t for k, t in built.items()},
        **{f"d{k}": fbjson.to_json(desc, v) for k, v in decoded.items()},
        **{f"r{k}": fbjson.to_json(desc, v) for k, v in read.items()},
    }
    theirs = flatc_binary(FEATURES, texts)
    for k, v in zip(ours, values):
        assert theirs["b" + k] == ours[k], k
        assert theirs["d" + k] == desc.encode(decoded[k]), k
        assert theirs["r" + k] == desc.encode(read[k]), k


def test_union_of_aliases_of_one_table() -> None:
    """monster_test's AnyAmbiguousAliases (M1, M2, M3: all Monster): the field is typed
    ``Monster | None``, and ``to_dict`` used to call ``UnionValue.to_dict`` (AttributeError)."""
    need_shared()
    from .common import TESTS

    _, rt = runtime(TESTS / "monster_test.fbs")
    M = rt["MyGame.Example.Monster"]
    m = M(name="a", any_ambiguous=fb.UnionValue("M2", M(name="x")))
    d = m.to_dict()
    assert list(d["any_ambiguous"]) == ["M2"] and d["any_ambiguous"]["M2"]["name"] == "x"
    back = M.from_dict(d)
    assert back == m and back.to_flatbuffer() == m.to_flatbuffer()
    decoded = M.from_flatbuffer(m.to_flatbuffer())
    assert M.from_dict(decoded.to_dict()) == decoded
