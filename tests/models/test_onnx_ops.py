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
            scale = max(float(np.max(np.abs(w), where=np.isfinite(w), initial=0.0)), 1.0)
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
@pytest.mark.parametrize("with_h0,seq", [(False, 5), (True, 5), (True, 1)])
def test_gru(direction: str, lbr: int, with_h0: bool, seq: int) -> None:
    batch, isz, h = 2, 3, 4
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


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
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


# --- Einsum -----------------------------------------------------------------------------------

EINSUMS = [
    ("abc,cd->abd", [(2, 3, 4), (4, 5)], [False, True]),
    ("abcd,abed->abce", [(2, 3, 4, 5), (2, 3, 6, 5)], [False, False]),
    ("abcd,abde->abce", [(2, 3, 4, 5), (2, 3, 5, 6)], [False, False]),
    ("abc,cde->abde", [(2, 3, 4), (4, 5, 6)], [False, True]),
    ("abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)], [False, True]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)], [False, False]),
    ("ij,kj->ik", [(3, 4), (5, 4)], [False, False]),
    ("ji,jk->ik", [(4, 3), (4, 5)], [False, False]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)], [False, False]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], [False, False]),
    ("ij->ji", [(3, 4)], [False]),
    ("ijk->ik", [(3, 4, 5)], [False]),
    ("ij,ij->i", [(3, 4), (3, 4)], [False, False]),
    ("i,j->ij", [(3,), (4,)], [False, False]),
    ("abc,c->ab", [(2, 3, 4), (4,)], [False, True]),
    ("ij,jk", [(3, 4), (4, 2)], [False, False]),
]


@pytest.mark.parametrize("eq,shapes,const", EINSUMS)
def test_einsum(eq: str, shapes: list[tuple[int, ...]], const: list[bool]) -> None:
    names = [f"x{k}" for k in range(len(shapes))]
    inits = {n: _r(*s) for n, s, c in zip(names, shapes, const) if c}
    inputs = [_vi(n, list(s)) for n, s, c in zip(names, shapes, const) if not c]
    node = helper.make_node("Einsum", names, ["y"], equation=eq)
    out = np.einsum(eq, *[np.zeros(s, np.float32) for s in shapes]).shape
    m = _model([node], inputs, [_vi("y", list(out))], inits)
    feeds = {n: _r(*s) for n, s, c in zip(names, shapes, const) if not c}
    prog = check(m, feeds)
    assert prog.coverage()["host_nodes"] == 0


def test_einsum_diagonal_runs_on_the_host() -> None:
    node = helper.make_node("Einsum", ["x"], ["y"], equation="ii->i")
    m = _model([node], [_vi("x", [3, 3])], [_vi("y", [3])])
    prog = check(m, {"x": _r(3, 3)})
    assert prog.coverage()["host_ops"] == {"Einsum": 1}


# --- 1-D windows ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2], "pads": [1, 2]},
        {"dilations": [2], "group": 2},
        {"auto_pad": "SAME_UPPER"},
    ],
)
def test_conv1d_relu(attrs: dict[str, Any]) -> None:
    w = _r(4, 2 if attrs.get("group") else 4, 3)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], **attrs),
             helper.make_node("Relu", ["c"], ["y"]),
             helper.make_node("Conv", ["y", "w2"], ["z"], kernel_shape=[1])]  # fmt: skip
    m = _model(nodes, [_vi("x", [2, 4, 11])], [_vi("z", None)],  # type: ignore[arg-type]
               {"w": w, "b": _r(4), "w2": _r(3, 4, 1)})  # fmt: skip
    check(m, {"x": _r(2, 4, 11)})


@pytest.mark.parametrize(
    "op,attrs",
    [("MaxPool", {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
     ("AveragePool", {"kernel_shape": [2]}),
     ("AveragePool", {"kernel_shape": [3], "pads": [1, 1], "count_include_pad": 1}),
     ("GlobalAveragePool", {}), ("GlobalMaxPool", {}),
     ("ConvTranspose", {"strides": [2], "output_padding": [1]}),
     ("InstanceNormalization", {}), ("BatchNormalization", {})],
)  # fmt: skip
def test_windows_1d(op: str, attrs: dict[str, Any]) -> None:
    extra = {"ConvTranspose": {"w": _r(3, 2, 3)}, "InstanceNormalization": {"s": _r(3), "b": _r(3)},
             "BatchNormalization": {"s": _r(3), "b": _r(3), "m": _r(3), "v": np.abs(_r(3)) + 0.5}}  # fmt: skip
    inits = extra.get(op, {})
    node = helper.make_node(op, ["x"] + list(inits), ["y"], **attrs)
    m = _model([node], [_vi("x", [1, 3, 10])], [_vi("y", None)], inits)  # type: ignore[arg-type]
    check(m, {"x": _r(1, 3, 10)})


# --- Slice with steps, HardSigmoid, Resize pytorch_half_pixel --------------------------------

try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None


def _slice_case(starts: list[int], ends: list[int], axes: list[int], steps: list[int]) -> None:
    inits = {k: np.array(v, np.int64) for k, v in
             (("s", starts), ("e", ends), ("a", axes), ("t", steps))}  # fmt: skip
    node = helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])
    m = _model([node], [_vi("x", [5, 6, 7])], [_vi("y", None)], inits)  # type: ignore[arg-type]
    check(m, {"x": _r(5, 6, 7)}, exact=True)


@pytest.mark.parametrize(
    "starts,ends,axes,steps",
    [([0], [5], [0], [2]), ([-1], [-100], [1], [-1]), ([4, 1], [0, 7], [2, 0], [-2, 3]),
     ([10], [-10], [2], [-3]), ([0, 0, 6], [5, 6, -8], [0, 1, 2], [1, 2, -1])],
)  # fmt: skip
def test_slice_steps(starts: list[int], ends: list[int], axes: list[int], steps: list[int]) -> None:
    _slice_case(starts, ends, axes, steps)


if given is not None:

    @settings(max_examples=25, deadline=None)
    @given(st.integers(-9, 9), st.integers(-9, 9), st.integers(0, 2),
           st.sampled_from([-3, -2, -1, 2, 3]))  # fmt: skip
    def test_slice_steps_hypothesis(s: int, e: int, ax: int, step: int) -> None:
        _slice_case([s], [e], [ax], [step])


