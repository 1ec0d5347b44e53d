"""Every TFLite builtin idlgen maps onto NNRt v2_1, one small model each, against LiteRT's
builtin kernels (one thread, no delegate); constant folding; hybrid (dynamic-range) quantised
operators computed as LiteRT computes them; the audit table and the refusal messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generated import tflite as T
from idlgen.runtime import UnsupportedModelError, load

from .tflite_builder import TB

interp = pytest.importorskip("ai_edge_litert.interpreter")

A = T.ActivationFunctionType


@dataclass
class In:
    name: str
    value: np.ndarray
    const: bool = False
    quant: tuple[list[float], list[int], int] | None = None


def _build(
    code: str,
    ins: list[In],
    outs: list[tuple[list[int], Any, Any]],
    options: Any,
) -> bytes:
    b = TB()
    idx = []
    for i in ins:
        if i.const:
            idx.append(b.const(i.name, i.value, i.quant))
        else:
            idx.append(b.input(i.name, list(i.value.shape), i.value.dtype, i.quant))
    o = [b.tensor(f"out{k}", shape, dt, q) for k, (shape, dt, q) in enumerate(outs)]
    b.op(code, idx, o, options)
    b.outputs = o
    return b.finish()


def _litert(data: bytes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    it = interp.Interpreter(
        model_content=data,
        num_threads=1,
        experimental_op_resolver_type=interp.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], feeds[d["name"]])
    it.invoke()
    return {d["name"]: np.array(it.get_tensor(d["index"])) for d in it.get_output_details()}


def check(
    code: str,
    ins: list[In],
    out_dtypes: list[Any],
    options: Any = None,
    *,
    out_quant: list[Any] | None = None,
    rel: float = 1e-3,
    shapes: list[list[int]] | None = None,
) -> dict[str, np.ndarray]:
    """Build a one-operator model (output shapes as LiteRT computes them), run both, compare:
    floats within ``rel`` of max|ref|, integers within one quantum, others equal."""
    oq = out_quant or [None] * len(out_dtypes)
    feeds = {i.name: i.value for i in ins if not i.const}
    if shapes is None:
        try:
            probe = _build(code, ins, [([1], dt, q) for dt, q in zip(out_dtypes, oq)], options)
            shapes = [list(v.shape) for v in _litert(probe, feeds).values()]
        except (RuntimeError, ValueError):  # some kernels check the declared rank
            rank = [1] * ins[0].value.ndim
            probe = _build(code, ins, [(rank, dt, q) for dt, q in zip(out_dtypes, oq)], options)
            shapes = [list(v.shape) for v in _litert(probe, feeds).values()]
    data = _build(code, ins, [(s, dt, q) for s, dt, q in zip(shapes, out_dtypes, oq)], options)
    want = _litert(data, feeds)
    got = load(data).run(feeds)
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape, (name, g.shape, w.shape)
        if w.dtype.kind == "f":
            tol = rel * max(float(np.max(np.abs(w))) if w.size else 0.0, 1e-6)
            assert np.max(np.abs(g.astype(np.float64) - w), initial=0.0) <= tol, (g, w)
        elif w.dtype.kind in "iu" and oq[int(name[3:])] is not None:
            assert np.max(np.abs(g.astype(np.int64) - w), initial=0) <= 1, (g, w)
        else:
            np.testing.assert_array_equal(g, w)
    return got


R = np.random.default_rng(0)


def f32(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (R.standard_normal(shape) * scale).astype(np.float32)


def i32(*v: int) -> np.ndarray:
    return np.array(v, np.int32)


# -- element-wise and comparisons ----------------------------------------------------------------


@pytest.mark.parametrize("code", ["GREATER_EQUAL", "LESS_EQUAL", "NOT_EQUAL", "GREATER", "LESS"])
def test_comparisons(code: str) -> None:
    x = np.round(f32(2, 3, 4))
    check(code, [In("x", x), In("y", np.round(f32(3, 4)))], [np.bool_])


@pytest.mark.parametrize("code", ["LOGICAL_AND", "LOGICAL_OR"])
def test_logical(code: str) -> None:
    a, b = R.random((3, 4)) > 0.5, R.random((4,)) > 0.5
    check(code, [In("a", a), In("b", b)], [np.bool_])


@pytest.mark.parametrize(
    "code", ["RSQRT", "SQRT", "CEIL", "ROUND", "SIGN", "ELU", "RELU_0_TO_1", "HARD_SWISH", "ABS"]
)
def test_unary(code: str) -> None:
    x = f32(2, 5, 3, scale=3.0)
    if code in ("RSQRT", "SQRT"):
        x = np.abs(x) + 0.1
    if code == "ROUND":
        x[0, 0, :] = [0.5, 1.5, -2.5]  # ties go to even, as TFLite's ROUND
    check(code, [In("x", x)], [np.float32])


def test_logical_not_and_squared_difference_log_softmax() -> None:
    check("LOGICAL_NOT", [In("x", R.random((2, 3)) > 0.5)], [np.bool_])
    check("SQUARED_DIFFERENCE", [In("x", f32(2, 3)), In("y", f32(3))], [np.float32])
    check("LOG_SOFTMAX", [In("x", f32(2, 7, scale=3))], [np.float32], T.LogSoftmaxOptions())


def test_prelu_broadcast_slopes() -> None:
    check("PRELU", [In("x", f32(1, 4, 4, 3)), In("a", f32(1, 1, 3), const=True)], [np.float32])


def test_pow_floor_div_floor_mod() -> None:
    x = np.abs(f32(3, 4)) + 0.5
    check("POW", [In("x", x), In("y", f32(3, 4))], [np.float32])
    a = np.array([[7, -7, 7, -7, 0, 5]], np.int32)
    b = np.array([[2, 2, -2, -2, 3, -5]], np.int32)
    check("FLOOR_DIV", [In("a", a), In("b", b)], [np.int32])
    check("FLOOR_MOD", [In("a", a), In("b", b)], [np.int32])
    fa, fb = f32(4, 5, scale=5), f32(5, scale=2)
    check("FLOOR_DIV", [In("a", fa), In("b", fb)], [np.float32])
    check("FLOOR_MOD", [In("a", fa), In("b", fb)], [np.float32])


def test_add_n_select_v2_cast() -> None:
    check("ADD_N", [In("a", f32(2, 3)), In("b", f32(2, 3)), In("c", f32(2, 3))], [np.float32])
    c = R.random((3, 1)) > 0.5
    check("SELECT_V2", [In("c", c), In("x", f32(3, 4)), In("y", f32(1, 4))], [np.float32])
    check("CAST", [In("x", f32(3, 4, scale=10))], [np.int32], T.CastOptions())


# -- shapes, slicing, indexing -------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    begin=st.lists(st.integers(-4, 3), min_size=3, max_size=3),
    end=st.lists(st.integers(-4, 4), min_size=3, max_size=3),
    strides=st.lists(st.sampled_from([1, 2, -1, -2]), min_size=3, max_size=3),
    begin_mask=st.integers(0, 7),
    end_mask=st.integers(0, 7),
    shrink=st.sampled_from([0, 1, 2, 4]),
)
def test_strided_slice(
    begin: list[int],
    end: list[int],
    strides: list[int],
    begin_mask: int,
    end_mask: int,
    shrink: int,
) -> None:
    x = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)
    for k in range(3):  # a shrunk axis takes exactly the element at begin
        if shrink >> k & 1:
            begin[k] = begin[k] % x.shape[k]
            end[k], strides[k] = begin[k] + 1, 1
    # TF ignores begin/end masks on a shrunk axis, LiteRT applies them; converters set neither
    begin_mask &= ~shrink
    end_mask &= ~shrink
    opts = T.StridedSliceOptions(begin_mask=begin_mask, end_mask=end_mask, shrink_axis_mask=shrink)
    ins = [In("x", x), In("b", i32(*begin), True), In("e", i32(*end), True),
           In("s", i32(*strides), True)]  # fmt: skip
    want = _litert(_build("STRIDED_SLICE", ins, [([1], np.float32, None)], opts), {"x": x})
    if 0 in next(iter(want.values())).shape:
        return  # an empty slice: nothing to compare
    check("STRIDED_SLICE", ins, [np.float32], opts)


def test_strided_slice_ellipsis_new_axis_offset() -> None:
    x = f32(2, 3, 4, 5)
    ins = [In("x", x), In("b", i32(0, 1), True), In("e", i32(0, 3), True), In("s", i32(1, 1), True)]
    check("STRIDED_SLICE", ins, [np.float32], T.StridedSliceOptions(ellipsis_mask=1))
    ins = [In("x", x), In("b", i32(0, 0, 1), True), In("e", i32(0, 2, 3), True),
           In("s", i32(1, 1, 1), True)]  # fmt: skip
    check("STRIDED_SLICE", ins, [np.float32], T.StridedSliceOptions(new_axis_mask=1))
    ins = [In("x", x), In("b", i32(1, 1, 0, 2), True), In("e", i32(1, 2, 4, 3), True),
           In("s", i32(1, 1, 1, 1), True)]  # fmt: skip
    check("STRIDED_SLICE", ins, [np.float32], T.StridedSliceOptions(offset=True))


def test_slice_tile_broadcast_expand_squeeze() -> None:
    x = f32(3, 4, 5)
    check("SLICE", [In("x", x), In("b", i32(1, 0, 2), True), In("s", i32(2, -1, 3), True)], [np.float32],
          shapes=[[2, 4, 3]])  # fmt: skip
    check("TILE", [In("x", x), In("m", i32(2, 1, 3), True)], [np.float32])
    check("BROADCAST_TO", [In("x", f32(4, 1)), In("s", i32(2, 4, 3), True)], [np.float32])
    check("EXPAND_DIMS", [In("x", x), In("a", i32(-1), True)], [np.float32])
    check("SQUEEZE", [In("x", f32(1, 3, 1, 2))], [np.float32], T.SqueezeOptions(squeeze_dims=[2]))


def test_mirror_pad_both_modes() -> None:
    x = f32(1, 4, 5, 2)
    pads = In("p", np.array([[0, 0], [2, 1], [1, 2], [0, 0]], np.int32), True)
    for mode in (T.MirrorPadMode.REFLECT, T.MirrorPadMode.SYMMETRIC):
        check("MIRROR_PAD", [In("x", x), pads], [np.float32], T.MirrorPadOptions(mode=mode))


def test_reverse_unpack_split_v() -> None:
    x = f32(2, 3, 4)
    check("REVERSE_V2", [In("x", x), In("a", i32(1, 2), True)], [np.float32])
    check("REVERSE_V2", [In("x", x), In("a", i32(0), True)], [np.float32])
    check("UNPACK", [In("x", x)], [np.float32] * 3, T.UnpackOptions(num=3, axis=1))
    check("SPLIT_V", [In("x", x), In("s", i32(1, -1), True), In("a", i32(2), True)],
          [np.float32] * 2, T.SplitVOptions(num_splits=2))  # fmt: skip


def test_space_batch_depth() -> None:
    x = f32(1, 4, 6, 3)
    check("SPACE_TO_DEPTH", [In("x", x)], [np.float32], T.SpaceToDepthOptions(block_size=2))
    pads = In("p", np.array([[0, 2], [1, 1]], np.int32), True)
    check("SPACE_TO_BATCH_ND", [In("x", x), In("b", i32(3, 2), True), pads], [np.float32])
    crops = In("c", np.array([[0, 1], [1, 0]], np.int32), True)
    check("BATCH_TO_SPACE_ND", [In("x", f32(4, 2, 3, 2)), In("b", i32(2, 2), True), crops],
          [np.float32])  # fmt: skip


def test_gather_nd_scatter_nd_sparse_to_dense_embedding() -> None:
    x = f32(4, 3, 2)
    idx = np.array([[0, 1], [3, 2], [1, 0]], np.int32)
    check("GATHER_ND", [In("x", x), In("i", idx, True)], [np.float32])
    upd = f32(3, 2)
    check(
        "SCATTER_ND", [In("i", idx, True), In("u", upd), In("s", i32(4, 3, 2), True)], [np.float32]
    )
    sidx = np.array([[0, 1], [2, 3]], np.int32)
    check("SPARSE_TO_DENSE", [In("i", sidx, True), In("s", i32(3, 4), True), In("v", f32(2)),
                              In("d", np.array(0.5, np.float32), True)], [np.float32])  # fmt: skip
    check("EMBEDDING_LOOKUP", [In("ids", i32(2, 0, 2)), In("t", f32(3, 4), True)], [np.float32])


def test_fill_range_rank_shape_zeros_like_one_hot() -> None:
    check("FILL", [In("d", i32(2, 3)), In("v", np.array(1.5, np.float32))], [np.float32])
    one = lambda v: np.array(v, np.int32)  # noqa: E731
    check("RANGE", [In("s", one(2)), In("l", one(11)), In("d", one(3))], [np.int32])
    x = f32(2, 3, 4)
    check("RANK", [In("x", x)], [np.int32])
    check("SHAPE", [In("x", x)], [np.int32], T.ShapeOptions(out_type=T.TensorType.INT32))
    check("ZEROS_LIKE", [In("x", x)], [np.float32])
    check("ONE_HOT", [In("i", i32(0, 3, 1, 9)), In("d", one(4), True),
                      In("on", np.array(2.0, np.float32), True), In("off", np.array(-1.0, np.float32), True)],
          [np.float32], T.OneHotOptions(axis=-1))  # fmt: skip


def test_arg_min_max_topk() -> None:
    x = np.round(f32(3, 5, scale=2))
    for code in ("ARG_MAX", "ARG_MIN"):
        for out in (np.int32, np.int64):
            tt = T.TensorType.INT32 if out == np.int32 else T.TensorType.INT64
            opts = (T.ArgMaxOptions if code == "ARG_MAX" else T.ArgMinOptions)(output_type=tt)
            check(code, [In("x", x), In("a", i32(1), True)], [out], opts)
    check(
        "TOPK_V2",
        [In("x", f32(3, 6)), In("k", np.array(2, np.int32), True)],
        [np.float32, np.int32],
    )


def test_cumsum_modes() -> None:
    x = f32(2, 5, 3)
    for excl in (False, True):
        for rev in (False, True):
            opts = T.CumsumOptions(exclusive=excl, reverse=rev)
            check("CUMSUM", [In("x", x), In("a", np.array(1, np.int32), True)], [np.float32], opts)


def test_reduce_any_all() -> None:
    x = R.random((3, 4, 2)) > 0.7
    for code in ("REDUCE_ANY", "REDUCE_ALL"):
        check(
            code, [In("x", x), In("a", i32(1), True)], [np.bool_], T.ReducerOptions(keep_dims=False)
        )


# -- normalisation, pooling, transposed convolution -----------------------------------------------


def test_l2_norm_lrn_l2_pool() -> None:
    check("L2_NORMALIZATION", [In("x", f32(2, 3, 8))], [np.float32], T.L2NormOptions())
    opts = T.LocalResponseNormalizationOptions(radius=2, bias=1.0, alpha=0.3, beta=0.75)
    check("LOCAL_RESPONSE_NORMALIZATION", [In("x", f32(1, 3, 3, 7))], [np.float32], opts)
    for pad in (T.Padding.SAME, T.Padding.VALID):
        opts2 = T.Pool2DOptions(
            padding=pad, stride_w=2, stride_h=2, filter_width=3, filter_height=2
        )
        check("L2_POOL_2D", [In("x", f32(1, 7, 6, 3))], [np.float32], opts2)


@pytest.mark.parametrize("pad", [T.Padding.SAME, T.Padding.VALID])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("bias", [False, True])
def test_transpose_conv(pad: Any, stride: int, bias: bool) -> None:
    x = f32(1, 4, 5, 3)
    w = f32(6, 3, 3, 3)  # [O, kH, kW, I]
    if pad == T.Padding.SAME:
        oh, ow = 4 * stride, 5 * stride
    else:
        oh, ow = (4 - 1) * stride + 3, (5 - 1) * stride + 3
    ins = [In("os", i32(1, oh, ow, 6), True), In("w", w, True), In("x", x)]
    if bias:
        ins.append(In("b", f32(6), True))
    opts = T.TransposeConvOptions(padding=pad, stride_w=stride, stride_h=stride,
                                  fused_activation_function=A.RELU if bias else A.NONE)  # fmt: skip
    check("TRANSPOSE_CONV", ins, [np.float32], opts)


# -- quantised -------------------------------------------------------------------------------


def test_quantised_pad_fills_with_the_zero_point() -> None:
    """The mltk_kws_mobilenetv2 bug: a quantised PAD after ReLU6 (zero point -128) must pad
    with real 0, i.e. the zero point, not 254 quanta above it."""
    x = R.integers(-128, 128, (1, 4, 4, 3)).astype(np.int8)
    q = ([0.0235], [-128], 0)
    pads = In("p", np.array([[0, 0], [1, 1], [0, 1], [0, 0]], np.int32), True)
    got = check("PAD", [In("x", x, quant=q), pads], [np.int8], out_quant=[q])
    assert got["out0"][0, 0, 0, 0] == -128


def test_quantised_padv2_value_and_prelu() -> None:
    x = R.integers(-128, 128, (1, 3, 3, 2)).astype(np.int8)
    q = ([0.05], [3], 0)
    pads = In("p", np.array([[0, 0], [1, 0], [0, 1], [0, 0]], np.int32), True)
    val = In("v", np.array([13], np.int8), True, q)
    check("PADV2", [In("x", x, quant=q), pads, val], [np.int8], out_quant=[q])


# -- folding ---------------------------------------------------------------------------------------


def _conv_with_dequantized_weights(wdtype: Any) -> bytes:
    b = TB(4)
    x = b.input("x", [1, 6, 6, 3])
    w = f32(4, 3, 3, 3)
    if wdtype == np.float16:
        wt = b.const("w16", w.astype(np.float16))
    else:
        s = np.abs(w).max(axis=(1, 2, 3)) / 127
        wt = b.const(
            "w8", np.round(w / s.reshape(-1, 1, 1, 1)).astype(np.int8), (list(s), [0] * 4, 0)
        )
    wf = b.tensor("w", [4, 3, 3, 3])
    b.op("DEQUANTIZE", [wt], [wf])
    y = b.tensor("y", [1, 6, 6, 4])
    b.op("CONV_2D", [x, wf, b.const("b", f32(4))], [y],
         T.Conv2DOptions(padding=T.Padding.SAME, stride_w=1, stride_h=1))  # fmt: skip
    b.outputs = [y]
    return b.finish()


@pytest.mark.parametrize("wdtype", [np.float16, np.int8])
def test_dequantize_of_constant_weights_folds(wdtype: Any) -> None:
    data = _conv_with_dequantized_weights(wdtype)
    x = f32(1, 6, 6, 3)
    p = load(data)
    kinds = [n.nodeType.name for n in p.model.nodes]
    assert kinds == ["NODE_TYPE_CONV2D_FUSION"]  # the DEQUANTIZE ran at import time
    want = _litert(data, {"x": x})["y"]
    assert np.max(np.abs(p.run({"x": x})["y"] - want)) <= 1e-5 * np.max(np.abs(want))


@pytest.mark.parametrize("budget,folds", [(200, True), (100, False)])
def test_dequantized_weights_fold_within_four_budgets(
    monkeypatch: Any, budget: int, folds: bool
) -> None:
    """The float16 weights (432 bytes as float32) fold while under four fold budgets (BirdNET's
    27 MB metadata weights: otherwise cast and re-laid out on every run)."""
    from idlgen.runtime import tflite_import

    monkeypatch.setattr(tflite_import, "_FOLD_BUDGET", budget)
    data = _conv_with_dequantized_weights(np.float16)
    x = f32(1, 6, 6, 3)
    p = load(data)
    kinds = [n.nodeType.name for n in p.model.nodes]
    assert (kinds == ["NODE_TYPE_CONV2D_FUSION"]) == folds, kinds
    want = _litert(data, {"x": x})["y"]
    assert np.max(np.abs(p.run({"x": x})["y"] - want)) <= 1e-5 * np.max(np.abs(want))


def test_shape_arithmetic_folds_to_a_constant_reshape() -> None:
    """SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE on a static shape leaves one Reshape node."""
    b = TB()
    x = b.input("x", [2, 12])
    sh = b.tensor("sh", [2], np.int32)
    b.op("SHAPE", [x], [sh], T.ShapeOptions(out_type=T.TensorType.INT32))
    n = b.tensor("n", [], np.int32)
    b.op("STRIDED_SLICE", [sh, b.const("b0", i32(0)), b.const("e0", i32(1)), b.const("s0", i32(1))],
         [n], T.StridedSliceOptions(shrink_axis_mask=1))  # fmt: skip
    shape = b.tensor("shape", [3], np.int32)
    b.op("PACK", [n, b.const("three", np.array(3, np.int32)), b.const("four", np.array(4, np.int32))],
         [shape], T.PackOptions(values_count=3, axis=0))  # fmt: skip
    y = b.tensor("y", [2, 3, 4])
    b.op("RESHAPE", [x, shape], [y])
    b.outputs = [y]
    data = b.finish()
    p = load(data)
    assert [nd.nodeType.name for nd in p.model.nodes] == ["NODE_TYPE_RESHAPE"]
    xv = f32(2, 12)
    np.testing.assert_array_equal(p.run({"x": xv})["y"], xv.reshape(2, 3, 4))


# -- hybrid (dynamic-range) quantisation ---------------------------------------------------------


def _int8_weights(w: np.ndarray, axis: int | None) -> tuple[np.ndarray, Any]:
    if axis is None:
        s = np.array([np.abs(w).max() / 127])
        return np.round(w / s).astype(np.int8), (list(s), [0], 0)
    red = tuple(i for i in range(w.ndim) if i != axis)
    s = np.abs(w).max(axis=red) / 127
    shape = [1] * w.ndim
    shape[axis] = -1
    return np.round(w / s.reshape(shape)).astype(np.int8), (list(s), [0] * len(s), axis)


def _hybrid_check(data: bytes, x: np.ndarray) -> float:
    """Relative max error against LiteRT's builtin kernels (no delegate)."""
    want = _litert(data, {"x": x})["y"]
    got = load(data).run({"x": x})["y"]
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


