"""Parcel codec throughput: every NNRt v2_1 NodeAttrTypes struct, and a 1,000-node Model.

Peer: a straightforward field-by-field implementation written here — it walks the IR and
calls ``struct.pack`` / ``struct.unpack_from`` once per field (POD structs at their C offsets,
arrays element by element), which is what a hand-written codec without precompiled layouts does.
Both sides produce identical bytes (checked before timing).

Run: ``python bench/run.py parcel``.
"""

from __future__ import annotations

import math
import re
import struct
import sys
from pathlib import Path
from typing import Any

from bench.common import Result, timeit
from idlgen import ir
from idlgen.ir import hdi_layout as layout
from idlgen.wire import parcel
from tests._gen import attr_of, generate_schema

NS = "ohos.hdi.nnrt.v2_1"
REPO = Path(__file__).resolve().parents[1]


def _schema() -> tuple[ir.Schema, dict[str, Any]]:
    """The NNRt v2_1 schema and the classes generated for it (by qualified name)."""
    root = REPO / "schemas" / "hdi"
    g = generate_schema(root / "nnrt" / "v2_1", roots={"ohos.hdi": root})
    return g.schema, g.classes


# ----------------------------------------------------------------------------------------------
# The peer: field by field


class FieldByField:
    """A plain recursive Parcel codec: one ``struct`` call per field / element."""

    def __init__(self, decls: dict[str, ir.Decl], classes: dict[str, Any]) -> None:
        self.decls = decls
        self.classes = classes
        self.resolve = decls.__getitem__
        # layouts computed once per type, as a hand-written codec would hard-code them
        self._layouts: dict[ir.TypeRef, layout.Layout | None] = {}

    def lay(self, t: ir.TypeRef) -> layout.Layout | None:
        if t not in self._layouts:
            self._layouts[t] = layout.layout_of(t, self.resolve)
        return self._layouts[t]

    # -- encode
    def enc(self, t: ir.TypeRef, v: Any, out: bytearray, objs: list[object]) -> None:
        if isinstance(t, ir.Scalar):
            k = t.kind
            if k is ir.ScalarKind.BOOL:
                out += struct.pack("<i", 1 if v else 0)
            elif k.size < 4:
                out += struct.pack("<i" if k.is_signed else "<I", v)
            else:
                out += struct.pack("<" + k.fmt, v)
        elif isinstance(t, ir.String):
            b = v.encode() + b"\0"
            out += b + b"\0" * (-len(b) & 3)
        elif isinstance(t, ir.Handle):
            out += struct.pack("<i", 1 if v >= 0 else 0)
            if v >= 0:
                objs.append(v)
        elif isinstance(t, ir.Vector):
            out += struct.pack("<I", len(v))
            e = t.element
            lay = self.lay(e)
            if isinstance(v, bytes):
                out += v + b"\0" * (-len(v) & 3)
            elif lay is not None and not (
                isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.BOOL
            ):
                start = len(out)
                for x in v:
                    self.pod(e, x, out)
                out += b"\0" * (-(len(out) - start) & 3)
            else:
                for x in v:
                    self.enc(e, x, out, objs)
        elif isinstance(t, ir.Map):
            out += struct.pack("<I", len(v))
            for k in sorted(v):
                self.enc(t.key, k, out, objs)
                self.enc(t.value, v[k], out, objs)
        else:
            assert isinstance(t, ir.Ref)
            d = self.decls[t.qualname]
            if isinstance(d, ir.Enum):
                out += struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)
            elif self.lay(t) is not None:
                self.pod(t, v, out)
            else:
                assert isinstance(d, ir.Struct)
                for f in d.fields:
                    self.enc(f.type, getattr(v, attr_of(type(v), f.name)), out, objs)

    def pod(self, t: ir.TypeRef, v: Any, out: bytearray) -> None:
        """A POD value's memory image, member by member at its C offset."""
        if isinstance(t, ir.Scalar):
            out += struct.pack("<" + t.kind.fmt, v)
            return
        assert isinstance(t, ir.Ref)
        d = self.decls[t.qualname]
        if isinstance(d, ir.Enum):
            out += struct.pack("<" + d.base.fmt, v)
            return
        assert isinstance(d, ir.Struct)
        lay = self.lay(t)
        assert lay is not None
        start = len(out)
        for f, off in zip(d.fields, lay.offsets):
            out += b"\0" * (start + off - len(out))
            self.pod(f.type, getattr(v, attr_of(type(v), f.name)), out)
        out += b"\0" * (start + lay.size - len(out))

    # -- decode
    def dec(self, t: ir.TypeRef, buf: bytes, pos: int, objs: list[object]) -> tuple[Any, int]:
        if isinstance(t, ir.Scalar):
            k = t.kind
            if k is ir.ScalarKind.BOOL:
                return struct.unpack_from("<i", buf, pos)[0] != 0, pos + 4
            if k.size < 4:
                return (
                    struct.unpack_from("<i" if k.is_signed else "<I", buf, pos)[0],
                    pos + 4,
                )
            return struct.unpack_from("<" + k.fmt, buf, pos)[0], pos + k.size
        if isinstance(t, ir.String):
            nul = buf.index(b"\0", pos)
            n = nul - pos + 1
            return buf[pos:nul].decode(), pos + n + (-n & 3)
        if isinstance(t, ir.Handle):
            valid = struct.unpack_from("<i", buf, pos)[0]
            return (objs.pop(0) if valid else -1), pos + 4
        if isinstance(t, ir.Vector):
            (n,) = struct.unpack_from("<I", buf, pos)
            pos += 4
            e = t.element
            lay = self.lay(e)
            if lay is not None and not (isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.BOOL):
                items = []
                for i in range(n):
                    items.append(self.unpod(e, buf, pos + i * lay.size))
                size = n * lay.size
                if isinstance(e, ir.Scalar) and e.kind is ir.ScalarKind.I8:
                    items = bytes(x & 0xFF for x in items)  # type: ignore[assignment]
                return items, pos + size + (-size & 3)
            out = []
            for _ in range(n):
                x, pos = self.dec(e, buf, pos, objs)
                out.append(x)
            return out, pos
        if isinstance(t, ir.Map):
            (n,) = struct.unpack_from("<I", buf, pos)
            pos += 4
            m = {}
            for _ in range(n):
                k, pos = self.dec(t.key, buf, pos, objs)
                m[k], pos = self.dec(t.value, buf, pos, objs)
            return m, pos
        assert isinstance(t, ir.Ref)
        d = self.decls[t.qualname]
        if isinstance(d, ir.Enum):
            v = struct.unpack_from("<q", buf, pos)[0]
            return self.classes[t.qualname](v), pos + 8
        lay = self.lay(t)
        if lay is not None:
            return self.unpod(t, buf, pos), pos + lay.size
        assert isinstance(d, ir.Struct)
        args = []
        for f in d.fields:
            x, pos = self.dec(f.type, buf, pos, objs)
            args.append(x)
        return self.classes[t.qualname](*args), pos

    def unpod(self, t: ir.TypeRef, buf: bytes, pos: int) -> Any:
        if isinstance(t, ir.Scalar):
            return struct.unpack_from("<" + t.kind.fmt, buf, pos)[0]
        assert isinstance(t, ir.Ref)
        d = self.decls[t.qualname]
        if isinstance(d, ir.Enum):
            return self.classes[t.qualname](struct.unpack_from("<" + d.base.fmt, buf, pos)[0])
        assert isinstance(d, ir.Struct)
        lay = self.lay(t)
        assert lay is not None
        return self.classes[t.qualname](
            *(self.unpod(f.type, buf, pos + o) for f, o in zip(d.fields, lay.offsets))
        )