def test_slice_opset9_attributes() -> None:
    node = helper.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[0, 2])
    m = _model([node], [_vi("x", [5, 6, 7])], [_vi("y", None)], opset=9)  # type: ignore[arg-type]
    check(m, {"x": _r(5, 6, 7)}, exact=True)


@pytest.mark.parametrize("alpha,beta", [(None, None), (1 / 6, 0.5), (0.3, 0.1), (-0.5, 0.7)])
def test_hard_sigmoid(alpha: float | None, beta: float | None) -> None:
    attrs = {k: v for k, v in (("alpha", alpha), ("beta", beta)) if v is not None}
    m = _model([helper.make_node("HardSigmoid", ["x"], ["y"], **attrs)], [_vi("x", [2, 3, 4, 5])],
               [_vi("y", [2, 3, 4, 5])])  # fmt: skip
    check(m, {"x": _r(2, 3, 4, 5) * 4})


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("sizes", [(9, 7), (3, 2), (6, 1)])
def test_resize_pytorch_half_pixel(mode: str, sizes: tuple[int, int]) -> None:
    if mode == "cubic" and 1 in sizes:
        pytest.skip("the host's reference cubic differs from onnxruntime's at an output of 1")
    node = helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode=mode,
                            coordinate_transformation_mode="pytorch_half_pixel")  # fmt: skip
    m = _model([node], [_vi("x", [1, 2, 5, 4])], [_vi("y", [1, 2, *sizes])],
               {"sz": np.array([1, 2, *sizes], np.int64)})  # fmt: skip
    prog = check(m, {"x": _r(1, 2, 5, 4)})
    # An output length of 1 differs from half_pixel: the host runs that one.
    assert prog.coverage()["host_nodes"] == (1 if 1 in sizes else 0)


# --- dynamic quantisation ----------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 0.01, 100.0])
@pytest.mark.parametrize("shift", [0.0, 3.0, -3.0])
def test_dynamic_quantize_linear(scale: float, shift: float) -> None:
    U8 = TensorProto.UINT8
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    m = _model([node], [_vi("x", [3, 17])], [_vi("y", [3, 17], U8), _vi("s", []), _vi("z", [], U8)])
    x = _r(3, 17) * scale + shift
    want = _ort(m, {"x": x})
    got = load(m.SerializeToString()).run({"x": x})
    np.testing.assert_allclose(got["s"], want[1], rtol=1e-6)
    assert got["z"].shape == () and got["z"] == want[2]
    assert got["y"].dtype == np.uint8
    np.testing.assert_array_equal(got["y"], want[0])


def test_dynamic_quantized_matmul_chain() -> None:
    """What onnxruntime.quantization.quantize_dynamic emits for a MatMul."""
    w = R.integers(-127, 128, (16, 5)).astype(np.int8)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Mul", ["accf", "s"], ["y"]),
    ]
    inits = {"w": w, "wz": np.array(0, np.int8), "ws": np.array(0.02, np.float32)}
    m = _model(
        nodes,
        [_vi("x", [2, 3, 16])],
        [_vi("y", [2, 3, 5]), _vi("acc", [2, 3, 5], TensorProto.INT32)],
        inits,
    )
    prog = check(m, {"x": _r(2, 3, 16)}, tol=1e-2)
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("a_zp,b_zp", [(None, None), (7, None), (128, 3)])
def test_matmul_integer(a_zp: int | None, b_zp: int | None) -> None:
    a = R.integers(0, 256, (4, 9)).astype(np.uint8)
    b = R.integers(0, 256, (9, 3)).astype(np.uint8)
    inits: dict[str, np.ndarray] = {"b": b}
    ins = ["a", "b"]
    if a_zp is not None or b_zp is not None:
        inits["az"] = np.array(a_zp or 0, np.uint8)
        ins.append("az")
    if b_zp is not None:
        inits["bz"] = np.array(b_zp, np.uint8)
        ins.append("bz")
    node = helper.make_node("MatMulInteger", ins, ["y"])
    m = _model(
        [node], [_vi("a", [4, 9], TensorProto.UINT8)], [_vi("y", [4, 3], TensorProto.INT32)], inits
    )
    check(m, {"a": a}, exact=True)


def test_conv_integer() -> None:
    x = R.integers(0, 256, (1, 2, 6, 6)).astype(np.uint8)
    w = R.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])
    inits = {"w": w, "xz": np.array(100, np.uint8), "wz": np.array(5, np.uint8)}
    m = _model([node], [_vi("x", [1, 2, 6, 6], TensorProto.UINT8)],
               [_vi("y", [1, 3, 6, 6], TensorProto.INT32)], inits)  # fmt: skip
    check(m, {"x": x}, exact=True)


# --- generators, folds ----------------------------------------------------------------------


def test_generators_at_run_time() -> None:
    """ConstantOfShape / Range / Expand on values computed from an input run as NNRt nodes."""
    I64 = TensorProto.INT64
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["c"],
                         value=numpy_helper.from_array(np.array([2.5], np.float32))),
        helper.make_node("Add", ["x", "c"], ["y"]),
        helper.make_node("Range", ["zero", "n", "one"], ["r"]),
        helper.make_node("Expand", ["v", "s"], ["e"]),
    ]  # fmt: skip
    inits = {"zero": np.array(0, np.int64), "one": np.array(1, np.int64), "v": _r(1, 3)}
    m = _model(nodes, [_vi("x", [2, 3]), _vi("n", [], I64)],
               [_vi("y", [2, 3]), _vi("r", [None], I64), _vi("e", [2, 3])], inits)  # type: ignore[list-item]  # fmt: skip
    prog = check(m, {"x": _r(2, 3), "n": np.array(4, np.int64)})
    assert prog.coverage()["host_nodes"] == 0


def test_large_generated_constant_is_not_folded() -> None:
    from idlgen.runtime.onnx_fold import FOLD_BUDGET

    n = FOLD_BUDGET + 1
    node = helper.make_node("ConstantOfShape", ["s"], ["c"],
                            value=numpy_helper.from_array(np.array([1.5], np.float32)))  # fmt: skip
    nodes = [node, helper.make_node("Mul", ["c", "x"], ["y"])]
    m = _model(nodes, [_vi("x", [1])], [_vi("y", [n])], {"s": np.array([n], np.int64)})
    prog = load(m.SerializeToString())
    assert any(int(nd.nodeType) == 38 for nd in prog.model.nodes)  # CONSTANT_OF_SHAPE
    np.testing.assert_array_equal(
        prog.run({"x": np.array([2.0], np.float32)})["y"], np.full(n, 3.0, np.float32)
    )