@pytest.mark.parametrize("asym", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("rows", [[3, 40], [2, 2, 40]])
def test_hybrid_fully_connected(asym: bool, per_channel: bool, rows: list[int]) -> None:
    b = TB(5)
    x = b.input("x", rows)
    wq, q = _int8_weights(f32(7, 40), 0 if per_channel else None)
    out = rows[:-1] + [7]
    y = b.tensor("y", [int(np.prod(rows[:-1])), 7])
    b.op("FULLY_CONNECTED", [x, b.const("w", wq, q), b.const("b", f32(7))], [y],
         T.FullyConnectedOptions(asymmetric_quantize_inputs=asym, fused_activation_function=A.RELU))  # fmt: skip
    b.outputs = [y]
    xv = f32(*rows, scale=2.0)
    xv.reshape(-1, 40)[0] = 0.0  # an all-zero row: scale 0 in LiteRT
    assert _hybrid_check(b.finish(), xv) <= 1e-6
    del out


@pytest.mark.parametrize("depthwise", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_hybrid_convolutions(depthwise: bool, per_channel: bool) -> None:
    if depthwise and not per_channel:
        pytest.skip("LiteRT's hybrid depthwise convolution needs per-channel weights")
    b = TB(6)
    x = b.input("x", [2, 9, 9, 4])
    w = f32(1, 3, 3, 4) if depthwise else f32(6, 3, 3, 4)
    wq, q = _int8_weights(w, (3 if depthwise else 0) if per_channel else None)
    oc = 4 if depthwise else 6
    y = b.tensor("y", [2, 5, 5, oc])
    if depthwise:
        opts: Any = T.DepthwiseConv2DOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2,
                                             depth_multiplier=1, fused_activation_function=A.RELU6)  # fmt: skip
        b.op("DEPTHWISE_CONV_2D", [x, b.const("w", wq, q), b.const("b", f32(oc))], [y], opts)
    else:
        opts = T.Conv2DOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2)
        b.op("CONV_2D", [x, b.const("w", wq, q), b.const("b", f32(oc))], [y], opts)
    b.outputs = [y]
    assert _hybrid_check(b.finish(), f32(2, 9, 9, 4)) <= 1e-6


