"""The runtime's one memory budget: no single array idlgen is about to allocate or write (a
declared or computed tensor shape, a kernel's window or scratch buffer, a folded constant, an
input read from ``.npy``, the outputs of ``idlgen run`` together) may exceed it.

The default is 128 MiB (``DEFAULT_MAX_MEMORY``): the real-model corpus's largest single array
is 71 MiB (im2col matrices over 32 MiB are built in blocks), and with it 800 mutated model files
peak under 200 MB of RSS (``tests/models/test_model_fuzz.py``); the environment variable ``IDLGEN_MAX_MEMORY``
changes it: a byte count with an optional ``K``/``M``/``G``/``T`` suffix (powers of 1024), e.g.
``IDLGEN_MAX_MEMORY=2G`` (at least 1 MiB). Sizes are computed with Python integers from the shape *before* the
allocation, so a hostile dimension (``[1e5, 1e5, 100]``) is refused without touching memory.
Exceeding the budget raises :class:`MemoryBudgetError` (an ``IdlgenError``: ``idlgen run`` exits
1).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from typing import Any

from idlgen.errors import IdlgenError

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "ENV",
    "MemoryBudgetError",
    "check_bytes",
    "check_shape",
    "max_memory",
    "nbytes",
]

ENV = "IDLGEN_MAX_MEMORY"
DEFAULT_MAX_MEMORY = 128 << 20
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
    import numpy as np

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
