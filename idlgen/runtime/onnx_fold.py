"""Constant folding of ONNX nodes in NumPy: the operators that shape subgraphs and weight
preparation use (Shape -> Gather -> Concat -> Reshape, DequantizeLinear / Cast of float16 and
int8 weights, ...), with ONNX semantics, so loading does not build an ONNX reference evaluator
per constant node. ``fold`` returns None for anything it does not cover (the caller falls back
to the reference evaluator).

``too_big_to_fold`` is the size budget: a constant that would materialise more than
``FOLD_BUDGET`` elements from a small description (ConstantOfShape, Expand, Tile, Range) stays an
NNRt node that makes it at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["FOLD_BUDGET", "fold", "fold_node", "too_big_to_fold"]

#: Elements a generating operator may materialise at load time.
FOLD_BUDGET = 1 << 20

Arrays = list[np.ndarray | None]
Folder = Callable[[dict[str, Any], Arrays, int], list[np.ndarray] | None]
_FOLDS: dict[str, Folder] = {}


def _reg(*ops: str) -> Callable[[Folder], Folder]:
    def deco(fn: Folder) -> Folder:
        for op in ops:
            _FOLDS[op] = fn
        return fn

    return deco


def fold(op: str, attrs: dict[str, Any], ins: Arrays, opset: int) -> list[np.ndarray] | None:
    """The outputs of ``op`` on constant ``ins`` (None entries are absent optional inputs)."""
    fn = _FOLDS.get(op)
    if fn is None:
        return None
    try:
        return fn(attrs, ins, opset)
    except (ValueError, IndexError, TypeError):
        return None  # let the reference evaluator report it


def too_big_to_fold(op: str, ins: Arrays, out_shapes: Sequence[Any]) -> bool:
    if op not in ("ConstantOfShape", "Expand", "Tile", "Range"):
        return False
    for s in out_shapes:
        if s is not None and all(d >= 0 for d in s) and int(np.prod(s)) > FOLD_BUDGET:
            return True
    if op == "ConstantOfShape" and ins and ins[0] is not None:
        return int(np.prod(ins[0].astype(np.int64))) > FOLD_BUDGET
    return False


def _ints(a: np.ndarray | None) -> list[int]:
    return [] if a is None else [int(v) for v in np.asarray(a).reshape(-1)]


def _axes(attrs: dict[str, Any], ins: Arrays, k: int) -> list[int] | None:
    if len(ins) > k and ins[k] is not None:
        return _ints(ins[k])
    if "axes" in attrs:
        return [int(v) for v in attrs["axes"]]
    return None


def _arr(x: np.ndarray | None) -> np.ndarray:
    if x is None:
        raise ValueError("missing input")
    return np.asarray(x)


@_reg("Identity")
def _identity(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    return [_arr(x[0])]


@_reg("Cast")
def _cast(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray] | None:
    from .onnx_lite import helper

    to = np.dtype(helper.tensor_dtype_to_np_dtype(int(a["to"])))
    src = _arr(x[0])
    if to.kind not in "biuf" or src.dtype.kind not in "biuf" or int(a.get("saturate", 1)) == 0:
        return None
    if src.dtype.kind == "f" and to.kind in "iu":
        return None  # out-of-range float -> int casts are implementation-defined
    with np.errstate(over="ignore", invalid="ignore"):
        return [src.astype(to)]


@_reg("Reshape")
def _reshape(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src = _arr(x[0])
    dims = _ints(x[1]) if len(x) > 1 else [int(v) for v in a.get("shape", [])]
    if not int(a.get("allowzero", 0)):
        dims = [src.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return [src.reshape(dims)]


@_reg("Unsqueeze")
def _unsqueeze(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray] | None:
    src, axes = _arr(x[0]), _axes(a, x, 1)
    if axes is None:
        return None
    r = src.ndim + len(axes)
    return [np.expand_dims(src, tuple(sorted(ax + r if ax < 0 else ax for ax in axes)))]


@_reg("Squeeze")
def _squeeze(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src, axes = _arr(x[0]), _axes(a, x, 1)
    if not axes:
        return [np.squeeze(src)]
    return [np.squeeze(src, axis=tuple(ax + src.ndim if ax < 0 else ax for ax in axes))]


@_reg("Flatten")
def _flatten(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src = _arr(x[0])
    ax = int(a.get("axis", 1))
    ax = ax + src.ndim if ax < 0 else ax
    return [src.reshape(int(np.prod(src.shape[:ax])), -1)]


@_reg("Transpose")
def _transpose(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src = _arr(x[0])
    perm = [int(p) for p in a["perm"]] if "perm" in a else None
    return [np.ascontiguousarray(np.transpose(src, perm))]


@_reg("Concat")
def _concat(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    return [np.concatenate([np.asarray(v) for v in x if v is not None], axis=int(a["axis"]))]


@_reg("Gather")
def _gather(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src, idx = _arr(x[0]), _arr(x[1]).astype(np.int64)
    ax = int(a.get("axis", 0))
    ax = ax + src.ndim if ax < 0 else ax
    n = src.shape[ax]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range")
    return [np.take(src, np.where(idx < 0, idx + n, idx), axis=ax)]


@_reg("Slice")
def _slice(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src = _arr(x[0])
    if len(x) == 1:
        starts, ends = [int(v) for v in a["starts"]], [int(v) for v in a["ends"]]
        axes = [int(v) for v in a.get("axes", range(len(starts)))]
        steps = [1] * len(starts)
    else:
        starts, ends = _ints(x[1]), _ints(x[2])
        axes = _ints(x[3]) if len(x) > 3 and x[3] is not None else list(range(len(starts)))
        steps = _ints(x[4]) if len(x) > 4 and x[4] is not None else [1] * len(starts)
    idx: list[slice] = [slice(None)] * src.ndim
    for ax, s, e, st in zip(axes, starts, ends, steps):
        ax = ax + src.ndim if ax < 0 else ax
        n = src.shape[ax]
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), n), min(max(e, 0), n)
            idx[ax] = slice(s, e, st)
        else:
            s, e = min(max(s, 0), n - 1), min(max(e, -1), n - 1)
            idx[ax] = slice(s, None if e < 0 else e, st)
    return [src[tuple(idx)]]


_BIN = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal,
        "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
        "GreaterOrEqual": np.greater_equal, "And": np.logical_and, "Or": np.logical_or,
        "Xor": np.logical_xor}  # fmt: skip


@_reg("Div")
def _div(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray] | None:
    p, q = _arr(x[0]), _arr(x[1])
    if p.dtype != q.dtype:
        return None
    if p.dtype.kind in "iu":
        if np.any(q == 0):
            return None  # undefined in ONNX: leave it to the reference
        # integer division truncates toward zero in ONNX (floor division does not)
        quot = np.floor_divide(p, q)
        fix = (np.remainder(p, q) != 0) & ((p < 0) != (q < 0))
        return [np.asarray(quot + fix.astype(p.dtype), dtype=p.dtype)]
    if p.dtype.kind != "f":
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return [np.divide(p, q)]


_UN = {"Neg": np.negative, "Abs": np.abs, "Sqrt": np.sqrt, "Floor": np.floor, "Ceil": np.ceil,
       "Not": np.logical_not, "Reciprocal": np.reciprocal, "Exp": np.exp, "Log": np.log,
       "Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Tanh": np.tanh}  # fmt: skip

# Reductions: (NumPy function, first opset whose axes come as an input instead of an attribute).
_REDUCE: dict[str, tuple[Callable[..., Any], int]] = {"ReduceSum": (np.sum, 13), "ReduceProd": (np.prod, 18), "ReduceMax": (np.max, 18),
           "ReduceMin": (np.min, 18), "ReduceMean": (np.mean, 18)}  # fmt: skip


def _reduce(op: str, a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray] | None:
    fn, axes_input_from = _REDUCE[op]
    data = _arr(x[0])
    if opset >= axes_input_from:
        axes = _ints(x[1]) if len(x) > 1 and x[1] is not None else []
    else:
        axes = [int(v) for v in a.get("axes", [])]
    keep = bool(a.get("keepdims", 1))
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            return [data]
        axes = list(range(data.ndim))
    if data.size == 0 and op in ("ReduceMax", "ReduceMin", "ReduceMean"):
        return None  # empty reductions: the reference's conventions
    ax = tuple(v % data.ndim for v in axes) if data.ndim else ()
    out = fn(data, axis=ax, keepdims=keep)
    return [np.asarray(out, dtype=data.dtype)]


@_reg("ScatterElements", "Scatter")
def _scatter_elements(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray] | None:
    data, idx, upd = _arr(x[0]).copy(), _arr(x[1]).astype(np.int64), _arr(x[2])
    if idx.shape != upd.shape or idx.ndim != data.ndim:
        return None
    axis = int(a.get("axis", 0)) % max(data.ndim, 1)
    size = data.shape[axis]
    if np.any((idx < -size) | (idx >= size)):
        return None
    idx = np.where(idx < 0, idx + size, idx)
    grid: list[Any] = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    where = tuple(np.broadcast_arrays(*grid))
    red = a.get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else str(red)
    ufunc = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}.get(red)
    if red == "none":
        data[where] = upd
    elif ufunc is not None:
        ufunc.at(data, where, upd.astype(data.dtype))
    else:
        return None
    return [data]


@_reg("Where")
def _where(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    return [np.where(_arr(x[0]), _arr(x[1]), _arr(x[2]))]


@_reg("Shape")
def _shape(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    shape = _arr(x[0]).shape
    r = len(shape)
    s, e = int(a.get("start", 0)), int(a.get("end", r))
    s = min(max(s + r if s < 0 else s, 0), r)
    e = min(max(e + r if e < 0 else e, 0), r)
    return [np.array(shape[s:e], np.int64)]


@_reg("Size")
def _size(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    return [np.array(_arr(x[0]).size, np.int64)]


@_reg("ConstantOfShape")
def _constant_of_shape(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    from .onnx_lite import numpy_helper

    value = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    return [np.full(_ints(x[0]), value.reshape(-1)[0], dtype=value.dtype)]


@_reg("Range")
def _range(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    s, lim, d = (_arr(v).reshape(()) for v in x[:3])
    dt = s.dtype
    n = max(int(np.ceil((lim.item() - s.item()) / d.item())), 0)
    return [(s + np.arange(n, dtype=dt) * d).astype(dt)]


@_reg("Expand")
def _expand(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    src = _arr(x[0])
    shape = np.broadcast_shapes(src.shape, tuple(_ints(x[1])))
    return [np.array(np.broadcast_to(src, shape))]


@_reg("Tile")
def _tile(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray]:
    return [np.tile(_arr(x[0]), _ints(x[1]))]


@_reg("DequantizeLinear")
def _dequantize(a: dict[str, Any], x: Arrays, opset: int) -> list[np.ndarray] | None:
    q, scale = _arr(x[0]), _arr(x[1])
    zp = np.asarray(x[2]) if len(x) > 2 and x[2] is not None else None
    if q.dtype.kind not in "iu" or int(a.get("block_size", 0)) or scale.dtype.kind != "f":
        return None
    shape = [1] * q.ndim
    if scale.size > 1:
        ax = int(a.get("axis", 1))
        shape[ax + q.ndim if ax < 0 else ax] = scale.size
    d = q.astype(np.int32)
    if zp is not None:
        d = d - zp.astype(np.int32).reshape(shape if zp.size > 1 else ())
    # (q - zp) is exact in float32 and the product with a float32/float16 scale is rounded once.
    out = d.astype(np.float32) * scale.astype(np.float32).reshape(shape if scale.size > 1 else ())
    return [out.astype(scale.dtype)]


def fold_node(op: str, attrs: dict[str, Any], ins: Arrays, opset: int) -> list[np.ndarray] | None:
    """``fold`` including the operators dispatched by name (elementwise families)."""
    if op in _BIN and len(ins) == 2 and ins[0] is not None and ins[1] is not None:
        p, q = np.asarray(ins[0]), np.asarray(ins[1])
        if op in ("Add", "Sub", "Mul") and p.dtype != q.dtype:
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            return [np.asarray(_BIN[op](p, q))]
    if op in _UN and len(ins) == 1 and ins[0] is not None:
        src = np.asarray(ins[0])
        if op not in ("Not", "Neg", "Abs") and src.dtype.kind != "f":
            return None
        with np.errstate(all="ignore"):
            return [np.asarray(_UN[op](src))]
    if op in _REDUCE and ins and ins[0] is not None:
        try:
            return _reduce(op, attrs, ins, opset)
        except (ValueError, IndexError, TypeError):
            return None
    if op in ("Max", "Min") and ins and all(v is not None for v in ins):
        arrs = [np.asarray(v) for v in ins]
        if len({a.dtype for a in arrs}) != 1:
            return None
        f = np.maximum if op == "Max" else np.minimum
        out = arrs[0]
        for v in arrs[1:]:
            out = f(out, v)
        return [np.asarray(out)]
    return fold(op, attrs, ins, opset)
