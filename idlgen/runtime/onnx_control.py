"""ONNX control flow on the host, with bodies on NNRt: ``If`` and ``Loop``.

NNRt v2_1 has no control-flow operator; MindSpore Lite runs such operators itself and hands
NNRt the graphs inside them. Here each branch or body is imported as a model of its own (its
formal inputs, then the outer values it reads, as inputs) through ``load``, so its operators are
lowered onto NNRt v2_1 like any model's (host operators inside it allowed) and its shapes are
handled at run time; the host kernel picks the branch or runs the iterations. The onnx
reference implementation is not used for these: its ``Loop`` ignores an omitted condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .host import HostKernel

__all__ = ["MAX_ITERATIONS", "control_kernel"]

#: A Loop without a trip count stops after this many iterations (an error, not a hang).
MAX_ITERATIONS = 1_000_000


def _body_program(
    body: Any,
    opsets: Sequence[Any],
    outer: Sequence[tuple[str, Any, Any]],
    formal_types: Sequence[Any],
) -> Any:
    """``body`` (a GraphProto) as a Program whose inputs are its formal inputs then ``outer``."""
    from onnx import TensorProto, helper

    from .loader import load

    g = helper.make_graph(list(body.node), body.name or "body", [], list(body.output),
                          list(body.initializer))  # fmt: skip
    for vi, t in zip(body.input, formal_types):
        v = g.input.add()
        v.CopyFrom(vi)
        tt = v.type.tensor_type
        if not tt.elem_type and t is not None:
            tt.elem_type = helper.np_dtype_to_tensor_dtype(np.dtype(t))
    for name, dt, shape in outer:
        elem = (
            helper.np_dtype_to_tensor_dtype(np.dtype(dt)) if dt is not None else TensorProto.FLOAT
        )
        dims = None if shape is None else [d if d >= 0 else None for d in shape]
        g.input.append(helper.make_tensor_value_info(name, elem, dims))
    for o in g.output:  # the body's outputs are whatever its nodes make
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    m = helper.make_model(g, opset_imports=list(opsets))
    m.ir_version = max(m.ir_version, 8)
    return load(m)


def control_kernel(
    node: Any, opsets: Sequence[Any], ins: Sequence[Any], outer: Sequence[tuple[str, Any, Any]]
) -> HostKernel | None:
    """The host kernel for an ``If`` or ``Loop`` node (None for other operators). ``ins`` are
    the node's input values (``Val``-like: ``dtype``), ``outer`` (name, dtype, shape) of the
    values its bodies read from the enclosing graph; the kernel takes the node's inputs (None
    where omitted) followed by the outer values."""
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    n_outer = len(outer)
    if node.op_type == "If":
        then = _body_program(attrs["then_branch"], opsets, outer, [])
        other = _body_program(attrs["else_branch"], opsets, outer, [])

        def run_if(arrays: list[np.ndarray]) -> list[np.ndarray]:
            cond, values = arrays[0], arrays[len(arrays) - n_outer :]
            branch = then if bool(np.asarray(cond).reshape(-1)[0]) else other
            out = branch.run(dict(zip(branch.input_names, values)))
            return [np.asarray(out[n]) for n in branch.output_names]

        return run_if
    if node.op_type == "Loop":
        body = attrs["body"]
        n_carried = len(node.input) - 2
        carried_types = [getattr(v, "dtype", None) for v in list(ins)[2 : 2 + n_carried]]
        prog = _body_program(body, opsets, outer, [np.int64, np.bool_, *carried_types])
        names = prog.input_names

        def run_loop(arrays: list[np.ndarray]) -> list[np.ndarray]:
            trip, cond = arrays[0], arrays[1]
            carried = list(arrays[2 : 2 + n_carried])
            values = arrays[len(arrays) - n_outer :] if n_outer else []
            limit = int(np.asarray(trip).reshape(-1)[0]) if trip is not None else None
            go = bool(np.asarray(cond).reshape(-1)[0]) if cond is not None else True
            scans: list[list[np.ndarray]] = []
            i = 0
            while go and (limit is None or i < limit):
                if limit is None and i >= MAX_ITERATIONS:
                    raise ValueError(f"Loop ran {MAX_ITERATIONS} iterations without stopping")
                feeds = [np.array(i, np.int64), np.array(go, np.bool_), *carried, *values]
                out = prog.run(dict(zip(names, feeds)))
                res = [np.asarray(out[n]) for n in prog.output_names]
                go = bool(res[0].reshape(-1)[0])
                carried = res[1 : 1 + n_carried]
                for k, s in enumerate(res[1 + n_carried :]):
                    if len(scans) <= k:
                        scans.append([])
                    scans[k].append(s)
                i += 1
            n_scan = len(node.output) - n_carried
            stacked = [np.stack(s) if s else np.zeros((0,), np.float32) for s in scans]
            stacked += [np.zeros((0,), np.float32)] * (n_scan - len(stacked))
            return [*carried, *stacked]

        return run_loop
    return None
