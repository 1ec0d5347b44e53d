"""Whole models: ``idlgen.runtime.load(...).run`` vs onnxruntime (one intra-op thread), same
inputs, same run. The models are the realistic blocks of ``tests/models`` (MobileNetV2, ResNet,
YOLO-style, LSTM, attention) plus a TFLite CNN against LiteRT when ``ai-edge-litert`` is installed.

The real-model corpus (``tests/models/real_corpus.py``, skipped when it is not restored) runs
each model against its reference, one thread: ours, reference, ratio, load time, and the median
ratio over the models whose reference run takes 1 ms or more (issue 19.6: >= 0.3x, none under
0.1x). ``overhead`` measures the plan's fixed cost per ``Program.run`` and per node (a chain of
N trivial nodes, N = 1, 10, 100; target <= 20 µs + 5 µs per node); ``depthwise`` the depthwise
convolutions (float vs onnxruntime, int8 vs LiteRT; target >= 0.5x); ``load`` the cold load of
every corpus ONNX model under 10 MB in a fresh process (target <= 0.5 s) against onnxruntime's
session in a fresh process. ``IDLGEN_BENCH_MODELS=corpus,overhead`` picks sections.

``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 python bench/run.py models``
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
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
    """Every section, or those named in ``IDLGEN_BENCH_MODELS`` (comma-separated: zoo, corpus,
    overhead, depthwise, load)."""
    want = os.environ.get("IDLGEN_BENCH_MODELS", "zoo,corpus,overhead,depthwise,load").split(",")
    rows: list[Result] = []
    for name, fn in (("zoo", _zoo), ("overhead", _overhead), ("depthwise", _depthwise),
                     ("corpus", _corpus), ("load", _cold_load)):  # fmt: skip
        if name in want:
            print(f"# bench_models: {name}", file=sys.stderr, flush=True)
            rows += fn()
    return rows


def _zoo() -> list[Result]:
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


def _chain(n: int) -> object:
    from onnx import TensorProto, helper

    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Relu" if i % 2 else "Neg", [prev], [f"t{i}"]))
        prev = f"t{i}"
    g = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _overhead() -> list[Result]:
    """Fixed cost per run and cost per node: chains of 1, 10 and 100 trivial nodes on four
    floats, a least-squares line through the three times (ours and onnxruntime's)."""
    from idlgen.runtime import load

    ns, ours, theirs = [1, 10, 100], [], []
    rows = []
    for n in ns:
        m = _chain(n)
        p = load(m)
        feeds = {"x": np.ones(4, np.float32)}
        a, b = _interleaved(lambda: p.run(feeds), _ort(m, feeds), min_time=0.1, rounds=7)
        ours.append(a)
        theirs.append(b)
        rows.append(Result(f"Overhead: chain of {n} trivial nodes, per run", a, "onnxruntime", b))
    per_node, fixed = np.polyfit(ns, ours, 1)
    r_node, r_fixed = np.polyfit(ns, theirs, 1)
    rows.append(Result("Overhead: fixed cost per Program.run", max(float(fixed), 1e-9),
                       "onnxruntime", max(float(r_fixed), 1e-9), "target <= 20 µs"))  # fmt: skip
    rows.append(Result("Overhead: cost per node", float(per_node), "onnxruntime", float(r_node),
                       "target <= 5 µs"))  # fmt: skip
    return rows


def _depthwise() -> list[Result]:
    """Depthwise 3x3 convolutions: float through ONNX (Conv, group = C) against onnxruntime,
    int8 through TFLite (DEPTHWISE_CONV_2D) against LiteRT."""
    from onnx import TensorProto, helper, numpy_helper

    from idlgen.runtime import load

    rows = []
    rng = np.random.default_rng(0)
    for c, hw, s in ((32, 112, 1), (144, 56, 2), (192, 28, 1), (576, 14, 1)):
        w = numpy_helper.from_array(rng.standard_normal((c, 1, 3, 3)).astype(np.float32), "w")
        b = numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "b")
        o = -(-hw // s)
        g = helper.make_graph(
            [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=c, pads=[1, 1, 1, 1],
                              strides=[s, s])],
            "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, o, o])], [w, b],
        )  # fmt: skip
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        p = load(m)
        feeds = {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}
        ref = _ort(m, feeds)
        np.testing.assert_allclose(p.run(feeds)["y"], ref()[0], rtol=1e-3, atol=1e-3)  # type: ignore[index]
        a, t = _interleaved(lambda: p.run(feeds), ref, min_time=0.1, rounds=5)
        rows.append(Result(f"Depthwise float 3x3 s{s} {c}x{hw}x{hw}", a, "onnxruntime", t,
                           "target >= 0.5x; " + _floor(ref, c * o * o)))  # fmt: skip
    rows += _depthwise_int8()
    return rows


