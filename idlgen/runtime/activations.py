"""The one activation table, shared by ``Activation`` and every fused ``activationType``.

Formulas follow MindSpore Lite's nnacl ``activation_fp32.c`` (normative for NNRt) as summarised in
the IDL ``ActivationType`` documentation. THRESHOLDRELU is ``x > alpha ? x : 0``: MindSpore Lite's
own delegates lower it to TensorRT's ``kTHRESHOLDED_RELU`` with ``alpha`` as the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import KernelError

__all__ = [
    "ActivationSpec",
    "ACTIVATIONS",
    "ACTIVATION_NAMES",
    "apply_activation",
    "erf",
    "fused",
    "activation",
    "leaky_relu",
    # what fused paths (conv.py, plan.py) specialise on
    "ActivationParams",
    "CLAMPS",
    "EXACT",
]

ACTIVATION_NAMES = {
    0: "NO_ACTIVATION", 1: "RELU", 2: "SIGMOID", 3: "RELU6", 4: "ELU", 5: "LEAKY_RELU", 6: "ABS",
    7: "RELU1", 8: "SOFTSIGN", 9: "SOFTPLUS", 10: "TANH", 11: "SELU", 12: "HSWISH", 13: "HSIGMOID",
    14: "THRESHOLDRELU", 15: "LINEAR", 16: "HARD_TANH", 17: "SIGN", 18: "SWISH", 19: "GELU",
    20: "UNKNOWN",
}  # fmt: skip

_SELU_ALPHA = 1.67326324
_SELU_SCALE = 1.05070098


@dataclass(frozen=True)
class ActivationParams:
    alpha: float
    min_val: float
    max_val: float
    approximate: bool


Fn = Callable[[np.ndarray, ActivationParams], np.ndarray]


@dataclass(frozen=True)
class ActivationSpec:
    """One row of the table: the function, whether it reads parameters, and whether it is a pure
    clamp (so it may run on integer tensors)."""

    fn: Fn
    uses_params: bool = False
    integer_ok: bool = False


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # 1 / (1 + exp(-x)) in four in-place passes; exp overflows to inf only where the true value
    # is below the smallest normal float32, and 1 / inf = 0 is then the right limit.
    e = np.negative(x) if x.ndim else np.array(-x)  # a ufunc on a 0-d array returns a scalar
    if e.dtype.kind != "f":
        e = e.astype(np.float32)
    with np.errstate(over="ignore"):
        np.exp(e, out=e)
    e += 1
    return np.asarray(np.divide(1, e, out=e))


def _swish(x: np.ndarray) -> np.ndarray:
    s = _sigmoid(x)
    return np.asarray(np.multiply(s, x, out=s) if s.dtype == np.result_type(s, x) else s * x)


def _relu6(x: np.ndarray) -> np.ndarray:
    return _clamp(x, 0, 6)


def erf(x: np.ndarray) -> np.ndarray:
    """Error function, accurate to ~1e-7 relative (float64 internally)."""
    xa = np.asarray(x)
    src = xa.dtype
    dst = src if np.issubdtype(src, np.floating) else np.dtype(np.float64)
    flat = xa.reshape(-1)
    out = np.empty(flat.shape, dtype=dst)
    # Blocks small enough that the ~25 float64 passes below stay in cache.
    for s in range(0, flat.size, _ERF_BLOCK):
        out[s : s + _ERF_BLOCK] = _erf64(flat[s : s + _ERF_BLOCK].astype(np.float64))
    return out.reshape(xa.shape)


_ERF_BLOCK = 1 << 14


def _erf64(xd: np.ndarray) -> np.ndarray:
    a = np.abs(xd)
    # Numerical Recipes erfc Chebyshev fit (fractional error < 1.2e-7):
    # erfc = t * exp(-a*a - 1.26551223 + t*(1.00002368 + t*(0.37409196 + ... + t*0.17087277)))
    # with t = 1 / (1 + a/2), evaluated in place (Horner, the same operations in the same
    # order as the nested expression): large float64 temporaries cost more than the arithmetic.
    t = np.multiply(a, 0.5)
    t += 1.0
    np.divide(1.0, t, out=t)
    p = np.multiply(t, 0.17087277)
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368):  # fmt: skip
        p += c
        p *= t
    q = np.negative(a, out=a)
    q *= np.abs(xd)
    q -= 1.26551223
    q += p
    np.exp(q, out=q)
    q *= t  # erfc
    out = np.subtract(1.0, q, out=p)
    np.subtract(q, 1.0, out=out, where=~(xd >= 0))
    return np.asarray(out)


def _gelu(x: np.ndarray, p: ActivationParams) -> np.ndarray:
    if p.approximate:
        c = math.sqrt(2.0 / math.pi)
        return np.asarray(
            (0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x**3)))).astype(x.dtype, copy=False)
        )
    return np.asarray((0.5 * x * (1 + erf(x / math.sqrt(2.0)))).astype(x.dtype, copy=False))


def _hard_tanh(x: np.ndarray, p: ActivationParams) -> np.ndarray:
    if not p.max_val > p.min_val:
        raise ValueError(
            f"HARD_TANH needs maxVal > minVal (got minVal={p.min_val}, maxVal={p.max_val})"
        )
    return np.asarray(np.clip(x, p.min_val, p.max_val))


ACTIVATIONS: dict[int, ActivationSpec] = {
    0: ActivationSpec(lambda x, p: x, integer_ok=True),
    1: ActivationSpec(lambda x, p: np.maximum(x, 0).astype(x.dtype, copy=False), integer_ok=True),
    2: ActivationSpec(lambda x, p: _sigmoid(x)),
    3: ActivationSpec(lambda x, p: _relu6(x), integer_ok=True),
    4: ActivationSpec(
        lambda x, p: np.where(x > 0, x, p.alpha * np.expm1(np.minimum(x, 0))).astype(
            x.dtype, copy=False
        ),
        uses_params=True,
    ),
    5: ActivationSpec(lambda x, p: np.where(x > 0, x, x * x.dtype.type(p.alpha)), uses_params=True),
    6: ActivationSpec(lambda x, p: np.abs(x), integer_ok=True),
    7: ActivationSpec(lambda x, p: _clamp(x, 0, 1), integer_ok=True),
    8: ActivationSpec(lambda x, p: x / (1 + np.abs(x))),
    9: ActivationSpec(lambda x, p: np.logaddexp(x.dtype.type(0), x)),
    10: ActivationSpec(lambda x, p: np.tanh(x)),
    11: ActivationSpec(
        lambda x, p: (
            _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0)))
        ).astype(x.dtype, copy=False)
    ),
    12: ActivationSpec(lambda x, p: x * _relu6(x + 3) / 6),
    13: ActivationSpec(lambda x, p: _relu6(x + 3) / 6),
    14: ActivationSpec(lambda x, p: np.where(x > p.alpha, x, x.dtype.type(0)), uses_params=True),
    15: ActivationSpec(lambda x, p: x, integer_ok=True),
    16: ActivationSpec(_hard_tanh, uses_params=True, integer_ok=True),
    17: ActivationSpec(lambda x, p: np.sign(x), integer_ok=True),
    18: ActivationSpec(lambda x, p: _swish(x)),
    19: ActivationSpec(_gelu, uses_params=True),
}


# Clamps, identity and sign: no float flags to silence (an errstate context costs microseconds).
EXACT = frozenset({1, 3, 6, 7, 15, 16, 17})


def apply_activation(
    x: np.ndarray,
    activation_type: int,
    *,
    op: str,
    alpha: float = 0.0,
    min_val: float = 0.0,
    max_val: float = 0.0,
    approximate: bool = False,
    fused_op: bool = False,
) -> np.ndarray:
    """Run table entry ``activation_type`` on ``x``; ``op`` names the caller in errors."""
    code = int(activation_type)
    spec = ACTIVATIONS.get(code)
    if spec is None:
        name = ACTIVATION_NAMES.get(code, str(code))
        raise KernelError(op, f"activation type {name} ({code}) is not supported")
    if fused_op and spec.uses_params:
        raise KernelError(
            op,
            f"fused activation {ACTIVATION_NAMES[code]} needs parameters a fused op does not carry",
        )
    x = np.asarray(x)
    if x.dtype.kind != "f" and not spec.integer_ok:
        raise KernelError(
            op,
            f"activation {ACTIVATION_NAMES[code]} needs a float tensor, got {x.dtype}",
        )
    params = ActivationParams(float(alpha), float(min_val), float(max_val), bool(approximate))
    try:
        if code in EXACT:
            out = spec.fn(x, params)
        else:
            with np.errstate(over="ignore", under="ignore"):
                out = spec.fn(x, params)
    except ValueError as e:
        raise KernelError(op, str(e)) from None
    return np.asarray(out).astype(x.dtype, copy=False)


# Clamp activations: (low, high) bounds, run in place when the caller owns the array.
CLAMPS = {1: (0, None), 3: (0, 6), 7: (0, 1)}
_ROW = 4096
_ROWS: dict[tuple[str, float], np.ndarray] = {}


def _row(dtype: np.dtype[Any], v: float) -> np.ndarray:
    key = (dtype.str, v)
    r = _ROWS.get(key)
    if r is None:
        r = np.full(_ROW, v, dtype=dtype)
        r.flags.writeable = False
        _ROWS[key] = r
    return r


def clamp_into(x: np.ndarray, out: np.ndarray, lo: int, hi: int | None) -> np.ndarray:
    """``np.clip(x, lo, hi)`` (``np.maximum(x, lo)`` without ``hi``) written into ``out``; both
    C-contiguous float arrays of one shape and dtype (``out`` may be ``x``). Same ufuncs, same
    values; the maximum runs against a row of bounds rather than a scalar, because NumPy's
    scalar-broadcast maximum loop is several times slower (its scalar clip loop is fast)."""
    if hi is not None:
        return np.asarray(np.clip(x, lo, hi, out=out))
    src, dst = x.reshape(-1), out.reshape(-1)
    k = dst.size // _ROW
    row = _row(dst.dtype, lo)
    if k:
        np.maximum(src[: k * _ROW].reshape(k, _ROW), row, out=dst[: k * _ROW].reshape(k, _ROW))
    if dst.size > k * _ROW:
        np.maximum(src[k * _ROW :], row[: dst.size - k * _ROW], out=dst[k * _ROW :])
    return out


def _fast_clamp(x: np.ndarray) -> bool:
    return x.dtype.kind == "f" and x.flags.c_contiguous and x.ndim > 0


def _clamp(x: np.ndarray, lo: int, hi: int | None) -> np.ndarray:
    if _fast_clamp(x):
        return clamp_into(x, np.empty_like(x), lo, hi)
    return np.asarray(np.maximum(x, lo) if hi is None else np.clip(x, lo, hi))


def fused(x: np.ndarray, activation: int, op: str, *, inplace: bool = False) -> np.ndarray:
    """Apply a fused ``activationType`` after an operator. ``inplace``: ``x`` is a fresh array the
    caller owns, so clamp activations may overwrite it (same values as the table entry)."""
    code = int(activation)
    if code == 0:
        return x
    bounds = CLAMPS.get(code)
    if inplace and bounds is not None and x.flags.writeable and _fast_clamp(x):
        return clamp_into(x, x, *bounds)
    return apply_activation(x, activation, op=op, fused_op=True)


def activation(
    inputs: Sequence[np.ndarray],
    *,
    activation_type: int,
    alpha: float = 0.0,
    min_val: float = 0.0,
    max_val: float = 0.0,
    approximate: bool = False,
) -> list[np.ndarray]:
    """``Activation``: one entry of the table with its parameters."""
    return [
        apply_activation(
            inputs[0], activation_type, op="Activation", alpha=alpha, min_val=min_val,
            max_val=max_val, approximate=approximate,
        )
    ]  # fmt: skip


def leaky_relu(inputs: Sequence[np.ndarray], *, negative_slope: float = 0.0) -> list[np.ndarray]:
    """``LeakyRelu``: the LEAKY_RELU table entry with ``negativeSlope``."""
    return [apply_activation(inputs[0], 5, op="LeakyRelu", alpha=negative_slope)]