FOLD_CASES: list[tuple[str, dict[str, Any], list[np.ndarray | None]]] = [
    ("Cast", {"to": TensorProto.FLOAT}, [np.array([1, 2], np.float16)]),
    ("Cast", {"to": TensorProto.INT64}, [np.array([1, 2], np.int32)]),
    ("Reshape", {}, [np.arange(6).reshape(2, 3), np.array([0, -1, 3])]),
    ("Unsqueeze", {}, [np.arange(6).reshape(2, 3), np.array([-1, 0])]),
    ("Squeeze", {}, [np.arange(3).reshape(1, 3, 1), np.array([2])]),
    ("Concat", {"axis": 0}, [np.array([1, 2]), np.array([3])]),
    ("Gather", {"axis": 0}, [np.array([5, 6, 7]), np.array(-1)]),
    ("Gather", {"axis": 1}, [np.arange(12).reshape(3, 4), np.array([[0, 3], [1, -2]])]),
    ("Slice", {}, [np.arange(10), np.array([8]), np.array([-100]), np.array([0]), np.array([-3])]),
    ("Slice", {}, [np.arange(12).reshape(3, 4), np.array([1]), np.array([100]), np.array([1]), None]),
    ("Mul", {}, [np.array([2, 3]), np.array([4, 5])]),
    ("Div", {}, [np.array([1.0, 3.0], np.float32), np.array([4.0, 5.0], np.float32)]),
    ("Equal", {}, [np.array([1, 2]), np.array([1, 3])]),
    ("Where", {}, [np.array([True, False]), np.array([1, 2]), np.array([3, 4])]),
    ("Max", {}, [np.array([1, 5]), np.array([3, 2]), np.array([2, 2])]),
    ("ConstantOfShape", {"value": numpy_helper.from_array(np.array([7], np.int64))}, [np.array([2, 2])]),
    ("Range", {}, [np.array(1.0, np.float32), np.array(2.0, np.float32), np.array(0.3, np.float32)]),
    ("Range", {}, [np.array(10), np.array(1), np.array(-3)]),
    ("Expand", {}, [np.array([[1], [2]]), np.array([1, 3])]),
    ("Tile", {}, [np.array([[1, 2]]), np.array([2, 2])]),
    ("DequantizeLinear", {}, [np.array([0, 255, 7], np.uint8), np.array(0.5, np.float32), np.array(3, np.uint8)]),
    ("DequantizeLinear", {"axis": 0}, [np.array([[-128, 5], [127, 0]], np.int8),
                                       np.array([0.1, 2.0], np.float32), np.array([1, -1], np.int8)]),
    ("DequantizeLinear", {}, [np.array([-7, 100], np.int8), np.array(0.0123, np.float16)]),
]  # fmt: skip


@pytest.mark.parametrize("op,attrs,ins", FOLD_CASES)
def test_numpy_fold_matches_the_reference(
    op: str, attrs: dict[str, Any], ins: list[np.ndarray | None]
) -> None:
    from onnx.reference import ReferenceEvaluator

    from idlgen.runtime.onnx_fold import fold_node

    names = [f"i{k}" if v is not None else "" for k, v in enumerate(ins)]
    node = helper.make_node(op, names, ["y"], **attrs)
    got = fold_node(op, attrs, ins, 17)
    assert got is not None
    feeds = {n: v for n, v in zip(names, ins) if v is not None}
    g = helper.make_graph([node], "f", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                                        for n, v in feeds.items()], [helper.make_empty_tensor_value_info("y")])  # fmt: skip
    (want,) = ReferenceEvaluator(
        helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    ).run(None, feeds)
    assert got[0].dtype == want.dtype and got[0].shape == want.shape
    np.testing.assert_array_equal(got[0], want)


# --- host kernels (host_onnx) -------------------------------------------------------------


@pytest.mark.parametrize("opset,mode", [(16, "bilinear"), (16, "nearest"), (16, "bicubic"),
                                        (20, "linear"), (20, "cubic"), (20, "nearest")])  # fmt: skip
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample(opset: int, mode: str, padding: str, align: int) -> None:
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding,
                            align_corners=align)  # fmt: skip
    m = _model([node], [_vi("x", [2, 3, 5, 6]), _vi("g", [2, 4, 7, 2])], [_vi("y", [2, 3, 4, 7])],
               opset=opset)  # fmt: skip
    g = R.uniform(-1.3, 1.3, (2, 4, 7, 2)).astype(np.float32)
    g[0, 0, :3] = [[-1, -1], [1, 1], [0, 0]]  # corners and centre exactly
    prog = check(m, {"x": _r(2, 3, 5, 6), "g": g}, tol=1e-5)
    assert prog.coverage()["host_ops"] == {"GridSample": 1}
    assert [h.fn.__module__ for h in prog.host] == ["idlgen.runtime.host_onnx"]


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_linear_classifier_normalizer(post: str, norm: str) -> None:
    ml = {"ai.onnx.ml": 1}
    nodes = [
        helper.make_node("LinearClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml",
                         coefficients=_r(3 * 4).tolist(), intercepts=_r(3).tolist(),
                         classlabels_ints=[4, 7, 9], post_transform=post),
        helper.make_node("Normalizer", ["scores"], ["n"], domain="ai.onnx.ml", norm=norm),
    ]  # fmt: skip
    m = _model(nodes, [_vi("x", [5, 4])],
               [_vi("label", [5], TensorProto.INT64), _vi("scores", [5, 3]), _vi("n", [5, 3])],
               opset=13, domains=ml)  # fmt: skip
    prog = check(m, {"x": _r(5, 4)})
    assert all(h.fn.__module__ == "idlgen.runtime.host_onnx" for h in prog.host)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("const", [False, True])
def test_gather_elements(axis: int, const: bool) -> None:
    ishape = [2, 3, 2]  # smaller than the data on the other axes too
    n = [4, 5, 3][axis]
    idx = R.integers(-n, n, ishape).astype(np.int64)
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)
    inputs = [_vi("x", [4, 5, 3])] + ([] if const else [_vi("i", ishape, TensorProto.INT64)])
    m = _model([node], inputs, [_vi("y", ishape)], {"i": idx} if const else {})
    feeds = {"x": _r(4, 5, 3)} | ({} if const else {"i": idx})
    prog = check(m, feeds, exact=True)
    assert prog.coverage()["host_nodes"] == 0


