"""Malformed ``.tflite`` files: each index, count and shape the importer reads is checked where
it is read, so the DecodeError names what is wrong (not an IndexError caught and wrapped by the
loader's safety net, which would set ``__cause__``). And int16 quantisation keeps 16 bits."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from generated import tflite as T
from idlgen.errors import DecodeError
from idlgen.runtime import load

from .tflite_builder import TB


def _model(mutate: Callable[[TB], None]) -> bytes:
    """x[1, 4, 4, 2] -> CONV_2D (1x1, 3 filters, bias) -> y; then ``mutate``."""
    b = TB(0)
    x = b.input("x", [1, 4, 4, 2])
    w = b.const("w", np.ones((3, 1, 1, 2), np.float32))
    bias = b.const("bias", np.zeros(3, np.float32))
    y = b.tensor("y", [1, 4, 4, 3])
    b.op("CONV_2D", [x, w, bias], [y], T.Conv2DOptions(padding=T.Padding.VALID, stride_w=1,
                                                        stride_h=1))  # fmt: skip
    b.outputs = [y]
    mutate(b)
    return b.finish()


def _set(
    attr: str, value: object, *, op: bool = False, tensor: int | None = None
) -> Callable[[TB], None]:
    def mutate(b: TB) -> None:
        target = b.ops[0] if op else b.tensors[tensor] if tensor is not None else b
        setattr(target, attr, value)

    return mutate


def _quant_mismatch(b: TB) -> None:
    b.tensors[0].quantization = T.QuantizationParameters(scale=[0.1, 0.2], zero_point=[0, 0, 0])


CASES = [
    ("op input", _set("inputs", [0, 99, 2], op=True), "tensor index 99, but subgraph 0 has 4"),
    ("op output", _set("outputs", [7], op=True), "tensor index 7"),
    ("negative input", _set("inputs", [-5, 1, 2], op=True), "tensor index -5"),
    ("required input left out", _set("inputs", [0, -1], op=True), "takes at least 2 inputs"),
    ("too few inputs", _set("inputs", [0], op=True), "takes at least 2 inputs"),
    ("no outputs", _set("outputs", [], op=True), "and 1 outputs"),
    ("graph input", _set("inputs", [12]), "tensor index 12"),
    ("graph output", _set("outputs", [9]), "tensor index 9"),
    ("opcode", _set("opcode_index", 5, op=True), "operator 0 names opcode 5, but the model has 1"),
    ("buffer", _set("buffer", 40, tensor=1), "names buffer 40, but the model has 3"),
    ("negative dim", _set("shape", [3, -1, 1, 2], tensor=1), "has shape [3, -1, 1, 2]"),
    ("signature", _set("shape_signature", [1, -3, 4, 2], tensor=0), "shape_signature [1, -3, 4, 2]"),
    ("quantisation", _quant_mismatch, "2 scales, 3 zero points"),
    ("options type", _set("builtin_options", T.Pool2DOptions(), op=True),
     "operator 0 (CONV_2D) carries Pool2DOptions, not Conv2DOptions"),
    ("no options", _set("builtin_options", None, op=True), "operator 0 (CONV_2D) has no Conv2DOptions"),
    ("weights rank", _set("shape", [6], tensor=1), "convolution of a [1, 4, 4, 2] input"),
]  # fmt: skip


@pytest.mark.parametrize("label,mutate,message", CASES, ids=[c[0] for c in CASES])
def test_bad_index_is_a_located_decode_error(
    label: str, mutate: Callable[[TB], None], message: str
) -> None:
    data = _model(mutate)
    with pytest.raises(DecodeError) as info:
        load(data)
    assert message in str(info.value)
    # Raised where the value is read, not a stray exception turned into DecodeError.
    assert info.value.__cause__ is None


def test_unmutated_model_loads() -> None:
    """The fixture itself is valid: every case above fails only through its mutation."""
    p = load(_model(lambda b: None))
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    y = p.run({"x": x})["y"]
    np.testing.assert_array_equal(y, np.repeat(x.sum(axis=3, keepdims=True), 3, axis=3))


def test_split_axis_out_of_range() -> None:
    b = TB(0)
    x = b.input("x", [2, 4])
    axis = b.const("axis", np.array([5], np.int32))
    y0, y1 = b.tensor("y0", [2, 2]), b.tensor("y1", [2, 2])
    b.op("SPLIT", [axis, x], [y0, y1], T.SplitOptions(num_splits=2))
    b.outputs = [y0, y1]
    with pytest.raises(DecodeError, match="SPLIT axis 5 of a rank-2 input") as info:
        load(b.finish())
    assert info.value.__cause__ is None


def test_int16_quantize_keeps_the_int16_range() -> None:
    """QUANTIZE float32 -> int16 (LiteRT's 16x8 activations: symmetric, zero point 0) is
    ``clamp(round(x / scale), -32768, 32767)``; with an int8 range every value past +-127 would
    be clipped. Hand-checked values, no .5 ties; and DEQUANTIZE gives ``q * scale`` back."""
    s = 1 / 1024
    b = TB(0)
    x = b.input("x", [6])
    q = b.tensor("q", [6], np.int16, ([s], [0], 0))
    b.op("QUANTIZE", [x], [q], T.QuantizeOptions())
    y = b.tensor("y", [6])
    b.op("DEQUANTIZE", [q], [y], T.DequantizeOptions())
    b.outputs = [q, y]
    p = load(b.finish())
    assert [qp.numBits for qp in p.model.allTensors[1].quantParams] == [16]
    xs = np.array([-40.0, -20.0, -1.5, 0.3, 20.0, 40.0], np.float32)
    out = p.run({"x": xs})
    want = np.array([-32768, -20480, -1536, 307, 20480, 32767], np.int16)
    assert out["q"].dtype == np.int16
    np.testing.assert_array_equal(out["q"], want)
    np.testing.assert_array_equal(out["y"], want.astype(np.float32) * np.float32(s))
