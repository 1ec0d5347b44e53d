"""ONNX control flow on the host, with bodies on NNRt: ``If``, ``Loop`` and ``Scan``.

NNRt v2_1 has no control-flow operator; MindSpore Lite runs such operators itself and hands
NNRt the graphs inside them. Here each branch or body is imported as a model of its own (its
formal inputs, then the outer values it reads, as inputs) through ``load``, so its operators are
lowered onto NNRt v2_1 like any model's (host operators inside it allowed) and its shapes are
handled at run time; the host kernel picks the branch or runs the iterations. The onnx
reference implementation is not used for these: its ``Loop`` ignores an omitted condition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import functools

import numpy as np

from idlgen.errors import IdlgenError

from .host import HostKernel, HostNode

__all__ = ["MAX_ITERATIONS", "control_kernel"]

#: A Loop without a trip count stops after this many iterations (an error, not a hang).
MAX_ITERATIONS = 1_000_000


def _body_program(
    body: Any,
    opsets: Sequence[Any],
    outer: Sequence[tuple[str, Any, Any]],
    formal_types: Sequence[Any],
    load: Callable[[Any], Any],
) -> Any:
    """``body`` (a GraphProto) as a Program whose inputs are its formal inputs then ``outer``,
    imported by ``load`` (the loader's own entry point, passed in so that this module does
    not import the loader that imports it)."""
    from .onnx_lite import TensorProto, helper

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


class _Control:
    """A control-flow host kernel: ``pick(arrays) -> (body index, body feeds)`` steps, run by
    ``step``. Called directly it runs the bodies as the Programs they were imported as; bound to
    the final ``Model`` (``bind``) it runs them as that Model's own subgraphs."""

    def __init__(self, programs: list[Any], names: list[str], host: list[list[HostNode]]) -> None:
        self.programs, self.names, self.host = programs, names, host
        self.run_body: Callable[[int, list[np.ndarray]], list[np.ndarray]] = self._run_program

    def _run_program(self, k: int, feeds: list[np.ndarray]) -> list[np.ndarray]:
        prog = self.programs[k]
        out = prog.run(dict(zip(prog.input_names, feeds)))
        return [np.asarray(out[n]) for n in prog.output_names]

    def bound(
        self, model: Any, buffers: Any
    ) -> Callable[[int, list[np.ndarray]], list[np.ndarray]]:
        from .plan import compile_model

        from .bodies import subgraph_view

        plans: dict[int, Any] = {}
        for k, name in enumerate(self.names):
            view = subgraph_view(model, f"{model.name}_{name}")
            if view is not None:
                plans[k] = compile_model(view, buffers, host=self.host[k])

        def run(k: int, feeds: list[np.ndarray]) -> list[np.ndarray]:
            plan = plans.get(k)
            if plan is None:
                return self._run_program(k, feeds)
            arrays = [
                np.asarray(a) if dt is None else np.asarray(a, dtype=dt)
                for a, dt in zip(feeds, plan.in_dtypes)
            ]
            try:
                return [np.asarray(o) for o in plan(arrays)]
            except (IdlgenError, ValueError):
                # a shape the body's static import does not fit: the body's own Program
                # imports it for these shapes
                return self._run_program(k, feeds)

        return run


def control_kernel(
    node: Any,
    opsets: Sequence[Any],
    ins: Sequence[Any],
    outer: Sequence[tuple[str, Any, Any]],
    builder: Any = None,
    load_body: Callable[[Any], Any] | None = None,
) -> HostKernel | None:
    """The host kernel for an ``If`` or ``Loop`` node (None for other operators). ``ins`` are
    the node's input values (``Val``-like: ``dtype``), ``outer`` (name, dtype, shape) of the
    values its bodies read from the enclosing graph; the kernel takes the node's inputs (None
    where omitted) followed by the outer values. With ``builder``, the bodies become subgraphs
    of the model being built (``ModelBuilder.body``) and the kernel runs them there."""
    from .onnx_lite import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    n_outer = len(outer)
    label = _label(node)
    if load_body is None:
        raise ValueError("control_kernel needs load_body to import the bodies")
    load = load_body
    if node.op_type == "If":
        progs = [
            _body_program(attrs["then_branch"], opsets, outer, [], load),
            _body_program(attrs["else_branch"], opsets, outer, [], load),
        ]
        ctl = _absorb(builder, progs, [f"{label}_then", f"{label}_else"])

        def make_if(ctl: _Control) -> HostKernel:
            def run_if(arrays: list[np.ndarray]) -> list[np.ndarray]:
                cond, values = arrays[0], arrays[len(arrays) - n_outer :]
                branch = 0 if bool(np.asarray(cond).reshape(-1)[0]) else 1
                return ctl.run_body(branch, list(values))

            return run_if

        return _with_bind(make_if, ctl)
    if node.op_type == "Loop":
        body = attrs["body"]
        n_carried = len(node.input) - 2
        carried_types = [getattr(v, "dtype", None) for v in list(ins)[2 : 2 + n_carried]]
        prog = _body_program(body, opsets, outer, [np.int64, np.bool_, *carried_types], load)
        ctl = _absorb(builder, [prog], [f"{label}_body"])

        def make_loop(ctl: _Control) -> HostKernel:
            return functools.partial(_loop, ctl, n_carried, n_outer, len(node.output) - n_carried)

        return _with_bind(make_loop, ctl)
    if node.op_type == "Scan" and "num_scan_inputs" in attrs and len(node.input) >= 1:
        n_in = int(attrs["num_scan_inputs"])
        n_state = len(node.input) - n_in
        types = [getattr(v, "dtype", None) for v in list(ins)[: n_state + n_in]]
        prog = _body_program(attrs["body"], opsets, outer, types, load)
        ctl = _absorb(builder, [prog], [f"{label}_body"])
        n_body_out = len(attrs["body"].output)

        def make_scan(ctl: _Control) -> HostKernel:
            return functools.partial(_scan, ctl, attrs, n_state, n_in, n_outer, n_body_out)

        return _with_bind(make_scan, ctl)
    return None