def _depthwise_int8() -> list[Result]:
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        return []
    from generated import tflite as T

    from idlgen.runtime import load
    from tests.models.tflite_builder import TB

    rows = []
    for c, hw, s in ((32, 112, 1), (144, 56, 2), (192, 28, 1), (576, 14, 1)):
        b = TB(3)
        r = b.rng
        o = -(-hw // s)
        x = b.input("x", [1, hw, hw, c], np.int8, ([0.05], [3], 0))
        w = r.integers(-127, 128, (1, 3, 3, c)).astype(np.int8)
        ws = [float(v) for v in r.uniform(0.002, 0.01, c)]
        wq = b.const("w", w, (ws, [0] * c, 3))
        bias = b.const("b", r.integers(-500, 500, c).astype(np.int32),
                       ([0.05 * v for v in ws], [0] * c, 0))  # fmt: skip
        y = b.tensor("y", [1, o, o, c], np.int8, ([0.08], [-2], 0))
        b.op("DEPTHWISE_CONV_2D", [x, wq, bias], [y],
             T.DepthwiseConv2DOptions(padding=T.Padding.SAME, stride_w=s, stride_h=s,
                                      depth_multiplier=1,
                                      fused_activation_function=T.ActivationFunctionType.RELU6))  # fmt: skip
        b.outputs = [y]
        data = b.finish()
        p = load(data)
        it = Interpreter(model_content=data, num_threads=1)
        it.allocate_tensors()
        d = it.get_input_details()[0]
        xv = np.random.default_rng(1).integers(-128, 128, d["shape"]).astype(np.int8)
        out = it.get_output_details()[0]["index"]

        def ref() -> object:
            it.set_tensor(d["index"], xv)
            it.invoke()
            return it.get_tensor(out)

        feeds = {p.input_names[0]: xv}
        diff = np.abs(p.run(feeds)[p.output_names[0]].astype(int) - np.asarray(ref()).astype(int))
        a, t = _interleaved(lambda: p.run(feeds), ref, min_time=0.1, rounds=5)
        rows.append(Result(f"Depthwise int8 3x3 s{s} {c}x{hw}x{hw}", a, "LiteRT", t,
                           f"target >= 0.5x; max diff {int(diff.max())} q; "
                           + _floor(ref, c * o * o)))  # fmt: skip
    return rows


def _floor(ref: Callable[[], object], size: int) -> str:
    """The reference's whole convolution in units of one float32 ``np.multiply`` pass over an
    array the size of the output (interleaved, same run), and the ratio NumPy could reach at
    best with the 9 multiply + 8 add passes of any elementwise 3x3 formulation (add passes
    cost about what multiply passes do): the lower bound behind the target."""
    x, y = np.ones(size, np.float32), np.ones(size, np.float32)
    z = np.empty(size, np.float32)
    m, t = _interleaved(lambda: np.multiply(x, y, z), ref, min_time=0.05, rounds=5)
    floor = t / (17 * m)
    return f"ref = {t / m:.1f} mul passes ({m * 1e6:.0f} µs each), 17-pass floor {floor:.2f}x"


def _corpus() -> list[Result]:
    """The real-model corpus, one thread, ours and the reference interleaved in one run."""
    from tests.models.real_corpus import REWRITE_DIMS, Reference, model_files, models_dir

    from idlgen.runtime import load

    d = models_dir()
    if d is None:
        print("# corpus not restored (../shared/models/restore.sh): skipped", file=sys.stderr)
        return []
    rows: list[Result] = []
    big: list[float] = []
    for path in model_files(d):
        try:
            ref = Reference(path)
            feeds = ref.feeds(path.stem)
            t0 = time.perf_counter()
            if (
                path.stem in REWRITE_DIMS
            ):  # placeholder input dims its users rewrite (as the harness)
                p = load(str(path), input_shapes={n: list(a.shape) for n, a in feeds.items()})
            else:
                p = load(str(path))
            load_s = time.perf_counter() - t0
            p.run(feeds)
        except Exception as e:  # noqa: BLE001 - a model that does not load or run is a note
            rows.append(Result(f"Real {path.name}", float("nan"), note=f"{type(e).__name__}"))
            continue
        budget_s = 0.05 if path.suffix == ".tflite" else 0.3
        a, t = _interleaved(lambda: p.run(feeds), lambda: ref.run(feeds), min_time=budget_s,
                            rounds=3)  # fmt: skip
        if t >= 1e-3:
            big.append(t / a)
        rows.append(Result(f"Real {path.name}", a, "LiteRT" if path.suffix == ".tflite"
                           else "onnxruntime", t, f"load {load_s:.2f} s"))  # fmt: skip
    if big:
        med = statistics.median(big)
        rows.append(Result(f"Real models with reference >= 1 ms: median of {len(big)}",
                           float("nan"), note=f"median {med:.2f}x, min {min(big):.2f}x "
                           "(target >= 0.3x, none < 0.1x)"))  # fmt: skip
    return rows


_COLD = """
import sys, time
t0 = time.perf_counter()
if sys.argv[1] == "ours":
    from idlgen.runtime import load
    load(sys.argv[2])
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ort.InferenceSession(sys.argv[2], so, providers=["CPUExecutionProvider"])
print(time.perf_counter() - t0)
"""


def _cold_load() -> list[Result]:
    """``load`` of each corpus ONNX model under 10 MB in a fresh process (imports included),
    against creating an onnxruntime session in a fresh process."""
    from tests.models.real_corpus import models_dir

    d = models_dir()
    if d is None:
        return []
    import tempfile

    # As installed packages are: byte-compiled once (pip compiles on install). The bytecode goes
    # to a temporary prefix, not into the source tree, and PYTHONDONTWRITEBYTECODE is dropped.
    env = dict(os.environ, PYTHONPYCACHEPREFIX=tempfile.mkdtemp(prefix="idlgen-bench-pyc-"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    paths = [p for p in sorted(d.glob("onnx/*.onnx")) if p.stat().st_size < 10 << 20]

    def fresh(code: str, *args: str) -> float:
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                           timeout=600, env=env)  # fmt: skip
        try:
            return float(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return float("nan")

    rows = []
    if paths:
        for who in ("ours", "ort"):  # byte-compile everything both sides import
            fresh(_COLD, who, str(paths[0]))
        imp = "import time; t = time.perf_counter(); import {}; print(time.perf_counter() - t)"
        for mod in ("numpy", "idlgen.runtime", "onnx", "onnxruntime"):
            t = min(fresh(imp.format(mod)) for _ in range(2))
            rows.append(Result(f"Cold import {mod} (fresh process)", t, note="part of a cold load"))
    for path in paths:
        times = []
        for who in ("ours", "ort"):
            best = float("inf")
            for _ in range(2):
                r = subprocess.run([sys.executable, "-c", _COLD, who, str(path)],
                                   capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
                try:
                    best = min(best, float(r.stdout.strip().splitlines()[-1]))
                except (ValueError, IndexError):
                    best = float("nan")
            times.append(best)
        rows.append(Result(f"Cold load {path.name} (fresh process)", times[0],
                           "onnxruntime session", times[1], "target <= 0.5 s"))  # fmt: skip
    return rows
