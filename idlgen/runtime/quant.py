"""Quantisation: the ``QuantParam`` formulas and QuantDTypeCast / QuantDTypeCastV2.

``q = clamp(round(r / scale + zeroPoint), qmin, qmax)``, ``r = (q - zeroPoint) * scale``; rounding
is half away from zero (C ``round`` as in MindSpore Lite's ``QuantizeToInt8``); the range comes from
the integer dtype narrowed to ``numBits``. Several ``QuantParam``s are per-channel along ``axis``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .dtypes import to_numpy
from .errors import KernelError

__all__ = [
    "QuantParams",
    "quantize",
    "scaled",
    "dequantize",
    "quant_dtype_cast",
    "quant_dtype_cast_v2",
    # the 8-bit tables and integer ranges the compiled plan (plan.py) reuses
    "dequant_table",
    "quant_range",
]


@dataclass(frozen=True)
class QuantParams:
    """Per-tensor (one entry) or per-channel quantisation parameters."""

    scale: np.ndarray
    zero_point: np.ndarray
    num_bits: int = 8

    @classmethod
    def of(cls, params: Sequence[Any]) -> QuantParams:
        """From IDL ``QuantParam`` records (attributes ``numBits``, ``zeroPoint``, ``scale``)."""
        if not params:
            raise KernelError("QuantParam", "empty quantisation parameter list")
        return cls(
            np.array([float(p.scale) for p in params]),
            np.array([int(p.zeroPoint) for p in params]),
            int(params[0].numBits) or 8,
        )


def _bcast(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    if v.size == 1 or ndim == 0:
        return v.reshape(())
    shape = [1] * ndim
    shape[axis] = v.size
    return v.reshape(shape)


def quant_range(dtype: np.dtype[np.generic], num_bits: int) -> tuple[int, int]:
    info = np.iinfo(cast(Any, dtype))
    bits = min(int(num_bits), info.bits) if num_bits else info.bits
    if info.min < 0:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def quantize(
    x: np.ndarray, qp: QuantParams, dtype: np.dtype[np.generic] | type, *, axis: int = 0
) -> np.ndarray:
    """Real -> integer with the module's formula, in float32 like nnacl
    (``real * (1.0f / scale) + zp``, then ``round``)."""
    dt = np.dtype(dtype)
    if not np.issubdtype(dt, np.integer):
        raise KernelError("Quantize", f"target dtype {dt} is not an integer type")
    v = scaled(x, qp, axis=axis)
    # Round half away from zero: trunc(v + copysign(0.5, v)) adds 0.5 with the same float
    # rounding as floor(v + 0.5) / ceil(v - 0.5), in three in-place passes.
    r = np.copysign(np.float32(0.5), v, dtype=v.dtype)
    r += v
    np.trunc(r, out=r)
    lo, hi = quant_range(dt, qp.num_bits)
    np.clip(r, lo, hi, out=r)  # +-inf saturate
    if not np.isfinite(r.sum()):  # NaN survived the clip: it quantises to 0
        r[np.isnan(r)] = 0.0
    return np.asarray(r.astype(dt))


def scaled(x: np.ndarray, qp: QuantParams, *, axis: int = 0) -> np.ndarray:
    """``x / scale + zeroPoint`` before rounding, computed as nnacl does (float32)."""
    x = np.asarray(x, dtype=np.float32)
    ax = axis + x.ndim if axis < 0 else axis
    inv = (np.float32(1.0) / qp.scale.astype(np.float32)).astype(np.float32)
    return np.asarray(
        x * _bcast(inv, x.ndim, ax) + _bcast(qp.zero_point.astype(np.float32), x.ndim, ax)
    )


def dequantize(
    q: np.ndarray, qp: QuantParams, *, axis: int = 0, dtype: type = np.float32
) -> np.ndarray:
    """Integer -> real."""
    q = np.asarray(q)
    if q.dtype.itemsize == 1 and qp.scale.size == 1 and qp.zero_point.size == 1:
        # 8-bit, per-tensor: a 256-entry table of exactly the values the formula gives.
        return np.asarray(dequant_table(qp, q.dtype, np.dtype(dtype))[q.view(np.uint8)])
    ax = axis + q.ndim if axis < 0 else axis
    r = (q.astype(np.float64) - _bcast(qp.zero_point, q.ndim, ax)) * _bcast(qp.scale, q.ndim, ax)
    return np.asarray(r.astype(dtype))


_TABLES: dict[tuple[Any, ...], np.ndarray] = {}


def dequant_table(qp: QuantParams, src: np.dtype[Any], dst: np.dtype[Any]) -> np.ndarray:
    """Dequantised value of every 8-bit pattern, indexed by the pattern as uint8."""
    key = (float(qp.scale[0]), int(qp.zero_point[0]), src.str, dst.str)
    t = _TABLES.get(key)
    if t is None:
        codes = np.arange(256, dtype=np.uint8).view(src)
        t = ((codes.astype(np.float64) - qp.zero_point[0]) * qp.scale[0]).astype(dst)
        t.flags.writeable = False
        if len(_TABLES) > 1024:
            _TABLES.clear()
        _TABLES[key] = t
    return t


def _cast(
    op: str,
    inputs: Sequence[np.ndarray],
    src_t: int,
    dst_t: int,
    axis: int,
    qp: QuantParams | None,
) -> list[np.ndarray]:
    x = np.asarray(inputs[0])
    src, dst = to_numpy(src_t, op=op), to_numpy(dst_t, op=op)
    if x.dtype != src:
        raise KernelError(op, f"input dtype {x.dtype} is not srcT {src}")
    if qp is None and len(inputs) >= 3:
        qp = QuantParams(
            np.asarray(inputs[1], dtype=np.float64).reshape(-1),
            np.asarray(inputs[2]).reshape(-1),
        )
    if np.issubdtype(src, np.floating) and np.issubdtype(dst, np.integer):
        if qp is None:
            raise KernelError(op, "float -> integer needs the output tensor's QuantParam")
        return [quantize(x, qp, dst, axis=axis)]
    if np.issubdtype(src, np.integer) and np.issubdtype(dst, np.floating):
        if qp is None:
            raise KernelError(op, "integer -> float needs the input tensor's QuantParam")
        return [dequantize(x, qp, axis=axis, dtype=dst.type)]
    if np.issubdtype(src, np.integer) and np.issubdtype(dst, np.integer):
        # int8 <-> uint8 re-centres by 128 (MindSpore Lite's Int8ToUInt8 / UInt8ToInt8).
        if {src, dst} == {np.dtype(np.int8), np.dtype(np.uint8)}:
            shift = 128 if dst == np.uint8 else -128
            return [(x.astype(np.int16) + shift).astype(dst)]
    return [x.astype(dst)]


def quant_dtype_cast(
    inputs: Sequence[np.ndarray],
    *,
    src_t: int,
    dst_t: int,
    quant_params: QuantParams | None = None,
) -> list[np.ndarray]:
    """``QuantDTypeCast``: float <-> integer by the tensors' QuantParam (``quant_params``, passed
    by the executor, or inputs[1:3] = scales, zero points); per-channel along axis 0."""
    return _cast("QuantDTypeCast", inputs, src_t, dst_t, 0, quant_params)


def quant_dtype_cast_v2(
    inputs: Sequence[np.ndarray],
    *,
    src_t: int,
    dst_t: int,
    axis: int = 0,
    quant_params: QuantParams | None = None,
) -> list[np.ndarray]:
    """``QuantDTypeCastV2``: as QuantDTypeCast with the per-channel ``axis``."""
    return _cast("QuantDTypeCastV2", inputs, src_t, dst_t, int(axis), quant_params)