@pytest.mark.parametrize("asym", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_hybrid_batch_matmul(asym: bool, adj_y: bool, batched: bool) -> None:
    b = TB(7)
    x = b.input("x", [2, 3, 16])
    lead = [2] if batched else []
    wq, q = _int8_weights(f32(*lead, 8, 16) if adj_y else f32(*lead, 16, 8), None)
    y = b.tensor("y", [2, 3, 8])
    b.op("BATCH_MATMUL", [x, b.const("w", wq, q)], [y],
         T.BatchMatMulOptions(adj_y=adj_y, asymmetric_quantize_inputs=asym))  # fmt: skip
    b.outputs = [y]
    assert _hybrid_check(b.finish(), f32(2, 3, 16)) <= 1e-6


def test_int16x8_fully_connected_stays_int16() -> None:
    """16x8 quantisation: int16 activations (zero point 0), int8 weights, int64 bias."""
    b = TB(8)
    qx, qy = ([0.001], [0], 0), ([0.004], [0], 0)
    x = b.input("x", [2, 16], np.int16, qx)
    wq, q = _int8_weights(f32(5, 16), 0)
    bias = b.const("b", R.integers(-3000, 3000, 5).astype(np.int64),
                   ([s * 0.001 for s in q[0]], [0] * 5, 0))  # fmt: skip
    y = b.tensor("y", [2, 5], np.int16, qy)
    b.op("FULLY_CONNECTED", [x, b.const("w", wq, q), bias], [y], T.FullyConnectedOptions())
    b.outputs = [y]
    data = b.finish()
    xv = R.integers(-3000, 3000, (2, 16)).astype(np.int16)
    want = _litert(data, {"x": xv})["y"]
    got = load(data).run({"x": xv})["y"]
    assert got.dtype == np.int16
    assert np.max(np.abs(got.astype(np.int64) - want)) <= 1


# -- audit and messages ------------------------------------------------------------------------


def test_audit_covers_every_builtin_both_ways() -> None:
    from idlgen.runtime.bindings import BINDINGS
    from idlgen.runtime.tflite_import import _HANDLERS
    from idlgen.runtime.tflite_import import audit_rows
    from idlgen.runtime.tflite_ops import TFLITE_TO_NNRT, nnrt_unused

    assert set(TFLITE_TO_NNRT) == {m.name for m in T.BuiltinOperator}
    for nn in TFLITE_TO_NNRT.values():
        if not nn.startswith("("):  # "(the subgraph's operators)": lowered in place
            assert all(p in BINDINGS for p in nn.split("+") if p), nn
    rows = {op: (nn, status) for op, nn, status in audit_rows()}
    for op in _HANDLERS:  # every imported builtin has its NNRt counterpart named
        assert rows[op][1] == "imported" and rows[op][0], op
    assert "StridedSlice" not in nnrt_unused(sorted(BINDINGS))
    assert "LayerNormFusion" in nnrt_unused(sorted(BINDINGS))  # TFLite has no such builtin


@pytest.mark.parametrize(
    "code,words",
    [("CONV_3D_TRANSPOSE", "NNRt v2_1 has no operator for CONV_3D_TRANSPOSE"),
     ("REDUCE_WINDOW", "idlgen does not import REDUCE_WINDOW"),
     ("HASHTABLE_LOOKUP", "NNRt v2_1 has no operator for HASHTABLE_LOOKUP")],
)  # fmt: skip
def test_refusals_say_which_side_lacks_the_operator(code: str, words: str) -> None:
    b = TB()
    x = b.input("x", [1, 4])
    y = b.tensor("y", [1, 4])
    b.op(code, [x], [y])
    b.outputs = [y]
    with pytest.raises(UnsupportedModelError, match=words):
        load(b.finish())


@pytest.mark.parametrize(
    "src,qin,qout,dst",
    [(np.int8, ([0.05], [3], 0), ([0.02], [-7], 0), np.int8),  # requantise
     (np.uint8, ([0.05], [128], 0), ([0.05], [0], 0), np.int8),
     (np.float32, None, ([0.001], [0], 0), np.int16)],
)  # fmt: skip
def test_quantize_requantises(src: Any, qin: Any, qout: Any, dst: Any) -> None:
    if src == np.float32:
        x = f32(2, 5)
    else:
        info = np.iinfo(src)
        x = R.integers(info.min, info.max + 1, (2, 5)).astype(src)
    check("QUANTIZE", [In("x", x, quant=qin)], [dst], out_quant=[qout])


def test_per_channel_dequantize_on_axis_3_folds() -> None:
    b = TB()
    x = b.input("x", [1, 5, 5, 4])
    w = R.integers(-127, 128, (1, 3, 3, 4)).astype(np.int8)
    wt = b.const("w8", w, ([0.01, 0.02, 0.03, 0.04], [0] * 4, 3))
    wf = b.tensor("w", [1, 3, 3, 4])
    b.op("DEQUANTIZE", [wt], [wf])
    y = b.tensor("y", [1, 5, 5, 4])
    b.op("DEPTHWISE_CONV_2D", [x, wf, b.const("b", np.zeros(4, np.float32))], [y],
         T.DepthwiseConv2DOptions(padding=T.Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=1))  # fmt: skip
    b.outputs = [y]
    data = b.finish()
    xv = f32(1, 5, 5, 4)
    want = _litert(data, {"x": xv})["y"]
    assert np.max(np.abs(load(data).run({"x": xv})["y"] - want)) <= 1e-5 * np.max(np.abs(want))


@pytest.mark.parametrize("regular", [False, True])
def test_detection_postprocess_custom_op(regular: bool) -> None:
    """CUSTOM TFLite_Detection_PostProcess (SSD) onto NNRt's DetectionPostProcess."""
    a, c = 20, 3
    rng = np.random.default_rng(11)
    yx = rng.uniform(0.1, 0.9, (a, 2))
    hw = rng.uniform(0.05, 0.3, (a, 2))
    anchors = np.concatenate([yx, hw], axis=1).astype(np.float32)
    b = TB()
    enc = b.input("enc", [1, a, 4])
    cls = b.input("cls", [1, a, c + 1])
    outs = [b.tensor(n, s) for n, s in (("boxes", [1, 5, 4]), ("classes", [1, 5]), ("scores", [1, 5]),
                                         ("num", [1]))]  # fmt: skip
    opts = {"max_detections": 5, "max_classes_per_detection": 1, "detections_per_class": 4,
            "use_regular_nms": regular, "nms_score_threshold": 0.2, "nms_iou_threshold": 0.5,
            "num_classes": c, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}  # fmt: skip
    b.custom("TFLite_Detection_PostProcess", [enc, cls, b.const("anchors", anchors)], outs, opts)
    b.outputs = outs
    data = b.finish()
    feeds = {"enc": (rng.standard_normal((1, a, 4)) * 0.5).astype(np.float32),
             "cls": rng.uniform(0, 1, (1, a, c + 1)).astype(np.float32)}  # fmt: skip
    want = _litert(data, feeds)
    got = load(data).run(feeds)
    n = int(want["num"][0])
    assert int(got["num"][0]) == n
    for k in ("boxes", "classes", "scores"):
        np.testing.assert_allclose(got[k][0, :n], want[k][0, :n], rtol=1e-5, atol=1e-5)


# -- host operators (NNRt v2_1 has no operator for these) -------------------------------------


def test_host_kernels_match_litert() -> None:
    i64 = lambda *v: np.array(v, np.int32)  # noqa: E731
    check("BROADCAST_ARGS", [In("a", i64(2, 1, 3)), In("b", i64(4, 1))], [np.int32])
    check("ATAN2", [In("y", f32(3, 4)), In("x", f32(3, 4))], [np.float32])
    check("MATRIX_DIAG", [In("d", f32(2, 3))], [np.float32])
    check("MATRIX_SET_DIAG", [In("x", f32(2, 3, 4)), In("d", f32(2, 3))], [np.float32])
    check("REVERSE_SEQUENCE", [In("x", f32(3, 5, 2)), In("n", i64(2, 5, 0))], [np.float32],
          T.ReverseSequenceOptions(seq_dim=1, batch_dim=0))  # fmt: skip
    check("SEGMENT_SUM", [In("x", f32(5, 3)), In("s", i64(0, 0, 1, 2, 2))], [np.float32])
    for how in ("SUM", "PROD", "MAX", "MIN"):
        check("UNSORTED_SEGMENT_" + how, [In("x", f32(5, 3)), In("s", i64(2, 0, 2, 1, 0)),
                                          In("n", np.array([4], np.int32))], [np.float32])  # fmt: skip
    check("UNIQUE", [In("x", np.array([3, 1, 3, 7, 1, 0], np.int32))], [np.int32, np.int32],
          T.UniqueOptions(idx_out_type=T.TensorType.INT32))  # fmt: skip
    check("DYNAMIC_UPDATE_SLICE", [In("x", f32(4, 5)), In("u", f32(2, 3)), In("s", i64(3, 1))],
          [np.float32])  # fmt: skip
    check("BUCKETIZE", [In("x", f32(3, 4, scale=3))], [np.int32],
          T.BucketizeOptions(boundaries=[-1.0, 0.0, 0.5, 2.0]))  # fmt: skip
    check("FAKE_QUANT", [In("x", f32(3, 4, scale=3))], [np.float32],
          T.FakeQuantOptions(min=-2.0, max=3.0, num_bits=8, narrow_range=False))  # fmt: skip
    check("CUMSUM", [In("x", R.integers(-9, 9, (3, 4)).astype(np.int32)),
                     In("a", np.array(1, np.int32), True)], [np.int32],
          T.CumsumOptions(exclusive=True, reverse=False))  # fmt: skip
    check("BITWISE_XOR", [In("a", i64(5, 9, -3)), In("b", i64(3, 3, 7))], [np.int32])
    check("RIGHT_SHIFT", [In("a", i64(5, 90, -30)), In("b", i64(1, 3, 2))], [np.int32])


@pytest.mark.parametrize("v5", [False, True])
def test_non_max_suppression(v5: bool) -> None:
    rng = np.random.default_rng(3)
    yx = rng.uniform(0, 1, (12, 2))
    boxes = np.concatenate([yx, yx + rng.uniform(0.1, 0.4, (12, 2))], axis=1).astype(np.float32)
    ins = [In("boxes", boxes), In("scores", rng.uniform(0, 1, 12).astype(np.float32)),
           In("m", np.array(6, np.int32), True), In("iou", np.array(0.4, np.float32), True),
           In("st", np.array(0.2, np.float32), True)]  # fmt: skip
    if v5:
        ins.append(In("sigma", np.array(0.0, np.float32), True))
        check("NON_MAX_SUPPRESSION_V5", ins, [np.int32, np.float32, np.int32])
    else:
        check("NON_MAX_SUPPRESSION_V4", ins, [np.int32, np.int32])


def test_host_nodes_are_reported_and_refused_with_nnrt_only() -> None:
    b = TB()
    x, y = b.input("x", [3]), b.input("y", [3])
    z = b.tensor("z", [3])
    b.op("ATAN2", [x, y], [z])
    e = b.tensor("e", [3])
    b.op("EXP", [z], [e])
    b.outputs = [e]
    data = b.finish()
    p = load(data)
    assert p.coverage() == {"nnrt_nodes": 1, "host_nodes": 1, "host_ops": {"ATAN2": 1}}
    with pytest.raises(UnsupportedModelError, match="NNRt v2_1 has no operator for ATAN2"):
        load(data, nnrt_only=True)


def _counter_body(limit: int) -> tuple[TB, TB]:
    """WHILE (i, x): cond i < limit; body (i + 1, x * 2 + 1)."""
    cond = TB()
    ci, cx = cond.input("i", [], np.int32), cond.input("x", [2, 3])
    out = cond.tensor("lt", [], np.bool_)
    cond.op("LESS", [ci, cond.const("limit", np.array(limit, np.int32))], [out])
    cond.outputs = [out]
    body = TB()
    bi, bx = body.input("i", [], np.int32), body.input("x", [2, 3])
    ni, t, nx = body.tensor("i1", [], np.int32), body.tensor("t", [2, 3]), body.tensor("x1", [2, 3])
    body.op("ADD", [bi, body.const("one", np.array(1, np.int32))], [ni], T.AddOptions())
    body.op("MUL", [bx, body.const("two", np.full((2, 3), 2, np.float32))], [t], T.MulOptions())
    body.op("ADD", [t, body.const("c", np.ones((2, 3), np.float32))], [nx], T.AddOptions())
    body.outputs = [ni, nx]
    return cond, body


def _litert_calls(data: bytes, feeds: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    it = interp.Interpreter(
        model_content=data,
        num_threads=1,
        experimental_op_resolver_type=interp.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    it.allocate_tensors()
    res = []
    for f in feeds:
        for d in it.get_input_details():
            it.set_tensor(d["index"], f[d["name"]])
        it.invoke()
        res.append(
            {d["name"]: np.array(it.get_tensor(d["index"])) for d in it.get_output_details()}
        )
    return res


def test_while_loop_runs_on_the_host() -> None:
    b = TB()
    i, x = b.input("i", [], np.int32), b.input("x", [2, 3])
    cond, body = _counter_body(5)
    ci, bi = b.subgraph(cond), b.subgraph(body)
    oi, ox = b.tensor("oi", [], np.int32), b.tensor("ox", [2, 3])
    b.op("WHILE", [i, x], [oi, ox], T.WhileOptions(cond_subgraph_index=ci, body_subgraph_index=bi))
    y = b.tensor("y", [2, 3])
    b.op("TANH", [ox], [y])
    b.outputs = [oi, y]
    data = b.finish()
    feeds = {"i": np.array(1, np.int32), "x": f32(2, 3, scale=0.01)}
    want = _litert_calls(data, [feeds])[0]
    p = load(data)
    got = p.run(feeds)
    assert int(got["oi"]) == int(want["oi"]) == 5
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5, atol=1e-6)
    assert p.coverage()["host_ops"] == {"WHILE": 1}


def test_a_while_loop_draws_on_the_work_budget() -> None:
    """A WHILE whose condition holds for 2^31 iterations is refused by the work budget (each
    iteration is a body call) long before its iteration bound, naming the WHILE."""
    from idlgen.runtime import budget

    b = TB()
    i, x = b.input("i", [], np.int32), b.input("x", [2, 3])
    cond, body = _counter_body(2**31 - 1)
    ci, bi = b.subgraph(cond), b.subgraph(body)
    oi, ox = b.tensor("oi", [], np.int32), b.tensor("ox", [2, 3])
    b.op("WHILE", [i, x], [oi, ox], T.WhileOptions(cond_subgraph_index=ci, body_subgraph_index=bi))
    b.outputs = [oi, ox]
    p = load(b.finish())
    feeds = {"i": np.array(0, np.int32), "x": f32(2, 3, scale=0.01)}
    with budget.metered(200 * budget.CALL_COST) as m:
        with pytest.raises(budget.WorkBudgetError, match="WHILE"):
            p.run(feeds)
    # each iteration: the condition's and the body's plan calls at least
    assert m.used > 200 * budget.CALL_COST


def test_if_picks_a_branch_on_the_host() -> None:
    def branch(code: str) -> TB:
        t = TB()
        a, c = t.input("a", [4]), t.input("c", [4])
        o = t.tensor("o", [4])
        t.op(code, [a, c], [o], T.AddOptions() if code == "ADD" else T.SubOptions())
        t.outputs = [o]
        return t

    b = TB()
    c, x, y = b.input("c", [], np.bool_), b.input("x", [4]), b.input("y", [4])
    then_i, else_i = b.subgraph(branch("ADD")), b.subgraph(branch("SUB"))
    o = b.tensor("o", [4])
    b.op("IF", [c, x, y], [o], T.IfOptions(then_subgraph_index=then_i, else_subgraph_index=else_i))
    b.outputs = [o]
    data = b.finish()
    p = load(data)
    for cond in (True, False):
        feeds = {"c": np.array(cond), "x": f32(4), "y": f32(4)}
        want = _litert_calls(data, [feeds])[0]["o"]
        np.testing.assert_allclose(p.run(feeds)["o"], want, rtol=1e-6)
    # The branches are NNRt subgraphs of the same Model, and the kernel runs them there.
    names = [s.name.removeprefix(p.model.name + "_") for s in p.model.subGraph]
    assert names[-2:] == [f"subgraph{then_i}", f"subgraph{else_i}"]
    kinds = {p.model.nodes[i].nodeType.name for s in p.model.subGraph[-2:] for i in s.nodeIndices}
    assert kinds == {"NODE_TYPE_ADD_FUSION", "NODE_TYPE_SUB_FUSION"}
    assert list(p.model.subGraph[0].nodeIndices) == []  # the main graph is the IF alone


def test_if_branches_run_inside_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from idlgen.runtime.bodies import SubgraphBody

    def no(*_: object) -> object:
        raise AssertionError("a branch ran outside the model")

    monkeypatch.setattr(SubgraphBody, "__call__", no)
    test_if_picks_a_branch_on_the_host()


def test_call_once_and_resource_variables_keep_state_across_runs() -> None:
    """CALL_ONCE initialises a variable to 10; every run reads it, adds x, assigns it back and
    returns the new value (a running sum across invocations, as LiteRT keeps it)."""
    init = TB()
    h0 = init.tensor("h", [], np.int32)
    init.tensors[h0].type = T.TensorType.RESOURCE
    init.op("VAR_HANDLE", [], [h0], T.VarHandleOptions(container="", shared_name="acc"))
    init.op("ASSIGN_VARIABLE", [h0, init.const("ten", np.full((3,), 10, np.float32))], [])
    init.outputs = []
    b = TB()
    x = b.input("x", [3])
    k = b.subgraph(init)
    b.op("CALL_ONCE", [], [], T.CallOnceOptions(init_subgraph_index=k))
    h = b.tensor("h", [], np.int32)
    b.tensors[h].type = T.TensorType.RESOURCE
    b.op("VAR_HANDLE", [], [h], T.VarHandleOptions(container="", shared_name="acc"))
    v = b.tensor("v", [3])
    b.op("READ_VARIABLE", [h], [v])
    s = b.tensor("s", [3])
    b.op("ADD", [v, x], [s], T.AddOptions())
    b.op("ASSIGN_VARIABLE", [h, s], [])
    b.outputs = [s]
    data = b.finish()
    feeds = [{"x": f32(3)} for _ in range(3)]
    want = _litert_calls(data, feeds)
    p = load(data)
    for f, w in zip(feeds, want):
        np.testing.assert_allclose(p.run(f)["s"], w["s"], rtol=1e-6)
    assert p.coverage()["host_ops"] == {
        "ASSIGN_VARIABLE": 1, "CALL_ONCE": 1, "READ_VARIABLE": 1, "VAR_HANDLE": 1
    }  # fmt: skip


@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("projection", [False, True])
def test_unidirectional_sequence_lstm_keeps_its_state(time_major: bool, projection: bool) -> None:
    """Onto NNRt's LSTM; the state tensors are LiteRT variables: a second run starts from the
    first run's final state."""
    seq, batch, n_in, h = 5, 2, 3, 4
    n_out = 3 if projection else h
    b = TB(9)
    x = b.input("x", [seq, batch, n_in] if time_major else [batch, seq, n_in])
    ins = [x]
    ins += [b.const(f"wi{g}", f32(h, n_in, scale=0.5)) for g in "ifco"]
    ins += [b.const(f"wr{g}", f32(h, n_out, scale=0.5)) for g in "ifco"]
    ins += [-1, -1, -1]
    ins += [b.const(f"b{g}", f32(h, scale=0.1)) for g in "ifco"]
    ins += [b.const("proj", f32(n_out, h, scale=0.5)), -1] if projection else [-1, -1]
    for name, width in (("out_state", n_out), ("cell_state", h)):
        t = b.tensor(name, [batch, width])
        b.tensors[t].is_variable = True
        ins.append(t)
    ins += [-1, -1, -1, -1]
    y = b.tensor("y", [seq, batch, n_out] if time_major else [batch, seq, n_out])
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y],
         T.UnidirectionalSequenceLSTMOptions(fused_activation_function=A.TANH, time_major=time_major))  # fmt: skip
    b.outputs = [y]
    data = b.finish()
    feeds = [
        {"x": f32(*([seq, batch, n_in] if time_major else [batch, seq, n_in]))} for _ in range(2)
    ]
    want = _litert_calls(data, feeds)
    p = load(data)
    for f, w in zip(feeds, want):
        np.testing.assert_allclose(p.run(f)["y"], w["y"], rtol=1e-4, atol=1e-5)
    assert p.coverage()["host_ops"] == {"ASSIGN_VARIABLE": 2, "READ_VARIABLE": 2}


