"""Shape and layout operators (NHWC where spatial): reshape, transpose, concat, split, stack,
squeeze, tile, pad, slicing (incl. TF StridedSlice masks), crop, block rearrangements, cast,
tensor creation."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .dtypes import to_numpy
from .errors import KernelError

__all__ = [
    "reshape", "transpose", "concat", "split", "stack", "unstack", "squeeze", "unsqueeze",
    "expand_dims", "flatten", "tile", "broadcast_to", "pad", "slice_", "strided_slice", "crop",
    "shape", "rank", "fill", "constant_of_shape", "range_", "cast", "depth_to_space",
    "space_to_depth", "batch_to_space_nd", "space_to_batch_nd",
]  # fmt: skip


def _ints(a: np.ndarray | Sequence[int]) -> list[int]:
    arr = np.asarray(a).reshape(-1)
    if arr.dtype.kind in "iu":
        return list(arr.tolist())  # Python ints already, without a per-element int() call
    return [int(v) for v in arr]


def _ax(op: str, axis: int, ndim: int) -> int:
    ax = int(axis) + ndim if int(axis) < 0 else int(axis)
    if not 0 <= ax < ndim:
        raise KernelError(op, f"axis {axis} out of range for rank {ndim}")
    return ax


def _input(op: str, inputs: Sequence[np.ndarray], i: int, what: str) -> np.ndarray:
    if len(inputs) <= i or inputs[i] is None:
        raise KernelError(op, f"missing input {i} ({what})")
    return np.asarray(inputs[i])


def reshape(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Reshape``: shape from input[1]; -1 is inferred, 0 copies the input dim."""
    op = "Reshape"
    x = _input(op, inputs, 0, "x")
    dims = _ints(_input(op, inputs, 1, "shape"))
    dims = [x.shape[i] if d == 0 and i < x.ndim else d for i, d in enumerate(dims)]
    try:
        return [x.reshape(dims)]
    except ValueError as e:
        raise KernelError(op, f"cannot reshape {x.shape} to {dims}: {e}") from None


