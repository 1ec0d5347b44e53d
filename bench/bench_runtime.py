"""NNRt NumPy runtime vs onnxruntime (and the ONNX ReferenceEvaluator) on single operators and a
small CNN, same inputs, same run. float32, NHWC for idlgen, NCHW for the ONNX peers.

``python bench/run.py runtime``; set ``BENCH_RUNTIME_NO_REF=1`` to leave out the (slow)
ReferenceEvaluator rows. The table notes which BLAS kernel NumPy runs: this machine's
``OPENBLAS_CORETYPE=Haswell`` / ``OPENBLAS_L2_SIZE`` (kept for old OpenBLAS builds) slow current
NumPy's GEMMs, so benchmark with
``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/run.py runtime``.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.common import Result, timeit
from idlgen.runtime import conv, norm, pool, resize
from idlgen.tools.onnx_conformance import Runner

f32 = np.float32

# Rows where onnx.reference is itself one BLAS call or the same few vectorised NumPy passes the
# runtime makes: 10x over it is not physically possible, so the ratio is reported as measured.
_SAME_WORK = "onnx.reference does the same NumPy/BLAS work: 10x not attainable"


def blas_info() -> str:
    """The BLAS NumPy calls and its kernel: threadpoolctl when installed, else a direct query of
    NumPy's bundled OpenBLAS."""
    try:
        from threadpoolctl import threadpool_info  # optional

        for d in threadpool_info():
            if d.get("user_api") == "blas":
                return (f"{d.get('internal_api')} {d.get('version')} {d.get('architecture')}, "
                        f"{d.get('num_threads')} threads")  # fmt: skip
    except ImportError:
        pass
    libdir = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*.so*")):
        lib = ctypes.CDLL(path)  # already loaded by NumPy: the same handle
        for pre, suf in (("scipy_openblas_", "64_"), ("scipy_openblas_", ""), ("openblas_", "")):
            core = getattr(lib, f"{pre}get_corename{suf}", None)
            threads = getattr(lib, f"{pre}get_num_threads{suf}", None)
            if core is not None and threads is not None:
                core.restype = ctypes.c_char_p
                return f"OpenBLAS {core().decode()} kernel, {threads()} threads"
    return "BLAS kernel unknown (install threadpoolctl)"


def _env_note() -> str:
    forced = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ]
    return f"; {', '.join(forced)} set" if forced else ""