@pytest.mark.parametrize("code", ["STABLEHLO_ADD", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM",
                                  "STABLEHLO_MINIMUM"])  # fmt: skip
def test_stablehlo_binary_against_litert(code: str) -> None:
    check(code, [In("x", f32(2, 3)), In("y", f32(2, 3))], [np.float32])


@pytest.mark.parametrize(
    "code,ref",
    [("STABLEHLO_SUBTRACT", lambda a, b, c: a - b), ("STABLEHLO_DIVIDE", lambda a, b, c: a / b),
     ("STABLEHLO_REMAINDER", lambda a, b, c: np.fmod(a, b)), ("STABLEHLO_POWER", lambda a, b, c: a**b),
     ("STABLEHLO_ABS", lambda a, b, c: np.abs(a)), ("STABLEHLO_NEGATE", lambda a, b, c: -a),
     ("STABLEHLO_EXPONENTIAL", lambda a, b, c: np.exp(a)), ("STABLEHLO_LOG", lambda a, b, c: np.log(a)),
     ("STABLEHLO_FLOOR", lambda a, b, c: np.floor(a)), ("STABLEHLO_COSINE", lambda a, b, c: np.cos(a)),
     ("STABLEHLO_RSQRT", lambda a, b, c: 1 / np.sqrt(a)), ("STABLEHLO_TANH", lambda a, b, c: np.tanh(a)),
     ("STABLEHLO_LOGISTIC", lambda a, b, c: 1 / (1 + np.exp(-a))),
     ("STABLEHLO_CLAMP", lambda a, b, c: np.minimum(np.maximum(b, a), c)),
     ("STABLEHLO_SELECT", lambda a, b, c: np.where(a > 1, b, c))],
)  # fmt: skip
def test_stablehlo_elementwise_against_numpy(code: str, ref: Any) -> None:
    """LiteRT has no kernel for these: NumPy states StableHLO's element-wise semantics."""
    arity = {"STABLEHLO_CLAMP": 3, "STABLEHLO_SELECT": 3}.get(code, 1 if code in (
        "STABLEHLO_ABS", "STABLEHLO_NEGATE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_LOG",
        "STABLEHLO_FLOOR", "STABLEHLO_COSINE", "STABLEHLO_RSQRT", "STABLEHLO_TANH",
        "STABLEHLO_LOGISTIC") else 2)  # fmt: skip
    vals = [np.abs(f32(2, 5)) + 0.5 for _ in range(3)]
    b = TB()
    names = ["a", "b", "c"][:arity]
    xs = [b.input(n, [2, 5], np.bool_ if code == "STABLEHLO_SELECT" and n == "a" else np.float32)
          for n in names]  # fmt: skip
    y = b.tensor("y", [2, 5])
    b.op(code, xs, [y])
    b.outputs = [y]
    feeds = dict(zip(names, vals))
    if code == "STABLEHLO_SELECT":
        feeds["a"] = vals[0] > 1
    want = ref(vals[0], vals[1], vals[2]).astype(np.float32)
    np.testing.assert_allclose(load(b.finish()).run(feeds)["y"], want, rtol=2e-6, atol=1e-6)


