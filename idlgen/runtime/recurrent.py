"""``LSTM`` (MindSpore layout): multi-layer, bidirectional, optional projection.

Inputs x [seq, batch, in], weightIh [dirs*layers, 4h, in], weightHh [dirs*layers, 4h, realH],
bias [dirs*layers, 8h] (input bias then hidden bias), h0 [dirs*layers, batch, realH],
c0 [dirs*layers, batch, h], and with ``projSize > 0`` a projection weight [dirs*layers, proj, h].
Gate order i, f, g, o (MindSpore ``nn.LSTM``); index = layer*dirs + direction. Inference only:
``dropout`` is ignored; zoneout keeps ``zoneout*old + (1-zoneout)*new`` of each state.
The time loop is in Python (one step per iteration, fully vectorised across batch and gates).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import KernelError

__all__ = ["lstm"]


def lstm(
    inputs: Sequence[np.ndarray],
    *,
    bidirectional: bool = False,
    has_bias: bool = True,
    input_size: int = 0,
    hidden_size: int = 0,
    num_layers: int = 1,
    num_directions: int = 1,
    zoneout_cell: float = 0.0,
    zoneout_hidden: float = 0.0,
    proj_size: int = 0,
) -> list[np.ndarray]:
    op = "LSTM"
    if len(inputs) < 3:
        raise KernelError(op, "needs x, weightIh, weightHh")
    x = np.asarray(inputs[0])
    if x.ndim != 3:
        raise KernelError(op, f"x must be [seq, batch, input], got {x.shape}")
    w_ih, w_hh = np.asarray(inputs[1]), np.asarray(inputs[2])
    dirs = 2 if bidirectional else 1
    if num_directions and int(num_directions) != dirs:
        raise KernelError(
            op,
            f"numDirections {num_directions} disagrees with bidirectional={bidirectional}",
        )
    layers = max(int(num_layers), 1)
    h = w_ih.shape[1] // 4
    if hidden_size and int(hidden_size) != h:
        raise KernelError(op, f"hiddenSize {hidden_size} disagrees with weightIh {w_ih.shape}")
    rh = int(proj_size) if proj_size else h
    seq, batch, _ = x.shape
    nstack = dirs * layers
    if w_ih.shape[0] != nstack or w_hh.shape != (nstack, 4 * h, rh):
        raise KernelError(
            op,
            f"weights {w_ih.shape}, {w_hh.shape} do not match {nstack} stacks of hidden {h}/{rh}",
        )

    def opt(i: int, shape: tuple[int, ...]) -> np.ndarray | None:
        if len(inputs) > i and inputs[i] is not None and np.asarray(inputs[i]).size:
            a = np.asarray(inputs[i])
            if a.shape != shape:
                raise KernelError(op, f"input {i} has shape {a.shape}, expected {shape}")
            return a
        return None

    bias = opt(3, (nstack, 8 * h)) if has_bias else None
    h0 = opt(4, (nstack, batch, rh))
    c0 = opt(5, (nstack, batch, h))
    proj = opt(6, (nstack, rh, h)) if proj_size else None
    if proj_size and proj is None:
        raise KernelError(op, f"projSize {proj_size} needs a projection weight input")
    dt = np.result_type(x, w_ih, np.float32)
    if proj is None and not zoneout_cell and not zoneout_hidden:
        return _lstm_plain(x.astype(dt, copy=False), w_ih, w_hh, bias, h0, c0, layers, dirs, h, dt)
    layer_in = x.astype(dt, copy=False)
    hn = np.zeros((nstack, batch, rh), dtype=dt)
    cn = np.zeros((nstack, batch, h), dtype=dt)
    for layer in range(layers):
        if layer_in.shape[2] != w_ih.shape[2]:
            raise KernelError(
                op,
                f"layer {layer} input size {layer_in.shape[2]} != weightIh {w_ih.shape[2]}",
            )
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            b = bias[k, : 4 * h] + bias[k, 4 * h :] if bias is not None else 0.0
            xs = layer_in[::-1] if d == 1 else layer_in
            gx = (
                xs.reshape(seq * batch, -1) @ w_ih[k].T.astype(dt) + b
            )  # all input projections at once
            gx = gx.reshape(seq, batch, 4 * h)
            hs = h0[k].astype(dt) if h0 is not None else np.zeros((batch, rh), dtype=dt)
            cs = c0[k].astype(dt) if c0 is not None else np.zeros((batch, h), dtype=dt)
            ys = np.empty((seq, batch, rh), dtype=dt)
            whh = np.ascontiguousarray(w_hh[k].T, dtype=dt)
            g = np.empty((batch, 4 * h), dtype=dt)
            c_g = np.empty((batch, h), dtype=dt)
            for t in range(seq):
                np.matmul(hs, whh, out=g)
                g += gx[t]
                np.tanh(g[:, 2 * h : 3 * h], out=c_g)
                # sigmoid(v) = (1 + tanh(v / 2)) / 2 for all four gates at once (the cell gate's
                # slot is overwritten but its tanh is already in c_g): 4 passes, not 4 per gate.
                g *= 0.5
                np.tanh(g, out=g)
                g *= 0.5
                g += 0.5
                i_g, f_g, o_g = g[:, :h], g[:, h : 2 * h], g[:, 3 * h :]
                c_new = f_g * cs
                c_g *= i_g
                c_new += c_g
                h_new = np.tanh(c_new)
                h_new *= o_g
                if proj is not None:
                    h_new = h_new @ proj[k].T.astype(dt)
                cs = zoneout_cell * cs + (1 - zoneout_cell) * c_new if zoneout_cell else c_new
                hs = zoneout_hidden * hs + (1 - zoneout_hidden) * h_new if zoneout_hidden else h_new
                ys[t] = hs
            outs.append(ys[::-1] if d == 1 else ys)
            hn[k], cn[k] = hs, cs
        layer_in = np.concatenate(outs, axis=2) if dirs == 2 else outs[0]
    return [np.ascontiguousarray(layer_in), hn, cn]


_PREP: dict[tuple[Any, ...], tuple[list[Any], tuple[np.ndarray, np.ndarray, np.ndarray | None]]] = (
    {}
)


def _prepared(
    w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray | None, ks: slice, h: int, dt: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One layer's weights for ``_lstm_plain``: gates reordered i, f, o, g, the sigmoid gates
    halved, transposed for ``x @ w`` ([dirs, in, 4h], [dirs, h, 4h]) and the two biases summed.
    Cached while read-only weights (a plan's constants) live."""
    arrs = [w_ih, w_hh] + ([] if bias is None else [bias])
    ro = all(not a.flags.writeable for a in arrs)
    key = (ks.start, ks.stop, np.dtype(dt).str) + tuple((id(a), a.ctypes.data) for a in arrs)
    hit = _PREP.get(key) if ro else None
    if hit is not None and all(r() is a for r, a in zip(hit[0], arrs)):
        return hit[1]
    order = np.r_[0 : 2 * h, 3 * h : 4 * h, 2 * h : 3 * h]
    scale = np.ones(4 * h, dtype=dt)
    scale[: 3 * h] = 0.5
    wi = np.ascontiguousarray((w_ih[ks][:, order].astype(dt) * scale[:, None]).transpose(0, 2, 1))
    wh = np.ascontiguousarray((w_hh[ks][:, order].astype(dt) * scale[:, None]).transpose(0, 2, 1))
    bv = None
    if bias is not None:
        b = bias[ks]
        bv = (b[:, : 4 * h] + b[:, 4 * h :]).astype(dt)[:, order] * scale
    out = (wi, wh, bv)
    if ro:

        def forget(_ref: Any, k: tuple[Any, ...] = key) -> None:
            _PREP.pop(k, None)

        try:
            refs = [weakref.ref(a, forget) for a in arrs]
        except TypeError:
            return out
        if len(_PREP) > 64:
            _PREP.clear()
        _PREP[key] = (refs, out)
    return out


