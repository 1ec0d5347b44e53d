"""Whole models: ``idlgen.runtime.load(...).run`` vs onnxruntime (one intra-op thread), same
inputs, same run. The models are the realistic blocks of ``tests/models`` (MobileNetV2, ResNet,
YOLO-style, LSTM, attention) plus a TFLite CNN against LiteRT when ``ai-edge-litert`` is installed.

``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 python bench/run.py models``
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable

import numpy as np

from bench.bench_runtime import _interleaved
from bench.common import Result


def _ort(model: object, feeds: dict[str, np.ndarray]) -> Callable[[], object]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    return lambda: sess.run(None, feeds)


def run() -> list[Result]:
    from idlgen.runtime import load
    from tests.models.onnx_zoo import ZOO, mobilenet_v2, resnet_block, yolo_block

    models = {**ZOO, "mobilenet_v2 224": lambda: mobilenet_v2(224, 32),
              "resnet_block 224": lambda: resnet_block(112, 64), "yolo_block 256": lambda: yolo_block(256)}  # fmt: skip
    rows: list[Result] = []
    ratios: list[float] = []
    ours_all: list[float] = []
    theirs_all: list[float] = []
    for name, make in models.items():
        m = make()
        p = load(m)
        rng = np.random.default_rng(0)
        feeds = {n: rng.standard_normal([max(d, 1) for d in s]).astype(dt)
                 for n, dt, s in zip(p.input_names, p.input_dtypes, p.input_shapes)}  # fmt: skip
        ref = _ort(m, feeds)
        for g, w in zip(p.run(feeds).values(), ref()):  # type: ignore[call-overload]
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3 * float(np.abs(w).max()))
        ours, theirs = _interleaved(lambda: p.run(feeds), ref, min_time=0.1, rounds=5)
        ratios.append(theirs / ours)
        ours_all.append(ours)
        theirs_all.append(theirs)
        rows.append(
            Result(f"Model {name} ({len(p.model.nodes)} NNRt nodes)", ours, "onnxruntime", theirs)
        )
    rows += _tflite()
    rows.append(_dispatch())
    med = statistics.median(ratios)
    print(f"# median end-to-end ratio over {len(ratios)} ONNX models: {med:.2f}x", file=sys.stderr)
    rows.append(Result(f"All {len(ratios)} ONNX models, summed", sum(ours_all), "onnxruntime",
                       sum(theirs_all), f"median per-model ratio {med:.2f}x"))  # fmt: skip
    return rows


def _tflite() -> list[Result]:
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        return []
    from idlgen.runtime import load
    from tests.models.tflite_builder import float_cnn, int8_cnn

    rows = []
    for name, data in (("float CNN 96", float_cnn(96)), ("int8 CNN 64", int8_cnn(64))):
        p = load(data)
        it = Interpreter(model_content=data, num_threads=1)
        it.allocate_tensors()
        d = it.get_input_details()[0]
        rng = np.random.default_rng(0)
        x = (rng.standard_normal(d["shape"]).astype(np.float32) if d["dtype"] == np.float32
             else rng.integers(-128, 128, d["shape"]).astype(d["dtype"]))  # fmt: skip
        out = it.get_output_details()[0]["index"]

        def ref() -> object:
            it.set_tensor(d["index"], x)
            it.invoke()
            return it.get_tensor(out)

        feeds = {p.input_names[0]: x}
        ours, theirs = _interleaved(lambda: p.run(feeds), ref, min_time=0.1, rounds=5)
        rows.append(
            Result(f"TFLite {name} ({len(p.model.nodes)} NNRt nodes)", ours, "LiteRT", theirs)
        )
    return rows


def _dispatch(n: int = 200) -> Result:
    """Per-node cost of the plan: a chain of ``n`` Neg/Relu nodes on four floats."""
    from onnx import TensorProto, helper

    from idlgen.runtime import load

    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Relu" if i % 2 else "Neg", [prev], [f"t{i}"]))
        prev = f"t{i}"
    g = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p = load(m)
    feeds = {"x": np.ones(4, np.float32)}
    ours, theirs = _interleaved(lambda: p.run(feeds), _ort(m, feeds), min_time=0.1, rounds=5)
    return Result("Per-node dispatch (chain of 200 tiny nodes), per node", ours / n, "onnxruntime",
                  theirs / n, "target <= 15 µs")  # fmt: skip
