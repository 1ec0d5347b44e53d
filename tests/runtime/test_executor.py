"""``execute`` on Models built with ``ModelBuilder``: end to end against onnxruntime, quantised
tensors against ONNX QuantizeLinear/DequantizeLinear, and broken models."""

from __future__ import annotations

import importlib
import pickle
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

from idlgen.runtime.builder import ModelBuilder
from idlgen.runtime.errors import KernelError
from idlgen.runtime.nnrt import execute

f32 = np.float32


def _package(version: str) -> ModuleType:
    try:
        return importlib.import_module(f"generated.ohos.hdi.nnrt.{version}")
    except ImportError:
        pytest.skip(f"generated NNRt {version} package not built")


def _codec(pkg: ModuleType) -> tuple[Any, Any]:
    """(kernels, encode): the generated kernels with their Parcel nodeAttr codec when it works,
    else the generated KERNELS with a pickle stand-in for the nodeAttr bytes."""
    k = importlib.import_module(pkg.__name__ + ".kernels")
    try:
        probe = pkg.Concat(axis=2)
        if k.decode_node_attr(pkg.NodeType.NODE_TYPE_CONCAT, k.encode_node_attr(probe)) == probe:
            return k, None
    except Exception:
        pass
    return (
        SimpleNamespace(KERNELS=k.KERNELS, decode_node_attr=lambda nt, b: pickle.loads(b)),
        pickle.dumps,
    )


@pytest.fixture(params=["v2_1", "v1_0"])
def env(request: pytest.FixtureRequest) -> tuple[ModuleType, Any, Any]:
    pkg = _package(request.param)
    k, enc = _codec(pkg)
    return pkg, k, enc


def _ort(model: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)  # type: ignore[no-any-return]


def test_small_cnn_matches_onnxruntime(env: tuple[ModuleType, Any, Any]) -> None:
    pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    P, kernels, enc = env
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 12, 12, 3)).astype(f32)
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(f32)  # OHWI
    b1 = rng.standard_normal(8).astype(f32)
    w2 = (rng.standard_normal((8, 3, 3, 1)) * 0.3).astype(f32)  # depthwise
    fc = rng.standard_normal((5, 8)).astype(f32)
    fcb = rng.standard_normal(5).astype(f32)

    b = ModelBuilder(P, name="cnn", encode=enc)
    xi = b.input("x", f32, x.shape)
    relu = P.ActivationType.ACTIVATION_TYPE_RELU
    same, valid = P.PadMode.PAD_MODE_SAME, P.PadMode.PAD_MODE_VALID
    h = b.node(P.Conv2DFusion(kernelSize=[3, 3], stride=[1, 1], dilation=[1, 1], padMode=same, group=1,
                              inChannel=3, outChannel=8, activationType=relu),
               [xi, b.constant("w1", w1), b.constant("b1", b1)])  # fmt: skip
    h = b.node(P.MaxPoolFusion(kernelSize=[2, 2], strides=[2, 2], padMode=valid), [h])
    h = b.node(P.Conv2DFusion(kernelSize=[3, 3], stride=[2, 2], dilation=[1, 1], padMode=same, group=8,
                              inChannel=8, outChannel=8), [h, b.constant("w2", w2)])  # fmt: skip
    h = b.node(P.AvgPoolFusion(global_=True), [h])
    h = b.node(
        P.FullConnection(hasBias=True),
        [h, b.constant("fc", fc), b.constant("fcb", fcb)],
    )
    y = b.node(P.Softmax(axis=[-1]), [h])
    b.output(y)
    model, buffers = b.build()
    (got,) = execute(model, [x], buffers=buffers, kernels=kernels)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node(
            "Conv", ["p1", "w2"], ["c2"], group=8, strides=[2, 2], auto_pad="SAME_UPPER"
        ),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["l"], transB=1),
        helper.make_node("Softmax", ["l"], ["y"]),
    ]
    inits = [numpy_helper.from_array(a, n) for n, a in
             [("w1", w1.transpose(0, 3, 1, 2).copy()), ("b1", b1), ("w2", w2.transpose(0, 3, 1, 2).copy()),
              ("fc", fc), ("fcb", fcb)]]  # fmt: skip
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", 1, [2, 3, 12, 12])],
                              [helper.make_tensor_value_info("y", 1, None)], inits)  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (want,) = _ort(m, {"x": x.transpose(0, 3, 1, 2).copy()})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_lstm_matches_onnxruntime() -> None:
    pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    P = _package("v2_1")
    kernels, enc = _codec(P)
    rng = np.random.default_rng(1)
    seq, batch, inp, hid = 5, 2, 4, 3
    x = rng.standard_normal((seq, batch, inp)).astype(f32)
    W = (rng.standard_normal((2, 4 * hid, inp)) * 0.5).astype(f32)  # ONNX gate order i o f c
    R = (rng.standard_normal((2, 4 * hid, hid)) * 0.5).astype(f32)
    Bias = (rng.standard_normal((2, 8 * hid)) * 0.1).astype(f32)
    order = np.concatenate([np.arange(hid) + g * hid for g in (0, 2, 3, 1)])  # -> i f g o

    b = ModelBuilder(P, encode=enc)
    xi = b.input("x", f32, x.shape)
    bias = np.concatenate([Bias[:, : 4 * hid][:, order], Bias[:, 4 * hid :][:, order]], axis=1)
    ins = [xi, b.constant("wih", W[:, order]), b.constant("whh", R[:, order]), b.constant("b", bias),
           b.constant("h0", np.zeros((2, batch, hid), f32)), b.constant("c0", np.zeros((2, batch, hid), f32))]  # fmt: skip
    y, hn, cn = b.node(P.LSTM(bidirectional=True, hasBias=True, inputSize=inp, hiddenSize=hid, numLayers=1,
                              numDirections=2), ins, outputs=3)  # type: ignore[misc]  # fmt: skip
    b.output(y, hn, cn)
    model, buffers = b.build()
    got = execute(model, [x], buffers=buffers, kernels=kernels)

    node = helper.make_node(
        "LSTM",
        ["x", "W", "R", "B"],
        ["Y", "Yh", "Yc"],
        hidden_size=hid,
        direction="bidirectional",
    )
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", 1, list(x.shape))],
                              [helper.make_tensor_value_info(n, 1, None) for n in ("Y", "Yh", "Yc")],
                              [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"),
                               numpy_helper.from_array(Bias, "B")])  # fmt: skip
    want = _ort(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), {"x": x})
    np.testing.assert_allclose(
        got[0],
        want[0].transpose(0, 2, 1, 3).reshape(seq, batch, 2 * hid),
        rtol=1e-4,
        atol=1e-6,
    )
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-6)


