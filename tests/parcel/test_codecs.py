"""Parcel primitives, hdi.md worked examples, out-of-band objects, unions, C layouts."""

from __future__ import annotations

import struct

import pytest

from idlgen import DecodeError, ir
from idlgen.backend import Names
from idlgen.backend import hdi_codec as codegen
from idlgen.ir import hdi_layout as layout
from idlgen.wire import parcel

from .._gen import generated_classes
from ._support import nnrt

NS = "ohos.hdi.nnrt.v2_1"


def cls(name: str, version: str = "v2_1") -> type:
    return nnrt(version)[1][f"ohos.hdi.nnrt.{version}.{name}"]  # type: ignore[no-any-return]


def test_activation_worked_example() -> None:
    A, AT = cls("Activation"), cls("ActivationType")
    a = A(AT.ACTIVATION_TYPE_RELU6, 0.2, -1.0, 6.0, True)
    data = bytes.fromhex("03000000" "cdcc4c3e" "000080bf" "0000c040" "01000000" "00000000")
    assert a.to_parcel() == data
    back = A.from_parcel(data)
    assert back.activationType is AT.ACTIVATION_TYPE_RELU6
    assert back.approximate is True and back.minVal == -1.0 and back.maxVal == 6.0
    assert struct.pack("<f", back.alpha) == struct.pack("<f", 0.2)


def test_pod_sizes_of_hdi_md() -> None:
    sizes = {
        "Abs": 8,
        "All": 8,
        "AddFusion": 8,
        "Clip": 8,
        "QuantParam": 16,
        "Activation": 24,
    }
    for name, size in sizes.items():
        codec = parcel.codec_of(cls(name))
        assert isinstance(codec, parcel.PodStruct)
        assert codec.cpp_size == size, name
        assert len(cls(name)().to_parcel()) == size


def test_depth_to_space_worked_example() -> None:
    D, F = cls("DepthToSpace"), cls("Format")
    d = D(2, F.FORMAT_NHWC, "DCR")
    assert isinstance(parcel.codec_of(D), parcel.Struct)
    data = bytes.fromhex("0200000000000000" "0100000000000000" "44435200")
    assert d.to_parcel() == data
    assert D.from_parcel(data) == d


def test_enum_sign_extension() -> None:
    F = cls("Format")
    codec = parcel.Enum(F, "b")
    assert codec.encode(F.FORMAT_NONE) == b"\xff" * 8
    assert codec.decode(b"\xff" * 8) is F.FORMAT_NONE
    # unknown values that fit the base type are kept with their number
    v = codec.decode(struct.pack("<q", 77))
    assert int(v) == 77 and isinstance(v, F)
    assert codec.encode(v) == struct.pack("<q", 77)
    # upper bytes that are not the sign extension: rejected with the offset
    with pytest.raises(DecodeError) as e:
        codec.decode(struct.pack("<Q", 0x1_0000_0001))
    assert e.value.offset == 0
    with pytest.raises(parcel.EncodeError):
        codec.encode(200)


def test_narrow_integers_are_widened() -> None:
    assert parcel.INT8.encode(-1) == b"\xff\xff\xff\xff"
    assert parcel.UINT8.encode(255) == b"\xff\x00\x00\x00"
    assert parcel.INT16.encode(-2) == struct.pack("<i", -2)
    assert parcel.BOOL.encode(True) == b"\x01\x00\x00\x00"
    assert parcel.INT64.encode(-1) == b"\xff" * 8
    # readers truncate like static_cast
    assert parcel.INT8.decode(struct.pack("<i", 0x1FF)) == -1
    assert parcel.UINT16.decode(struct.pack("<I", 0x12345)) == 0x2345
    assert parcel.BOOL.decode(struct.pack("<i", 7)) is True
    for codec, bad in ((parcel.INT8, 128), (parcel.UINT16, -1), (parcel.INT32, 2**31)):
        with pytest.raises(parcel.EncodeError):
            codec.encode(bad)


def test_cstring_padding_and_errors() -> None:
    for s, n in (("", 4), ("abc", 4), ("abcd", 8), ("é", 4)):
        b = parcel.STRING.encode(s)
        assert len(b) == n and b.startswith(s.encode() + b"\0") and b.endswith(b"\0")
        assert parcel.STRING.decode(b) == s
    with pytest.raises(parcel.EncodeError):
        parcel.STRING.encode("a\0b")
    with pytest.raises(DecodeError, match="NUL"):
        parcel.STRING.decode(b"abcd")
    with pytest.raises(DecodeError, match="UTF-8") as e:
        parcel.STRING.decode(b"a\xff\0\0")
    assert e.value.offset == 1