# ----------------------------------------------------------------------------------------------
# Realistic values


def _fill(t: ir.TypeRef, decls: dict[str, ir.Decl], classes: dict[str, Any], seed: int) -> Any:
    """A plausible attribute value: small shapes, unit strides, a non-default enum member."""
    if isinstance(t, ir.Scalar):
        if t.kind is ir.ScalarKind.BOOL:
            return seed % 2 == 0
        if t.kind.is_float:
            return 0.5 + seed % 3
        return 1 + seed % 3
    if isinstance(t, ir.String):
        return "DCR"
    if isinstance(t, ir.Vector):
        if isinstance(t.element, ir.Vector):
            return [[0, 1], [1, 1]]
        return [_fill(t.element, decls, classes, seed + i) for i in range(2 + seed % 3)]
    assert isinstance(t, ir.Ref)
    d = decls[t.qualname]
    assert isinstance(d, ir.Enum)
    members = d.members
    return classes[t.qualname](members[min(len(members) - 1, 1 + seed % 2)].value)


def attr_value(
    s: ir.Struct, decls: dict[str, ir.Decl], classes: dict[str, Any], seed: int = 1
) -> Any:
    return classes[s.qualname](
        *(_fill(f.type, decls, classes, seed + i) for i, f in enumerate(s.fields))
    )


