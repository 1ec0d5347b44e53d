"""ONNX operators idlgen lowers by mapping or exact decomposition, each checked against
onnxruntime (one thread) on small graphs built with ``onnx.helper``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from idlgen.runtime import load  # noqa: E402

F = TensorProto.FLOAT


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: dict[str, np.ndarray] | None = None,
           opset: int = 17, domains: dict[str, int] | None = None) -> Any:  # fmt: skip
    g = helper.make_graph(
        nodes, "t", inputs, outputs,
        initializer=[numpy_helper.from_array(v, k) for k, v in (inits or {}).items()],
    )  # fmt: skip
    ops = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, v) for d, v in (domains or {}).items()
    ]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def _ort(m: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return list(s.run(None, feeds))


def check(m: Any, feeds: dict[str, np.ndarray], tol: float = 1e-5, exact: bool = False) -> Any:
    want = _ort(m, feeds)
    prog = load(m.SerializeToString())
    got = prog.run(feeds)
    names = [o.name for o in m.graph.output]
    for n, w in zip(names, want):
        g = np.asarray(got[n])
        assert g.shape == w.shape, (n, g.shape, w.shape)
        if exact or w.dtype.kind in "iub":
            assert g.dtype == w.dtype, (n, g.dtype, w.dtype)
            np.testing.assert_array_equal(g, w, err_msg=n)
        else:
            scale = max(float(np.max(np.abs(w))), 1.0)
            np.testing.assert_allclose(g, w, atol=tol * scale, rtol=0, err_msg=n)
    return prog


def _vi(name: str, shape: list[int], t: int = F) -> Any:
    return helper.make_tensor_value_info(name, t, shape)


R = np.random.default_rng(0)


def _r(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


# --- GRU / RNN --------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("with_h0", [False, True])
def test_gru(direction: str, lbr: int, with_h0: bool) -> None:
    seq, batch, isz, h = 5, 2, 3, 4
    d = 2 if direction == "bidirectional" else 1
    inits = {"W": _r(d, 3 * h, isz), "R": _r(d, 3 * h, h), "B": _r(d, 6 * h)}
    ins = ["x", "W", "R", "B", "", "h0" if with_h0 else ""]
    node = helper.make_node("GRU", ins, ["y", "yh"], hidden_size=h, direction=direction,
                            linear_before_reset=lbr)  # fmt: skip
    inputs = [_vi("x", [seq, batch, isz])] + ([_vi("h0", [d, batch, h])] if with_h0 else [])
    m = _model([node], inputs, [_vi("y", [seq, d, batch, h]), _vi("yh", [d, batch, h])], inits)
    feeds = {"x": _r(seq, batch, isz)}
    if with_h0:
        feeds["h0"] = _r(d, batch, h)
    check(m, feeds)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
@pytest.mark.parametrize("act", ["Tanh", "Relu"])
def test_rnn(direction: str, act: str) -> None:
    seq, batch, isz, h = 4, 1, 3, 5
    d = 2 if direction == "bidirectional" else 1
    inits = {"W": _r(d, h, isz), "R": _r(d, h, h) * 0.5, "B": _r(d, 2 * h)}
    node = helper.make_node("RNN", ["x", "W", "R", "B"], ["y", "yh"], hidden_size=h,
                            direction=direction, activations=[act] * d)  # fmt: skip
    m = _model([node], [_vi("x", [seq, batch, isz])],
               [_vi("y", [seq, d, batch, h]), _vi("yh", [d, batch, h])], inits)  # fmt: skip
    check(m, {"x": _r(seq, batch, isz)})


def test_gather_scalar_index_drops_the_axis() -> None:
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=0)
    m = _model([node], [_vi("x", [4, 1, 3])], [_vi("y", [1, 3])], {"i": np.array(2, np.int64)})
    check(m, {"x": _r(4, 1, 3)})