def test_quantised_conv_matches_onnx_qdq() -> None:
    """int8 input/weight/output tensors with QuantParams: dequantise -> float conv -> requantise,
    against ONNX DequantizeLinear -> Conv -> QuantizeLinear."""
    pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    P = _package("v2_1")
    kernels, enc = _codec(P)
    rng = np.random.default_rng(2)
    xf = rng.uniform(-1, 1, (1, 6, 6, 2)).astype(f32)
    wq = rng.integers(-100, 100, (3, 3, 3, 2)).astype(np.int8)
    w_scales = [0.01, 0.02, 0.015]
    xs, xz, ys, yz = 0.01, 3, 0.05, -2

    b = ModelBuilder(P, encode=enc)
    xin = b.input("x", f32, xf.shape)
    xq = b.node(P.QuantDTypeCast(srcT=43, dstT=32), [xin], outputs=[("xq", np.int8, xf.shape)])
    b.tensors[xq].quantParams = [P.QuantParam(numBits=8, zeroPoint=xz, scale=xs)]
    w = b.constant("w", wq, quant=[(s, 0) for s in w_scales])
    yq = b.node(P.Conv2DFusion(kernelSize=[3, 3], stride=[1, 1], dilation=[1, 1], padMode=P.PadMode.PAD_MODE_VALID,
                               group=1), [xq, w], outputs=[("yq", np.int8, [1, 4, 4, 3])], quantized=True)  # fmt: skip
    b.tensors[yq].quantParams = [P.QuantParam(numBits=8, zeroPoint=yz, scale=ys)]
    b.output(yq)
    model, buffers = b.build()
    (got,) = execute(model, [xf], buffers=buffers, kernels=kernels)
    assert got.dtype == np.int8

    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["y"]),
        helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
    ]
    inits = [numpy_helper.from_array(a, n) for n, a in [
        ("xs", np.array(xs, f32)), ("xz", np.array(xz, np.int8)), ("w", wq.transpose(0, 3, 1, 2).copy()),
        ("ws", np.array(w_scales, f32)), ("wz", np.zeros(3, np.int8)), ("ys", np.array(ys, f32)),
        ("yz", np.array(yz, np.int8))]]  # fmt: skip
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", 1, [1, 2, 6, 6])],
                              [helper.make_tensor_value_info("yq", 3, None)], inits)  # fmt: skip
    (want,) = _ort(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
        {"x": xf.transpose(0, 3, 1, 2).copy()},
    )
    # Only exact .5 ties may round differently (half away from zero vs half to even): at most 1 LSB.
    diff = np.abs(got.astype(int) - want.transpose(0, 2, 3, 1).astype(int))
    assert diff.max() <= 1 and (diff > 0).mean() < 0.05