def _lstm_plain(
    x: np.ndarray,
    w_ih: np.ndarray,
    w_hh: np.ndarray,
    bias: np.ndarray | None,
    h0: np.ndarray | None,
    c0: np.ndarray | None,
    layers: int,
    dirs: int,
    h: int,
    dt: np.dtype[Any],
) -> list[np.ndarray]:
    """LSTM without projection or zoneout, the per-step NumPy calls cut to a minimum: both
    directions advance together (one batched matmul per step, the backward one reading time
    reversed); gates are reordered to i, f, o, g with the sigmoid gates' weights and biases
    halved (exact in binary floating point), so one tanh over all four gates gives
    tanh(v/2) for i, f, o (sigmoid(v) = (1 + tanh(v/2)) / 2) and tanh(v) for g."""
    seq, batch, _ = x.shape
    hn = np.empty((dirs * layers, batch, h), dtype=dt)
    cn = np.empty((dirs * layers, batch, h), dtype=dt)
    layer_in = x
    for layer in range(layers):
        if layer_in.shape[2] != w_ih.shape[2]:
            raise KernelError(
                "LSTM", f"layer {layer} input size {layer_in.shape[2]} != weightIh {w_ih.shape[2]}"
            )
        ks = slice(layer * dirs, layer * dirs + dirs)
        wi, wh, bv = _prepared(w_ih, w_hh, bias, ks, h, dt)
        flat = layer_in.reshape(seq * batch, -1)
        # All input projections at once: gx[t, d] is what direction d adds at its step t.
        gx = np.empty((seq, dirs, batch, 4 * h), dtype=dt)
        for d in range(dirs):
            g = (flat @ wi[d]).reshape(seq, batch, 4 * h)
            if bv is not None:
                g += bv[d]
            gx[:, d] = g[::-1] if d == 1 else g
        hs = np.zeros((dirs, batch, h), dtype=dt) if h0 is None else h0[ks].astype(dt)
        cs = np.zeros((dirs, batch, h), dtype=dt) if c0 is None else c0[ks].astype(dt)
        ys = np.empty((seq, dirs, batch, h), dtype=dt)
        g = np.empty((dirs, batch, 4 * h), dtype=dt)
        sig, gi, gf, go, gg = (
            g[..., : 3 * h],
            g[..., :h],
            g[..., h : 2 * h],
            g[..., 2 * h : 3 * h],
            g[..., 3 * h :],
        )
        tmp = np.empty((dirs, batch, h), dtype=dt)
        if dirs == 1:  # 2-D operands: a plain matmul and simpler ufunc loops
            hs, cs, wh, gx, g, tmp = hs[0], cs[0], wh[0], gx[:, 0], g[0], tmp[0]
            sig, gi, gf, go, gg = sig[0], gi[0], gf[0], go[0], gg[0]
            steps = ys[:, 0]
        else:
            steps = ys
        for t in range(seq):
            np.matmul(hs, wh, out=g)
            g += gx[t]
            np.tanh(g, out=g)
            sig *= 0.5
            sig += 0.5
            cs *= gf
            np.multiply(gi, gg, out=tmp)
            cs += tmp
            np.tanh(cs, out=tmp)
            hs = steps[t]
            np.multiply(go, tmp, out=hs)
        hn[ks], cn[ks] = hs, cs
        # [seq, batch, dirs, h], the backward direction back in forward time order.
        out = np.empty((seq, batch, dirs, h), dtype=dt)
        out[:, :, 0] = ys[:, 0]
        if dirs == 2:
            out[:, :, 1] = ys[::-1, 1]
        layer_in = out.reshape(seq, batch, dirs * h)
    return [np.ascontiguousarray(layer_in), hn, cn]
