"""``Program``: an imported model (ONNX or TFLite) on an NNRt v2_1 ``Model``.

:func:`idlgen.runtime.loader.load` picks the importer; the importers lower the source graph onto NNRt operators with ``ModelBuilder``; a ``Program``
keeps the generated ``Model``, its constant buffers and the source model's input/output names,
and runs it with the NumPy executor. Only numpy, the committed generated packages and (for
``.onnx``) the ``onnx`` package are imported: never the compiler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from idlgen.errors import IdlgenError

__all__ = ["DEFAULT_PACKAGE", "Program", "UnsupportedModelError", "target_package"]

DEFAULT_PACKAGE = "idlgen.prebuilt.ohos.hdi.nnrt.v2_1"  # .packages.NNRT_V2_1


class UnsupportedModelError(IdlgenError):
    """The model uses an operator (or an attribute value) NNRt cannot express.

    ``op`` is the source operator type, ``node`` the node's name (or index)."""

    def __init__(self, op: str, node: str, reason: str = "") -> None:
        self.op, self.node, self.reason = op, node, reason
        why = f": {reason}" if reason else ": no NNRt v2_1 operator expresses it"
        super().__init__(f"operator {op} (node {node!r}){why}")


@dataclass
class Program:
    """An imported model: ``model`` is the generated NNRt ``Model``, ``buffers`` its constants."""

    model: Any
    buffers: dict[int, bytes]
    input_names: list[str]
    output_names: list[str]
    source: str = ""
    #: Source-model dtypes of the inputs (``run`` casts lists and same-kind arrays to them).
    input_dtypes: list[np.dtype[Any]] = field(default_factory=list)
    #: Source-model shapes of the inputs (-1 = any); what ``idlgen run`` fills randomly.
    input_shapes: list[list[int]] = field(default_factory=list)

    _plan: Any = field(default=None, repr=False, compare=False)

    def run(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Execute with the source model's names, layouts and dtypes.

        The first call compiles an execution plan from ``model`` and ``buffers``; later calls
        reuse it (after changing ``model`` in place, call ``recompile()``)."""

        missing = [n for n in self.input_names if n not in inputs]
        if missing:
            raise ValueError(f"missing inputs: {', '.join(missing)}")
        extra = sorted(set(inputs) - set(self.input_names))
        if extra:
            raise ValueError(f"unknown inputs: {', '.join(extra)}")
        if self._plan is None:
            self.recompile()
        arrays = []
        for name, dt in zip(self.input_names, self._plan.in_dtypes):
            given = inputs[name]
            if dt is None:
                arrays.append(np.asarray(given))
                continue
            # float64 -> float32 is the usual NumPy default and fine; float -> int8 would
            # silently truncate, so an array of another kind is an error (as in ``execute``)
            if isinstance(given, np.ndarray) and not np.can_cast(given.dtype, dt, "same_kind"):
                raise ValueError(f"input {name}: expected {np.dtype(dt)}, got {given.dtype}")
            arrays.append(np.ascontiguousarray(given, dtype=dt))
        outs = self._plan(arrays)
        return dict(zip(self.output_names, outs))

    def recompile(self) -> None:
        """Rebuild the execution plan from the current ``model`` and ``buffers``."""
        from .plan import compile_model

        self._plan = compile_model(self.model, self.buffers)


def target_package(package: Any) -> Any:
    """The generated NNRt package models are lowered onto (see :mod:`.packages`)."""
    from .packages import nnrt_package

    return nnrt_package(package)
