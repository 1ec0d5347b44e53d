"""Control-flow bodies as subgraphs of the same NNRt ``Model``.

The importers run control flow (ONNX ``If``/``Loop``, TFLite ``IF``/``WHILE``/``CALL_ONCE``, ...)
on the host and import its branches and bodies onto NNRt; ``ModelBuilder.body`` absorbs each as
a subgraph of the model being built. A host kernel over bodies is made ``bindable``: when a
plan is compiled, ``plan._host_step`` binds it to the final ``Model``, and each body then runs
as that model's subgraph (:func:`subgraph_view`), compiled once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from idlgen.errors import IdlgenError

from .host import HostKernel, HostNode
from .plan import compile_model

__all__ = ["Body", "SubgraphBody", "bindable", "subgraph_view"]

Body = Callable[[list[np.ndarray]], list[np.ndarray]]


def subgraph_view(model: Any, name: str) -> Any:
    """``model`` seen as its subgraph ``name`` (inputs, outputs and run order from it; every
    subgraph still there for nested bodies), or None when the model has no such subgraph."""
    subs = list(model.subGraph)
    sub = next((s for s in subs if s.name == name), None)
    if sub is None:
        return None
    return type(model)(
        name=sub.name,
        inputIndex=list(sub.inputIndices),
        outputIndex=list(sub.outputIndices),
        nodes=model.nodes,
        allTensors=model.allTensors,
        subGraph=[sub, *[s for s in subs if s is not sub]],
    )


class SubgraphBody:
    """A branch or body of host control flow: ``program`` as imported from the source model,
    absorbed (``ModelBuilder.body``) as subgraph ``<model>_<label>`` with ``host`` its host
    nodes there. Called directly it runs ``program``; ``bind(model, buffers)`` gives the same
    body run as that subgraph of the final ``Model`` (falling back to ``program`` for input
    shapes the subgraph's static import does not fit)."""

    def __init__(self, program: Any, label: str | None, host: Sequence[HostNode] = ()) -> None:
        self.program, self.label, self.host = program, label, list(host)

    def __call__(self, xs: list[np.ndarray]) -> list[np.ndarray]:
        prog = self.program
        if prog._plan is None:
            prog.recompile()
        arrays = [
            np.asarray(x) if dt is None else np.asarray(x, dtype=dt, order="C")
            for x, dt in zip(xs, prog._plan.in_dtypes)
        ]
        return list(prog._plan(arrays))

    def bind(self, model: Any, buffers: Any) -> Body:
        view = subgraph_view(model, f"{model.name}_{self.label}") if self.label else None
        if view is None:
            return self
        plan = compile_model(view, buffers, host=self.host)

        def run(xs: list[np.ndarray]) -> list[np.ndarray]:
            arrays = [
                np.asarray(x) if dt is None else np.asarray(x, dtype=dt, order="C")
                for x, dt in zip(xs, plan.in_dtypes)
            ]
            try:
                return [np.asarray(o) for o in plan(arrays)]
            except (IdlgenError, ValueError):
                return self(xs)

        return run


def bindable(make: Callable[..., HostKernel], *args: Any) -> HostKernel:
    """``make(*args)`` (a control-flow kernel over bodies) with ``bind(model, buffers)``: the
    same kernel over the bodies bound to the final Model (see ``plan._host_step``). An
    argument may be a body, a list of bodies or anything else (passed as it is)."""

    def bound(a: Any, model: Any, buffers: Any) -> Any:
        if isinstance(a, SubgraphBody):
            return a.bind(model, buffers)
        if isinstance(a, (list, tuple)) and any(isinstance(b, SubgraphBody) for b in a):
            return type(a)(bound(b, model, buffers) for b in a)
        return a

    fn = make(*args)

    def bind(model: Any, buffers: Any) -> HostKernel:
        return make(*(bound(a, model, buffers) for a in args))

    fn.bind = bind  # type: ignore[attr-defined]
    return fn