def test_string16_and_interface_token() -> None:
    w = parcel.Writer()
    w.write_interface_token("ab")
    assert bytes(w.buf) == struct.pack("<iii", 0x100, 0, 2) + b"a\0b\0\0\0\0\0"
    r = parcel.Reader(bytes(w.buf))
    assert r.read_interface_token() == "ab"
    r.check_done()


def test_pod_and_elementwise_arrays() -> None:
    longs = parcel.PodArray(parcel.INT64)
    assert longs.encode([3, 3]) == bytes.fromhex("02000000" "0300000000000000" "0300000000000000")
    assert longs.encode([]) == b"\0\0\0\0"
    shorts = parcel.PodArray(parcel.INT16)
    assert shorts.encode([1, -1, 2]) == bytes.fromhex("03000000" "0100ffff0200" "0000")
    assert shorts.decode(shorts.encode([1, -1, 2])) == [1, -1, 2]
    bools = parcel.Array(parcel.BOOL, 1)
    assert bools.encode([True, False]) == bytes.fromhex("02000000" "01000000" "00000000")
    nested = parcel.Array(parcel.PodArray(parcel.INT64), 24)
    assert nested.decode(nested.encode([[1], [], [2, 3]])) == [[1], [], [2, 3]]
    assert parcel.BYTES.encode(b"\x01\x02\x03\x04\x05") == bytes.fromhex(
        "05000000" "0102030405000000"
    )


def test_map_sorted_by_key() -> None:
    m = parcel.Map(parcel.STRING, parcel.INT32)
    data = m.encode({"b": 2, "a": 1})
    assert data == m.encode({"a": 1, "b": 2})
    assert data[:4] == struct.pack("<I", 2)
    assert data[4:12] == b"a\0\0\0\x01\0\0\0"
    assert m.decode(data) == {"a": 1, "b": 2}


def test_file_descriptor_out_of_band() -> None:
    SB = cls("SharedBuffer")
    buf = SB(7, 100, 4, 96)
    objs: list[object] = []
    data = buf.to_parcel(objs)
    assert data == struct.pack("<iIII", 1, 100, 4, 96)
    assert objs == [7]
    assert SB.from_parcel(data, objs) == buf
    # no fd: WriteBool(false) and nothing out of band
    objs = []
    assert SB(-1, 1, 2, 3).to_parcel(objs) == struct.pack("<iIII", 0, 1, 2, 3) and objs == []
    with pytest.raises(DecodeError, match="out of band"):
        SB.from_parcel(data)
    with pytest.raises(DecodeError, match="unused"):
        SB.from_parcel(SB(-1, 1, 2, 3).to_parcel(), [5])


def test_other_out_of_band_kinds() -> None:
    ash = parcel.ASHMEM
    objs: list[object] = []
    assert ash.encode(parcel.Ashmem(9, 4096), objs) == struct.pack("<i", 4096) and objs == [9]
    assert ash.decode(struct.pack("<i", 4096), [9]) == parcel.Ashmem(9, 4096)
    with pytest.raises(parcel.EncodeError):
        ash.encode(None)
    nb = parcel.NATIVE_BUFFER
    objs = []
    b = parcel.NativeBuffer("h")
    assert nb.encode(b, objs) == struct.pack("<i", 1) and objs == [b]
    assert nb.encode(None) == struct.pack("<i", 0)
    assert nb.decode(struct.pack("<i", 1), [b]) is b
    smq = parcel.SharedMemQueue("int")
    meta = parcel.SharedMemQueueMeta(3, 64, 1)
    objs = []
    assert smq.encode(meta, objs) == struct.pack("<QI", 64, 1) and objs == [3]
    assert smq.decode(struct.pack("<QI", 64, 1), [3]) == meta


def _union_schema() -> ir.Schema:
    s32 = ir.Scalar(ir.ScalarKind.I32)
    e = ir.Enum("E", "t.v1_0", ir.ScalarKind.I8, (ir.EnumMember("A", 1), ir.EnumMember("B", -2)))
    p = ir.Struct("P", "t.v1_0", (ir.Field("x", ir.Scalar(ir.ScalarKind.I16)), ir.Field("y", s32)))
    u = ir.Union(
        "U",
        "t.v1_0",
        (
            ir.UnionMember("i", s32),
            ir.UnionMember("d", ir.Scalar(ir.ScalarKind.F64)),
            ir.UnionMember("e", ir.Ref("t.v1_0.E", ir.RefKind.ENUM)),
            ir.UnionMember("p", ir.Ref("t.v1_0.P", ir.RefKind.STRUCT)),
        ),
    )
    holder = ir.Struct(
        "H",
        "t.v1_0",
        (
            ir.Field("flag", ir.Scalar(ir.ScalarKind.BOOL)),
            ir.Field("u", ir.Ref("t.v1_0.U", ir.RefKind.UNION)),
            ir.Field("p", ir.Ref("t.v1_0.P", ir.RefKind.STRUCT)),
            ir.Field("e", ir.Ref("t.v1_0.E", ir.RefKind.ENUM)),
        ),
    )
    many = ir.Struct(
        "M",
        "t.v1_0",
        (ir.Field("us", ir.Vector(ir.Ref("t.v1_0.U", ir.RefKind.UNION))),),
    )
    return ir.Schema((ir.SchemaFile("T.idl", "hdi", "t.v1_0", (e, p, u, holder, many)),))


