"""Execute an NNRt ``Model`` (generated from ModelTypes.idl) with the NumPy runtime.

Duck-typed over the generated records: ``Model{name, inputIndex, outputIndex, nodes, allTensors,
subGraph}``, ``Tensor{name, dataType, dims, format, data: SharedBuffer, quantParams}``,
``Node{name, nodeType, nodeAttr, inputIndex, outputIndex, quantType}``,
``SubGraph{name, inputIndices, outputIndices, nodeIndices}``.

Quantised tensors (integer ``dataType`` with ``quantParams``) are stored as integers; a kernel
sees them dequantised to float32 and its outputs are requantised with the output tensor's
parameters (dequantise -> float kernel -> requantise). QuantDTypeCast(V2) nodes get the tensors'
parameters directly.
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from . import quant as Q
from .dtypes import to_numpy
from .errors import KernelError
from .validate import (
    check_inputs,
    check_model,
    check_output_count,
    has_constant,
    node_order,
    node_where,
    resolve_node,
)
from .validate import tensor_name as _tname

__all__ = [
    "execute",
    "kernels_for",
    "load_constant",
    "node_order",
    # tensor facts the compiled plan (plan.py) shares with this interpreter
    "declared_dtype",
    "is_quantized",
    "quant_cast",
    "tensor_qp",
]

Buffers = Mapping[int, bytes | bytearray | memoryview]


def kernels_for(model: Any) -> ModuleType:
    """The generated ``kernels`` module of the package that defines ``type(model)``."""
    pkg = type(model).__module__.rsplit(".", 1)[0]
    try:
        return importlib.import_module(pkg + ".kernels")
    except ImportError as e:
        raise KernelError("execute", f"no generated kernels module {pkg}.kernels ({e})") from None


def load_constant(tensor: Any, buffers: Buffers, *, where: str = "tensor") -> np.ndarray | None:
    """A tensor's constant data from its ``SharedBuffer``, or None when it has none."""
    buf = tensor.data
    if buf is None or int(buf.dataSize) <= 0:
        return None
    fd, off, size = int(buf.fd), int(buf.offset), int(buf.dataSize)
    if fd not in buffers:
        raise KernelError(where, f"constant data in fd {fd}, which is not in buffers")
    raw = memoryview(buffers[fd])
    if off < 0 or off + size > len(raw):
        raise KernelError(
            where,
            f"data [{off}, {off + size}) outside the {len(raw)}-byte buffer of fd {fd}",
        )
    dt = to_numpy(int(tensor.dataType), op=where)
    dims = [int(d) for d in tensor.dims]
    n = int(np.prod(dims)) if dims else 1
    if any(d < 0 for d in dims) or n * dt.itemsize != size:
        raise KernelError(where, f"dataSize {size} does not hold dims {dims} of {dt}")
    return np.frombuffer(raw[off : off + size], dtype=dt).reshape(dims).copy()


def tensor_qp(tensor: Any) -> Q.QuantParams | None:
    params = list(getattr(tensor, "quantParams", []) or [])
    return Q.QuantParams.of(params) if params else None


def is_quantized(tensor: Any, dt: np.dtype[np.generic]) -> bool:
    return np.issubdtype(dt, np.integer) and bool(getattr(tensor, "quantParams", None))


def declared_dtype(tensor: Any) -> np.dtype[np.generic] | None:
    code = int(tensor.dataType)
    return None if code == 0 else to_numpy(code, op=f"tensor {tensor.name!r}")


def _attr_bytes(raw: Any) -> bytes:
    return raw if type(raw) is bytes else bytes(raw)


def _fingerprint(model: Any) -> tuple[Any, ...]:
    """Every model value a plan depends on; a plan is reused only while this compares equal, so
    mutating the model between calls is always seen."""
    sub = model.subGraph
    return (
        tuple(sub[0].nodeIndices) if sub else None,
        tuple(model.inputIndex),
        tuple(model.outputIndex),
        tuple(
            (n.name, n.nodeType, _attr_bytes(n.nodeAttr), tuple(n.inputIndex),
             tuple(n.outputIndex))
            for n in model.nodes
        ),
        tuple(
            (t.name, t.dataType, tuple(t.dims),
             None if t.data is None else (t.data.fd, t.data.offset, t.data.dataSize),
             tuple((q.numBits, q.zeroPoint, q.scale) for q in qps)
             if (qps := getattr(t, "quantParams", None)) else ())
            for t in model.allTensors
        ),
    )  # fmt: skip


