"""``Program``: an imported model (ONNX or TFLite) on an NNRt v2_1 ``Model``.

:func:`idlgen.runtime.loader.load` picks the importer; the importers lower the source graph onto NNRt operators with ``ModelBuilder``; a ``Program``
keeps the generated ``Model``, its constant buffers and the source model's input/output names,
and runs it with the NumPy executor. Only numpy, the committed generated packages and (for
``.onnx``) the ``onnx`` package are imported: never the compiler.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from idlgen.errors import IdlgenError

from .budget import WorkBudgetError, hold, max_work, meter, metered
from .host import HostNode

__all__ = ["Program", "UnsupportedModelError", "target_package"]


class UnsupportedModelError(IdlgenError):
    """The model uses an operator (or an attribute value) NNRt cannot express.

    ``op`` is the source operator type, ``node`` the node's name (or index)."""

    def __init__(self, op: str, node: str, reason: str = "") -> None:
        self.op, self.node, self.reason = op, node, reason
        why = f": {reason}" if reason else f": idlgen does not import {op} onto NNRt yet"
        super().__init__(f"operator {op} (node {node!r}){why}")


@dataclass
class Program:
    """An imported model: ``model`` is the generated NNRt ``Model``, ``buffers`` its constants,
    ``host`` the operators that run on the host between its nodes (see :mod:`.host`)."""

    model: Any
    buffers: dict[int, bytes]
    input_names: list[str]
    output_names: list[str]
    source: str = ""
    #: Source-model dtypes of the inputs (``run`` casts lists and same-kind arrays to them).
    input_dtypes: list[np.dtype[Any]] = field(default_factory=list)
    #: Source-model shapes of the inputs (-1 = any); what ``idlgen run`` fills randomly.
    input_shapes: list[list[int]] = field(default_factory=list)
    #: Operators outside NNRt v2_1, run on the host between the ``model``'s nodes.
    host: list[HostNode] = field(default_factory=list)

    _plan: Any = field(default=None, repr=False, compare=False)
    #: ``shapes -> Program`` importing the source model for concrete input shapes, for a
    #: model whose graph depends on dims the caller left open (see :meth:`run`).
    _specialize: Callable[[tuple[tuple[int, ...], ...]], Program] | None = field(
        default=None, repr=False, compare=False
    )
    _variants: OrderedDict[tuple[tuple[int, ...], ...], Program | None] = field(
        default_factory=OrderedDict, repr=False, compare=False
    )
    #: The variant the last call ran (None: this Program's own ``model``).
    _last: Program | None = field(default=None, repr=False, compare=False)
    #: ``model`` was imported with the open dims open (it may serve any shape); False when it
    #: is the import for one representative shape, which serves only that shape.
    _generic: bool = field(default=True, repr=False, compare=False)
    #: Bytes of the model file: what its work budget grows with (see :mod:`.budget`).
    _model_bytes: int = field(default=0, repr=False, compare=False)

    def coverage(self) -> dict[str, Any]:
        """``{"nnrt_nodes": n, "host_nodes": m, "host_ops": {op: count}}``: what NNRt runs
        (control-flow bodies included) and what the host runs, for ``model`` or, after a call
        with input shapes that needed their own import, for the variant that call ran."""
        from .host import coverage

        target = self._last if self._last is not None else self
        model = target.model
        return coverage(len(model.nodes) if model is not None else 0, target.host)

    def run(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Execute with the source model's names, layouts and dtypes.

        The first call compiles an execution plan from ``model`` and ``buffers``; later calls
        reuse it (after changing ``model`` in place, call ``recompile()``). A model whose graph
        depends on input dims left open at load time (shape arithmetic, computed ``Reshape``
        targets, windows over a dynamic axis) is imported again for each new set of concrete
        input shapes, so its shape operators see the run-time values; the last few such
        variants are kept.

        A run draws on the work budget (:mod:`.budget`, ``IDLGEN_MAX_WORK``): one that would
        exceed it stops with ``WorkBudgetError``."""
        outer = meter() is not None
        with metered(max_work(self._model_bytes)):
            if not outer:  # the caller's arrays, held while the run holds its own
                hold([a for a in inputs.values() if isinstance(a, np.ndarray)], "the inputs")
            return self._run(inputs)

    def _run(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        missing = [n for n in self.input_names if n not in inputs]
        if missing:
            raise ValueError(f"missing inputs: {', '.join(missing)}")
        extra = sorted(set(inputs) - set(self.input_names))
        if extra:
            raise ValueError(f"unknown inputs: {', '.join(extra)}")
        if self._specialize is not None:
            key = tuple(tuple(int(d) for d in np.shape(inputs[n])) for n in self.input_names)
            if key in self._variants:
                self._variants.move_to_end(key)
                known = self._variants[key]
                self._last = known
                return known.run(inputs) if known is not None else self._run_here(inputs)
            if self.model is not None and self._generic:
                try:
                    out = self._run_here(inputs)
                    self._last = None
                    return out
                except WorkBudgetError:
                    raise  # spent: importing again would only spend more
                except (IdlgenError, ValueError):
                    pass  # this shape needs the model imported for it
            variant = self._specialize(key)
            if self.model is None:
                # the first call of a deferred Program: it becomes that variant
                self.model, self.buffers, self.host = variant.model, variant.buffers, variant.host
                self._plan, self._last = variant._plan, None
                self._variants[key] = None
                return self._run_here(inputs)
            self._variants[key] = self._last = variant
            while len(self._variants) > _VARIANTS:
                self._variants.popitem(last=False)
            return variant.run(inputs)
        return self._run_here(inputs)

    def _run_here(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
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
            arrays.append(np.asarray(given, dtype=dt, order="C"))  # 0-d stays 0-d
        outs = self._plan(arrays)
        return dict(zip(self.output_names, outs))

    def recompile(self) -> None:
        """Rebuild the execution plan from the current ``model``, ``buffers`` and ``host``."""
        from .plan import compile_model

        self._plan = compile_model(self.model, self.buffers, host=self.host)


#: Input-shape variants a dynamic Program keeps (each holds its own constants).
_VARIANTS = 4


def target_package(package: Any) -> Any:
    """The generated NNRt package models are lowered onto (see :mod:`.packages`)."""
    from .packages import nnrt_package

    return nnrt_package(package)