_MIX = [
    ("Conv2DFusion", 30),
    ("Activation", 20),
    ("AddFusion", 10),
    ("MaxPoolFusion", 5),
    ("AvgPoolFusion", 3),
    ("MatMulFusion", 5),
    ("FullConnection", 4),
    ("Reshape", 5),
    ("Concat", 4),
    ("Softmax", 2),
    ("FusedBatchNorm", 5),
    ("Transpose", 3),
    ("MulFusion", 4),
]


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def build_model(decls: dict[str, ir.Decl], classes: dict[str, Any], n: int = 1000) -> Any:
    C = lambda name: classes[f"{NS}.{name}"]  # noqa: E731
    NT, DT, F = C("NodeType"), C("DataType"), C("Format")
    kinds = [k for k, w in _MIX for _ in range(w)]
    nodes, tensors = [], []
    fd = 3
    for i in range(n):
        kind = kinds[i % len(kinds)]
        s = decls[f"{NS}.{kind}"]
        assert isinstance(s, ir.Struct)
        attrs = attr_value(s, decls, classes, seed=i)
        node_type = next(m for m in NT if _norm(m.name.removeprefix("NODE_TYPE_")) == _norm(kind))
        ins = [len(tensors) - 1] if tensors else []
        if kind in ("Conv2DFusion", "MatMulFusion", "FullConnection"):
            for role, dims in (("weight", [64, 3, 3, 64]), ("bias", [64])):
                ins.append(len(tensors))
                size = 4 * math.prod(dims)
                tensors.append(
                    C("Tensor")(
                        name=f"{kind.lower()}_{i}/{role}",
                        dataType=DT.DATA_TYPE_FLOAT32,
                        dims=dims,
                        format=F.FORMAT_NHWC,
                        data=C("SharedBuffer")(fd=fd, bufferSize=1 << 20, offset=0, dataSize=size),
                        quantParams=[C("QuantParam")(8, 0, 0.05)] if i % 7 == 0 else [],
                    )
                )
                fd += 1
        tensors.append(
            C("Tensor")(
                name=f"{kind.lower()}_{i}/out",
                dataType=DT.DATA_TYPE_FLOAT32,
                dims=[1, 56, 56, 64],
                format=F.FORMAT_NHWC,
                data=C("SharedBuffer")(fd=-1),
            )
        )
        nodes.append(
            C("Node")(
                name=f"{kind.lower()}_{i}",
                nodeType=node_type,
                nodeAttr=parcel.encode_node_attr(attrs),
                inputIndex=ins,
                outputIndex=[len(tensors) - 1],
                quantType=C("QuantType").QUANT_TYPE_NONE,
            )
        )
    sub = C("SubGraph")(
        name="main",
        inputIndices=[0],
        outputIndices=[len(tensors) - 1],
        nodeIndices=list(range(n)),
    )
    return C("Model")(
        name="bench",
        inputIndex=[0],
        outputIndex=[len(tensors) - 1],
        nodes=nodes,
        allTensors=tensors,
        subGraph=[sub],
    )


