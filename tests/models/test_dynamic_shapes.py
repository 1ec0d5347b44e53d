"""Shapes at run time: open input dims work without ``input_shapes`` (shape operators see the
run-time values), ``input_shapes`` pins them ahead of time; checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from idlgen.errors import ConfigError  # noqa: E402
from idlgen.runtime import load  # noqa: E402


def _ort(m: "onnx.ModelProto", feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return list(s.run(None, feeds))


def _c(name: str, arr: np.ndarray) -> "onnx.TensorProto":
    return numpy_helper.from_array(np.asarray(arr), name)


def _shape_model() -> "onnx.ModelProto":
    """Exported-LSTM style shape arithmetic on a [N, T, 8] input with N and T open:
    zeros = ConstantOfShape(Concat(Shape(x)[0:1], [16])); y = x.reshape(N, T*8) @ W + Expand(zeros)
    and a Range over T."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["t"], axis=0),
        helper.make_node("Concat", ["n", "c16"], ["zs"], axis=0),
        helper.make_node("ConstantOfShape", ["zs"], ["zeros"], value=_c("v", np.array([0.5], np.float32))),
        helper.make_node("Mul", ["t", "c8"], ["t8"]),
        helper.make_node("Concat", ["n", "t8"], ["rs"], axis=0),
        helper.make_node("Reshape", ["x", "rs"], ["flat"]),
        helper.make_node("ReduceMean", ["flat"], ["m"], axes=[1], keepdims=1),
        helper.make_node("Expand", ["m", "zs"], ["mm"]),
        helper.make_node("Add", ["mm", "zeros"], ["y"]),
        helper.make_node("Squeeze", ["t", "ax0"], ["ts"]),
        helper.make_node("Cast", ["ts"], ["tf"], to=f),
        helper.make_node("Range", ["zero", "tf", "one"], ["r"]),
    ]  # fmt: skip
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, ["N", "T", 8])],
        [helper.make_tensor_value_info("y", f, None), helper.make_tensor_value_info("r", f, None)],
        [_c("i0", np.array([0], np.int64)), _c("i1", np.array([1], np.int64)),
         _c("c16", np.array([16], np.int64)), _c("c8", np.array([8], np.int64)),
         _c("ax0", np.array([0], np.int64)), _c("zero", np.array(0, np.float32)),
         _c("one", np.array(1, np.float32))],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 4), t=st.integers(1, 9))
def test_open_dims_work_without_input_shapes(n: int, t: int) -> None:
    m = _shape_model()
    p = _PROGRAM.setdefault("p", load(m))  # one Program, called with many shapes
    x = np.random.default_rng(n * 10 + t).standard_normal((n, t, 8)).astype(np.float32)
    got = p.run({"x": x})
    for name, want in zip(["y", "r"], _ort(m, {"x": x})):
        assert got[name].shape == want.shape
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6)


_PROGRAM: dict[str, object] = {}


def test_input_shapes_pin_dims_ahead_of_time() -> None:
    m = _shape_model()
    p = load(m, input_shapes={"x": [2, 5, 8]})
    assert p.input_shapes == [[2, 5, 8]]
    # the shape arithmetic was folded: no Shape node runs, nothing runs on the host
    names = [n.nodeType.name for n in p.model.nodes]
    assert "NODE_TYPE_SHAPE" not in names and p.coverage()["host_nodes"] == 0
    x = np.ones((2, 5, 8), np.float32)
    for g, w in zip(p.run({"x": x}).values(), _ort(m, {"x": x})):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_input_shapes_are_checked() -> None:
    m = _shape_model()
    with pytest.raises(ConfigError, match="'nope'"):
        load(m, input_shapes={"nope": [1]})
    with pytest.raises(ConfigError, match="rank"):
        load(m, input_shapes={"x": [1, 2]})
    with pytest.raises(ConfigError, match="sizes"):
        load(m, input_shapes={"x": [1, -2, 8]})


def test_a_run_time_shape_variant_is_reused_and_bounded() -> None:
    m = _shape_model()
    p = load(m)
    for t in range(1, 9):
        p.run({"x": np.ones((1, t, 8), np.float32)})
    assert len(p._variants) <= 4


def test_shape_operators_run_as_nnrt_nodes_on_run_time_values() -> None:
    """With dims open, the shape arithmetic is not folded away: Shape, Gather, Concat,
    ConstantOfShape, Expand and Range run as NNRt nodes on each call's values."""
    p = load(_shape_model())
    kinds = {n.nodeType.name for n in p.model.nodes}
    assert {"NODE_TYPE_SHAPE", "NODE_TYPE_CONCAT", "NODE_TYPE_RESHAPE"} <= kinds
    p.run({"x": np.ones((3, 4, 8), np.float32)})
    assert len(p._variants) == 0  # the one model served: no per-shape import


def _conv1d_model() -> "onnx.ModelProto":
    """Conv1D + GRU-free audio front end on [1, 4, L] with L open."""
    w = np.random.default_rng(5).standard_normal((6, 4, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1], kernel_shape=[3]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "L"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [_c("w", w)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_coverage_describes_the_variant_the_last_call_ran() -> None:
    m = _conv1d_model()
    p = load(m)
    x = np.random.default_rng(6).standard_normal((1, 4, 10)).astype(np.float32)
    np.testing.assert_allclose(p.run({"x": x})["y"], _ort(m, {"x": x})[0], rtol=1e-5, atol=1e-6)
    pinned = load(m, input_shapes={"x": [1, 4, 10]}).coverage()
    assert p.coverage() == pinned
    n = len(p._variants)
    p.run({"x": x})  # the same shape again reuses its variant
    assert len(p._variants) == n and p.coverage() == pinned


def test_a_representative_import_serves_only_its_own_shape() -> None:
    """An import for a representative shape has that shape folded in: a call with another
    shape gets its own import, even when the representative's host nodes could take it."""
    p = load(_conv1d_model())
    assert not p._generic
    p.run({"x": np.ones((1, 4, 7), np.float32)})
    assert ((1, 4, 7),) in p._variants and p._last is not None