# --- the op audit and the importer's messages --------------------------------------------


def test_op_audit_table_is_shipped_and_consistent() -> None:
    from pathlib import Path

    from idlgen.runtime import host
    from idlgen.runtime import onnx_ops as T
    from idlgen.tools import op_audit

    assert op_audit.problems() == []
    shipped = Path(__file__).resolve().parents[2] / "idlgen" / "runtime" / "ops_audit.md"
    if f"schemas of onnx {op_audit.onnx_minor(onnx.__version__)})" not in shipped.read_text():
        pytest.skip("the shipped table lists another onnx release's operators")
    assert (
        shipped.read_text() == op_audit.audit()
    ), "run: python -m idlgen.tools.op_audit > idlgen/runtime/ops_audit.md"
    assert len(op_audit.nnrt_operators()) == 96
    for op in op_audit.onnx_operators():  # the host's reasons are the audit's
        no_op = host.host_reason(op).startswith("NNRt v2_1 has no operator for")
        assert no_op == (T.status(op) in (T.HOST, T.NO_NNRT)), op


@pytest.mark.parametrize(
    "op,domain,inputs,attrs,says",
    [("NonZero", "", 1, {}, "NNRt v2_1 has no operator for NonZero"),
     ("CumSum", "", 2, {}, "NNRt v2_1 has no operator for CumSum"),
     ("LpPool", "", 1, {"kernel_shape": [2]}, "idlgen does not import LpPool onto NNRt yet"),
     ("Imputer", "ai.onnx.ml", 1, {"imputed_value_floats": [2.0]}, "idlgen does not import ai.onnx.ml.Imputer onto NNRt yet")],
)  # fmt: skip
def test_refusals_say_whether_nnrt_has_the_operator(op: str, domain: str, inputs: int,
                                                    attrs: dict[str, Any], says: str) -> None:  # fmt: skip
    from idlgen.runtime.program import UnsupportedModelError

    ins = ["x", "ax"][:inputs]
    node = helper.make_node(op, ins, ["y"], domain=domain, **attrs)
    m = _model([node], [_vi("x", [3])], [_vi("y", None)], {"ax": np.array(0, np.int64)} if inputs > 1 else {},
               domains={"ai.onnx.ml": 3} if domain else None)  # type: ignore[arg-type]  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=says):
        load(m.SerializeToString(), nnrt_only=True)


# --- the second batch of compositions ---------------------------------------------------------

_X = (2, 3, 4, 5)
UNARY_CASES: list[tuple[str, dict[str, Any], int]] = [
    ("IsNaN", {}, TensorProto.BOOL),
    ("IsInf", {}, TensorProto.BOOL),
    ("IsInf", {"detect_negative": 0}, TensorProto.BOOL),
    ("IsInf", {"detect_positive": 0}, TensorProto.BOOL),
    ("Selu", {}, F),
    ("Selu", {"alpha": 2.0, "gamma": 0.5}, F),
    ("Celu", {"alpha": 0.7}, F),
    ("ThresholdedRelu", {"alpha": 0.3}, F),
    ("Shrink", {"lambd": 0.4, "bias": 0.1}, F),
    ("Mish", {}, F),
    ("Tan", {}, F),
    ("Hardmax", {"axis": 1}, F),
    ("Hardmax", {}, F),
    ("ArgMin", {"axis": 2, "keepdims": 0}, TensorProto.INT64),
    ("LpNormalization", {"axis": 1, "p": 2}, F),
    ("LpNormalization", {"axis": -1, "p": 1}, F),
    ("GlobalLpPool", {"p": 2}, F),
    ("LRN", {"size": 3, "alpha": 0.01, "beta": 0.6, "bias": 1.5}, F),
    ("ReduceLogSum", {"axes": [1, 3], "keepdims": 0}, F),
    ("ReduceLogSum", {"keepdims": 0}, F),
    ("ReduceLogSumExp", {"axes": [2], "keepdims": 1}, F),
    ("ReduceLogSumExp", {"keepdims": 0}, F),
]


@pytest.mark.parametrize("op,attrs,out_type", UNARY_CASES)
@pytest.mark.parametrize("after_conv", [False, True])
def test_unary_compositions(
    op: str, attrs: dict[str, Any], out_type: int, after_conv: bool
) -> None:
    """Each on a plain input and on an NHWC value (after a Conv)."""
    opset = 18 if op.startswith("Reduce") or op == "Mish" else 17
    if op.startswith("Reduce") and "axes" in attrs:
        axes = attrs.pop("axes")
        node = helper.make_node(op, ["h", "axes"], ["y"], **attrs)
        inits = {"axes": np.array(axes, np.int64)}
    else:
        node = helper.make_node(op, ["h"], ["y"], **attrs)
        inits = {}
    nodes = [node]
    if after_conv:
        nodes.insert(0, helper.make_node("Conv", ["x", "w"], ["h"], kernel_shape=[1, 1]))
        inits["w"] = _r(3, 3, 1, 1) * (0.2 if op == "Tan" else 1.0)
    else:
        nodes.insert(0, helper.make_node("Identity", ["x"], ["h"]))
    m = _model(nodes, [_vi("x", list(_X))], [helper.make_tensor_value_info("y", out_type, None)],
               inits, opset=opset)  # fmt: skip
    x = _r(*_X) * 2
    if op == "Tan":
        x = np.clip(x, -1.3, 1.3)  # away from the poles, where sin/cos and tan part ways
    if op == "ReduceLogSum" and not after_conv:
        x = np.abs(x)
    if op in ("IsNaN", "IsInf") and not after_conv:
        x.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0]
    prog = check(m, {"x": x}, tol=1e-5)
    assert prog.coverage()["host_nodes"] == 0


def test_swish_opset24_or_skip() -> None:
    try:
        m = _model([helper.make_node("Swish", ["x"], ["y"], alpha=0.5)], [_vi("x", [3, 4])],
                   [_vi("y", [3, 4])], opset=24)  # fmt: skip
        _ort(m, {"x": _r(3, 4)})
    except Exception:  # noqa: BLE001 - an onnxruntime without opset 24
        pytest.skip("onnxruntime has no Swish")
    from idlgen.runtime.program import UnsupportedModelError

    try:
        check(m, {"x": _r(3, 4)})
    except UnsupportedModelError as e:
        if "opset" not in str(e):
            raise
        pytest.skip("opset 24 models are not imported")