def test_union_record_and_nested_pod() -> None:
    schema = _union_schema()
    decls = schema.decls()
    lay = layout.union_layout(decls["t.v1_0.U"], decls.__getitem__)  # type: ignore[arg-type]
    assert lay is not None and (lay.size, lay.align) == (8, 8)
    hl = layout.struct_layout(decls["t.v1_0.H"], decls.__getitem__)  # type: ignore[arg-type]
    # bool@0, U@8 (8), P@16 (int16, pad, int32 → 8), E@24, sizeof rounded to 32
    assert hl is not None and hl.offsets == (0, 8, 16, 24) and hl.size == 32
    C = generated_classes(schema)
    U, H, P, E, M = (C[f"t.v1_0.{n}"] for n in "UHPEM")
    u = U(i=-1)
    assert u.raw == b"\xff\xff\xff\xff\0\0\0\0" and u.to_dict() == {"i": -1}
    u.d = 1.5
    assert (
        u.raw == struct.pack("<d", 1.5)
        and u.i == struct.unpack("<i", struct.pack("<d", 1.5)[:4])[0]
    )
    assert U.from_dict({"e": "B"}).e is E.B
    assert U.from_dict({"p": {"x": 1, "y": 2}}).p == P(1, 2)
    assert U(i=5) == U.from_dict({"i": 5}) and U(i=5) != U(i=6)
    h = H(True, U(d=2.0), P(-3, 9), E.B)
    data = h.to_parcel()
    assert (
        len(data) == 32
        and data[8:16] == struct.pack("<d", 2.0)
        and data[16:24] == struct.pack("<hxxi", -3, 9)
    )
    back = H.from_parcel(data)
    assert back == h and back.u.d == 2.0 and back.e is E.B
    assert back.u.to_dict() == {"i": 0}  # decoded: first member
    m = M([U(i=1), U(d=0.5)])
    assert m.to_parcel() == struct.pack("<I", 2) + U(i=1).raw + U(d=0.5).raw
    assert M.from_parcel(m.to_parcel()) == m


def test_decode_errors_carry_path_and_offset() -> None:
    Model = cls("Model")
    Node = cls("Node")
    m = Model(name="m", nodes=[Node(name="a"), Node(name="b")])
    data = m.to_parcel()
    bad = bytearray(data)
    i = data.index(b"b\0")
    bad[i] = 0xFF
    with pytest.raises(DecodeError) as e:
        Model.from_parcel(bytes(bad))
    assert e.value.path == "Model.nodes[1].name" and e.value.offset == i
    with pytest.raises(DecodeError) as e:
        Model.from_parcel(data + b"\0\0\0\0")
    assert "trailing" in str(e.value)


def test_capacity_limit() -> None:
    codec = parcel.BYTES
    assert len(codec.encode(bytes(204790))) == 204796
    with pytest.raises(parcel.EncodeError, match="capacity"):
        codec.encode(bytes(204800))
    assert len(codec.encode(bytes(204800), limit=None)) == 204804


def test_node_type_mapping_is_total() -> None:
    schema, _ = nnrt("v2_1")
    decls = schema.decls()
    structs = [d for d in schema.files if d.stem == "NodeAttrTypes"][0].decls
    nt = decls[f"{NS}.NodeType"]
    assert isinstance(nt, ir.Enum)
    mapping, lonely_members, lonely_structs = codegen.node_type_mapping(
        nt, [s for s in structs if isinstance(s, ir.Struct)]
    )
    assert lonely_members == [] and lonely_structs == []
    assert mapping["NODE_TYPE_AVGPOOL_FUSION"] == f"{NS}.AvgPoolFusion"
    assert mapping["NODE_TYPE_QUANT_DTYPE_CAST_V2"] == f"{NS}.QuantDTypeCastV2"