def transpose(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Transpose``: perm from input[1] (empty = reverse)."""
    x = _input("Transpose", inputs, 0, "x")
    perm = _ints(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else []
    if perm and sorted(_ax("Transpose", p, x.ndim) for p in perm) != list(range(x.ndim)):
        raise KernelError("Transpose", f"perm {perm} is not a permutation of rank {x.ndim}")
    return [np.transpose(x, perm or None)]


def concat(inputs: Sequence[np.ndarray], *, axis: int = 0) -> list[np.ndarray]:
    """``Concat`` along ``axis``."""
    if not inputs:
        raise KernelError("Concat", "needs at least one input")
    arrs = [np.asarray(a) for a in inputs]
    ax = _ax("Concat", axis, arrs[0].ndim)
    try:
        return [np.concatenate(arrs, axis=ax)]
    except ValueError as e:
        raise KernelError("Concat", str(e)) from None


def split(
    inputs: Sequence[np.ndarray],
    *,
    output_num: int = 0,
    size_splits: Sequence[int] = (),
    axis: int = 0,
) -> list[np.ndarray]:
    """``Split``: into ``outputNum`` parts along ``axis``; ``sizeSplits`` (one -1 allowed) or equal
    parts (the last one smaller when not divisible)."""
    op = "Split"
    x = _input(op, inputs, 0, "x")
    ax = _ax(op, axis, x.ndim)
    n = x.shape[ax]
    sizes = [int(s) for s in size_splits]
    if not sizes and len(inputs) > 1 and inputs[1] is not None:
        sizes = _ints(inputs[1])
    if sizes:
        if sizes.count(-1) > 1:
            raise KernelError(op, "at most one size may be -1")
        if -1 in sizes:
            sizes[sizes.index(-1)] = n - (sum(sizes) + 1)
        if sum(sizes) != n or min(sizes) < 0:
            raise KernelError(op, f"sizeSplits {list(size_splits)} do not add up to {n}")
        if output_num and output_num != len(sizes):
            raise KernelError(op, f"outputNum {output_num} but {len(sizes)} sizeSplits")
    else:
        if output_num <= 0:
            raise KernelError(op, "needs outputNum > 0 or sizeSplits")
        part = -(-n // output_num)
        sizes = [min(part, max(n - i * part, 0)) for i in range(output_num)]
    idx: list[slice] = [slice(None)] * x.ndim
    out, start = [], 0
    for s in sizes:  # views, as np.split makes, without its per-call overhead
        idx[ax] = slice(start, start + s)
        out.append(x[tuple(idx)])
        start += s
    return out


def stack(inputs: Sequence[np.ndarray], *, axis: int = 0) -> list[np.ndarray]:
    """``Stack`` along a new ``axis``."""
    if not inputs:
        raise KernelError("Stack", "needs at least one input")
    arrs = [np.asarray(a) for a in inputs]
    ax = _ax("Stack", axis, arrs[0].ndim + 1)
    try:
        return [np.stack(arrs, axis=ax)]
    except ValueError as e:
        raise KernelError("Stack", str(e)) from None


def unstack(inputs: Sequence[np.ndarray], *, axis: int = 0) -> list[np.ndarray]:
    """``Unstack``: one output per index of ``axis``, the axis removed."""
    x = _input("Unstack", inputs, 0, "x")
    ax = _ax("Unstack", axis, x.ndim)
    return [np.take(x, i, axis=ax) for i in range(x.shape[ax])]


def squeeze(inputs: Sequence[np.ndarray], *, axis: Sequence[int] = ()) -> list[np.ndarray]:
    """``Squeeze``: drop size-1 dims at ``axis`` (empty = every size-1 dim)."""
    x = _input("Squeeze", inputs, 0, "x")
    axes = [int(a) for a in axis]
    if not axes and len(inputs) > 1 and inputs[1] is not None:
        axes = _ints(inputs[1])
    if not axes:
        return [np.squeeze(x)]
    ax = tuple(sorted({_ax("Squeeze", a, x.ndim) for a in axes}))
    if any(x.shape[a] != 1 for a in ax):
        raise KernelError("Squeeze", f"axes {list(axis)} of {x.shape} are not all size 1")
    return [np.squeeze(x, axis=ax)]


def unsqueeze(inputs: Sequence[np.ndarray], *, axis: Sequence[int] = ()) -> list[np.ndarray]:
    """``Unsqueeze``: insert size-1 dims at ``axis`` (positions in the output)."""
    x = _input("Unsqueeze", inputs, 0, "x")
    axes = [int(a) for a in axis]
    if not axes and len(inputs) > 1 and inputs[1] is not None:
        axes = _ints(inputs[1])
    r = x.ndim + len(axes)
    ax = sorted(_ax("Unsqueeze", a, r) for a in axes)
    if len(set(ax)) != len(ax):
        raise KernelError("Unsqueeze", f"repeated axes {axes}")
    return [np.expand_dims(x, tuple(ax))] if ax else [x]


def expand_dims(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``ExpandDims``: axis from input[1], in [-r-1, r]."""
    x = _input("ExpandDims", inputs, 0, "x")
    axes = _ints(_input("ExpandDims", inputs, 1, "axis"))
    return unsqueeze([x], axis=axes)


def flatten(inputs: Sequence[np.ndarray], *, axis: int = 1) -> list[np.ndarray]:
    """``Flatten``: 2-D (prod(d[:axis]), prod(d[axis:]))."""
    x = _input("Flatten", inputs, 0, "x")
    ax = int(axis) + x.ndim if int(axis) < 0 else int(axis)
    if not 0 <= ax <= x.ndim:
        raise KernelError("Flatten", f"axis {axis} out of range for rank {x.ndim}")
    return [x.reshape(math.prod(x.shape[:ax]), math.prod(x.shape[ax:]))]


def tile(inputs: Sequence[np.ndarray], *, dims: Sequence[int] = ()) -> list[np.ndarray]:
    """``TileFusion``: multiples from input[1]; when ``dims`` is given, multiples[i] applies to
    axis dims[i] (nnacl ``tile_base.c``); a longer multiples list prepends dims."""
    x = _input("TileFusion", inputs, 0, "x")
    mult = _ints(_input("TileFusion", inputs, 1, "multiples"))
    if dims and len(dims) == len(mult) and len(mult) < x.ndim:
        full = [1] * x.ndim
        for d, m in zip(dims, mult):
            full[_ax("TileFusion", d, x.ndim)] = m
        mult = full
    if len(mult) < x.ndim or min(mult, default=1) < 0:
        raise KernelError("TileFusion", f"multiples {mult} do not cover rank {x.ndim}")
    return [np.tile(x, mult)]


def broadcast_to(inputs: Sequence[np.ndarray], *, shape: Sequence[int] = ()) -> list[np.ndarray]:
    """``BroadcastTo``: NumPy broadcast to ``shape`` (or input[1]); -1 keeps the input dim."""
    x = _input("BroadcastTo", inputs, 0, "x")
    dims = [int(s) for s in shape]
    if not dims and len(inputs) > 1 and inputs[1] is not None:
        dims = _ints(inputs[1])
    off = len(dims) - x.ndim
    dims = [x.shape[i - off] if d == -1 and i >= off else d for i, d in enumerate(dims)]
    try:
        return [np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(dims))))]
    except ValueError as e:
        raise KernelError("BroadcastTo", f"cannot broadcast {x.shape} to {dims}: {e}") from None