def _onnx_model(
    nodes: list[Any], inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray]
) -> Any:
    from onnx import helper, numpy_helper

    graph = helper.make_graph(
        nodes,
        "bench",
        [helper.make_tensor_value_info(n, 1, list(a.shape)) for n, a in inputs.items()],
        [helper.make_tensor_value_info("y", 1, None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _peers(model: Any, feeds: dict[str, np.ndarray]) -> dict[str, Callable[[], object]]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1  # single-threaded comparison, as the runtime is
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out = {"onnxruntime": lambda: sess.run(None, feeds)}
    if not os.environ.get("BENCH_RUNTIME_NO_REF"):
        from onnx.reference import ReferenceEvaluator

        ref = ReferenceEvaluator(model)
        out["onnx.reference"] = lambda: ref.run(None, feeds)
    return out


def _case(name: str, ours: Callable[[], list[np.ndarray]], model: Any, feeds: dict[str, np.ndarray],
          to_ours: Callable[[np.ndarray], np.ndarray] = lambda y: y, *, note: str = "",
          ref_note: str = "") -> list[Result]:  # fmt: skip
    peers = _peers(model, feeds)
    # Same answer first, so the timings compare equal work.
    want = peers["onnxruntime"]()[0]  # type: ignore[index]
    got = ours()[0]
    np.testing.assert_allclose(got, to_ours(want), rtol=1e-3, atol=1e-4)
    # idlgen and onnxruntime alternate round by round (the cores are shared, so load drifts);
    # the slow ReferenceEvaluator gets one short round.
    t_ours, t_ort = _interleaved(ours, peers["onnxruntime"])
    rows = [Result(name, t_ours, "onnxruntime", t_ort, note)]
    if "onnx.reference" in peers:
        t_ref = timeit(peers["onnx.reference"], min_time=0.05, repeat=1)
        rows.append(Result(name, t_ours, "onnx.reference", t_ref, ref_note))
    return rows


def _interleaved(
    a: Callable[[], object], b: Callable[[], object], *, min_time: float = 0.1, rounds: int = 8
) -> tuple[float, float]:
    """Best-of-``rounds`` seconds per call of ``a`` and ``b``, their rounds alternating."""
    counts = []
    for fn in (a, b):
        fn()  # warm up
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            dt = time.perf_counter() - t0
            if dt >= min_time / 4 or n >= 1 << 20:
                break
            n *= 4
        counts.append(max(1, int(n * min_time / max(dt, 1e-9))))
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for k, (fn, n) in enumerate(zip((a, b), counts)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / n)
    return best[0], best[1]


def _nchw(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _nhwc(y: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(y.transpose(0, 2, 3, 1))


def run() -> list[Result]:
    from onnx import helper

    rng = np.random.default_rng(0)
    rows: list[Result] = []
    blas = blas_info() + _env_note()
    print(f"# numpy {np.__version__}, {blas}", file=sys.stderr, flush=True)

    x = rng.standard_normal((1, 56, 56, 64)).astype(f32)
    w = (rng.standard_normal((64, 3, 3, 64)) * 0.05).astype(f32)
    b = rng.standard_normal(64).astype(f32)
    kw = dict(stride=[1, 1], dilation=[1, 1], pad_mode=0, pad_list=[1, 1, 1, 1])
    m = _onnx_model([helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
                    {"x": _nchw(x)}, {"w": _nchw(w), "b": b})  # fmt: skip
    rows += _case("Conv2D 1x56x56x64, 3x3x64", lambda: conv.conv2d([x, w, b], group=1, **kw), m,
                  {"x": _nchw(x)}, _nhwc, note=blas)  # fmt: skip

    wd = rng.standard_normal((64, 3, 3, 1)).astype(f32)
    m = _onnx_model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], group=64)],
                    {"x": _nchw(x)}, {"w": _nchw(wd)})  # fmt: skip
    rows += _case("Depthwise conv 1x56x56x64, 3x3", lambda: conv.conv2d([x, wd], group=64, **kw), m,
                  {"x": _nchw(x)}, _nhwc)  # fmt: skip

    a = rng.standard_normal((1024, 1024)).astype(f32)
    bb = rng.standard_normal((1024, 1024)).astype(f32)
    m = _onnx_model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": bb}, {})
    rows += _case("MatMul 1024x1024", lambda: conv.matmul([a, bb]), m, {"a": a, "b": bb}, note=blas,
                  ref_note="onnx.reference is one BLAS call: 10x not attainable")  # fmt: skip

    s = rng.standard_normal((1, 12, 128, 128)).astype(f32)
    m = _onnx_model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], {"x": s}, {})
    rows += _case("Softmax 1x12x128x128", lambda: norm.softmax([s], axis=[-1]), m, {"x": s},
                  ref_note=_SAME_WORK)  # fmt: skip

    p = rng.standard_normal((1, 112, 112, 64)).astype(f32)
    pk = dict(kernel_size=[3, 3], strides=[2, 2], pad=[1, 1, 1, 1], pad_mode=0)
    m = _onnx_model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
                    {"x": _nchw(p)}, {})  # fmt: skip
    rows += _case(
        "MaxPool 1x112x112x64 k3 s2",
        lambda: pool.max_pool([p], **pk),
        m,
        {"x": _nchw(p)},
        _nhwc,
    )
    m = _onnx_model([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                      pads=[1, 1, 1, 1])], {"x": _nchw(p)}, {})  # fmt: skip
    rows += _case(
        "AvgPool 1x112x112x64 k3 s2",
        lambda: pool.avg_pool([p], **pk),
        m,
        {"x": _nchw(p)},
        _nhwc,
    )

    ln = rng.standard_normal((1, 128, 768)).astype(f32)
    g, be = rng.standard_normal(768).astype(f32), rng.standard_normal(768).astype(f32)
    m = _onnx_model([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)], {"x": ln},
                    {"g": g, "b": be})  # fmt: skip
    rows += _case("LayerNorm 1x128x768", lambda: norm.layer_norm([ln, g, be], begin_norm_axis=-1,
                  begin_params_axis=-1), m, {"x": ln}, ref_note=_SAME_WORK)  # fmt: skip

    r = rng.standard_normal((1, 56, 56, 64)).astype(f32)
    m = _onnx_model([helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear",
                                      coordinate_transformation_mode="half_pixel")],
                    {"x": _nchw(r)}, {"s": np.array([1, 1, 2, 2], f32)})  # fmt: skip
    rows += _case("Resize linear 1x56x56x64 -> 112x112",
                  lambda: resize.resize([r], method=0, new_height=112, new_width=112, coordinate_transform_mode=2),
                  m, {"x": _nchw(r)}, _nhwc)  # fmt: skip

    rows += _cnn(rng)
    return rows


