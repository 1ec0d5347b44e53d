"""Convolution family (NHWC activations): Conv2DFusion, Conv2dTransposeFusion, FullConnection,
MatMulFusion.

Conv2D weights are ``[outC, kH, kW, inC/group]`` (``conv2d_infer.c``); transposed-conv weights are
``[inC, kH, kW, outC/group]`` (MindSpore Lite ``DeConvolutionCPUKernel`` reads input channels from
the weight's batch dim). Convolution is im2col (a strided view) + BLAS matmul; depthwise
convolutions accumulate one strided multiply per kernel tap.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import window as W
from . import budget
from .activations import CLAMPS, fused
from .errors import KernelError

__all__ = ["conv2d", "conv2d_transpose", "full_connection", "gemm", "matmul"]

# OpenBLAS runs a GEMM on one thread while M*N*K <= 65536 * GEMM_MULTITHREAD_THRESHOLD (4)
# (interface/gemm.c). Waking its second thread costs more than the second core saves for small
# products, and far more when the cores are shared (milliseconds), so mid-sized products are cut
# into row blocks under that bound; big ones keep BLAS threading.
_SERIAL_MNK = 65536 * 4
_THREADED_MNK = 1 << 25


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for 2-D float operands, with mid-sized products kept on one BLAS thread."""
    m, k = a.shape
    n = b.shape[1]
    mnk = m * n * k
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and a.size and b.size and mnk > 4096:
        # NumPy has no BLAS for integers: float64 is exact while every partial sum stays
        # under 2**53 (quantised convolutions: |codes| <= 255)
        amax = int(np.abs(a.astype(np.int64, copy=False)).max())
        bmax = int(np.abs(b.astype(np.int64, copy=False)).max())
        if amax * bmax * k < 1 << 53:
            out_dt = np.result_type(a.dtype, b.dtype)
            return gemm(a.astype(np.float64), b.astype(np.float64)).astype(out_dt)
    if mnk <= _SERIAL_MNK or mnk > _THREADED_MNK or a.dtype != b.dtype or a.dtype.kind != "f":
        return np.asarray(a @ b)
    rows = max(1, _SERIAL_MNK // (n * k))
    out = np.empty((m, n), dtype=a.dtype)
    for s in range(0, m, rows):
        np.matmul(a[s : s + rows], b, out=out[s : s + rows])
    return out


_WT: dict[tuple[int, int, tuple[int, ...], tuple[int, ...]], tuple[Any, np.ndarray]] = {}


def _transposed(w: np.ndarray) -> np.ndarray:
    """``w.T`` made contiguous. For a read-only weight (a plan's constants are) the copy is made
    once and reused while that array lives."""
    if w.flags.writeable:
        return np.ascontiguousarray(w.T)
    base = w if w.base is None else w.base
    # The data address, shape and strides too: two views of one buffer share a base.
    key = (id(base), w.ctypes.data, w.shape, w.strides)
    hit = _WT.get(key)
    if hit is not None and hit[0]() is base:
        return hit[1]
    t = np.ascontiguousarray(w.T)
    t.flags.writeable = False

    def forget(_ref: Any, k: tuple[int, int, tuple[int, ...], tuple[int, ...]] = key) -> None:
        _WT.pop(k, None)

    try:
        ref = weakref.ref(base, forget)
    except TypeError:
        return t
    _WT[key] = (ref, t)
    return t


# Fold a 1x1 convolution's bias into its GEMM (measured: an im2col matrix with an odd extra
# column slows the copy and the GEMM by more than the bias pass costs, so only 1x1).
_FOLD_1X1 = True

_WB: dict[tuple[int, int], tuple[Any, Any, np.ndarray]] = {}


def _with_bias(wt: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """``wt`` ([K, O]) with the bias appended as row K, cached like ``_transposed`` while both
    arrays live and are read-only."""
    if bias is None:
        return wt
    b = bias.astype(wt.dtype, copy=False).reshape(1, -1)
    if wt.flags.writeable or b.flags.writeable:
        return np.concatenate([wt, b])
    bb = b if b.base is None else b.base
    key = (id(wt), id(bb))
    hit = _WB.get(key)
    if hit is not None and hit[0]() is wt and hit[1]() is bb:
        return hit[2]
    m = np.concatenate([wt, b])
    m.flags.writeable = False

    def forget(_ref: Any, k: tuple[int, int] = key) -> None:
        _WB.pop(k, None)

    try:
        _WB[key] = (weakref.ref(wt, forget), weakref.ref(bb, forget), m)
    except TypeError:
        pass
    return m


def _float_dtype(*arrs: np.ndarray) -> np.dtype[np.generic]:
    """Compute dtype: float32 for integer and float16 operands (accumulate wider, round once)."""
    dt = np.result_type(*arrs)
    return dt if dt.kind == "f" and dt.itemsize >= 4 else np.dtype(np.float32)


def _out(y: np.ndarray, dt: np.dtype[np.generic]) -> np.ndarray:
    """Back to the operands' float dtype (float16 stays float16)."""
    return y.astype(dt, copy=False) if dt.kind == "f" else y


def _bias(op: str, inputs: Sequence[np.ndarray], out_c: int) -> np.ndarray | None:
    if len(inputs) < 3 or inputs[2] is None:
        return None
    b = np.asarray(inputs[2]).reshape(-1)
    if b.size != out_c:
        raise KernelError(op, f"bias has {b.size} entries for {out_c} output channels")
    return b


def conv2d(
    inputs: Sequence[np.ndarray],
    *,
    kernel_size: Sequence[int] = (),
    stride: Sequence[int] = (),
    dilation: Sequence[int] = (),
    pad_mode: int = 0,
    pad_list: Sequence[int] = (),
    group: int = 1,
    in_channel: int = 0,
    out_channel: int = 0,
    activation: int = 0,
) -> list[np.ndarray]:
    """``Conv2DFusion``: x [N,H,W,C] * w [O,kH,kW,C/g] (+ bias [O]) then the fused activation."""
    op = "Conv2DFusion"
    if len(inputs) < 2:
        raise KernelError(op, "needs x and weight")
    x, w = np.asarray(inputs[0]), np.asarray(inputs[1])
    if x.ndim != 4 or w.ndim != 4:
        raise KernelError(op, f"needs 4-D NHWC input and OHWI weight, got {x.shape} and {w.shape}")
    res_dt = np.result_type(x, w)
    n, h, wd, c = x.shape
    o, kh, kw, cg = w.shape
    g = int(group) if group else 1
    if c % g or o % g or cg * g != c:
        raise KernelError(op, f"group {g} does not fit input channels {c} and weight {w.shape}")
    if kernel_size and W.pair(op, "kernelSize", kernel_size, kh) != (kh, kw):
        raise KernelError(op, f"kernelSize {list(kernel_size)} disagrees with weight {w.shape}")
    if (in_channel and in_channel != c) or (out_channel and out_channel != o):
        raise KernelError(
            op, f"inChannel/outChannel {in_channel}/{out_channel} disagree with {c}/{o}"
        )
    sh, sw = W.pair(op, "stride", stride, 1)
    dh, dw = W.pair(op, "dilation", dilation, 1)
    t, b, l, r = W.pads4(op, pad_list)
    oh, pt, pb = W.conv_geometry(op, h, kh, sh, dh, int(pad_mode), t, b)
    ow, pl, pr = W.conv_geometry(op, wd, kw, sw, dw, int(pad_mode), l, r)
    dt = _float_dtype(x, w)
    budget.check_shape((n, oh, ow, o), dt.itemsize, f"{op} output")
    if (
        g > 1
        and cg == 1
        and o == c
        and (sh > 1 or sw > 1)
        and n * oh * ow * kh * kw * o > _DW_SMALL
    ):
        # Strided depthwise: the phase planes are cut from x directly (no padded copy first).
        bias = _bias(op, inputs, o)
        out = _depthwise_flat(
            x.astype(dt, copy=False), w.astype(dt, copy=False), bias,
            (kh, kw, sh, sw, dh, dw), oh, ow, dt, pads=(pt, pb, pl, pr),
        )  # fmt: skip
        return [fused(_out(out, res_dt), activation, op, inplace=True)]
    xp = W.pad_hw(x.astype(dt, copy=False), pt, pb, pl, pr, tmp=True)
    w = w.astype(dt, copy=False)
    if g == 1:
        bias = _bias(op, inputs, o)
        p, k = n * oh * ow, kh * kw * c
        direct = kh == kw == sh == sw == 1 and xp.flags.c_contiguous
        # The bias rides in the GEMM (a column of ones in the matrix, the bias as the weights'
        # last row): one more matrix column instead of a pass over the output. A 1x1 conv's
        # matrix is x itself, so there it pays only when copying x is cheaper than that pass.
        fold = bias is not None and direct and o > 2 * c and _FOLD_1X1
        geom = (kh, kw, sh, sw, dh, dw)
        if direct and not fold:
            cols = xp.reshape(p, c)  # 1x1: the input already is the matrix
            wm = _with_bias(_transposed(w.reshape(o, -1)), None)
            out = gemm(cols, wm).reshape(n, oh, ow, o)
        else:
            # im2col into a reused buffer (the matrix is a temporary, often the largest one).
            kk = k + 1 if fold else k
            # One GEMM call: row blocks re-pack the weight matrix per call, which costs more
            # here than keeping the output block in cache for the bias and activation passes
            # saves. Only a matrix over _COLS_MAX bytes is cut into blocks of output rows (so a
            # big image needs a bounded buffer, not one of gigabytes).
            wm = _with_bias(_transposed(w.reshape(o, -1)), bias if fold else None)
            isz = np.dtype(dt).itemsize
            if p * kk * isz <= _COLS_MAX:
                cols = W.scratch("cols", (p, kk), dt)
                _im2col(xp, cols, oh, ow, geom, c, kk, direct)
                if fold:
                    cols[:, k] = 1
                out = gemm(cols, wm).reshape(n, oh, ow, o)
            else:
                rows = max(1, _COLS_MAX // (ow * kk * isz))
                buf = W.scratch("cols", (min(rows, oh) * ow, kk), dt)
                out = np.empty((n, oh, ow, o), dtype=dt)
                for b in range(n):
                    for r0 in range(0, oh, rows):
                        r1 = min(oh, r0 + rows)
                        xs = xp[b : b + 1, r0 * sh : (r1 - 1) * sh + (kh - 1) * dh + 1]
                        cols = buf[: (r1 - r0) * ow]
                        _im2col(xs, cols, r1 - r0, ow, geom, c, kk, direct)
                        if fold:
                            cols[:, k] = 1
                        out[b, r0:r1] = gemm(cols, wm).reshape(r1 - r0, ow, o)
        if bias is not None and not fold:
            out += bias.astype(dt, copy=False)
        return [fused(_out(out, res_dt), activation, op, inplace=True)]
    elif cg == 1:
        out, done = _depthwise(xp, w, inputs, oh, ow, (kh, kw, sh, sw, dh, dw), dt, activation)
        if done:
            return [_out(out, res_dt)]
    else:
        og = o // g
        pv = W.patches(xp, oh, ow, kh, kw, sh, sw, dh, dw)
        out = np.empty((n, oh, ow, o), dtype=dt)
        for gi in range(g):
            cols = pv[..., gi * cg : (gi + 1) * cg].reshape(n * oh * ow, kh * kw * cg)
            wg = w[gi * og : (gi + 1) * og].reshape(og, -1)
            out[..., gi * og : (gi + 1) * og] = (cols @ np.ascontiguousarray(wg.T)).reshape(
                n, oh, ow, og
            )
    bias = _bias(op, inputs, o)
    if bias is not None:
        out += bias.astype(dt, copy=False)
    return [fused(_out(out, res_dt), activation, op, inplace=True)]


# An im2col matrix over this many bytes is built and multiplied in blocks of output rows.
_COLS_MAX = 32 << 20


def _im2col(
    xp: np.ndarray,
    cols: np.ndarray,
    oh: int,
    ow: int,
    geom: tuple[int, int, int, int, int, int],
    c: int,
    kk: int,
    direct: bool,
) -> None:
    """Fill ``cols`` ([N*oh*ow, kk], kk >= kh*kw*C) with the patches of the padded ``xp``."""
    kh, kw, sh, sw, dh, dw = geom
    n = xp.shape[0]
    if direct:
        cols[:, :c] = xp.reshape(-1, c)
        return
    isz = cols.itemsize
    if dw == 1 and xp.flags.c_contiguous:
        # Undilated columns: a kernel row's kw*C inputs are one contiguous run, so the copy's
        # inner loop is kw times longer (it dominates for small C).
        xs = xp.strides
        src = np.lib.stride_tricks.as_strided(
            xp,
            shape=(n, oh, ow, kh, kw * c),
            strides=(xs[0], sh * xs[1], sw * xs[2], dh * xs[1], isz),
            writeable=False,
        )
        dst = np.lib.stride_tricks.as_strided(
            cols,
            shape=(n, oh, ow, kh, kw * c),
            strides=(oh * ow * kk * isz, ow * kk * isz, kk * isz, kw * c * isz, isz),
        )
        np.copyto(dst, src)
    else:
        dst = np.lib.stride_tricks.as_strided(
            cols,
            shape=(n, oh, ow, kh, kw, c),
            strides=(oh * ow * kk * isz, ow * kk * isz, kk * isz, kw * c * isz, c * isz, isz),
        )
        np.copyto(dst, W.patches(xp, oh, ow, kh, kw, sh, sw, dh, dw))


# Output elements per block of the row-block depthwise loop: bounds the scratch product.
# Measured here (1x56x56x144, 1x112x112x32, 1x28x28x192): 64k elements is best or tied; smaller
# blocks lose more to per-call overhead than they gain in cache hits, larger ones spill L2.
_DW_BLOCK = 1 << 16
# Up to this many multiply-adds a depthwise conv is one product and one sum over im2col.
_DW_SMALL = 1 << 15


def _depthwise(
    xp: np.ndarray,
    w: np.ndarray,
    inputs: Sequence[np.ndarray],
    oh: int,
    ow: int,
    geom: tuple[int, int, int, int, int, int],
    dt: np.dtype[np.generic],
    activation: int,
) -> tuple[np.ndarray, bool]:
    """Depthwise convolution (channel multiplier m = O/C: output channel k reads input channel
    k // m): one multiply-accumulate of a contiguous row block per kernel tap, blocked by output
    rows, with the bias and a clamp activation applied while the block is hot. Returns (out,
    True): the bias and activation are applied."""
    kh, kw, sh, sw, dh, dw = geom
    n, _, _, c = xp.shape
    o = w.shape[0]
    m = o // c
    if m > 1:
        xp = np.repeat(xp, m, axis=3)
    if n * oh * ow * kh * kw * o <= _DW_SMALL:
        # Small maps: one product over the im2col view and one reduction, instead of two
        # NumPy calls (and their fixed cost) per tap.
        pv = W.patches(xp, oh, ow, kh, kw, sh, sw, dh, dw)
        prod = pv * w[:, :, :, 0].transpose(1, 2, 0).astype(dt, copy=False)
        out4 = prod.sum(axis=(3, 4))
        bias = _bias("Conv2DFusion", inputs, o)
        if bias is not None:
            out4 += bias.astype(dt, copy=False)
        return fused(out4, activation, "Conv2DFusion", inplace=True), True
    if (sh > 1 or sw > 1) or n * oh * xp.shape[2] * o <= _DW_FLAT_MAX:
        bias = _bias("Conv2DFusion", inputs, o)
        out = _depthwise_flat(xp, w, bias, (kh, kw, sh, sw, dh, dw), oh, ow, dt)
        return fused(out, activation, "Conv2DFusion", inplace=True), True
    # Stride 1 from here (strided maps took the flat loop): tap (i, j) for output rows
    # [r0, r1) is xp[b, r0 + i*dh : r1 + i*dh, j*dw : j*dw + ow], whose (ow, O) rows are
    # contiguous runs of ow*O elements.
    row = ow * o
    # A tap's weights tiled along the output row (cached for a plan's read-only weights).
    wt = _tap_tiles(w[:, :, :, 0].reshape(o, kh * kw).T, dt, ow)
    taps = [(k, i * dh, j * dw) for k, (i, j) in enumerate(np.ndindex(kh, kw))]
    bias = _bias("Conv2DFusion", inputs, o)
    brow = None if bias is None else _tap_tiles(bias.reshape(1, o), dt, ow)[0]
    clamp = CLAMPS.get(int(activation))
    zero = np.zeros(row, dtype=dt)  # NumPy's maximum is fast against a row, slow against a scalar
    out = np.empty((n, oh, row), dtype=dt)
    rows_per = max(1, _DW_BLOCK // max(row, 1))
    tmp = W.scratch("taps", (rows_per, row), dt)
    # Positional outputs: an ``out=`` keyword costs about half a microsecond more per call.
    mul, add = np.multiply, np.add
    for b in range(n):
        xb = xp[b]
        for r0 in range(0, oh, rows_per):
            r1 = min(oh, r0 + rows_per)
            acc = out[b, r0:r1]
            t = tmp[: r1 - r0]
            for k, r, q in taps:
                v = xb[r0 + r : r1 + r, q : q + ow].reshape(r1 - r0, row)
                if k == 0:
                    mul(v, wt[0], acc)
                else:
                    mul(v, wt[k], t)
                    add(acc, t, acc)
            if brow is not None:
                add(acc, brow, acc)
            if clamp is not None:
                lo, hi = clamp
                if hi is None:
                    np.maximum(acc, zero if lo == 0 else zero + lo, out=acc)
                else:
                    np.clip(acc, lo, hi, out=acc)
    out4 = out.reshape(n, oh, ow, o)
    if clamp is None:
        out4 = fused(out4, activation, "Conv2DFusion", inplace=True)
    return out4, True


_WTILES: dict[tuple[Any, ...], tuple[Any, np.ndarray]] = {}


def _tap_tiles(w: np.ndarray, dt: np.dtype[np.generic], reps: int) -> np.ndarray:
    """[rows, reps*O]: each row of ``w`` ([rows, O]: a tap's per-channel weights, or the bias)
    repeated ``reps`` times (one flat run of the block it multiplies), cached while a read-only
    weight lives."""
    base = w if w.base is None else w.base
    # The data address too: views of one buffer at different offsets share a base.
    key = (id(base), w.ctypes.data, w.shape, w.strides, dt.str, reps)
    hit = _WTILES.get(key)
    if hit is not None and hit[0]() is base and not w.flags.writeable:
        return hit[1]
    t = np.tile(w.astype(dt), (1, reps))
    t.flags.writeable = False
    if not w.flags.writeable:

        def forget(_ref: Any, k: tuple[Any, ...] = key) -> None:
            _WTILES.pop(k, None)

        try:
            ref = weakref.ref(base, forget)
        except TypeError:
            return t
        _WTILES[key] = (ref, t)
    return t


def _depthwise_flat(
    xp: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    geom: tuple[int, int, int, int, int, int],
    oh: int,
    ow: int,
    dt: np.dtype[np.generic],
    pads: tuple[int, int, int, int] | None = None,
) -> np.ndarray:
    """The tap loop on flat, contiguous 1-D slices (NumPy's fastest ufunc loops: no broadcast,
    no strides). Outputs are computed on a "wide" grid as wide as the (phase) plane the taps
    read, so a tap's input for a block of output rows is one contiguous run; the extra columns
    are garbage and dropped when the block is copied out. Strided convolutions first split the
    padded input into phase planes (plane (a, b) = xp[:, a::sh, b::sw]), making every tap a
    unit-stride window of one plane. With ``pads`` (top, bottom, left, right), ``xp`` is the
    unpadded input and the planes are cut from it directly, zero where the padding would be."""
    kh, kw, sh, sw, dh, dw = geom
    n, hp, wp, c = xp.shape
    t0 = l0 = 0
    if pads is not None:
        t0, l0 = pads[0], pads[2]
        hp, wp = hp + pads[0] + pads[1], wp + pads[2] + pads[3]
        assert sh > 1 or sw > 1
    if sh == 1 and sw == 1:
        ph, pw = hp, wp
        planes = {(0, 0): xp if xp.flags.c_contiguous else np.ascontiguousarray(xp)}
    else:
        ph, pw = -(-hp // sh), -(-wp // sw)
        planes = {}
        for i in range(kh):
            for j in range(kw):
                key = ((i * dh) % sh, (j * dw) % sw)
                if key not in planes:
                    buf = W.scratch(f"plane{len(planes)}", (n, ph, pw, c), dt)
                    # Plane cell (Y, X) is padded cell (a + Y*sh, b + X*sw), i.e. input cell
                    # (a + Y*sh - top, b + X*sw - left) where that lies inside the input.
                    y0, y1 = _phase_span(key[0], sh, t0, xp.shape[1], ph)
                    x0, x1 = _phase_span(key[1], sw, l0, xp.shape[2], pw)
                    if y1 > y0 and x1 > x0:
                        ys, xs = key[0] + y0 * sh - t0, key[1] + x0 * sw - l0
                        buf[:, y0:y1, x0:x1] = xp[
                            :, ys : ys + (y1 - y0 - 1) * sh + 1 : sh,
                            xs : xs + (x1 - x0 - 1) * sw + 1 : sw,
                        ]  # fmt: skip
                    buf[:, :y0] = 0
                    buf[:, y1:] = 0
                    buf[:, y0:y1, :x0] = 0
                    buf[:, y0:y1, x1:] = 0
                    planes[key] = buf
    taps = []
    for i in range(kh):
        for j in range(kw):
            r, q = i * dh, j * dw
            pl = planes[(r % sh, q % sw)].reshape(n, -1)
            taps.append((pl, ((r // sh) * pw + q // sw) * c))
    # Blocks of whole wide rows, about _DW_FLAT_BLOCK elements each, split evenly.
    nblk = -(-oh * pw * c // _DW_FLAT_BLOCK)
    rows = -(-oh // nblk)
    o = w.shape[0]
    tiles = _tap_tiles(w[:, :, :, 0].reshape(o, kh * kw).T, dt, rows * pw)
    btile = None if bias is None else _tap_tiles(bias.reshape(1, o), dt, rows * pw)[0]
    mul, add = np.multiply, np.add  # positional outputs: cheaper calls than out=
    wide = W.scratch("dwide", (oh * pw * c,), dt)
    tmp = W.scratch("dtmp", (rows * pw * c,), dt)
    out = np.empty((n, oh, ow, c), dtype=dt)
    for b in range(n):
        flat = [(pl[b], off) for pl, off in taps]
        for r0 in range(0, oh, rows):
            r1 = min(oh, r0 + rows)
            ln = ((r1 - r0 - 1) * pw + ow) * c
            s0 = r0 * pw * c
            acc = wide[s0 : s0 + ln]
            t = tmp[:ln]
            wts = tiles[:, :ln] if ln < tiles.shape[1] else tiles
            pl, off = flat[0]
            mul(pl[off + s0 : off + s0 + ln], wts[0], acc)
            if btile is not None:
                add(acc, btile[:ln], acc)
            for k in range(1, len(flat)):
                pl, off = flat[k]
                mul(pl[off + s0 : off + s0 + ln], wts[k], t)
                add(acc, t, acc)
        out[b] = wide[: oh * pw * c].reshape(oh, pw, c)[:, :ow]
    return out


def _phase_span(a: int, s: int, pad: int, size: int, n: int) -> tuple[int, int]:
    """Plane indices [lo, hi) (of ``n``) whose padded index ``a + Y*s`` is an input index:
    ``pad <= a + Y*s < pad + size``."""
    lo = max(0, -(-(pad - a) // s))
    hi = min(n, (pad + size - 1 - a) // s + 1)
    return lo, max(lo, hi)


# Stride-1 maps up to this many (padded-width) elements take the flat loop; larger ones run
# faster as row blocks with broadcast weights (measured: the flat loop's full-length weight
# stream stops fitting in cache). Strided maps always take it (phase planes beat strided views).
_DW_FLAT_MAX = 1 << 16
# Elements per block of the flat depthwise loop.
_DW_FLAT_BLOCK = 1 << 15


def conv2d_transpose(
    inputs: Sequence[np.ndarray],
    *,
    kernel_size: Sequence[int] = (),
    stride: Sequence[int] = (),
    dilation: Sequence[int] = (),
    pad_mode: int = 0,
    pad_list: Sequence[int] = (),
    group: int = 1,
    in_channel: int = 0,
    out_channel: int = 0,
    activation: int = 0,
    output_paddings: Sequence[int] = (),
) -> list[np.ndarray]:
    """``Conv2dTransposeFusion``: x [N,H,W,Cin], w [Cin,kH,kW,Cout/g] (+bias) then activation.

    Column matmul followed by col2im (one strided add per kernel tap), then crop the pads; output
    padding extends bottom/right (``deconv2d_infer.c``).
    """
    op = "Conv2dTransposeFusion"
    if len(inputs) < 2:
        raise KernelError(op, "needs x and weight")
    x, w = np.asarray(inputs[0]), np.asarray(inputs[1])
    if x.ndim != 4 or w.ndim != 4:
        raise KernelError(
            op,
            f"needs 4-D NHWC input and [Cin,kH,kW,Cout/g] weight, got {x.shape}, {w.shape}",
        )
    res_dt = np.result_type(x, w)
    n, h, wd, c = x.shape
    ci, kh, kw, og = w.shape
    g = int(group) if group else 1
    if ci != c or c % g:
        raise KernelError(op, f"weight {w.shape} does not fit input channels {c} with group {g}")
    if kernel_size and W.pair(op, "kernelSize", kernel_size, kh) != (kh, kw):
        raise KernelError(op, f"kernelSize {list(kernel_size)} disagrees with weight {w.shape}")
    o = og * g
    if (in_channel and in_channel != c) or (out_channel and out_channel != o):
        raise KernelError(
            op, f"inChannel/outChannel {in_channel}/{out_channel} disagree with {c}/{o}"
        )
    sh, sw = W.pair(op, "stride", stride, 1)
    dh, dw = W.pair(op, "dilation", dilation, 1)
    oph, opw = W.pair(op, "outputPaddings", output_paddings, 0)
    keh, kew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    full_h, full_w = (h - 1) * sh + keh, (wd - 1) * sw + kew
    mode = int(pad_mode)
    if mode == W.SAME:
        oh, ow = h * sh, wd * sw
        pt = max(full_h - oh, 0) // 2
        pl = max(full_w - ow, 0) // 2
        oh, ow = oh + oph, ow + opw
    elif mode in (W.PAD, W.VALID):
        t, b, l, r = W.pads4(op, pad_list) if mode == W.PAD else (0, 0, 0, 0)
        pt, pl = t, l
        oh, ow = full_h - t - b + oph, full_w - l - r + opw
    else:
        raise KernelError(op, f"unsupported PadMode {mode}")
    if oh <= 0 or ow <= 0:
        raise KernelError(op, f"non-positive output size {oh}x{ow}")
    dt = _float_dtype(x, w)
    x = x.astype(dt, copy=False)
    w = w.astype(dt, copy=False)
    cg = c // g
    budget.check_shape((n, max(full_h, pt + oh), max(full_w, pl + ow), o), dt.itemsize,
                       "Conv2dTransposeFusion output")  # fmt: skip
    buf = np.zeros((n, max(full_h, pt + oh), max(full_w, pl + ow), o), dtype=dt)
    # The columns (every input pixel times every tap) are made for blocks of input rows when
    # all of them would take over _COLS_MAX bytes.
    row_bytes = n * wd * kh * kw * og * dt.itemsize
    rows = h if row_bytes * h <= _COLS_MAX else max(1, _COLS_MAX // max(row_bytes, 1))
    budget.check_shape((n * min(rows, h) * wd, kh * kw * og), dt.itemsize,
                       "Conv2dTransposeFusion columns")  # fmt: skip
    for gi in range(g):
        wg = w[gi * cg : (gi + 1) * cg].reshape(cg, kh * kw * og)
        for r0 in range(0, h, rows):
            r1 = min(h, r0 + rows)
            xs = x[:, r0:r1, :, gi * cg : (gi + 1) * cg].reshape(-1, cg)
            cols = (xs @ wg).reshape(n, r1 - r0, wd, kh, kw, og)
            y0 = r0 * sh
            for i in range(kh):
                for j in range(kw):
                    buf[:, y0 + i * dh : y0 + i * dh + (r1 - r0 - 1) * sh + 1 : sh,
                        j * dw : j * dw + (wd - 1) * sw + 1 : sw,
                        gi * og : (gi + 1) * og] += cols[:, :, :, i, j, :]  # fmt: skip
    out = np.ascontiguousarray(buf[:, pt : pt + oh, pl : pl + ow, :])
    bias = _bias(op, inputs, o)
    if bias is not None:
        out += bias.astype(dt, copy=False)
    return [fused(_out(out, res_dt), activation, op, inplace=True)]


def full_connection(
    inputs: Sequence[np.ndarray],
    *,
    has_bias: bool = False,
    use_axis: bool = False,
    axis: int = 0,
    activation: int = 0,
) -> list[np.ndarray]:
    """``FullConnection``: y = flatten(x) · Wᵀ (+ b), W is ``[outC, inC]``; then the activation.

    With ``useAxis`` the dims before ``axis`` are kept; otherwise x becomes ``[-1, inC]``.
    """
    op = "FullConnection"
    if len(inputs) < 2:
        raise KernelError(op, "needs x and weight")
    x, w = np.asarray(inputs[0]), np.asarray(inputs[1])
    if w.ndim != 2:
        raise KernelError(op, f"weight must be 2-D [outC, inC], got {w.shape}")
    o, k = w.shape
    res_dt = np.result_type(x, w)
    if use_axis:
        ax = axis + x.ndim if axis < 0 else axis
        if not 0 <= ax < x.ndim or math.prod(x.shape[ax:]) != k:
            raise KernelError(op, f"axis {axis} of {x.shape} does not flatten to {k} features")
        lead = x.shape[:ax]
    else:
        if x.size % k:
            raise KernelError(op, f"input {x.shape} does not flatten to rows of {k}")
        lead = (x.size // k,)
    dt = _float_dtype(x, w)
    out = gemm(x.astype(dt, copy=False).reshape(-1, k), _transposed(w.astype(dt, copy=False)))
    if has_bias or (len(inputs) > 2 and inputs[2] is not None):
        if len(inputs) < 3:
            raise KernelError(op, "hasBias is set but no bias input")
        out += np.asarray(inputs[2]).reshape(-1).astype(dt, copy=False)
    return [fused(_out(out.reshape(*lead, o), res_dt), activation, op, inplace=True)]


def matmul(
    inputs: Sequence[np.ndarray],
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    activation: int = 0,
) -> list[np.ndarray]:
    """``MatMulFusion``: batched matmul on the last two dims (optional transposes, bias), + act."""
    op = "MatMulFusion"
    if len(inputs) < 2:
        raise KernelError(op, "needs two inputs")
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    if transpose_a and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if transpose_b and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    try:
        out = (
            gemm(a, b)
            if a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0]
            else np.matmul(a, b)
        )
    except ValueError as e:
        raise KernelError(op, f"shapes {a.shape} and {b.shape} do not multiply: {e}") from None
    if len(inputs) > 2 and inputs[2] is not None:
        bias = np.asarray(inputs[2])
        if (
            out.flags.writeable
            and np.result_type(out, bias) == out.dtype
            and (np.broadcast_shapes(out.shape, bias.shape) == out.shape)
        ):
            out += bias
        else:
            out = out + bias
    return [fused(np.asarray(out), activation, op, inplace=True)]
