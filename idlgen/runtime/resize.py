"""``Resize`` (NHWC), separable: per spatial axis an index table and a weight table, applied as
a gather + weighted sum (no per-pixel loops).

Source coordinates (``CoordinateTransformMode``): ASYMMETRIC ``d/scale``; ALIGN_CORNERS
``d*(in-1)/(out-1)``; HALF_PIXEL ``(d+0.5)/scale-0.5``. LINEAR clamps the source coordinate at 0
and the right neighbour at in-1 (nnacl ``resize_fp32.c``); CUBIC uses 4 taps with ``cubicCoeff``
and edge-clamped indices (``excludeOutside`` drops and renormalises outside taps); NEAREST rounds
by ``NearestMode``.
"""

from __future__ import annotations

from collections.abc import Sequence

import functools
from typing import Any

import numpy as np

from .errors import KernelError

__all__ = ["resize"]

ASYMMETRIC, ALIGN_CORNERS, HALF_PIXEL = 0, 1, 2
LINEAR, NEAREST, CUBIC = 0, 1, 2


def _source(op: str, out: int, size: int, scale: float, mode: int) -> np.ndarray:
    d = np.arange(out, dtype=np.float64)
    if mode == ASYMMETRIC:
        return d / scale
    if mode == ALIGN_CORNERS:
        span = size * scale - 1  # == out - 1 unless a scale gives a fractional output length
        return d * ((size - 1) / span) if out > 1 and span > 0 else np.zeros(out)
    if mode == HALF_PIXEL:
        return (d + 0.5) / scale - 0.5
    raise KernelError(op, f"unsupported CoordinateTransformMode {mode}")


def _nearest(op: str, s: np.ndarray, mode: int) -> np.ndarray:
    if mode in (
        0,
        2,
    ):  # NORMAL (round half away; coordinates are >= 0 here) / ROUND_HALF_UP
        i = np.floor(s + 0.5)
    elif mode == 1:  # ROUND_HALF_DOWN
        i = np.ceil(s - 0.5)
    elif mode == 3:
        i = np.floor(s)
    elif mode == 4:
        i = np.ceil(s)
    else:
        raise KernelError(op, f"unsupported NearestMode {mode}")
    return i


def _cubic_weights(t: np.ndarray, a: float) -> np.ndarray:
    """Keys cubic weights for offsets -1, 0, 1, 2 from the floor position; t in [0, 1)."""

    def k(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        return np.where(
            x <= 1,
            ((a + 2) * x - (a + 3)) * x * x + 1,
            np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0),
        )

    return np.stack([k(t + 1), k(t), k(1 - t), k(2 - t)], axis=-1)


def _table(
    op: str,
    size: int,
    out: int,
    scale: float,
    method: int,
    ctm: int,
    nearest_mode: int,
    cubic_coeff: float,
    exclude_outside: bool,
) -> tuple[np.ndarray, np.ndarray]:
    s = _source(op, out, size, scale, ctm)
    if method == NEAREST:
        i = np.clip(_nearest(op, s, nearest_mode), 0, size - 1).astype(np.int64)
        return i[:, None], np.ones((out, 1))
    if method == LINEAR:
        s = np.clip(s, 0, size - 1)
        lo = np.floor(s)
        t = s - lo
        lo_i = lo.astype(np.int64)
        hi_i = np.minimum(lo_i + 1, size - 1)
        return np.stack([lo_i, hi_i], 1), np.stack([1 - t, t], 1)
    if method == CUBIC:
        lo = np.floor(s)
        w = _cubic_weights(s - lo, cubic_coeff)
        raw = lo.astype(np.int64)[:, None] + np.arange(-1, 3)
        if exclude_outside:
            w = np.where((raw >= 0) & (raw < size), w, 0.0)
            w = w / w.sum(axis=1, keepdims=True)
        return np.clip(raw, 0, size - 1), w
    raise KernelError(op, f"unsupported ResizeMethod {method}")


