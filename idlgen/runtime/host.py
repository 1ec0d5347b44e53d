"""Host operators: what an imported model needs that NNRt v2_1 cannot express runs on the CPU.

On a device, MindSpore Lite hands NNRt the subgraphs NNRt supports and runs every other
operator with its own CPU kernels. A ``Program`` does the same: its ``Model`` holds every NNRt
node, and a *host node* is a NumPy function between them that reads and writes tensors of the
same ``Model.allTensors`` table. ``ModelBuilder.build`` records the partition as NNRt would see
it: ``Model.subGraph[0]`` is the whole graph (every NNRt node, in order, as before), and when a
model has host nodes, ``subGraph[1:]`` are the NNRt segments between them (``<name>_nnrt<k>``)
followed by any control-flow bodies (``<name>_<node>_<branch>``), each with the tensors it
reads and writes. A model with host nodes is run by its ``Program`` (``compile_model(...,
host=...)``), never by ``nnrt.execute`` alone.

The importers emit host nodes with ``ModelBuilder.host(op, fn, inputs, outputs=[(name, dtype,
dims)], name=..., why=...)``:

- ``fn(list[np.ndarray]) -> list[np.ndarray]`` is the bound kernel (attributes closed over).
  Kernels live by source format: ``host_onnx`` (ONNX operators without an NNRt counterpart),
  ``host_tflite`` (TFLite ones), and the control flow here (:func:`if_kernel`,
  :func:`loop_kernel`), whose branches and bodies are themselves compiled NNRt subgraphs.
- ``why`` is the true reason NNRt does not run it: ``no_nnrt_operator(op)`` when NNRt v2_1 has
  no such operator, ``not_imported(op, detail)`` when it has one that idlgen does not map onto
  yet. With ``load(..., nnrt_only=True)`` the builder refuses the first host node with that
  reason (``UnsupportedModelError``) instead of recording it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "HostKernel",
    "HostNode",
    "coverage",
    "host_reason",
    "no_nnrt_operator",
    "not_imported",
]

HostKernel = Callable[[list[np.ndarray]], list[np.ndarray]]


@dataclass(frozen=True)
class HostNode:
    """One operator that runs on the host.

    ``position`` is the number of NNRt nodes emitted before it: it runs after them and before
    the next one. ``inputs``/``outputs`` index ``Model.allTensors`` (an absent optional input is
    -1 and reaches ``fn`` as ``None``)."""

    op: str
    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    fn: HostKernel
    position: int
    why: str = ""


def no_nnrt_operator(op: str) -> str:
    return f"NNRt v2_1 has no operator for {op}"


def not_imported(op: str, detail: str = "") -> str:
    return f"idlgen does not import {op} onto NNRt yet" + (f" ({detail})" if detail else "")


def coverage(n_nnrt_nodes: int, host: Sequence[HostNode]) -> dict[str, Any]:
    """``Program.coverage()``: how much of the model NNRt runs and what the host runs."""
    ops = Counter(h.op for h in host)
    return {
        "nnrt_nodes": n_nnrt_nodes,
        "host_nodes": len(host),
        "host_ops": dict(sorted(ops.items())),
    }


def segments(n_nodes: int, host: Sequence[HostNode]) -> list[tuple[int, int]]:
    """The NNRt node ranges ``[start, stop)`` between host nodes (empty ranges dropped)."""
    cuts = sorted({0, n_nodes, *(min(max(h.position, 0), n_nodes) for h in host)})
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def host_reason(op: str) -> str:
    """Why an ONNX operator without an importer handler runs on the host (the op audit's
    status, :mod:`.onnx_ops`: "no operator" only when NNRt v2_1 cannot express it)."""
    from .onnx_ops import nnrt_has_no_operator

    if nnrt_has_no_operator(op):
        return no_nnrt_operator(op)
    return not_imported(op)
