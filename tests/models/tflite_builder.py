"""Build ``.tflite`` files with idlgen's own generated TFLite package (``generated.tflite``).

``TB`` mirrors ``onnx_zoo.G``: tensors, constant buffers and operators, then ``finish()`` gives the
FlatBuffer bytes. Float and int8 (per-channel weights, int32 bias) models are supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from generated import tflite as T

_TYPE = {np.dtype(np.float32): T.TensorType.FLOAT32, np.dtype(np.float16): T.TensorType.FLOAT16,
         np.dtype(np.int32): T.TensorType.INT32, np.dtype(np.int8): T.TensorType.INT8,
         np.dtype(np.uint8): T.TensorType.UINT8, np.dtype(np.int64): T.TensorType.INT64,
         np.dtype(np.int16): T.TensorType.INT16, np.dtype(np.bool_): T.TensorType.BOOL,
         np.dtype(np.complex64): T.TensorType.COMPLEX64}  # fmt: skip


# Operators whose first registered LiteRT kernel version is above 1.
_MIN_VERSION = {"BROADCAST_TO": 2}


class TB:
    def __init__(self, seed: int = 0) -> None:
        self.tensors: list[Any] = []
        self.buffers: list[Any] = [T.Buffer()]
        self.ops: list[Any] = []
        self.codes: list[int] = []
        self.customs: list[str] = []
        self.extra: list[Any] = []  # further subgraphs
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.rng = np.random.default_rng(seed)

    def tensor(
        self,
        name: str,
        shape: list[int],
        dtype: Any = np.float32,
        quant: tuple[list[float], list[int], int] | None = None,
        data: np.ndarray | None = None,
    ) -> int:
        buf = 0
        if data is not None:
            self.buffers.append(T.Buffer(data=np.ascontiguousarray(data, dtype=dtype).tobytes()))
            buf = len(self.buffers) - 1
        q = None
        if quant is not None:
            q = T.QuantizationParameters(scale=list(quant[0]), zero_point=list(quant[1]),
                                         quantized_dimension=quant[2])  # fmt: skip
        self.tensors.append(T.Tensor(shape=list(shape), type=_TYPE[np.dtype(dtype)], buffer=buf,
                                     name=name, quantization=q))  # fmt: skip
        return len(self.tensors) - 1

    def input(self, name: str, shape: list[int], dtype: Any = np.float32, quant: Any = None) -> int:
        t = self.tensor(name, shape, dtype, quant)
        self.inputs.append(t)
        return t

    def const(self, name: str, arr: np.ndarray, quant: Any = None) -> int:
        return self.tensor(name, list(arr.shape), arr.dtype, quant, data=arr)

    def op(self, code: str, ins: list[int], outs: list[int], options: Any = None) -> None:
        c = int(T.BuiltinOperator[code])
        if c not in self.codes:
            self.codes.append(c)
        self.ops.append(T.Operator(opcode_index=self.codes.index(c), inputs=ins, outputs=outs,
                                   builtin_options=options))  # fmt: skip

    def custom(self, code: str, ins: list[int], outs: list[int], options: dict[str, Any]) -> None:
        """A CUSTOM operator ``code`` with FlexBuffer ``options``."""
        from flatbuffers import flexbuffers

        key = -1 - len(self.customs)
        self.customs.append(code)
        self.codes.append(key)
        self.ops.append(T.Operator(opcode_index=self.codes.index(key), inputs=ins, outputs=outs,
                                   custom_options=flexbuffers.Dumps(options)))  # fmt: skip

    def _code(self, c: int) -> Any:
        if c < 0:
            return T.OperatorCode(deprecated_builtin_code=int(T.BuiltinOperator.CUSTOM),
                                  builtin_code=T.BuiltinOperator.CUSTOM, custom_code=self.customs[-1 - c],
                                  version=1)  # fmt: skip
        return T.OperatorCode(deprecated_builtin_code=min(c, 127), builtin_code=T.BuiltinOperator(c),
                              version=_MIN_VERSION.get(T.BuiltinOperator(c).name, 1))  # fmt: skip

    def subgraph(self, child: TB) -> int:
        """Add ``child``'s graph as a further subgraph (an IF / WHILE / CALL_ONCE body) and
        return its index; its buffers and operator codes join this model's."""
        off = len(self.buffers) - 1
        self.buffers.extend(child.buffers[1:])
        for t in child.tensors:
            if t.buffer:
                t.buffer += off
        remap = {}
        for k, c in enumerate(child.codes):
            if c < 0:
                key = -1 - len(self.customs)
                self.customs.append(child.customs[-1 - c])
            else:
                key = c
            if key not in self.codes:
                self.codes.append(key)
            remap[k] = self.codes.index(key)
        for op in child.ops:
            op.opcode_index = remap[op.opcode_index]
        self.extra.append(T.SubGraph(tensors=child.tensors, inputs=child.inputs, outputs=child.outputs,
                                     operators=child.ops, name=f"sub{len(self.extra) + 1}"))  # fmt: skip
        return len(self.extra)

    def finish(self) -> bytes:
        sg = T.SubGraph(tensors=self.tensors, inputs=self.inputs, outputs=self.outputs,
                        operators=self.ops, name="main")  # fmt: skip
        m = T.Model(version=3, description="idlgen test",
                    operator_codes=[self._code(c) for c in self.codes],
                    subgraphs=[sg, *self.extra], buffers=self.buffers)  # fmt: skip
        return m.to_flatbuffer()


