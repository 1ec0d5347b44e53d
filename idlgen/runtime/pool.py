"""Pooling (NHWC): AvgPoolFusion and MaxPoolFusion.

Padding never contributes: max pooling pads with -inf, average pooling divides by the number of
real cells in each window (nnacl ``pooling_fp32.c``). Windows are reduced one kernel tap at a
time over strided views, so the Python loop runs kh*kw times, never per window.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import window as W
from . import budget
from .activations import fused
from .errors import KernelError

__all__ = ["avg_pool", "max_pool"]


def _setup(
    op: str,
    inputs: Sequence[np.ndarray],
    kernel_size: Sequence[int],
    strides: Sequence[int],
    pad: Sequence[int],
    pad_mode: int,
    round_mode: int,
) -> tuple[np.ndarray, tuple[int, ...]]:
    if not inputs:
        raise KernelError(op, "needs an input")
    x = np.asarray(inputs[0])
    if x.ndim != 4:
        raise KernelError(op, f"needs a 4-D NHWC input, got {x.shape}")
    if int(round_mode) not in (0, 1):
        raise KernelError(op, f"unsupported RoundMode {int(round_mode)}")
    kh, kw = W.pair(op, "kernelSize", kernel_size, 0)
    if kh <= 0 or kw <= 0:
        raise KernelError(op, f"kernelSize must be positive, got {list(kernel_size)}")
    sh, sw = W.pair(op, "strides", strides, 1)
    t, b, l, r = W.pads4(op, pad)
    ceil_mode = int(round_mode) == 1
    _, h, wd, _ = x.shape
    oh, pt, pb = W.pool_geometry(op, h, kh, sh, int(pad_mode), t, b, ceil_mode)
    ow, pl, pr = W.pool_geometry(op, wd, kw, sw, int(pad_mode), l, r, ceil_mode)
    budget.check_shape(
        (x.shape[0], oh, max(ow, wd), x.shape[3]), max(x.itemsize, 4), f"{op} output"
    )
    # separable: a pass per live row tap over (oh, wd), then per live column tap over (oh, ow)
    taps = min(kh, h) * wd + min(kw, wd) * ow
    budget.charge(x.shape[0] * x.shape[3] * oh * taps, f"{op} windows")
    return x, (kh, kw, sh, sw, oh, ow, pt, pb, pl, pr)


def max_pool(
    inputs: Sequence[np.ndarray],
    *,
    kernel_size: Sequence[int] = (),
    strides: Sequence[int] = (),
    pad: Sequence[int] = (),
    pad_mode: int = 0,
    round_mode: int = 0,
    global_pool: bool = False,
    activation: int = 0,
) -> list[np.ndarray]:
    """``MaxPoolFusion``: NHWC max over each window; padding never wins."""
    op = "MaxPoolFusion"
    if global_pool:
        x = np.asarray(inputs[0])
        return [fused(x.max(axis=(1, 2), keepdims=True), activation, op)]
    x, (kh, kw, sh, sw, oh, ow, pt, pb, pl, pr) = _setup(
        op, inputs, kernel_size, strides, pad, pad_mode, round_mode
    )
    low = -np.inf if np.issubdtype(x.dtype, np.floating) else np.iinfo(x.dtype).min
    out = _separable(x, (kh, kw, sh, sw, oh, ow, pt, pl), np.maximum, low)
    return [fused(out, activation, op, inplace=True)]


def _live(k: int, out: int, size: int, stride: int, pad: int) -> range:
    """The kernel taps (of ``k``) that read at least one real cell: tap ``i`` reads source
    ``o*stride + i - pad`` for ``o`` in [0, out), so it is live for ``i`` in
    [pad - (out-1)*stride, pad + size). The rest read only padding and are skipped, which bounds
    the tap loops by the input size however wide the window (a SAME window of 1.5e9)."""
    return range(max(0, pad - (out - 1) * stride), min(k, pad + size))


def _span(out: int, size: int, k: int, stride: int, pad: int) -> tuple[int, int, int]:
    """For kernel tap ``k``: the output range [lo, hi) whose source index ``o*stride + k - pad``
    lies inside [0, size), and the source index of ``lo``."""
    lo = max(0, -(-(pad - k) // stride))
    hi = min(out, (size - 1 - k + pad) // stride + 1)
    return lo, hi, lo * stride + k - pad


def _separable(x: np.ndarray, geom: tuple[int, ...], ufunc: np.ufunc, fill: float) -> np.ndarray:
    """Reduce every window with ``ufunc`` (max or add), separably: kh passes over whole NHWC
    rows (each one contiguous run of W*C values), then kw column passes on the kh-fold smaller
    result. Padding is never materialised: a tap only touches the outputs whose source is
    inside the input, the rest start from ``fill`` (the reduction's identity)."""
    kh, kw, sh, sw, oh, ow, pt, pl = geom
    n, h, wd, c = x.shape
    rows = x.reshape(n, h, wd * c)
    vt = W.scratch("taps", (n, oh, wd * c), x.dtype)
    spans = [_span(oh, h, i, sh, pt) for i in _live(kh, oh, h, sh, pt)]
    _taps_into(ufunc, fill, vt, 1, [(lo, hi, rows[:, s : s + (hi - lo - 1) * sh + 1 : sh])
                                    for lo, hi, s in spans])  # fmt: skip
    v4 = vt.reshape(n, oh, wd, c)
    out = np.empty((n, oh, ow, c), dtype=x.dtype)
    spans = [_span(ow, wd, j, sw, pl) for j in _live(kw, ow, wd, sw, pl)]
    _taps_into(ufunc, fill, out, 2, [(lo, hi, v4[:, :, s : s + (hi - lo - 1) * sw + 1 : sw])
                                     for lo, hi, s in spans])  # fmt: skip
    return out


def _taps_into(
    ufunc: np.ufunc, fill: float, out: np.ndarray, axis: int, taps: list[tuple[int, int, Any]]
) -> None:
    """``out[lo:hi] = ufunc(out[lo:hi], view)`` along ``axis`` for every tap. A tap covering all
    of ``out`` is written first instead of a ``fill`` pass: for max any one, for a sum only the
    first or second (swapping the first two addends keeps every rounding the same)."""
    n = out.shape[axis]
    order = list(range(len(taps)))
    firsts = [k for k, (lo, hi, _) in enumerate(taps) if lo == 0 and hi == n]
    if firsts and (ufunc is np.maximum or firsts[0] <= 1):
        order.remove(firsts[0])
        np.copyto(out, taps[firsts[0]][2])
    else:
        out[...] = fill
    pre = (slice(None),) * axis
    for k in order:
        lo, hi, v = taps[k]
        if hi > lo:
            dst = out if lo == 0 and hi == n else out[pre + (slice(lo, hi),)]
            ufunc(dst, v, out=dst)


@functools.lru_cache(maxsize=8)  # entries are output-sized arrays
def _counts(
    h: int, wd: int, c: int, kh: int, kw: int, sh: int, sw: int, oh: int, ow: int, pt: int,
    pl: int, dt: np.dtype[Any],
) -> np.ndarray:  # fmt: skip
    """[oh, ow*C]: how many real (unpadded) cells each window holds (at least 1), per channel so
    the division is one same-shape pass. Windows are rectangles: rows times columns."""
    rows = np.zeros(oh, dtype=np.int64)
    cols = np.zeros(ow, dtype=np.int64)
    for i in _live(kh, oh, h, sh, pt):
        lo, hi, _ = _span(oh, h, i, sh, pt)
        rows[lo:hi] += 1
    for j in _live(kw, ow, wd, sw, pl):
        lo, hi, _ = _span(ow, wd, j, sw, pl)
        cols[lo:hi] += 1
    cnt = np.maximum(rows[:, None] * cols[None, :], 1).astype(dt)
    out = np.repeat(cnt, c, axis=1)
    out.flags.writeable = False
    return out


def _max_into(views: list[np.ndarray], out: np.ndarray) -> None:
    if len(views) == 1:
        np.copyto(out, views[0])
        return
    np.maximum(views[0], views[1], out=out)
    for v in views[2:]:
        np.maximum(out, v, out=out)


def _sum_into(views: list[np.ndarray], out: np.ndarray) -> None:
    if len(views) == 1:
        np.copyto(out, views[0])
        return
    np.add(views[0], views[1], out=out)
    for v in views[2:]:
        out += v


def avg_pool(
    inputs: Sequence[np.ndarray],
    *,
    kernel_size: Sequence[int] = (),
    strides: Sequence[int] = (),
    pad: Sequence[int] = (),
    pad_mode: int = 0,
    round_mode: int = 0,
    global_pool: bool = False,
    activation: int = 0,
) -> list[np.ndarray]:
    """``AvgPoolFusion``: mean over real cells only (padding excluded from the divisor)."""
    op = "AvgPoolFusion"
    if global_pool:
        x = np.asarray(inputs[0])
        return [
            fused(
                x.mean(axis=(1, 2), keepdims=True, dtype=np.float64).astype(x.dtype),
                activation,
                op,
            )
        ]
    x, (kh, kw, sh, sw, oh, ow, pt, pb, pl, pr) = _setup(
        op, inputs, kernel_size, strides, pad, pad_mode, round_mode
    )
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float32)
    n, h, wd, c = x.shape
    total = _separable(x.astype(dt, copy=False), (kh, kw, sh, sw, oh, ow, pt, pl), np.add, 0)
    if pt or pb or pl or pr:
        total.reshape(n, oh, ow * c)[...] /= _counts(h, wd, c, kh, kw, sh, sw, oh, ow, pt, pl, dt)
    else:
        total /= dt.type(kh * kw)
    return [fused(total.astype(x.dtype, copy=False), activation, op, inplace=True)]
