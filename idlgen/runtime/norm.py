"""Normalisation family: FusedBatchNorm, InstanceNorm, LayerNormFusion, LRN, L2NormalizeFusion,
Softmax, LogSoftmax. Channel-wise parameters act on the last (NHWC channel) axis."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .activations import fused
from .errors import KernelError

__all__ = [
    "batch_norm",
    "instance_norm",
    "layer_norm",
    "lrn",
    "l2_normalize",
    "softmax",
    "log_softmax",
]


def _axis(op: str, axis: int, ndim: int) -> int:
    ax = int(axis) + ndim if int(axis) < 0 else int(axis)
    if not 0 <= ax < max(ndim, 1):
        raise KernelError(op, f"axis {axis} out of range for rank {ndim}")
    return ax


def _float(op: str, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise KernelError(op, f"needs a float tensor, got {x.dtype}")
    return x


def batch_norm(inputs: Sequence[np.ndarray], *, epsilon: float = 1e-4) -> list[np.ndarray]:
    """``FusedBatchNorm`` (inference): inputs x, scale, offset, mean, variance on the last axis."""
    op = "FusedBatchNorm"
    if len(inputs) < 5:
        raise KernelError(op, f"needs x, scale, offset, mean, variance; got {len(inputs)} inputs")
    x = _float(op, inputs[0])
    s, b, m, v = (np.asarray(a).reshape(-1) for a in inputs[1:5])
    c = x.shape[-1]
    if any(a.size != c for a in (s, b, m, v)):
        raise KernelError(op, f"per-channel parameters must have {c} entries")
    inv = s / np.sqrt(v + np.float32(epsilon))
    return [(x * inv + (b - m * inv)).astype(x.dtype, copy=False)]


def instance_norm(inputs: Sequence[np.ndarray], *, epsilon: float = 1e-5) -> list[np.ndarray]:
    """``InstanceNorm``: per instance and channel (last axis), statistics over the spatial axes."""
    op = "InstanceNorm"
    if len(inputs) < 3:
        raise KernelError(op, "needs x, scale, bias")
    x = _float(op, inputs[0])
    if x.ndim < 3:
        raise KernelError(op, f"needs rank >= 3 (N, spatial..., C), got {x.shape}")
    s, b = np.asarray(inputs[1]).reshape(-1), np.asarray(inputs[2]).reshape(-1)
    axes = tuple(range(1, x.ndim - 1))
    mean = x.mean(axis=axes, keepdims=True)
    var = np.square(x - mean).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + np.float32(epsilon)) * s + b
    return [y.astype(x.dtype, copy=False)]


def layer_norm(
    inputs: Sequence[np.ndarray],
    *,
    begin_norm_axis: int = -1,
    epsilon: float = 1e-5,
    elementwise_affine: bool = True,
    begin_params_axis: int = -1,
) -> list[np.ndarray]:
    """``LayerNormFusion``: normalise over ``[beginNormAxis, rank)``; gamma/beta shaped
    ``x.shape[beginParamsAxis:]``. Outputs y, mean and variance (MindSpore's three outputs,
    statistics with kept dims)."""
    op = "LayerNormFusion"
    x = _float(op, inputs[0])
    na = _axis(op, begin_norm_axis, x.ndim)
    pa = _axis(op, begin_params_axis, x.ndim)
    axes = tuple(range(na, x.ndim))
    fast = _layer_norm_rows(x, na, pa, epsilon, inputs)
    if fast is not None:
        return fast
    # Statistics accumulate in float64; the element-wise passes stay in x's dtype.
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float64).astype(x.dtype)
    d = x - mean
    var = np.square(d).mean(axis=axes, keepdims=True, dtype=np.float64)
    # d is ours: scale, gamma and beta are applied in place (same operations, no temporaries).
    y = np.multiply(d, (1.0 / np.sqrt(var + epsilon)).astype(x.dtype), out=d)
    if len(inputs) > 1 and inputs[1] is not None:
        gshape = x.shape[pa:]
        g = np.asarray(inputs[1])
        if g.size != math.prod(gshape):
            raise KernelError(op, f"gamma {g.shape} does not match x.shape[{pa}:] = {gshape}")
        if np.result_type(y, g) == y.dtype:
            y *= g.reshape(gshape)
        else:
            y = y * g.reshape(gshape)
        if len(inputs) > 2 and inputs[2] is not None:
            bb = np.asarray(inputs[2]).reshape(gshape)
            if np.result_type(y, bb) == y.dtype:
                y += bb
            else:
                y = y + bb
    elif elementwise_affine:
        raise KernelError(op, "elementwiseAffine is set but gamma/beta inputs are missing")
    return [y.astype(x.dtype, copy=False), mean.astype(x.dtype), var.astype(x.dtype)]


_INV_N: dict[tuple[int, str], np.ndarray] = {}


def _inv_n(n: int, dt: type) -> np.ndarray:
    """A read-only vector of 1/n: row means as one matrix-vector product."""
    key = (n, np.dtype(dt).str)
    v = _INV_N.get(key)
    if v is None:
        if len(_INV_N) > 64:
            _INV_N.clear()
        v = _INV_N[key] = np.full(n, 1.0 / n, dtype=dt)
        v.flags.writeable = False
    return v


def _layer_norm_rows(
    x: np.ndarray, na: int, pa: int, eps: float, inputs: Sequence[np.ndarray]
) -> list[np.ndarray] | None:
    """float32 LayerNorm over trailing axes with gamma/beta over the same axes: the rows are a
    C-contiguous matrix, so the row statistics are BLAS matrix-vector products (float64 for the
    mean, whose cancellation matters; the variance of the centred rows is well conditioned)."""
    if x.dtype != np.float32 or na != pa or not x.flags.c_contiguous or x.size == 0:
        return None
    gamma = np.asarray(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else None
    beta = np.asarray(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else None
    n = math.prod(x.shape[na:])
    for p in (gamma, beta):
        if p is None or p.size != n or p.dtype != np.float32:
            return None
    assert gamma is not None and beta is not None
    x2 = x.reshape(-1, n)
    mean = (x2 @ _inv_n(n, np.float64)).astype(np.float32)
    d = np.subtract(x2, mean[:, None])
    sq = np.square(d)
    var = sq @ _inv_n(n, np.float32)
    inv = np.sqrt(var.astype(np.float64) + eps)
    np.divide(1.0, inv, out=inv)
    d *= inv.astype(np.float32)[:, None]
    d *= gamma.reshape(n)
    d += beta.reshape(n)
    kept = x.shape[:na] + (1,) * (x.ndim - na)
    return [d.reshape(x.shape), mean.reshape(kept), var.reshape(kept)]


def lrn(
    inputs: Sequence[np.ndarray],
    *,
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    norm_region: str = "ACROSS_CHANNELS",
) -> list[np.ndarray]:
    """``LRN`` across channels (last axis), TF form: x / (bias + alpha * sum_{c-r..c+r} x^2)^beta."""
    op = "LRN"
    if norm_region and norm_region.upper() not in (
        "ACROSS_CHANNELS",
        "ACROSS_CHNNEL",
        "ACROSS_CHANNEL",
    ):
        raise KernelError(op, f"normRegion {norm_region!r} is not supported (only ACROSS_CHANNELS)")
    x = _float(op, inputs[0])
    r = int(depth_radius)
    if r < 0:
        raise KernelError(op, f"depthRadius must be >= 0, got {r}")
    sq = np.square(x.astype(np.float64))
    c = x.shape[-1]
    cs = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(sq, axis=-1)], axis=-1)
    idx = np.arange(c)
    hi = np.minimum(idx + r + 1, c)
    lo = np.maximum(idx - r, 0)
    s = cs[..., hi] - cs[..., lo]
    return [(x / np.power(bias + alpha * s, beta)).astype(x.dtype)]


def l2_normalize(
    inputs: Sequence[np.ndarray],
    *,
    axis: Sequence[int] = (),
    epsilon: float = 1e-4,
    activation: int = 0,
) -> list[np.ndarray]:
    """``L2NormalizeFusion``: x / sqrt(max(sum(x^2 over axes), epsilon)) (TFLite ``l2norm``);
    an all-zero slice with epsilon 0 gives 0, not NaN. Empty ``axis`` = all axes."""
    op = "L2NormalizeFusion"
    x = _float(op, inputs[0])
    axes = (
        tuple(sorted({_axis(op, a, x.ndim) for a in axis})) if len(axis) else tuple(range(x.ndim))
    )
    ss = np.square(x.astype(np.float64)).sum(axis=axes, keepdims=True)
    den = np.sqrt(np.maximum(ss, epsilon))
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(den > 0, x / np.where(den > 0, den, 1), 0.0)
    return [fused(y.astype(x.dtype), activation, op)]


def _one_axis(op: str, axis: Sequence[int] | int, ndim: int) -> int:
    if isinstance(axis, int):
        return _axis(op, axis, ndim)
    vals = list(axis)
    if not vals:
        return max(ndim - 1, 0)
    if len(vals) != 1:
        raise KernelError(op, f"exactly one axis is supported, got {vals}")
    return _axis(op, vals[0], ndim)


def softmax(inputs: Sequence[np.ndarray], *, axis: Sequence[int] = (-1,)) -> list[np.ndarray]:
    """``Softmax`` along ``axis[0]``."""
    x = _float("Softmax", inputs[0])
    ax = _one_axis("Softmax", axis, x.ndim)
    fast = _softmax_global_shift(x, ax)
    if fast is not None:
        return [fast]
    e = np.subtract(x, x.max(axis=ax, keepdims=True))
    np.exp(e, out=e)
    e /= e.sum(axis=ax, keepdims=True)
    return [e]


# A row whose largest exp(x - global max) sums below this is shifted by its own max instead.
_TINY_SUM = 1e-20


def _softmax_global_shift(x: np.ndarray, ax: int) -> np.ndarray | None:
    """Softmax along the last axis shifted by the tensor's global maximum (one SIMD reduction,
    where a per-row max along a short last axis is NumPy's slowest reduction). Softmax does not
    depend on the shift; any row that the global shift would underflow (sum below
    ``_TINY_SUM``: its largest term no longer a full-precision normal float) makes this return
    None and the caller uses per-row maxima."""
    if ax != x.ndim - 1 or x.dtype != np.float32 or x.size == 0 or not x.flags.c_contiguous:
        return None
    m = x.max()
    if not np.isfinite(m):
        return None
    n = x.shape[-1]
    e = np.subtract(x, m)
    np.exp(e, out=e)
    s = e.reshape(-1, n) @ np.ones(n, dtype=e.dtype)  # row sums as one BLAS gemv
    if not s.min() >= _TINY_SUM:  # also catches NaN
        return None
    np.divide(1.0, s, out=s)
    e2 = e.reshape(-1, n)
    e2 *= s[:, None]
    return np.asarray(e)


def log_softmax(inputs: Sequence[np.ndarray], *, axis: int = -1) -> list[np.ndarray]:
    """``LogSoftmax`` along ``axis``."""
    x = _float("LogSoftmax", inputs[0])
    ax = _one_axis("LogSoftmax", axis, x.ndim)
    z = x - x.max(axis=ax, keepdims=True)
    return [z - np.log(np.exp(z).sum(axis=ax, keepdims=True))]
