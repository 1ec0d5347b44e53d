"""Pooling (NHWC): AvgPoolFusion and MaxPoolFusion.

Padding never contributes: max pooling pads with -inf, average pooling divides by the number of
real cells in each window (nnacl ``pooling_fp32.c``). Windows are reduced one kernel tap at a
time over strided views, so the Python loop runs kh*kw times, never per window.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _window as W
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
    xp = W.pad_hw(x, pt, pb, pl, pr, low, tmp=True)
    n, hp, wp, c = xp.shape
    # Separable (max is exact in any order). Rows first: an NHWC row is one contiguous run of
    # Wp*C values, so those kh passes run long NumPy loops over the larger array; then the kw
    # column taps on the kh-fold smaller result.
    vt = W.scratch("taps", (n, oh, wp * c), x.dtype)
    rows = xp.reshape(n, hp, wp * c)
    _max_into([rows[:, i : i + (oh - 1) * sh + 1 : sh] for i in range(kh)], vt)
    v4 = vt.reshape(n, oh, wp, c)
    out = np.empty((n, oh, ow, c), dtype=x.dtype)
    _max_into([v4[:, :, j : j + (ow - 1) * sw + 1 : sw] for j in range(kw)], out)
    return [fused(out, activation, op, inplace=True)]


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
    xp = W.pad_hw(x.astype(dt, copy=False), pt, pb, pl, pr, tmp=True)
    # Separable, as max_pool: kh long row passes, then kw column passes on the smaller result.
    n, hp, wp, c = xp.shape
    vt = W.scratch("taps", (n, oh, wp * c), dt)
    rows = xp.reshape(n, hp, wp * c)
    _sum_into([rows[:, i : i + (oh - 1) * sh + 1 : sh] for i in range(kh)], vt)
    v4 = vt.reshape(n, oh, wp, c)
    total = np.empty((n, oh, ow, c), dtype=dt)
    _sum_into([v4[:, :, j : j + (ow - 1) * sw + 1 : sw] for j in range(kw)], total)
    if pt or pb or pl or pr:
        ones = W.pad_hw(np.ones((1, x.shape[1], x.shape[2], 1), dtype=dt), pt, pb, pl, pr)
        count = np.zeros((1, oh, ow, 1), dtype=dt)
        for _, _, v in W.taps(ones, oh, ow, kh, kw, sh, sw, 1, 1):
            count += v
        total /= np.maximum(count, 1)
    else:
        total /= dt.type(kh * kw)
    return [fused(total.astype(x.dtype, copy=False), activation, op, inplace=True)]