def _scan(
    ctl: _Control, attrs: dict[str, Any], n_state: int, n_in: int, n_outer: int,
    n_body_out: int, arrays: list[np.ndarray],
) -> list[np.ndarray]:  # fmt: skip
    """ONNX ``Scan`` (opset 9+): slice the scan inputs along their axes (in their directions),
    carry the state values and stack each body scan output along its axis."""
    states = [np.asarray(v) for v in arrays[:n_state]]
    xs = [np.asarray(v) for v in arrays[n_state : n_state + n_in]]
    values = list(arrays[len(arrays) - n_outer :]) if n_outer else []
    in_axes = list(attrs.get("scan_input_axes", [0] * n_in))
    in_dirs = list(attrs.get("scan_input_directions", [0] * n_in))
    xs = [np.moveaxis(x, ax + x.ndim if ax < 0 else ax, 0) for x, ax in zip(xs, in_axes)]
    xs = [x[::-1] if d else x for x, d in zip(xs, in_dirs)]
    steps = xs[0].shape[0] if xs else 0
    scans: list[list[np.ndarray]] = [[] for _ in range(n_body_out - n_state)]
    for t in range(steps):
        res = ctl.run_body(0, [*states, *[x[t] for x in xs], *values])
        states = res[:n_state]
        for k, v in enumerate(res[n_state:]):
            scans[k].append(np.asarray(v))
    out_axes = list(attrs.get("scan_output_axes", [0] * len(scans)))
    out_dirs = list(attrs.get("scan_output_directions", [0] * len(scans)))
    stacked = []
    for k, s in enumerate(scans):
        if not s:
            stacked.append(np.zeros((0,), np.float32))
            continue
        y = np.stack(s[::-1] if out_dirs[k] else s)
        ax = out_axes[k]
        stacked.append(np.moveaxis(y, 0, ax + y.ndim if ax < 0 else ax))
    return [*states, *stacked]


def _loop(
    ctl: _Control, n_carried: int, n_outer: int, n_scan: int, arrays: list[np.ndarray]
) -> list[np.ndarray]:
    """ONNX ``Loop``: iterate while the condition holds and the trip count lasts, carrying
    values and stacking the scan outputs."""
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
        res = ctl.run_body(0, feeds)
        go = bool(res[0].reshape(-1)[0])
        carried = res[1 : 1 + n_carried]
        for k, s in enumerate(res[1 + n_carried :]):
            if len(scans) <= k:
                scans.append([])
            scans[k].append(s)
        i += 1
    stacked = [np.stack(s) if s else np.zeros((0,), np.float32) for s in scans]
    stacked += [np.zeros((0,), np.float32)] * (n_scan - len(stacked))
    return [*carried, *stacked]


def _label(node: Any) -> str:
    raw = node.name or (node.output[0] if node.output else node.op_type)
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in raw)


def _absorb(builder: Any, progs: list[Any], names: list[str]) -> _Control:
    """The bodies as subgraphs of the model ``builder`` makes (those imported without a
    ``model``, whose graph waits for run-time shapes, stay Programs of their own)."""
    host: list[list[HostNode]] = []
    for prog, name in zip(progs, names):
        if builder is not None and prog.model is not None:
            host.append(builder.body(name, prog.model, prog.buffers, prog.host))
        else:
            host.append([])
    return _Control(progs, names, host)


def _with_bind(make: Callable[[_Control], HostKernel], ctl: _Control) -> HostKernel:
    """``make(ctl)`` plus ``.bind(model, buffers)``: the same kernel with its bodies run as the
    final model's subgraphs (see ``plan._host_step``)."""
    fn = make(ctl)

    def bind(model: Any, buffers: Any) -> HostKernel:
        local = _Control(ctl.programs, ctl.names, ctl.host)
        local.run_body = ctl.bound(model, buffers)
        return make(local)

    fn.bind = bind  # type: ignore[attr-defined]
    return fn