def test_binary_compositions() -> None:
    B = TensorProto.BOOL
    nodes = [
        helper.make_node("Xor", ["p", "q"], ["xor"]),
        helper.make_node("CastLike", ["a", "i"], ["cl"]),
        helper.make_node("Mean", ["a", "b", "c"], ["mean3"]),
        helper.make_node("Mean", ["a", "b"], ["mean2"]),
        helper.make_node("Trilu", ["a", "k"], ["triu"]),
        helper.make_node("Trilu", ["a"], ["tril"], upper=0),
    ]
    m = _model(nodes, [_vi("p", [3, 4], B), _vi("q", [3, 4], B), _vi("a", [2, 3, 4]), _vi("b", [2, 3, 4]),
                       _vi("c", [3, 4]), _vi("i", [1], TensorProto.INT32)],
               [_vi("xor", [3, 4], B), _vi("cl", [2, 3, 4], TensorProto.INT32), _vi("mean3", [2, 3, 4]),
                _vi("mean2", [2, 3, 4]), _vi("triu", [2, 3, 4]), _vi("tril", [2, 3, 4])],
               {"k": np.array(1, np.int64)})  # fmt: skip
    feeds = {"p": R.random((3, 4)) > 0.5, "q": R.random((3, 4)) > 0.5, "a": _r(2, 3, 4) * 5,
             "b": _r(2, 3, 4), "c": _r(3, 4), "i": np.array([1], np.int32)}  # fmt: skip
    prog = check(m, feeds)
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_one_hot_gather_nd(axis: int) -> None:
    I64 = TensorProto.INT64
    nodes = [helper.make_node("OneHot", ["i", "d", "v"], ["oh"], axis=axis),
             helper.make_node("GatherND", ["x", "gi"], ["g"])]  # fmt: skip
    inits = {"d": np.array(5, np.int64), "v": np.array([-1.0, 2.0], np.float32)}
    m = _model(nodes, [_vi("i", [2, 3], I64), _vi("x", [4, 5, 6]), _vi("gi", [3, 2], I64)],
               [_vi("oh", None), _vi("g", [3, 6])], inits)  # type: ignore[list-item]  # fmt: skip
    feeds = {"i": R.integers(-5, 5, (2, 3)).astype(np.int64), "x": _r(4, 5, 6),
             "gi": np.array([[0, 1], [-1, 4], [2, -2]], np.int64)}  # fmt: skip
    prog = check(m, feeds)
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("reduction", ["none", "add"])
@pytest.mark.parametrize("const_idx", [False, True])
def test_scatters(reduction: str, const_idx: bool) -> None:
    I64 = TensorProto.INT64
    nd_idx = np.array([[0, 1], [2, -1]], np.int64)
    el_idx = np.array([[1, 0, 2], [-1, 2, 0]], np.int64)  # unique per column
    nodes = [helper.make_node("ScatterND", ["x", "ni", "nu"], ["snd"], reduction=reduction),
             helper.make_node("ScatterElements", ["x2", "ei", "eu"], ["sel"], axis=0, reduction=reduction)]  # fmt: skip
    idx_in = [] if const_idx else [_vi("ni", [2, 2], I64), _vi("ei", [2, 3], I64)]
    inits = {"ni": nd_idx, "ei": el_idx} if const_idx else {}
    m = _model(nodes, [_vi("x", [3, 4, 5]), _vi("nu", [2, 5]), _vi("x2", [3, 4]), _vi("eu", [2, 3])] + idx_in,
               [_vi("snd", [3, 4, 5]), _vi("sel", [3, 4])], inits, opset=18)  # fmt: skip
    feeds = {"x": _r(3, 4, 5), "nu": _r(2, 5), "x2": _r(3, 4), "eu": _r(2, 3)}
    if not const_idx:
        feeds |= {"ni": nd_idx, "ei": el_idx}
    prog = check(m, feeds)
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "constant"])
@pytest.mark.parametrize("pads", [[0, 0, 1, 2, 0, 0, 2, 1], [0, 1, -1, 0, 0, 0, 2, -2]])
@pytest.mark.parametrize("after_conv", [False, True])
def test_pad_modes(mode: str, pads: list[int], after_conv: bool) -> None:
    if mode == "reflect" and min(pads) < 0:
        pytest.skip("onnxruntime rejects negative pads with reflect")
    inits: dict[str, np.ndarray] = {"p": np.array(pads, np.int64), "c": np.array(1.5, np.float32)}
    first = (helper.make_node("Conv", ["x", "w"], ["h"], kernel_shape=[1, 1]) if after_conv
             else helper.make_node("Identity", ["x"], ["h"]))  # fmt: skip
    if after_conv:
        inits["w"] = _r(3, 3, 1, 1)
    nodes = [
        first,
        helper.make_node(
            "Pad", ["h", "p", "c"] if mode == "constant" else ["h", "p"], ["y"], mode=mode
        ),
    ]
    m = _model(nodes, [_vi("x", [1, 3, 4, 5])], [_vi("y", None)], inits, opset=19)  # type: ignore[arg-type]
    prog = check(m, {"x": _r(1, 3, 4, 5)})
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("qt", [TensorProto.UINT8, TensorProto.INT8])
@pytest.mark.parametrize("per_col", [False, True])
def test_qlinear_matmul(qt: int, per_col: bool) -> None:
    npq = np.uint8 if qt == TensorProto.UINT8 else np.int8
    lo, hi = (0, 256) if npq == np.uint8 else (-128, 128)
    b = R.integers(lo, hi, (16, 6)).astype(npq)
    inits = {"as": np.array(0.02, np.float32), "az": np.array(3 if npq == np.uint8 else -3, npq), "b": b,
             "bs": (R.uniform(0.01, 0.05, 6) if per_col else np.array(0.03)).astype(np.float32),
             "bz": np.array(5, npq) if not per_col else np.full(6, 0, npq),
             "ys": np.array(0.7, np.float32), "yz": np.array(10, npq)}  # fmt: skip
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    m = _model([node], [_vi("a", [2, 5, 16], qt)], [_vi("y", [2, 5, 6], qt)], inits)
    prog = check(m, {"a": R.integers(lo, hi, (2, 5, 16)).astype(npq)}, exact=True)
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_qlinear_conv(per_channel: bool, bias: bool) -> None:
    U8 = TensorProto.UINT8
    w = R.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    inits = {"xs": np.array(0.05, np.float32), "xz": np.array(120, np.uint8), "w": w,
             "ws": (R.uniform(0.002, 0.01, 4) if per_channel else np.array(0.004)).astype(np.float32),
             "wz": np.zeros(4 if per_channel else (), np.int8), "ys": np.array(0.2, np.float32),
             "yz": np.array(128, np.uint8)}  # fmt: skip
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits["B"] = R.integers(-500, 500, 4).astype(np.int32)
        ins.append("B")
    nodes = [helper.make_node("QLinearConv", ins, ["y"], pads=[1, 1, 1, 1], strides=[2, 1])]
    m = _model(nodes, [_vi("x", [1, 3, 7, 6], U8)], [_vi("y", [1, 4, 4, 6], U8)], inits)
    prog = check(m, {"x": R.integers(0, 256, (1, 3, 7, 6)).astype(np.uint8)}, exact=True)
    assert prog.coverage()["host_nodes"] == 0


