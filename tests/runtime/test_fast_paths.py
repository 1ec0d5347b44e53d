"""The runtime's fast paths against the straightforward formulation: blocked GEMM vs ``@``, clamp
activations against ``np.clip``, the row-tiled depthwise convolution, in-place softmax and layer
norm against float64 formulas, scratch-buffer padding against ``np.pad``, separable max pooling
against a window max, and the executor's per-model plan cache vs a fresh model (mutations
between calls must be seen)."""

from __future__ import annotations

import copy
import gc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from idlgen.runtime import activations, conv, nnrt, norm
from idlgen.runtime.builder import ModelBuilder
from idlgen.runtime.errors import KernelError
from idlgen.runtime.nnrt import execute

from .test_executor import _codec, _package

f32 = np.float32
SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(
    m=st.integers(1, 3000),
    k=st.integers(1, 80),
    n=st.integers(1, 70),
    seed=st.integers(0, 2**32 - 1),
)
def test_gemm_matches_matmul(m: int, k: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(f32)
    b = rng.standard_normal((k, n)).astype(f32)
    got = conv.gemm(a, b)
    assert got.dtype == f32 and got.shape == (m, n)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_gemm_blocks_mid_sized_products() -> None:
    # Exercise the row-blocked branch for sure (and the unblocked ones on either side).
    rng = np.random.default_rng(1)
    for m, k, n in [(4096, 27, 32), (7, 3, 5), (64, 512, 1100)]:
        a = rng.standard_normal((m, k)).astype(f32)
        b = rng.standard_normal((k, n)).astype(f32)
        np.testing.assert_allclose(conv.gemm(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert conv._SERIAL_MNK < 4096 * 27 * 32 <= conv._THREADED_MNK


_floats = st.one_of(
    st.floats(width=32, allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 6.0, -1e-45, float("nan"), -float("nan")]),
)


@SETTINGS
@given(
    x=st.integers(0, 9000).flatmap(
        lambda n: hnp.arrays(np.dtype(f32), n, elements=_floats, fill=_floats)
    ),
    code=st.sampled_from([1, 3, 7]),
    dtype=st.sampled_from([f32, np.float16, np.float64]),
)
def test_clamp_activations_match_clip(x: np.ndarray, code: int, dtype: Any) -> None:
    x = x.astype(dtype)
    lo, hi = {1: (0, None), 3: (0, 6), 7: (0, 1)}[code]
    want = np.maximum(x, lo) if hi is None else np.clip(x, lo, hi)
    table = activations.apply_activation(x, code, op="t")
    inplace = activations.fused(x.copy(), code, "t", inplace=True)
    for got in (table, inplace):
        assert got.dtype == x.dtype
        # Bit-identical, signed zeros and NaN payload signs included.
        np.testing.assert_array_equal(got.view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
    np.testing.assert_array_equal(activations.apply_activation(x[::2], code, op="t"), want[::2])


@SETTINGS
@given(
    h=st.integers(1, 12),
    w=st.integers(1, 70),
    c=st.integers(1, 9),
    m=st.integers(1, 3),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    d=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    sh=st.integers(1, 2),
    sw=st.integers(1, 3),
    act=st.sampled_from([0, 1, 3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_depthwise_rows_match_direct_sum(
    h: int, w: int, c: int, m: int, k: tuple[int, int], d: tuple[int, int], sh: int, sw: int,
    act: int, seed: int,
) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, h, w, c)).astype(f32)
    wt = rng.standard_normal((c * m, *k, 1)).astype(f32)
    b = rng.standard_normal(c * m).astype(f32)
    (got,) = conv.conv2d([x, wt, b], stride=[sh, sw], dilation=list(d), pad_mode=1, group=c,
                         activation=act)  # fmt: skip
    # Direct: SAME pads, one tap at a time in float64.
    keh, kew = (k[0] - 1) * d[0] + 1, (k[1] - 1) * d[1] + 1
    oh, ow = -(-h // sh), -(-w // sw)
    th, tw = max((oh - 1) * sh + keh - h, 0), max((ow - 1) * sw + kew - w, 0)
    xp = np.zeros((2, h + th, w + tw, c))
    xp[:, th // 2 : th // 2 + h, tw // 2 : tw // 2 + w] = x
    xp = np.repeat(xp, m, axis=3)
    want = np.zeros((2, oh, ow, c * m)) + b
    for i in range(k[0]):
        for j in range(k[1]):
            tap = xp[:, i * d[0] :: sh][:, :oh, j * d[1] :: sw][:, :, :ow]
            want += tap * wt[:, i, j, 0]
    want = {0: want, 1: np.maximum(want, 0), 3: np.clip(want, 0, 6)}[act]
    assert got.shape == want.shape and got.dtype == f32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# Thresholds that force each depthwise formulation on small maps (tiny blocks: several blocks
# and a short last one per map): im2col product + sum, the flat tap loop over (phase) planes,
# and the row-block loop (stride 1; strided maps still take the flat loop there).
_DW_PATHS = {
    "im2col": {"_DW_SMALL": 1 << 40},
    "flat": {"_DW_SMALL": 0, "_DW_FLAT_MAX": 1 << 40, "_DW_FLAT_BLOCK": 50},
    "rows": {"_DW_SMALL": 0, "_DW_FLAT_MAX": 0, "_DW_BLOCK": 50},
}


@SETTINGS
@given(
    path=st.sampled_from(sorted(_DW_PATHS)),
    n=st.integers(1, 2),
    h=st.integers(1, 11),
    w=st.integers(1, 13),
    c=st.integers(1, 6),
    m=st.integers(1, 2),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    d=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    mode=st.sampled_from([0, 1, 2]),
    pads=st.lists(st.integers(0, 2), min_size=4, max_size=4),
    nchw=st.booleans(),
    has_bias=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_depthwise_paths_match_direct_sum(
    path: str, n: int, h: int, w: int, c: int, m: int, k: tuple[int, int], s: tuple[int, int],
    d: tuple[int, int], mode: int, pads: list[int], nchw: bool, has_bias: bool, seed: int,
) -> None:  # fmt: skip
    """Every depthwise formulation against a float64 sum over taps, for explicit (asymmetric),
    SAME and VALID padding, strides, dilations, channel multipliers, and inputs that are NHWC
    views of NCHW arrays (what an ONNX model's input transpose hands the kernel)."""
    from idlgen.runtime import window as W

    keh, kew = (k[0] - 1) * d[0] + 1, (k[1] - 1) * d[1] + 1
    try:
        oh, pt, _ = W.conv_geometry("t", h, k[0], s[0], d[0], mode, pads[0], pads[1])
        ow, pl, _ = W.conv_geometry("t", w, k[1], s[1], d[1], mode, pads[2], pads[3])
    except KernelError:
        return  # no output position: the kernel refuses it the same way
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, h, w, c)).astype(f32)
    if nchw:
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2)).transpose(0, 2, 3, 1)
    wt = rng.standard_normal((c * m, *k, 1)).astype(f32)
    b = rng.standard_normal(c * m).astype(f32)
    with pytest.MonkeyPatch.context() as mp:
        for name, value in _DW_PATHS[path].items():
            mp.setattr(conv, name, value)
        (got,) = conv.conv2d([x, wt] + ([b] if has_bias else []), stride=list(s),
                             dilation=list(d), pad_mode=mode, pad_list=pads, group=c)  # fmt: skip
    # Direct: the padded input (zeros around it), one tap at a time in float64.
    xp = np.zeros((n, max(h + pt, (oh - 1) * s[0] + keh), max(w + pl, (ow - 1) * s[1] + kew), c))
    xp[:, pt : pt + h, pl : pl + w] = x
    xp = np.repeat(xp, m, axis=3)
    want = np.zeros((n, oh, ow, c * m)) + (b if has_bias else 0)
    for i in range(k[0]):
        for j in range(k[1]):
            tap = xp[:, i * d[0] :: s[0]][:, :oh, j * d[1] :: s[1]][:, :, :ow]
            want += tap * wt[:, i, j, 0]
    assert got.shape == want.shape and got.dtype == f32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=40),
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1.0, 30.0]),
)
def test_softmax_and_layer_norm_match_float64(
    shape: tuple[int, ...], seed: int, scale: float
) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * scale).astype(f32)
    x64 = x.astype(np.float64)
    (got,) = norm.softmax([x], axis=[-1])
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert got.dtype == f32
    g = rng.standard_normal(shape[-1:]).astype(f32)
    bb = rng.standard_normal(shape[-1:]).astype(f32)
    y, mean, var = norm.layer_norm([x, g, bb], begin_norm_axis=-1, begin_params_axis=-1)
    mu = x64.mean(axis=-1, keepdims=True)
    v = ((x64 - mu) ** 2).mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(y, (x64 - mu) / np.sqrt(v + 1e-5) * g + bb, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-5 * scale)
    np.testing.assert_allclose(var, v, rtol=1e-4, atol=1e-6 * scale**2)
    assert y.dtype == f32 and not np.shares_memory(y, x)


