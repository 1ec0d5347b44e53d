"""Realistic ONNX test models built with ``onnx.helper``: CNN, residual, detection-head, LSTM and
attention blocks. Weights are seeded random; shapes follow the real architectures."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import onnx
from onnx import TensorProto, helper, numpy_helper


class G:
    """A tiny graph builder: ``g.op("Conv", [x, w], kernel_shape=[3, 3])`` returns the output name."""

    def __init__(self, seed: int = 0) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self.n = 0

    def name(self, p: str) -> str:
        self.n += 1
        return f"{p}{self.n}"

    def const(self, arr: np.ndarray, p: str = "c") -> str:
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def w(self, *shape: int, scale: float | None = None) -> str:
        fan = int(np.prod(shape[1:])) or 1
        s = scale if scale is not None else (2.0 / fan) ** 0.5
        return self.const((self.rng.standard_normal(shape) * s).astype(np.float32), "w")

    def op(self, op: str, ins: list[str], n_out: int = 1, **attrs: object) -> str:
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=self.name(op + "_"), **attrs))
        return outs[0]

    def conv(
        self,
        x: str,
        cin: int,
        cout: int,
        k: int = 3,
        stride: int = 1,
        group: int = 1,
        bn: bool = True,
        act: str | None = "Relu",
    ) -> str:
        w = self.w(cout, cin // group, k, k)
        y = self.op(
            "Conv",
            [x, w],
            kernel_shape=[k, k],
            strides=[stride, stride],
            pads=[k // 2] * 4,
            group=group,
        )
        if bn:
            r = self.rng
            y = self.op(
                "BatchNormalization",
                [
                    y,
                    self.const(r.uniform(0.5, 1.5, cout).astype(np.float32)),
                    self.const(r.normal(0, 0.1, cout).astype(np.float32)),
                    self.const(r.normal(0, 0.1, cout).astype(np.float32)),
                    self.const(r.uniform(0.5, 1.5, cout).astype(np.float32)),
                ],
            )
        if act == "Relu":
            y = self.op("Relu", [y])
        elif act == "Relu6":
            y = self.op("Clip", [y, self.const(np.float32(0)), self.const(np.float32(6))])
        elif act == "SiLU":
            y = self.op("Mul", [y, self.op("Sigmoid", [y])])
        return y

    def model(
        self,
        inputs: list[tuple[str, list[int]]],
        outputs: list[str],
        opset: int = 17,
        dtype: int = TensorProto.FLOAT,
    ) -> onnx.ModelProto:
        g = helper.make_graph(
            self.nodes,
            "zoo",
            [helper.make_tensor_value_info(n, dtype, s) for n, s in inputs],
            [helper.make_tensor_value_info(o, dtype, None) for o in outputs],
            self.inits,
        )
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m


def mobilenet_v2(size: int = 96, width: int = 16) -> onnx.ModelProto:
    g = G(1)
    y = g.conv("x", 3, width, stride=2, act="Relu6")
    cin = width
    for t, c, s in ((1, 16, 1), (6, 24, 2), (6, 24, 1), (6, 32, 2), (6, 32, 1)):
        hid = cin * t
        h = g.conv(y, cin, hid, k=1, act="Relu6") if t != 1 else y
        h = g.conv(h, hid, hid, k=3, stride=s, group=hid, act="Relu6")
        h = g.conv(h, hid, c, k=1, act=None)
        y = g.op("Add", [y, h]) if s == 1 and cin == c else h
        cin = c
    y = g.conv(y, cin, 128, k=1, act="Relu6")
    y = g.op("GlobalAveragePool", [y])
    y = g.op("Flatten", [y], axis=1)
    y = g.op("Gemm", [y, g.w(10, 128), g.const(np.zeros(10, np.float32))], transB=1)
    y = g.op("Softmax", [y], axis=-1)
    return g.model([("x", [1, 3, size, size])], [y])


def resnet_block(size: int = 56, c: int = 64) -> onnx.ModelProto:
    g = G(2)
    y = g.conv("x", 3, c, k=7, stride=2)
    y = g.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for _ in range(2):
        h = g.conv(y, c, c)
        h = g.conv(h, c, c, act=None)
        y = g.op("Relu", [g.op("Add", [y, h])])
    y = g.op("AveragePool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Reshape", [y, g.const(np.array([1, -1], np.int64))])
    y = g.op(
        "Gemm", [y, g.w(10, c * (size // 4) ** 2), g.const(np.zeros(10, np.float32))], transB=1
    )
    return g.model([("x", [1, 3, size * 2, size * 2])], [y])


def yolo_block(size: int = 64) -> onnx.ModelProto:
    """CSP-ish backbone piece, SiLU, nearest upsample, concat and a detection head reshape."""
    g = G(3)
    y = g.conv("x", 3, 16, stride=2, act="SiLU")
    y = g.conv(y, 16, 32, stride=2, act="SiLU")
    a = g.conv(y, 32, 16, k=1, act="SiLU")
    b = g.conv(y, 32, 16, k=1, act="SiLU")
    b = g.conv(b, 16, 16, act="SiLU")
    y = g.op("Concat", [a, b], axis=1)
    p = g.op("MaxPool", [y], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    y = g.conv(g.op("Concat", [y, p], axis=1), 64, 32, k=1, act="SiLU")
    d = g.conv(y, 32, 32, stride=2, act="SiLU")
    u = g.op("Resize", [d, "", g.const(np.array([1, 1, 2, 2], np.float32))], mode="nearest")
    y = g.op("Concat", [y, u], axis=1)
    head = g.conv(y, 64, 3 * 8, k=1, bn=False, act=None)
    s = size // 4
    head = g.op("Reshape", [head, g.const(np.array([1, 3, 8, s * s], np.int64))])
    head = g.op("Transpose", [head], perm=[0, 1, 3, 2])
    head = g.op("Sigmoid", [head])
    return g.model([("x", [1, 3, size, size])], [head])


def lstm_model(
    seq: int = 12, batch: int = 2, inp: int = 16, hid: int = 32, direction: str = "forward"
) -> onnx.ModelProto:
    g = G(4)
    d = 2 if direction == "bidirectional" else 1
    w = g.w(d, 4 * hid, inp, scale=0.3)
    r = g.w(d, 4 * hid, hid, scale=0.3)
    b = g.const((g.rng.standard_normal((d, 8 * hid)) * 0.1).astype(np.float32))
    y = g.op("LSTM", ["x", w, r, b], hidden_size=hid, direction=direction)
    return g.model([("x", [seq, batch, inp])], [y])


def attention(
    seq: int = 32, dim: int = 64, heads: int = 4, ffn: int = 0, gelu: bool = False
) -> onnx.ModelProto:
    """A pre-norm transformer encoder layer (multi-head attention + MLP), as exported from
    PyTorch: MatMul + Add projections, Reshape/Transpose heads, GELU in its Erf form."""
    g = G(5)
    dh = dim // heads
    x = "x"
    h = g.op(
        "LayerNormalization",
        [x, g.const(np.ones(dim, np.float32)), g.const(np.zeros(dim, np.float32))],
        axis=-1,
    )

    def proj(t: str) -> str:
        y = g.op(
            "Add",
            [
                g.op("MatMul", [t, g.w(dim, dim, scale=dim**-0.5)]),
                g.const(np.zeros(dim, np.float32) + 0.01),
            ],
        )
        y = g.op("Reshape", [y, g.const(np.array([1, seq, heads, dh], np.int64))])
        return g.op("Transpose", [y], perm=[0, 2, 1, 3])

    q, k, v = proj(h), proj(h), proj(h)
    kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    s = g.op("Div", [g.op("MatMul", [q, kt]), g.const(np.float32(dh**0.5))])
    p = g.op("Softmax", [s], axis=-1)
    o = g.op("MatMul", [p, v])
    o = g.op(
        "Reshape",
        [g.op("Transpose", [o], perm=[0, 2, 1, 3]), g.const(np.array([1, seq, dim], np.int64))],
    )
    o = g.op("Add", [x, g.op("MatMul", [o, g.w(dim, dim, scale=dim**-0.5)])])
    f = g.op(
        "LayerNormalization",
        [o, g.const(np.ones(dim, np.float32)), g.const(np.zeros(dim, np.float32))],
        axis=-1,
    )
    hid = ffn or 4 * dim
    f = g.op(
        "Add",
        [g.op("MatMul", [f, g.w(dim, hid, scale=dim**-0.5)]), g.const(np.zeros(hid, np.float32))],
    )
    if gelu:
        e = g.op("Erf", [g.op("Div", [f, g.const(np.float32(2**0.5))])])
        f = g.op(
            "Mul",
            [g.op("Mul", [f, g.op("Add", [e, g.const(np.float32(1))])]), g.const(np.float32(0.5))],
        )
    else:
        f = g.op("Relu", [f])
    f = g.op("MatMul", [f, g.w(hid, dim, scale=hid**-0.5)])
    return g.model([("x", [1, seq, dim])], [g.op("Add", [o, f])])


ZOO: dict[str, Callable[[], onnx.ModelProto]] = {
    "mobilenet_v2": mobilenet_v2,
    "resnet_block": resnet_block,
    "yolo_block": yolo_block,
    "lstm": lstm_model,
    "bilstm": lambda: lstm_model(direction="bidirectional"),
    "attention": attention,
    "bert_layer": lambda: attention(128, 768, 12, 3072, gelu=True),
}
