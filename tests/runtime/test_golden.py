"""Hand-made golden cases for NNRt semantics ONNX does not cover. Each case names its source;
expected values are worked out by hand from that source's definition (or are the worked examples
of its documentation)."""

from __future__ import annotations

import numpy as np
import pytest

from idlgen.runtime import (
    activations, conv, detection, elementwise as E, gather, misc, norm, pool, quant, recurrent,
    reduce, shape as S,
)  # fmt: skip
from idlgen.runtime.errors import KernelError

f32 = np.float32


# --- BatchToSpaceND / SpaceToBatchND: TensorFlow docs of batch_to_space_nd / space_to_batch_nd --


def test_batch_to_space_nd_tf_example() -> None:
    # TF doc example 3: input [4, 2, 2, 1] of 1..16, block [2, 2], no crops -> [1, 4, 4, 1].
    x = np.array([[[[1], [3]], [[9], [11]]], [[[2], [4]], [[10], [12]]],
                  [[[5], [7]], [[13], [15]]], [[[6], [8]], [[14], [16]]]], f32)  # fmt: skip
    (y,) = S.batch_to_space_nd([x], block_shape=[2, 2], crops=[[0, 0], [0, 0]])
    assert y.shape == (1, 4, 4, 1)
    np.testing.assert_array_equal(y.reshape(4, 4), np.arange(1, 17).reshape(4, 4))


def test_space_to_batch_nd_inverts_and_pads() -> None:
    # TF doc example 1: [1, 2, 2, 1] = [[1, 2], [3, 4]], block [2, 2] -> [4, 1, 1, 1] = 1, 2, 3, 4.
    x = np.array([[[[1], [2]], [[3], [4]]]], f32)
    (y,) = S.space_to_batch_nd([x], block_shape=[2, 2], paddings=[[0, 0], [0, 0]])
    np.testing.assert_array_equal(y.reshape(-1), [1, 2, 3, 4])
    # Padding then cropping by the same amounts is the identity.
    z = np.arange(2 * 3 * 5 * 2, dtype=f32).reshape(2, 3, 5, 2)
    (s,) = S.space_to_batch_nd([z], block_shape=[2, 3], paddings=[[1, 0], [0, 1]])
    assert s.shape == (12, 2, 2, 2)
    (back,) = S.batch_to_space_nd([s], block_shape=[2, 3], crops=[[1, 0], [0, 1]])
    np.testing.assert_array_equal(back, z)


# --- StridedSlice masks: TF strided_slice documentation examples ------------------------------

T = np.array([[[1, 1, 1], [2, 2, 2]], [[3, 3, 3], [4, 4, 4]], [[5, 5, 5], [6, 6, 6]]], np.int32)


def _ss(begin, end, strides, **masks):  # type: ignore[no-untyped-def]
    m = {
        k: masks.get(k, 0)
        for k in (
            "begin_mask",
            "end_mask",
            "ellipsis_mask",
            "new_axis_mask",
            "shrink_axis_mask",
        )
    }
    return S.strided_slice([T, np.array(begin), np.array(end), np.array(strides)], **m)[0]


def test_strided_slice_tf_doc_examples() -> None:
    np.testing.assert_array_equal(_ss([1, 0, 0], [2, 1, 3], [1, 1, 1]), [[[3, 3, 3]]])
    np.testing.assert_array_equal(_ss([1, 0, 0], [2, 2, 3], [1, 1, 1]), [[[3, 3, 3], [4, 4, 4]]])
    np.testing.assert_array_equal(_ss([1, -1, 0], [2, -3, 3], [1, -1, 1]), [[[4, 4, 4], [3, 3, 3]]])


