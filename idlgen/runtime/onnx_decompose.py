"""ONNX operators lowered as exact compositions of NNRt v2_1 operators.

``install(HANDLERS)`` files these into the importer's handler registry (``onnx_import`` calls it
once; this module never imports ``onnx_import``):

- 1-D windows (Conv, ConvTranspose, pooling, InstanceNormalization, BatchNormalization on
  ``[N, C, L]``) run as 2-D ones on ``[N, C, 1, L]`` (height 1);
- GRU and RNN are unrolled over the (static) sequence: per step one MatMulFusion for the
  recurrent product, Split for the gates and fused-activation AddFusion/MulFusion/SubFusion;
- Einsum with one or two operands becomes Transpose / Reshape / ReduceFusion / MatMulFusion
  (batch, contracted and free indices grouped into one batched matrix product);
- onnxruntime's dynamic quantisation: DynamicQuantizeLinear from ReduceFusion, Maximum/Minimum,
  DivFusion, Round, Clip and Cast; MatMulInteger / ConvInteger in float64 (exact for 8-bit
  operands: every partial sum is an integer below 2**53) and cast back to int32;
- HardSigmoid for any alpha/beta (MulFusion, AddFusion, Clip), Slice with steps (StridedSlice),
  ConstantOfShape, Range, Expand onto NNRt nodes when they are not folded.

Every step is exact in the ONNX sense: the same arithmetic, possibly in another association
order (GRU's ``(1 - z) * n + z * h`` is computed as ``n + z * (h - n)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import onnx_lowering as L
from .onnx_values import Val

if TYPE_CHECKING:
    from .onnx_import import Importer

Handler = Callable[["Importer", Any, dict[str, Any], list["Val | None"]], None]
#: This module's handlers, by ONNX op type (``install`` merges them into the importer's).
HANDLERS: dict[str, Handler] = {}
handles = L.registry(HANDLERS)
_WRAP: list[str] = []  # 2-D window handlers that also take 1-D inputs


def install(registry: dict[str, Handler]) -> None:
    """Add this module's handlers to the importer's ``registry``; the 2-D window handlers there
    learn 1-D inputs (run as 2-D with height 1)."""
    _BEFORE.update(registry)
    for op in _WRAP:
        if op in registry:
            registry[op] = _windowed(registry[op])
    registry.update(HANDLERS)
    _IMPORTER.update(registry)


_IMPORTER: dict[str, Handler] = {}  # the importer's registry once installed (ConvInteger's Conv)
_BEFORE: dict[str, Handler] = {}  # the importer's own handlers (Expand with a constant shape)


def _i32(imp: Importer, name: str, vals: Sequence[int]) -> int:
    return imp.b.constant(name, np.array(list(vals), np.int32))


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


_Unsupported = L.NotExpressible

_SIGMOID, _TANH, _RELU = 2, 10, 1
_ACT_CODES = {"Sigmoid": _SIGMOID, "Tanh": _TANH, "Relu": _RELU}

Dims = Sequence[int]


# --- small emitters --------------------------------------------------------------------------


def _nm(node: Any) -> str:
    return str(node.name or node.output[0])


def _op(
    imp: Importer,
    struct: str,
    attrs: dict[str, Any],
    ins: Sequence[int],
    name: str,
    dt: Any,
    dims: Dims,
) -> int:
    (i,) = imp._node(struct, attrs, ins, [(name, np.dtype(dt), list(dims))], name)
    return i


def _reshape(imp: Importer, t: int, dims: Dims, name: str, dt: Any) -> int:
    shp = imp.b.constant(name + ":dims", np.array(list(dims), np.int64))
    return _op(imp, "Reshape", {}, [t, shp], name, dt, dims)


def _transpose(imp: Importer, t: int, perm: Dims, name: str, dt: Any, dims: Dims) -> int:
    return _op(imp, "Transpose", {}, [t, _i32(imp, name + ":perm", perm)], name, dt, dims)


def _split(
    imp: Importer, t: int, sizes: Dims, axis: int, name: str, dt: Any, dims: Dims
) -> list[int]:
    outs = []
    for k, s in enumerate(sizes):
        d = list(dims)
        d[axis] = s
        outs.append((f"{name}:{k}", np.dtype(dt), d))
    attrs = {"outputNum": len(sizes), "sizeSplits": list(sizes), "axis": axis}
    return imp._node("Split", attrs, [t], outs, name)


def _bin(
    imp: Importer, struct: str, a: int, b: int, name: str, dt: Any, dims: Dims, act: int = 0
) -> int:
    return _op(imp, struct, {"activationType": act}, [a, b], name, dt, dims)


def _set(imp: Importer, out: str, dt: Any, shape: Dims, idx: int) -> None:
    imp.vals[out] = Val(out, np.dtype(dt), tuple(int(d) for d in shape), idx)


def _static(v: Val | None, what: str) -> tuple[int, ...]:
    if v is None or v.shape is None or any(d < 0 for d in v.shape):
        raise L.ShapeUnknown(
            f"{what} of unknown shape (pin input dims with load(input_shapes=...))"
        )
    return v.shape


def _out_info(imp: Importer, name: str, what: str) -> tuple[np.dtype[Any], tuple[int, ...]]:
    dt, shape = imp.info.get(name, (None, None))
    if dt is None or shape is None or any(d < 0 for d in shape):
        raise L.ShapeUnknown(
            f"{what} of unknown shape (pin input dims with load(input_shapes=...))"
        )
    return dt, shape


# --- 1-D windows as 2-D ones -----------------------------------------------------------------

_WINDOWED = ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
             "GlobalMaxPool", "InstanceNormalization", "BatchNormalization")  # fmt: skip
_LIFT_ATTRS = {"kernel_shape": 1, "strides": 1, "dilations": 1, "output_padding": 0}


def _lift_attrs(a: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, unit in _LIFT_ATTRS.items():
        if k in a:
            out[k] = [unit] + [int(v) for v in a[k]]
    if "pads" in a:
        b, e = (int(v) for v in a["pads"])
        out["pads"] = [0, b, 0, e]
    if "output_shape" in a:
        raise _Unsupported("output_shape on a 1-D ConvTranspose")
    return out


def _lift_1d(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None], inner: Any) -> None:
    """Run a 1-D window operator on ``[N, C, 1, L]`` and reshape its result back."""
    from . import onnx_lite as onnx

    xv = x[0]
    assert xv is not None
    n, c, length = _static(xv, node.op_type + " input")
    nm = _nm(node)
    dt = xv.dtype or np.dtype(np.float32)
    x4 = Val(nm + ":x_h1", dt, (n, c, 1, length),
             _reshape(imp, imp.tensor(xv), [n, c, 1, length], nm + ":x_h1", dt))  # fmt: skip
    imp.vals[x4.name] = x4
    names = [x4.name]
    ins: list[Val | None] = [x4]
    for k, v in enumerate(x[1:], 1):
        if v is None:
            names.append("")
            ins.append(None)
            continue
        if k == 1 and node.op_type in ("Conv", "ConvTranspose"):
            if v.const is None:
                raise L.ShapeUnknown("weights computed at run time")
            v = imp.const(v.name + ":w_h1", np.ascontiguousarray(v.const[:, :, None, :]))
        names.append(v.name)
        ins.append(v)
    a2 = _lift_attrs(a)
    outs = []
    for o in node.output:
        if not o:
            outs.append("")
            continue
        odt, (on, oc, ol) = _out_info(imp, o, node.op_type + " output")
        imp.info[o + ":h1"] = (odt, (on, oc, 1, ol))
        outs.append(o + ":h1")
    new = onnx.helper.make_node(node.op_type, names, outs, name=nm + ":h1", **a2)
    inner(imp, new, a2, ins)
    for o, o4 in zip(node.output, outs):
        if not o:
            continue
        v4 = imp.vals[o4]
        assert v4.shape is not None
        on, oc, _, ol = v4.shape
        if v4.nhwc:
            # [N, 1, L, C] -> [N, L, C] moves no data; then one Transpose to [N, C, L].
            flat = _reshape(imp, imp.tensor(v4, True), [on, ol, oc], o + ":nlc", v4.dtype)
            idx = _transpose(imp, flat, [0, 2, 1], o, v4.dtype, [on, oc, ol])
        else:
            idx = _reshape(imp, imp.tensor(v4), [on, oc, ol], o, v4.dtype)
        _set(imp, o, v4.dtype, (on, oc, ol), idx)
        if o4 in imp.fusable:  # a ReLU after the 1-D Conv still fuses into it
            imp.fusable[o] = imp.fusable.pop(o4)


def _windowed(inner: Handler) -> Handler:
    def handler(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
        xv = x[0]
        if xv is not None and xv.shape is not None and len(xv.shape) == 3:
            _lift_1d(imp, node, a, x, inner)
        else:
            inner(imp, node, a, x)

    return handler


_WRAP.extend(_WINDOWED)


# --- GRU / RNN -------------------------------------------------------------------------------


def _acts(a: dict[str, Any], default: list[str], dirs: int) -> list[int]:
    names = [s.decode() if isinstance(s, bytes) else str(s) for s in a.get("activations", [])]
    names = names or default * dirs
    if "activation_alpha" in a or "activation_beta" in a:
        raise _Unsupported("activation_alpha/activation_beta")
    codes = []
    for s in names:
        if s not in _ACT_CODES:
            raise _Unsupported(f"activation {s}")
        codes.append(_ACT_CODES[s])
    return codes


@handles("GRU", "RNN")
def _recurrent(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """Unrolled over the sequence with both directions stacked (``D`` = 1 or 2): every step
    works on ``[D, 1, batch, *]`` tensors with batched MatMulFusion, so a bidirectional layer
    costs the nodes of one direction. The input projections of all steps are one MatMulFusion
    per gate group; the reverse direction reads the sequence through one Gather."""
    gru = node.op_type == "GRU"
    g = 3 if gru else 1
    x = list(x) + [None] * (6 - len(x))
    xs, w, r, bv, lens, h0 = x[:6]
    if int(a.get("layout", 0)):
        raise _Unsupported("layout=1")
    if "clip" in a:
        raise _Unsupported("clip")
    assert xs is not None and w is not None and r is not None
    if w.const is None or r.const is None or (bv is not None and bv.const is None):
        raise L.ShapeUnknown("weights computed at run time")
    seq, batch, isz = _static(xs, node.op_type + " input")
    wc, rc = w.const, r.const
    dirs, h = wc.shape[0], wc.shape[1] // g
    if lens is not None:
        if lens.const is None or any(int(v) != seq for v in lens.const.reshape(-1)):
            raise _Unsupported("sequence_lens shorter than the sequence")
    direction = a.get("direction", "forward")
    acts = _acts(a, ["Sigmoid", "Tanh"] if gru else ["Tanh"], dirs)
    per = len(acts) // dirs
    if acts[:per] != acts[per:] and dirs == 2:
        raise _Unsupported("different activations per direction")
    f, gact = acts[0], acts[1 if gru else 0]
    lbr = bool(int(a.get("linear_before_reset", 0)))
    dt = wc.dtype
    b = np.zeros((dirs, 2 * g * h), dt) if bv is None else np.asarray(bv.const, dt)
    wb, rb = b[:, : g * h], b[:, g * h :]
    nm = _nm(node)
    rev = [d == 1 if direction == "bidirectional" else direction == "reverse" for d in range(dirs)]
    rev_idx = imp.b.constant(nm + ":rev", np.arange(seq - 1, -1, -1, dtype=np.int32))
    ax0 = _i32(imp, nm + ":axis0", [0])
    xt = imp.tensor(xs)
    srcs = []
    for d in range(dirs):
        t = xt
        if rev[d]:
            t = _op(imp, "Gather", {}, [xt, rev_idx, ax0], f"{nm}:x_rev", dt, [seq, batch, isz])
        srcs.append(_reshape(imp, t, [1, seq * batch, isz], f"{nm}:x{d}", dt))
    xd = srcs[0] if dirs == 1 else _op(imp, "Concat", {"axis": 0}, srcs, nm + ":xd", dt,
                                       [dirs, seq * batch, isz])  # fmt: skip
    # Gate groups: GRU (z, r) and n; RNN one. Input-side biases: W's, plus R's where they add.
    if gru:
        groups = [(0, 2 * h), (2 * h, 3 * h)]
        xbias = wb + np.concatenate([rb[:, : 2 * h], rb[:, 2 * h :] * (0 if lbr else 1)], axis=1)
    else:
        groups = [(0, h)]
        xbias = wb + rb
    mm = {"transposeA": False, "transposeB": False, "activationType": 0}
    xsteps: list[list[int]] = []
    for k, (lo, hi) in enumerate(groups):
        wt = np.ascontiguousarray(np.transpose(wc[:, lo:hi, :], (0, 2, 1)))  # [D, in, k]
        bias = np.ascontiguousarray(xbias[:, None, lo:hi])  # [D, 1, k]
        xw = _op(imp, "MatMulFusion", mm, [xd, imp.b.constant(f"{nm}:w{k}", wt),
                 imp.b.constant(f"{nm}:xb{k}", bias)], f"{nm}:xw{k}", dt,
                 [dirs, seq * batch, hi - lo])  # fmt: skip
        xw = _reshape(imp, xw, [dirs, seq, batch, hi - lo], f"{nm}:xw{k}_4", dt)
        if seq > 1:
            xsteps.append(_split(imp, xw, [1] * seq, 1, f"{nm}:xw{k}_t", dt,
                                 [dirs, seq, batch, hi - lo]))  # fmt: skip
        else:
            xsteps.append([xw])
    rt = np.transpose(rc, (0, 2, 1))[:, None]  # [D, 1, h, g*h]
    sh = [dirs, 1, batch, h]
    if h0 is not None:
        hcur = _reshape(imp, imp.tensor(h0), sh, nm + ":h0", dt)
    else:
        hcur = imp.b.constant(nm + ":h0", np.zeros(sh, dt))
    if gru:
        r_zr = imp.b.constant(nm + ":rzr", np.ascontiguousarray(rt[..., : 2 * h]))
        r_n = imp.b.constant(nm + ":rn", np.ascontiguousarray(rt[..., 2 * h :]))
        rbn = imp.b.constant(nm + ":rbn", np.ascontiguousarray(rb[:, None, None, 2 * h :]))
    else:
        r_all = imp.b.constant(nm + ":r", np.ascontiguousarray(rt))
    hs: list[int] = []
    s2 = [dirs, 1, batch, 2 * h]
    for t in range(seq):
        q = f"{nm}:t{t}"
        if not gru:
            hr = _op(imp, "MatMulFusion", mm, [hcur, r_all], q + ":hr", dt, sh)
            hcur = _bin(imp, "AddFusion", xsteps[0][t], hr, q + ":h", dt, sh, f)
            hs.append(hcur)
            continue
        hzr = _op(imp, "MatMulFusion", mm, [hcur, r_zr], q + ":hzr", dt, s2)
        zr = _bin(imp, "AddFusion", xsteps[0][t], hzr, q + ":zr", dt, s2, f)
        z, rg = _split(imp, zr, [h, h], 3, q + ":zrs", dt, s2)
        if lbr:
            hn = _op(imp, "MatMulFusion", mm, [hcur, r_n, rbn], q + ":hn", dt, sh)
            rn = _bin(imp, "MulFusion", rg, hn, q + ":rn", dt, sh)
        else:
            rh = _bin(imp, "MulFusion", rg, hcur, q + ":rh", dt, sh)
            rn = _op(imp, "MatMulFusion", mm, [rh, r_n], q + ":rn", dt, sh)
        n = _bin(imp, "AddFusion", xsteps[1][t], rn, q + ":n", dt, sh, gact)
        diff = _bin(imp, "SubFusion", hcur, n, q + ":hmn", dt, sh)
        zd = _bin(imp, "MulFusion", z, diff, q + ":zd", dt, sh)
        hcur = _bin(imp, "AddFusion", n, zd, q + ":h", dt, sh)
        hs.append(hcur)
    outs = list(node.output) + ["", ""]
    if outs[0]:
        full = [dirs, seq, batch, h]
        y = hs[0] if seq == 1 else _op(imp, "Concat", {"axis": 1}, hs, nm + ":ys", dt, full)
        if any(rev):  # steps of a reverse direction run back in time
            one = [1, seq, batch, h]
            parts = _split(imp, y, [1] * dirs, 0, nm + ":yd", dt, full) if dirs > 1 else [y]
            ax1 = _i32(imp, nm + ":axis1", [1])
            parts = [_op(imp, "Gather", {}, [p, rev_idx, ax1], f"{nm}:y{d}_fwd", dt, one)
                     if rev[d] else p for d, p in enumerate(parts)]  # fmt: skip
            y = (
                parts[0]
                if dirs == 1
                else _op(imp, "Concat", {"axis": 0}, parts, nm + ":yc", dt, full)
            )
        out = [seq, dirs, batch, h]
        if dirs == 1:
            yo = _reshape(imp, y, out, outs[0], dt)
        else:
            yo = _transpose(imp, y, [1, 0, 2, 3], outs[0], dt, out)
        _set(imp, outs[0], dt, out, yo)
    if outs[1]:
        _set(imp, outs[1], dt, (dirs, batch, h), _reshape(imp, hcur, [dirs, batch, h], outs[1], dt))


# --- Slice with steps, HardSigmoid -----------------------------------------------------------


def strided_slice(
    imp: Importer,
    node: Any,
    xv: Val,
    axes: list[int],
    starts: list[int],
    ends: list[int],
    steps: list[int],
) -> None:
    """ONNX Slice with steps as one StridedSlice over every axis (ONNX clamping applied here;
    a negative step that runs past index 0 sets the axis' endMask)."""
    shape = _static(xv, "Slice input")
    rank = len(shape)
    begin, end, stride = [0] * rank, list(shape), [1] * rank
    end_mask = 0
    out = list(shape)
    for ax, s, e, st in zip(axes, starts, ends, steps):
        n = shape[ax]
        if st == 0:
            raise _Unsupported("step 0")
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), n), min(max(e, 0), n)
        else:
            s, e = min(max(s, 0), n - 1), min(max(e, -1), n - 1)
        begin[ax], end[ax], stride[ax] = s, e, st
        if e < 0:
            end_mask |= 1 << ax
        out[ax] = len(range(s, e, st))
    nm = _nm(node)
    dt = xv.dtype or np.dtype(np.float32)
    attrs = {"beginMask": 0, "endMask": end_mask, "ellipsisMask": 0, "newAxisMask": 0,
             "shrinkAxisMask": 0}  # fmt: skip
    ins = [imp.tensor(xv), _i32(imp, nm + ":begin", begin), _i32(imp, nm + ":end", end),
           _i32(imp, nm + ":strides", stride)]  # fmt: skip
    _set(
        imp, node.output[0], dt, out, _op(imp, "StridedSlice", attrs, ins, node.output[0], dt, out)
    )