def test_rendered_source_builds_the_same_codecs() -> None:
    """``render`` (what the generator writes) evaluates to codecs that encode identically."""
    from idlgen.wire import ipc

    schema, classes = nnrt("v2_1")
    decls = schema.decls()
    resolve = decls.__getitem__
    env: dict[str, object] = {"_parcel": parcel, "_ipc": ipc}
    env.update({q.rsplit(".", 1)[1]: c for q, c in classes.items()})
    for q, d in decls.items():
        if isinstance(d, (ir.Struct, ir.Union)):
            attrs = Names(schema).field_names(q).__getitem__
            src = codegen.render(
                codegen.record_codec(d, resolve, attrs), lambda n: n.rsplit(".", 1)[1]
            )
            codec = eval(src, env)  # noqa: S307 - our own generated expression
            value = classes[q]()
            assert codec.encode(value, []) == parcel.codec_of(classes[q]).encode(value, [])
    ifaces = codegen.build_interfaces(schema, classes)
    for q, d in decls.items():
        if isinstance(d, ir.Interface):
            src = codegen.render(codegen.interface_codec(d, resolve), lambda n: n.rsplit(".", 1)[1])
            built = eval(src, env)  # noqa: S307
            assert isinstance(built, ipc.InterfaceCodec)
            assert sorted(built.by_cmd) == sorted(ifaces[q].by_cmd)
            for cmd, m in built.by_cmd.items():
                ref = ifaces[q].by_cmd[cmd]
                assert (m.name, m.py_name, m.mem_set, m.oneway) == (
                    ref.name,
                    ref.py_name,
                    ref.mem_set,
                    ref.oneway,
                )
                assert [n for n, _ in m.ins] == [n for n, _ in ref.ins]


def test_unmarshalled_members_write_nothing() -> None:
    """Interface and Pointer struct members: hdi-gen writes nothing; decoding gives the default."""
    ns = "t.v1_0"
    iface = ir.Interface("IThing", ns, (ir.Method("GetVersion", (), implicit=True),))
    s = ir.Struct(
        "Holder",
        ns,
        (
            ir.Field("a", ir.Scalar(ir.ScalarKind.I32)),
            ir.Field("cb", ir.Ref(f"{ns}.IThing", ir.RefKind.INTERFACE)),
            ir.Field("ptr", ir.Handle(ir.HandleKind.POINTER)),
            ir.Field("b", ir.String()),
        ),
    )
    schema = ir.Schema((ir.SchemaFile("T.idl", "hdi", ns, (iface, s)),))
    H = generated_classes(schema)[f"{ns}.Holder"]
    h = H(7, None, 0, "x")
    assert h.to_parcel() == struct.pack("<i", 7) + b"x\0\0\0"
    assert H.from_parcel(h.to_parcel()) == h
    decls = schema.decls()
    assert codegen.type_codec(
        ir.Handle(ir.HandleKind.POINTER), decls.__getitem__, param=True
    ) == codegen.Sym("POINTER")
    with pytest.raises(parcel.EncodeError, match="passthrough"):
        parcel.POINTER.encode(0)


def test_union_template_renders_a_union_record() -> None:
    """templates/hdi_union.j2 (the class the generator emits for an HDI union) + codec line."""
    from types import SimpleNamespace

    from idlgen.backend.render import env as template_env

    env = template_env()  # the generator's environment (templates use its filters)
    schema = _union_schema()
    decls = schema.decls()
    u = decls["t.v1_0.U"]
    assert isinstance(u, ir.Union)
    fields = [SimpleNamespace(name=m.name, annotation="int") for m in u.members]
    record = SimpleNamespace(name="U", doc='"""A union."""', fields=fields)
    src = env.get_template("hdi_union.j2").render(record=record)
    classes = generated_classes(schema)
    ns: dict[str, object] = {
        "_parcel": parcel,
        "TYPE_CHECKING": False,
        "P": classes["t.v1_0.P"],
        "E": classes["t.v1_0.E"],
    }
    exec(src, ns)  # noqa: S102
    attrs = Names(schema).field_names(u.qualname).__getitem__
    line = codegen.render(
        codegen.record_codec(u, decls.__getitem__, attrs), lambda q: q.rsplit(".", 1)[1]
    )
    exec(f"_PARCEL_U = {line}", ns)  # noqa: S102
    U = ns["U"]
    assert issubclass(U, parcel.UnionRecord) and U.__doc__ == "A union."  # type: ignore[arg-type]
    v = U(p=classes["t.v1_0.P"](1, 2))  # type: ignore[operator]
    assert v.to_parcel() == struct.pack("<hxxi", 1, 2)
    assert U.from_parcel(v.to_parcel()) == v  # type: ignore[attr-defined]
