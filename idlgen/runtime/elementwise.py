"""Element-wise operators: unary maths, broadcasting binary arithmetic, comparisons, logic, select.

Binary ops broadcast NumPy-style; arithmetic output dtype is the promoted dtype of the inputs
(``Broadcasting`` rule of the NNRt docs); comparisons return ``bool``. Integer division and
``Mod`` follow C semantics (truncation; remainder takes the dividend's sign) as nnacl does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .activations import erf, fused
from .errors import KernelError

__all__ = [
    "abs_", "ceil", "cos", "sin", "floor", "log", "neg", "reciprocal", "round_", "rsqrt", "sqrt",
    "square", "erf_", "logical_not", "exp", "add", "sub", "mul", "div", "real_div", "maximum",
    "minimum", "mod", "squared_difference", "eltwise", "power", "equal", "not_equal", "greater",
    "greater_equal", "less", "less_equal", "logical_and", "logical_or", "bias_add", "clip",
    "prelu", "scale", "where", "select",
]  # fmt: skip


def _need(op: str, inputs: Sequence[np.ndarray], n: int) -> list[np.ndarray]:
    if len(inputs) < n:
        raise KernelError(op, f"needs {n} input(s), got {len(inputs)}")
    return [np.asarray(a) for a in inputs[:n]]


def _float_only(op: str, x: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "f":
        raise KernelError(op, f"needs a float tensor, got {x.dtype}")
    return x


def _unary(
    op: str, fn: Callable[[np.ndarray], np.ndarray], inputs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    (x,) = _need(op, inputs, 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return [np.asarray(fn(x)).astype(x.dtype, copy=False)]


def abs_(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Abs``: |x|."""
    return _unary("Abs", np.abs, inputs)


