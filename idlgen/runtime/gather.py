"""Gather / scatter family: Gather, GatherNd, ScatterNd, OneHot, SparseToDense."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import KernelError

__all__ = ["gather", "gather_nd", "scatter_nd", "one_hot", "sparse_to_dense"]


def _check_index(op: str, idx: np.ndarray, n: int) -> np.ndarray:
    if not np.issubdtype(idx.dtype, np.integer):
        raise KernelError(op, f"indices must be integers, got {idx.dtype}")
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise KernelError(op, f"index out of range [{-n}, {n})")
    return np.where(idx < 0, idx + n, idx)


def gather(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Gather``: inputs x, indices, axis (one-element tensor, default 0)."""
    op = "Gather"
    if len(inputs) < 2:
        raise KernelError(op, "needs x and indices")
    x, idx = np.asarray(inputs[0]), np.asarray(inputs[1])
    axis = (
        int(np.asarray(inputs[2]).reshape(-1)[0])
        if len(inputs) > 2 and inputs[2] is not None
        else 0
    )
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise KernelError(op, f"axis {axis} out of range for rank {x.ndim}")
    return [np.take(x, _check_index(op, idx, x.shape[ax]), axis=ax)]


def gather_nd(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``GatherNd``: out shape = idx.shape[:-1] + x.shape[idx.shape[-1]:]."""
    op = "GatherNd"
    x, idx = np.asarray(inputs[0]), np.asarray(inputs[1])
    k = idx.shape[-1]
    if k > x.ndim:
        raise KernelError(op, f"index depth {k} exceeds rank {x.ndim}")
    cols = [_check_index(op, idx[..., i], x.shape[i]) for i in range(k)]
    return [x[tuple(cols)]]


def scatter_nd(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``ScatterNd``: zeros(shape) with updates added at indices (duplicates accumulate, as
    MindSpore's ScatterNd documents)."""
    op = "ScatterNd"
    if len(inputs) < 3:
        raise KernelError(op, "needs indices, updates, shape")
    idx, upd = np.asarray(inputs[0]), np.asarray(inputs[1])
    shape = [int(v) for v in np.asarray(inputs[2]).reshape(-1)]
    k = idx.shape[-1]
    if k > len(shape) or upd.shape != idx.shape[:-1] + tuple(shape[k:]):
        raise KernelError(
            op,
            f"updates {upd.shape} do not match indices {idx.shape} and shape {shape}",
        )
    out = np.zeros(shape, dtype=upd.dtype)
    cols = tuple(_check_index(op, idx[..., i], shape[i]) for i in range(k))
    np.add.at(out, cols, upd)
    return [out]


def one_hot(inputs: Sequence[np.ndarray], *, axis: int = -1) -> list[np.ndarray]:
    """``OneHot``: inputs indices, depth, onValue, offValue; the new axis goes at ``axis``.
    Negative indices count from the end of depth; others out of range give offValue."""
    op = "OneHot"
    if len(inputs) < 4:
        raise KernelError(op, "needs indices, depth, onValue, offValue")
    idx = np.asarray(inputs[0])
    depth = int(np.asarray(inputs[1]).reshape(-1)[0])
    on, off = np.asarray(inputs[2]).reshape(-1)[0], np.asarray(inputs[3]).reshape(-1)[0]
    if depth <= 0:
        raise KernelError(op, f"depth must be > 0, got {depth}")
    r = idx.ndim + 1
    ax = int(axis) + r if int(axis) < 0 else int(axis)
    if not 0 <= ax < r:
        raise KernelError(op, f"axis {axis} out of range for output rank {r}")
    ii = idx.astype(np.int64)
    ii = np.where(ii < 0, ii + depth, ii)
    hot = np.expand_dims(ii, -1) == np.arange(depth)
    out = np.where(hot, on, off).astype(np.result_type(on, off))
    return [np.moveaxis(out, -1, ax)]


def sparse_to_dense(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``SparseToDense`` (TF ``sparse_to_dense``): inputs indices [N, r] (or [N]), values
    (scalar or [N]), output shape, optional default value (else 0)."""
    op = "SparseToDense"
    if len(inputs) < 3:
        raise KernelError(op, "needs indices, values, shape")
    idx = np.asarray(inputs[0])
    vals = np.asarray(inputs[1])
    shape = [int(v) for v in np.asarray(inputs[2]).reshape(-1)]
    default = (
        np.asarray(inputs[3]).reshape(-1)[0] if len(inputs) > 3 and inputs[3] is not None else 0
    )
    if idx.ndim < 2:
        idx = idx.reshape(-1, 1) if len(shape) == 1 else idx.reshape(1, -1)
    if idx.shape[1] != len(shape):
        raise KernelError(op, f"indices {idx.shape} do not address shape {shape}")
    n = idx.shape[0]
    if vals.size not in (1, n):
        raise KernelError(op, f"{vals.size} values for {n} indices")
    out = np.full(shape, default, dtype=vals.dtype)
    cols = tuple(_check_index(op, idx[:, i], shape[i]) for i in range(len(shape)))
    out[cols] = vals.reshape(-1) if vals.size == n else vals.reshape(())
    return [out]