def test_audit_markdown_lists_both_directions() -> None:
    from pathlib import Path

    from idlgen.runtime.tflite_import import audit_rows
    from idlgen.runtime.tflite_ops import markdown

    text = markdown(audit_rows())
    assert "| STRIDED_SLICE | imported | StridedSlice |" in text
    assert "| WHILE | host | - |" in text
    assert "| CONV_3D_TRANSPOSE | no NNRt operator | - |" in text
    row = next(r for r in text.splitlines() if r.startswith("| StridedSlice |"))
    assert "STRIDED_SLICE" in row and "REVERSE_V2" in row
    shipped = Path(__file__).resolve().parents[2] / "idlgen" / "runtime" / "tflite_ops_audit.md"
    assert (
        shipped.read_text() == text
    ), "run: python -m idlgen.tools.op_audit --tflite > idlgen/runtime/tflite_ops_audit.md"


@pytest.mark.parametrize("asym", [False, True])
def test_hybrid_lstm_matches_litert(asym: bool) -> None:
    """Dynamic-range UNIDIRECTIONAL_SEQUENCE_LSTM: x_t and h_{t-1} quantised per batch row at
    every step (dequantised float weights were 5e-3 off)."""
    seq, batch, n_in, h = 6, 2, 5, 4
    b = TB(9)
    x = b.input("x", [batch, seq, n_in])
    ins = [x]
    for g in "ifco":
        wq, q = _int8_weights(f32(h, n_in, scale=0.5), None)
        ins.append(b.const("wi" + g, wq, q))
    for g in "ifco":
        wq, q = _int8_weights(f32(h, h, scale=0.5), None)
        ins.append(b.const("wr" + g, wq, q))
    ins += [-1, -1, -1] + [b.const("b" + g, f32(h, scale=0.1)) for g in "ifco"] + [-1, -1]
    for name in ("out_state", "cell_state"):
        t = b.tensor(name, [batch, h])
        b.tensors[t].is_variable = True
        ins.append(t)
    ins += [-1] * 4
    y = b.tensor("y", [batch, seq, h])
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y],
         T.UnidirectionalSequenceLSTMOptions(fused_activation_function=A.TANH, asymmetric_quantize_inputs=asym))  # fmt: skip
    b.outputs = [y]
    data = b.finish()
    feeds = [{"x": f32(batch, seq, n_in)} for _ in range(2)]
    p = load(data)
    for f, w in zip(feeds, _litert_calls(data, feeds)):
        assert np.max(np.abs(p.run(f)["y"] - w["y"])) <= 1e-6 * np.max(np.abs(w["y"]))


def test_uint8_models_and_int8_transpose_conv() -> None:
    """TF1-style uint8 quantisation (asymmetric weights) and a per-channel int8 TRANSPOSE_CONV
    (the channel axis moves with the weight transpose) within one quantum of LiteRT."""
    x = R.integers(0, 256, (1, 8, 8, 3)).astype(np.uint8)
    qx, qw, qb, qy = ([0.02], [128], 0), ([0.01], [120], 0), ([0.0002], [0], 0), ([0.05], [100], 0)
    w = R.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    bias = In("b", R.integers(-500, 500, 4).astype(np.int32), True, qb)
    check("CONV_2D", [In("x", x, quant=qx), In("w", w, True, qw), bias], [np.uint8],
          T.Conv2DOptions(padding=T.Padding.SAME, stride_w=1, stride_h=1,
                          fused_activation_function=A.RELU6), out_quant=[qy])  # fmt: skip
    check("SOFTMAX", [In("x", R.integers(0, 256, (2, 10)).astype(np.uint8), quant=([0.1], [128], 0))],
          [np.uint8], T.SoftmaxOptions(beta=1.0), out_quant=[([1 / 256], [0], 0)])  # fmt: skip
    xi = R.integers(-128, 128, (1, 4, 5, 3)).astype(np.int8)
    wt = R.integers(-127, 128, (6, 3, 3, 3)).astype(np.int8)
    check("TRANSPOSE_CONV", [In("os", i32(1, 8, 10, 6), True), In("w", wt, True, ([0.01] * 6, [0] * 6, 0)),
                             In("x", xi, quant=([0.02], [0], 0))], [np.int8],
          T.TransposeConvOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2),
          out_quant=[([0.1], [3], 0)])  # fmt: skip


@pytest.mark.parametrize("code", ["RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"])
@pytest.mark.parametrize("align,half", [(False, True), (True, False), (False, False)])
def test_resize_modes(code: str, align: bool, half: bool) -> None:
    """Nearest with half_pixel_centers was refused; nearest with align_corners rounded wrong."""
    opts_t = (
        T.ResizeNearestNeighborOptions
        if code == "RESIZE_NEAREST_NEIGHBOR"
        else T.ResizeBilinearOptions
    )
    for (h, w), (oh, ow) in [
        ((4, 6), (8, 12)),
        ((6, 9), (4, 5)),
        ((7, 3), (14, 2)),
        ((9, 9), (6, 6)),
    ]:
        check(code, [In("x", f32(1, h, w, 2)), In("s", i32(oh, ow), True)], [np.float32],
              opts_t(align_corners=align, half_pixel_centers=half))  # fmt: skip


def test_softmax_with_temperature() -> None:
    check("SOFTMAX", [In("x", f32(2, 7, scale=3))], [np.float32], T.SoftmaxOptions(beta=0.3))


def test_run_time_operands() -> None:
    """Weights, axes, paddings and sizes computed at run time are NNRt input tensors."""
    x = f32(1, 6, 6, 3)
    check("CONV_2D", [In("x", x), In("w", f32(4, 3, 3, 3)), In("b", f32(4), True)], [np.float32],
          T.Conv2DOptions(padding=T.Padding.SAME, stride_w=1, stride_h=1))  # fmt: skip
    check("DEPTHWISE_CONV_2D", [In("x", x), In("w", f32(1, 3, 3, 3)), In("b", f32(3), True)],
          [np.float32], T.DepthwiseConv2DOptions(padding=T.Padding.VALID, stride_w=1, stride_h=1,
                                                 depth_multiplier=1))  # fmt: skip
    check("FULLY_CONNECTED", [In("x", f32(2, 5)), In("w", f32(3, 5))], [np.float32],
          T.FullyConnectedOptions())  # fmt: skip
    check("SUM", [In("x", x), In("a", i32(1, 2))], [np.float32], T.ReducerOptions(keep_dims=True))
    check("PAD", [In("x", x), In("p", np.array([[0, 0], [1, 2], [0, 1], [0, 0]], np.int32))],
          [np.float32], shapes=[[1, 9, 7, 3]])  # fmt: skip


def test_concatenation_with_activation_and_offset_buffers() -> None:
    """A fused activation on CONCATENATION (LiteRT's float kernel refuses it; int8 converters
    emit it) and weights stored after the FlatBuffer (offset/size, as in models over 2 GB)."""
    b = TB()
    x, y = b.input("x", [2, 3]), b.input("y", [2, 2])
    c = b.tensor("c", [2, 5])
    b.op(
        "CONCATENATION",
        [x, y],
        [c],
        T.ConcatenationOptions(axis=1, fused_activation_function=A.RELU6),
    )
    w = b.const("w", f32(4, 5))
    o = b.tensor("o", [2, 4])
    b.op("FULLY_CONNECTED", [c, w], [o], T.FullyConnectedOptions())
    b.outputs = [o]
    feeds = {"x": f32(2, 3, scale=5), "y": f32(2, 2, scale=5)}
    inline = b.finish()
    raw = np.frombuffer(bytes(b.buffers[-1].data), np.float32).reshape(4, 5)
    want = np.clip(np.concatenate([feeds["x"], feeds["y"]], 1), 0, 6) @ raw.T
    np.testing.assert_allclose(load(inline).run(feeds)["o"], want, rtol=1e-5)
    b.buffers[-1] = T.Buffer(offset=2, size=raw.nbytes)  # placeholder, same encoded size
    n = len(b.finish())
    b.buffers[-1] = T.Buffer(offset=n, size=raw.nbytes)
    data = b.finish()
    assert len(data) == n
    np.testing.assert_allclose(load(data + raw.tobytes()).run(feeds)["o"], want, rtol=1e-5)