_RELU1 = 7  # clip to [0, 1]


@handles("HardSigmoid")
def _hard_sigmoid(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """max(0, min(1, alpha * x + beta)): HSIGMOID when alpha = 1/6, beta = 1/2 (as exported from
    PyTorch); otherwise MulFusion by alpha, then AddFusion of beta with a fused RELU1 clamp."""
    xv = x[0]
    assert xv is not None
    alpha, beta = float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))
    nhwc = xv.const is None and xv.nhwc
    t = imp.tensor(xv, nhwc)
    dt = xv.dtype or np.dtype(np.float32)
    if np.float32(alpha) == np.float32(1 / 6) and beta == 0.5:
        imp.emit("Activation", L.activation(13), [t], node, nhwc=nhwc)
        return
    nm = _nm(node)
    dims = list(imp.b.tensors[t].dims)
    ca = imp.b.constant(nm + ":alpha", np.array(alpha, dt))
    cb = imp.b.constant(nm + ":beta", np.array(beta, dt))
    m = _bin(imp, "MulFusion", t, ca, nm + ":ax", dt, dims)
    imp.emit("AddFusion", {"activationType": _RELU1}, [m, cb], node, nhwc=nhwc)


def gather_scalar(imp: Importer, node: Any, xv: Val, index: np.ndarray, axis: int, ax: int) -> None:
    """Gather with a rank-0 index: Gather ``[i]`` then Squeeze the axis."""
    assert xv.shape is not None
    nm = _nm(node)
    dt = xv.dtype or np.dtype(np.float32)
    mid = list(xv.shape)
    mid[axis] = 1
    i1 = imp.b.constant(nm + ":index", np.asarray(index).reshape(1))
    g = _op(imp, "Gather", {}, [imp.tensor(xv), i1, ax], nm + ":g1", dt, mid)
    out = mid[:axis] + mid[axis + 1 :]
    _set(imp, node.output[0], dt, out,
         _op(imp, "Squeeze", {"axis": [axis]}, [g], node.output[0], dt, out))  # fmt: skip


