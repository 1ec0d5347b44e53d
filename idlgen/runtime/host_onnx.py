"""Host kernels for ONNX operators NNRt v2_1 has no operator for (NumPy, ONNX semantics as
onnxruntime computes them; see :mod:`.host`).

``KERNELS[op](node, attrs, inputs) -> HostKernel | None`` binds a node's attributes; ``op`` is
the ONNX op type, prefixed by its domain outside the default one (``ai.onnx.ml.Normalizer``).
``inputs`` are the importer's values (dtype, logical shape). None means "no hand-written kernel
for this form": the importer falls back to the ONNX reference implementation.

- ``GridSample`` (opset 16 ``bilinear``/``nearest``/``bicubic`` and opset 20 ``linear``/``cubic``
  spellings; ``zeros``/``border``/``reflection`` padding; ``align_corners``), 4-D;
- ``STFT`` (real or complex signal, window and/or frame length, one- or two-sided) and ``DFT``
  (forward/inverse, ``dft_length``, one-sided, axis as attribute or input);
- ``com.microsoft.DynamicQuantizeLSTM`` (onnxruntime's dynamically quantised LSTM: the input
  and the hidden state quantised to uint8 on every GEMM, int8 weights);
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
#: ``SHAPES[op](node, attrs, inputs) -> [(dtype, shape) | None per output]``: output shapes of
#: operators ONNX shape inference leaves open (contrib domains; STFT/DFT whose signal length is
#: known only once the input shapes are), so what follows stays on NNRt.
SHAPES: dict[str, Callable[[Any, dict[str, Any], list[Any]], list[Any]]] = {}


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


# --- STFT / DFT ------------------------------------------------------------------------------


def _opt(arrays: list[Any], i: int) -> Any:
    return arrays[i] if len(arrays) > i and arrays[i] is not None else None


def _to_complex(x: np.ndarray) -> np.ndarray:
    """ONNX's real ([..., 1]) or complex ([..., 2]) signal layout as a complex128 array."""
    x = x.astype(np.float64)
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def _from_complex(z: np.ndarray, dtype: Any) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