def test_strided_slice_masks() -> None:
    # begin_mask/end_mask bit i: ignore begin[i]/end[i] (full range in the stride's direction).
    np.testing.assert_array_equal(
        _ss([2, 0, 0], [0, 0, 0], [1, 1, 1], begin_mask=0b001, end_mask=0b111), T
    )
    np.testing.assert_array_equal(
        _ss([2, 1, 0], [2, 0, 0], [1, 1, 1], begin_mask=0b001, end_mask=0b110),
        T[:2, 1:],
    )
    np.testing.assert_array_equal(
        _ss([0, 0, 0], [0, 0, 0], [-1, 1, 1], begin_mask=1, end_mask=7), T[::-1]
    )
    # shrink_axis_mask: take one index and drop the dim.
    np.testing.assert_array_equal(
        _ss([1, 0, 2], [2, 2, 3], [1, 1, 1], shrink_axis_mask=0b101), T[1, :, 2]
    )
    # ellipsis_mask: the ellipsis spans the dims the other entries leave.
    np.testing.assert_array_equal(_ss([0, 1], [0, 2], [1, 1], ellipsis_mask=0b01), T[..., 1:2])
    # new_axis_mask: insert a size-1 dim.
    np.testing.assert_array_equal(_ss([0, 0], [0, 2], [1, 1], new_axis_mask=0b01), T[None, 0:2])
    with pytest.raises(KernelError, match="StridedSlice"):
        _ss([5, 0, 0], [6, 1, 1], [1, 1, 1], shrink_axis_mask=1)


# --- Crop: Caffe Crop layer definition (crop_param axis/offset) ---------------------------------


def test_crop_caffe_semantics() -> None:
    x = np.arange(2 * 5 * 6 * 3, dtype=f32).reshape(2, 5, 6, 3)
    ref = np.zeros((2, 3, 2, 3), f32)
    (y,) = S.crop([x, ref], axis=1, offset=[1, 2, 0])
    np.testing.assert_array_equal(y, x[:, 1:4, 2:4, 0:3])
    (z,) = S.crop([x, np.zeros((2, 3, 2, 1), f32)], axis=1, offset=[1])  # one offset for every dim
    np.testing.assert_array_equal(z, x[:, 1:4, 1:3, 1:2])


# --- SparseToDense: TF sparse_to_dense definition -----------------------------------------------


def test_sparse_to_dense() -> None:
    idx = np.array([[0, 1], [2, 3]], np.int32)
    (y,) = gather.sparse_to_dense(
        [
            idx,
            np.array([5.0, 7.0], f32),
            np.array([3, 4], np.int32),
            np.array([-1.0], f32),
        ]
    )
    want = np.full((3, 4), -1.0, f32)
    want[0, 1], want[2, 3] = 5.0, 7.0
    np.testing.assert_array_equal(y, want)


# --- Select with a rank-1 condition: TF v1 Select documentation ---------------------------------


def test_select_rank1_condition_picks_rows() -> None:
    a = np.arange(6, dtype=f32).reshape(3, 2)
    b = -a
    (y,) = E.select([np.array([True, False, True]), a, b])
    np.testing.assert_array_equal(y, [[0, 1], [-2, -3], [4, 5]])


# --- SYMMETRIC / REFLECT padding: TFLite mirror_pad (SYMMETRIC repeats the edge) ---------------


def test_pad_symmetric_and_reflect() -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    (s,) = S.pad([x], paddings=[[1, 1], [2, 2]], padding_mode=2)
    np.testing.assert_array_equal(
        s[1], [2, 1, 1, 2, 3, 3, 2]
    )  # TF MirrorPad SYMMETRIC doc example row
    (r,) = S.pad([x], paddings=[[1, 1], [2, 2]], padding_mode=1)
    np.testing.assert_array_equal(r[1], [3, 2, 1, 2, 3, 2, 1])
    with pytest.raises(KernelError, match="PadFusion"):
        S.pad([x], paddings=[[0, 0], [3, 0]], padding_mode=1)


# --- Activations ONNX lacks: nnacl activation_fp32.c formulas ------------------------------------


X = np.array([-4.0, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0], f32)


def _act(code: int, **kw: float) -> np.ndarray:
    return activations.activation([X], activation_type=code, **kw)[0]  # type: ignore[arg-type]


def test_nnrt_only_activations() -> None:
    np.testing.assert_array_equal(_act(7), [0, 0, 0, 0, 0.5, 1, 1])  # RELU1
    np.testing.assert_array_equal(_act(3), [0, 0, 0, 0, 0.5, 2, 6])  # RELU6
    np.testing.assert_array_equal(
        _act(16, min_val=-0.5, max_val=1.5), [-0.5, -0.5, -0.25, 0, 0.5, 1.5, 1.5]
    )
    np.testing.assert_allclose(
        _act(13), [0, 1 / 3, 2.75 / 6, 0.5, 3.5 / 6, 5 / 6, 1]
    )  # HSIGMOID relu6(x+3)/6
    np.testing.assert_array_equal(
        _act(14, alpha=0.5), [0, 0, 0, 0, 0, 2, 7]
    )  # THRESHOLDRELU: x > alpha
    np.testing.assert_array_equal(_act(15), X)  # LINEAR
    np.testing.assert_array_equal(_act(6), np.abs(X))
    with pytest.raises(KernelError, match="HARD_TANH"):
        _act(16, min_val=1.0, max_val=1.0)