# --- Einsum ----------------------------------------------------------------------------------


def _einsum_terms(eq: str, ranks: list[int]) -> tuple[list[str], str]:
    """Operand and output subscripts with any ellipsis spelled out as upper-case letters
    (ONNX subscripts are lower-case letters; the explicit output defaults to the sorted
    letters that occur once, after the ellipsis dims)."""
    eq = eq.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise _Unsupported(f"equation {eq!r} names {len(terms)} operands, got {len(ranks)}")
    ell = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell = max(ell, r - (len(t) - 3))
    fill = "".join(chr(ord("A") + k) for k in range(ell))
    out_terms = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            n = r - (len(t) - 3)
            t = t.replace("...", fill[ell - n :])
        if len(t) != r:
            raise _Unsupported(f"subscripts {t!r} for a rank-{r} operand")
        out_terms.append(t)
    if "->" in eq:
        out = rhs.replace("...", fill)
    else:
        letters = "".join(out_terms)
        out = fill + "".join(
            sorted(c for c in set(letters) if c.islower() and letters.count(c) == 1)
        )
    return out_terms, out


def _perm_to(src: str, dst: str) -> list[int]:
    return [src.index(c) for c in dst]


class _Ein:
    """One Einsum operand during lowering: its NNRt tensor (or constant) and subscripts."""

    def __init__(self, imp: Importer, v: Val, sub: str) -> None:
        self.imp, self.sub = imp, sub
        self.shape = list(_static(v, "Einsum operand"))
        self.dt = v.dtype or np.dtype(np.float32)
        self.const = None if v.const is None else np.asarray(v.const)
        self.t = -1 if v.const is not None else imp.tensor(v)

    def dim(self, c: str) -> int:
        return self.shape[self.sub.index(c)]

    def tensor(self, name: str) -> int:
        if self.t < 0:
            assert self.const is not None
            self.t = self.imp.b.constant(name, np.ascontiguousarray(self.const))
        return self.t

    def transpose(self, sub: str, name: str) -> None:
        if sub == self.sub:
            return
        perm = _perm_to(self.sub, sub)
        shape = [self.shape[p] for p in perm]
        if self.const is not None:
            self.const = np.transpose(self.const, perm)
        else:
            self.t = _transpose(self.imp, self.t, perm, name, self.dt, shape)
        self.sub, self.shape = sub, shape

    def reshape(self, dims: list[int], name: str) -> None:
        if dims == self.shape:
            return
        if self.const is not None:
            self.const = self.const.reshape(dims)
        else:
            self.t = _reshape(self.imp, self.t, dims, name, self.dt)
        self.shape = dims

    def reduce(self, letters: str, name: str) -> None:
        """Sum over ``letters`` (indices no other operand nor the output uses)."""
        if not letters:
            return
        axes = [self.sub.index(c) for c in letters]
        keep = [k for k in range(len(self.sub)) if k not in axes]
        shape = [self.shape[k] for k in keep]
        if self.const is not None:
            self.const = self.const.sum(axis=tuple(axes), dtype=self.const.dtype)
        else:
            attrs = {"keepDims": False, "mode": 4, "reduceToEnd": False, "coeff": 1.0}
            ax = _i32(self.imp, name + ":axes", axes)
            self.t = _op(self.imp, "ReduceFusion", attrs, [self.t, ax], name, self.dt, shape)
        self.sub = "".join(self.sub[k] for k in keep)
        self.shape = shape


def _prod(dims: Sequence[int]) -> int:
    return int(np.prod(dims)) if len(dims) else 1


