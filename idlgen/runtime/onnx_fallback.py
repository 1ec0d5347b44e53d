"""Host kernels for ONNX operators with no hand-written NumPy kernel: the operator's own
definition, run by the ``onnx`` package's reference implementation of that one operator.

The importer lowers every operator it can onto NNRt v2_1 and gives a named host kernel to what
NNRt cannot run (``host_onnx`` holds the hand-written ones). What is left (rare operators,
data-dependent shapes, ``ai.onnx.ml`` models, control flow whose bodies need outer values) runs
here, exact by construction and slow: ``Program.coverage()`` names every such operator. The
node is checked to be runnable when the model is loaded, never first at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from idlgen.errors import IdlgenError

from .budget import charge
from .errors import KernelError
from .host import HostKernel

#: Work units (see :mod:`.budget`) a reference-evaluator call costs up front, and per element
#: of its inputs: the reference is NumPy where it can be, Python loops elsewhere.
REFERENCE_CALL_COST = 400_000
REFERENCE_ELEMENT_COST = 100

__all__ = ["outer_names", "reference_kernel", "zipmap_kernel"]


def outer_names(node: Any) -> list[str]:
    """Values a node's subgraph attributes (If/Loop/Scan bodies) read from the enclosing graph."""
    from .onnx_lite import AttributeProto

    found: list[str] = []

    def visit(g: Any, bound: set[str]) -> None:
        bound = bound | {i.name for i in g.input} | {t.name for t in g.initializer}
        for n in g.node:
            for i in n.input:
                if i and i not in bound and i not in found:
                    found.append(i)
            for at in n.attribute:
                if at.type == AttributeProto.GRAPH:
                    visit(at.g, bound)
                elif at.type == AttributeProto.GRAPHS:
                    for sg in at.graphs:
                        visit(sg, bound)
            bound = bound | set(n.output)
        for o in g.output:
            if o.name not in bound and o.name not in found:
                found.append(o.name)

    for at in node.attribute:
        if at.type == AttributeProto.GRAPH:
            visit(at.g, set())
        elif at.type == AttributeProto.GRAPHS:
            for sg in at.graphs:
                visit(sg, set())
    return [n for n in found if n not in node.input]


def zipmap_kernel(node: Any) -> HostKernel:
    """``ai.onnx.ml.ZipMap``: each row of scores as a ``{label: score}`` map. A sequence of maps
    is not a tensor: the output is a 1-D object array of dicts (the onnx reference has no
    ZipMap)."""
    from .onnx_lite import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    labels: list[Any] = list(attrs.get("classlabels_int64s") or [])
    labels = labels or [
        s.decode() if isinstance(s, bytes) else s for s in attrs.get("classlabels_strings") or []
    ]

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        x = np.asarray(arrays[0])
        rows = x.reshape(1, -1) if x.ndim == 1 else x
        if rows.shape[-1] != len(labels):
            raise ValueError(f"ZipMap: {rows.shape[-1]} scores per row, {len(labels)} labels")
        out = np.empty(len(rows), dtype=object)
        for k, row in enumerate(rows):
            out[k] = {lab: float(v) for lab, v in zip(labels, row.tolist())}
        return [out]

    return fn


def reference_kernel(node: Any, opsets: Sequence[Any], extra: Sequence[str]) -> HostKernel:
    """``fn(arrays)`` computing ``node`` (its inputs, then the outer values ``extra``).

    The evaluator (and with it the ``onnx`` package, a second of a cold load) is built on the
    first call. Whether the reference implements the operator is still decided now: from the
    package's files when they say so, else by building the evaluator at once, which raises
    ``NotImplementedError`` / ``ValueError`` for an operator it lacks."""
    if (node.domain, node.op_type) == ("ai.onnx.ml", "ZipMap"):
        return zipmap_kernel(node)
    names = [n for n in node.input if n] + list(extra)
    outs = [n for n in node.output if n]
    built: list[Any] = []

    def evaluator() -> Any:
        if not built:
            from onnx import TensorProto, helper
            from onnx.reference import ReferenceEvaluator

            g = helper.make_graph(
                [node],
                "host",
                [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in names],
                [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outs],
            )
            built.append(ReferenceEvaluator(helper.make_model(g, opset_imports=list(opsets))))
        return built[0]

    if not _reference_has(node):
        evaluator()  # raises now for an operator the reference lacks

    what = f"{node.op_type} on the reference evaluator"

    def fn(arrays: list[np.ndarray]) -> list[np.ndarray]:
        feeds = {n: a for n, a in zip(names, [a for a in arrays if a is not None])}
        # its cost is the reference's (some loop in Python): charged up front, generously
        charge(REFERENCE_CALL_COST + REFERENCE_ELEMENT_COST * sum(a.size for a in feeds.values()),
               what)  # fmt: skip
        try:
            got = evaluator().run(outs, feeds)
        except (IdlgenError, MemoryError):
            raise
        except Exception as e:  # noqa: BLE001 - the reference's own checks, on model data
            # (an attribute the operator requires but the model left out, a shape it rejects)
            raise KernelError(node.op_type, f"{type(e).__name__}: {e}") from None
        return [np.asarray(x) for x in got]

    return fn


def _reference_has(node: Any) -> bool:
    """The onnx package ships a reference implementation file for the node's operator
    (``onnx/reference/ops/op_<snake_name>.py``, ``aionnxml/`` for ``ai.onnx.ml``); False when
    unsure, so the caller checks for real."""
    import importlib.util
    import os
    import re

    spec = importlib.util.find_spec("onnx")
    if spec is None or spec.origin is None:
        return False
    sub = {"": "", "ai.onnx": "", "ai.onnx.ml": "aionnxml"}.get(node.domain)
    if sub is None:
        return False
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", node.op_type).lower()
    path = os.path.join(os.path.dirname(spec.origin), "reference", "ops", sub, f"op_{snake}.py")
    return os.path.isfile(path)