def _tiny(P: ModuleType, enc: Any) -> tuple[Any, dict[int, bytes]]:
    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [2, 2])
    c = b.constant("c", np.ones((2, 2), f32))
    y = b.node(P.AddFusion(), [x, c])
    z = b.node(P.MulFusion(), [y, y])
    b.output(z)
    return b.build()


def test_constants_order_and_errors() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _tiny(P, enc)
    x = np.arange(4, dtype=f32).reshape(2, 2)
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0], (x + 1) ** 2
    )
    # Out-of-order subgraph lists are re-sorted topologically.
    model.subGraph[0].nodeIndices = [1, 0]
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0], (x + 1) ** 2
    )
    with pytest.raises(KernelError, match="model has 1 inputs"):
        execute(model, [], buffers=buffers, kernels=kernels)
    with pytest.raises(KernelError, match="declares float32"):
        execute(model, [x.astype(np.float64)], buffers=buffers, kernels=kernels)
    with pytest.raises(KernelError, match="not in buffers"):
        execute(model, [x], buffers={}, kernels=kernels)
    with pytest.raises(KernelError, match="outside"):
        execute(model, [x], buffers={0: b"\0" * 8}, kernels=kernels)


def test_cycle_and_dangling_index_are_errors() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _tiny(P, enc)
    x = np.zeros((2, 2), f32)
    model.nodes[0].inputIndex = [0, 3]  # Add now consumes Mul's output: a cycle
    with pytest.raises(KernelError, match="cycle"):
        execute(model, [x], buffers=buffers, kernels=kernels)
    model, buffers = _tiny(P, enc)
    model.nodes[1].inputIndex = [2, 99]
    with pytest.raises(KernelError, match="names tensor 99"):
        execute(model, [x], buffers=buffers, kernels=kernels)
    model, buffers = _tiny(P, enc)
    model.subGraph[0].nodeIndices = [0, 5]
    with pytest.raises(KernelError, match="names node 5"):
        execute(model, [x], buffers=buffers, kernels=kernels)


def test_kernel_error_names_the_node() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [3])
    b.output(b.node(P.Activation(activationType=P.ActivationType(20)), [x], name="act0"))
    model, buffers = b.build()
    with pytest.raises(KernelError, match="node 0 'act0'.*UNKNOWN"):
        execute(model, [np.zeros(3, f32)], buffers=buffers, kernels=kernels)


def test_bad_shapes_become_kernel_errors_naming_the_node() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [2, 3])
    y = b.input("y", f32, [4, 5])
    b.output(b.node(P.MatMulFusion(), [x, y], name="mm"))
    model, buffers = b.build()
    with pytest.raises(KernelError, match="node 0 'mm'"):
        execute(
            model,
            [np.zeros((2, 3), f32), np.zeros((4, 5), f32)],
            buffers=buffers,
            kernels=kernels,
        )


@pytest.mark.parametrize("unrolled", [True, False])
def test_compiled_plan_errors_and_fallbacks_match_execute(unrolled: bool) -> None:
    """The compiled plan (generated straight-line code, or its loop) names the failing node,
    and a kernel output of another dtype is converted to the declared one, as ``execute``."""
    from idlgen.runtime.plan import compile_model

    P = _package("v2_1")
    kernels, enc = _codec(P)
    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [2, 3])
    y = b.input("y", f32, [4, 5])
    b.output(b.node(P.MatMulFusion(), [x, y], name="mm"))
    model, buffers = b.build()
    plan = compile_model(model, buffers, kernels=kernels)
    plan._unrolled = plan._unroll() if unrolled else None
    with pytest.raises(KernelError, match="node 0 'mm'"):
        plan([np.zeros((2, 3), f32), np.zeros((4, 5), f32)])

    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [4])
    h = b.node(P.Activation(activationType=P.ActivationType(1)), [x], name="relu")
    b.output(b.node(P.Cast(), [h, b.constant("t", np.array([43], np.int32))], name="cast"))
    model, buffers = b.build()
    plan = compile_model(model, buffers, kernels=kernels)
    plan._unrolled = plan._unroll() if unrolled else None
    xs = np.array([-1.5, 0.0, 2.5, 7.0], f32)
    (got,) = plan([xs])
    (want,) = execute(model, [xs], buffers=buffers, kernels=kernels)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