@handles("Einsum")
def _einsum(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """One or two operands without repeated subscripts in an operand (no diagonals): sum the
    indices only one operand has, then one batched MatMulFusion over [batch, free_a, contracted]
    x [batch, contracted, free_b], then Reshape and Transpose into the output order."""
    vals = [v for v in x if v is not None]
    eq = str(a["equation"])
    terms, out = _einsum_terms(eq, [len(_static(v, "Einsum operand")) for v in vals])
    if len(vals) not in (1, 2) or any(len(set(t)) != len(t) for t in terms + [out]):
        raise _Unsupported(
            f"NNRt v2_1 has no operator for Einsum {eq!r} (only one or two operands without "
            "repeated subscripts decompose onto MatMul/Transpose/Reshape/ReduceSum)"
        )
    nm = _nm(node)
    ops = [_Ein(imp, v, t) for v, t in zip(vals, terms)]
    for k, e in enumerate(ops):
        others = "".join(o.sub for j, o in enumerate(ops) if j != k) + out
        e.reduce("".join(c for c in e.sub if c not in others), f"{nm}:sum{k}")
    dt = ops[0].dt
    if len(ops) == 1:
        (e,) = ops
        e.transpose(out, nm + ":t")
        if e.t < 0:
            imp.const(node.output[0], np.ascontiguousarray(e.const))
        else:
            _set(imp, node.output[0], dt, e.shape, e.t)
        return
    ea, eb = ops
    batch = "".join(c for c in out if c in ea.sub and c in eb.sub)
    contract = "".join(c for c in ea.sub if c in eb.sub and c not in out)
    free_a = "".join(c for c in ea.sub if c not in eb.sub)
    free_b = "".join(c for c in eb.sub if c not in ea.sub)
    # Broadcast batch dims (size 1 against n) stay exact through MatMulFusion's broadcasting
    # only when shapes agree; require equal sizes.
    if any(ea.dim(c) != eb.dim(c) for c in batch + contract):
        raise _Unsupported(f"Einsum {eq!r} with broadcast batch dims")
    bs = [ea.dim(c) for c in batch]
    size = {c: ea.dim(c) for c in ea.sub} | {c: eb.dim(c) for c in eb.sub}
    ma, kk, nb = (
        _prod([ea.dim(c) for c in free_a]),
        _prod([ea.dim(c) for c in contract]),
        _prod([eb.dim(c) for c in free_b]),
    )
    # A as [batch, M, K] (or [batch, K, M] with transposeA when that saves a Transpose).
    ta = ea.sub == batch + contract + free_a and ea.t >= 0
    ea.transpose(batch + (contract + free_a if ta else free_a + contract), nm + ":ta")
    ea.reshape(bs + ([kk, ma] if ta else [ma, kk]), nm + ":ra")
    tb = eb.sub == batch + free_b + contract and eb.t >= 0
    eb.transpose(batch + (free_b + contract if tb else contract + free_b), nm + ":tb")
    eb.reshape(bs + ([nb, kk] if tb else [kk, nb]), nm + ":rb")
    attrs = {"transposeA": ta, "transposeB": tb, "activationType": 0}
    mm = _op(imp, "MatMulFusion", attrs, [ea.tensor(nm + ":a"), eb.tensor(nm + ":b")],
             nm + ":mm", dt, bs + [ma, nb])  # fmt: skip
    res = _Ein.__new__(_Ein)
    res.imp, res.dt, res.const, res.t = imp, dt, None, mm
    res.sub, res.shape = batch + "@#", bs + [ma, nb]
    dims = bs + [size[c] for c in free_a] + [size[c] for c in free_b]
    res.reshape(dims, nm + ":rr")
    res.sub = batch + free_a + free_b
    res.transpose(out, node.output[0])
    _set(imp, node.output[0], dt, res.shape, res.t)


# --- dynamic quantisation (onnxruntime's quantize_dynamic) ------------------------------------


def _cast(imp: Importer, t: int, dt: Any, name: str, dims: Dims) -> int:
    from .dtypes import from_numpy

    code = imp.b.constant(name + ":to", np.array([from_numpy(np.dtype(dt))], np.int32))
    return _op(imp, "Cast", {}, [t, code], name, dt, dims)


@handles("DynamicQuantizeLinear")
def _dynamic_quantize(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """uint8 quantisation with the range of this call's input (always including 0):
    scale = (max(x, 0) - min(x, 0)) / 255, zero point = round(clip(-min / scale, 0, 255)),
    y = clip(round(x / scale) + zero point, 0, 255); rounding half to even throughout."""
    xv = x[0]
    assert xv is not None
    shape = list(_static(xv, "DynamicQuantizeLinear input"))
    nm = _nm(node)
    f32 = np.dtype(np.float32)
    t = imp.tensor(xv)
    one = [1] * len(shape)
    axes = _i32(imp, nm + ":axes", range(len(shape)))
    zero = imp.b.constant(nm + ":zero", np.zeros(one, f32))
    red = {"keepDims": True, "reduceToEnd": False, "coeff": 1.0}
    mx = _op(imp, "ReduceFusion", {**red, "mode": 1}, [t, axes], nm + ":max", f32, one)
    mn = _op(imp, "ReduceFusion", {**red, "mode": 2}, [t, axes], nm + ":min", f32, one)
    mx = _op(imp, "Maximum", {}, [mx, zero], nm + ":max0", f32, one)
    mn = _op(imp, "Minimum", {}, [mn, zero], nm + ":min0", f32, one)
    rng = _bin(imp, "SubFusion", mx, mn, nm + ":range", f32, one)
    q = imp.b.constant(nm + ":qrange", np.full(one, 255.0, f32))
    scale = _bin(imp, "DivFusion", rng, q, nm + ":scale", f32, one)
    zq = _bin(imp, "DivFusion", mn, scale, nm + ":min_q", f32, one)
    zq = _op(imp, "Neg", {}, [zq], nm + ":zp_raw", f32, one)
    zq = _op(imp, "Clip", {"min": 0.0, "max": 255.0}, [zq], nm + ":zp_clip", f32, one)
    zp = _op(imp, "Round", {}, [zq], nm + ":zp_f", f32, one)
    y = _bin(imp, "DivFusion", t, scale, nm + ":xs", f32, shape)
    y = _op(imp, "Round", {}, [y], nm + ":xr", f32, shape)
    y = _bin(imp, "AddFusion", y, zp, nm + ":xz", f32, shape)
    y = _op(imp, "Clip", {"min": 0.0, "max": 255.0}, [y], nm + ":xc", f32, shape)
    outs = list(node.output) + ["", ""]
    u8 = np.dtype(np.uint8)
    _set(imp, outs[0], u8, shape, _cast(imp, y, u8, outs[0], shape))
    if outs[1]:
        sq = {"axis": list(range(len(shape)))}
        _set(imp, outs[1], f32, (), _op(imp, "Squeeze", sq, [scale], outs[1], f32, []))
    if outs[2]:
        zpu = _cast(imp, zp, u8, nm + ":zp_u8", one)
        sq = {"axis": list(range(len(shape)))}
        _set(imp, outs[2], u8, (), _op(imp, "Squeeze", sq, [zpu], outs[2], u8, []))


def _int32_operand(imp: Importer, v: Val, zp: Val | None, name: str, axis: int | None) -> int:
    """``v - zero_point`` as int32: folded for constants, Cast and SubFusion otherwise.
    ``axis``: where a per-row/per-channel zero point vector lines up (None: scalar only)."""
    i32 = np.dtype(np.int32)
    shape = list(_static(v, name))
    qps = (
        list(imp.b.tensors[v.idx].quantParams or [])
        if v.const is None and v.idx is not None
        else []
    )
    if qps:
        return _codes_of_quantised(imp, v, qps, zp, name, shape)
    if zp is not None and zp.const is None:
        if v.const is not None or _prod(_static(zp, "zero point")) != 1:
            raise L.ShapeUnknown("a zero point vector computed at run time")
        zs = list(zp.shape or ())
        zt = _cast(imp, imp.tensor(zp), i32, name + ":zp", zs)
        t = _cast(imp, imp.tensor(v), i32, name + ":i32", shape)
        return _bin(imp, "SubFusion", t, zt, name, i32, shape)
    z = None if zp is None else np.asarray(zp.const).astype(np.int32)
    shape = list(_static(v, name))
    if z is not None and z.size > 1:
        if axis is None:
            raise _Unsupported("a per-row zero point on this operand")
        zs = [1] * len(shape)
        zs[axis] = z.size
        z = z.reshape(zs)
    if v.const is not None:
        arr = np.asarray(v.const).astype(np.int32)
        if z is not None:
            arr = arr - z
        return imp.b.constant(name, np.ascontiguousarray(arr, np.int32))
    t = _cast(imp, imp.tensor(v), i32, name + ":i32", shape)
    if z is None or not z.any():
        return t
    zc = imp.b.constant(name + ":zp", np.ascontiguousarray(z))
    return _bin(imp, "SubFusion", t, zc, name, i32, shape)


def _codes_of_quantised(
    imp: Importer, v: Val, qps: list[Any], zp: Val | None, name: str, shape: list[int]
) -> int:
    """An integer tensor that carries quantisation parameters reaches float-computing NNRt
    nodes as its real value ``(q - zq) * scale`` (the executor dequantises it): recover
    ``q - zp`` exactly as ``round(real / scale) + (zq - zp)`` (|q - zq| <= 255, so the quotient
    is within far less than 0.5 of that integer)."""
    if len(qps) != 1 or (zp is not None and zp.const is None):
        raise _Unsupported("a per-channel quantised operand (or a computed zero point)")
    scale, zq = float(qps[0].scale), int(qps[0].zeroPoint)
    z = 0 if zp is None else int(np.asarray(zp.const).reshape(-1)[0])
    if zp is not None and np.asarray(zp.const).size != 1:
        raise _Unsupported("a per-row zero point on a quantised operand")
    f32 = np.dtype(np.float32)
    q = _bin(
        imp, "DivFusion", imp.tensor(v), _k(imp, name + ":s", scale, f32), name + ":q", f32, shape
    )
    q = _op(imp, "Round", {}, [q], name + ":qr", f32, shape)
    t = _cast(imp, q, np.dtype(np.int32), name + ":i32", shape)
    if zq == z:
        return t
    return _bin(imp, "AddFusion", t, _k(imp, name + ":dz", zq - z, np.int32), name, np.int32, shape)


@handles("MatMulInteger")
def _matmul_integer(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """(A - a_zero_point) @ (B - b_zero_point) in int32 (what the operator defines: int32
    accumulation of 8-bit products)."""
    x = list(x) + [None] * (4 - len(x))
    va, vb, za, zb = x[:4]
    assert va is not None and vb is not None
    ra, rb = len(_static(va, "A")), len(_static(vb, "B"))
    nm = _nm(node)
    ta = _int32_operand(imp, va, za, nm + ":a", ra - 2 if ra >= 2 else None)
    tb = _int32_operand(imp, vb, zb, nm + ":b", rb - 1)
    attrs = {"transposeA": False, "transposeB": False, "activationType": 0}
    imp.emit("MatMulFusion", attrs, [ta, tb], node)


@handles("ConvInteger")
def _conv_integer(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """Conv of (x - x_zero_point) and (w - w_zero_point) in int32."""
    from . import onnx_lite as onnx

    x = list(x) + [None] * (4 - len(x))
    xv, wv, zx, zw = x[:4]
    assert xv is not None and wv is not None
    if wv.const is None:
        raise L.ShapeUnknown("weights computed at run time")
    nm = _nm(node)
    shape = _static(xv, "ConvInteger input")
    xi = Val(nm + ":x_i32", np.dtype(np.int32), shape, _int32_operand(imp, xv, zx, nm + ":x", None))
    imp.vals[xi.name] = xi
    z = 0 if zw is None or zw.const is None else np.asarray(zw.const).astype(np.int32)
    w = np.asarray(wv.const).astype(np.int32)
    if np.ndim(z):
        z = np.asarray(z).reshape((-1,) + (1,) * (w.ndim - 1))
    wi = imp.const(nm + ":w_i32", np.ascontiguousarray(w - z))
    new = onnx.helper.make_node("Conv", [xi.name, wi.name], list(node.output), name=nm, **a)
    _IMPORTER["Conv"](imp, new, a, [xi, wi])


# --- generators left to run time (not folded: inputs computed, or over the fold budget) --------


@handles("ConstantOfShape")
def _constant_of_shape(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    from .onnx_lite import numpy_helper

    from .dtypes import from_numpy

    value = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    sv = x[0]
    assert sv is not None
    attrs = {"dataType": from_numpy(value.dtype), "value": [float(value.reshape(-1)[0])]}
    imp.emit("ConstantOfShape", attrs, [imp.tensor(sv)], node)


@handles("Range")
def _range(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    from .dtypes import from_numpy

    vals = [v for v in x if v is not None]
    if len(vals) != 3:
        raise _Unsupported("needs start, limit and delta")
    dt = vals[0].dtype or np.dtype(np.float32)
    attrs = {"dataType": from_numpy(dt), "start": 0, "limit": 0, "delta": 1}
    ins = []
    for k, v in enumerate(vals):
        if v.const is not None:
            ins.append(imp.b.constant(f"{_nm(node)}:r{k}", np.asarray(v.const).reshape(1)))
        else:
            ins.append(imp.tensor(v))
    imp.emit("Range", attrs, ins, node)


@handles("Expand")
def _expand(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """BroadcastTo with the shape as an attribute when it is constant, else as input[1]."""
    sv = x[1]
    assert sv is not None and x[0] is not None
    if sv.const is not None:
        _BEFORE["Expand"](imp, node, a, x)
    else:
        imp.emit("BroadcastTo", {"shape": []}, [imp.tensor(x[0]), imp.tensor(sv)], node)


# --- GatherElements as GatherNd ----------------------------------------------------------------


@handles("GatherElements")
def _gather_elements(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """out[..., i_axis, ...] = data[..., indices[...], ...]: GatherNd with full coordinates, the
    other axes' coordinates constant (the position itself) and the axis' from the indices
    (negative ones wrapped by (i + n) mod n)."""
    dv, iv = x[0], x[1]
    assert dv is not None and iv is not None
    dshape, ishape = _static(dv, "GatherElements data"), _static(iv, "GatherElements indices")
    r = len(dshape)
    axis = _norm_axis(int(a.get("axis", 0)), r)
    nm = _nm(node)
    idt = iv.dtype or np.dtype(np.int64)
    n = dshape[axis]
    grids = list(np.meshgrid(*[np.arange(s, dtype=idt) for s in ishape], indexing="ij"))
    col = list(ishape) + [1]
    if iv.const is not None:
        ka = np.asarray(iv.const).astype(idt)
        grids[axis] = np.where(ka < 0, ka + n, ka)
        coords = imp.b.constant(nm + ":coords", np.ascontiguousarray(np.stack(grids, -1)))
    else:
        nc = imp.b.constant(nm + ":n", np.array([n], idt))
        k = _bin(imp, "AddFusion", imp.tensor(iv), nc, nm + ":i_n", idt, ishape)
        k = _op(imp, "Mod", {}, [k, nc], nm + ":i_mod", idt, ishape)
        k = _reshape(imp, k, col, nm + ":i_col", idt)
        parts = []
        for d in range(r):
            if d == axis:
                parts.append(k)
            else:
                g = np.ascontiguousarray(grids[d].reshape(col))
                parts.append(imp.b.constant(f"{nm}:grid{d}", g))
        coords = _op(imp, "Concat", {"axis": r}, parts, nm + ":coords", idt, list(ishape) + [r])
    imp.emit("GatherNd", {}, [imp.tensor(dv), coords], node)


# --- more elementwise / indexing compositions --------------------------------------------------


def _in(imp: Importer, xv: Val | None) -> tuple[int, bool, list[int], np.dtype[Any]]:
    """``xv``'s tensor in its current layout, the layout, its physical dims and dtype."""
    assert xv is not None
    nhwc = xv.const is None and xv.nhwc
    t = imp.tensor(xv, nhwc)
    return t, nhwc, [int(d) for d in imp.b.tensors[t].dims], xv.dtype or np.dtype(np.float32)


def _k(imp: Importer, name: str, value: Any, dt: Any) -> int:
    return imp.b.constant(name, np.array(value, dtype=dt))


@handles("IsNaN")
def _isnan(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, _, _ = _in(imp, x[0])
    imp.emit("NotEqual", {}, [t, t], node, nhwc=nhwc)


@handles("IsInf")
def _isinf(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, dims, dt = _in(imp, x[0])
    pos, neg = int(a.get("detect_positive", 1)), int(a.get("detect_negative", 1))
    nm = _nm(node)
    if pos and neg:
        t = _op(imp, "Abs", {}, [t], nm + ":abs", dt, dims)
    value = np.inf if pos else -np.inf if neg else np.nan  # neither: nothing equals NaN
    imp.emit("Equal", {}, [t, _k(imp, nm + ":inf", value, dt)], node, nhwc=nhwc)


@handles("Xor")
def _xor(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    va, vb = x[0], x[1]
    assert va is not None and vb is not None
    imp.emit("NotEqual", {}, [imp.tensor(va), imp.tensor(vb)], node)


@handles("CastLike")
def _cast_like(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    from .dtypes import from_numpy

    t, nhwc, _, _ = _in(imp, x[0])
    assert x[1] is not None
    to = x[1].dtype
    if to is None:
        raise _Unsupported("target type unknown")
    code = imp.b.constant(_nm(node) + ":to", np.array([from_numpy(to)], np.int32))
    imp.emit("Cast", {}, [t, code], node, nhwc=nhwc)


@handles("ArgMin")
def _argmin(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """ArgMax of -x: the first minimum is the first maximum of the negation."""
    if int(a.get("select_last_index", 0)):
        raise _Unsupported("select_last_index=1")
    xv = x[0]
    assert xv is not None
    dt = xv.dtype or np.dtype(np.float32)
    if dt.kind == "u":
        raise _Unsupported("unsigned input (negation wraps)")
    shape = list(_static(xv, "ArgMin input"))
    neg = _op(imp, "Neg", {}, [imp.tensor(xv)], _nm(node) + ":neg", dt, shape)
    attrs = {"axis": int(a.get("axis", 0)), "topK": 1, "keepDims": bool(a.get("keepdims", 1)),
             "outMaxValue": False}  # fmt: skip
    imp.emit("ArgMaxFusion", attrs, [neg], node)


@handles("Mean")
def _mean(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    vals = [v for v in x if v is not None]
    dt, shape = _out_info(imp, node.output[0], "Mean output")
    nm = _nm(node)
    ids = [imp.tensor(v) for v in vals]
    if len(ids) == 1:
        total = ids[0]
    elif len(ids) == 2:
        total = _bin(imp, "AddFusion", ids[0], ids[1], nm + ":sum", dt, shape)
    else:
        total = _op(imp, "Eltwise", {"mode": 1}, ids, nm + ":sum", dt, shape)
    imp.emit("DivFusion", {"activationType": 0}, [total, _k(imp, nm + ":n", len(ids), dt)], node)


_SELU_ALPHA, _SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


@handles("Selu")
def _selu(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """gamma * ELU(x, alpha) (Activation SELU is this with ONNX's default constants)."""
    t, nhwc, dims, dt = _in(imp, x[0])
    alpha, gamma = float(a.get("alpha", _SELU_ALPHA)), float(a.get("gamma", _SELU_GAMMA))
    nm = _nm(node)
    elu = _op(imp, "Activation", L.activation(4, alpha=alpha), [t], nm + ":elu", dt, dims)
    imp.emit("MulFusion", {"activationType": 0}, [elu, _k(imp, nm + ":gamma", gamma, dt)], node,
             nhwc=nhwc)  # fmt: skip


@handles("Celu")
def _celu(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """alpha * ELU(x / alpha, 1)."""
    t, nhwc, dims, dt = _in(imp, x[0])
    alpha = float(a.get("alpha", 1.0))
    nm = _nm(node)
    s = _bin(imp, "DivFusion", t, _k(imp, nm + ":alpha", alpha, dt), nm + ":xa", dt, dims)
    elu = _op(imp, "Activation", L.activation(4, alpha=1.0), [s], nm + ":elu", dt, dims)
    imp.emit("MulFusion", {"activationType": 0}, [elu, _k(imp, nm + ":alpha2", alpha, dt)], node,
             nhwc=nhwc)  # fmt: skip


@handles("ThresholdedRelu")
def _thresholded_relu(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, dims, dt = _in(imp, x[0])
    nm = _nm(node)
    gt = _op(imp, "Greater", {}, [t, _k(imp, nm + ":alpha", float(a.get("alpha", 1.0)), dt)],
             nm + ":gt", np.bool_, dims)  # fmt: skip
    imp.emit("Where", {}, [gt, t, _k(imp, nm + ":zero", 0, dt)], node, nhwc=nhwc)


@handles("Shrink")
def _shrink(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, dims, dt = _in(imp, x[0])
    lam, bias = float(a.get("lambd", 0.5)), float(a.get("bias", 0.0))
    nm = _nm(node)
    lo = _op(imp, "Less", {}, [t, _k(imp, nm + ":-l", -lam, dt)], nm + ":lo", np.bool_, dims)
    hi = _op(imp, "Greater", {}, [t, _k(imp, nm + ":l", lam, dt)], nm + ":hi", np.bool_, dims)
    up = _bin(imp, "AddFusion", t, _k(imp, nm + ":b", bias, dt), nm + ":up", dt, dims)
    down = _bin(imp, "SubFusion", t, _k(imp, nm + ":b2", bias, dt), nm + ":down", dt, dims)
    inner = _op(imp, "Where", {}, [hi, down, _k(imp, nm + ":0", 0, dt)], nm + ":in", dt, dims)
    imp.emit("Where", {}, [lo, up, inner], node, nhwc=nhwc)


@handles("Mish")
def _mish(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, dims, dt = _in(imp, x[0])
    nm = _nm(node)
    sp = _op(imp, "Activation", L.activation(9), [t], nm + ":softplus", dt, dims)
    th = _op(imp, "Activation", L.activation(_TANH), [sp], nm + ":tanh", dt, dims)
    imp.emit("MulFusion", {"activationType": 0}, [t, th], node, nhwc=nhwc)


@handles("Swish")
def _swish(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, dims, dt = _in(imp, x[0])
    alpha = float(a.get("alpha", 1.0))
    if alpha == 1.0:
        imp.emit("Activation", L.activation(18), [t], node, nhwc=nhwc)
        return
    nm = _nm(node)
    ax = _bin(imp, "MulFusion", t, _k(imp, nm + ":alpha", alpha, dt), nm + ":ax", dt, dims)
    sg = _op(imp, "Activation", L.activation(_SIGMOID), [ax], nm + ":sig", dt, dims)
    imp.emit("MulFusion", {"activationType": 0}, [t, sg], node, nhwc=nhwc)


@handles("Tan")
def _tan(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    t, nhwc, dims, dt = _in(imp, x[0])
    nm = _nm(node)
    s = _op(imp, "Sin", {}, [t], nm + ":sin", dt, dims)
    c = _op(imp, "Cos", {}, [t], nm + ":cos", dt, dims)
    imp.emit("DivFusion", {"activationType": 0}, [s, c], node, nhwc=nhwc)


@handles("Trilu")
def _trilu(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    shape = _static(xv, "Trilu input")
    kv = x[1] if len(x) > 1 else None
    if kv is not None and kv.const is None:
        raise L.ShapeUnknown("k computed at run time")
    k = int(np.asarray(kv.const).reshape(-1)[0]) if kv is not None and kv.const is not None else 0
    rows, cols = shape[-2], shape[-1]
    if int(a.get("upper", 1)):
        mask = np.triu(np.ones((rows, cols), bool), k)
    else:
        mask = np.tril(np.ones((rows, cols), bool), k)
    nm = _nm(node)
    dt = xv.dtype or np.dtype(np.float32)
    m = imp.b.constant(nm + ":mask", mask)
    imp.emit("Where", {}, [m, imp.tensor(xv), _k(imp, nm + ":zero", 0, dt)], node)


@handles("Hardmax")
def _hardmax(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """OneHot(ArgMax(x)) along the axis (the first maximum wins, as in ONNX)."""
    xv = x[0]
    assert xv is not None
    shape = list(_static(xv, "Hardmax input"))
    r = len(shape)
    axis = _norm_axis(int(a.get("axis", -1 if imp.opset >= 13 else 1)), r)
    if imp.opset < 13 and axis != r - 1:
        raise _Unsupported(f"opset {imp.opset} axis={axis}: a flattened 2-D hardmax")
    nm = _nm(node)
    dt = xv.dtype or np.dtype(np.float32)
    reduced = shape[:axis] + shape[axis + 1 :]
    am = _op(imp, "ArgMaxFusion", {"axis": axis, "topK": 1, "keepDims": False, "outMaxValue": False},
             [imp.tensor(xv)], nm + ":argmax", np.int32, reduced)  # fmt: skip
    ins = [am, _k(imp, nm + ":depth", [shape[axis]], np.int32), _k(imp, nm + ":on", 1, dt),
           _k(imp, nm + ":off", 0, dt)]  # fmt: skip
    imp.emit("OneHot", {"axis": axis}, ins, node)


@handles("OneHot")
def _one_hot(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    iv, dv, vv = x[0], x[1], x[2]
    assert iv is not None and dv is not None and vv is not None
    if dv.const is None or vv.const is None:
        raise L.ShapeUnknown("depth/values computed at run time")
    nm = _nm(node)
    depth = int(np.asarray(dv.const).reshape(-1)[0])
    off, on = np.asarray(vv.const).reshape(-1)[:2]
    ins = [imp.tensor(iv), _k(imp, nm + ":depth", [depth], np.int32),
           imp.b.constant(nm + ":on", np.asarray(on)), imp.b.constant(nm + ":off", np.asarray(off))]  # fmt: skip
    imp.emit("OneHot", {"axis": int(a.get("axis", -1))}, ins, node)


@handles("GatherND")
def _gather_nd(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    if int(a.get("batch_dims", 0)):
        raise _Unsupported("batch_dims > 0")
    assert x[0] is not None and x[1] is not None
    imp.emit("GatherNd", {}, [imp.tensor(x[0]), imp.tensor(x[1])], node)


def _scatter(imp: Importer, node: Any, data: Val, coords: int, upd: Val, reduction: str) -> None:
    """ONNX scatter of ``upd`` into ``data`` at full ``coords`` via NNRt ScatterNd (which adds
    into zeros): ``add`` is data + ScatterNd(updates); ``none`` takes ScatterNd(updates) where
    ScatterNd(ones) marks a position (indices are unique, as ONNX requires for ``none``)."""
    dshape = list(_static(data, "scatter data"))
    ushape = list(_static(upd, "scatter updates"))
    dt = data.dtype or np.dtype(np.float32)
    nm = _nm(node)
    shp = imp.b.constant(nm + ":shape", np.array(dshape, np.int32))
    sc = _op(imp, "ScatterNd", {}, [coords, imp.tensor(upd), shp], nm + ":scatter", dt, dshape)
    if reduction == "add":
        imp.emit("AddFusion", {"activationType": 0}, [imp.tensor(data), sc], node)
        return
    if reduction != "none":
        raise _Unsupported(f"reduction={reduction}")
    ones = imp.b.constant(nm + ":ones", np.ones(ushape, np.float32))
    hits = _op(imp, "ScatterNd", {}, [coords, ones, shp], nm + ":hits", np.float32, dshape)
    mask = _op(imp, "Greater", {}, [hits, _k(imp, nm + ":z", 0, np.float32)], nm + ":mask",
               np.bool_, dshape)  # fmt: skip
    imp.emit("Where", {}, [mask, sc, imp.tensor(data)], node)


@handles("ScatterND")
def _scatter_nd(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    dv, iv, uv = x[0], x[1], x[2]
    assert dv is not None and iv is not None and uv is not None
    dshape = _static(dv, "ScatterND data")
    if iv.const is not None:
        k = np.asarray(iv.const).astype(np.int64)
        lim = np.array(dshape[: k.shape[-1]])
        coords = imp.b.constant(
            _nm(node) + ":idx", np.ascontiguousarray(np.where(k < 0, k + lim, k))
        )
    else:
        coords = imp.tensor(iv)
    _scatter(imp, node, dv, coords, uv, str(a.get("reduction", "none")))


@handles("ScatterElements", "Scatter")
def _scatter_elements(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    dv, iv, uv = x[0], x[1], x[2]
    assert dv is not None and iv is not None and uv is not None
    dshape, ishape = _static(dv, "ScatterElements data"), _static(iv, "ScatterElements indices")
    axis = _norm_axis(int(a.get("axis", 0)), len(dshape))
    n = dshape[axis]
    nm = _nm(node)
    grids = list(np.meshgrid(*[np.arange(s, dtype=np.int64) for s in ishape], indexing="ij"))
    if iv.const is not None:
        ka = np.asarray(iv.const).astype(np.int64)
        grids[axis] = np.where(ka < 0, ka + n, ka)
        coords = imp.b.constant(nm + ":coords", np.ascontiguousarray(np.stack(grids, -1)))
    else:
        idt = iv.dtype or np.dtype(np.int64)
        col = list(ishape) + [1]
        nc = imp.b.constant(nm + ":n", np.array([n], idt))
        k = _bin(imp, "AddFusion", imp.tensor(iv), nc, nm + ":i_n", idt, ishape)
        k = _op(imp, "Mod", {}, [k, nc], nm + ":i_mod", idt, ishape)
        k = _reshape(imp, k, col, nm + ":i_col", idt)
        parts = [k if d == axis else imp.b.constant(f"{nm}:grid{d}", np.ascontiguousarray(
                 grids[d].reshape(col).astype(idt))) for d in range(len(dshape))]  # fmt: skip
        coords = _op(imp, "Concat", {"axis": len(dshape)}, parts, nm + ":coords", idt,
                     list(ishape) + [len(dshape)])  # fmt: skip
    _scatter(imp, node, dv, coords, uv, str(a.get("reduction", "none")))


def _reduce_axes(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> list[int]:
    xv = x[0]
    assert xv is not None
    r = len(_static(xv, node.op_type + " input"))
    av = x[1] if len(x) > 1 else None
    if av is not None and av.const is None:
        raise L.ShapeUnknown("axes computed at run time")
    axes = [
        int(v) for v in (av.const if av is not None and av.const is not None else a.get("axes", []))
    ]
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            raise _Unsupported("noop_with_empty_axes=1")
        axes = list(range(r))
    return sorted(_norm_axis(ax, r) for ax in axes)


@handles("ReduceLogSum", "ReduceLogSumExp")
def _reduce_log(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """log(sum(x)); log-sum-exp with the maximum taken out first (as onnxruntime does)."""
    xv = x[0]
    assert xv is not None
    axes = _reduce_axes(imp, node, a, x)
    shape = list(_static(xv, "input"))
    dt = xv.dtype or np.dtype(np.float32)
    nm = _nm(node)
    kept = [1 if d in axes else s for d, s in enumerate(shape)]
    ax = _i32(imp, nm + ":axes", axes)
    red = {"keepDims": True, "reduceToEnd": False, "coeff": 1.0}
    t = imp.tensor(xv)
    if node.op_type == "ReduceLogSum":
        s = _op(imp, "ReduceFusion", {**red, "mode": 4}, [t, ax], nm + ":sum", dt, kept)
        y = _op(imp, "Log", {}, [s], nm + ":log", dt, kept)
    else:
        m = _op(imp, "ReduceFusion", {**red, "mode": 1}, [t, ax], nm + ":max", dt, kept)
        d = _bin(imp, "SubFusion", t, m, nm + ":shift", dt, shape)
        e = _op(imp, "ExpFusion", dict(L.EXP), [d], nm + ":exp", dt, shape)
        s = _op(imp, "ReduceFusion", {**red, "mode": 4}, [e, ax], nm + ":sum", dt, kept)
        lg = _op(imp, "Log", {}, [s], nm + ":log", dt, kept)
        y = _bin(imp, "AddFusion", lg, m, nm + ":lse", dt, kept)
    if int(a.get("keepdims", 1)):
        _set(imp, node.output[0], dt, kept, y)
    else:
        out = [s for d, s in enumerate(shape) if d not in axes]
        sq = _op(imp, "Squeeze", {"axis": axes}, [y], node.output[0], dt, out)
        _set(imp, node.output[0], dt, out, sq)


@handles("LpNormalization")
def _lp_normalization(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    p = int(a.get("p", 2))
    if p not in (1, 2):
        raise _Unsupported(f"p={p}")
    shape = list(_static(xv, "LpNormalization input"))
    axis = _norm_axis(int(a.get("axis", -1)), len(shape))
    dt = xv.dtype or np.dtype(np.float32)
    nm = _nm(node)
    kept = [1 if d == axis else s for d, s in enumerate(shape)]
    attrs = {"keepDims": True, "mode": 8 if p == 2 else 6, "reduceToEnd": False, "coeff": 1.0}
    t = imp.tensor(xv)
    norm = _op(
        imp, "ReduceFusion", attrs, [t, _i32(imp, nm + ":axes", [axis])], nm + ":norm", dt, kept
    )
    imp.emit("DivFusion", {"activationType": 0}, [t, norm], node)


@handles("GlobalLpPool")
def _global_lp_pool(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    p = int(a.get("p", 2))
    if p not in (1, 2):
        raise _Unsupported(f"p={p}")
    r = len(_static(xv, "GlobalLpPool input"))
    attrs = {"keepDims": True, "mode": 8 if p == 2 else 6, "reduceToEnd": False, "coeff": 1.0}
    ax = _i32(imp, _nm(node) + ":axes", list(range(2, r)))
    imp.emit("ReduceFusion", attrs, [imp.tensor(xv), ax], node)


@handles("LRN")
def _lrn(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """NNRt LRN sums squares over channels c-r..c+r and scales by alpha; ONNX divides alpha by
    the window size (odd sizes only: an even ONNX window is not centred)."""
    xv = x[0]
    assert xv is not None
    size = int(a["size"])
    if size % 2 == 0:
        raise _Unsupported(f"size={size} (an even window is not centred)")
    shape = _static(xv, "LRN input")
    if len(shape) != 4:
        raise _Unsupported(f"rank {len(shape)}")
    attrs = {"depthRadius": (size - 1) // 2, "bias": float(a.get("bias", 1.0)),
             "alpha": float(a.get("alpha", 1e-4)) / size, "beta": float(a.get("beta", 0.75)),
             "normRegion": "ACROSS_CHANNELS"}  # fmt: skip
    imp.emit("LRN", attrs, [imp.tensor(xv, True)], node, nhwc=True)


# --- Pad: edge / wrap / negative pads ----------------------------------------------------------

_TO_PHYS = (0, 3, 1, 2)  # NCHW axis a lives at NHWC axis _TO_PHYS[a]


def pad_gather(
    imp: Importer, node: Any, xv: Val, rows: list[list[int]], mode: str, value: float
) -> None:
    """Pad by gathering each padded axis at ``arange(-before, n + after)`` folded back into
    range: clamped (``edge``), modulo n (``wrap``), mirrored (``reflect``); negative pads crop.
    Constant padding of the positive parts is one PadFusion on the gathered (cropped) result."""
    shape = list(_static(xv, "Pad input"))
    rank = len(shape)
    nhwc = xv.const is None and xv.nhwc and rank == 4
    t = imp.tensor(xv, nhwc)
    dt = xv.dtype or np.dtype(np.float32)
    nm = _nm(node)
    phys = [int(d) for d in imp.b.tensors[t].dims] if xv.const is None else list(shape)
    rest = [[0, 0] for _ in range(rank)]
    steps = []
    for ax, (b, e) in enumerate(rows):
        n = shape[ax]
        if mode == "constant":
            # crop the negative parts by gathering; pad the positive ones with PadFusion
            rest[ax] = [max(b, 0), max(e, 0)]
            b, e = min(b, 0), min(e, 0)
        if b == 0 and e == 0:
            continue
        base = max(-b, 0)  # crop first, then pad relative to what is left (as onnxruntime)
        m = n - base - max(-e, 0)
        idx = np.arange(-max(b, 0), m + max(e, 0))
        if mode == "edge":
            idx = np.clip(idx, 0, m - 1)
        elif mode == "wrap":
            idx = np.mod(idx, m)
        elif mode == "reflect":
            period = 2 * (m - 1) if m > 1 else 1
            idx = np.mod(idx, period)
            idx = np.where(idx >= m, period - idx, idx)
        steps.append((ax, (idx + base).astype(np.int32)))
    for k, (ax, gidx) in enumerate(steps):
        p = _TO_PHYS[ax] if nhwc else ax
        phys[p] = len(gidx)
        t = _op(imp, "Gather", {}, [t, imp.b.constant(f"{nm}:idx{k}", gidx), _i32(imp, f"{nm}:ax{k}", [p])],
                f"{nm}:g{k}", dt, phys)  # fmt: skip
    if any(v for row in rest for v in row):
        prow = [rest[i] for i in _TO_NHWC] if nhwc else rest
        attrs = {"paddings": prow, "paddingMode": 0, "constantValue": float(value)}
        imp.emit("PadFusion", attrs, [t], node, nhwc=nhwc)
        return
    odt, oshape = _out_info(imp, node.output[0], "Pad output")
    imp.vals[node.output[0]] = Val(node.output[0], odt, oshape, t, nhwc)


_TO_NHWC = (0, 2, 3, 1)


# --- QLinearMatMul / QLinearConv (onnxruntime's QOperator quantisation) -------------------------


def _const_of(v: Val | None, what: str) -> np.ndarray:
    if v is None or v.const is None:
        raise L.ShapeUnknown(f"{what} computed at run time")
    return np.asarray(v.const)


def _requantize(
    imp: Importer, node: Any, acc: Val, scale: np.ndarray, zp: np.ndarray, channel_last: bool
) -> None:
    """y = clip(round(float(acc) * scale) + zero_point, qmin, qmax) in float32 with rounding half
    to even, as onnxruntime requantises int32 accumulators (the scale is one float32 product, per
    output channel where the weights have one)."""
    assert acc.idx is not None and acc.shape is not None
    nm = _nm(node)
    f32 = np.dtype(np.float32)
    qdt = zp.dtype
    info = np.iinfo(qdt)
    phys = [int(d) for d in imp.b.tensors[acc.idx].dims]
    sc = scale.astype(np.float32).reshape(-1)
    if sc.size > 1:
        sc = sc if channel_last else sc.reshape(-1, *([1] * (len(acc.shape) - 2)))
    f = _cast(imp, acc.idx, f32, nm + ":accf", phys)
    f = _bin(
        imp,
        "MulFusion",
        f,
        imp.b.constant(nm + ":scale", np.ascontiguousarray(sc)),
        nm + ":scaled",
        f32,
        phys,
    )
    f = _op(imp, "Round", {}, [f], nm + ":round", f32, phys)
    f = _bin(
        imp,
        "AddFusion",
        f,
        _k(imp, nm + ":zp", float(zp.reshape(-1)[0]), f32),
        nm + ":zpd",
        f32,
        phys,
    )
    f = _op(
        imp, "Clip", {"min": float(info.min), "max": float(info.max)}, [f], nm + ":clip", f32, phys
    )
    from .dtypes import from_numpy

    code = imp.b.constant(nm + ":to", np.array([from_numpy(qdt)], np.int32))
    imp.emit("Cast", {}, [f, code], node, nhwc=acc.nhwc)


@handles("QLinearMatMul")
def _qlinear_matmul(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    va, sa, za, vb, sb, zb, sy, zy = (list(x) + [None] * 8)[:8]
    assert va is not None and vb is not None
    f = np.float32
    sa_, sb_, sy_ = (_const_of(v, "scale").astype(f) for v in (sa, sb, sy))
    zy_ = _const_of(zy, "zero point")
    if sa_.size != 1 or sy_.size != 1:
        raise _Unsupported("per-row scales of A or Y")
    scale = (sa_.reshape(()) * sb_.reshape(-1)) / sy_.reshape(())  # float32, as onnxruntime
    nm = _nm(node)
    ra, rb = len(_static(va, "A")), len(_static(vb, "B"))
    ta = _int32_operand(imp, va, za, nm + ":a", ra - 2 if ra >= 2 else None)
    tb = _int32_operand(imp, vb, zb, nm + ":b", rb - 1)
    _, out = _out_info(imp, node.output[0], "QLinearMatMul output")
    i32 = np.dtype(np.int32)
    mm = {"transposeA": False, "transposeB": False, "activationType": 0}
    acc = Val(nm + ":acc", i32, out, _op(imp, "MatMulFusion", mm, [ta, tb], nm + ":acc", i32, out))
    _requantize(imp, node, acc, scale, zy_, channel_last=True)


@handles("QLinearConv")
def _qlinear_conv(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    from . import onnx_lite as onnx

    xv, sx, zx, wv, sw, zw, sy, zy, bv = (list(x) + [None] * 9)[:9]
    assert xv is not None and wv is not None
    f = np.float32
    sx_, sw_, sy_ = (_const_of(v, "scale").astype(f) for v in (sx, sw, sy))
    zy_ = _const_of(zy, "zero point")
    scale = (sx_.reshape(()) * sw_.reshape(-1)) / sy_.reshape(())
    nm = _nm(node)
    shape = _static(xv, "QLinearConv input")
    xi = Val(nm + ":x_i32", np.dtype(np.int32), shape, _int32_operand(imp, xv, zx, nm + ":x", None))
    imp.vals[xi.name] = xi
    w = _const_of(wv, "weights").astype(np.int32)
    z = np.zeros(1, np.int32) if zw is None else _const_of(zw, "zero point").astype(np.int32)
    wi = imp.const(nm + ":w_i32", np.ascontiguousarray(w - z.reshape((-1,) + (1,) * (w.ndim - 1))))
    ins: list[Val | None] = [xi, wi]
    names = [xi.name, wi.name]
    if bv is not None:
        bi = imp.const(nm + ":b_i32", _const_of(bv, "bias").astype(np.int32))
        ins.append(bi)
        names.append(bi.name)
    odt, oshape = _out_info(imp, node.output[0], "QLinearConv output")
    del odt
    acc_name = nm + ":acc"
    imp.info[acc_name] = (np.dtype(np.int32), oshape)
    conv = onnx.helper.make_node("Conv", names, [acc_name], name=nm + ":conv", **a)
    _IMPORTER["Conv"](imp, conv, a, ins)
    acc = imp.vals[acc_name]
    _requantize(imp, node, acc, scale, zy_, channel_last=acc.nhwc or len(oshape) != 4)


# --- GroupNormalization ------------------------------------------------------------------------


@handles("GroupNormalization")
def _group_norm(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """Per (sample, group): (x - mean) / sqrt(var + epsilon) over the group's channels and
    positions (Reshape to [N, G, -1], ReduceFusion MEAN twice), then the per-channel scale and
    bias (opset 18's per-group ones repeated over each group's channels)."""
    xv, sv, bv = x[0], x[1], x[2]
    assert xv is not None and sv is not None and bv is not None
    if sv.const is None or bv.const is None:
        raise L.ShapeUnknown("scale/bias computed at run time")
    shape = list(_static(xv, "GroupNormalization input"))
    n, c = shape[0], shape[1]
    groups = int(a["num_groups"])
    if groups <= 0 or c % groups:
        raise _Unsupported(f"{c} channels in {groups} groups")
    dt = xv.dtype or np.dtype(np.float32)
    nm = _nm(node)
    eps = float(a.get("epsilon", 1e-5))
    rest = _prod(shape[1:]) // groups
    g3 = [n, groups, rest]
    k1 = [n, groups, 1]
    xr = _reshape(imp, imp.tensor(xv), g3, nm + ":groups", dt)
    ax = _i32(imp, nm + ":axes", [2])
    red = {"keepDims": True, "mode": 0, "reduceToEnd": False, "coeff": 1.0}
    mean = _op(imp, "ReduceFusion", red, [xr, ax], nm + ":mean", dt, k1)
    d = _bin(imp, "SubFusion", xr, mean, nm + ":centred", dt, g3)
    sq = _bin(imp, "MulFusion", d, d, nm + ":sq", dt, g3)
    var = _op(imp, "ReduceFusion", red, [sq, ax], nm + ":var", dt, k1)
    ve = _bin(imp, "AddFusion", var, _k(imp, nm + ":eps", eps, dt), nm + ":var_eps", dt, k1)
    sd = _op(imp, "Sqrt", {}, [ve], nm + ":std", dt, k1)
    y = _bin(imp, "DivFusion", d, sd, nm + ":normed", dt, g3)
    y = _reshape(imp, y, shape, nm + ":y", dt)
    scale, bias = np.asarray(sv.const, dt).reshape(-1), np.asarray(bv.const, dt).reshape(-1)
    if scale.size == groups and groups != c:
        scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
    col = (c,) + (1,) * (len(shape) - 2)
    y = _bin(
        imp,
        "MulFusion",
        y,
        imp.b.constant(nm + ":scale", scale.reshape(col)),
        nm + ":scaled",
        dt,
        shape,
    )
    imp.emit("AddFusion", {"activationType": 0},
             [y, imp.b.constant(nm + ":bias", np.ascontiguousarray(bias.reshape(col)))], node)  # fmt: skip


# --- ai.onnx.ml (scikit-learn exports) --------------------------------------------------------


def _rows(imp: Importer, xv: Val | None, what: str) -> tuple[int, int, int]:
    """A 2-D float input [N, F] (1-D is one row): its tensor (as float32), N and F."""
    assert xv is not None
    shape = _static(xv, what)
    if len(shape) not in (1, 2):
        raise _Unsupported(f"rank-{len(shape)} input")
    n, f = (1, shape[0]) if len(shape) == 1 else shape
    t = imp.tensor(xv)
    f32 = np.dtype(np.float32)
    if len(shape) == 1:
        t = _reshape(imp, t, [n, f], what + ":rows", xv.dtype or f32)
    if (xv.dtype or f32) != f32:
        t = _cast(imp, t, f32, f"{what}:f32", [n, f])
    return t, n, f


@handles("ai.onnx.ml.Scaler")
def _ml_scaler(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """(x - offset) * scale, per feature (a single value applies to all)."""
    t, n, f = _rows(imp, x[0], _nm(node))
    f32 = np.float32
    off = np.asarray(a.get("offset", [0.0]), f32)
    sc = np.asarray(a.get("scale", [1.0]), f32)
    nm = _nm(node)
    d = _bin(imp, "SubFusion", t, imp.b.constant(nm + ":offset", off), nm + ":centred", f32, [n, f])
    _known(
        imp,
        node,
        "MulFusion",
        {"activationType": 0},
        [d, imp.b.constant(nm + ":scale", sc)],
        [n, f],
    )


@handles("ai.onnx.ml.Normalizer")
def _ml_normalizer(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """Each row divided by its MAX, L1 or L2 norm (ReduceFusion MAX / ASUM / L2, DivFusion)."""
    mode = {"MAX": 1, "L1": 6, "L2": 8}.get(str(a.get("norm", "MAX")))
    if mode is None:
        raise _Unsupported(f"norm={a.get('norm')}")
    t, n, f = _rows(imp, x[0], _nm(node))
    nm = _nm(node)
    red = {"keepDims": True, "mode": mode, "reduceToEnd": False, "coeff": 1.0}
    d = _op(
        imp,
        "ReduceFusion",
        red,
        [t, _i32(imp, nm + ":axes", [1])],
        nm + ":norm",
        np.float32,
        [n, 1],
    )
    _known(imp, node, "DivFusion", {"activationType": 0}, [t, d], [n, f])


@handles("ai.onnx.ml.LinearRegressor")
def _ml_linear_regressor(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    if str(a.get("post_transform", "NONE")) != "NONE":
        raise _Unsupported(f"post_transform={a.get('post_transform')}")
    t, n, f = _rows(imp, x[0], _nm(node))
    targets = int(a.get("targets", 1))
    coef = np.asarray(a.get("coefficients", []), np.float32).reshape(targets, f)
    inter = np.asarray(a.get("intercepts", [0.0] * targets), np.float32).reshape(targets)
    nm = _nm(node)
    mm = {"transposeA": False, "transposeB": False, "activationType": 0}
    ins = [
        t,
        imp.b.constant(nm + ":coef", np.ascontiguousarray(coef.T)),
        imp.b.constant(nm + ":b", inter),
    ]
    _known(imp, node, "MatMulFusion", mm, ins, [n, targets])


@handles("ai.onnx.ml.LinearClassifier")
def _ml_linear_classifier(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """scores = x @ coefficients^T + intercepts (MatMulFusion); label = labels[argmax] (ArgMaxFusion,
    Gather of the integer labels); scores through LOGISTIC (SIGMOID) or SOFTMAX. String labels,
    one-column (binary) models and the other transforms stay on the host."""
    ints = list(a.get("classlabels_ints") or [])
    how = str(a.get("post_transform", "NONE"))
    if not ints or int(a.get("multi_class", 0)) or how not in ("NONE", "LOGISTIC", "SOFTMAX"):
        raise _Unsupported("string labels, multi_class or this post_transform")
    k = len(ints)
    inter = np.asarray(a.get("intercepts", [0.0] * k), np.float32).reshape(-1)
    if k < 2 or inter.size != k:
        raise _Unsupported("a binary (one score column) classifier")
    t, n, f = _rows(imp, x[0], _nm(node))
    coef = np.asarray(a.get("coefficients", []), np.float32)
    if coef.size < k * f:
        raise _Unsupported("fewer coefficients than classes x features")
    w = coef[: k * f].reshape(k, f)  # onnxruntime reads [classes, features] row-major
    nm = _nm(node)
    mm = {"transposeA": False, "transposeB": False, "activationType": 0}
    f32 = np.dtype(np.float32)
    scores = _op(imp, "MatMulFusion", mm, [t, imp.b.constant(nm + ":w", np.ascontiguousarray(w.T)),
                 imp.b.constant(nm + ":b", inter)], nm + ":scores", f32, [n, k])  # fmt: skip
    outs = list(node.output) + ["", ""]
    if outs[0]:
        am = _op(imp, "ArgMaxFusion", {"axis": 1, "topK": 1, "keepDims": False, "outMaxValue": False},
                 [scores], nm + ":argmax", np.int32, [n])  # fmt: skip
        labels = imp.b.constant(nm + ":labels", np.asarray(ints, np.int64))
        lab = _op(
            imp, "Gather", {}, [labels, am, _i32(imp, nm + ":ax0", [0])], outs[0], np.int64, [n]
        )
        _set(imp, outs[0], np.int64, (n,), lab)
    if outs[1]:
        if how == "LOGISTIC":
            y = _op(imp, "Activation", L.activation(_SIGMOID), [scores], outs[1], f32, [n, k])
        elif how == "SOFTMAX":
            y = _op(imp, "Softmax", {"axis": [1]}, [scores], outs[1], f32, [n, k])
        else:
            y = scores
        _set(imp, outs[1], f32, (n, k), y)


@handles("ai.onnx.ml.Binarizer")
def _ml_binarizer(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """x > threshold as 1.0 / 0.0 in the input's type."""
    xv = x[0]
    assert xv is not None
    shape = list(_static(xv, "Binarizer input"))
    dt = xv.dtype or np.dtype(np.float32)
    nm = _nm(node)
    gt = _op(imp, "Greater", {}, [imp.tensor(xv), _k(imp, nm + ":th", float(a.get("threshold", 0.0)), dt)],
             nm + ":gt", np.bool_, shape)  # fmt: skip
    _known(
        imp,
        node,
        "Where",
        {},
        [gt, _k(imp, nm + ":one", 1, dt), _k(imp, nm + ":zero", 0, dt)],
        shape,
        dt,
    )


def _known(
    imp: Importer,
    node: Any,
    struct: str,
    attrs: dict[str, Any],
    ins: Sequence[int],
    dims: Dims,
    dt: Any = np.float32,
) -> None:
    """Emit ``node``'s first output with a shape computed here (ONNX shape inference often knows
    nothing about ai.onnx.ml outputs)."""
    out = node.output[0]
    _set(imp, out, dt, dims, _op(imp, struct, attrs, ins, out, dt, dims))


# --- hyperbolic functions ----------------------------------------------------------------------


@handles("Sinh", "Cosh")
def _sinh_cosh(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """(e**x -/+ e**-x) / 2."""
    t, nhwc, dims, dt = _in(imp, x[0])
    nm = _nm(node)
    ep = _op(imp, "ExpFusion", dict(L.EXP), [t], nm + ":ep", dt, dims)
    en = _op(imp, "ExpFusion", {**L.EXP, "scale": -1.0}, [t], nm + ":en", dt, dims)
    s = _bin(
        imp, "SubFusion" if node.op_type == "Sinh" else "AddFusion", ep, en, nm + ":s", dt, dims
    )
    imp.emit(
        "MulFusion", {"activationType": 0}, [s, _k(imp, nm + ":half", 0.5, dt)], node, nhwc=nhwc
    )


@handles("Asinh", "Acosh")
def _asinh_acosh(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """log(|x| + sqrt(x*x +/- 1)), with asinh's sign put back (asinh is odd: no cancellation for
    negative x)."""
    t, nhwc, dims, dt = _in(imp, x[0])
    nm = _nm(node)
    asinh = node.op_type == "Asinh"
    sq = _bin(imp, "MulFusion", t, t, nm + ":sq", dt, dims)
    sq = _bin(
        imp,
        "AddFusion",
        sq,
        _k(imp, nm + ":one", 1.0 if asinh else -1.0, dt),
        nm + ":sq1",
        dt,
        dims,
    )
    r = _op(imp, "Sqrt", {}, [sq], nm + ":root", dt, dims)
    ax = _op(imp, "Abs", {}, [t], nm + ":abs", dt, dims) if asinh else t
    s = _bin(imp, "AddFusion", ax, r, nm + ":sum", dt, dims)
    if not asinh:
        imp.emit("Log", {}, [s], node, nhwc=nhwc)
        return
    lg = _op(imp, "Log", {}, [s], nm + ":log", dt, dims)
    sign = _op(imp, "Activation", L.activation(17), [t], nm + ":sign", dt, dims)
    imp.emit("MulFusion", {"activationType": 0}, [lg, sign], node, nhwc=nhwc)


@handles("Atanh")
def _atanh(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """log((1 + x) / (1 - x)) / 2."""
    t, nhwc, dims, dt = _in(imp, x[0])
    nm = _nm(node)
    one = _k(imp, nm + ":one", 1.0, dt)
    p = _bin(imp, "AddFusion", one, t, nm + ":p", dt, dims)
    q = _bin(imp, "SubFusion", one, t, nm + ":q", dt, dims)
    lg = _op(
        imp, "Log", {}, [_bin(imp, "DivFusion", p, q, nm + ":pq", dt, dims)], nm + ":log", dt, dims
    )
    imp.emit(
        "MulFusion", {"activationType": 0}, [lg, _k(imp, nm + ":half", 0.5, dt)], node, nhwc=nhwc
    )


@handles("MeanVarianceNormalization")
def _mvn(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    """The operator's function body: (x - E[x]) / (sqrt(E[x*x] - E[x]**2) + 1e-9) over ``axes``."""
    xv = x[0]
    assert xv is not None
    shape = list(_static(xv, "MeanVarianceNormalization input"))
    r = len(shape)
    axes = sorted(_norm_axis(int(v), r) for v in a.get("axes", [0, 2, 3]))
    kept = [1 if d in axes else s for d, s in enumerate(shape)]
    dt = xv.dtype or np.dtype(np.float32)
    nm = _nm(node)
    t = imp.tensor(xv)
    ax = _i32(imp, nm + ":axes", axes)
    red = {"keepDims": True, "mode": 0, "reduceToEnd": False, "coeff": 1.0}
    mean = _op(imp, "ReduceFusion", red, [t, ax], nm + ":mean", dt, kept)
    sq = _bin(imp, "MulFusion", t, t, nm + ":sq", dt, shape)
    ex2 = _op(imp, "ReduceFusion", red, [sq, ax], nm + ":ex2", dt, kept)
    m2 = _bin(imp, "MulFusion", mean, mean, nm + ":m2", dt, kept)
    var = _bin(imp, "SubFusion", ex2, m2, nm + ":var", dt, kept)
    std = _op(imp, "Sqrt", {}, [var], nm + ":std", dt, kept)
    std = _bin(imp, "AddFusion", std, _k(imp, nm + ":eps", 1e-9, dt), nm + ":std_eps", dt, kept)
    d = _bin(imp, "SubFusion", t, mean, nm + ":centred", dt, shape)
    _known(imp, node, "DivFusion", {"activationType": 0}, [d, std], shape, dt)
