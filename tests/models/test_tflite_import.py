"""TFLite import: files built with the generated TFLite package, checked against LiteRT (when
installed) and against the equivalent ONNX model through onnxruntime."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from generated import tflite as T
from idlgen.runtime import UnsupportedModelError, load
from idlgen.runtime.cli_run import main as run_main

from ..conftest import SHARED, need
from .tflite_builder import TB, float_cnn, int8_cnn

REPO = Path(__file__).resolve().parents[2]


def _litert(data: bytes, x: np.ndarray) -> np.ndarray:
    interp = pytest.importorskip("ai_edge_litert.interpreter")
    it = interp.Interpreter(model_content=data, num_threads=1)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return np.asarray(it.get_tensor(it.get_output_details()[0]["index"]))


def test_float_cnn_matches_litert() -> None:
    data = float_cnn(32)
    p = load(data)
    x = np.random.default_rng(0).standard_normal((1, 32, 32, 3)).astype(np.float32)
    got = p.run({"image": x})["probs"]
    want = _litert(data, x)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-3 * np.max(np.abs(want))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_int8_cnn_within_one_quantum_of_litert(seed: int) -> None:
    data = int8_cnn(16)
    p = load(data)
    x = np.random.default_rng(seed).integers(-128, 128, (1, 16, 16, 3)).astype(np.int8)
    got = p.run({"image": x})["logits"]
    want = _litert(data, x)
    assert got.dtype == np.int8
    assert np.max(np.abs(got.astype(np.int32) - want.astype(np.int32))) <= 1


def test_quantisation_parameters_reach_the_nnrt_model() -> None:
    p = load(int8_cnn(16))
    by_name = {t.name: t for t in p.model.allTensors}
    qp = by_name["image"].quantParams
    assert [(q.scale, q.zeroPoint) for q in qp] == [(float(np.float32(0.02)), -5)]
    assert len(by_name["conv1_w"].quantParams) == 8  # per output channel
    assert by_name["conv1_w"].dataType.name == "DATA_TYPE_INT8"


def test_float_conv_matches_equivalent_onnx_model() -> None:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    w = (rng.standard_normal((6, 3, 3, 4)) * 0.3).astype(np.float32)  # OHWI
    bias = rng.standard_normal(6).astype(np.float32)
    b = TB()
    x = b.input("x", [1, 9, 9, 4])
    y = b.tensor("y", [1, 5, 5, 6])
    b.op("CONV_2D", [x, b.const("w", w), b.const("b", bias)], [y],
         T.Conv2DOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2,
                         fused_activation_function=T.ActivationFunctionType.RELU6))  # fmt: skip
    b.outputs = [y]
    p = load(b.finish())
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], strides=[2, 2], auto_pad="SAME_UPPER"),
         helper.make_node("Clip", ["c", "lo", "hi"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w.transpose(0, 3, 1, 2).copy(), "w"), numpy_helper.from_array(bias, "b"),
         numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    xs = rng.standard_normal((1, 9, 9, 4)).astype(np.float32)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": xs.transpose(0, 3, 1, 2).copy()})[0].transpose(0, 2, 3, 1)
    np.testing.assert_allclose(p.run({"x": xs})["y"], want, rtol=1e-4, atol=1e-5)
    del onnx


def test_unsupported_operator_is_named() -> None:
    b = TB()
    x = b.input("x", [1, 4])
    y = b.tensor("y", [1, 4])
    b.op("HASHTABLE_LOOKUP", [x], [y])
    b.outputs = [y]
    with pytest.raises(UnsupportedModelError) as e:
        load(b.finish())
    assert e.value.op == "HASHTABLE_LOOKUP" and "y" in e.value.node


def test_file_identifier_and_malformed_bytes() -> None:
    data = float_cnn(8)
    assert data[4:8] == b"TFL3"
    from idlgen.errors import DecodeError

    with pytest.raises(DecodeError):
        load(data[:40] + b"\xff" * 20)


def test_run_cli_on_tflite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.tflite"
    path.write_bytes(float_cnn(16))
    assert run_main([str(path), "--output-dir", str(tmp_path), "--compare"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "probs.npy").exists()
    assert "compare probs" in out or "compare: skipped" in out


def _tokens(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.findall(r'"[^"]*"|[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|\S', text)


def test_companion_schema_carries_upstream_facts() -> None:
    upstream = need(SHARED / "corpus" / "fbs" / "real" / "tflite" / "schema.fbs")
    ours = REPO / "schemas" / "fbs" / "tflite.fbs"
    assert _tokens(ours.read_text()) == _tokens(upstream.read_text())
    assert "//" not in "".join(ours.read_text().splitlines()[1:])  # no upstream prose


def test_more_builtins_match_litert() -> None:
    """BATCH_MATMUL, EXP, GATHER, SPLIT, PACK and DEPTH_TO_SPACE in one two-input graph."""
    interp = pytest.importorskip("ai_edge_litert.interpreter")
    b = TB(3)
    r = b.rng
    x, y = b.input("x", [2, 4, 6]), b.input("y", [2, 6, 5])
    mm = b.tensor("mm", [2, 4, 5])
    b.op("BATCH_MATMUL", [x, y], [mm], T.BatchMatMulOptions())
    e = b.tensor("e", [2, 4, 5])
    b.op("EXP", [mm], [e], T.ExpOptions())
    g = b.tensor("g", [2, 2, 5])
    idx = b.const("idx", np.array([3, 1], np.int32))
    b.op("GATHER", [e, idx], [g], T.GatherOptions(axis=1))
    s1, s2 = b.tensor("s1", [2, 1, 5]), b.tensor("s2", [2, 1, 5])
    b.op("SPLIT", [b.const("ax", np.array(1, np.int32)), g], [s1, s2], T.SplitOptions(num_splits=2))
    pk = b.tensor("pk", [2, 2, 1, 5])
    b.op("PACK", [s1, s2], [pk], T.PackOptions(values_count=2, axis=0))
    d = b.input("d", [1, 4, 4, 8])
    d2s = b.tensor("d2s", [1, 8, 8, 2])
    b.op("DEPTH_TO_SPACE", [d], [d2s], T.DepthToSpaceOptions(block_size=2))
    b.outputs = [pk, d2s]
    data = b.finish()
    feeds = {
        "x": (r.standard_normal((2, 4, 6)) * 0.3).astype(np.float32),
        "y": (r.standard_normal((2, 6, 5)) * 0.3).astype(np.float32),
        "d": r.standard_normal((1, 4, 4, 8)).astype(np.float32),
    }
    it = interp.Interpreter(model_content=data, num_threads=1)
    it.allocate_tensors()
    for det in it.get_input_details():
        it.set_tensor(det["index"], feeds[det["name"]])
    it.invoke()
    got = load(data).run(feeds)
    for det in it.get_output_details():
        want = it.get_tensor(det["index"])
        np.testing.assert_allclose(got[det["name"]], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_int8_moves_on_integers_match_dequantised_path(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MaxPool and Reshape on int8 with matching parameters run on the integers; the result is
    bit-identical to dequantise -> float kernel -> requantise (the plan's general path)."""
    from idlgen.runtime import plan as P

    data = int8_cnn(16)
    x = np.random.default_rng(seed).integers(-128, 128, (1, 16, 16, 3)).astype(np.int8)
    lean = load(data)
    got = lean.run({"image": x})["logits"]
    assert sum(st.conv_override for st in lean._plan.steps) == 2  # pool and reshape
    monkeypatch.setattr(P, "_moves_quantised", lambda *a: False)
    full = load(data)
    want = full.run({"image": x})["logits"]
    assert not any(st.conv_override for st in full._plan.steps)
    np.testing.assert_array_equal(got, want)


def test_mutated_models_raise_only_idlgen_errors() -> None:
    """Model files are untrusted bytes: a mutated file imports, or raises an IdlgenError
    (DecodeError / UnsupportedModelError), never IndexError or a protobuf error."""
    import random

    from idlgen.errors import IdlgenError
    from tests.models.tflite_builder import float_cnn

    base = float_cnn(8)
    rng = random.Random(7)
    for _ in range(200):
        b = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            load(bytes(b))
        except IdlgenError:
            pass