def test_integer_ops_read_quantised_tensors_as_codes() -> None:
    """QuantizeLinear output (a tensor with quantisation parameters, which NNRt nodes read as
    real values) feeding MatMulInteger and QLinearMatMul: the integer codes are used."""
    w = R.integers(-127, 128, (16, 6)).astype(np.int8)
    inits = {"s": np.array(0.05, np.float32), "z": np.array(128, np.uint8), "w": w,
             "wz": np.array(0, np.int8), "ws": np.array(0.01, np.float32),
             "ys": np.array(0.3, np.float32), "yz": np.array(128, np.uint8), "z2": np.array(100, np.uint8)}  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("MatMulInteger", ["xq", "w", "z2", "wz"], ["acc"]),
             helper.make_node("QLinearMatMul", ["xq", "s", "z", "w", "ws", "wz", "ys", "yz"], ["y"])]  # fmt: skip
    m = _model(
        nodes,
        [_vi("x", [3, 16])],
        [_vi("acc", [3, 6], TensorProto.INT32), _vi("y", [3, 6], TensorProto.UINT8)],
        inits,
    )
    check(m, {"x": _r(3, 16) * 3}, exact=True)


@pytest.mark.parametrize("op,opset,mode", [("Upsample", 7, "nearest"), ("Upsample", 9, "nearest"),
                                           ("Upsample", 9, "linear"), ("Resize", 10, "nearest"),
                                           ("Resize", 10, "linear")])  # fmt: skip
def test_old_upsample_and_resize(op: str, opset: int, mode: str) -> None:
    scales = np.array([1, 1, 2, 3], np.float32)
    if opset == 7:
        node = helper.make_node(op, ["x"], ["y"], mode=mode, scales=scales.tolist())
        inits: dict[str, np.ndarray] = {}
    else:
        node = helper.make_node(op, ["x", "s"], ["y"], mode=mode)
        inits = {"s": scales}
    m = _model([node], [_vi("x", [1, 2, 3, 4])], [_vi("y", [1, 2, 6, 12])], inits, opset=opset)
    prog = check(m, {"x": _r(1, 2, 3, 4)})
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("opset,groups", [(18, 2), (18, 4), (21, 2), (21, 1)])
def test_group_normalization(opset: int, groups: int) -> None:
    c = 4
    k = c if opset >= 21 else groups
    node = helper.make_node(
        "GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups, epsilon=1e-3
    )
    m = _model([node], [_vi("x", [2, c, 3, 5])], [_vi("y", [2, c, 3, 5])],
               {"s": _r(k), "b": _r(k)}, opset=opset)  # fmt: skip
    try:
        _ort(m, {"x": _r(2, c, 3, 5)})
    except Exception:  # noqa: BLE001 - onnxruntime without this opset's GroupNormalization
        pytest.skip("onnxruntime cannot run it")
    prog = check(m, {"x": _r(2, c, 3, 5) * 3 + 1})
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_sklearn_style_pipeline_on_nnrt(post: str) -> None:
    """ai.onnx.ml Scaler -> LinearClassifier -> Normalizer, LinearRegressor and Binarizer run as
    NNRt nodes (checked against onnxruntime)."""
    ml = {"ai.onnx.ml": 1}
    nodes = [
        helper.make_node("Scaler", ["x"], ["s"], domain="ai.onnx.ml", offset=_r(4).tolist(), scale=(_r(4) + 2).tolist()),
        helper.make_node("LinearClassifier", ["s"], ["label", "scores"], domain="ai.onnx.ml",
                         coefficients=_r(3 * 4).tolist(), intercepts=_r(3).tolist(),
                         classlabels_ints=[4, 7, 9], post_transform=post),
        helper.make_node("Normalizer", ["scores"], ["n"], domain="ai.onnx.ml", norm="L1"),
        helper.make_node("LinearRegressor", ["x"], ["r"], domain="ai.onnx.ml", coefficients=_r(2 * 4).tolist(),
                         intercepts=_r(2).tolist(), targets=2),
        helper.make_node("Binarizer", ["x"], ["bin"], domain="ai.onnx.ml", threshold=0.3),
    ]  # fmt: skip
    m = _model(nodes, [_vi("x", [5, 4])],
               [_vi("label", [5], TensorProto.INT64), _vi("scores", [5, 3]), _vi("n", [5, 3]), _vi("r", [5, 2]),
                _vi("bin", [5, 4])], opset=13, domains=ml)  # fmt: skip
    prog = check(m, {"x": _r(5, 4)})
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("op,lo,hi", [("Sinh", -5, 5), ("Cosh", -5, 5), ("Asinh", -50, 50),
                                      ("Acosh", 1, 50), ("Atanh", -0.95, 0.95)])  # fmt: skip
def test_hyperbolic(op: str, lo: float, hi: float) -> None:
    m = _model([helper.make_node(op, ["x"], ["y"])], [_vi("x", [4, 25])], [_vi("y", [4, 25])])
    x = np.linspace(lo, hi, 100, dtype=np.float32).reshape(4, 25)
    want = _ort(m, {"x": x})[0]
    prog = load(m.SerializeToString())
    got = prog.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    assert prog.coverage()["host_nodes"] == 0