@pytest.mark.parametrize("code", [20, 21, 255])
def test_unknown_activation_is_an_error_naming_the_op(code: int) -> None:
    with pytest.raises(KernelError, match="AddFusion.*not supported"):
        E.add([X, X], activation=code)
    with pytest.raises(KernelError, match="Activation"):
        _act(code)


def test_fused_activation_runs_after_the_op() -> None:
    (y,) = E.sub([X, np.float32(1.0)], activation=3)  # RELU6(x - 1)
    np.testing.assert_array_equal(y, np.clip(X - 1, 0, 6))
    with pytest.raises(KernelError, match="fused activation LEAKY_RELU"):
        E.mul([X, X], activation=5)


# --- Composite-only NNRt operators: definitions from the IDL / nnacl ---------------------------


def test_full_connection_use_axis() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5)).astype(f32)
    w = rng.standard_normal((6, 20)).astype(f32)
    b = rng.standard_normal(6).astype(f32)
    (y,) = conv.full_connection([x, w, b], has_bias=True, use_axis=True, axis=2, activation=1)
    want = np.maximum(x.reshape(2, 3, 20) @ w.T + b, 0)
    np.testing.assert_allclose(y, want, rtol=1e-5)
    (z,) = conv.full_connection([x, w[:, :5]], use_axis=False)
    assert z.shape == (24, 6)


def test_scale_fusion_axis_alignment() -> None:
    x = np.ones((2, 3, 4), f32)
    (y,) = E.scale([x, np.array([1, 2, 3], f32), np.array([0, 0, 1], f32)], axis=1)
    np.testing.assert_array_equal(y[0, :, 0], [1, 2, 4])
    with pytest.raises(KernelError, match="ScaleFusion"):
        E.scale([x, np.ones(5, f32)], axis=1)


def test_eltwise_exp_pow() -> None:
    a, b = np.array([1.0, -2.0], f32), np.array([3.0, 4.0], f32)
    np.testing.assert_array_equal(E.eltwise([a, b, a], mode=0)[0], [3, 16])
    np.testing.assert_array_equal(E.eltwise([a, b], mode=2)[0], [3, 4])
    with pytest.raises(KernelError, match="Eltwise"):
        E.eltwise([a, b], mode=3)
    np.testing.assert_allclose(E.exp([a], base=2.0, scale=2.0, shift=1.0)[0], 2.0 ** (1 + 2 * a))
    np.testing.assert_allclose(
        E.power([a, np.array(2.0, f32)], scale=3.0, shift=1.0)[0], (3 * a + 1) ** 2
    )


def test_l2_normalize_multi_axis_and_epsilon() -> None:
    x = np.array([[[3.0, 0.0], [0.0, 4.0]]], f32)
    (y,) = norm.l2_normalize([x], axis=[1, 2], epsilon=1e-12)
    np.testing.assert_allclose(y, x / 5.0)
    (z,) = norm.l2_normalize([np.zeros((2, 2), f32)], axis=[1], epsilon=0.0)
    np.testing.assert_array_equal(z, 0)
    (w,) = norm.l2_normalize([np.array([[0.1, 0.0]], f32)], axis=[1], epsilon=1.0)
    np.testing.assert_allclose(w, [[0.1, 0.0]])  # sqrt(max(0.01, 1)) = 1


def test_layer_norm_params_axis_differs() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(f32)
    g = rng.standard_normal((3, 4)).astype(f32)
    y, _, _ = norm.layer_norm(
        [x, g, np.zeros((3, 4), f32)],
        begin_norm_axis=2,
        epsilon=1e-5,
        begin_params_axis=1,
    )
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x - m) / np.sqrt(v + 1e-5) * g, rtol=1e-4, atol=1e-5)


