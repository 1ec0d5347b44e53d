"""Input shapes of an ONNX model: which dims are open, and the model with dims pinned.

Exporters leave batch, sequence and image dims symbolic (``N``, ``unk__66``, ``batch_size``);
shape subgraphs (``Shape`` -> ``Gather`` -> ``Concat`` -> ``Reshape``) then compute on run-time
values. Pinning the dims of the graph inputs lets ONNX shape inference (with data propagation)
turn those subgraphs into constants the importer folds, so the NNRt ``Model`` gets static
shapes. ``load(..., input_shapes=...)`` pins ahead of time; a ``Program`` pins each new set of
run-time shapes it is called with (see ``Program.run``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from idlgen.errors import ConfigError

__all__ = ["graph_inputs", "open_dims", "pin_input_dims"]


def graph_inputs(model: Any) -> list[tuple[str, np.dtype[Any] | None, list[int]]]:
    """(name, dtype, dims with -1 for an open dim) of each real input (initializers excluded:
    old exporters list every weight as a graph input too)."""
    from .onnx_lite import helper

    inits = {t.name for t in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        try:
            dt: np.dtype[Any] | None = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        except Exception:  # noqa: BLE001 - an unknown element type is reported by the importer
            dt = None
        dims = (
            [int(d.dim_value) if d.HasField("dim_value") else -1 for d in tt.shape.dim]
            if tt.HasField("shape")
            else []
        )
        out.append((vi.name, dt, dims))
    return out


def open_dims(model: Any) -> bool:
    """Some input has a dim the model leaves open."""
    return any(d < 0 for _, _, dims in graph_inputs(model) for d in dims)


def check_shapes(model: Any, shapes: Mapping[str, Sequence[int]]) -> dict[str, list[int]]:
    """``shapes`` checked against the model's inputs: known names, the declared rank, sizes
    non-negative. A fixed dim may be pinned to another size: exporters leave placeholder sizes
    their users rewrite before running (CenterFace's 10x3x32x32)."""
    declared = {n: dims for n, _, dims in graph_inputs(model)}
    out: dict[str, list[int]] = {}
    for name, dims in shapes.items():
        if name not in declared:
            raise ConfigError(
                f"input_shapes names {name!r}, but the model's inputs are "
                f"{', '.join(sorted(declared)) or '(none)'}"
            )
        want = declared[name]
        got = [int(d) for d in dims]
        if want and len(got) != len(want):
            raise ConfigError(
                f"input_shapes[{name!r}] has rank {len(got)}; the model's is {len(want)}"
            )
        for k, (g, w) in enumerate(zip(got, want or got)):
            if g < 0:
                raise ConfigError(f"input_shapes[{name!r}][{k}] is {g}: dims are sizes (0 or more)")
        out[name] = got
    return out


def pin_input_dims(model: Any, shapes: Mapping[str, Sequence[int]]) -> Any:
    """A copy of ``model`` whose graph inputs have the given dims and whose other declared
    shapes (outputs, value_info) are left to shape inference, so none contradicts the pins."""
    from . import onnx_lite as onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        dims = shapes.get(vi.name)
        if dims is None:
            continue
        tt = vi.type.tensor_type
        tt.shape.Clear()
        for v in dims:
            tt.shape.dim.add().dim_value = int(v)
    for o in m.graph.output:
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    return m