class _Step:
    """One node, with everything that depends only on the model resolved once."""

    __slots__ = ("ni", "node", "where", "nt", "attrs", "ins", "outs", "deq", "conv")

    def __init__(self, model: Any, ni: int, km: Any) -> None:
        node = model.nodes[ni]
        self.ni, self.node, self.nt = ni, node, node.nodeType
        self.where = node_where(model, ni)
        self.ins = [int(t) for t in node.inputIndex]
        self.outs = [int(t) for t in node.outputIndex]
        self.attrs: Any = resolve_node(model, ni, km)
        tensors = model.allTensors
        # Anything that fails to resolve here is left as None: the per-call path then raises the
        # same error at the same point as an unplanned run would.
        self.deq: list[Q.QuantParams | None] | None
        try:
            self.deq = [tensor_qp(tensors[t]) for t in self.ins]
        except Exception:
            self.deq = None
        self.conv: list[tuple[np.dtype[np.generic] | None, Q.QuantParams | None] | None] = []
        for t in self.outs:
            ten = tensors[t]
            try:
                dt = declared_dtype(ten)
                qp = tensor_qp(ten) if dt is not None and is_quantized(ten, dt) else None
            except Exception:
                self.conv.append(None)
                continue
            self.conv.append((dt, qp))


class _Plan:
    """What ``execute`` derives from a model alone: node order, decoded attributes, constant
    locations, declared dtypes. Built once per model (and kernels module), revalidated by
    ``_fingerprint`` on every call. A model that fails ``validate`` keeps its error, raised on
    every call before anything else (as ``plan.compile_model`` raises it)."""

    def __init__(self, model: Any, km: Any) -> None:
        self.km = km
        self.fingerprint = _fingerprint(model)
        self.table: Mapping[Any, Callable[[Any, Sequence[np.ndarray]], list[np.ndarray]]] = (
            km.KERNELS
        )
        self.consts = [i for i, t in enumerate(model.allTensors) if has_constant(t)]
        # Constant arrays cached per (tensor, immutable buffer object): read-only views.
        self.const_cache: dict[int, tuple[bytes, np.ndarray]] = {}
        self.error: KernelError | None = None
        self.steps: list[_Step] = []
        try:
            self.steps = [_Step(model, ni, km) for ni in check_model(model)]
        except KernelError as e:
            self.error = e


_PLANS: dict[int, tuple[weakref.ref[Any], _Plan]] = {}


def _plan(model: Any, km: Any) -> _Plan:
    key = id(model)
    hit = _PLANS.get(key)
    if hit is not None and hit[0]() is model:
        plan = hit[1]
        if plan.km is km and plan.fingerprint == _fingerprint(model):
            return plan
    plan = _Plan(model, km)

    def forget(_ref: weakref.ref[Any]) -> None:
        _PLANS.pop(key, None)

    try:
        ref = weakref.ref(model, forget)
    except TypeError:  # not weak-referenceable: no caching
        return plan
    _PLANS[key] = (ref, plan)
    return plan


def _constant(plan: _Plan, model: Any, i: int, buffers: Buffers) -> np.ndarray | None:
    t = model.allTensors[i]
    src = buffers.get(int(t.data.fd)) if isinstance(buffers, Mapping) else None
    hit = plan.const_cache.get(i)
    if hit is not None and hit[0] is src:
        return hit[1]
    arr = load_constant(t, buffers, where=_tname(model, i))
    if arr is not None and type(src) is bytes:
        # Immutable bytes: the same data every call, so share one read-only array.
        arr.flags.writeable = False
        plan.const_cache[i] = (src, arr)
    return arr