_PAD_MODES = {0: "constant", 1: "reflect", 2: "symmetric"}


def pad(
    inputs: Sequence[np.ndarray],
    *,
    paddings: Sequence[Sequence[int]] = (),
    padding_mode: int = 0,
    constant_value: float = 0.0,
) -> list[np.ndarray]:
    """``PadFusion``: ``paddings[i] = [before, after]`` (or input[1] of shape [n, 2]);
    CONSTANT / REFLECT (edge not repeated) / SYMMETRIC (edge repeated, TFLite ``mirror_pad``).
    """
    op = "PadFusion"
    x = _input(op, inputs, 0, "x")
    mode = _PAD_MODES.get(int(padding_mode))
    if mode is None:
        raise KernelError(op, f"unsupported PaddingMode {int(padding_mode)}")
    if len(inputs) > 1 and inputs[1] is not None and np.asarray(inputs[1]).size:
        pads = np.asarray(inputs[1]).reshape(-1, 2).astype(np.int64).tolist()
    else:
        pads = [[int(a), int(b)] for a, b in paddings]
    if len(pads) != x.ndim:
        raise KernelError(op, f"paddings has {len(pads)} rows for rank {x.ndim}")
    if mode == "constant":
        lo = [max(-a, 0) for a, _ in pads]
        hi = [x.shape[i] - max(-b, 0) for i, (_, b) in enumerate(pads)]
        x = x[tuple(slice(a, b) for a, b in zip(lo, hi))]  # negative pads crop
        pw = [(max(a, 0), max(b, 0)) for a, b in pads]
        return [
            np.pad(
                x,
                pw,
                mode="constant",
                constant_values=np.asarray(constant_value).astype(x.dtype),
            )
        ]
    if min(min(p) for p in pads) < 0:
        raise KernelError(op, f"{mode} padding cannot be negative: {pads}")
    limit = 0 if mode == "reflect" else 1
    for i, (a, b) in enumerate(pads):
        if max(a, b) > x.shape[i] - 1 + limit:
            raise KernelError(op, f"{mode} padding {[a, b]} too large for dim {x.shape[i]}")
    return [np.pad(x, pads, mode=mode)]  # type: ignore[call-overload]