def test_argmax_topk_and_values() -> None:
    x = np.array([[1, 9, 3, 9], [7, 2, 8, 0]], f32)
    np.testing.assert_array_equal(reduce.argmax([x], axis=1)[0], [1, 2])
    np.testing.assert_array_equal(reduce.argmax([x], axis=1, out_max_value=True)[0], [9, 8])
    np.testing.assert_array_equal(
        reduce.argmax([x], axis=1, top_k=2, keep_dims=True)[0], [[1, 3], [2, 0]]
    )


def test_reduce_to_end_with_coeff_and_modes() -> None:
    x = np.arange(24, dtype=f32).reshape(2, 3, 4)
    (y,) = reduce.reduce([x, np.array([1], np.int32)], mode=4, reduce_to_end=True, coeff=0.5)
    np.testing.assert_allclose(y, x.sum(axis=(1, 2)) * 0.5)
    (a,) = reduce.reduce([x - 10, np.array([2], np.int32)], mode=6, keep_dims=True)
    np.testing.assert_allclose(a, np.abs(x - 10).sum(2, keepdims=True))
    (b,) = reduce.reduce([x > 0, np.array([], np.int32)], mode=7)
    assert b.dtype == np.bool_ and not b
    (c,) = reduce.all_([x > -1, np.array([0], np.int32)], keep_dims=1)
    assert c.shape == (1, 3, 4) and c.all()


def test_tile_with_dims_stack_unstack_rank_fill_range() -> None:
    x = np.arange(6, dtype=f32).reshape(2, 3)
    np.testing.assert_array_equal(S.tile([x, np.array([3])], dims=[1])[0], np.tile(x, (1, 3)))
    parts = S.unstack([x], axis=1)
    assert len(parts) == 3 and parts[0].shape == (2,)
    np.testing.assert_array_equal(S.stack(parts, axis=1)[0], x)
    assert S.rank([x])[0] == 2 and S.rank([x])[0].dtype == np.int32
    np.testing.assert_array_equal(
        S.fill([np.array(7, np.int32), np.array([2, 2])])[0], [[7, 7], [7, 7]]
    )
    np.testing.assert_array_equal(
        S.range_([], data_type=34, start=1, limit=10, delta=3)[0], [1, 4, 7]
    )
    assert S.constant_of_shape([np.array([2])], data_type=32, value=[3.0])[0].dtype == np.int8


def test_assert_and_where() -> None:
    assert misc.assert_([np.array([True, True])])[0].all()
    with pytest.raises(KernelError, match="Assert: condition is false"):
        misc.assert_([np.array([True, False]), np.arange(10)], summarize=2)
    np.testing.assert_array_equal(E.where([np.array([[1, 0], [0, 1]])])[0], [[0, 0], [1, 1]])


def test_scatter_nd_accumulates_duplicates() -> None:
    # MindSpore ScatterNd documentation: updates at repeated indices are summed.
    (y,) = gather.scatter_nd(
        [np.array([[1], [1], [3]]), np.array([1.0, 2.0, 5.0], f32), np.array([5])]
    )
    np.testing.assert_array_equal(y, [0, 3, 0, 5, 0])


# --- Pooling / convolution specifics (nnacl pooling_fp32.c, conv2d_infer.c) --------------------


def test_avg_pool_excludes_padding_and_same_pads_bottom_right() -> None:
    x = np.ones((1, 3, 3, 1), f32)
    (y,) = pool.avg_pool([x], kernel_size=[2, 2], strides=[2, 2], pad_mode=1)
    assert y.shape == (1, 2, 2, 1)
    np.testing.assert_array_equal(y, 1.0)  # padded cells never lower the mean
    x = np.arange(9, dtype=f32).reshape(1, 3, 3, 1)
    (m,) = pool.max_pool([x - 100], kernel_size=[2, 2], strides=[2, 2], pad_mode=1)
    # SAME with in=3, k=2, s=2: out=2, total pad 1, all of it bottom/right.
    np.testing.assert_array_equal(m.reshape(2, 2), [[4 - 100, 5 - 100], [7 - 100, 8 - 100]])


