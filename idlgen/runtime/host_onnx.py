"""Host kernels for ONNX operators NNRt v2_1 has no operator for (NumPy, ONNX semantics as
onnxruntime computes them; see :mod:`.host`).

``KERNELS[op](node, attrs, inputs) -> HostKernel | None`` binds a node's attributes; ``op`` is
the ONNX op type, prefixed by its domain outside the default one (``ai.onnx.ml.Normalizer``).
``inputs`` are the importer's values (dtype, logical shape). None means "no hand-written kernel
for this form": the importer falls back to the ONNX reference implementation.

- ``GridSample`` (opset 16 ``bilinear``/``nearest``/``bicubic`` and opset 20 ``linear``/``cubic``
  spellings; ``zeros``/``border``/``reflection`` padding; ``align_corners``), 4-D;
- ``ai.onnx.ml.LinearClassifier`` (multi-class; post transforms NONE, LOGISTIC, SOFTMAX,
  SOFTMAX_ZERO) and ``ai.onnx.ml.Normalizer`` (MAX, L1, L2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .host import HostKernel

__all__ = ["KERNELS", "grid_sample"]

Maker = Callable[[Any, dict[str, Any], list[Any]], HostKernel | None]
KERNELS: dict[str, Maker] = {}


def _kernel(*ops: str) -> Callable[[Maker], Maker]:
    def deco(fn: Maker) -> Maker:
        for op in ops:
            KERNELS[op] = fn
        return fn

    return deco


# --- GridSample ------------------------------------------------------------------------------

_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest", "bicubic": "cubic",
          "cubic": "cubic"}  # fmt: skip


def _reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Fold coordinates outside [lo, hi] back inside, mirroring at the bounds."""
    rng = hi - lo
    if rng <= 0:
        return np.full_like(x, lo)
    below = x < lo
    above = x > hi
    d = np.where(below, lo - x, np.where(above, x - hi, 0.0))
    n = np.floor(d / rng)
    r = d - n * rng
    even = (n.astype(np.int64) % 2) == 0
    low_side = np.where(even, lo + r, hi - r)
    high_side = np.where(even, hi - r, lo + r)
    return np.where(below, low_side, np.where(above, high_side, x))


