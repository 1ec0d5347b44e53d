"""Reductions: ReduceFusion, All, ArgMaxFusion, TopKFusion. Index outputs are int32 (nnacl)."""

from __future__ import annotations

from collections.abc import Sequence

from typing import Any, cast

import numpy as np

from .errors import KernelError

__all__ = ["reduce", "all_", "argmax", "topk"]


def _axes(op: str, inputs: Sequence[np.ndarray], ndim: int) -> tuple[int, ...]:
    if len(inputs) < 2 or inputs[1] is None or np.asarray(inputs[1]).size == 0:
        return tuple(range(ndim))
    out = []
    for a in np.asarray(inputs[1]).reshape(-1):
        ax = int(a) + ndim if int(a) < 0 else int(a)
        if not 0 <= ax < ndim:
            raise KernelError(op, f"axis {int(a)} out of range for rank {ndim}")
        out.append(ax)
    return tuple(sorted(set(out)))


def _low(dt: np.dtype[np.generic]) -> float | int:
    if dt == np.bool_:
        return False
    return -np.inf if np.issubdtype(dt, np.floating) else int(np.iinfo(cast(Any, dt)).min)


def _high(dt: np.dtype[np.generic]) -> float | int:
    if dt == np.bool_:
        return True
    return np.inf if np.issubdtype(dt, np.floating) else int(np.iinfo(cast(Any, dt)).max)


def reduce(
    inputs: Sequence[np.ndarray],
    *,
    keep_dims: bool = False,
    mode: int = 0,
    reduce_to_end: bool = False,
    coeff: float = 1.0,
) -> list[np.ndarray]:
    """``ReduceFusion``: axes from input[1] (empty = all). ``reduceToEnd`` reduces from the first
    axis to the last and multiplies the result by ``coeff``. Modes MEAN MAX MIN PROD SUM
    SUM_SQUARE ASUM ALL L2; an empty reduction gives the identity (0, 1, ±inf)."""
    op = "ReduceFusion"
    x = np.asarray(inputs[0])
    axes = _axes(op, inputs, x.ndim)
    if reduce_to_end:
        axes = tuple(range(axes[0], x.ndim)) if axes else ()
    kd = bool(keep_dims)
    m = int(mode)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if m == 0:
            y = np.mean(
                x,
                axis=axes,
                keepdims=kd,
                dtype=np.float64 if x.dtype == np.float64 else None,
            )
        elif m == 1:
            y = np.max(x, axis=axes, keepdims=kd, initial=_low(x.dtype))
        elif m == 2:
            y = np.min(x, axis=axes, keepdims=kd, initial=_high(x.dtype))
        elif m == 3:
            y = np.prod(x, axis=axes, keepdims=kd)
        elif m == 4:
            y = np.sum(x, axis=axes, keepdims=kd)
        elif m == 5:
            y = np.sum(np.square(x), axis=axes, keepdims=kd)
        elif m == 6:
            y = np.sum(np.abs(x), axis=axes, keepdims=kd)
        elif m == 7:
            y = np.all(x, axis=axes, keepdims=kd)
        elif m == 8:
            y = np.sqrt(np.sum(np.square(x.astype(np.float64)), axis=axes, keepdims=kd))
        else:
            raise KernelError(op, f"unsupported ReduceMode {m}")
    y = np.asarray(y)
    if reduce_to_end and m != 7:
        y = y * coeff
    return [y.astype(x.dtype, copy=False) if m != 7 else y]


def all_(inputs: Sequence[np.ndarray], *, keep_dims: int = 0) -> list[np.ndarray]:
    """``All``: logical AND over the axes in input[1] (empty = all)."""
    x = np.asarray(inputs[0])
    return [np.all(x, axis=_axes("All", inputs, x.ndim), keepdims=bool(keep_dims))]


def _desc_order(x: np.ndarray, axis: int) -> np.ndarray:
    """Indices sorting ``x`` descending along ``axis``, ties by lower index first."""
    key = x.astype(np.int64) if np.issubdtype(x.dtype, np.unsignedinteger) else x
    if key.dtype == np.bool_:
        key = key.astype(np.int8)
    return np.argsort(-key, axis=axis, kind="stable")


def argmax(
    inputs: Sequence[np.ndarray],
    *,
    axis: int = 0,
    top_k: int = 1,
    keep_dims: bool = False,
    out_max_value: bool = False,
) -> list[np.ndarray]:
    """``ArgMaxFusion``: first-occurrence argmax (or the top ``topK``) along ``axis``;
    ``outMaxValue`` returns the values instead of the indices."""
    op = "ArgMaxFusion"
    x = np.asarray(inputs[0])
    ax = int(axis) + x.ndim if int(axis) < 0 else int(axis)
    if not 0 <= ax < x.ndim:
        raise KernelError(op, f"axis {axis} out of range for rank {x.ndim}")
    k = max(int(top_k), 1)
    if k > x.shape[ax]:
        raise KernelError(op, f"topK {k} larger than dim {x.shape[ax]}")
    if k == 1:
        idx = np.expand_dims(np.argmax(x, axis=ax), ax)
    else:
        idx = np.take(_desc_order(x, ax), np.arange(k), axis=ax)
    out = np.take_along_axis(x, idx, axis=ax) if out_max_value else idx.astype(np.int32)
    if not keep_dims and k == 1:
        out = np.squeeze(out, axis=ax)
    return [out]


def topk(inputs: Sequence[np.ndarray], *, sorted: bool = True, axis: int = -1) -> list[np.ndarray]:
    """``TopKFusion``: k from input[1]; the largest k values and int32 indices along ``axis``
    (ties: lower index first). The HDI drops FBS ``largest``, so largest is assumed."""
    op = "TopKFusion"
    x = np.asarray(inputs[0])
    if len(inputs) < 2:
        raise KernelError(op, "needs k as input[1]")
    k = int(np.asarray(inputs[1]).reshape(-1)[0])
    ax = int(axis) + x.ndim if int(axis) < 0 else int(axis)
    if not 0 <= ax < x.ndim or not 0 <= k <= x.shape[ax]:
        raise KernelError(op, f"k={k} / axis={axis} invalid for shape {x.shape}")
    idx = np.take(_desc_order(x, ax), np.arange(k), axis=ax)
    return [np.take_along_axis(x, idx, axis=ax), idx.astype(np.int32)]