@_kernel("STFT")
def _stft(node: Any, a: dict[str, Any], ins: list[Any]) -> HostKernel | None:
    onesided = bool(int(a.get("onesided", 1)))

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        sig = np.asarray(arrays[0])
        x = sig[..., None] if sig.ndim == 2 else sig  # [batch, length] taken as real
        z = _to_complex(x)
        step = int(np.asarray(arrays[1]).reshape(-1)[0])
        win, flen = _opt(arrays, 2), _opt(arrays, 3)
        if flen is not None:
            n = int(np.asarray(flen).reshape(-1)[0])
        elif win is not None:
            n = int(np.asarray(win).shape[0])
        else:
            raise ValueError("STFT needs a window or a frame length")
        w = np.ones(n) if win is None else np.asarray(win, np.float64).reshape(-1)
        frames = max((z.shape[1] - n) // step + 1, 0)
        idx = np.arange(frames)[:, None] * step + np.arange(n)[None, :]
        spec = np.fft.fft(z[:, idx] * w, axis=-1)
        if onesided:
            spec = spec[..., : n // 2 + 1]
        return [_from_complex(spec, sig.dtype)]

    return fn


@_kernel("DFT")
def _dft(node: Any, a: dict[str, Any], ins: list[Any]) -> HostKernel | None:
    inverse = bool(int(a.get("inverse", 0)))
    onesided = bool(int(a.get("onesided", 0)))
    axis_attr = a.get("axis")
    has_axis_input = len(node.input) > 2 and bool(node.input[2])
    if axis_attr is None and not has_axis_input:
        # the default is 1 up to opset 19 and -2 from opset 20: the same axis only at rank 3
        xv = ins[0] if ins else None
        if xv is None or xv.shape is None or len(xv.shape) != 3:
            return None
        axis_attr = 1

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(arrays[0])
        z = _to_complex(x)  # the signal without its trailing real/imaginary dim
        if axis_attr is not None:
            ax = int(axis_attr)
        else:
            ax = int(np.asarray(arrays[2]).reshape(-1)[0])
        ax = ax + x.ndim if ax < 0 else ax  # counted over the input, trailing dim included
        if not 0 <= ax < x.ndim - 1:
            raise ValueError(f"DFT axis {ax} out of range for rank {x.ndim}")
        length = _opt(arrays, 1)
        n = z.shape[ax] if length is None else int(np.asarray(length).reshape(-1)[0])
        spec = np.fft.ifft(z, n=n, axis=ax) if inverse else np.fft.fft(z, n=n, axis=ax)
        if onesided:
            spec = np.take(spec, np.arange(n // 2 + 1), axis=ax)
        return [_from_complex(spec, x.dtype)]

    return fn


def _known_int(v: Any) -> int | None:
    c = getattr(v, "const", None) if v is not None else None
    return None if c is None or np.asarray(c).size != 1 else int(np.asarray(c).reshape(-1)[0])


def _stft_shapes(node: Any, a: dict[str, Any], ins: list[Any]) -> list[Any]:
    sig = ins[0] if ins else None
    if sig is None or sig.shape is None or len(sig.shape) not in (2, 3):
        return []
    step = _known_int(ins[1]) if len(ins) > 1 else None
    win = ins[2] if len(ins) > 2 else None
    n = _known_int(ins[3]) if len(ins) > 3 else None
    if n is None and win is not None and win.shape is not None and len(win.shape) == 1:
        n = win.shape[0] if win.shape[0] >= 0 else None
    if not step or n is None or n < 0:
        return [(sig.dtype, (sig.shape[0], -1, -1, 2))]  # the rank, at least
    length = sig.shape[1]
    frames = (length - n) // step + 1 if length >= 0 else -1
    bins = n // 2 + 1 if int(a.get("onesided", 1)) else n
    return [(sig.dtype, (sig.shape[0], frames, bins, 2))]


def _dft_shapes(node: Any, a: dict[str, Any], ins: list[Any]) -> list[Any]:
    x = ins[0] if ins else None
    if x is None or x.shape is None or len(x.shape) < 2:
        return []
    rank = len(x.shape)
    ax = a.get("axis")
    if ax is None:
        ax = _known_int(ins[2]) if len(ins) > 2 else (1 if rank == 3 else None)
    if ax is None:
        return [(x.dtype, tuple([-1] * (rank - 1) + [2]))]
    ax = int(ax) + rank if int(ax) < 0 else int(ax)
    if not 0 <= ax < rank - 1:
        return []
    n = _known_int(ins[1]) if len(ins) > 1 else None
    n = x.shape[ax] if n is None else n
    if n >= 0 and int(a.get("onesided", 0)):
        n = n // 2 + 1
    shape = list(x.shape[:-1]) + [2]
    shape[ax] = n
    return [(x.dtype, tuple(shape))]


SHAPES["STFT"] = _stft_shapes
SHAPES["DFT"] = _dft_shapes


# --- com.microsoft.DynamicQuantizeLSTM (onnxruntime's dynamic quantisation of an LSTM) -------


def _dyn_quant_u8(a: np.ndarray) -> tuple[np.ndarray, float, int]:
    """``a`` as uint8 codes with a range that holds 0, as onnxruntime quantises a GEMM's float
    operand on every call: scale (max - min) / 255, zero point rounded half to even."""
    lo = min(float(a.min(initial=0.0)), 0.0)
    hi = max(float(a.max(initial=0.0)), 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi != lo else np.float32(1.0)
    zp = int(np.rint(np.clip(np.float32(0.0) - np.float32(lo) / scale, 0, 255)))
    q = np.clip(np.rint(a.astype(np.float32) / scale) + zp, 0, 255)
    return q.astype(np.int32), float(scale), zp


def _qgemm(a: np.ndarray, wq: np.ndarray, w_scale: np.ndarray) -> np.ndarray:
    """``a @ w`` as onnxruntime's u8s8 GEMM computes it: ``a`` quantised per call, integer
    accumulation, one float rescale (per tensor or per output column)."""
    q, scale, zp = _dyn_quant_u8(a)
    # the integer accumulation in float64: exact (|sum| < 2**53 for any real K), and BLAS
    acc = (q - zp).astype(np.float64) @ wq
    out: np.ndarray = (acc.astype(np.float32) * (np.float32(scale) * w_scale)).astype(np.float32)
    return out


@_kernel("com.microsoft.DynamicQuantizeLSTM")
def _dq_lstm(node: Any, a: dict[str, Any], ins: list[Any]) -> HostKernel | None:
    direction = a.get("direction", "forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    hidden = int(a.get("hidden_size", 0))
    clip = a.get("clip")
    names = list(node.input) + [""] * (12 - len(node.input))
    if (int(a.get("input_forget", 0)) or "activations" in a or int(a.get("layout", 0))
            or names[4] or not hidden):  # fmt: skip
        return None  # other forms: not written (the reference has no such operator either)
    dirs = 2 if direction == "bidirectional" else 1

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        arr = list(arrays) + [None] * (12 - len(arrays))
        x = np.asarray(arr[0], np.float32)  # [seq, batch, input]
        seq, batch, _ = x.shape
        wq = np.asarray(arr[1]).astype(np.int32)  # [dirs, input, 4h]
        rq = np.asarray(arr[2]).astype(np.int32)  # [dirs, h, 4h]
        b = (
            np.zeros((dirs, 8 * hidden), np.float32)
            if arr[3] is None
            else np.asarray(arr[3], np.float32)
        )
        h0 = (
            np.zeros((dirs, batch, hidden), np.float32)
            if arr[5] is None
            else np.asarray(arr[5], np.float32)
        )
        c0 = (
            np.zeros((dirs, batch, hidden), np.float32)
            if arr[6] is None
            else np.asarray(arr[6], np.float32)
        )
        p = None if arr[7] is None else np.asarray(arr[7], np.float32)
        ws, wz = np.asarray(arr[8], np.float32).reshape(dirs, -1), np.asarray(arr[9]).reshape(
            dirs, -1
        )
        rs, rz = np.asarray(arr[10], np.float32).reshape(dirs, -1), np.asarray(arr[11]).reshape(
            dirs, -1
        )
        y = np.zeros((seq, dirs, batch, hidden), np.float32)
        yh = np.zeros((dirs, batch, hidden), np.float32)
        yc = np.zeros((dirs, batch, hidden), np.float32)

        def sig(v: np.ndarray) -> np.ndarray:
            out: np.ndarray = (1.0 / (1.0 + np.exp(-v))).astype(np.float32)
            return out

        for d in range(dirs):
            rev = direction == "reverse" or d == 1
            w = (wq[d] - wz[d].astype(np.int32)).astype(np.float64)
            r = (rq[d] - rz[d].astype(np.int32)).astype(np.float64)
            xw = _qgemm(x.reshape(seq * batch, -1), w, ws[d]).reshape(seq, batch, 4 * hidden)
            bias = b[d, : 4 * hidden] + b[d, 4 * hidden :]
            h, c = h0[d], c0[d]
            for t in (range(seq - 1, -1, -1) if rev else range(seq)):
                g = xw[t] + _qgemm(h, r, rs[d]) + bias
                if clip is not None:
                    g = np.clip(g, -float(clip), float(clip))
                gi, go, gf, gc = (g[:, k * hidden : (k + 1) * hidden] for k in range(4))
                if p is not None:
                    gi = gi + p[d, :hidden] * c
                    gf = gf + p[d, 2 * hidden :] * c
                i_, f_, c_ = sig(gi), sig(gf), np.tanh(gc)
                c = (f_ * c + i_ * c_).astype(np.float32)
                if p is not None:
                    go = go + p[d, hidden : 2 * hidden] * c
                h = (sig(go) * np.tanh(c)).astype(np.float32)
                y[t, d] = h
            yh[d], yc[d] = h, c
        return [y, yh, yc]

    return fn


def _dq_lstm_shapes(node: Any, a: dict[str, Any], ins: list[Any]) -> list[Any]:
    x = ins[0] if ins else None
    if x is None or x.shape is None or len(x.shape) != 3:
        return []
    seq, batch = x.shape[0], x.shape[1]
    dirs = 2 if a.get("direction", b"forward") in (b"bidirectional", "bidirectional") else 1
    h = int(a.get("hidden_size", 0))
    f32 = np.dtype(np.float32)
    return [(f32, (seq, dirs, batch, h)), (f32, (dirs, batch, h)), (f32, (dirs, batch, h))]


SHAPES["com.microsoft.DynamicQuantizeLSTM"] = _dq_lstm_shapes


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