@functools.lru_cache(maxsize=256)
def _cached_table(
    op: str, size: int, out: int, scale: float, *args: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``_table`` once per geometry (a plan calls a Resize node with the same one every run)."""
    idx, w = _table(op, size, out, scale, *args)
    idx.flags.writeable = False
    w.flags.writeable = False
    return idx, w


def _gather_nearest(x: np.ndarray, ih: np.ndarray, iw: np.ndarray) -> np.ndarray:
    """Nearest neighbour picks input values unchanged: an integer upscale (index ``o // k``) is
    one broadcast copy, anything else two gathers."""
    n, h, w, c = x.shape
    oh, ow = ih.shape[0], iw.shape[0]
    if oh % h == 0 and ow % w == 0:
        kh, kw = oh // h, ow // w
        if np.array_equal(ih, np.arange(oh) // kh) and np.array_equal(iw, np.arange(ow) // kw):
            out = np.empty((n, h, kh, w, kw, c), dtype=x.dtype)
            out[...] = x.reshape(n, h, 1, w, 1, c)
            return out.reshape(n, oh, ow, c)
    return np.ascontiguousarray(np.take(np.take(x, ih, axis=1), iw, axis=2))


def _apply(x: np.ndarray, axis: int, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    shape = [1] * x.ndim
    shape[axis] = idx.shape[0]
    out = None
    for t in range(idx.shape[1]):
        term = np.take(x, idx[:, t], axis=axis) * w[:, t].reshape(shape)
        out = term if out is None else out + term
    assert out is not None
    return np.asarray(out)


def resize(
    inputs: Sequence[np.ndarray],
    *,
    method: int = LINEAR,
    new_height: int = 0,
    new_width: int = 0,
    preserve_aspect_ratio: bool = False,
    coordinate_transform_mode: int = ASYMMETRIC,
    cubic_coeff: float = -0.75,
    exclude_outside: int = 0,
    nearest_mode: int = 0,
) -> list[np.ndarray]:
    """``Resize`` of an NHWC tensor to ``newHeight`` x ``newWidth``, or by input[1]: two ints
    (sizes) or two floats (scales, which then also drive the coordinate transform)."""
    op = "Resize"
    x = np.asarray(inputs[0])
    if x.ndim != 4:
        raise KernelError(op, f"needs a 4-D NHWC input, got {x.shape}")
    if preserve_aspect_ratio:
        raise KernelError(op, "preserveAspectRatio is not supported")
    _, h, w, _ = x.shape
    sh = sw = 0.0
    if new_height > 0 and new_width > 0:
        oh, ow = int(new_height), int(new_width)
    elif len(inputs) > 1 and inputs[1] is not None:
        v = np.asarray(inputs[1]).reshape(-1)
        if v.size == 4:
            v = v[1:3]
        if v.size != 2:
            raise KernelError(op, f"size/scale input must have 2 (or 4 NHWC) entries, got {v.size}")
        if np.issubdtype(v.dtype, np.floating):
            sh, sw = float(v[0]), float(v[1])
            oh, ow = int(np.floor(h * sh)), int(np.floor(w * sw))
        else:
            oh, ow = int(v[0]), int(v[1])
    else:
        raise KernelError(op, "needs newHeight/newWidth or a size input")
    if oh <= 0 or ow <= 0:
        raise KernelError(op, f"output size {oh}x{ow} must be positive")
    sh = sh or oh / h
    sw = sw or ow / w
    dt = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float32)
    args = (
        int(method),
        int(coordinate_transform_mode),
        int(nearest_mode),
        float(cubic_coeff),
        bool(exclude_outside),
    )
    ih, wh = _cached_table(op, h, oh, sh, *args)
    iw, ww = _cached_table(op, w, ow, sw, *args)
    if int(method) == NEAREST:
        return [_gather_nearest(x, ih[:, 0], iw[:, 0])]
    y = _apply(x.astype(dt, copy=False), 1, ih, wh.astype(dt))
    y = _apply(y, 2, iw, ww.astype(dt))
    if int(method) == NEAREST:
        return [y.astype(x.dtype)]
    return [y.astype(dt, copy=False) if dt == x.dtype else np.rint(y).astype(x.dtype)]
