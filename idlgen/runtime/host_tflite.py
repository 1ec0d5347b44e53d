"""Host kernels for TFLite builtins that NNRt v2_1 has no operator for (see :mod:`.host`).

``KERNELS[builtin](opts, out_dtypes) -> HostKernel`` binds the operator's builtin options and the
dtypes of its outputs (from the file) into a NumPy function ``fn(list[np.ndarray]) ->
list[np.ndarray]``. The semantics are TFLite's (``tensorflow/lite/kernels``), restated, not
copied. Control flow and resource variables (IF, WHILE, CALL_ONCE, VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE) need the importer (their bodies are other subgraphs) and are built by
:func:`if_kernel`, :func:`while_kernel`, :func:`call_once_kernel` and :class:`Variables`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import KernelError
from .host import HostKernel

__all__ = ["KERNELS", "Variables", "call_once_kernel", "case_kernel", "if_kernel", "while_kernel"]

Maker = Callable[[Any, Sequence[np.dtype[Any]]], HostKernel]
KERNELS: dict[str, Maker] = {}

#: WHILE stops with an error after this many iterations (a model that never ends).
MAX_ITERATIONS = 1 << 20


def _k(*names: str) -> Callable[[Maker], Maker]:
    def deco(fn: Maker) -> Maker:
        for n in names:
            KERNELS[n] = fn
        return fn

    return deco


def _opt(opts: Any, name: str, default: Any) -> Any:
    v = getattr(opts, name, None) if opts is not None else None
    return default if v is None else v


def _need(op: str, xs: Sequence[Any], n: int) -> list[np.ndarray]:
    if len(xs) < n or any(x is None for x in xs[:n]):
        raise KernelError(op, f"needs {n} inputs")
    return [np.asarray(x) for x in xs[:n]]


@_k("BROADCAST_ARGS")
def _broadcast_args(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        a, b = _need("BROADCAST_ARGS", xs, 2)
        try:
            shape = np.broadcast_shapes(tuple(int(v) for v in a), tuple(int(v) for v in b))
        except ValueError as e:
            raise KernelError("BROADCAST_ARGS", str(e)) from None
        return [np.array(shape, dtype=a.dtype)]

    return fn


@_k("ATAN2")
def _atan2(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        y, x = _need("ATAN2", xs, 2)
        return [np.arctan2(y, x).astype(y.dtype)]

    return fn


@_k("BITWISE_XOR")
def _xor(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        a, b = _need("BITWISE_XOR", xs, 2)
        return [np.bitwise_xor(a, b)]

    return fn


@_k("RIGHT_SHIFT")
def _right_shift(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        a, b = _need("RIGHT_SHIFT", xs, 2)
        bits = 8 * a.dtype.itemsize
        return [np.right_shift(a, np.clip(b, 0, bits - 1).astype(a.dtype))]

    return fn


@_k("BITCAST")
def _bitcast(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    out = np.dtype(dts[0])

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        (x,) = _need("BITCAST", xs, 1)
        x = np.ascontiguousarray(x)
        if x.dtype.itemsize == out.itemsize:
            return [x.view(out)]
        if x.dtype.itemsize > out.itemsize:  # one element becomes a last axis of several
            return [x.reshape(x.shape + (1,)).view(out)]
        if not x.shape or x.shape[-1] * x.dtype.itemsize != out.itemsize:
            raise KernelError("BITCAST", f"last dim {x.shape} does not make one {out}")
        return [x.view(out).reshape(x.shape[:-1])]

    return fn


@_k("MATRIX_DIAG")
def _matrix_diag(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        (d,) = _need("MATRIX_DIAG", xs, 1)
        n = d.shape[-1] if d.ndim else 1
        out = np.zeros(d.shape + (n,), d.dtype)
        i = np.arange(n)
        out[..., i, i] = d
        return [out]

    return fn


@_k("MATRIX_SET_DIAG")
def _matrix_set_diag(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, d = _need("MATRIX_SET_DIAG", xs, 2)
        out = np.array(x, copy=True)
        n = min(x.shape[-2], x.shape[-1])
        i = np.arange(n)
        out[..., i, i] = d[..., :n]
        return [out]

    return fn


@_k("REVERSE_SEQUENCE")
def _reverse_sequence(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    seq_dim, batch_dim = int(_opt(opts, "seq_dim", 0)), int(_opt(opts, "batch_dim", 0))

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, lens = _need("REVERSE_SEQUENCE", xs, 2)
        out = np.array(x, copy=True)
        for b, n in enumerate(np.asarray(lens).reshape(-1)):
            n = int(n)
            if not 0 <= n <= x.shape[seq_dim]:
                raise KernelError("REVERSE_SEQUENCE", f"length {n} of a {x.shape[seq_dim]} axis")
            src = [slice(None)] * x.ndim
            src[batch_dim] = slice(b, b + 1)
            src[seq_dim] = slice(0, n)
            out[tuple(src)] = np.flip(x[tuple(src)], axis=seq_dim)
        return [out]

    return fn


def _segments(op: str, data: np.ndarray, ids: np.ndarray, n: int, how: str) -> np.ndarray:
    ids = np.asarray(ids).reshape(-1).astype(np.int64)
    if ids.size != data.shape[0] or (ids.size and (ids.min() < 0 or ids.max() >= n)):
        raise KernelError(op, f"segment ids {ids.tolist()[:8]} do not fit {n} segments")
    if how == "sum":
        out = np.zeros((n,) + data.shape[1:], data.dtype)
        np.add.at(out, ids, data)
    elif how == "prod":
        out = np.ones((n,) + data.shape[1:], data.dtype)
        np.multiply.at(out, ids, data)
    elif how == "max":
        lo = np.finfo(data.dtype).min if data.dtype.kind == "f" else np.iinfo(data.dtype).min
        out = np.full((n,) + data.shape[1:], lo, data.dtype)
        np.maximum.at(out, ids, data)
    else:
        hi = np.finfo(data.dtype).max if data.dtype.kind == "f" else np.iinfo(data.dtype).max
        out = np.full((n,) + data.shape[1:], hi, data.dtype)
        np.minimum.at(out, ids, data)
    return out


@_k("SEGMENT_SUM")
def _segment_sum(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        data, ids = _need("SEGMENT_SUM", xs, 2)
        n = int(ids.max()) + 1 if ids.size else 0
        return [_segments("SEGMENT_SUM", data, ids, n, "sum")]

    return fn


def _unsorted(how: str) -> Maker:
    def make(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            data, ids, n = _need("UNSORTED_SEGMENT_" + how.upper(), xs, 3)
            return [_segments("UNSORTED_SEGMENT", data, ids, int(n.reshape(-1)[0]), how)]

        return fn

    return make


for _how in ("sum", "prod", "max", "min"):
    KERNELS["UNSORTED_SEGMENT_" + _how.upper()] = _unsorted(_how)


@_k("UNIQUE")
def _unique(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    idx_dt = np.dtype(dts[1]) if len(dts) > 1 else np.dtype(np.int32)

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        (x,) = _need("UNIQUE", xs, 1)
        x = x.reshape(-1)
        _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # values in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return [x[np.sort(first)], rank[inverse.reshape(-1)].astype(idx_dt)]

    return fn


@_k("DYNAMIC_UPDATE_SLICE")
def _dynamic_update_slice(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, upd, start = _need("DYNAMIC_UPDATE_SLICE", xs, 3)
        starts = [int(v) for v in start.reshape(-1)]
        if len(starts) != x.ndim or upd.ndim != x.ndim:
            raise KernelError("DYNAMIC_UPDATE_SLICE", f"{upd.shape} into {x.shape} at {starts}")
        out = np.array(x, copy=True)
        idx = []
        for s, n, u in zip(starts, x.shape, upd.shape):
            s = min(max(s, 0), max(n - u, 0))  # clamped so the update fits
            idx.append(slice(s, s + u))
        out[tuple(idx)] = upd
        return [out]

    return fn


@_k("BUCKETIZE")
def _bucketize(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    bounds = np.array(list(_opt(opts, "boundaries", []) or []), np.float64)

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        (x,) = _need("BUCKETIZE", xs, 1)
        return [np.searchsorted(bounds, x.astype(np.float64), side="right").astype(np.int32)]

    return fn


@_k("FAKE_QUANT")
def _fake_quant(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    lo, hi = float(_opt(opts, "min", 0.0)), float(_opt(opts, "max", 0.0))
    bits, narrow = int(_opt(opts, "num_bits", 8)), bool(_opt(opts, "narrow_range", False))
    qmin, qmax = (1 if narrow else 0), (1 << bits) - 1
    scale = (hi - lo) / (qmax - qmin) if hi > lo else 1.0
    zp = min(max(qmin - lo / scale, qmin), qmax)
    nzp = float(np.floor(zp + 0.5))  # the nudged zero point
    nmin, nmax = (qmin - nzp) * scale, (qmax - nzp) * scale

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        (x,) = _need("FAKE_QUANT", xs, 1)
        c = np.clip(x.astype(np.float32), np.float32(nmin), np.float32(nmax))
        q = np.floor((c - np.float32(nmin)) / np.float32(scale) + np.float32(0.5))
        return [(q * np.float32(scale) + np.float32(nmin)).astype(x.dtype)]

    return fn


@_k("CUMSUM")
def _cumsum(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    """Integer running sums (floats lower onto NNRt, see tflite_import._cumsum)."""
    exclusive, reverse = bool(_opt(opts, "exclusive", False)), bool(_opt(opts, "reverse", False))

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, axis = _need("CUMSUM", xs, 2)
        ax = int(axis.reshape(-1)[0])
        y = np.flip(x, ax) if reverse else x
        c = np.cumsum(y, axis=ax, dtype=x.dtype)
        if exclusive:
            c = c - y
        return [np.ascontiguousarray(np.flip(c, ax) if reverse else c)]

    return fn


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of box ``a`` against boxes ``b`` ([y1, x1, y2, x2], corners in any order)."""

    def norm(v: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.minimum(v[..., 0], v[..., 2]), np.minimum(v[..., 1], v[..., 3]),
                np.maximum(v[..., 0], v[..., 2]), np.maximum(v[..., 1], v[..., 3]))  # fmt: skip

    ay1, ax1, ay2, ax2 = norm(a)
    by1, bx1, by2, bx2 = norm(b)
    ih = np.maximum(np.minimum(ay2, by2) - np.maximum(ay1, by1), 0.0)
    iw = np.maximum(np.minimum(ax2, bx2) - np.maximum(ax1, bx1), 0.0)
    inter = ih * iw
    union = (ay2 - ay1) * (ax2 - ax1) + (by2 - by1) * (bx2 - bx1) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