def slice_(inputs: Sequence[np.ndarray], *, axes: Sequence[int] = ()) -> list[np.ndarray]:
    """``SliceFusion``: inputs x, begin, size (size -1 = to the end) over ``axes`` (empty = 0..)."""
    op = "SliceFusion"
    x = _input(op, inputs, 0, "x")
    begin = _ints(_input(op, inputs, 1, "begin"))
    size = _ints(_input(op, inputs, 2, "size"))
    ax = [int(a) for a in axes] or list(range(len(begin)))
    if not len(ax) == len(begin) == len(size):
        raise KernelError(op, f"axes {ax}, begin {begin}, size {size} differ in length")
    idx: list[slice] = [slice(None)] * x.ndim
    for a, b, s in zip(ax, begin, size):
        a = _ax(op, a, x.ndim)
        b = b + x.shape[a] if b < 0 else b
        if not 0 <= b <= x.shape[a]:
            raise KernelError(op, f"begin {b} out of range for dim {x.shape[a]}")
        e = x.shape[a] if s == -1 else b + s
        if s < -1 or e > x.shape[a]:
            raise KernelError(op, f"size {s} from {b} exceeds dim {x.shape[a]}")
        idx[a] = slice(b, e)
    return [x[tuple(idx)]]


def strided_slice(
    inputs: Sequence[np.ndarray],
    *,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
) -> list[np.ndarray]:
    """``StridedSlice`` with TF mask semantics (TFLite ``strided_slice_logic.h``): inputs x,
    begin, end, strides (default 1)."""
    op = "StridedSlice"
    x = _input(op, inputs, 0, "x")
    begin = _ints(_input(op, inputs, 1, "begin"))
    end = _ints(_input(op, inputs, 2, "end"))
    strides = _ints(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else [1] * len(begin)
    m = len(begin)
    if not len(end) == len(strides) == m:
        raise KernelError(op, f"begin/end/strides lengths differ: {m}, {len(end)}, {len(strides)}")
    if any(s == 0 for s in strides):
        raise KernelError(op, "stride 0")
    if bin(ellipsis_mask).count("1") > 1:
        raise KernelError(op, "more than one ellipsis")
    consumed = sum(
        1 for i in range(m) if not (ellipsis_mask >> i) & 1 and not (new_axis_mask >> i) & 1
    )
    idx: list[object] = []
    dim = 0  # input dimension the next spec entry addresses
    for i in range(m):
        if (ellipsis_mask >> i) & 1:
            n = x.ndim - consumed
            idx.extend([slice(None)] * n)
            dim += n
        elif (new_axis_mask >> i) & 1:
            idx.append(None)
        elif (shrink_axis_mask >> i) & 1:
            if dim >= x.ndim:
                raise KernelError(op, "more slice entries than dimensions")
            b = begin[i] + x.shape[dim] if begin[i] < 0 else begin[i]
            if not 0 <= b < x.shape[dim]:
                raise KernelError(
                    op, f"shrink index {begin[i]} out of range for dim {x.shape[dim]}"
                )
            idx.append(b)
            dim += 1
        else:
            if dim >= x.ndim:
                raise KernelError(op, "more slice entries than dimensions")
            b = None if (begin_mask >> i) & 1 else begin[i]
            e = None if (end_mask >> i) & 1 else end[i]
            idx.append(slice(b, e, strides[i]))
            dim += 1
    return [np.array(x[tuple(idx)])]  # type: ignore[arg-type]  # None/int/slice mix


def crop(
    inputs: Sequence[np.ndarray], *, axis: int = 0, offset: Sequence[int] = ()
) -> list[np.ndarray]:
    """``Crop`` (Caffe): dims >= ``axis`` are cut to input[1]'s shape starting at ``offset``
    (one offset applies to all cropped dims). input[1] is the reference tensor whose shape is the
    target (``crop_infer.c``); a 1-D input[1] of length rank(x) is read as the shape itself.
    """
    op = "Crop"
    x = _input(op, inputs, 0, "x")
    ref = _input(op, inputs, 1, "shape")
    target = list(ref.shape) if ref.ndim == x.ndim else _ints(ref)
    if len(target) != x.ndim:
        raise KernelError(op, f"target shape {target} has wrong rank for {x.shape}")
    ax = _ax(op, axis, x.ndim)
    offs = [int(o) for o in offset]
    idx = [slice(None)] * x.ndim
    for d in range(ax, x.ndim):
        o = offs[0] if len(offs) == 1 else (offs[d - ax] if d - ax < len(offs) else 0)
        if o < 0 or o + target[d] > x.shape[d]:
            raise KernelError(op, f"offset {o} + size {target[d]} exceeds dim {x.shape[d]}")
        idx[d] = slice(o, o + target[d])
    return [x[tuple(idx)]]


def shape(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Shape``: int32 shape vector."""
    return [np.asarray(np.shape(inputs[0]), dtype=np.int32)]


def rank(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Rank``: int32 scalar."""
    return [np.asarray(np.ndim(inputs[0]), dtype=np.int32)]


def fill(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Fill``: inputs value (scalar), shape."""
    v = _input("Fill", inputs, 0, "value")
    dims = _ints(_input("Fill", inputs, 1, "shape"))
    if v.size != 1 or min(dims, default=0) < 0:
        raise KernelError(
            "Fill",
            f"needs a scalar value and a non-negative shape, got {v.shape}, {dims}",
        )
    return [np.full(dims, v.reshape(()), dtype=v.dtype)]


def constant_of_shape(
    inputs: Sequence[np.ndarray], *, data_type: int = 43, value: Sequence[float] = ()
) -> list[np.ndarray]:
    """``ConstantOfShape``: shape from input[0], filled with value[0] as ``dataType``."""
    dims = _ints(_input("ConstantOfShape", inputs, 0, "shape"))
    if min(dims, default=0) < 0:
        raise KernelError("ConstantOfShape", f"negative shape {dims}")
    dt = to_numpy(data_type, op="ConstantOfShape")
    v = float(value[0]) if len(value) else 0.0
    return [np.full(dims, v).astype(dt)]


def range_(
    inputs: Sequence[np.ndarray],
    *,
    data_type: int = 34,
    start: int = 0,
    limit: int = 0,
    delta: int = 1,
) -> list[np.ndarray]:
    """``Range``: start, limit, delta from the three inputs when given, else the attributes; the
    output dtype is the inputs' (or ``dataType``)."""
    if len(inputs) >= 3:
        s, l, d = (np.asarray(a).reshape(()) for a in inputs[:3])
        dt = np.result_type(s, l, d)
        sv, lv, dv = s.item(), l.item(), d.item()
    else:
        dt = to_numpy(data_type, op="Range")
        sv, lv, dv = start, limit, delta
    if dv == 0:
        raise KernelError("Range", "delta is 0")
    n = max(int(np.ceil((lv - sv) / dv)), 0)
    return [(sv + np.arange(n) * dv).astype(dt)]


def cast(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``Cast``: input[1] holds the target ``DataType`` number."""
    x = _input("Cast", inputs, 0, "x")
    code = _ints(_input("Cast", inputs, 1, "type"))
    if len(code) != 1:
        raise KernelError("Cast", f"target type must be one DataType number, got {code}")
    dt = to_numpy(code[0], op="Cast")
    with np.errstate(invalid="ignore", over="ignore"):
        return [x.astype(dt)]


def _nhwc(op: str, x: np.ndarray) -> tuple[int, int, int, int]:
    if x.ndim != 4:
        raise KernelError(op, f"needs a 4-D NHWC tensor, got {x.shape}")
    n, h, w, c = x.shape
    return n, h, w, c


def depth_to_space(
    inputs: Sequence[np.ndarray], *, block_size: int, mode: str = "DCR"
) -> list[np.ndarray]:
    """``DepthToSpace`` (NHWC): DCR (default) splits channels as [bh, bw, c], CRD as [c, bh, bw]."""
    op = "DepthToSpace"
    x = _input(op, inputs, 0, "x")
    n, h, w, c = _nhwc(op, x)
    b = int(block_size)
    if b < 1 or c % (b * b):
        raise KernelError(op, f"blockSize {b} does not divide channels {c}")
    m = (mode or "DCR").upper()
    oc = c // (b * b)
    if m == "DCR":
        y = x.reshape(n, h, w, b, b, oc).transpose(0, 1, 3, 2, 4, 5)
    elif m == "CRD":
        y = x.reshape(n, h, w, oc, b, b).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise KernelError(op, f"unsupported mode {mode!r} (DCR or CRD)")
    return [y.reshape(n, h * b, w * b, oc)]


def space_to_depth(inputs: Sequence[np.ndarray], *, block_size: int) -> list[np.ndarray]:
    """``SpaceToDepth`` (NHWC): output channel = (bh*b + bw)*C + c."""
    op = "SpaceToDepth"
    x = _input(op, inputs, 0, "x")
    n, h, w, c = _nhwc(op, x)
    b = int(block_size)
    if b < 1 or h % b or w % b:
        raise KernelError(op, f"blockSize {b} does not divide {h}x{w}")
    y = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return [y.reshape(n, h // b, w // b, b * b * c)]


def _block(op: str, block_shape: Sequence[int], inputs: Sequence[np.ndarray]) -> list[int]:
    blk = [int(v) for v in block_shape]
    if not blk and len(inputs) > 1 and inputs[1] is not None:
        blk = _ints(inputs[1])
    if len(blk) != 2 or min(blk) < 1:
        raise KernelError(op, f"blockShape must be two positive ints, got {blk}")
    return blk


def _pairs(
    op: str, name: str, v: Sequence[Sequence[int]], inputs: Sequence[np.ndarray]
) -> list[list[int]]:
    rows = [[int(a) for a in r] for r in v]
    if not rows and len(inputs) > 2 and inputs[2] is not None:
        rows = np.asarray(inputs[2]).reshape(-1, 2).astype(int).tolist()
    if not rows:
        rows = [[0, 0], [0, 0]]
    if len(rows) != 2 or any(len(r) != 2 or min(r) < 0 for r in rows):
        raise KernelError(op, f"{name} must be [[top, bottom], [left, right]] >= 0, got {rows}")
    return rows


def batch_to_space_nd(
    inputs: Sequence[np.ndarray],
    *,
    block_shape: Sequence[int] = (),
    crops: Sequence[Sequence[int]] = (),
) -> list[np.ndarray]:
    """``BatchToSpaceND`` (NHWC, TFLite ``batch_to_space_nd.h``)."""
    op = "BatchToSpaceND"
    x = _input(op, inputs, 0, "x")
    n, h, w, c = _nhwc(op, x)
    b0, b1 = _block(op, block_shape, inputs)
    (ct, cb), (cl, cr) = _pairs(op, "crops", crops, inputs)
    if n % (b0 * b1):
        raise KernelError(op, f"batch {n} not divisible by block {b0}x{b1}")
    nb = n // (b0 * b1)
    y = x.reshape(b0, b1, nb, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(nb, h * b0, w * b1, c)
    if ct + cb > h * b0 or cl + cr > w * b1:
        raise KernelError(op, f"crops {crops} larger than {h * b0}x{w * b1}")
    return [np.ascontiguousarray(y[:, ct : h * b0 - cb, cl : w * b1 - cr, :])]


def space_to_batch_nd(
    inputs: Sequence[np.ndarray],
    *,
    block_shape: Sequence[int] = (),
    paddings: Sequence[Sequence[int]] = (),
) -> list[np.ndarray]:
    """``SpaceToBatchND`` (NHWC, TFLite ``space_to_batch_nd.h``): zero-pad then move blocks to batch."""
    op = "SpaceToBatchND"
    x = _input(op, inputs, 0, "x")
    n, h, w, c = _nhwc(op, x)
    b0, b1 = _block(op, block_shape, inputs)
    (pt, pb), (pl, pr) = _pairs(op, "paddings", paddings, inputs)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    hp, wp = h + pt + pb, w + pl + pr
    if hp % b0 or wp % b1:
        raise KernelError(op, f"padded size {hp}x{wp} not divisible by block {b0}x{b1}")
    y = xp.reshape(n, hp // b0, b0, wp // b1, b1, c).transpose(2, 4, 0, 1, 3, 5)
    return [y.reshape(n * b0 * b1, hp // b0, wp // b1, c)]
