"""Hostile input: truncations, bit flips, garbage, huge counts → only DecodeError, bounded memory."""

from __future__ import annotations

import struct
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen import DecodeError, ir
from idlgen.wire import ipc, parcel

from ._strategies import values
from ._support import nnrt

NS = "ohos.hdi.nnrt.v2_1"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
TARGETS = [
    "Model",
    "Node",
    "Tensor",
    "ModelConfig",
    "IOTensor",
    "DepthToSpace",
    "Conv2DFusion",
    "Activation",
]


def _decode(cls: Any, data: bytes, objects: list[object] | None) -> None:
    try:
        cls.from_parcel(data, objects)
    except DecodeError as e:
        assert e.offset is None or 0 <= e.offset <= len(data)
        assert e.path


@pytest.mark.parametrize("name", TARGETS)
def test_truncations_and_flips(name: str) -> None:
    schema, classes = nnrt("v2_1")
    decls = schema.decls()
    cls = classes[f"{NS}.{name}"]

    @SETTINGS
    @given(values(ir.Ref(f"{NS}.{name}", ir.RefKind.STRUCT), decls, classes), st.data())
    def check(v: Any, data: st.DataObject) -> None:
        objects: list[object] = []
        enc = v.to_parcel(objects)
        for cut in range(len(enc)):  # every strict prefix is an error
            with pytest.raises(DecodeError):
                cls.from_parcel(enc[:cut], objects)
        if enc:
            buf = bytearray(enc)
            for _ in range(data.draw(st.integers(1, 4))):
                i = data.draw(st.integers(0, len(buf) - 1))
                buf[i] ^= 1 << data.draw(st.integers(0, 7))
            _decode(cls, bytes(buf), objects)
        _decode(cls, enc + data.draw(st.binary(min_size=1, max_size=8)), objects)

    check()


@pytest.mark.parametrize("name", TARGETS)
@SETTINGS
@given(garbage=st.binary(max_size=300))
def test_garbage(name: str, garbage: bytes) -> None:
    _, classes = nnrt("v2_1")
    _decode(classes[f"{NS}.{name}"], garbage, list(range(8)))
    _decode(classes[f"{NS}.{name}"], garbage, None)


def test_huge_counts() -> None:
    _, classes = nnrt("v2_1")
    Node, Model = classes[f"{NS}.Node"], classes[f"{NS}.Model"]
    head = b"n\0\0\0" + struct.pack("<Q", 2)
    for count in (0xFFFFFFFF, 0x7FFFFFFF, 1 << 20, 9):
        with pytest.raises(DecodeError, match="count") as e:
            Node.from_parcel(head + struct.pack("<I", count) + b"\0" * 8)
        assert e.value.path == "Node.nodeAttr" and e.value.offset == 12
    # element-wise arrays: the C++ limit 204800 / sizeof(Node) first, then the bytes left
    with pytest.raises(DecodeError, match="C\\+\\+ limit"):
        Model.from_parcel(b"m\0\0\0" + struct.pack("<III", 0, 0, 204800))
    with pytest.raises(DecodeError, match="bytes left"):
        Model.from_parcel(b"m\0\0\0" + struct.pack("<III", 0, 0, 1000))
    strings = parcel.Array(parcel.STRING, 24)
    with pytest.raises(DecodeError, match="limit 8533"):
        strings.decode(struct.pack("<I", 8534) + b"\0" * 40000)
    m = parcel.Map(parcel.STRING, parcel.BYTES)
    with pytest.raises(DecodeError, match="count"):
        m.decode(struct.pack("<I", 0xFFFFFFFF))


@pytest.mark.parametrize("name", ["Model", "ModelConfig", "Tensor"])
def test_allocation_is_bounded(name: str) -> None:
    """Decoding hostile input never allocates much more than the input justifies."""
    _, classes = nnrt("v2_1")
    cls = classes[f"{NS}.{name}"]
    inputs = [
        b"\xff" * 4096,
        b"a\0\0\0" + b"\xff\xff\xff\x7f" * 1024,
        b"a\0\0\0" + struct.pack("<I", 1000) + b"\0" * 4000,
        b"a\0\0\0" + struct.pack("<IIII", 0, 0, 0, 0) + struct.pack("<I", 1000) * 1000,
    ]
    for data in inputs:
        tracemalloc.start()
        try:
            cls.from_parcel(data, list(range(100)))
        except DecodeError:
            pass
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 64 * len(data) + (256 << 10), (name, len(data), peak)


def test_reply_decoding_is_safe() -> None:
    from idlgen.backend import hdi_codec as codegen

    schema, classes = nnrt("v2_1")
    ifaces = codegen.build_interfaces(schema, classes)
    for iface in ifaces.values():
        for m in iface.by_cmd.values():

            @settings(max_examples=15, deadline=None)
            @given(st.binary(max_size=64))
            def check(data: bytes) -> None:
                for fn in (m.decode_reply, m.decode_request):
                    try:
                        fn(data, [])
                    except DecodeError:
                        pass

            check()
    assert isinstance(ipc.HDF_ERR_INVALID_PARAM, int)


def _outcome(codec: parcel.Struct, data: bytes, objects: list[object], generic: bool) -> Any:
    r = parcel.Reader(data, objects)
    try:
        v = codec.read_generic(r) if generic else codec.read(r)
        r.check_done()
    except DecodeError as e:
        return ("error", e.reason, e.path, e.offset)
    return ("ok", repr(v))  # repr: NaN fields compare equal


@pytest.mark.parametrize(
    "name",
    [
        "Model",
        "Node",
        "Tensor",
        "ModelConfig",
        "IOTensor",
        "DepthToSpace",
        "Conv2DFusion",
    ],
)
def test_fast_reader_matches_generic(name: str) -> None:
    """The struct fast-path reader behaves exactly like member-by-member reading."""
    schema, classes = nnrt("v2_1")
    decls = schema.decls()
    codec = parcel.codec_of(classes[f"{NS}.{name}"])
    assert isinstance(codec, parcel.Struct)

    @SETTINGS
    @given(values(ir.Ref(f"{NS}.{name}", ir.RefKind.STRUCT), decls, classes), st.data())
    def check(v: Any, data: st.DataObject) -> None:
        objects: list[object] = []
        enc = bytearray(v.to_parcel(objects))
        variants = [bytes(enc), bytes(enc[: data.draw(st.integers(0, len(enc)))])]
        if enc:
            i = data.draw(st.integers(0, len(enc) - 1))
            enc[i] = data.draw(st.integers(0, 255))
            variants.append(bytes(enc))
        variants.append(data.draw(st.binary(max_size=64)))
        for b in variants:
            assert _outcome(codec, b, objects, False) == _outcome(codec, b, objects, True)

    check()