def ceil(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Ceil``."""
    return _unary("Ceil", np.ceil, inputs)


def floor(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Floor``."""
    return _unary("Floor", np.floor, inputs)


def cos(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Cos``."""
    return _unary("Cos", np.cos, inputs)


def sin(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Sin``."""
    return _unary("Sin", np.sin, inputs)


def log(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Log``: natural logarithm."""
    return _unary("Log", np.log, inputs)


def neg(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Neg``."""
    return _unary("Neg", np.negative, inputs)


def reciprocal(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Reciprocal``: 1/x."""
    return _unary("Reciprocal", lambda x: 1 / _float_only("Reciprocal", x), inputs)


def round_(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Round``: half to even (nnacl uses ``roundf``-free ``rint``)."""
    return _unary("Round", np.rint, inputs)


def rsqrt(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Rsqrt``: 1/sqrt(x)."""
    return _unary("Rsqrt", lambda x: 1 / np.sqrt(_float_only("Rsqrt", x)), inputs)


def sqrt(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Sqrt``."""
    return _unary("Sqrt", np.sqrt, inputs)


def square(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Square``: x*x."""
    return _unary("Square", np.square, inputs)


def erf_(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Erf``."""
    return _unary("Erf", lambda x: erf(_float_only("Erf", x)), inputs)


def logical_not(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``LogicalNot``."""
    (x,) = _need("LogicalNot", inputs, 1)
    return [np.logical_not(x)]


def exp(
    inputs: Sequence[np.ndarray],
    *,
    base: float = -1.0,
    scale: float = 1.0,
    shift: float = 0.0,
) -> list[np.ndarray]:
    """``ExpFusion``: base^(shift + scale*x); ``base == -1`` means e."""
    (x,) = _need("ExpFusion", inputs, 1)
    _float_only("ExpFusion", x)
    if base != -1.0 and not base > 0:
        raise KernelError("ExpFusion", f"base must be > 0 or -1 (e), got {base}")
    t = x if (scale == 1.0 and shift == 0.0) else x * x.dtype.type(scale) + x.dtype.type(shift)
    if base != -1.0:
        t = t * x.dtype.type(np.log(base))
    with np.errstate(over="ignore"):
        return [np.exp(t).astype(x.dtype, copy=False)]


def _binary(op: str, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    a, b = _need(op, inputs, 2)
    return a, b


def _arith(
    op: str,
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    inputs: Sequence[np.ndarray],
    activation: int,
) -> list[np.ndarray]:
    a, b = _binary(op, inputs)
    dt = np.result_type(a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.asarray(fn(a, b)).astype(dt, copy=False)
    return [fused(out, activation, op)]


def add(inputs: Sequence[np.ndarray], *, activation: int = 0) -> list[np.ndarray]:
    """``AddFusion``: x + y, then the fused activation."""
    return _arith("AddFusion", np.add, inputs, activation)


def sub(inputs: Sequence[np.ndarray], *, activation: int = 0) -> list[np.ndarray]:
    """``SubFusion``: x - y, then the fused activation."""
    return _arith("SubFusion", np.subtract, inputs, activation)


def mul(inputs: Sequence[np.ndarray], *, activation: int = 0) -> list[np.ndarray]:
    """``MulFusion``: x * y, then the fused activation."""
    return _arith("MulFusion", np.multiply, inputs, activation)


def _c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dt = np.result_type(a, b)
    if dt.kind in "iu":
        if np.any(b == 0):
            raise KernelError("DivFusion", "integer division by zero")
        q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
        return np.asarray(
            (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(dt)
        )
    return np.asarray(np.divide(a, b))


def div(inputs: Sequence[np.ndarray], *, activation: int = 0) -> list[np.ndarray]:
    """``DivFusion``: x / y (integers truncate toward zero), then the fused activation."""
    return _arith("DivFusion", _c_div, inputs, activation)


def real_div(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``RealDiv``: x / y."""
    return _arith("RealDiv", _c_div, inputs, 0)


def maximum(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Maximum``: element-wise max (NaN propagates)."""
    return _arith("Maximum", np.maximum, inputs, 0)


def minimum(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Minimum``: element-wise min (NaN propagates)."""
    return _arith("Minimum", np.minimum, inputs, 0)


def _c_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.result_type(a, b), np.integer) and np.any(b == 0):
        raise KernelError("Mod", "integer modulo by zero")
    return np.asarray(np.fmod(a, b))


def mod(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Mod``: C ``fmod`` remainder (sign of the dividend), as nnacl's ElementMod."""
    return _arith("Mod", _c_mod, inputs, 0)


def squared_difference(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``SquaredDifference``: (x - y)^2."""
    return _arith("SquaredDifference", lambda a, b: np.square(a - b), inputs, 0)


_ELTWISE: dict[int, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    0: np.multiply,
    1: np.add,
    2: np.maximum,
}


def eltwise(inputs: Sequence[np.ndarray], *, mode: int) -> list[np.ndarray]:
    """``Eltwise``: PROD / SUM / MAXIMUM folded over all inputs (two or more)."""
    fn = _ELTWISE.get(int(mode))
    if fn is None:
        raise KernelError("Eltwise", f"unsupported EltwiseMode {int(mode)}")
    if len(inputs) < 1:
        raise KernelError("Eltwise", "needs at least one input")
    arrs = [np.asarray(a) for a in inputs]
    dt = np.result_type(*arrs)
    out = arrs[0]
    for a in arrs[1:]:
        out = fn(out, a)
    return [np.asarray(out).astype(dt, copy=False)]


def power(
    inputs: Sequence[np.ndarray], *, scale: float = 1.0, shift: float = 0.0
) -> list[np.ndarray]:
    """``PowFusion``: (scale*x + shift)^y; the output keeps x's dtype."""
    x, y = _binary("PowFusion", inputs)
    base = x if (scale == 1.0 and shift == 0.0) else x * scale + shift
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.issubdtype(base.dtype, np.integer) and np.issubdtype(y.dtype, np.integer):
            if np.any(y < 0):
                raise KernelError("PowFusion", "integer base with a negative integer exponent")
            out = np.power(base.astype(np.int64), y.astype(np.int64))
        else:
            out = np.power(base.astype(np.float64), y.astype(np.float64))
    return [out.astype(x.dtype)]


def _compare(
    op: str,
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    inputs: Sequence[np.ndarray],
) -> list[np.ndarray]:
    a, b = _binary(op, inputs)
    return [np.asarray(fn(a, b), dtype=np.bool_)]


def equal(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Equal``."""
    return _compare("Equal", np.equal, inputs)


def not_equal(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``NotEqual``."""
    return _compare("NotEqual", np.not_equal, inputs)


def greater(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Greater``."""
    return _compare("Greater", np.greater, inputs)


def greater_equal(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``GreaterEqual``."""
    return _compare("GreaterEqual", np.greater_equal, inputs)


def less(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Less``."""
    return _compare("Less", np.less, inputs)


def less_equal(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``LessEqual``."""
    return _compare("LessEqual", np.less_equal, inputs)


def logical_and(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``LogicalAnd``."""
    return _compare("LogicalAnd", np.logical_and, inputs)


def logical_or(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``LogicalOr``."""
    return _compare("LogicalOr", np.logical_or, inputs)


def bias_add(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``BiasAdd``: x + bias along the last (channel) axis."""
    x, b = _binary("BiasAdd", inputs)
    if b.ndim != 1 or (x.ndim and b.shape[0] != x.shape[-1]):
        raise KernelError("BiasAdd", f"bias shape {b.shape} does not match channels of {x.shape}")
    return [(x + b).astype(np.result_type(x, b), copy=False)]


def clip(inputs: Sequence[np.ndarray], *, max_val: float, min_val: float) -> list[np.ndarray]:
    """``Clip``: clamp to [min, max]; an infinite bound is no bound (also for integers)."""
    (x,) = _need("Clip", inputs, 1)
    out = x
    if np.isfinite(min_val) or x.dtype.kind == "f":
        out = np.maximum(
            out,
            np.asarray(min_val).astype(x.dtype) if np.isfinite(min_val) else min_val,
        )
    if np.isfinite(max_val) or x.dtype.kind == "f":
        out = np.minimum(
            out,
            np.asarray(max_val).astype(x.dtype) if np.isfinite(max_val) else max_val,
        )
    return [np.asarray(out).astype(x.dtype, copy=False)]


def prelu(inputs: Sequence[np.ndarray], *, channel_shared: bool = False) -> list[np.ndarray]:
    """``PReLUFusion``: x >= 0 ? x : w*x with w per channel (last axis) or one shared slope."""
    x, w = _binary("PReLUFusion", inputs)
    if channel_shared:
        if w.size < 1:
            raise KernelError("PReLUFusion", "channelShared needs one slope")
        w = w.reshape(-1)[:1].reshape(())
    elif w.size == 1:
        w = w.reshape(())
    try:
        out = np.where(x >= 0, x, x * w)
    except ValueError as e:
        raise KernelError(
            "PReLUFusion", f"slope {w.shape} does not fit input {x.shape}: {e}"
        ) from None
    return [out.astype(x.dtype, copy=False)]


def scale(inputs: Sequence[np.ndarray], *, axis: int = -1, activation: int = 0) -> list[np.ndarray]:
    """``ScaleFusion``: x*scale (+bias), scale/bias aligned with x's dims from ``axis``; +act."""
    x, s = _need("ScaleFusion", inputs, 2)
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax <= x.ndim - s.ndim or x.shape[ax : ax + s.ndim] != s.shape:
        raise KernelError(
            "ScaleFusion",
            f"scale {s.shape} does not align with {x.shape} at axis {axis}",
        )
    shape = s.shape + (1,) * (x.ndim - ax - s.ndim)
    out = x * s.reshape(shape)
    if len(inputs) > 2 and inputs[2] is not None:
        out = out + np.asarray(inputs[2]).reshape(shape)
    return [fused(out.astype(x.dtype, copy=False), activation, "ScaleFusion")]


def where(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Where``: condition ? x1 : x2 with broadcasting; one input gives the true coordinates."""
    if len(inputs) == 1:
        return [np.argwhere(np.asarray(inputs[0])).astype(np.int32)]
    c, a, b = _need("Where", inputs, 3)
    return [np.where(c.astype(bool), a, b).astype(np.result_type(a, b), copy=False)]


def select(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Select`` (TF v1): a rank-1 condition picks whole rows of x1/x2 (TFLite ``select.cc``)."""
    c, a, b = _need("Select", inputs, 3)
    c = c.astype(bool)
    if c.ndim == 1 and a.ndim > 1:
        if c.shape[0] != a.shape[0]:
            raise KernelError("Select", f"rank-1 condition of {c.shape[0]} rows for x1 {a.shape}")
        c = c.reshape(c.shape + (1,) * (a.ndim - 1))
    return [np.where(c, a, b).astype(np.result_type(a, b), copy=False)]