@_k("NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5")
def _nms(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    """Greedy hard NMS (V5 with soft_nms_sigma 0): indices padded with 0 to max_output_size,
    the count (V4: indices, count; V5: indices, scores, count)."""
    v5 = len(dts) == 3

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        boxes, scores, mx, iou_t, score_t = _need("NON_MAX_SUPPRESSION", xs, 5)
        if v5 and len(xs) > 5 and xs[5] is not None and float(np.asarray(xs[5]).reshape(-1)[0]):
            raise KernelError("NON_MAX_SUPPRESSION_V5", "soft NMS (sigma > 0) is not supported")
        m = int(mx.reshape(-1)[0])
        it, st_ = float(iou_t.reshape(-1)[0]), float(score_t.reshape(-1)[0])
        b = boxes.reshape(-1, 4).astype(np.float32)
        s = scores.reshape(-1).astype(np.float32)
        cand = [int(i) for i in np.argsort(-s, kind="stable") if s[i] > st_]
        keep: list[int] = []
        for i in cand:
            if len(keep) >= m:
                break
            if keep and np.any(_iou(b[i], b[keep]) > it):
                continue
            keep.append(i)
        idx = np.zeros(m, np.int32)
        idx[: len(keep)] = keep
        count = np.array(len(keep), np.int32)
        if v5:
            sc = np.zeros(m, np.float32)
            sc[: len(keep)] = s[keep]
            return [idx, sc, count]
        return [idx, count]

    return fn


@_k("RFFT2D")
def _rfft2d(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    """Real 2-D FFT over the last two axes, the input cropped / zero-padded to fft_length."""

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, n = _need("RFFT2D", xs, 2)
        fh, fw = (int(v) for v in n.reshape(-1)[:2])
        if x.ndim < 2 or fh <= 0 or fw <= 0:
            raise KernelError("RFFT2D", f"fft_length {[fh, fw]} for a {x.shape} input")
        return [np.fft.rfft2(x.astype(np.float64), s=(fh, fw)).astype(np.complex64)]

    return fn


def complex_part(name: str) -> Maker:
    """The maker for COMPLEX_ABS / REAL / IMAG when the file carries no options."""
    parts: dict[str, Callable[[np.ndarray], Any]] = {
        "COMPLEX_ABS": np.abs, "REAL": np.real, "IMAG": np.imag
    }  # fmt: skip
    f = parts[name]

    def make(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            (z,) = _need(name, xs, 1)
            return [np.asarray(f(z)).astype(np.float32 if z.dtype == np.complex64 else np.float64)]

        return fn

    return make


for _name in ("COMPLEX_ABS", "REAL", "IMAG"):
    KERNELS[_name] = complex_part(_name)


#: Builtins NNRt v2_1 could run were their operand not complex (NNRt has no complex DataType):
#: on a complex input they run here, as LiteRT computes them (CAST to a real type keeps the real
#: part). ``COMPLEX[builtin](opts, out_dtypes) -> HostKernel``.
COMPLEX: dict[str, Maker] = {}


def _complex_shape_op(name: str) -> Maker:
    def make(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            x = np.asarray(xs[0])
            arg = None if len(xs) < 2 or xs[1] is None else np.asarray(xs[1]).reshape(-1)
            if name == "SQUEEZE":
                dims = [int(d) for d in (getattr(opts, "squeeze_dims", None) or [])]
                if dims:
                    y = np.squeeze(x, axis=tuple(d + x.ndim if d < 0 else d for d in dims))
                else:
                    y = np.squeeze(x)
            elif name == "RESHAPE":
                shape = arg if arg is not None else getattr(opts, "new_shape", None)
                if shape is None:
                    raise KernelError(name, "no new shape")
                y = x.reshape([int(d) for d in shape])
            elif name == "EXPAND_DIMS":
                if arg is None:
                    raise KernelError(name, "needs an axis")
                ax = int(arg[0])
                y = np.expand_dims(x, ax + x.ndim + 1 if ax < 0 else ax)
            elif name == "TRANSPOSE":
                y = np.transpose(x, None if arg is None else [int(d) for d in arg])
            else:  # CAST
                out = np.dtype(dts[0])
                y = x if out.kind == "c" else np.real(x)
                return [np.asarray(y).astype(out)]
            return [np.ascontiguousarray(y)]

        return fn

    return make


for _name in ("SQUEEZE", "RESHAPE", "EXPAND_DIMS", "TRANSPOSE", "CAST"):
    COMPLEX[_name] = _complex_shape_op(_name)


def _fused(y: np.ndarray, act: int, op: str) -> np.ndarray:
    """TFLite's fused activations: NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT."""
    if act == 0:
        return y
    if act == 1:
        return np.asarray(np.maximum(y, 0))
    if act == 2:
        return np.asarray(np.clip(y, -1, 1))
    if act == 3:
        return np.asarray(np.clip(y, 0, 6))
    if act == 4:
        return np.asarray(np.tanh(y))
    raise KernelError(op, f"fused activation {act}")


@_k("CONV_3D")
def _conv3d(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    """3-D convolution, NDHWC input, [kD, kH, kW, I, O] filter, TF SAME/VALID padding."""
    same = int(_opt(opts, "padding", 0)) == 0
    strides = [int(_opt(opts, k, 1)) for k in ("stride_d", "stride_h", "stride_w")]
    dil = [
        int(_opt(opts, k, 1))
        for k in ("dilation_d_factor", "dilation_h_factor", "dilation_w_factor")
    ]
    act = int(_opt(opts, "fused_activation_function", 0))

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, w = _need("CONV_3D", xs, 2)
        if x.ndim != 5 or w.ndim != 5 or x.shape[4] % w.shape[3]:
            raise KernelError("CONV_3D", f"input {x.shape} with filter {w.shape}")
        if x.shape[4] != w.shape[3]:
            raise KernelError("CONV_3D", "grouped 3-D convolution")
        ks = w.shape[:3]
        pads, outs = [], []
        for size, k, s, d in zip(x.shape[1:4], ks, strides, dil):
            eff = (k - 1) * d + 1
            if same:
                out = -(-size // s)
                total = max((out - 1) * s + eff - size, 0)
                pads.append((total // 2, total - total // 2))
            else:
                out = (size - eff) // s + 1
                pads.append((0, 0))
            outs.append(out)
        if min(outs) <= 0:
            raise KernelError("CONV_3D", f"output size {outs}")
        xp = np.pad(x.astype(np.float32), [(0, 0), *pads, (0, 0)])
        y = np.zeros((x.shape[0], *outs, w.shape[4]), np.float32)
        for a in range(ks[0]):
            for b in range(ks[1]):
                for c in range(ks[2]):
                    sl = xp[:, a * dil[0] : a * dil[0] + (outs[0] - 1) * strides[0] + 1 : strides[0],
                            b * dil[1] : b * dil[1] + (outs[1] - 1) * strides[1] + 1 : strides[1],
                            c * dil[2] : c * dil[2] + (outs[2] - 1) * strides[2] + 1 : strides[2], :]  # fmt: skip
                    y += sl @ w[a, b, c].astype(np.float32)
        if len(xs) > 2 and xs[2] is not None:
            y += np.asarray(xs[2], np.float32).reshape(-1)
        return [_fused(y, act, "CONV_3D").astype(x.dtype)]

    return fn


@_k("DILATE")
def _dilate(opts: Any, dts: Sequence[np.dtype[Any]]) -> HostKernel:
    """Inserts ``dilations[i] - 1`` padding values between neighbours along each axis."""

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        x, d, v = _need("DILATE", xs, 3)
        dl = [int(a) for a in d.reshape(-1)]
        if len(dl) != x.ndim or min(dl, default=1) < 1:
            raise KernelError("DILATE", f"dilations {dl} for a {x.shape} input")
        shape = [(n - 1) * k + 1 if n else 0 for n, k in zip(x.shape, dl)]
        out = np.full(shape, v.reshape(-1)[0], dtype=x.dtype)
        out[tuple(slice(None, None, k) for k in dl)] = x
        return [out]

    return fn


# -- control flow and resource variables ---------------------------------------------------------

Body = Callable[[list[np.ndarray]], list[np.ndarray]]


def if_kernel(then_body: Body, else_body: Body) -> HostKernel:
    """IF: input 0 is the condition (any element count, its first element decides), the rest
    are the branch's inputs."""

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        cond = np.asarray(xs[0]).reshape(-1)
        if cond.size == 0:
            raise KernelError("IF", "empty condition")
        return (then_body if bool(cond[0]) else else_body)(list(xs[1:]))

    return fn


def case_kernel(branches: Sequence[Body]) -> HostKernel:
    """STABLEHLO_CASE: input 0 (an int32 scalar) picks the branch, out of range the last."""

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        k = int(np.asarray(xs[0]).reshape(-1)[0])
        b = branches[k] if 0 <= k < len(branches) else branches[-1]
        return b(list(xs[1:]))

    return fn


def while_kernel(cond: Body, body: Body) -> HostKernel:
    """WHILE: ``body`` maps the loop values to new ones while ``cond`` of them is true."""

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        vals = list(xs)
        for _ in range(MAX_ITERATIONS):
            c = np.asarray(cond(vals)[0]).reshape(-1)
            if c.size == 0 or not bool(c[0]):
                return vals
            vals = body(vals)
        raise KernelError("WHILE", f"no exit after {MAX_ITERATIONS} iterations")

    return fn


def call_once_kernel(init: Body) -> HostKernel:
    """CALL_ONCE: runs its subgraph (which initialises resource variables) on the first call."""
    done: list[bool] = []

    def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
        if not done:
            init([])
            done.append(True)
        return []

    return fn


class Variables:
    """The resource variables of one imported model, shared by all its subgraphs (a resource
    tensor holds the variable's id as an int32 scalar)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.values: dict[int, np.ndarray] = {}

    def handle(self, key: str) -> HostKernel:
        vid = self.ids.setdefault(key, len(self.ids))

        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            return [np.array(vid, np.int32)]

        return fn

    def read(self) -> HostKernel:
        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            vid = int(np.asarray(xs[0]).reshape(-1)[0])
            if vid not in self.values:
                raise KernelError("READ_VARIABLE", f"variable {vid} is read before it is assigned")
            return [self.values[vid]]

        return fn

    def read_id(self, vid: int) -> HostKernel:
        """Read variable ``vid`` (a TFLite variable tensor: no handle operand)."""

        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            return [self.values[vid]]

        return fn

    def assign_id(self, vid: int) -> HostKernel:
        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            self.values[vid] = np.array(xs[0], copy=True).reshape(self.values[vid].shape)
            return []

        return fn

    def assign(self) -> HostKernel:
        def fn(xs: list[np.ndarray]) -> list[np.ndarray]:
            vid = int(np.asarray(xs[0]).reshape(-1)[0])
            self.values[vid] = np.array(xs[1], copy=True)
            return []

        return fn