# ----------------------------------------------------------------------------------------------


def run(min_time: float = 0.02, repeat: int = 3) -> list[Result]:
    schema, classes = _schema()
    decls = schema.decls()
    peer = FieldByField(decls, classes)
    results: list[Result] = []
    attr_file = next(f for f in schema.files if f.stem == "NodeAttrTypes")
    pod_ratios: list[float] = []
    for s in attr_file.decls:
        if not isinstance(s, ir.Struct):
            continue
        ref = ir.Ref(s.qualname, ir.RefKind.STRUCT)
        v = attr_value(s, decls, classes)
        codec = parcel.codec_of(classes[s.qualname])
        data = codec.encode(v)
        out = bytearray()
        peer.enc(ref, v, out, [])
        assert bytes(out) == data, s.name
        assert codec.decode(data) == v == peer.dec(ref, data, 0, [])[0], s.name
        kind = "POD" if isinstance(codec, parcel.PodStruct) else "non-POD"

        def peer_enc(v: Any = v, ref: ir.Ref = ref) -> bytes:
            o = bytearray()
            peer.enc(ref, v, o, [])
            return bytes(o)

        e = Result(
            f"encode {s.name} ({kind}, {len(data)} B)",
            timeit(lambda: codec.encode(v), min_time=min_time, repeat=repeat),
            "field-by-field",
            timeit(peer_enc, min_time=min_time, repeat=repeat),
        )
        d = Result(
            f"decode {s.name} ({kind}, {len(data)} B)",
            timeit(lambda: codec.decode(data), min_time=min_time, repeat=repeat),
            "field-by-field",
            timeit(lambda: peer.dec(ref, data, 0, []), min_time=min_time, repeat=repeat),
        )
        results += [e, d]
        if kind == "POD":
            pod_ratios += [e.ratio or 0.0, d.ratio or 0.0]
    if pod_ratios:
        pod_ratios.sort()
        results.append(
            Result(
                f"POD attribute structs: min/median ratio {pod_ratios[0]:.2f}x / {pod_ratios[len(pod_ratios) // 2]:.2f}x",
                0.0 + 1e-12,
                note=f"{len(pod_ratios) // 2} structs, encode+decode",
            )
        )
    model = build_model(decls, classes)
    mcodec = parcel.codec_of(classes[f"{NS}.Model"])
    objs: list[object] = []
    blob = mcodec.encode(model, objs, limit=None)
    pout = bytearray()
    peer.enc(ir.Ref(f"{NS}.Model", ir.RefKind.STRUCT), model, pout, [])
    assert bytes(pout) == blob
    assert mcodec.decode(blob, objs) == model
    mref = ir.Ref(f"{NS}.Model", ir.RefKind.STRUCT)
    note = (
        f"{len(model.nodes)} nodes, {len(model.allTensors)} tensors, {len(blob)} B, {len(objs)} fds"
    )

    def peer_model_enc() -> None:
        peer.enc(mref, model, bytearray(), [])

    results.append(
        Result(
            "encode Model (1,000 nodes)",
            timeit(lambda: mcodec.encode(model, [], limit=None), repeat=repeat),
            "field-by-field",
            timeit(peer_model_enc, repeat=repeat),
            note,
        )
    )
    results.append(
        Result(
            "decode Model (1,000 nodes)",
            timeit(lambda: mcodec.decode(blob, objs), repeat=repeat),
            "field-by-field",
            timeit(lambda: peer.dec(mref, blob, 0, list(objs)), repeat=repeat),
            note,
        )
    )
    return results


if __name__ == "__main__":  # pragma: no cover
    sys.path.insert(0, str(REPO))
    from bench.common import format_table

    print(format_table(run()))
