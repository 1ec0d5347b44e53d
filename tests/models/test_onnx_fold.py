"""Constant folding in NumPy (``runtime.onnx_fold``) equals the ONNX reference evaluator, so a
cold load need not import it."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from idlgen.runtime.onnx_fold import fold_node  # noqa: E402
from idlgen.runtime.onnx_lowering import attributes  # noqa: E402


def _reference(node: "onnx.NodeProto", ins: list[np.ndarray], opset: int) -> list[np.ndarray]:
    names = list(node.input)
    g = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in names],
        [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in node.output],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return list(ReferenceEvaluator(m).run(None, dict(zip(names, ins))))


def _same(node: "onnx.NodeProto", ins: list[np.ndarray], opset: int) -> None:
    got = fold_node(node.op_type, attributes(node), list(ins), opset)
    assert got is not None, f"{node.op_type} not folded"
    for g, w in zip(got, _reference(node, ins, opset)):
        assert g.dtype == np.asarray(w).dtype and g.shape == np.asarray(w).shape
        np.testing.assert_allclose(g, w, rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean"]),
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.data(),
    st.booleans(),
    st.sampled_from([13, 18]),
)
def test_reductions(op: str, shape: list[int], data: st.DataObject, keep: bool, opset: int) -> None:
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=2, unique=True))
    axes = sorted({a % len(shape) for a in axes})
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    if as_input:
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=int(keep))
        _same(node, [x, np.array(axes, np.int64)], opset)
    else:
        node = helper.make_node(
            op, ["x"], ["y"], keepdims=int(keep), **({"axes": axes} if axes else {})
        )
        _same(node, [x], opset)


@pytest.mark.parametrize("op", ["Sin", "Cos", "Tan", "Tanh"])
def test_trigonometry(op: str) -> None:
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    _same(helper.make_node(op, ["x"], ["y"]), [x], 17)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_integer_division_truncates_toward_zero(dt: type) -> None:
    p = np.array([7, -7, 7, -7, 0, 5], dt)
    q = np.array([2, 2, -2, -2, 3, 5], dt)
    _same(helper.make_node("Div", ["p", "q"], ["y"]), [p, q], 17)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements(reduction: str, axis: int) -> None:
    rng = np.random.default_rng(abs(axis) + len(reduction))
    data = rng.standard_normal((3, 4)).astype(np.float32)
    size = data.shape[axis]
    idx = rng.integers(-size, size, (2, 3)).astype(np.int64)
    if reduction == "none":  # duplicates have no defined order without a reduction
        idx = np.stack([rng.permutation(size)[:3] for _ in range(2)]) if axis in (1, -1) else (
            np.stack([rng.permutation(size)[:2] for _ in range(3)], axis=1))  # fmt: skip
    upd = rng.standard_normal(idx.shape).astype(np.float32)
    node = helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=axis,
                            **({} if reduction == "none" else {"reduction": reduction}))  # fmt: skip
    _same(node, [data, idx, upd], 18)