def execute(
    model: Any,
    inputs: Sequence[np.ndarray],
    *,
    buffers: Buffers | None = None,
    kernels: ModuleType | Any | None = None,
) -> list[np.ndarray]:
    """Run ``model``; ``inputs`` are the arrays for ``model.inputIndex``; ``buffers`` maps
    ``SharedBuffer.fd`` to the bytes holding constant tensor data. ``kernels`` overrides the
    generated ``kernels`` module (anything with ``KERNELS`` and ``decode_node_attr``).
    """
    buffers = buffers or {}
    km = kernels if kernels is not None else kernels_for(model)
    plan = _plan(model, km)
    if plan.error is not None:
        e = plan.error
        raise KernelError(e.op, e.reason)
    tensors = model.allTensors
    values: dict[int, np.ndarray] = {}
    for i in plan.consts:
        c = _constant(plan, model, i, buffers)
        if c is not None:
            values[i] = c
    in_idx = [int(i) for i in model.inputIndex]
    dtypes = [declared_dtype(tensors[ti]) for ti in in_idx]
    dims = [[int(d) for d in tensors[ti].dims] for ti in in_idx]
    arrays = check_inputs(inputs, dtypes, dims, lambda k: _tname(model, in_idx[k]))
    values.update(zip(in_idx, arrays))
    table = plan.table
    for st in plan.steps:
        where = st.where
        fn = table[st.nt]
        raw = [values[t] for t in st.ins]
        try:
            if "QUANT_DTYPE_CAST" in str(getattr(st.nt, "name", "")):
                outs = quant_cast(st.node, st.attrs, raw, tensors)
            else:
                qps = st.deq if st.deq is not None else [tensor_qp(tensors[t]) for t in st.ins]
                args = [
                    (
                        Q.dequantize(a, qp, axis=0)
                        if qp is not None and np.issubdtype(a.dtype, np.integer)
                        else a
                    )
                    for qp, a in zip(qps, raw)
                ]
                outs = list(fn(st.attrs, args))
        except KernelError as e:
            raise KernelError(where, f"{e.op}: {e.reason}") from None
        except (ValueError, IndexError, TypeError, ArithmeticError) as e:
            # A kernel fed shapes/dtypes it cannot take: still name the node.
            raise KernelError(where, f"{type(e).__name__}: {e}") from e
        check_output_count(where, len(outs), len(st.outs))
        for t, cv, out in zip(st.outs, st.conv, outs):
            if cv is None:
                values[t] = _convert_out(tensors[t], out)
                continue
            dt, qp = cv
            out = np.asarray(out)
            if qp is not None and not np.issubdtype(out.dtype, np.integer):
                assert dt is not None
                out = Q.quantize(out, qp, dt)
            elif dt is not None and out.dtype != dt:
                out = out.astype(dt)
            values[t] = out
    result = []
    given = {id(a) for a in inputs}
    # check_model saw that every output is an input, a constant or a node's output.
    for ti in (int(i) for i in model.outputIndex):
        v = values[ti]
        # Cached constants are shared read-only between calls (a kernel may return one, or a
        # view of one, unchanged): the caller gets its own writable copy, as without the cache.
        result.append(v.copy() if not v.flags.writeable and id(v) not in given else v)
    return result


def _convert_out(ten: Any, out: Any) -> np.ndarray:
    """Unplanned output conversion (the tensor's dtype or quant params did not resolve)."""
    dt = declared_dtype(ten)
    out = np.asarray(out)
    if dt is not None and is_quantized(ten, dt) and not np.issubdtype(out.dtype, np.integer):
        qp = tensor_qp(ten)
        assert qp is not None
        out = Q.quantize(out, qp, dt)
    elif dt is not None and out.dtype != dt:
        out = out.astype(dt)
    return np.asarray(out)


def quant_cast(
    node: Any, attrs: Any, raw: list[np.ndarray], tensors: list[Any]
) -> list[np.ndarray]:
    src = tensors[int(node.inputIndex[0])]
    dst = tensors[int(node.outputIndex[0])]
    src_t, dst_t = int(attrs.srcT), int(attrs.dstT)
    axis = int(getattr(attrs, "axis", 0))
    qp = tensor_qp(dst) if np.issubdtype(to_numpy(dst_t), np.integer) else tensor_qp(src)
    return Q.quant_dtype_cast_v2(raw[:1], src_t=src_t, dst_t=dst_t, axis=axis, quant_params=qp)
