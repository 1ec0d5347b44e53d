"""``LSTM`` (MindSpore layout): multi-layer, bidirectional, optional projection.

Inputs x [seq, batch, in], weightIh [dirs*layers, 4h, in], weightHh [dirs*layers, 4h, realH],
bias [dirs*layers, 8h] (input bias then hidden bias), h0 [dirs*layers, batch, realH],
c0 [dirs*layers, batch, h], and with ``projSize > 0`` a projection weight [dirs*layers, proj, h].
Gate order i, f, g, o (MindSpore ``nn.LSTM``); index = layer*dirs + direction. Inference only:
``dropout`` is ignored; zoneout keeps ``zoneout*old + (1-zoneout)*new`` of each state.
The time loop is in Python (one step per iteration, fully vectorised across batch and gates).
"""

from __future__ import annotations

from collections.abc import Sequence

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
