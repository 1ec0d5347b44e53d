"""The runtime's one memory budget: no single array idlgen is about to allocate or write (a
declared or computed tensor shape, a kernel's window or scratch buffer, a folded constant, an
input read from ``.npy``, the outputs of ``idlgen run`` together) may exceed it.

The default is 96 MiB (``DEFAULT_MAX_MEMORY``): the real-model corpus's largest single array
is 71 MiB (im2col matrices over 32 MiB are built in blocks), and with it 800 mutated model files
peak under 200 MB of RSS (``tests/models/test_model_fuzz.py``). The arrays a load or a run
holds at once (step outputs until their last reader, the inputs, folded constants; a view counts
the whole array it views) may together take 1.5 times that (``max_live``, 144 MiB): where the
model declares a step's output dims they are counted before the step allocates them. The real
models hold at most 110 MiB at once, and a process stays near 300 MB. The environment variable
``IDLGEN_MAX_MEMORY`` changes it: a byte count with an optional ``K``/``M``/``G``/``T`` suffix
(powers of 1024), e.g. ``IDLGEN_MAX_MEMORY=2G`` (at least 1 MiB). Sizes are computed with
Python integers from the shape *before* the allocation, so a hostile dimension (``[1e5, 1e5, 100]``) is refused without touching memory.
Exceeding the budget raises :class:`MemoryBudgetError` (an ``IdlgenError``: ``idlgen run`` exits
1).
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from idlgen.errors import IdlgenError

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_MAX_WORK",
    "ENV",
    "WORK_ENV",
    "MemoryBudgetError",
    "Meter",
    "WorkBudgetError",
    "charge",
    "check_bytes",
    "check_shape",
    "heavy_cost",
    "max_memory",
    "max_work",
    "metered",
    "nbytes",
]

ENV = "IDLGEN_MAX_MEMORY"
DEFAULT_MAX_MEMORY = 96 << 20
#: The smallest budget: a lower ``IDLGEN_MAX_MEMORY`` counts as this (1 MiB).
MIN_MAX_MEMORY = 1 << 20

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class MemoryBudgetError(IdlgenError, ValueError):
    """An array would exceed the memory budget (``IDLGEN_MAX_MEMORY``)."""

    def __init__(self, what: str, size: int, limit: int) -> None:
        self.what, self.size, self.limit = what, size, limit
        if size > 0:
            msg = f"{what} needs {_human(size)}, over the memory budget of {_human(limit)}"
        else:  # an allocation no check foresaw failed
            msg = f"{what} ran out of memory"
        super().__init__(f"{msg} (set {ENV} to change the budget)")

    def at(self, where: str) -> MemoryBudgetError:
        """The same error with ``where`` (a node) in front of what it names."""
        return MemoryBudgetError(f"{where}: {self.what}", self.size, self.limit)


def _human(n: int) -> str:
    for unit, k in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n} bytes"


_cache: tuple[str | None, int] = (None, DEFAULT_MAX_MEMORY)


def max_memory() -> int:
    """The budget in bytes (``IDLGEN_MAX_MEMORY``, else the default)."""
    global _cache
    raw = os.environ.get(ENV)
    if raw == _cache[0]:
        return _cache[1]
    value = DEFAULT_MAX_MEMORY
    if raw is not None and raw.strip():
        m = re.fullmatch(r"\s*(\d+)\s*([KMGTB]?)(?:I?B)?\s*", raw.upper())
        if m is None:
            raise IdlgenError(f"{ENV}={raw!r}: expected a byte count such as 512M or 2G")
        value = max(int(m.group(1)) * _UNITS[m.group(2)], MIN_MAX_MEMORY)
    _cache = (raw, value)
    return value


def nbytes(shape: Iterable[Any], itemsize: int) -> int:
    """Bytes of an array of ``shape``, as an exact integer (negative dims count as 0)."""
    return math.prod(max(int(d), 0) for d in shape) * int(itemsize)


def check_bytes(size: int, what: str) -> None:
    """Refuse ``size`` bytes of ``what`` when over the budget."""
    if size <= MIN_MAX_MEMORY:  # always within budget: no environment lookup on hot paths
        return
    limit = max_memory()
    if size > limit:
        raise MemoryBudgetError(what, int(size), limit)


def check_shape(shape: Iterable[Any], itemsize: int, what: str) -> None:
    """Refuse an array of ``shape`` and ``itemsize`` when it would exceed the budget."""
    dims = [int(d) for d in shape]
    size = math.prod(max(d, 0) for d in dims) * int(itemsize)
    if size <= MIN_MAX_MEMORY:
        return
    limit = max_memory()
    if size > limit:
        raise MemoryBudgetError(f"{what} of shape {dims}", size, limit)


# ONNX operators whose result has the broadcast shape of their inputs.
_BROADCASTING = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum",
                           "Where", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
                           "And", "Or", "Xor", "BitShift", "PRelu", "BitwiseAnd", "BitwiseOr",
                           "BitwiseXor"})  # fmt: skip


def check_fold(
    op: str,
    attrs: dict[str, Any],
    consts: list[Any],
    declared: Iterable[Any],
    what: str,
) -> None:
    """Before a constant node (ONNX ``op`` with ``attrs`` and constant inputs ``consts``, None
    where absent) is evaluated at load time: refuse it when its result would exceed the budget.

    The size comes from the operator's own inputs where they define it (ConstantOfShape, Range,
    Expand, Tile, Pad, broadcasting), else from the shapes ``declared`` (inferred) for its
    outputs (with the widest input's itemsize, at least 4); the sizes the inputs define take 8
    bytes per element, an upper bound for every numeric type."""

    def ints(k: int) -> list[int] | None:
        if k >= len(consts) or consts[k] is None:
            return None
        a = np.asarray(consts[k])
        if a.dtype.kind not in "iu" or a.ndim > 1:
            return None
        return [int(v) for v in a.reshape(-1).tolist()]

    def scalar(k: int) -> float | None:
        if k >= len(consts) or consts[k] is None or np.asarray(consts[k]).size != 1:
            return None
        v = float(np.asarray(consts[k]).reshape(-1)[0])
        return v if math.isfinite(v) else None

    sizes: list[int] = []
    present = [np.asarray(c) for c in consts if c is not None]
    # the widest input's itemsize, at least float32's, for results sized from their shape
    item = max([4] + [p.dtype.itemsize for p in present])
    for shape in declared:
        if shape is not None and all(int(d) >= 0 for d in shape):
            sizes.append(nbytes(shape, item))
    if op == "ConstantOfShape" and ints(0) is not None:
        sizes.append(nbytes(ints(0) or [], 8))
    elif op == "Range":
        start, limit, delta = scalar(0), scalar(1), scalar(2)
        if start is not None and limit is not None and delta:
            sizes.append(max(math.ceil((limit - start) / delta), 0) * 8)
        elif start is not None and limit is not None and not delta:
            raise MemoryBudgetError(f"{what}: Range with delta 0", 1 << 62, max_memory())
    elif op == "Expand" and present and ints(1) is not None:
        a, shp = list(present[0].shape), ints(1) or []
        r = max(len(a), len(shp))
        a, shp = [1] * (r - len(a)) + a, [1] * (r - len(shp)) + shp
        sizes.append(nbytes([max(x, y) for x, y in zip(a, shp)], 8))
    elif op == "Tile" and present and ints(1) is not None:
        reps = ints(1) or []
        if len(reps) == present[0].ndim:
            sizes.append(nbytes([d * r for d, r in zip(present[0].shape, reps)], 8))
    elif op == "Pad" and present:
        pads = ints(1) if len(consts) > 1 else None
        pads = pads if pads is not None else [int(p) for p in attrs.get("pads", [])]
        x = present[0]
        if len(pads) == 2 * x.ndim:
            sizes.append(nbytes([d + pads[i] + pads[i + x.ndim] for i, d in
                                 enumerate(x.shape)], 8))  # fmt: skip
    elif op in _BROADCASTING and len(present) > 1:
        # elementwise operators broadcast their inputs: the result is that big
        r = max(p.ndim for p in present)
        dims = [1] * r
        for p in present:
            for i, d in enumerate((1,) * (r - p.ndim) + p.shape):
                dims[i] = max(dims[i], int(d))
        sizes.append(nbytes(dims, 8))
    if sizes:
        check_bytes(max(sizes), f"{what} (folded at load time)")


# ---------------------------------------------------------------------------------------------
# The work budget: time, counted deterministically
#
# Memory per array does not bound time: a 545-byte ONNX file squaring a 2048x2048 matrix twenty
# times, 5,000 Adds over one 64 MiB input, a Loop with a trip count of 10^9 or 2,000 folded
# constants each stay within the memory budget and take seconds to minutes. So each load and
# each run also draws on a work budget, counted in *units* of about one element an elementwise
# NumPy kernel touches (~1 ns on one core here), never in wall-clock time, so a refusal does not
# depend on the machine's load: every step of a plan costs its input and output elements plus a
# fixed overhead; a multiply-add that BLAS does costs 1/16; convolutions, matrix products and
# recurrences are charged before they run (from their input shapes), everything else after
# (each single array is already bounded by the memory budget); a load costs per node and per
# folded element. Control-flow bodies draw on the run that calls them.

WORK_ENV = "IDLGEN_MAX_WORK"
#: Units per load and per run, plus ``WORK_PER_MODEL_BYTE`` for each byte of the model file:
#: about 1.5 s on this machine for a model under 1 MB (the real-model corpus's heaviest run uses
#: a third of its budget), and proportionally more for bigger models, whose weights imply work.
DEFAULT_MAX_WORK = 3_000_000_000
WORK_PER_MODEL_BYTE = 200
#: Fixed costs (units): a plan step (the executor's per-node overhead), a plan call (a
#: control-flow body's iteration, a recurrent time step), a source-model node at load, a node
#: when its plan is compiled.
STEP_COST = 3_000
CALL_COST = 40_000
LOAD_NODE_COST = 350_000
COMPILE_STEP_COST = 200_000
#: A BLAS multiply-add is this many times cheaper than an elementwise element.
BLAS_SPEEDUP = 16


class WorkBudgetError(IdlgenError, ValueError):
    """Loading or running a model would exceed the work budget (``IDLGEN_MAX_WORK``)."""

    def __init__(self, what: str, used: int, limit: int) -> None:
        self.what, self.used, self.limit = what, used, limit
        super().__init__(
            f"{what} brings the work to {_units(used)} units, over the work budget of "
            f"{_units(limit)} (about a second per 10^9 units; set {WORK_ENV} to change it)"
        )

    def at(self, where: str) -> WorkBudgetError:
        return WorkBudgetError(f"{where}: {self.what}", self.used, self.limit)


def _units(n: int) -> str:
    return f"{n / 1e9:.3g}e9" if n >= 10**8 else f"{n:,}"


class Meter:
    """The units one load or run has used, against its ``limit``; and the bytes of the arrays it
    holds at once (``live``, its highest ``peak``), against ``memory`` (:func:`max_live`)."""

    __slots__ = ("used", "limit", "live", "peak", "memory")

    def __init__(self, limit: int) -> None:
        self.used, self.limit = 0, limit
        self.live = self.peak = 0
        self.memory = max_live()

    def over(self, what: str) -> WorkBudgetError:
        return WorkBudgetError(what, self.used, self.limit)

    def over_memory(self, what: str) -> MemoryBudgetError:
        return MemoryBudgetError(f"{what}: the arrays held together", self.peak, self.memory)

    def spend(self, units: int, what: str) -> None:
        """Add ``units`` of work; refuse (``WorkBudgetError``) over the limit."""
        self.used += units
        if self.used > self.limit:
            raise self.over(what)

    def keep(self, nbytes: int, what: str) -> None:
        """Hold ``nbytes`` more; refuse (``MemoryBudgetError``) when what is held passes
        ``memory``."""
        self.live += nbytes
        if self.live > self.peak:
            self.peak = self.live
            if self.peak > self.memory:
                raise self.over_memory(what)


#: The arrays one load or run holds at once may take this many times the per-array budget:
#: with the interpreter, NumPy and a kernel's scratch that keeps a process near 300 MB.
LIVE_FACTOR = 1.5


def max_live() -> int:
    """Bytes of arrays a load or run may hold at once (``LIVE_FACTOR`` x ``max_memory()``)."""
    return int(max_memory() * LIVE_FACTOR)


def held_total(arrays: Iterable[Any]) -> int:
    """Bytes the ndarrays among ``arrays`` keep alive (see :func:`held`)."""
    n = 0
    for a in arrays:
        if type(a) is np.ndarray:
            n += a.nbytes if a.base is None else held(a)
    return n


def held(a: Any) -> int:
    """Bytes ``a`` keeps alive: its own, or for a view the whole array it views."""
    base = a.base
    if base is None:
        return int(a.nbytes)
    while getattr(base, "base", None) is not None:  # numpy views of views
        base = base.base
    # a buffer numpy does not own (bytes of a model file): its size, where it tells
    size = getattr(base, "nbytes", None)
    if size is None:
        try:
            size = len(memoryview(base).cast("B"))
        except TypeError:
            size = a.nbytes
    return int(size)


def hold(arrays: Iterable[Any], what: str) -> None:
    """Count ``arrays`` as held by the load or run in progress (folded constants); refuse
    (``MemoryBudgetError``) when everything held would exceed :func:`max_live`."""
    m = meter()
    if m is not None:
        m.keep(held_total(arrays), what)


_active = threading.local()
_work_cache: tuple[str | None, int | None] = (None, None)


def max_work(model_bytes: int = 0) -> int:
    """The work budget for a model file of ``model_bytes`` (``IDLGEN_MAX_WORK`` fixes it)."""
    global _work_cache
    raw = os.environ.get(WORK_ENV)
    if raw != _work_cache[0]:
        fixed = None
        if raw is not None and raw.strip():
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(e\d+)?\s*", raw.lower())
            if m is None:
                raise IdlgenError(f"{WORK_ENV}={raw!r}: expected a unit count such as 3e9")
            fixed = max(int(float(m.group(1) + (m.group(2) or ""))), 10**6)
        _work_cache = (raw, fixed)
    fixed = _work_cache[1]
    if fixed is not None:
        return fixed
    return DEFAULT_MAX_WORK + WORK_PER_MODEL_BYTE * max(int(model_bytes), 0)


def meter() -> Meter | None:
    """The meter of the load or run in progress on this thread, if any."""
    m: Meter | None = getattr(_active, "meter", None)
    return m


class metered:  # noqa: N801 - used as a function: ``with metered() as m``
    """A load or run: a new meter of ``limit`` units (default ``max_work()``), or, inside one
    already in progress (a control-flow body, a variant imported at run time), that one. (A
    class rather than a generator context manager: it is entered on every run, and this costs
    a third as much.)"""

    __slots__ = ("limit", "own")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.own = False

    def __enter__(self) -> Meter:
        m = meter()
        if m is not None:
            return m
        m = Meter(max_work() if self.limit is None else self.limit)
        _active.meter = m
        self.own = True
        return m

    def __exit__(self, *exc: object) -> None:
        if self.own:
            _active.meter = None


def charge(units: int, what: str) -> None:
    """Add ``units`` to the work in progress; refuse (``WorkBudgetError``) over the budget."""
    m = meter()
    if m is not None:
        m.spend(int(units), what)


def _size(a: Any) -> int:
    return int(getattr(a, "size", 1))


def _dims(a: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in getattr(a, "shape", ()))


def heavy_cost(op: str, inputs: Sequence[Any], attrs: Any = None) -> int:
    """Units a superlinear operator costs beyond its elements, from its input shapes (an upper
    bound where the attributes are not at hand): ``op`` is an NNRt node type name
    (``NODE_TYPE_CONV2D_FUSION``) or an ONNX operator (for folds at load time); 0 for the
    others."""
    if len(inputs) < 2 or inputs[0] is None or inputs[1] is None:
        return 0
    a, b = inputs[0], inputs[1]
    da, db = _dims(a), _dims(b)
    if op in ("NODE_TYPE_MATMUL_FUSION", "MatMul", "MatMulInteger", "Gemm", "BatchMatMul"):
        # every output element takes an inner dimension's multiply-adds: at most the larger
        # operand times the other's larger trailing dim
        if not da or not db:
            return 0
        other = max(db[-2:]) if _size(a) >= _size(b) else max(da[-2:])
        return max(_size(a), _size(b)) * other // BLAS_SPEEDUP
    if op == "NODE_TYPE_FULL_CONNECTION":
        return _size(a) * (db[0] if db else 1) // BLAS_SPEEDUP
    if op in ("NODE_TYPE_CONV2D_FUSION", "NODE_TYPE_CONV2D_TRANSPOSE_FUSION", "Conv",
              "ConvInteger", "ConvTranspose"):  # fmt: skip
        if len(da) < 3 or not db:
            return 0
        # NHWC (NNRt) or NCHW (ONNX): pixels of the input times every weight (stride 1 bound)
        pixels = math.prod(da[1:-1]) if op.startswith("NODE") else math.prod(da[2:])
        pixels *= da[0]
        stride = getattr(attrs, "stride", None) or getattr(attrs, "strides", None)
        if stride and not op.startswith("NODE_TYPE_CONV2D_TRANSPOSE"):
            pixels //= max(math.prod(max(int(s), 1) for s in stride), 1)
        macs = pixels * _size(b)
        depthwise = len(db) == 4 and (db[-1] == 1 if op.startswith("NODE") else db[1] == 1)
        # depthwise runs elementwise (two passes per tap), the rest im2col + BLAS
        if depthwise:
            return macs * 2
        # BLAS's multiply-adds, and the im2col matrix written and read
        return macs // BLAS_SPEEDUP + 3 * (macs // max(db[0], 1))
    if op in ("NODE_TYPE_LSTM", "NODE_TYPE_GRU", "LSTM", "GRU", "RNN"):
        # a Python step per time step, each multiplying by the weights
        steps, batch = (da[0], da[1]) if len(da) > 1 else (1, 1)
        weights = sum(_size(w) for w in inputs[1:3] if w is not None)
        return steps * (2 * CALL_COST + batch * weights // BLAS_SPEEDUP)
    return 0