@pytest.mark.parametrize("axes", [None, [1], [2, 3]])
def test_mean_variance_normalization(axes: list[int] | None) -> None:
    attrs = {} if axes is None else {"axes": axes}
    m = _model([helper.make_node("MeanVarianceNormalization", ["x"], ["y"], **attrs)],
               [_vi("x", [2, 3, 4, 5])], [_vi("y", [2, 3, 4, 5])])  # fmt: skip
    prog = check(m, {"x": _r(2, 3, 4, 5) * 2 + 1}, tol=1e-5)
    assert prog.coverage()["host_nodes"] == 0


# --- If with a condition known at load time (silero-vad's sample-rate switch) ------------------


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_constant_condition_is_inlined(cond: bool) -> None:
    # The condition comes from constants (Equal of two constants), the branches read a value
    # computed from the model input, and one branch holds a nested If on a run-time condition.
    x = _vi("x", [2, 3])
    inner_then = helper.make_graph(
        [helper.make_node("Neg", ["h"], ["it"])], "it", [], [_vi("it", [2, 3])]
    )
    inner_else = helper.make_graph(
        [helper.make_node("Abs", ["h"], ["ie"])], "ie", [], [_vi("ie", [2, 3])]
    )
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["h"], ["r"]), helper.make_node("Mul", ["r", "k"], ["t_out"])],
        "then", [], [_vi("t_out", [2, 3])], initializer=[numpy_helper.from_array(np.float32([2.0]), "k")],
    )  # fmt: skip
    else_g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "one"], ["s"], keepdims=1),
         helper.make_node("Greater", ["s", "zero"], ["pos"]),
         helper.make_node("Squeeze", ["pos"], ["pos1"]),
         helper.make_node("Cast", ["pos1"], ["c2"], to=TensorProto.BOOL),
         helper.make_node("If", ["c2"], ["e_out"], then_branch=inner_then, else_branch=inner_else)],
        "else", [], [_vi("e_out", [2, 3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["h"]),
        helper.make_node("Equal", ["a", "b"], ["c"]),
        helper.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Add", ["y0", "h"], ["y"]),
    ]
    inits = {"a": np.array(16000, np.int64), "b": np.array(16000 if cond else 8000, np.int64),
             "one": np.array([0, 1], np.int64), "zero": np.float32(0)}  # fmt: skip
    m = _model(nodes, [x], [_vi("y", [2, 3])], inits)
    if not cond:  # the nested If's condition must be a scalar: reduce to one element
        x_one = np.abs(_r(1, 3))
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
        m.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 1
        prog = check(m, {"x": x_one})
        prog2 = check(m, {"x": -x_one})
        assert prog2.coverage()["host_ops"] == {"If": 1}
    else:
        prog = check(m, {"x": _r(2, 3)})
        assert prog.coverage()["host_nodes"] == 0  # the chosen branch runs on NNRt


# --- STFT / DFT / Scan on the host (onnx-asr's feature extractors) ----------------------------

I64 = TensorProto.INT64


@pytest.mark.parametrize(
    "form", ["window", "window+length", "length", "rank2", "complex", "twosided"]
)
def test_stft(form: str) -> None:
    n, hop, length = 16, 5, 70
    shape = {"rank2": [2, length], "complex": [2, length, 2]}.get(form, [2, length, 1])
    inits: dict[str, np.ndarray] = {"hop": np.array(hop, np.int64)}
    names = ["sig", "hop", "", ""]
    if "window" in form or form in ("rank2", "complex", "twosided"):
        inits["win"] = np.hanning(n).astype(np.float32)
        names[2] = "win"
    if "length" in form:
        inits["flen"] = np.array(n, np.int64)
        names[3] = "flen"
    onesided = 0 if form in ("complex", "twosided") else 1
    while names and not names[-1]:
        names.pop()
    node = helper.make_node("STFT", names, ["y"], onesided=onesided)
    m = _model([node], [_vi("sig", shape)], [_vi("y", None)], inits)  # type: ignore[arg-type]
    prog = check(m, {"sig": _r(*shape)}, tol=1e-5)
    assert prog.coverage()["host_ops"] == {"STFT": 1}


@pytest.mark.parametrize("opset,axis,inverse,onesided,length", [
    (17, 1, 0, 1, None), (17, 1, 1, 0, None), (17, 2, 0, 0, 6), (17, 1, 0, 0, 12),
    (20, -2, 0, 1, None), (20, 1, 1, 0, 8),
])  # fmt: skip
def test_dft(opset: int, axis: int, inverse: int, onesided: int, length: int | None) -> None:
    shape = [2, 10, 7, 1 if onesided else 2]
    inits: dict[str, np.ndarray] = {}
    names = ["x", ""]
    if length is not None:
        inits["n"] = np.array(length, np.int64)
        names[1] = "n"
    kw: dict[str, Any] = {"inverse": inverse, "onesided": onesided}
    if opset >= 20:
        inits["ax"] = np.array(axis, np.int64)
        names.append("ax")
    else:
        kw["axis"] = axis
    while not names[-1]:
        names.pop()
    m = _model([helper.make_node("DFT", names, ["y"], **kw)], [_vi("x", shape)], [_vi("y", None)],
               inits, opset=opset)  # type: ignore[arg-type]  # fmt: skip
    check(m, {"x": _r(*shape)}, tol=1e-5)


@pytest.mark.parametrize(
    "in_axis,in_dir,out_axis,out_dir", [(0, 0, 0, 0), (1, 1, 1, 0), (1, 0, -1, 1)]
)
def test_scan(in_axis: int, in_dir: int, out_axis: int, out_dir: int) -> None:
    # state: a running sum; scan output: state * an outer value + the slice (a framing body
    # like onnx-asr's reads the enclosing graph too)
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "k"], ["m"]),
         helper.make_node("Add", ["m", "xt"], ["y_t"])],
        "body", [_vi("s_in", [3]), _vi("xt", [3])], [_vi("s_out", [3]), _vi("y_t", [3])],
    )  # fmt: skip
    x_shape = [5, 3] if in_axis == 0 else [3, 5]
    nodes = [
        helper.make_node("Relu", ["w"], ["k"]),
        helper.make_node("Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                         scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                         scan_output_axes=[out_axis], scan_output_directions=[out_dir]),
    ]  # fmt: skip
    m = _model(nodes, [_vi("s0", [3]), _vi("x", x_shape), _vi("w", [3])],
               [_vi("s", [3]), _vi("y", None)])  # type: ignore[arg-type]  # fmt: skip
    prog = check(m, {"s0": _r(3), "x": _r(*x_shape), "w": np.abs(_r(3))})
    assert prog.coverage()["host_ops"] == {"Scan": 1}


# --- onnxruntime's DynamicQuantizeLSTM (ddddocr's quantised CRNN) ------------------------------


@pytest.mark.parametrize("direction,per_channel,peep", [
    ("forward", False, False), ("reverse", True, False), ("bidirectional", False, True),
])  # fmt: skip
def test_dynamic_quantize_lstm(direction: str, per_channel: bool, peep: bool) -> None:
    seq, batch, isz, h = 6, 2, 5, 4
    d = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(3)
    inits: dict[str, np.ndarray] = {
        "W": rng.integers(-100, 100, (d, isz, 4 * h)).astype(np.int8),
        "R": rng.integers(-100, 100, (d, h, 4 * h)).astype(np.int8),
        "B": (0.1 * rng.standard_normal((d, 8 * h))).astype(np.float32),
        "ws": np.full((d, 4 * h) if per_channel else (d,), 0.004, np.float32),
        "wz": np.zeros((d, 4 * h) if per_channel else (d,), np.int8),
        "rs": np.full((d, 4 * h) if per_channel else (d,), 0.006, np.float32),
        "rz": np.zeros((d, 4 * h) if per_channel else (d,), np.int8),
    }
    if per_channel:
        inits["ws"] = (inits["ws"] * rng.uniform(0.5, 1.5, inits["ws"].shape)).astype(np.float32)
    if peep:
        inits["P"] = (0.1 * rng.standard_normal((d, 3 * h))).astype(np.float32)
    node = helper.make_node(
        "DynamicQuantizeLSTM",
        ["x", "W", "R", "B", "", "h0", "c0", "P" if peep else "", "ws", "wz", "rs", "rz"],
        ["y", "yh", "yc"], domain="com.microsoft", direction=direction, hidden_size=h,
    )  # fmt: skip
    # what follows needs the LSTM's output shapes (ONNX inference does not know the contrib op)
    after = helper.make_node("DynamicQuantizeLinear", ["yc"], ["q", "qs", "qz"])
    m = _model([node, after], [_vi("x", [seq, batch, isz]), _vi("h0", [d, batch, h]), _vi("c0", [d, batch, h])],
               [_vi("y", None), _vi("yh", None), _vi("qs", None)], inits,
               domains={"com.microsoft": 1})  # type: ignore[arg-type]  # fmt: skip
    feeds = {"x": _r(seq, batch, isz), "h0": 0.5 * _r(d, batch, h), "c0": 0.5 * _r(d, batch, h)}
    prog = check(m, feeds, tol=1e-5)
    assert prog.coverage()["host_ops"] == {"com.microsoft.DynamicQuantizeLSTM": 1}


def test_stft_output_shape_lets_what_follows_run_on_nnrt() -> None:
    # whisper's front end: |STFT|^2 @ mel filters, log, then a max over every axis. onnx infers
    # a two-sided STFT when `onesided` is left at its default; the kernel's own shape is used.
    n, hop = 16, 4
    nodes = [
        helper.make_node("STFT", ["sig", "hop", "win"], ["spec"]),
        helper.make_node("ReduceSumSquare", ["spec", "last"], ["pw"], keepdims=0),
        helper.make_node("MatMul", ["pw", "mel"], ["m"]),
        helper.make_node("Clip", ["m", "eps"], ["mc"]),
        helper.make_node("Log", ["mc"], ["lg"]),
        helper.make_node("ReduceMax", ["lg"], ["mx"], keepdims=0),
    ]
    inits = {"hop": np.array(hop, np.int64), "win": np.hanning(n).astype(np.float32),
             "last": np.array([-1], np.int64), "mel": np.abs(_r(n // 2 + 1, 5)),
             "eps": np.float32(1e-6)}  # fmt: skip
    m = _model(nodes, [_vi("sig", [1, 64])], [_vi("lg", None), _vi("mx", None)], inits,
               opset=18)  # type: ignore[arg-type]  # fmt: skip
    prog = check(m, {"sig": _r(1, 64)}, tol=1e-5)
    assert prog.coverage()["host_ops"] == {"STFT": 1}


@pytest.mark.parametrize("bounds", ["min", "max", "both", "min+const_max"])
def test_clip_with_bounds_computed_at_run_time(bounds: str) -> None:
    # openWakeWord's mel front end: Clip(x, ReduceMax(x) - 80, max)
    nodes = [helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
             helper.make_node("Sub", ["mx", "k"], ["lo"]),
             helper.make_node("Add", ["mx", "k2"], ["hi"])]  # fmt: skip
    lo = "lo" if bounds != "max" else ""
    hi = {"max": "hi", "both": "hi", "min+const_max": "cmax"}.get(bounds, "")
    ins = [n for n in ["x", lo, hi]]
    while not ins[-1]:
        ins.pop()
    nodes.append(helper.make_node("Clip", ins, ["y"]))
    inits = {"k": np.float32(1.0), "k2": np.float32(-0.5), "cmax": np.float32(0.7)}
    m = _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y", [2, 3, 4])], inits, opset=13)
    prog = check(m, {"x": _r(2, 3, 4)})
    assert prog.coverage()["host_nodes"] == 0


def test_conv_integer_large_enough_for_blas() -> None:
    # ddddocr's quantised CNN: integer GEMMs big enough to go through BLAS in float64 (exact
    # while every partial sum stays under 2**53); extreme codes and zero points
    x = R.integers(0, 256, (1, 16, 20, 20)).astype(np.uint8)
    x[0, :, 0, 0] = 255
    w = R.integers(-128, 128, (32, 16, 3, 3)).astype(np.int8)
    w[0] = -128
    node = helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], pads=[1, 1, 1, 1])
    m = _model([node], [_vi("x", [1, 16, 20, 20], TensorProto.UINT8)],
               [_vi("y", [1, 32, 20, 20], TensorProto.INT32)], {"w": w, "xz": np.array(0, np.uint8)})  # fmt: skip
    check(m, {"x": x}, exact=True)
