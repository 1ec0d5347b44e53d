"""A compiled execution plan for one NNRt ``Model``: what ``execute`` re-derives (and re-validates)
on every call is resolved once here.

Each node becomes a bound kernel (the runtime function with its attribute keywords already
converted), integer slots for its inputs and outputs, and precomputed dequantise/requantise
steps; constants are loaded once (read-only); intermediate values are dropped after their last
use so the allocator can hand their memory to the next node. The plan is a snapshot: a model
mutated afterwards needs a new plan (``execute`` itself always sees the current model).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import bindings as B
from . import quant as Q
from . import budget as W
from .budget import (
    MemoryBudgetError,
    WorkBudgetError,
    check_bytes,
    check_shape,
    max_memory,
)
from .errors import KernelError
from .host import HostNode
from .nnrt import (
    Buffers,
    declared_dtype,
    is_quantized,
    kernels_for,
    load_constant,
    quant_cast,
    tensor_qp,
)
from .validate import (
    check_inputs,
    check_model,
    check_output_count,
    has_constant,
    node_where,
    resolve_node,
    tensor_name,
)

__all__ = ["CompiledModel", "compile_model"]

Kernel = Callable[[Sequence[np.ndarray]], list[np.ndarray]]


def _bind(km: Any, nt: Any, attrs: Any, version: str) -> Kernel:
    """The node's kernel with its attributes bound: the runtime function and its keywords when
    the binding table knows the struct, else the generated stub."""
    struct = type(attrs).__name__
    binding = B.BINDINGS.get(struct)
    if binding is not None:
        try:
            spec = B.stub_spec(struct, version)
            kwargs = {p: B.plain(getattr(attrs, B.attr_name(f))) for f, p in spec.params}
            fn = B.resolve(binding)
            return functools.partial(fn, **kwargs)
        except (AttributeError, KeyError, ValueError):
            pass
    stub = km.KERNELS[nt]
    return functools.partial(stub, attrs)


class _Step:
    __slots__ = (
        "where",
        "fn",
        "fast",
        "ins",
        "outs",
        "deq",
        "pre",
        "conv",
        "qcast",
        "free",
        "conv_override",
        "deqf",
        "qout",
    )

    def __init__(self) -> None:
        self.where = ""
        self.fn: Kernel | None = None
        #: ``fn`` when the node needs no dequantisation: called with the raw inputs directly.
        self.fast: Kernel | None = None
        self.ins: list[int] = []
        self.outs: list[int] = []
        self.deq: list[Q.QuantParams | None] | None = None
        self.conv: list[tuple[np.dtype[Any] | None, Q.QuantParams | None]] = []
        self.qcast: Callable[[list[np.ndarray]], list[np.ndarray]] | None = None
        self.free: list[int] = []
        self.pre: list[tuple[int, np.ndarray]] = []
        #: Outputs keep the input's integers (no requantisation): see ``_moves_quantised``.
        self.conv_override = False
        #: Per input: its dequantiser (``_dequantizer``) where ``deq`` has parameters.
        self.deqf: list[Callable[[np.ndarray], np.ndarray] | None] = []
        #: Per output: its quantiser (``_quantizer``) where ``conv`` has parameters.
        self.qout: list[Callable[[np.ndarray], np.ndarray] | None] = []


# Node types whose cost grows faster than their elements: charged before they run.
_HEAVY = frozenset({"NODE_TYPE_CONV2D_FUSION", "NODE_TYPE_CONV2D_TRANSPOSE_FUSION",
                    "NODE_TYPE_MATMUL_FUSION", "NODE_TYPE_FULL_CONNECTION", "NODE_TYPE_LSTM",
                    "NODE_TYPE_GRU"})  # fmt: skip


def _elements(arrays: Sequence[Any]) -> int:
    """Elements of the arrays among ``arrays`` (the work units of touching them)."""
    n = 0
    for a in arrays:
        if type(a) is np.ndarray:
            n += a.size
    return n


def _charged(fn: Kernel, op: str, attrs: Any) -> Kernel:
    """``fn`` charging its superlinear cost to the work budget before it runs (the step that
    calls it names the node in the error)."""

    def run(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
        W.charge(W.heavy_cost(op, raw, attrs), "running it")
        return fn(raw)

    return run


# Node types that only move values (or take a max, which commutes with the monotonic
# dequantisation), so on a quantised input they may run on the integers themselves.
_MOVES = frozenset({"RESHAPE", "TRANSPOSE", "FLATTEN", "SQUEEZE", "UNSQUEEZE", "MAX_POOL_FUSION"})


def _moves_quantised(node: Any, st: _Step, tensors: Any) -> bool:
    """True when the node only moves its first input's values, that input and the one output
    are quantised integers of one dtype with equal parameters, and no other input is quantised:
    dequantising, moving and requantising would give back the same integers."""
    kind = str(getattr(node.nodeType, "name", "")).removeprefix("NODE_TYPE_")
    if kind not in _MOVES or len(st.outs) != 1 or st.deq is None or st.deq[0] is None:
        return False
    if any(q is not None for q in st.deq[1:]):
        return False
    if kind == "MAX_POOL_FUSION" and int(getattr(st.fn, "keywords", {}).get("activation", 0)):
        return False
    src, dst = tensors[st.ins[0]], tensors[st.outs[0]]
    dt_in, dt_out = declared_dtype(src), declared_dtype(dst)
    if dt_in is None or dt_in != dt_out or not is_quantized(dst, dt_out):
        return False
    a, b = st.deq[0], tensor_qp(dst)
    return (
        b is not None
        and a.num_bits == b.num_bits
        and a.scale.shape == b.scale.shape == (1,)
        and np.array_equal(a.scale, b.scale)
        and np.array_equal(a.zero_point, b.zero_point)
    )


def _specialised(node: Any, st: _Step, consts: dict[int, np.ndarray]) -> Kernel | None:
    """Reshape / Transpose whose shape / perm is a constant: the integers are read once here and
    the step is the bare NumPy call (these nodes are frequent in attention blocks and their
    kernel's argument handling is most of their cost). Anything the call rejects goes to the
    kernel itself, which raises its usual error."""
    kind = str(getattr(node.nodeType, "name", "")).removeprefix("NODE_TYPE_")
    if kind not in ("RESHAPE", "TRANSPOSE") or len(st.ins) != 2 or st.ins[1] not in consts:
        return None
    c = consts[st.ins[1]]
    if c.dtype.kind not in "iu" or c.ndim > 1:
        return None
    vals = tuple(int(v) for v in c.reshape(-1).tolist())
    fn = st.fn
    assert fn is not None
    if kind == "RESHAPE":
        if 0 in vals:  # 0 copies an input dim: leave it to the kernel
            return None

        def reshape(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
            try:
                return [raw[0].reshape(vals)]
            except (ValueError, TypeError, AttributeError):
                return fn(raw)

        return reshape
    if not vals:
        return None

    def transpose(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
        x = raw[0]
        if type(x) is not np.ndarray or x.ndim != len(vals):
            return fn(raw)
        try:
            return [x.transpose(vals)]
        except (ValueError, TypeError):
            return fn(raw)

    return transpose


def _bare(fn: Kernel | None) -> Kernel | None:
    """The bare NumPy call for the most frequent small kernels (Neg, clamp Activations, Add /
    Sub / Mul with or without a fused clamp) on float arrays of one dtype: the same ufuncs the
    kernel runs, without its argument handling, which is most of the cost of a small node. Any
    other input (integers, mixed dtypes, shapes that do not broadcast) goes to the kernel
    itself, which computes or raises as usual. Float warnings are silenced for the whole run
    (``CompiledModel.__call__``), as the kernels silence them."""
    from . import activations as A
    from . import elementwise as E

    func = getattr(fn, "func", None)
    kw: dict[str, Any] = getattr(fn, "keywords", None) or {}
    if fn is None or func is None:
        return None
    full = fn
    nd = np.ndarray
    if func is E.neg and not kw:
        negative = np.negative

        def neg(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
            x = raw[0] if len(raw) == 1 else None
            if type(x) is nd and x.dtype.kind == "f":
                return [negative(x)]
            return full(raw)

        return neg
    if func is A.activation:
        code = int(kw.get("activation_type", -1))
        if code not in A.EXACT:
            return None
        spec = A.ACTIVATIONS[code]
        params = A.ActivationParams(
            float(kw.get("alpha", 0.0)), float(kw.get("min_val", 0.0)),
            float(kw.get("max_val", 0.0)), bool(kw.get("approximate", False)))  # fmt: skip
        if code == 16 and not params.max_val > params.min_val:
            return None  # the kernel's error
        sfn = spec.fn
        if code == 1:  # the entry's np.maximum(x, 0), against a zero of x's dtype (no casting)
            zeros = {np.dtype(t): np.dtype(t).type(0) for t in (np.float16, np.float32, np.float64)}
            maximum = np.maximum

            def relu(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
                x = raw[0]
                if type(x) is nd:
                    z = zeros.get(x.dtype)
                    if z is not None:
                        out = maximum(x, z)
                        if type(out) is nd:
                            return [out]
                return full(raw)

            return relu

        def act(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
            x = raw[0]
            if type(x) is nd and x.dtype.kind == "f":
                out = sfn(x, params)
                if type(out) is nd and out.dtype is x.dtype:
                    return [out]
            return full(raw)

        return act
    if func is A.leaky_relu and set(kw) <= {"negative_slope"}:
        slope = float(kw.get("negative_slope", 0.0))
        if not 0.0 < slope <= 1.0:
            return None
        # where(x > 0, x, x * a) == maximum(x, x * a) for 0 < a <= 1, NaN, inf and -0.0
        # included (a is rounded to x's dtype first, as the table entry does)
        slopes = {np.dtype(t): np.dtype(t).type(slope) for t in (np.float32, np.float64)}
        multiply, maximum = np.multiply, np.maximum

        def leaky(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
            x = raw[0]
            if type(x) is nd and x.ndim:
                a = slopes.get(x.dtype)
                if a is not None:
                    out = multiply(x, a)
                    maximum(x, out, out=out)
                    return [out]
            return full(raw)

        return leaky
    ufunc = {E.add: np.add, E.sub: np.subtract, E.mul: np.multiply}.get(func)
    if ufunc is None or set(kw) - {"activation"}:
        return None
    code = int(kw.get("activation", 0))
    if code and code not in A.CLAMPS:
        return None
    fused = A.fused
    op = {E.add: "AddFusion", E.sub: "SubFusion", E.mul: "MulFusion"}[func]

    def arith(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(raw) == 2:
            a, b = raw
            if type(a) is nd and type(b) is nd and a.dtype is b.dtype and a.dtype.kind == "f":
                try:
                    out = ufunc(a, b)
                except ValueError:
                    return full(raw)
                if code:
                    if type(out) is not nd:
                        return full(raw)
                    out = fused(out, code, op, inplace=True)
                return [out]
        return full(raw)

    return arith


def _dequantizer(qp: Q.QuantParams) -> Callable[[np.ndarray], np.ndarray]:
    """``Q.dequantize(a, qp, axis=0)`` with what depends only on ``qp`` resolved once: for 8-bit
    per-tensor parameters, the lookup in the same table ``Q.dequantize`` uses."""
    if qp.scale.size != 1 or qp.zero_point.size != 1:
        return functools.partial(Q.dequantize, qp=qp, axis=0)
    f32 = np.dtype(np.float32)
    tables = {dt: Q.dequant_table(qp, dt, f32) for dt in (np.dtype(np.int8), np.dtype(np.uint8))}
    u8 = np.uint8

    def deq(a: np.ndarray) -> np.ndarray:
        t = tables.get(a.dtype)
        if t is None:
            return Q.dequantize(a, qp, axis=0)
        return t.take(a.view(u8))

    return deq


def _quantizer(qp: Q.QuantParams, dt: np.dtype[Any] | None) -> Callable[[np.ndarray], np.ndarray]:
    """``Q.quantize(x, qp, dt)`` for per-tensor parameters with its constants computed once and
    the same float32 operations in the same order (``x * (1/scale) + zp``, round half away from
    zero as ``trunc(v + copysign(0.5, v))``, clamp, NaN to 0), in place on one temporary."""
    if dt is None or qp.scale.size != 1 or qp.zero_point.size != 1 or dt.kind not in "iu":
        return lambda x: Q.quantize(x, qp, dt)  # type: ignore[arg-type]
    f32 = np.float32
    inv = (f32(1.0) / qp.scale.astype(f32)).astype(f32).reshape(())[()]
    zp = qp.zero_point.astype(f32).reshape(())[()]
    lo, hi = Q.quant_range(dt, qp.num_bits)
    flo, fhi, half = f32(lo), f32(hi), f32(0.5)
    mul, add, cps, clip = np.multiply, np.add, np.copysign, np.clip
    mn, mx, isnan = np.minimum, np.maximum, np.isnan

    def quant(x: np.ndarray) -> np.ndarray:
        if x.dtype != f32:
            x = np.asarray(x, dtype=f32)
        v = mul(x, inv)
        add(v, zp, out=v)
        r = cps(half, v)
        add(r, v, out=r)
        # clamp before the cast instead of trunc + clamp: the cast truncates toward zero, and
        # truncating then clamping to the integer bounds gives the same integers. NaN passes
        # both clamps (as through np.clip) and becomes 0 below.
        if r.size > 4096:
            clip(r, flo, fhi, out=r)
        else:
            mn(r, fhi, out=r)
            mx(r, flo, out=r)
        if r.size and isnan(r.sum()):
            r[isnan(r)] = 0.0
        q: np.ndarray = r.astype(dt)
        return q

    return quant


def _check_declared(model: Any, tensors: Any) -> None:
    """Every tensor whose dims are all known must fit the memory budget (see :mod:`.budget`):
    a model file declaring a 7 TiB intermediate is refused before it runs."""
    for i, t in enumerate(tensors):
        dims = t.dims
        if dims and all(d >= 0 for d in dims):
            dt = declared_dtype(t)
            check_shape(dims, 1 if dt is None else dt.itemsize, tensor_name(model, i))


# Plans up to this many steps run as generated straight-line code (bigger ones loop), from
# their third call on.
_UNROLL_MAX = 4000
_UNROLL_AFTER = 2


class CompiledModel:
    """``plan(inputs) -> outputs`` for ``model.inputIndex`` / ``model.outputIndex``."""

    def __init__(
        self,
        model: Any,
        buffers: Buffers | None = None,
        kernels: Any = None,
        host: Sequence[HostNode] = (),
    ) -> None:
        buffers = buffers or {}
        km = kernels if kernels is not None else kernels_for(model)
        version = type(model).__module__.split(".")[-2]
        tensors = model.allTensors
        self.n = len(tensors)
        _check_declared(model, tensors)
        W.charge(W.COMPILE_STEP_COST * len(model.nodes), "compiling the plan")
        # The same checks, in the same order, as ``execute``: structure, nodes, constants.
        order = check_model(model, [t for h in host for t in h.outputs])
        attrs_of = {ni: resolve_node(model, ni, km) for ni in order}
        self.consts: dict[int, np.ndarray] = {}
        for i, t in enumerate(tensors):
            if has_constant(t):
                arr = load_constant(t, buffers, where=tensor_name(model, i))
                if arr is not None:
                    arr.flags.writeable = False
                    self.consts[i] = arr
        self.inputs = [int(i) for i in model.inputIndex]
        self.in_dtypes = [declared_dtype(tensors[i]) for i in self.inputs]
        self.in_dims = [[int(d) for d in tensors[i].dims] for i in self.inputs]
        self.in_names = [tensor_name(model, i) for i in self.inputs]
        self.outputs = [int(i) for i in model.outputIndex]
        self.steps: list[_Step] = []
        for ni in order:
            node = model.nodes[ni]
            st = _Step()
            st.where = node_where(model, ni)
            attrs = attrs_of[ni]
            st.ins = [int(t) for t in node.inputIndex]
            st.outs = [int(t) for t in node.outputIndex]
            if "QUANT_DTYPE_CAST" in str(getattr(node.nodeType, "name", "")):
                st.qcast = functools.partial(quant_cast, node, attrs, tensors=tensors)
            else:
                st.fn = _bind(km, node.nodeType, attrs, version)
                deq = [tensor_qp(tensors[t]) for t in st.ins]
                for k, t in enumerate(st.ins):
                    # Quantised constants (int8 weights, int32 biases) are dequantised once.
                    c, qk = self.consts.get(t), deq[k]
                    if qk is not None and c is not None and c.dtype.kind in "iu":
                        f = Q.dequantize(c, qk, axis=0)
                        f.flags.writeable = False
                        st.pre.append((k, f))
                        deq[k] = None
                st.deq = deq if any(q is not None for q in deq) else None
                if st.deq is not None and not st.pre and _moves_quantised(node, st, tensors):
                    # Values only move (or a max is taken): the integers pass through unchanged.
                    st.deq = None
                    st.conv_override = True
                if st.deq is None and not st.pre:
                    st.fast = _specialised(node, st, self.consts) or _bare(st.fn) or st.fn
                op = str(getattr(node.nodeType, "name", ""))
                if op in _HEAVY:
                    st.fn = _charged(st.fn, op, attrs)
                    if st.fast is not None:
                        st.fast = _charged(st.fast, op, attrs)
            for t in st.outs:
                dt = declared_dtype(tensors[t])
                qp = (
                    tensor_qp(tensors[t])
                    if dt is not None and is_quantized(tensors[t], dt)
                    else None
                )
                st.conv.append((dt, None if st.conv_override else qp))
            self.steps.append(st)
        if host:
            self.steps = _with_host_steps(model, order, self.steps, host, buffers)
        # Per step for the lean loop: (kernel or None when the step needs the full path, input
        # slots, output slots, declared output dtypes, slots to free).
        self._lean: list[tuple[Any, list[int], list[int], list[Any], list[int]]] = []
        # Liveness: after its last reader, an intermediate value is dropped.
        keep = set(self.outputs) | set(self.consts) | set(self.inputs)
        last: dict[int, int] = {}
        for k, st in enumerate(self.steps):
            for t in st.ins:
                last[t] = k
        for t, k in last.items():
            if t not in keep:
                self.steps[k].free.append(t)
        # Per step: the bytes of its outputs where the model declares all their dims, held
        # against the memory budget *before* the step allocates them.
        self._out_bytes: list[int] = []
        for st in self.steps:
            need = 0
            for t in st.outs:
                dims, dt = tensors[t].dims, declared_dtype(tensors[t])
                if dt is not None and dims and all(d >= 0 for d in dims):
                    need += W.nbytes(dims, dt.itemsize)
            self._out_bytes.append(need)
        for st in self.steps:
            plain = st.fast is not None and all(qp is None for _, qp in st.conv)
            self._lean.append((st.fast if plain else None, st.ins, st.outs,
                               [dt for dt, _ in st.conv], st.free))  # fmt: skip
        # Unrolled after a few calls: compiling it costs about 150 µs a step, repaid over many
        # calls, not by a model that runs once.
        self._unrolled: Callable[[list[Any], W.Meter], None] | None = None
        self._calls = 0

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        arrays = check_inputs(inputs, self.in_dtypes, self.in_dims, self.in_names.__getitem__)
        template: list[Any] | None = getattr(self, "_template", None)
        if template is None:
            template = [None] * self.n
            for i, arr in self.consts.items():
                template[i] = arr
            self._template = template
        values: list[Any] = template.copy()
        for ti, a in zip(self.inputs, arrays):
            values[ti] = a
        # as every kernel does: float overflow / invalid / divide give inf / NaN, no warning
        outer = W.meter() is not None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"), W.metered() as m:
            m.used += W.CALL_COST
            # what this call holds is counted while it runs; a caller (a control-flow body's
            # run) counts the outputs it keeps itself
            start = m.live
            if not outer:
                m.live += W.held_total(arrays)
            if self._unrolled is None:
                self._calls += 1
                if self._calls > _UNROLL_AFTER and len(self._lean) <= _UNROLL_MAX:
                    self._unrolled = self._unroll()
            try:
                if self._unrolled is not None:
                    self._unrolled(values, m)
                else:
                    self._loop(values, m)
            finally:
                m.live = start
        result = []
        given = {id(a) for a in inputs}
        # check_model saw that every output is an input, a constant or a node's output.
        for ti in self.outputs:
            v = values[ti]
            result.append(v.copy() if not v.flags.writeable and id(v) not in given else v)
        return result

    def _loop(self, values: list[Any], m: W.Meter) -> None:
        """The steps in order. The common case is kept lean (its cost is the per-node overhead):
        no dequantisation, and every output already an ndarray of its declared dtype; anything
        else takes _step."""
        need = self._out_bytes
        for k, (fast, ins, outs_t, dts, free) in enumerate(self._lean):
            if m.live + need[k] > m.memory:
                m.peak = m.live + need[k]
                raise m.over_memory(self.steps[k].where)
            if fast is None:
                self._step(self.steps[k], values, m=m)
                continue
            raw = [values[t] for t in ins]
            try:
                outs = fast(raw)
            except Exception as e:  # noqa: BLE001 - _step re-raises it with the node named
                self._step(self.steps[k], values, error=e, m=m)
                continue
            if len(outs) < len(outs_t):
                self._step(self.steps[k], values, outs, m=m)
                continue
            for t, dt, out in zip(outs_t, dts, outs):
                if type(out) is not np.ndarray or (dt is not None and out.dtype is not dt):
                    self._step(self.steps[k], values, outs, m=m)
                    break
                values[t] = out
            else:
                where = self.steps[k].where
                m.spend(W.STEP_COST + _elements(raw) + _elements(outs), where)
                m.keep(W.held_total(outs), where)
                for t in free:
                    m.live -= W.held_total((values[t],))
                    values[t] = None

    def _unroll(self) -> Callable[[list[Any], W.Meter], None] | None:
        """``_loop`` as straight-line Python generated for this plan: the same checks and
        fallbacks, without the loop's per-step unpacking (a third of the per-node overhead).
        The source holds only integer slots and names bound below, never model text."""
        if len(self._lean) > _UNROLL_MAX:
            return None
        env: dict[str, Any] = {"steps": self.steps, "step": self._step, "nd": np.ndarray,
                               "hb": W.held}  # fmt: skip
        src = ["def run(values, m):"]
        for k, (fast, ins, outs_t, dts, free) in enumerate(self._lean):
            if self._out_bytes[k]:
                src += [
                    f"    if m.live + {self._out_bytes[k]} > m.memory:",
                    f"        m.peak = m.live + {self._out_bytes[k]}",
                    f"        raise m.over_memory(steps[{k}].where)",
                ]
            if fast is None:
                src.append(f"    step(steps[{k}], values, m=m)")
                continue
            env[f"f{k}"] = fast
            args = ", ".join(f"values[{t}]" for t in ins)
            checks = []
            for j, dt in enumerate(dts):
                checks.append(f"type(r[{j}]) is not nd")
                if dt is not None:
                    env[f"d{k}_{j}"] = dt
                    checks.append(f"r[{j}].dtype is not d{k}_{j}")
            # Meter.spend and Meter.keep, spelled out per slot (every value here is an ndarray):
            # this is the per-node overhead of a plan run many times
            outs_j = range(len(outs_t))
            sets = [f"values[{t}] = r[{j}]" for j, t in enumerate(outs_t)]
            touched = [f"a[{i}].size" for i in range(len(ins))] + [f"r[{j}].size" for j in outs_j]
            held = [f"(r[{j}].nbytes if r[{j}].base is None else hb(r[{j}]))" for j in outs_j]
            sets += [
                f"m.used += {' + '.join([str(W.STEP_COST), *touched])}",
                "if m.used > m.limit:",
                f"    raise m.over(steps[{k}].where)",
            ]
            if held:
                sets += [
                    f"m.live += {' + '.join(held)}",
                    "if m.live > m.peak:",
                    "    m.peak = m.live",
                    "    if m.peak > m.memory:",
                    f"        raise m.over_memory(steps[{k}].where)",
                ]
            for t in free:
                sets += [
                    f"v = values[{t}]",
                    "m.live -= v.nbytes if v.base is None else hb(v)",
                    f"values[{t}] = None",
                ]
            src += [
                "    try:",
                f"        r = f{k}(a := [{args}])",
                "    except Exception as e:",
                f"        step(steps[{k}], values, error=e, m=m)",
                "    else:",
                f"        if len(r) < {len(outs_t)}{''.join(' or ' + c for c in checks)}:",
                f"            step(steps[{k}], values, r, m=m)",
                "        else:",
            ]
            src += [f"            {line}" for line in sets]
        if len(src) == 1:
            src.append("    pass")
        code = compile("\n".join(src) + "\n", "<idlgen plan>", "exec")
        exec(code, env)  # noqa: S102 - generated above from integers only
        fn: Callable[[list[Any], W.Meter], None] = env["run"]
        return fn

    def _step(
        self,
        st: _Step,
        values: list[Any],
        outs: Any = None,
        error: Exception | None = None,
        m: W.Meter | None = None,
    ) -> None:
        """One step in full: dequantise inputs, run (unless the lean loop already did: ``outs``,
        or the ``error`` it raised), check the output count, convert and requantise outputs,
        free dead values."""
        raw = [values[t] for t in st.ins]
        try:
            if error is not None:
                raise error
            if outs is not None:
                pass
            elif st.fast is not None:
                outs = st.fast(raw)
            elif st.qcast is not None:
                outs = st.qcast(raw)
            else:
                for k, f in st.pre:
                    raw[k] = f
                if st.deq is not None:
                    for a in raw:  # dequantised copies are float32: 4 bytes per integer
                        check_bytes(a.size * 4, "dequantised input")
                    if not st.deqf:
                        st.deqf = [None if qp is None else _dequantizer(qp) for qp in st.deq]
                    raw = [
                        f(a) if f is not None and a.dtype.kind in "iu" else a
                        for f, a in zip(st.deqf, raw)
                    ]
                assert st.fn is not None
                outs = st.fn(raw)
        except KernelError as e:
            raise KernelError(st.where, f"{e.op}: {e.reason}") from None
        except WorkBudgetError as e:
            raise e.at(st.where) from None
        except MemoryBudgetError as e:
            raise e.at(st.where) from None
        except MemoryError:
            raise MemoryBudgetError(st.where, 0, max_memory()) from None
        except (ValueError, IndexError, TypeError, ArithmeticError, AttributeError) as e:
            raise KernelError(st.where, f"{type(e).__name__}: {e}") from e
        check_output_count(st.where, len(outs), len(st.outs))
        for j, (t, (dt, qp), out) in enumerate(zip(st.outs, st.conv, outs)):
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            if qp is not None and out.dtype.kind not in "iu":
                assert dt is not None
                if len(st.qout) != len(st.conv):
                    st.qout = [None if q is None else _quantizer(q, d) for d, q in st.conv]
                qf = st.qout[j]
                out = qf(out) if qf is not None else Q.quantize(out, qp, dt)
            elif dt is not None and out.dtype is not dt and out.dtype != dt:
                out = out.astype(dt)
            values[t] = out
        if m is not None:
            m.spend(W.STEP_COST + _elements(raw) + _elements(outs), st.where)
            m.keep(W.held_total([values[t] for t in st.outs]), st.where)
            m.live -= W.held_total([values[t] for t in st.free])
        for t in st.free:
            values[t] = None


def _host_step(model: Any, h: HostNode, buffers: Buffers) -> _Step:
    st = _Step()
    st.where = f"host node {h.name!r} ({h.op})"
    st.ins = [t for t in h.inputs if t >= 0]
    st.outs = list(h.outputs)
    fn = h.fn
    bind = getattr(fn, "bind", None)
    if bind is not None:  # control flow: its bodies are subgraphs of this very model
        fn = bind(model, buffers)
    if len(st.ins) != len(h.inputs):
        present = [t >= 0 for t in h.inputs]

        def call(raw: Sequence[np.ndarray]) -> list[np.ndarray]:
            it = iter(raw)
            return fn([next(it) if p else None for p in present])  # type: ignore[misc]

        st.fn = st.fast = call
    else:
        st.fn = st.fast = fn  # type: ignore[assignment]
    for t in st.outs:
        st.conv.append((declared_dtype(model.allTensors[t]), None))
    return st


def _with_host_steps(
    model: Any, order: list[int], steps: list[_Step], host: Sequence[HostNode], buffers: Buffers
) -> list[_Step]:
    """NNRt steps (in ``order``) and host steps merged: a host node runs after the NNRt nodes
    emitted before it. The merged order is checked: every value is written before it is read."""
    at: dict[int, list[HostNode]] = {}
    for h in host:
        at.setdefault(h.position, []).append(h)
    emitted = sorted(order)
    merged: list[_Step] = []
    by_node = dict(zip(order, steps))
    for k, ni in enumerate(emitted):
        merged += [_host_step(model, h, buffers) for h in at.pop(k, [])]
        merged.append(by_node[ni])
    for hs in at.values():
        merged += [_host_step(model, h, buffers) for h in hs]
    ready = {int(i) for i in model.inputIndex}
    ready.update(i for i, t in enumerate(model.allTensors) if has_constant(t))
    for st in merged:
        for t in st.ins:
            if t not in ready:
                raise KernelError(st.where, f"reads {tensor_name(model, t)} before it is written")
        ready.update(st.outs)
    return merged


def compile_model(
    model: Any,
    buffers: Buffers | None = None,
    *,
    kernels: Any = None,
    host: Sequence[HostNode] = (),
) -> CompiledModel:
    """Compile ``model`` (with its constant ``buffers`` and the operators that run on the
    ``host`` between its nodes) into a reusable execution plan."""
    return CompiledModel(model, buffers, kernels, host)
