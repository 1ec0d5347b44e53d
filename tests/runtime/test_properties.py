"""Property tests: random shapes/attributes of the windowed kernels against onnxruntime (NCHW),
and StridedSlice against NumPy's own basic indexing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.runtime import conv, pool, resize, shape

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

f32 = np.float32
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(node: Any, x: np.ndarray, inits: dict[str, np.ndarray]) -> np.ndarray:
    graph = helper.make_graph(
        [node], "p", [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [helper.make_tensor_value_info("y", 1, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]  # type: ignore[no-any-return]


def _nchw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


@st.composite
def conv_case(draw: st.DrawFn) -> dict[str, Any]:
    g = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = draw(st.booleans())
    cg = 1 if depthwise else draw(st.integers(1, 3))
    c = cg * g
    og = draw(st.integers(1, 3))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    mode = draw(st.sampled_from([0, 1, 2]))
    pads = [draw(st.integers(0, 2)) for _ in range(4)]
    h = draw(st.integers((k[0] - 1) * d[0] + 1, 9))
    w = draw(st.integers((k[1] - 1) * d[1] + 1, 9))
    return dict(
        g=g,
        c=c,
        o=og * g,
        k=k,
        s=s,
        d=d,
        mode=mode,
        pads=pads,
        h=h,
        w=w,
        bias=draw(st.booleans()),
    )


@SETTINGS
@given(conv_case(), st.integers(0, 2**31))
def test_conv2d_vs_onnxruntime(p: dict[str, Any], seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, p["h"], p["w"], p["c"])).astype(f32)
    wt = rng.standard_normal((p["o"], *p["k"], p["c"] // p["g"])).astype(f32)
    b = rng.standard_normal(p["o"]).astype(f32)
    t, bo, l, r = p["pads"]
    ins = [x, wt] + ([b] if p["bias"] else [])
    (got,) = conv.conv2d(ins, stride=list(p["s"]), dilation=list(p["d"]), pad_mode=p["mode"], pad_list=p["pads"],
                         group=p["g"])  # fmt: skip
    onnx_kw: dict[str, Any] = dict(strides=list(p["s"]), dilations=list(p["d"]), group=p["g"])
    if p["mode"] == 0:
        onnx_kw["pads"] = [t, l, bo, r]
    elif p["mode"] == 1 and p["d"] != (1, 1):
        # onnxruntime has no dilated SAME_UPPER: give it the SAME_UPPER pads explicitly.
        tot = [max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
               for n, k, s, d in zip((p["h"], p["w"]), p["k"], p["s"], p["d"])]  # fmt: skip
        onnx_kw["pads"] = [
            tot[0] // 2,
            tot[1] // 2,
            tot[0] - tot[0] // 2,
            tot[1] - tot[1] // 2,
        ]
    else:
        onnx_kw["auto_pad"] = "SAME_UPPER" if p["mode"] == 1 else "VALID"
    inits = {"w": _nchw(wt)} | ({"b": b} if p["bias"] else {})
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if p["bias"] else []), ["y"], **onnx_kw)
    want = _run(node, _nchw(x), inits)
    np.testing.assert_allclose(_nchw(got), want, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.sampled_from([0, 1, 2]),
    st.lists(st.integers(0, 1), min_size=4, max_size=4), st.integers(1, 2), st.integers(0, 2**31),
)  # fmt: skip
def test_conv_transpose_vs_onnxruntime(
    kh: int, kw: int, sh: int, sw: int, mode: int, pads: list[int], g: int, seed: int
) -> None:
    if mode == 1 and (kh < sh or kw < sw):
        # MindSpore SAME deconv is in*stride even when the kernel is shorter than the stride;
        # onnxruntime then clamps the negative padding and returns a smaller output.
        sh, sw = min(sh, kh), min(sw, kw)
    rng = np.random.default_rng(seed)
    c, og = 2 * g, 2
    x = rng.standard_normal((1, 4, 5, c)).astype(f32)
    wt = rng.standard_normal((c, kh, kw, og)).astype(f32)  # [Cin, kH, kW, Cout/g]
    pads = [
        min(pads[0], kh - 1),
        min(pads[1], kh - 1),
        min(pads[2], kw - 1),
        min(pads[3], kw - 1),
    ]
    opad = [min(1, sh - 1), min(1, sw - 1)] if mode == 0 else [0, 0]
    (got,) = conv.conv2d_transpose([x, wt], stride=[sh, sw], dilation=[1, 1], pad_mode=mode, pad_list=pads, group=g,
                                   output_paddings=opad)  # fmt: skip
    kw_: dict[str, Any] = dict(strides=[sh, sw], group=g, output_padding=opad)
    if mode == 0:
        kw_["pads"] = [pads[0], pads[2], pads[1], pads[3]]
    else:
        kw_["auto_pad"] = "SAME_UPPER" if mode == 1 else "VALID"
    want = _run(
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], **kw_),
        _nchw(x),
        {"w": _nchw(wt)},
    )
    np.testing.assert_allclose(_nchw(got), want, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(
    st.sampled_from(["MaxPool", "AveragePool"]), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3),
    st.integers(1, 3), st.sampled_from([0, 1, 2]), st.lists(st.integers(0, 1), min_size=4, max_size=4),
    st.booleans(), st.integers(0, 2**31),
)  # fmt: skip
def test_pooling_vs_onnxruntime(op: str, kh: int, kw: int, sh: int, sw: int, mode: int, pads: list[int],
                                ceil: bool, seed: int) -> None:  # fmt: skip
    if mode == 1 and (kh < sh or kw < sw):
        # onnxruntime rejects the negative SAME padding of a window shorter than its stride
        # (NNRt clamps it to 0); stay where both are defined.
        sh, sw = min(sh, kh), min(sw, kw)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 7, 8, 3)).astype(f32)
    pads = [
        min(pads[0], kh - 1),
        min(pads[1], kh - 1),
        min(pads[2], kw - 1),
        min(pads[3], kw - 1),
    ]
    fn = pool.max_pool if op == "MaxPool" else pool.avg_pool
    (got,) = fn(
        [x],
        kernel_size=[kh, kw],
        strides=[sh, sw],
        pad=pads,
        pad_mode=mode,
        round_mode=int(ceil),
    )
    kw_: dict[str, Any] = dict(kernel_shape=[kh, kw], strides=[sh, sw], ceil_mode=int(ceil))
    if mode == 0:
        kw_["pads"] = [pads[0], pads[2], pads[1], pads[3]]
    else:
        kw_["auto_pad"] = "SAME_UPPER" if mode == 1 else "VALID"
    if op == "AveragePool":
        kw_["count_include_pad"] = 0
    want = _run(helper.make_node(op, ["x"], ["y"], **kw_), _nchw(x), {})
    np.testing.assert_allclose(_nchw(got), want, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(
    st.sampled_from([("linear", 0), ("nearest", 1), ("cubic", 2)]),
    st.sampled_from([("asymmetric", 0), ("align_corners", 1), ("half_pixel", 2)]),
    st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**31),
)  # fmt: skip
def test_resize_sizes_vs_onnxruntime(
    m: tuple[str, int], ctm: tuple[str, int], oh: int, ow: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 4, 5, 2)).astype(f32)
    (got,) = resize.resize([x], method=m[1], new_height=oh, new_width=ow, coordinate_transform_mode=ctm[1],
                           cubic_coeff=-0.75, nearest_mode=3)  # fmt: skip
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=m[0],
                            coordinate_transformation_mode=ctm[0], nearest_mode="floor")  # fmt: skip
    want = _run(node, _nchw(x), {"sizes": np.array([1, 2, oh, ow], np.int64)})
    np.testing.assert_allclose(_nchw(got), want, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(st.data())
def test_strided_slice_matches_numpy_indexing(data: st.DataObject) -> None:
    x = np.arange(4 * 5 * 6).reshape(4, 5, 6)
    n = data.draw(st.integers(1, 3))
    begin, end, strides, idx = [], [], [], []
    bm = em = sm = 0
    for i in range(n):
        size = x.shape[i]
        s = data.draw(st.sampled_from([1, 2, -1, -2]))
        b = data.draw(st.integers(-size - 2, size + 2))
        e = data.draw(st.integers(-size - 2, size + 2))
        kind = data.draw(st.sampled_from(["slice", "begin_mask", "end_mask", "shrink"]))
        if kind == "shrink":
            b = data.draw(st.integers(-size, size - 1))
            sm |= 1 << i
            idx.append(b)
            s = 1
        elif kind == "begin_mask":
            bm |= 1 << i
            idx.append(slice(None, e, s))
        elif kind == "end_mask":
            em |= 1 << i
            idx.append(slice(b, None, s))
        else:
            idx.append(slice(b, e, s))
        begin.append(b)
        end.append(e)
        strides.append(s)
    (got,) = shape.strided_slice([x, np.array(begin), np.array(end), np.array(strides)], begin_mask=bm, end_mask=em,
                                 shrink_axis_mask=sm)  # fmt: skip
    np.testing.assert_array_equal(got, x[tuple(idx)])