def _model(P: Any, enc: Any, c: np.ndarray) -> tuple[Any, dict[int, bytes]]:
    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [2, 2])
    k = b.constant("c", c)
    y = b.node(P.AddFusion(), [x, k])
    b.output(b.node(P.MulFusion(), [y, k]))
    b.output(k)
    return b.build()


def _fresh(model: Any) -> Any:
    return copy.deepcopy(model)


def test_plan_cache_sees_model_mutations() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    c = np.array([[1, 2], [3, 4]], f32)
    model, buffers = _model(P, enc, c)
    x = np.arange(4, dtype=f32).reshape(2, 2)
    y, k = execute(model, [x], buffers=buffers, kernels=kernels)
    np.testing.assert_array_equal(y, (x + c) * c)
    # A constant returned as a model output is the caller's own writable array.
    assert k.flags.writeable
    k[...] = 0
    y2, k2 = execute(model, [x], buffers=buffers, kernels=kernels)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(k2, c)
    # Swap Add for Sub (node type + attribute bytes): the cached plan must not be reused.
    model.nodes[0].nodeType = P.NodeType.NODE_TYPE_SUB_FUSION
    model.nodes[0].nodeAttr = bytes(
        kernels.encode_node_attr(P.SubFusion()) if enc is None else enc(P.SubFusion())
    )
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0], (x - c) * c
    )
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0],
        execute(_fresh(model), [x], buffers=buffers, kernels=kernels)[0],
    )
    # Rewire an input index in place (same list object).
    model.nodes[1].inputIndex[1] = model.nodes[1].inputIndex[0]
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0], (x - c) * (x - c)
    )
    # Other buffer bytes for the same fd: new constant values.
    (fd,) = buffers
    other = {fd: np.full(4, 10, f32).tobytes()}
    model2, _ = _model(P, enc, c)
    np.testing.assert_array_equal(
        execute(model2, [x], buffers=other, kernels=kernels)[0], (x + 10) * 10
    )
    np.testing.assert_array_equal(
        execute(model2, [x], buffers=buffers, kernels=kernels)[0], (x + c) * c
    )


