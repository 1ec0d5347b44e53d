"""Interface request/reply framing, command ids, and the INnrtDevice loopback."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from idlgen import DecodeError, ir
from idlgen.backend import hdi_codec as codegen
from idlgen.wire import ipc, parcel

from .._gen import generated_classes
from ._support import CORPUS, nnrt

NS = "ohos.hdi.nnrt.v2_1"
UNITTEST = CORPUS / "hdi-gen-tests" / "test" / "unittest"


def _iface_codecs(
    version: str = "v2_1",
) -> tuple[dict[str, Any], dict[str, ipc.InterfaceCodec]]:
    schema, classes = nnrt(version)
    return classes, codegen.build_interfaces(schema, classes)


def _token(descriptor: str) -> bytes:
    w = parcel.Writer()
    w.write_interface_token(descriptor)
    return bytes(w.buf)


def test_request_framing_get_device_name() -> None:
    _, ifaces = _iface_codecs()
    dev = ifaces[f"{NS}.INnrtDevice"]
    m = dev.by_name["GetDeviceName"]
    assert m.cmd_id == 1 and m.mem_set
    token = _token(f"{NS}.INnrtDevice")
    # int32 0x100, int32 0, String16 (len, UTF-16LE, NUL, pad)
    assert token[:8] == struct.pack("<ii", 0x100, 0)
    assert token[8:12] == struct.pack("<i", len(f"{NS}.INnrtDevice"))
    assert len(token) % 4 == 0
    assert m.encode_request([]) == token + struct.pack("<i", 0)  # memSet WriteBool(false)
    assert m.encode_reply(["npu"]) == b"npu\0"
    # no String/array [out]: no memSet flag
    status = dev.by_name["GetDeviceStatus"]
    assert not status.mem_set and status.encode_request([]) == token
    alloc = dev.by_name["AllocateBuffer"]
    assert alloc.encode_request([4096]) == token + struct.pack("<I", 4096)
    assert dev.by_name["GetVersion"].cmd_id == 0


class Prepared:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.runs = 0

    def Run(self, inputs: list[Any], outputs: list[Any]) -> list[list[int]]:
        self.runs += 1
        return [[len(inputs), len(outputs)]]

    def GetInputDimRanges(self) -> tuple[list[list[int]], list[list[int]]]:
        return [[1, 1]], [[8, 8]]


class Device:
    def __init__(self) -> None:
        self.prepared: list[Prepared] = []

    def GetDeviceName(self) -> str:
        return "python-npu"

    def GetDeviceStatus(self) -> int:
        return 1

    def PrepareModel(self, model: Any, config: Any) -> Prepared:
        p = Prepared(model)
        self.prepared.append(p)
        return p

    def ReleaseBuffer(self, buffer: Any) -> None:
        raise ipc.HdiError(-1)


def _model(classes: dict[str, Any]) -> Any:
    C = lambda n: classes[f"{NS}.{n}"]  # noqa: E731
    NT = C("NodeType")
    act = C("Activation")(C("ActivationType").ACTIVATION_TYPE_RELU6, 0.0, 0.0, 6.0, False)
    node = C("Node")(
        name="relu",
        nodeType=NT.NODE_TYPE_ACTIVATION,
        nodeAttr=act.to_parcel(),
        inputIndex=[0],
        outputIndex=[1],
    )
    tensors = [
        C("Tensor")(
            name=f"t{i}",
            dataType=C("DataType").DATA_TYPE_FLOAT32,
            dims=[1, 4],
            data=C("SharedBuffer")(fd=-1),
        )
        for i in range(2)
    ]
    tensors[0].data = C("SharedBuffer")(fd=11, bufferSize=64, offset=0, dataSize=16)
    return C("Model")(name="m", inputIndex=[0], outputIndex=[1], nodes=[node], allTensors=tensors)


def test_loopback_innrt_device() -> None:
    classes, ifaces = _iface_codecs()
    impl = Device()
    dev = ipc.loopback(ifaces[f"{NS}.INnrtDevice"], impl)
    assert dev.GetDeviceName() == "python-npu"
    cmd, data = dev.sent  # type: ignore[misc]
    assert cmd == 1 and data.endswith(b"\0\0\0\0")
    assert dev.GetVersion() == (2, 1)
    assert dev.GetDeviceStatus() == classes[f"{NS}.DeviceStatus"].BUSY
    model = _model(classes)
    config = classes[f"{NS}.ModelConfig"](enableFloat16=True, extensions={"k": b"\x01"})
    prepared = dev.PrepareModel(model, config)
    # the service got an equal model (fd through the object table) and returned a remote object
    assert impl.prepared[0].model == model
    assert isinstance(prepared, ipc.Proxy) and prepared.codec.descriptor == f"{NS}.IPreparedModel"
    assert prepared.Run([], []) == [[0, 0]]
    assert impl.prepared[0].runs == 1
    assert prepared.GetInputDimRanges() == ([[1, 1]], [[8, 8]])
    with pytest.raises(ipc.HdiError) as e:
        dev.ReleaseBuffer(classes[f"{NS}.SharedBuffer"](fd=-1))
    assert e.value.status == -1
    with pytest.raises(ipc.HdiError) as e:
        dev.GetVendorName()
    assert e.value.status == ipc.HDF_ERR_NOT_SUPPORT


def test_stub_rejects_bad_requests() -> None:
    _, ifaces = _iface_codecs()
    stub = ipc.Stub(ifaces[f"{NS}.INnrtDevice"], Device())
    m = ifaces[f"{NS}.INnrtDevice"].by_name["GetDeviceName"]
    good = m.encode_request([])
    assert stub.send_request(1, good)[0] == 0
    assert stub.send_request(1, good[:-1])[0] == ipc.HDF_ERR_INVALID_PARAM
    wrong = ifaces[f"{NS}.IPreparedModel"].by_name["ExportModelCache"].encode_request([])
    assert stub.send_request(1, wrong)[0] == ipc.HDF_ERR_INVALID_PARAM
    assert stub.send_request(999, good)[0] == ipc.HDF_ERR_NOT_SUPPORT
    with pytest.raises(DecodeError, match="token"):
        m.decode_request(wrong)


def _load_case(case: str) -> ir.Schema:
    from idlgen.frontend.hdi.loader import load

    root = UNITTEST / case
    res = load(sorted(root.rglob("*.idl")), roots={"ohos.hdi": root})
    assert not [d for d in res.diagnostics if d.severity.name == "ERROR"], res.diagnostics
    return res.schema


def _all_methods(schema: ir.Schema, qualname: str) -> dict[str, list[int]]:
    decls = schema.decls()
    out: dict[str, list[int]] = {}
    q = qualname
    chain = []
    while q:
        d = decls[q]
        assert isinstance(d, ir.Interface)
        chain.append(d)
        q = d.parent
    for d in reversed(chain):
        for m in d.methods:
            out.setdefault(m.name, []).append(m.cmd_id)
    return out


@pytest.mark.skipif(not UNITTEST.is_dir(), reason="../shared hdi-gen tests not available")
def test_hdi_gen_command_ids() -> None:
    s02 = _load_case("02_standard_interface_idl")
    assert _all_methods(s02, "ohos.hdi.foo.v1_0.IFoo") == {
        "GetVersion": [0],
        "Ping": [1],
        "GetData": [2],
        "InfoTest": [3],
    }
    s04 = _load_case("04_extended_interface_idl")
    ids = _all_methods(s04, "ohos.hdi.foo.v1_1.IFoo")
    assert ids["TestPingV1_1"] == [4] and ids["TestGetData"] == [5]
    s08 = _load_case("08_overload_method_idl")
    decls = s08.decls()
    v11 = decls["ohos.hdi.foo.v1_1.IFoo"]
    assert isinstance(v11, ir.Interface)
    assert [(m.name, m.cmd_id, m.overload) for m in v11.methods] == [
        ("Ping", 4, True),
        ("GetData", 5, True),
    ]
    # the codecs: overloads are named with their command id, ancestors keep the plain name
    codecs = codegen.build_interfaces(s08, generated_classes(s08))
    foo = codecs["ohos.hdi.foo.v1_1.IFoo"]
    assert sorted(foo.by_cmd) == [0, 1, 2, 3, 4, 5]
    assert foo.by_name["Ping_4"].cmd_id == 4 and foo.by_name["Ping"].cmd_id == 1
    assert foo.by_name["GetData_5"].cmd_id == 5
    assert [n for n, _ in foo.by_name["Ping_4"].ins] == ["sendMsg", "code"]
    # inherited methods carry the derived interface's token
    assert foo.by_cmd[3].encode_request([7]).startswith(_token("ohos.hdi.foo.v1_1.IFoo"))


@pytest.mark.skipif(not UNITTEST.is_dir(), reason="../shared hdi-gen tests not available")
def test_hdi_gen_02_framing() -> None:
    s02 = _load_case("02_standard_interface_idl")
    foo = codegen.build_interfaces(s02, {})["ohos.hdi.foo.v1_0.IFoo"]

    class Impl:
        def Ping(self, msg: str) -> str:
            return msg.upper()

        def InfoTest(self, x: int) -> float:
            return x / 2

    proxy = ipc.loopback(foo, Impl())
    assert proxy.Ping("hi") == "HI"
    assert proxy.sent == (
        1,
        _token("ohos.hdi.foo.v1_0.IFoo") + struct.pack("<i", 0) + b"hi\0\0",
    )
    assert proxy.InfoTest(inParam=3) == 1.5
    assert proxy.sent == (3, _token("ohos.hdi.foo.v1_0.IFoo") + struct.pack("<i", 3))