def _cnn(rng: np.random.Generator) -> list[Result]:
    """End to end: an NNRt Model (Conv-ReLU, MaxPool, depthwise Conv, global AvgPool, FC, Softmax)
    run by ``execute`` vs the equivalent ONNX graph."""
    import importlib
    import pickle
    from types import SimpleNamespace

    from onnx import helper

    from idlgen.runtime.builder import ModelBuilder
    from idlgen.runtime.nnrt import execute

    P = importlib.import_module("idlgen.prebuilt.ohos.hdi.nnrt.v2_1")
    runner = Runner("idlgen.prebuilt.ohos.hdi.nnrt.v2_1")
    k = runner.kernels
    kernels: Any = k if runner.round_trip else SimpleNamespace(KERNELS=k.KERNELS, decode_node_attr=lambda nt, d: pickle.loads(d))  # type: ignore[union-attr]  # fmt: skip
    enc = None if runner.round_trip else pickle.dumps
    x = rng.standard_normal((1, 64, 64, 3)).astype(f32)
    w1 = (rng.standard_normal((32, 3, 3, 3)) * 0.2).astype(f32)
    w2 = (rng.standard_normal((32, 3, 3, 1)) * 0.2).astype(f32)
    w3 = (rng.standard_normal((64, 1, 1, 32)) * 0.2).astype(f32)
    fc = rng.standard_normal((10, 64)).astype(f32)
    bld = ModelBuilder(P, encode=enc)
    h = bld.input("x", f32, x.shape)
    same = P.PadMode.PAD_MODE_SAME
    relu = P.ActivationType.ACTIVATION_TYPE_RELU
    h = bld.node(P.Conv2DFusion(stride=[1, 1], dilation=[1, 1], padMode=same, group=1, activationType=relu),
                 [h, bld.constant("w1", w1)])  # fmt: skip
    h = bld.node(
        P.MaxPoolFusion(kernelSize=[2, 2], strides=[2, 2], padMode=P.PadMode.PAD_MODE_VALID),
        [h],
    )
    h = bld.node(P.Conv2DFusion(stride=[1, 1], dilation=[1, 1], padMode=same, group=32, activationType=relu),
                 [h, bld.constant("w2", w2)])  # fmt: skip
    h = bld.node(P.Conv2DFusion(stride=[1, 1], dilation=[1, 1], padMode=same, group=1, activationType=relu),
                 [h, bld.constant("w3", w3)])  # fmt: skip
    h = bld.node(P.AvgPoolFusion(global_=True), [h])
    h = bld.node(P.FullConnection(), [h, bld.constant("fc", fc)])
    bld.output(bld.node(P.Softmax(axis=[-1]), [h]))
    model, buffers = bld.build()
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=32),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["l"], transB=1),
        helper.make_node("Softmax", ["l"], ["y"]),
    ]
    m = _onnx_model(
        nodes,
        {"x": _nchw(x)},
        {"w1": _nchw(w1), "w2": _nchw(w2), "w3": _nchw(w3), "fc": fc},
    )
    rows = _case(
        "End-to-end CNN 1x64x64x3 (execute)",
        lambda: execute(model, [x], buffers=buffers, kernels=kernels),
        m,
        {"x": _nchw(x)},
    )
    if runner.round_trip:
        from idlgen.runtime.plan import compile_model

        plan = compile_model(model, buffers)
        rows += _case("End-to-end CNN 1x64x64x3 (compiled plan)", lambda: plan([x]), m,
                      {"x": _nchw(x)})  # fmt: skip
    return rows