def test_mutable_buffers_are_reread_every_call() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    c = np.ones((2, 2), f32)
    model, buffers = _model(P, enc, c)
    (fd,) = buffers
    buf = bytearray(buffers[fd])
    x = np.zeros((2, 2), f32)
    np.testing.assert_array_equal(execute(model, [x], buffers={fd: buf}, kernels=kernels)[0], c)
    buf[:] = np.full(4, 3, f32).tobytes()
    np.testing.assert_array_equal(
        execute(model, [x], buffers={fd: buf}, kernels=kernels)[0], np.full((2, 2), 9, f32)
    )


def test_errors_still_raised_with_a_cached_plan() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _model(P, enc, np.ones((2, 2), f32))
    x = np.zeros((2, 2), f32)
    execute(model, [x], buffers=buffers, kernels=kernels)
    with pytest.raises(KernelError, match="not in buffers"):
        execute(model, [x], buffers={}, kernels=kernels)
    model.nodes[0].nodeAttr = b"\xff"
    if enc is None:
        with pytest.raises(KernelError, match="node 0 .*cannot decode nodeAttr"):
            execute(model, [x], buffers=buffers, kernels=kernels)
    model, buffers = _model(P, enc, np.ones((2, 2), f32))
    execute(model, [x], buffers=buffers, kernels=kernels)
    model.nodes[0].inputIndex = [0, 3]
    with pytest.raises(KernelError, match="cycle"):
        execute(model, [x], buffers=buffers, kernels=kernels)


def test_plans_are_dropped_with_their_model() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _model(P, enc, np.ones((2, 2), f32))
    execute(model, [np.zeros((2, 2), f32)], buffers=buffers, kernels=kernels)
    key = id(model)
    assert key in nnrt._PLANS
    del model
    gc.collect()
    assert key not in nnrt._PLANS