def _cubic_coeffs(t: np.ndarray, a: float = -0.75) -> list[np.ndarray]:
    def near(s: np.ndarray) -> np.ndarray:
        return np.asarray(((a + 2) * s - (a + 3)) * s * s + 1)

    def far(s: np.ndarray) -> np.ndarray:
        return np.asarray(((a * s - 5 * a) * s + 8 * a) * s - 4 * a)

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(
    x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align_corners: bool
) -> np.ndarray:
    """ONNX GridSample on ``x`` [N, C, H, W] at ``grid`` [N, Ho, Wo, 2] (x, y in [-1, 1])."""
    n, c, h, w = x.shape
    gx = grid[..., 0].astype(np.float64)
    gy = grid[..., 1].astype(np.float64)
    if align_corners:
        fx, fy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
        bx, by = (0.0, w - 1.0), (0.0, h - 1.0)
    else:
        fx, fy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
        bx, by = (-0.5, w - 0.5), (-0.5, h - 0.5)
    if mode == "nearest":
        fx, fy = np.rint(fx), np.rint(fy)
    if mode == "cubic":
        pass  # the 4x4 taps are padded one by one, the coordinate stays where it is
    elif padding == "border":
        fx, fy = np.clip(fx, 0, w - 1), np.clip(fy, 0, h - 1)
    elif padding == "reflection":
        fx, fy = _reflect(fx, *bx), _reflect(fy, *by)
    batch = np.arange(n).reshape(n, 1, 1)
    xf = x.astype(np.float64)

    def at(r: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Pixels [N, Ho, Wo, C] at integer rows/cols, padded as ``padding`` says."""
        if padding == "zeros":
            inside = (r >= 0) & (r < h) & (col >= 0) & (col < w)
            rr, cc = np.clip(r, 0, h - 1), np.clip(col, 0, w - 1)
            v = xf[batch, :, rr, cc]
            return np.where(inside[..., None], v, 0.0)
        if padding == "border":
            r, col = np.clip(r, 0, h - 1), np.clip(col, 0, w - 1)
        else:
            col = _reflect(col.astype(np.float64), *bx).astype(np.int64)
            r = _reflect(r.astype(np.float64), *by).astype(np.int64)
            r, col = np.clip(r, 0, h - 1), np.clip(col, 0, w - 1)
        return xf[batch, :, r, col]

    if mode == "nearest":
        out = at(fy.astype(np.int64), fx.astype(np.int64))
    elif mode == "linear":
        x0, y0 = np.floor(fx), np.floor(fy)
        tx, ty = (fx - x0)[..., None], (fy - y0)[..., None]
        x0i, y0i = x0.astype(np.int64), y0.astype(np.int64)
        out = (
            at(y0i, x0i) * (1 - tx) * (1 - ty)
            + at(y0i, x0i + 1) * tx * (1 - ty)
            + at(y0i + 1, x0i) * (1 - tx) * ty
            + at(y0i + 1, x0i + 1) * tx * ty
        )
    else:
        x0, y0 = np.floor(fx) - 1, np.floor(fy) - 1
        cx = _cubic_coeffs(fx - x0 - 1)
        cy = _cubic_coeffs(fy - y0 - 1)
        x0i, y0i = x0.astype(np.int64), y0.astype(np.int64)
        out = np.zeros((n,) + fx.shape[1:] + (c,))
        for i in range(4):
            row = sum(at(y0i + i, x0i + j) * cx[j][..., None] for j in range(4))
            out = out + row * cy[i][..., None]
    return np.ascontiguousarray(np.moveaxis(out, -1, 1)).astype(x.dtype)


@_kernel("GridSample")
def _grid_sample(node: Any, a: dict[str, Any], ins: list[Any]) -> HostKernel | None:
    mode = _MODES.get(str(a.get("mode", "linear")))  # default: "bilinear" <= 19, "linear" >= 20
    padding = str(a.get("padding_mode", "zeros"))
    align = bool(int(a.get("align_corners", 0)))
    xv = ins[0] if ins else None
    if mode is None or padding not in ("zeros", "border", "reflection"):
        return None
    if xv is not None and xv.shape is not None and len(xv.shape) != 4:
        return None  # 3-D (volumetric) GridSample: the reference implementation runs it

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        assert mode is not None
        return [grid_sample(np.asarray(arrays[0]), np.asarray(arrays[1]), mode, padding, align)]

    return fn


# --- ai.onnx.ml ------------------------------------------------------------------------------


def _post(scores: np.ndarray, how: str) -> np.ndarray | None:
    if how == "NONE":
        return scores
    if how == "LOGISTIC":
        return np.asarray(1.0 / (1.0 + np.exp(-scores)))
    if how in ("SOFTMAX", "SOFTMAX_ZERO"):
        m = scores.max(axis=1, keepdims=True)
        e = np.exp(scores - m)
        if how == "SOFTMAX_ZERO":
            e = np.where(scores == 0, 0.0, e)
        s = e.sum(axis=1, keepdims=True)
        return np.asarray(np.divide(e, s, out=np.zeros_like(e), where=s != 0))
    return None


@_kernel("ai.onnx.ml.LinearClassifier")
def _linear_classifier(node: Any, a: dict[str, Any], ins: list[Any]) -> HostKernel | None:
    coef = np.asarray(a.get("coefficients", []), np.float32)
    inter = np.asarray(a.get("intercepts", []), np.float32)
    ints = list(a.get("classlabels_ints") or [])
    strs = [
        s.decode() if isinstance(s, bytes) else str(s) for s in a.get("classlabels_strings") or []
    ]
    labels: np.ndarray = np.asarray(ints, np.int64) if ints else np.asarray(strs, dtype=object)
    how = str(a.get("post_transform", "NONE"))
    k = inter.size or len(labels)
    if k < 2 or len(labels) != k or how not in ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"):
        return None  # binary (one score column) and PROBIT: the reference implementation
    if int(a.get("multi_class", 0)):
        return None

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(arrays[0], np.float32)
        x = x.reshape(1, -1) if x.ndim == 1 else x
        nf = x.shape[1]
        w = coef[: k * nf].reshape(k, nf)  # onnxruntime reads [classes, features] row-major
        scores = x @ w.T
        if inter.size:
            scores = scores + inter
        label = labels[np.argmax(scores, axis=1)]
        post = _post(scores.astype(np.float32), how)
        assert post is not None
        return [np.asarray(label), np.asarray(post, np.float32)]

    return fn


@_kernel("ai.onnx.ml.Normalizer")
def _normalizer(node: Any, a: dict[str, Any], ins: list[Any]) -> HostKernel | None:
    norm = str(a.get("norm", "MAX"))
    if norm not in ("MAX", "L1", "L2"):
        return None

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(arrays[0]).astype(np.float32)
        rows = x.reshape(1, -1) if x.ndim == 1 else x
        if norm == "MAX":
            d = rows.max(axis=1, keepdims=True)
        elif norm == "L1":
            d = np.abs(rows).sum(axis=1, keepdims=True)
        else:
            d = np.sqrt((rows * rows).sum(axis=1, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = rows / d
        return [out.reshape(x.shape).astype(np.float32)]

    return fn