@pytest.mark.parametrize("part", ["COMPLEX_ABS", "REAL", "IMAG"])
def test_rfft2d_spectrum_on_the_host(part: str) -> None:
    """An audio front end: RFFT2D then |z| (or its parts); complex values live on the host."""
    b = TB()
    x = b.input("x", [2, 6, 12])
    z = b.tensor("z", [2, 8, 9], np.complex64)
    b.op("RFFT2D", [x, b.const("n", i32(8, 16))], [z], T.Rfft2dOptions())
    y = b.tensor("y", [2, 8, 9])
    b.op(part, [z], [y])
    s = b.tensor("s", [2, 8, 9])
    if part == "COMPLEX_ABS":
        b.op("SQRT", [y], [s])
    b.outputs = [s if part == "COMPLEX_ABS" else y]
    data = b.finish()
    feeds = {"x": f32(2, 6, 12)}
    want = next(iter(_litert(data, feeds).values()))
    p = load(data)
    got = next(iter(p.run(feeds).values()))
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))
    assert p.coverage()["host_ops"] == {"RFFT2D": 1, part: 1}


@pytest.mark.parametrize("hybrid", [False, True])
def test_one_step_lstm_builtin(hybrid: bool) -> None:
    """The LSTM builtin (one step per run, the state carried by its variable tensors)."""
    batch, n_in, h = 2, 5, 4
    b = TB(12)
    x = b.input("x", [batch, n_in])
    ins = [x]

    def w(name: str, *shape: int) -> int:
        v = f32(*shape, scale=0.5)
        if hybrid:
            wq, q = _int8_weights(v, None)
            return b.const(name, wq, q)
        return b.const(name, v)

    ins += [w("wi" + g, h, n_in) for g in "ifco"] + [w("wr" + g, h, h) for g in "ifco"]
    ins += [-1, -1, -1] + [b.const("b" + g, f32(h, scale=0.1)) for g in "ifco"] + [-1, -1]
    for name in ("out_state", "cell_state"):
        t = b.tensor(name, [batch, h])
        b.tensors[t].is_variable = True
        ins.append(t)
    ins += [-1] * 4
    y = b.tensor("y", [batch, h])
    b.op("LSTM", ins, [y], T.LSTMOptions(fused_activation_function=A.TANH))
    b.outputs = [y]
    data = b.finish()
    feeds = [{"x": f32(batch, n_in)} for _ in range(3)]
    p = load(data)
    for f, want in zip(feeds, _litert_calls(data, feeds)):
        assert np.max(np.abs(p.run(f)["y"] - want["y"])) <= 1e-5 * np.max(np.abs(want["y"]))


def _bidi(merge: bool, hybrid: bool) -> bytes:
    seq, batch, n_in, h = 4, 2, 3, 5
    b = TB(13)
    r = np.random.default_rng(13)
    x = b.input("x", [batch, seq, n_in])

    def w(name: str, *shape: int) -> int:
        v = (r.standard_normal(shape) * 0.5).astype(np.float32)
        if hybrid:
            wq, q = _int8_weights(v, None)
            return b.const(name, wq, q)
        return b.const(name, v)

    ins = [x]
    for d in ("fw", "bw"):
        ins += [w(f"{d}wi{g}", h, n_in) for g in "ifco"] + [w(f"{d}wr{g}", h, h) for g in "ifco"]
        ins += [-1, -1, -1]
        ins += [
            b.const(f"{d}b{g}", (r.standard_normal(h) * 0.1).astype(np.float32)) for g in "ifco"
        ]
        ins += [-1, -1]
    for name in ("fw_h", "fw_c", "bw_h", "bw_c"):
        t = b.tensor(name, [batch, h])
        b.tensors[t].is_variable = True
        ins.append(t)
    ins += [-1] * 9
    outs = [b.tensor("fw", [batch, seq, 2 * h if merge else h])]
    if not merge:
        outs.append(b.tensor("bw", [batch, seq, h]))
    b.op("BIDIRECTIONAL_SEQUENCE_LSTM", ins, outs,
         T.BidirectionalSequenceLSTMOptions(fused_activation_function=A.TANH, merge_outputs=merge,
                                            time_major=False))  # fmt: skip
    b.outputs = outs
    return b.finish()


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("hybrid", [False, True])
def test_bidirectional_sequence_lstm(merge: bool, hybrid: bool) -> None:
    """Forward and reversed-time LSTMs. LiteRT's float kernel with merge_outputs reads memory
    it never wrote (two interpreters disagree on the forward half), so merged outputs are
    compared with LiteRT's two separate outputs, concatenated."""
    feeds = [{"x": f32(2, 4, 3)} for _ in range(2)]
    want = _litert_calls(_bidi(False, hybrid), feeds)
    p = load(_bidi(merge, hybrid))
    for f, wv in zip(feeds, want):
        got = p.run(f)
        if merge:
            wv = {"fw": np.concatenate([wv["fw"], wv["bw"]], axis=-1)}
        for k, v in wv.items():
            assert np.max(np.abs(got[k] - v)) <= 1e-5 * np.max(np.abs(v)), k


@pytest.mark.parametrize("code", ["RNN", "UNIDIRECTIONAL_SEQUENCE_RNN"])
@pytest.mark.parametrize("hybrid,asym", [(False, False), (True, False), (True, True)])
def test_rnn_unrolled(code: str, hybrid: bool, asym: bool) -> None:
    """NNRt has no RNN operator; the recurrence unrolls exactly (and keeps its state)."""
    seq, batch, n_in, units = 4, 2, 3, 5
    b = TB(14)
    shape = [batch, n_in] if code == "RNN" else [batch, seq, n_in]
    x = b.input("x", shape)

    def w(name: str, *s: int) -> int:
        v = f32(*s, scale=0.5)
        if hybrid:
            wq, q = _int8_weights(v, None)
            return b.const(name, wq, q)
        return b.const(name, v)

    hs = b.tensor("h", [batch, units])
    b.tensors[hs].is_variable = True
    y = b.tensor("y", shape[:-1] + [units])
    ins = [x, w("w", units, n_in), w("r", units, units), b.const("b", f32(units, scale=0.1)), hs]
    if code == "RNN":
        opts: Any = T.RNNOptions(fused_activation_function=A.TANH, asymmetric_quantize_inputs=asym)
    else:
        opts = T.SequenceRNNOptions(time_major=False, fused_activation_function=A.TANH,
                                    asymmetric_quantize_inputs=asym)  # fmt: skip
    b.op(code, ins, [y], opts)
    b.outputs = [y]
    data = b.finish()
    feeds = [{"x": f32(*shape)} for _ in range(3)]
    p = load(data)
    for f, want in zip(feeds, _litert_calls(data, feeds)):
        assert np.max(np.abs(p.run(f)["y"] - want["y"])) <= 1e-5 * np.max(np.abs(want["y"]))


def _bidi_rnn(merge: bool, hybrid: bool) -> bytes:
    seq, batch, n_in, units = 4, 2, 3, 5
    b = TB(15)
    r = np.random.default_rng(15)
    x = b.input("x", [batch, seq, n_in])

    def w(name: str, *s: int) -> int:
        v = (r.standard_normal(s) * 0.5).astype(np.float32)
        if hybrid:
            wq, q = _int8_weights(v, None)
            return b.const(name, wq, q)
        return b.const(name, v)

    ins = [x]
    for d in ("fw", "bw"):
        h = b.tensor(d + "_h", [batch, units])
        b.tensors[h].is_variable = True
        ins += [w(d + "w", units, n_in), w(d + "r", units, units),
                b.const(d + "b", (r.standard_normal(units) * 0.1).astype(np.float32)), h]  # fmt: skip
    ins += [-1, -1, -1]
    outs = [b.tensor("fw", [batch, seq, 2 * units if merge else units])]
    if not merge:
        outs.append(b.tensor("bw", [batch, seq, units]))
    b.op("BIDIRECTIONAL_SEQUENCE_RNN", ins, outs,
         T.BidirectionalSequenceRNNOptions(time_major=False, fused_activation_function=A.TANH,
                                           merge_outputs=merge))  # fmt: skip
    b.outputs = outs
    return b.finish()


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("hybrid", [False, True])
def test_bidirectional_sequence_rnn(merge: bool, hybrid: bool) -> None:
    feeds = [{"x": f32(2, 4, 3)} for _ in range(2)]
    want = _litert_calls(_bidi_rnn(False, hybrid), feeds)
    p = load(_bidi_rnn(merge, hybrid))
    for f, wv in zip(feeds, want):
        got = p.run(f)
        if merge:
            wv = {"fw": np.concatenate([wv["fw"], wv["bw"]], axis=-1)}
        for k, v in wv.items():
            assert np.max(np.abs(got[k] - v)) <= 1e-5 * np.max(np.abs(v)), k


def _i8(*s: int) -> np.ndarray:
    return R.integers(-128, 128, s).astype(np.int8)


_QA, _QB, _QO = ([0.05], [3], 0), ([0.03], [-10], 0), ([0.04], [5], 0)
_QPOS = ([0.05], [-128], 0)


def _pos(*s: int) -> np.ndarray:
    return (np.abs(_i8(*s).astype(np.int16)) % 127 + 1).astype(np.int8)


