"""Shared geometry for NHWC windowed ops (convolution, pooling): output sizes and pad lists.

Rules from MindSpore Lite's ``conv2d_infer.c`` / ``pooling_infer.c`` / ``deconv2d_infer.c``:
pad lists are ``[top, bottom, left, right]``; SAME puts the odd extra row/column bottom/right.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import budget
from .errors import KernelError

PAD, SAME, VALID = 0, 1, 2


def pair(op: str, name: str, v: Sequence[int], default: int) -> tuple[int, int]:
    vals = [int(i) for i in v]
    if not vals:
        return default, default
    if len(vals) == 1:
        return vals[0], vals[0]
    if len(vals) == 2:
        return vals[0], vals[1]
    if len(vals) == 4:  # NHWC-style [1, h, w, 1]
        return vals[1], vals[2]
    raise KernelError(op, f"{name} must have 1, 2 or 4 entries, got {vals}")


def pads4(op: str, pad_list: Sequence[int]) -> tuple[int, int, int, int]:
    vals = [int(i) for i in pad_list]
    if not vals:
        return 0, 0, 0, 0
    if len(vals) != 4 or min(vals) < 0:
        raise KernelError(op, f"pad list must be [top, bottom, left, right] >= 0, got {vals}")
    return vals[0], vals[1], vals[2], vals[3]


def same_pads(size: int, k_eff: int, stride: int) -> tuple[int, int, int]:
    """SAME: (out, pad_before, pad_after) with the odd extra after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + k_eff - size, 0)
    return out, total // 2, total - total // 2


def conv_geometry(
    op: str, size: int, k: int, stride: int, dil: int, mode: int, p0: int, p1: int
) -> tuple[int, int, int]:
    """(out, pad_before, pad_after) for a convolution along one spatial axis."""
    k_eff = (k - 1) * dil + 1
    if mode == SAME:
        return same_pads(size, k_eff, stride)
    if mode == VALID:
        p0 = p1 = 0
    elif mode != PAD:
        raise KernelError(op, f"unsupported PadMode {mode}")
    out = (size + p0 + p1 - k_eff) // stride + 1
    if out <= 0:
        raise KernelError(op, f"window {k_eff} larger than padded input {size + p0 + p1}")
    return out, p0, p1


def pool_geometry(
    op: str,
    size: int,
    k: int,
    stride: int,
    mode: int,
    p0: int,
    p1: int,
    ceil_mode: bool,
) -> tuple[int, int, int]:
    """(out, pad_before, pad_after_needed) for pooling; the after-pad grows to cover ceil windows."""
    if mode == SAME:
        return same_pads(size, k, stride)
    if mode == VALID:
        p0 = p1 = 0
    elif mode != PAD:
        raise KernelError(op, f"unsupported PadMode {mode}")
    span = size + p0 + p1 - k
    if span < 0:
        raise KernelError(op, f"window {k} larger than padded input {size + p0 + p1}")
    out = (math.ceil(span / stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + p0:
        out -= 1  # a window may not start in the trailing padding
    return out, p0, max(p1, (out - 1) * stride + k - size - p0)


_SCRATCH = threading.local()


def scratch(tag: str, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """A per-thread reusable buffer for a kernel's temporary (never for anything it returns).

    Fresh large arrays are mmapped and page-faulted anew on every call, which on a VM costs more
    than the arithmetic of a small convolution; one buffer per ``tag`` and thread avoids that.
    Contents are undefined.
    """
    pool: dict[str, np.ndarray] | None = getattr(_SCRATCH, "pool", None)
    if pool is None:
        pool = _SCRATCH.pool = {}
    nbytes = math.prod(shape) * dtype.itemsize
    buf = pool.get(tag)
    if buf is None or buf.nbytes < nbytes:
        budget.check_bytes(nbytes, f"{tag} buffer of shape {list(shape)}")
        buf = pool[tag] = np.empty(max(nbytes, 1), dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def pad_hw(
    x: np.ndarray, t: int, b: int, l: int, r: int, value: float = 0.0, *, tmp: bool = False
) -> np.ndarray:
    """Pad H and W. ``tmp``: the result is only a temporary of the caller, so it may live in a
    scratch buffer (``x`` itself is still returned when there is nothing to pad)."""
    if not (t or b or l or r):
        return x
    # Faster than np.pad for this one case: fill the border, copy the interior.
    n, h, w, c = x.shape
    shape = (n, h + t + b, w + l + r, c)
    budget.check_shape(shape, x.itemsize, "padded input")
    if not tmp:
        out = np.full(shape, value, dtype=x.dtype)
    else:
        out = scratch("pad", shape, x.dtype)
        out[:, :t] = value
        out[:, t + h :] = value
        out[:, t : t + h, :l] = value
        out[:, t : t + h, l + w :] = value
    out[:, t : t + h, l : l + w, :] = x
    return out


def taps(
    xp: np.ndarray,
    oh: int,
    ow: int,
    kh: int,
    kw: int,
    sh: int,
    sw: int,
    dh: int,
    dw: int,
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield (i, j, view) for every kernel tap: the strided NHWC slice it reads."""
    for i in range(kh):
        for j in range(kw):
            yield i, j, xp[
                :,
                i * dh : i * dh + (oh - 1) * sh + 1 : sh,
                j * dw : j * dw + (ow - 1) * sw + 1 : sw,
                :,
            ]


def patches(
    xp: np.ndarray,
    oh: int,
    ow: int,
    kh: int,
    kw: int,
    sh: int,
    sw: int,
    dh: int,
    dw: int,
) -> np.ndarray:
    """im2col as a zero-copy strided view: [N, oh, ow, kh, kw, C]."""
    n, _, _, c = xp.shape
    s = xp.strides
    shape = (n, oh, ow, kh, kw, c)
    strides = (s[0], s[1] * sh, s[2] * sw, s[1] * dh, s[2] * dw, s[3])
    if xp.flags.c_contiguous and xp.size:
        # The ndarray constructor over xp's buffer: the same view as as_strided, without its
        # several microseconds of Python-level setup per call.
        v = np.ndarray(shape, xp.dtype, buffer=xp, strides=strides)
        v.flags.writeable = False
        return v
    return np.lib.stride_tricks.as_strided(xp, shape=shape, strides=strides, writeable=False)