@SETTINGS
@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3)),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    value=st.sampled_from([0.0, -np.inf, 2.5]),
)
def test_scratch_padding_matches_np_pad(
    shape: tuple[int, int, int, int], pads: tuple[int, int, int, int], value: float
) -> None:
    from idlgen.runtime import window as W

    x = np.random.default_rng(0).standard_normal(shape).astype(f32)
    t, b, l, r = pads
    want = np.pad(x, [(0, 0), (t, b), (l, r), (0, 0)], constant_values=value)
    W.scratch("pad", (4096,), np.dtype(f32))[...] = np.nan  # stale contents must not leak
    np.testing.assert_array_equal(W.pad_hw(x, t, b, l, r, value, tmp=True), want)
    np.testing.assert_array_equal(W.pad_hw(x, t, b, l, r, value), want)


def test_kernel_outputs_never_alias_scratch_buffers() -> None:
    from idlgen.runtime import pool

    rng = np.random.default_rng(3)
    kw = dict(stride=[1, 1], dilation=[1, 1], pad_mode=1)
    x1, x2 = rng.standard_normal((2, 1, 9, 9, 4)).astype(f32)
    for w in (rng.standard_normal((5, 3, 3, 4)), rng.standard_normal((4, 3, 3, 1))):
        g = 1 if w.shape[0] == 5 else 4
        w = w.astype(f32)
        (y1,) = conv.conv2d([x1, w], group=g, **kw)
        keep = y1.copy()
        conv.conv2d([x2, w], group=g, **kw)
        np.testing.assert_array_equal(y1, keep)
    for fn in (pool.max_pool, pool.avg_pool):
        (p1,) = fn([x1], kernel_size=[3, 3], strides=[1, 1], pad=[1, 1, 1, 1])
        keep = p1.copy()
        fn([x2], kernel_size=[3, 3], strides=[1, 1], pad=[1, 1, 1, 1])
        np.testing.assert_array_equal(p1, keep)


@SETTINGS
@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 9), st.integers(1, 9), st.integers(1, 4)),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    pads=st.tuples(*[st.integers(0, 2)] * 4),
    ceil=st.booleans(),
    dtype=st.sampled_from([f32, np.int8, np.float64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_separable_max_pool_matches_window_max(
    shape: tuple[int, int, int, int], k: tuple[int, int], s: tuple[int, int],
    pads: tuple[int, int, int, int], ceil: bool, dtype: Any, seed: int,
) -> None:  # fmt: skip
    from idlgen.runtime import window as W
    from idlgen.runtime import pool

    t, b, l, r = pads
    if max(t, b) >= k[0] or max(l, r) >= k[1]:
        return  # a window entirely in the padding has no value to take
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    if dtype != np.int8:
        x.reshape(-1)[rng.integers(0, x.size)] = np.nan
    try:
        oh, pt, pb = W.pool_geometry("p", shape[1], k[0], s[0], 0, t, b, ceil)
        ow, pl, pr = W.pool_geometry("p", shape[2], k[1], s[1], 0, l, r, ceil)
    except KernelError:
        return
    (got,) = pool.max_pool([x], kernel_size=list(k), strides=list(s), pad=list(pads),
                           round_mode=int(ceil))  # fmt: skip
    low = -np.inf if dtype != np.int8 else -128
    xp = np.pad(x, [(0, 0), (pt, pb), (pl, pr), (0, 0)], constant_values=low)
    win = np.lib.stride_tricks.sliding_window_view(xp, k, axis=(1, 2))
    want = win[:, : (oh - 1) * s[0] + 1 : s[0], : (ow - 1) * s[1] + 1 : s[1]].max(axis=(-2, -1))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)


def test_cached_weight_transpose_tells_views_of_one_buffer_apart() -> None:
    """Read-only weights are transposed once and cached; two views of one constant buffer (a
    plan's Split or Reshape of one weight) must not share the entry."""
    from idlgen.runtime.conv import _transposed

    c = np.arange(8.0).reshape(4, 2)
    c.flags.writeable = False
    np.testing.assert_array_equal(_transposed(c[:2]), c[:2].T)
    np.testing.assert_array_equal(_transposed(c[2:]), c[2:].T)