@pytest.mark.parametrize(
    "code,ins,opts,oq",
    [("ADD", lambda: [In("a", _i8(2, 8), quant=_QA), In("b", _i8(2, 8), quant=_QB)], T.AddOptions(), _QO),
     ("SUB", lambda: [In("a", _i8(2, 8), quant=_QA), In("b", _i8(2, 8), quant=_QB)], T.SubOptions(), _QO),
     ("MUL", lambda: [In("a", _i8(2, 8), quant=_QA), In("b", _i8(2, 8), quant=_QB)], T.MulOptions(), _QO),
     ("DIV", lambda: [In("a", _i8(2, 8), quant=_QA), In("b", _pos(2, 8), quant=_QPOS)], T.DivOptions(), _QO),
     ("SQUARED_DIFFERENCE", lambda: [In("a", _i8(2, 8), quant=_QA), In("b", _i8(2, 8), quant=_QB)], None, _QO),
     ("MAXIMUM", lambda: [In("a", _i8(2, 8), quant=_QA), In("b", _i8(2, 8), quant=_QA)], None, _QA),
     ("RSQRT", lambda: [In("a", _pos(2, 8), quant=_QPOS)], None, _QO),
     ("SQRT", lambda: [In("a", _pos(2, 8), quant=_QPOS)], None, _QO),
     ("LOG", lambda: [In("a", _pos(2, 8), quant=_QPOS)], None, _QO),
     ("EXP", lambda: [In("a", _i8(2, 8), quant=([0.02], [0], 0))], None, _QO),
     ("LOGISTIC", lambda: [In("a", _i8(2, 8), quant=_QA)], None, ([1 / 256], [-128], 0)),
     ("TANH", lambda: [In("a", _i8(2, 8), quant=_QA)], None, ([1 / 128], [0], 0)),
     ("HARD_SWISH", lambda: [In("a", _i8(2, 8), quant=_QA)], None, _QO),
     ("GELU", lambda: [In("a", _i8(2, 8), quant=_QA)], T.GeluOptions(), _QO),
     ("LEAKY_RELU", lambda: [In("a", _i8(2, 8), quant=_QA)], T.LeakyReluOptions(alpha=0.2), _QO),
     ("SOFTMAX", lambda: [In("a", _i8(2, 8), quant=_QA)], T.SoftmaxOptions(beta=1.0), ([1 / 256], [-128], 0)),
     ("LOG_SOFTMAX", lambda: [In("a", _i8(2, 8), quant=_QA)], T.LogSoftmaxOptions(), ([16 / 256], [127], 0)),
     ("L2_NORMALIZATION", lambda: [In("a", _i8(2, 8), quant=_QA)], T.L2NormOptions(), ([1 / 128], [0], 0)),
     ("MEAN", lambda: [In("a", _i8(2, 4, 8), quant=_QA), In("x", i32(1), True)], T.ReducerOptions(), _QO),
     ("SUM", lambda: [In("a", _i8(2, 4, 8), quant=_QA), In("x", i32(1), True)], T.ReducerOptions(), _QO),
     ("BATCH_MATMUL", lambda: [In("a", _i8(2, 3, 8), quant=([0.05], [0], 0)),
                               In("b", _i8(2, 8, 4), quant=([0.03], [0], 0))], T.BatchMatMulOptions(), _QO),
     ("PRELU", lambda: [In("a", _i8(1, 3, 3, 4), quant=_QA),
                        In("s", _i8(1, 1, 4), True, quant=([0.01], [0], 0))], None, _QO),
     ("AVERAGE_POOL_2D", lambda: [In("a", _i8(1, 6, 6, 3), quant=_QA)],
      T.Pool2DOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2, filter_width=3, filter_height=3), _QA),
     ("RESIZE_BILINEAR", lambda: [In("a", _i8(1, 3, 4, 2), quant=_QA), In("s", i32(6, 7), True)],
      T.ResizeBilinearOptions(half_pixel_centers=True), _QA)],
)  # fmt: skip
def test_int8_operators_within_one_quantum(code: str, ins: Any, opts: Any, oq: Any) -> None:
    """Full-integer operators as the executor runs them (dequantise, float kernel, requantise)
    against LiteRT's integer kernels."""
    check(code, ins(), [np.int8], opts, out_quant=[oq])


@pytest.mark.parametrize("rank,bias", [(1, True), (2, False)])
def test_svdf_keeps_its_memory(rank: bool, bias: bool) -> None:
    """SVDF: no NNRt operator; composed exactly, its memory carried across runs."""
    batch, n_in, units, mem = 2, 3, 4, 5
    n_filters = units * rank
    b = TB(16)
    x = b.input("x", [batch, n_in])
    st = b.tensor("state", [batch, n_filters * mem])
    b.tensors[st].is_variable = True
    ins = [x, b.const("wf", f32(n_filters, n_in)), b.const("wt", f32(n_filters, mem)),
           b.const("b", f32(units)) if bias else -1, st]  # fmt: skip
    y = b.tensor("y", [batch, units])
    b.op("SVDF", ins, [y], T.SVDFOptions(rank=rank, fused_activation_function=A.RELU))
    b.outputs = [y]
    data = b.finish()
    feeds = [{"x": f32(batch, n_in)} for _ in range(mem + 2)]
    p = load(data)
    for f, want in zip(feeds, _litert_calls(data, feeds)):
        np.testing.assert_allclose(p.run(f)["y"], want["y"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pad", [T.Padding.SAME, T.Padding.VALID])
def test_mediapipe_convolution_transpose_bias(pad: Any) -> None:
    """MediaPipe's CUSTOM Convolution2DTransposeBias is TRANSPOSE_CONV with a bias: compared
    with LiteRT running that builtin (LiteRT has no kernel for the custom operator)."""
    import struct

    x, w, bias = f32(1, 4, 5, 3), f32(6, 3, 3, 3), f32(6)
    oh, ow = (8, 10) if pad == T.Padding.SAME else (9, 11)
    ref = TB()
    xi = ref.input("x", [1, 4, 5, 3])
    y = ref.tensor("y", [1, oh, ow, 6])
    ref.op("TRANSPOSE_CONV", [ref.const("os", i32(1, oh, ow, 6)), ref.const("w", w), xi, ref.const("b", bias)],
           [y], T.TransposeConvOptions(padding=pad, stride_w=2, stride_h=2))  # fmt: skip
    ref.outputs = [y]
    want = _litert(ref.finish(), {"x": x})["y"]
    b = TB()
    xi = b.input("x", [1, 4, 5, 3])
    y = b.tensor("y", [1, oh, ow, 6])
    raw = struct.pack("<iii", 1 if pad == T.Padding.SAME else 2, 2, 2)
    b.codes.append(-1)
    b.customs.append("Convolution2DTransposeBias")
    b.ops.append(T.Operator(opcode_index=0, inputs=[xi, b.const("w", w), b.const("b", bias)],
                            outputs=[y], custom_options=raw))  # fmt: skip
    b.outputs = [y]
    got = load(b.finish()).run({"x": x})["y"]
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))


@pytest.mark.parametrize("pad", [T.Padding.SAME, T.Padding.VALID])
def test_conv3d_and_dilate_on_the_host(pad: Any) -> None:
    opts = T.Conv3DOptions(padding=pad, stride_d=1, stride_h=2, stride_w=1, dilation_d_factor=1,
                           dilation_h_factor=1, dilation_w_factor=2, fused_activation_function=A.RELU)  # fmt: skip
    check("CONV_3D", [In("x", f32(1, 4, 6, 7, 3)), In("w", f32(2, 3, 2, 3, 4), True),
                      In("b", f32(4), True)], [np.float32], opts)  # fmt: skip
    check("DILATE", [In("x", f32(2, 3)), In("d", i32(2, 3), True), In("v", np.array(0.5, np.float32), True)],
          [np.float32])  # fmt: skip


@pytest.mark.parametrize("per_channel", [False, True])
def test_hybrid_transpose_conv(per_channel: bool) -> None:
    """Float input, int8 weights: LiteRT quantises each image asymmetrically (was 6e-3 off)."""
    b = TB(17)
    x = b.input("x", [2, 4, 5, 3])
    wq, q = _int8_weights(f32(6, 3, 3, 3), 0 if per_channel else None)
    y = b.tensor("y", [2, 8, 10, 6])
    b.op("TRANSPOSE_CONV", [b.const("os", i32(2, 8, 10, 6)), b.const("w", wq, q), x, b.const("b", f32(6))],
         [y], T.TransposeConvOptions(padding=T.Padding.SAME, stride_w=2, stride_h=2))  # fmt: skip
    b.outputs = [y]
    assert _hybrid_check(b.finish(), f32(2, 4, 5, 3)) <= 1e-6


@pytest.mark.parametrize("bd,ishape", [(1, [3, 4]), (1, [3, 2, 2]), (2, [3, 2, 5])])
def test_gather_with_batch_dims(bd: int, ishape: list[int]) -> None:
    params = f32(3, 2, 6, 4) if bd == 2 else f32(3, 6, 4)
    idx = R.integers(0, 6, ishape).astype(np.int32)
    check("GATHER", [In("p", params), In("i", idx)], [np.float32],
          T.GatherOptions(axis=bd, batch_dims=bd))  # fmt: skip


def _sparse(dense: np.ndarray, block: int, vec: str = "i32") -> tuple[np.ndarray, Any]:
    """``dense`` [rows, cols] in TFLite's sparse format: rows DENSE, column blocks SPARSE_CSR,
    each kept block DENSE (``block`` = 1: plain CSR); segments and indices as ``vec`` vectors
    (MediaPipe's sparse models use uint8 ones)."""
    rows, cols = dense.shape
    nb = cols // block
    segs, idxs, vals = [0], [], []
    for r in range(rows):
        for j in range(nb):
            blk = dense[r, j * block : (j + 1) * block]
            if np.any(blk):
                idxs.append(j)
                vals.extend(blk.tolist())
        segs.append(len(idxs))
    levels = [T.DimensionMetadata(format=T.DimensionType.DENSE, dense_size=rows),
              T.DimensionMetadata(format=T.DimensionType.SPARSE_CSR, dense_size=0,
                                  array_segments=_index_vector(vec, segs),
                                  array_indices=_index_vector(vec, idxs))]  # fmt: skip
    order, bmap = [0, 1], []
    if block > 1:
        levels.append(T.DimensionMetadata(format=T.DimensionType.DENSE, dense_size=block))
        order, bmap = [0, 1, 2], [1]
    sp = T.SparsityParameters(traversal_order=order, block_map=bmap, dim_metadata=levels)
    return np.array(vals, np.float32), sp


def _index_vector(vec: str, v: list[int]) -> Any:
    if vec == "u8":
        return T.Uint8Vector(values=bytes(v))
    if vec == "u16":
        return T.Uint16Vector(values=list(v))
    return T.Int32Vector(values=v)


