"""A TFLite-like model at scale against flatc: JSON both ways and bytes, with the large
scalar vectors on the NumPy path. The default size is a few MB; set IDLGEN_HEAVY=1 for a
model of tens of MB (about 80 MB of JSON)."""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np

from idlgen.wire import fbjson
from idlgen.wire import flatbuffers as fb

from .common import REAL, flatc_binary, flatc_json, need_flatc, need_shared, runtime

TFLITE = REAL / "tflite" / "schema.fbs"
HEAVY = os.environ.get("IDLGEN_HEAVY") == "1"


def model(rt: dict[str, Any], weight_bytes: int, seed: int = 7) -> Any:
    """Conv layers with random weights, int32 biases and float scales, like a quantized CNN."""
    T = {k.split(".")[-1]: v for k, v in rt.items() if not k.startswith("desc:")}
    rnd = random.Random(seed)
    layers = 24
    per = max(1, weight_bytes // layers)
    buffers = [T["Buffer"]()]
    tensors = []
    ops = []
    for i in range(layers):
        w = bytes(rnd.getrandbits(8) for _ in range(256)) * (per // 256 + 1)
        buffers.append(T["Buffer"](data=w[:per]))
        buffers.append(T["Buffer"](data=np.arange(i, i + 64, dtype="<i4").tobytes()))
        q = T["QuantizationParameters"](
            scale=[0.5 + k / 64 for k in range(64)], zero_point=list(range(-32, 32))
        )
        tensors.append(
            T["Tensor"](
                shape=[64, 3, 3, per // 576 or 1],
                type=T["TensorType"](9),
                buffer=2 * i + 1,
                name=f"w{i}",
                quantization=q,
            )
        )
        tensors.append(
            T["Tensor"](shape=[64], type=T["TensorType"](2), buffer=2 * i + 2, name=f"b{i}")
        )
        ops.append(
            T["Operator"](
                opcode_index=0,
                inputs=[2 * i, 2 * i + 1],
                outputs=[2 * i + 2],
                builtin_options=T["Conv2DOptions"](stride_w=1, stride_h=1),
            )
        )
    sub = T["SubGraph"](
        tensors=tensors, inputs=[0], outputs=[2 * layers], operators=ops, name="main"
    )
    codes = [
        T["OperatorCode"](
            deprecated_builtin_code=3, version=1, builtin_code=T["BuiltinOperator"](3)
        )
    ]
    return T["Model"](
        version=3, operator_codes=codes, subgraphs=[sub], description="scale", buffers=buffers
    )


def test_large_model_agrees_with_flatc() -> None:
    need_shared()
    need_flatc()
    _, rt = runtime(TFLITE)
    desc = rt["desc:tflite.Model"]
    ours = desc.encode(model(rt, (24 if HEAVY else 2) << 20))
    text = flatc_json(TFLITE, {"m": ours})["m"]
    decoded = desc.decode(ours)
    assert fbjson.to_json(desc, decoded) == text
    back = fbjson.from_json(desc, text)
    assert flatc_binary(TFLITE, {"m": text})["m"] == ours
    assert desc.encode(back) == ours
    # flatc-only syntax (a comment, unquoted keys) takes the streaming tokenizer: same bytes
    loose = "// flatc reads comments\n" + text.replace('"buffers":', "buffers:", 1)
    assert desc.encode(fbjson.from_json(desc, loose)) == ours
    # large scalar vectors come back as zero-copy NumPy views, not per-element objects
    weights = back.buffers[1].data
    assert isinstance(weights, bytes) and len(weights) > 80_000
    scales = back.subgraphs[0].tensors[0].quantization.scale
    assert scales == decoded.subgraphs[0].tensors[0].quantization.scale
    big = fbjson.from_json(
        desc,
        '{"buffers": [{"data": [1, 2]}], "subgraphs": [{"inputs": ['
        + ", ".join(str(i) for i in range(5000))
        + "]}]}",
    )
    assert isinstance(big.subgraphs[0].inputs, fb.ScalarVector)
    assert big.subgraphs[0].inputs == list(range(5000))