def test_depthwise_conv_with_multiplier_matches_grouped_definition() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 5, 5, 2)).astype(f32)
    w = rng.standard_normal((4, 3, 3, 1)).astype(f32)  # multiplier 2
    (y,) = conv.conv2d([x, w], stride=[1, 1], dilation=[1, 1], pad_mode=2, group=2)
    want = np.zeros((1, 3, 3, 4), f32)
    for o in range(4):
        for i in range(3):
            for j in range(3):
                want[0, i, j, o] = (x[0, i : i + 3, j : j + 3, o // 2] * w[o, :, :, 0]).sum()
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)


# --- LSTM: MindSpore nn.LSTM definition (gates i, f, g, o; projection) ------------------------


def _lstm_ref(x, wih, whh, b, h, c, proj=None):  # type: ignore[no-untyped-def]
    def sig(v):  # type: ignore[no-untyped-def]
        return 1 / (1 + np.exp(-v))

    hs = []
    n = wih.shape[0] // 4
    for t in range(x.shape[0]):
        g = x[t] @ wih.T + h @ whh.T + b
        i, f, gg, o = (
            sig(g[:, :n]),
            sig(g[:, n : 2 * n]),
            np.tanh(g[:, 2 * n : 3 * n]),
            sig(g[:, 3 * n :]),
        )
        c = f * c + i * gg
        h = o * np.tanh(c)
        if proj is not None:
            h = h @ proj.T
        hs.append(h)
    return np.stack(hs), h, c


def test_lstm_two_layers_bidirectional_with_projection() -> None:
    rng = np.random.default_rng(3)
    seq, batch, inp, hid, proj = 4, 2, 6, 5, 3
    dirs, layers = 2, 2
    x = rng.standard_normal((seq, batch, inp)).astype(np.float64)
    # Layer 1 input = dirs*proj = 6 = inp, so one stacked weightIh fits every layer.
    wih = rng.standard_normal((dirs * layers, 4 * hid, inp)) * 0.3
    whh = rng.standard_normal((dirs * layers, 4 * hid, proj)) * 0.3
    b = rng.standard_normal((dirs * layers, 8 * hid)) * 0.1
    h0 = rng.standard_normal((dirs * layers, batch, proj)) * 0.1
    c0 = rng.standard_normal((dirs * layers, batch, hid)) * 0.1
    pw = rng.standard_normal((dirs * layers, proj, hid)) * 0.3
    y, hn, cn = recurrent.lstm([x, wih, whh, b, h0, c0, pw], bidirectional=True, num_layers=2,
                               num_directions=2, hidden_size=hid, proj_size=proj)  # fmt: skip
    layer_in = x
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            xs = layer_in[::-1] if d else layer_in
            ys, h, c = _lstm_ref(
                xs,
                wih[k],
                whh[k],
                b[k, : 4 * hid] + b[k, 4 * hid :],
                h0[k],
                c0[k],
                pw[k],
            )
            outs.append(ys[::-1] if d else ys)
            np.testing.assert_allclose(hn[k], h, rtol=1e-10)
            np.testing.assert_allclose(cn[k], c, rtol=1e-10)
        layer_in = np.concatenate(outs, axis=2)
    np.testing.assert_allclose(y, layer_in, rtol=1e-10)
    assert y.shape == (seq, batch, dirs * proj)


# --- DetectionPostProcess: TFLite detection_postprocess.cc semantics -----------------------------


def _dpp_inputs():  # type: ignore[no-untyped-def]
    # Zero encodings decode to the anchors themselves: [ymin, xmin, ymax, xmax] = yc-h/2, ...
    anchors = np.array([[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0], [5.0, 5.0, 1.0, 1.0]], f32)
    enc = np.zeros((1, 3, 4), f32)
    # Columns: background, class 0, class 1.
    scores = np.array([[[0.0, 0.9, 0.1], [0.0, 0.8, 0.2], [0.0, 0.1, 0.7]]], f32)
    return [enc, scores, anchors]


def test_detection_fast_nms() -> None:
    boxes, classes, scores, num = detection.detection_post_process(
        _dpp_inputs(), scale=[10, 10, 5, 5], nms_iou_threshold=0.5, nms_score_threshold=0.3,
        max_detections=3, max_classes_per_detection=1, num_classes=2, use_regular_nms=False,
    )  # fmt: skip
    # Anchor 1 overlaps anchor 0 with IoU 0.9/1.1 > 0.5 and loses to its higher score.
    assert num.tolist() == [2.0]
    np.testing.assert_allclose(boxes[0, :2], [[0, 0, 1, 1], [4.5, 4.5, 5.5, 5.5]])
    np.testing.assert_array_equal(classes[0], [0, 1, 0])
    np.testing.assert_allclose(scores[0], [0.9, 0.7, 0.0])


def test_detection_regular_nms() -> None:
    boxes, classes, scores, num = detection.detection_post_process(
        _dpp_inputs(), scale=[10, 10, 5, 5], nms_iou_threshold=0.5, nms_score_threshold=0.15,
        max_detections=3, detections_per_class=2, max_classes_per_detection=1, num_classes=2,
        use_regular_nms=True,
    )  # fmt: skip
    # Per class: class 0 keeps anchor 0 (anchor 1 suppressed); class 1 keeps anchor 2 and anchor 1.
    assert num.tolist() == [3.0]
    np.testing.assert_allclose(scores[0], [0.9, 0.7, 0.2])
    np.testing.assert_array_equal(classes[0], [0, 1, 1])
    np.testing.assert_allclose(boxes[0, 2], [0.0, 0.1, 1.0, 1.1], atol=1e-6)


# --- Quantisation: IDL QuantParam formula, nnacl rounding ---------------------------------------


def test_quant_dtype_cast_round_trip_and_rounding() -> None:
    qp = quant.QuantParams(np.array([0.5]), np.array([3]))
    x = np.array([-70.0, -1.25, 0.25, 1.0, 70.0], f32)
    (q,) = quant.quant_dtype_cast([x], src_t=43, dst_t=32, quant_params=qp)
    # -1.25/0.5 + 3 = 0.5 -> 1 (half away from zero, C round()); 0.25/0.5+3 = 3.5 -> 4; clamped ends.
    np.testing.assert_array_equal(q, [-128, 1, 4, 5, 127])
    (r,) = quant.quant_dtype_cast([q], src_t=32, dst_t=43, quant_params=qp)
    np.testing.assert_allclose(r, (q.astype(f32) - 3) * 0.5)
    pc = quant.QuantParams(np.array([1.0, 0.1]), np.array([0, 0]))
    (qc,) = quant.quant_dtype_cast_v2(
        [np.array([[1.0, 1.0], [2.0, 2.0]], f32)],
        src_t=43,
        dst_t=32,
        axis=1,
        quant_params=pc,
    )
    np.testing.assert_array_equal(qc, [[1, 10], [2, 20]])
    with pytest.raises(KernelError, match="QuantDTypeCast"):
        quant.quant_dtype_cast([x], src_t=43, dst_t=32)


# --- Operators with no ONNX case at all, through the binding table (IDL definitions) -----------


def test_simple_nnrt_only_ops_through_bindings() -> None:
    from types import SimpleNamespace

    from idlgen.runtime import bindings

    a = np.array([[1.0, 4.0], [9.0, 16.0]], f32)
    b = np.array([2.0, 8.0], f32)
    none = SimpleNamespace()
    np.testing.assert_array_equal(bindings.call("BiasAdd", none, [a, b])[0], a + b)
    np.testing.assert_allclose(bindings.call("Rsqrt", none, [a])[0], 1 / np.sqrt(a))
    np.testing.assert_array_equal(bindings.call("Square", none, [b])[0], [4, 64])
    np.testing.assert_array_equal(bindings.call("SquaredDifference", none, [a, b])[0], (a - b) ** 2)
    np.testing.assert_array_equal(bindings.call("NotEqual", none, [a, np.float32(4)])[0], a != 4)
    np.testing.assert_array_equal(bindings.call("RealDiv", none, [a, b])[0], a / b)
    assert bindings.call("ExpandDims", none, [a, np.array([-1])])[0].shape == (2, 2, 1)
    assert bindings.call("Rank", none, [a])[0] == 2
    with pytest.raises(KernelError, match="BiasAdd"):
        bindings.call("BiasAdd", none, [a, np.ones(3, f32)])
    pool_attrs = SimpleNamespace(kernelSize=[2, 2], strides=[1, 1], pad=[0, 0, 0, 0], padMode=0,
                                 roundMode=0, format=0, global_=False, activationType=0)  # fmt: skip
    x = np.arange(9, dtype=f32).reshape(1, 3, 3, 1)
    np.testing.assert_array_equal(
        bindings.call("MaxPoolFusion", pool_attrs, [x])[0].reshape(2, 2),
        [[4, 5], [7, 8]],
    )