def _w(rng: np.random.Generator, *shape: int) -> np.ndarray:
    fan = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * (2.0 / fan) ** 0.5).astype(np.float32)


def float_cnn(size: int = 32) -> bytes:
    """conv3x3 s2 + ReLU6, depthwise 3x3 + ReLU, 1x1 conv, add, avg pool, FC, softmax."""
    b = TB(1)
    r = b.rng
    x = b.input("image", [1, size, size, 3])
    c1 = b.tensor("conv1", [1, size // 2, size // 2, 8])
    b.op("CONV_2D", [x, b.const("w1", _w(r, 8, 3, 3, 3)), b.const("b1", r.normal(0, 0.1, 8).astype(np.float32))], [c1],
         T.Conv2DOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2,
                         fused_activation_function=T.ActivationFunctionType.RELU6))  # fmt: skip
    d1 = b.tensor("dw1", [1, size // 2, size // 2, 8])
    b.op("DEPTHWISE_CONV_2D", [c1, b.const("wd", _w(r, 1, 3, 3, 8) * 3), b.const("bd", np.zeros(8, np.float32))], [d1],
         T.DepthwiseConv2DOptions(padding=T.Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=1,
                                  fused_activation_function=T.ActivationFunctionType.RELU))  # fmt: skip
    p1 = b.tensor("pw1", [1, size // 2, size // 2, 8])
    b.op("CONV_2D", [d1, b.const("wp", _w(r, 8, 1, 1, 8)), b.const("bp", np.zeros(8, np.float32))], [p1],
         T.Conv2DOptions(padding=T.Padding.VALID, stride_w=1, stride_h=1))  # fmt: skip
    a1 = b.tensor("add1", [1, size // 2, size // 2, 8])
    b.op("ADD", [c1, p1], [a1], T.AddOptions())
    m1 = b.tensor("pool", [1, size // 4, size // 4, 8])
    b.op("AVERAGE_POOL_2D", [a1], [m1], T.Pool2DOptions(padding=T.Padding.VALID, stride_w=2, stride_h=2,
                                                          filter_width=2, filter_height=2))  # fmt: skip
    mean = b.tensor("mean", [1, 8])
    b.op(
        "MEAN",
        [m1, b.const("axes", np.array([1, 2], np.int32))],
        [mean],
        T.ReducerOptions(keep_dims=False),
    )
    fc = b.tensor("logits", [1, 10])
    b.op("FULLY_CONNECTED", [mean, b.const("wf", _w(r, 10, 8)), b.const("bf", np.zeros(10, np.float32))], [fc],
         T.FullyConnectedOptions())  # fmt: skip
    sm = b.tensor("probs", [1, 10])
    b.op("SOFTMAX", [fc], [sm], T.SoftmaxOptions(beta=1.0))
    b.outputs = [sm]
    return b.finish()


def int8_cnn(size: int = 16) -> bytes:
    """Fully int8: conv (per-channel weights) + ReLU, depthwise, max pool, reshape, FC."""
    b = TB(2)
    r = b.rng
    s_in, z_in = 0.02, -5
    x = b.input("image", [1, size, size, 3], np.int8, ([s_in], [z_in], 0))

    def qconv(name: str, x: int, s_x: float, w: np.ndarray, depthwise: bool, out_shape: list[int],
              s_out: float, z_out: int, act: Any) -> int:  # fmt: skip
        axis = 3 if depthwise else 0
        red = tuple(i for i in range(4) if i != axis)
        ws = np.maximum(np.abs(w).max(axis=red), 1e-6) / 127.0
        wq = np.clip(
            np.round(w / ws.reshape([-1 if i == axis else 1 for i in range(4)])), -127, 127
        ).astype(np.int8)
        n = len(ws)
        wt = b.const(name + "_w", wq, (list(ws), [0] * n, axis))
        bias = r.integers(-200, 200, n).astype(np.int32)
        bt = b.const(name + "_b", bias, (list(ws * s_x), [0] * n, 0))
        y = b.tensor(name, out_shape, np.int8, ([s_out], [z_out], 0))
        if depthwise:
            b.op(
                "DEPTHWISE_CONV_2D",
                [x, wt, bt],
                [y],
                T.DepthwiseConv2DOptions(
                    padding=T.Padding.SAME,
                    stride_w=1,
                    stride_h=1,
                    depth_multiplier=1,
                    fused_activation_function=act,
                ),
            )
        else:
            b.op(
                "CONV_2D",
                [x, wt, bt],
                [y],
                T.Conv2DOptions(
                    padding=T.Padding.SAME, stride_w=2, stride_h=2, fused_activation_function=act
                ),
            )
        return y

    h = size // 2
    c1 = qconv(
        "conv1",
        x,
        s_in,
        _w(r, 8, 3, 3, 3),
        False,
        [1, h, h, 8],
        0.03,
        -128,
        T.ActivationFunctionType.RELU,
    )
    d1 = qconv(
        "dw1",
        c1,
        0.03,
        _w(r, 1, 3, 3, 8) * 3,
        True,
        [1, h, h, 8],
        0.05,
        -10,
        T.ActivationFunctionType.NONE,
    )
    p = b.tensor("pool", [1, h // 2, h // 2, 8], np.int8, ([0.05], [-10], 0))
    b.op("MAX_POOL_2D", [d1], [p], T.Pool2DOptions(padding=T.Padding.VALID, stride_w=2, stride_h=2,
                                                    filter_width=2, filter_height=2))  # fmt: skip
    feat = (h // 2) ** 2 * 8
    flat = b.tensor("flat", [1, feat], np.int8, ([0.05], [-10], 0))
    b.op(
        "RESHAPE",
        [p, b.const("shape", np.array([1, feat], np.int32))],
        [flat],
        T.ReshapeOptions(new_shape=[1, feat]),
    )
    wf = _w(r, 10, feat)
    sf = float(np.abs(wf).max() / 127)
    wfq = b.const("wf", np.round(wf / sf).astype(np.int8), ([sf], [0], 0))
    bf = b.const("bf", r.integers(-100, 100, 10).astype(np.int32), ([sf * 0.05], [0], 0))
    out = b.tensor("logits", [1, 10], np.int8, ([0.1], [3], 0))
    b.op("FULLY_CONNECTED", [flat, wfq, bf], [out], T.FullyConnectedOptions())
    b.outputs = [out]
    return b.finish()