@pytest.mark.parametrize("block,vec", [(1, "i32"), (4, "i32"), (1, "u8"), (4, "u16")])
def test_densify_of_sparse_weights_folds(block: int, vec: str) -> None:
    dense = f32(6, 8)
    dense[np.abs(dense) < 0.8] = 0.0
    dense[2] = 0.0  # an empty row
    vals, sp = _sparse(dense, block, vec)
    b = TB()
    x = b.input("x", [2, 8])
    sw = b.const("sw", vals)
    b.tensors[sw].shape = [6, 8]
    b.tensors[sw].sparsity = sp
    w = b.tensor("w", [6, 8])
    b.op("DENSIFY", [sw], [w])
    y = b.tensor("y", [2, 6])
    b.op("FULLY_CONNECTED", [x, w], [y], T.FullyConnectedOptions())
    b.outputs = [y]
    data = b.finish()
    xv = f32(2, 8)
    want = _litert(data, {"x": xv})["y"]
    p = load(data)
    assert [n.nodeType.name for n in p.model.nodes] == ["NODE_TYPE_FULL_CONNECTION"]
    np.testing.assert_allclose(p.run({"x": xv})["y"], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(want, xv @ dense.T, rtol=1e-5, atol=1e-6)


def test_call_and_stablehlo_control_flow_on_the_host() -> None:
    """CALL runs a subgraph; STABLEHLO_WHILE loops; STABLEHLO_CASE picks a branch (out of range:
    the last). LiteRT has no kernels for these: the expected values are computed here."""

    def unary(code: str) -> TB:
        t = TB()
        a = t.input("a", [3])
        o = t.tensor("o", [3])
        t.op(code, [a], [o])
        t.outputs = [o]
        return t

    b = TB()
    x, k = b.input("x", [3]), b.input("k", [], np.int32)
    neg = b.subgraph(unary("NEG"))
    y = b.tensor("y", [3])
    b.op("CALL", [x], [y], T.CallOptions(subgraph=neg))
    branches = [b.subgraph(unary(c)) for c in ("ABS", "EXP", "NEG")]
    z = b.tensor("z", [3])
    b.ops.append(T.Operator(opcode_index=0, inputs=[k, y], outputs=[z],
                            builtin_options_2=T.StablehloCaseOptions(branch_subgraph_indices=branches)))  # fmt: skip
    code = int(T.BuiltinOperator.STABLEHLO_CASE)
    b.codes.append(code)
    b.ops[-1].opcode_index = b.codes.index(code)
    cond, body = _counter_body(4)
    ci, bi = b.subgraph(cond), b.subgraph(body)
    wi, wx = b.tensor("wi", [], np.int32), b.tensor("wx", [2, 3])
    w_in = b.input("w", [2, 3])
    b.ops.append(T.Operator(opcode_index=0, inputs=[k, w_in], outputs=[wi, wx],
                            builtin_options_2=T.StablehloWhileOptions(cond_subgraph_index=ci, body_subgraph_index=bi)))  # fmt: skip
    code = int(T.BuiltinOperator.STABLEHLO_WHILE)
    b.codes.append(code)
    b.ops[-1].opcode_index = b.codes.index(code)
    b.outputs = [z, wx]
    p = load(b.finish())
    xv, wv = f32(3), f32(2, 3)
    for kv, f in ((0, np.abs), (1, np.exp), (7, np.negative)):
        got = p.run({"x": xv, "k": np.array(kv, np.int32), "w": wv})
        np.testing.assert_allclose(got["z"], f(-xv), rtol=1e-6)
        want = wv.copy()
        for _ in range(max(4 - kv, 0)):
            want = want * 2 + 1
        np.testing.assert_allclose(got["wx"], want, rtol=1e-6)


def _op2(b: TB, code: str, ins: list[int], outs: list[int], o2: Any) -> None:
    c = int(T.BuiltinOperator[code])
    if c not in b.codes:
        b.codes.append(c)
    b.ops.append(
        T.Operator(opcode_index=b.codes.index(c), inputs=ins, outputs=outs, builtin_options_2=o2)
    )


def test_stablehlo_structural_operators_against_numpy() -> None:
    """LiteRT has no kernels for these: NumPy states StableHLO's semantics."""
    x = f32(2, 3, 4)
    b = TB()
    xi, k0, k1 = b.input("x", [2, 3, 4]), b.input("k0", [], np.int32), b.input("k1", [], np.int32)
    outs: dict[str, int] = {}

    def out(name: str, shape: list[int], dt: Any = np.float32) -> int:
        outs[name] = b.tensor(name, shape, dt)
        return outs[name]

    _op2(b, "STABLEHLO_RESHAPE", [xi], [out("reshape", [4, 6])], None)
    _op2(b, "STABLEHLO_TRANSPOSE", [xi], [out("transpose", [4, 2, 3])],
         T.StablehloTransposeOptions(permutation=[2, 0, 1]))  # fmt: skip
    _op2(b, "STABLEHLO_CONCATENATE", [xi, xi], [out("concat", [2, 6, 4])],
         T.StablehloConcatenateOptions(dimension=1))  # fmt: skip
    _op2(b, "STABLEHLO_COMPARE", [xi, b.const("half", np.full((2, 3, 4), 0.5, np.float32))],
         [out("gt", [2, 3, 4], np.bool_)],
         T.StablehloCompareOptions(comparison_direction=T.StablehloComparisonDirection.STABLEHLO_COMPARISON_DIRECTION_GT))  # fmt: skip
    _op2(b, "STABLEHLO_SLICE", [xi], [out("slice", [1, 2, 2])],
         T.StablehloSliceOptions(start_indices=[1, 0, 1], limit_indices=[2, 3, 4], strides=[1, 2, 2]))  # fmt: skip
    _op2(b, "STABLEHLO_PAD", [xi, b.const("pv", np.array(-1.0, np.float32))], [out("pad", [3, 5, 4])],
         T.StablehloPadOptions(edge_padding_low=[1, 0, 0], edge_padding_high=[0, 2, 0],
                               interior_padding=[0, 0, 0]))  # fmt: skip
    _op2(b, "STABLEHLO_BROADCAST_IN_DIM", [b.input("v", [3])], [out("bcast", [2, 3, 4])],
         T.StablehloBroadcastInDimOptions(broadcast_dimensions=[1]))  # fmt: skip
    _op2(
        b,
        "STABLEHLO_IOTA",
        [],
        [out("iota", [2, 3], np.int32)],
        T.StablehloIotaOptions(iota_dimension=1),
    )
    _op2(b, "STABLEHLO_DYNAMIC_SLICE", [xi, k0, k1, b.const("k2", np.array(1, np.int32))],
         [out("dslice", [1, 2, 3])], T.StablehloDynamicSliceOptions(slice_sizes=[1, 2, 3]))  # fmt: skip
    b.outputs = list(outs.values())
    p = load(b.finish())
    v = f32(3)
    got = p.run({"x": x, "k0": np.array(5, np.int32), "k1": np.array(-2, np.int32), "v": v})
    np.testing.assert_array_equal(got["reshape"], x.reshape(4, 6))
    np.testing.assert_array_equal(got["transpose"], x.transpose(2, 0, 1))
    np.testing.assert_array_equal(got["concat"], np.concatenate([x, x], 1))
    np.testing.assert_array_equal(got["gt"], x > 0.5)
    np.testing.assert_array_equal(got["slice"], x[1:2, 0:3:2, 1:4:2])
    np.testing.assert_array_equal(
        got["pad"], np.pad(x, [(1, 0), (0, 2), (0, 0)], constant_values=-1.0)
    )
    np.testing.assert_array_equal(got["bcast"], np.broadcast_to(v.reshape(1, 3, 1), (2, 3, 4)))
    np.testing.assert_array_equal(got["iota"], np.broadcast_to(np.arange(3), (2, 3)))
    np.testing.assert_array_equal(got["dslice"], x[1:2, 0:2, 1:4])  # starts clamped to (1, 0, 1)


def test_stablehlo_composite_decomposition_is_lowered_in_place() -> None:
    """A composite (as ai-edge-torch emits) runs its decomposition subgraph: on NNRt, inline."""
    dec = TB()
    a = dec.input("a", [2, 3])
    sq, o = dec.tensor("sq", [2, 3]), dec.tensor("o", [2, 3])
    dec.op("MUL", [a, a], [sq], T.MulOptions())
    dec.op("ADD", [sq, dec.const("one", np.ones((2, 3), np.float32))], [o], T.AddOptions())
    dec.outputs = [o]
    b = TB()
    x = b.input("x", [2, 3])
    k = b.subgraph(dec)
    y = b.tensor("y", [2, 3])
    _op2(b, "STABLEHLO_COMPOSITE", [x], [y],
         T.StableHLOCompositeOptions(name="odml.square_plus_one", decomposition_subgraph_index=k))  # fmt: skip
    z = b.tensor("z", [2, 3])
    b.op("CALL", [y], [z], T.CallOptions(subgraph=k))
    b.outputs = [z]
    p = load(b.finish())
    xv = f32(2, 3)
    np.testing.assert_allclose(p.run({"x": xv})["z"], (xv * xv + 1) ** 2 + 1, rtol=1e-6)
    assert p.coverage()["host_nodes"] == 0 and len(p.model.nodes) == 4


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    h=st.integers(1, 5),
    w=st.integers(1, 5),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    same=st.booleans(),
    extra=st.integers(0, 1),
)
def test_transpose_conv_shapes(h: int, w: int, k: int, s: int, same: bool, extra: int) -> None:
    """Output sizes TFLite accepts for the input, kernel and stride (SAME: in * s; VALID:
    (in - 1) * s + k, plus up to stride - 1 extra rows/columns)."""
    if same:
        oh, ow = h * s, w * s
    else:
        oh, ow = (h - 1) * s + k + min(extra, s - 1), (w - 1) * s + k
    ins = [
        In("os", i32(1, oh, ow, 2), True),
        In("w", f32(2, k, k, 3), True),
        In("x", f32(1, h, w, 3)),
    ]
    opts = T.TransposeConvOptions(padding=T.Padding.SAME if same else T.Padding.VALID, stride_w=s,
                                  stride_h=s)  # fmt: skip
    check("TRANSPOSE_CONV", ins, [np.float32], opts)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_tile_mirror_pad_reverse_shapes(shape: list[int], data: Any) -> None:
    x = f32(*shape)
    mult = data.draw(st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))
    check("TILE", [In("x", x), In("m", i32(*mult), True)], [np.float32])
    pads = [[data.draw(st.integers(0, d - 1)), data.draw(st.integers(0, d - 1))] for d in shape]
    check("MIRROR_PAD", [In("x", x), In("p", np.array(pads, np.int32), True)], [np.float32],
          T.MirrorPadOptions(mode=T.MirrorPadMode.REFLECT))  # fmt: skip
    ax = data.draw(st.integers(0, len(shape) - 1))
    check("REVERSE_V2", [In("x", x), In("a", i32(ax), True)], [np.float32])


def test_rfft2d_then_squeeze_and_cast_stay_on_the_host() -> None:
    """BirdNET's STFT: RFFT2D, SQUEEZE of the complex spectrum, CAST to float32 (LiteRT keeps
    the real part); NNRt v2_1 has no complex DataType, so those run on the host too."""
    b = TB()
    x = b.input("x", [2, 1, 3, 16])
    z = b.tensor("z", [2, 1, 3, 9], np.complex64)
    b.op("RFFT2D", [x, b.const("n", i32(1, 16))], [z], T.Rfft2dOptions())
    zs = b.tensor("zs", [2, 3, 9], np.complex64)
    b.op("SQUEEZE", [z], [zs], T.SqueezeOptions(squeeze_dims=[1]))
    r = b.tensor("r", [2, 3, 9])
    b.op(
        "CAST",
        [zs],
        [r],
        T.CastOptions(in_data_type=T.TensorType.COMPLEX64, out_data_type=T.TensorType.FLOAT32),
    )
    y = b.tensor("y", [2, 3, 9])
    b.op("MUL", [r, r], [y], T.MulOptions())
    b.outputs = [y]
    data = b.finish()
    feeds = {"x": f32(2, 1, 3, 16)}
    want = next(iter(_litert(data, feeds).values()))
    p = load(data)
    got = next(iter(p.run(feeds).values()))
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))
    assert p.coverage()["host_ops"] == {"RFFT2D": 1, "SQUEEZE": 1, "CAST": 1}  # MUL on NNRt


def test_reshape_to_a_scalar_with_an_empty_shape_vector() -> None:
    """BirdNET: RESHAPE whose shape input is an int32 vector of length 0 (a buffer of no
    bytes) makes a scalar."""
    b = TB()
    x = b.input("x", [1, 1])
    s = b.tensor("s", [])
    b.op("RESHAPE", [x, b.const("shape", np.zeros((0,), np.int32))], [s], T.ReshapeOptions())
    y = b.tensor("y", [3])
    b.op("MUL", [s, b.const("k", np.float32([1.0, -2.0, 3.0]))], [y], T.MulOptions())
    b.outputs = [y]
    data = b.finish()
    feeds = {"x": f32(1, 1)}
    want = next(iter(_litert(data, feeds).values()))
    got = next(iter(load(data).run(feeds).values()))
    np.testing.assert_allclose(got, want, rtol=1e-6)
