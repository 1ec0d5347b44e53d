"""The checks an NNRt ``Model`` and its call inputs pass before any kernel runs.

``nnrt.execute`` and the compiled ``plan`` both run a model; every check that does not depend on
a kernel's result lives here, once, so a malformed model fails the same way on either path:
first the structure (:func:`check_model`, :func:`resolve_node`), then constants, then the call's
arrays (:func:`check_inputs`), then each node's output count (:func:`check_output_count`).
"""

from __future__ import annotations

import heapq

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from .errors import KernelError

__all__ = [
    "check_inputs",
    "check_model",
    "check_output_count",
    "has_constant",
    "node_order",
    "node_where",
    "resolve_node",
    "tensor_name",
]


def tensor_name(model: Any, i: int) -> str:
    t = model.allTensors[i]
    return f"tensor {i} {t.name!r}" if getattr(t, "name", "") else f"tensor {i}"


def node_where(model: Any, ni: int) -> str:
    """How errors name node ``ni``: index, name and node type."""
    node = model.nodes[ni]
    nt = node.nodeType
    return f"node {ni} {node.name!r} ({getattr(nt, 'name', int(nt))})"


def has_constant(tensor: Any) -> bool:
    """The tensor carries constant data (``load_constant`` returns an array for it)."""
    return tensor.data is not None and int(tensor.data.dataSize) > 0


def node_order(model: Any) -> list[int]:
    """Node indices to run: the first subgraph's order (all nodes when there is none), checked to
    be a valid topological order; an out-of-order list is re-sorted, a cycle is an error.
    """
    n_nodes = len(model.nodes)
    n_tensors = len(model.allTensors)
    order = (
        [int(i) for i in model.subGraph[0].nodeIndices] if model.subGraph else list(range(n_nodes))
    )
    for i in order:
        if not 0 <= i < n_nodes:
            raise KernelError(
                "execute", f"subgraph names node {i}, but the model has {n_nodes} nodes"
            )
    if len(set(order)) != len(order):
        raise KernelError("execute", "subgraph lists a node twice")
    producer: dict[int, int] = {}
    for i in order:
        node = model.nodes[i]
        for t in list(node.inputIndex) + list(node.outputIndex):
            if not 0 <= int(t) < n_tensors:
                raise KernelError(
                    "execute",
                    f"node {i} {node.name!r} names tensor {int(t)} of {n_tensors}",
                )
        for t in node.outputIndex:
            if int(t) in producer:
                raise KernelError(
                    "execute",
                    f"tensor {int(t)} is produced by nodes {producer[int(t)]} and {i}",
                )
            producer[int(t)] = i
    deps = {
        i: {producer[int(t)] for t in model.nodes[i].inputIndex if int(t) in producer}
        for i in order
    }
    # Kahn's algorithm, stable with respect to the given order: the ready node earliest in
    # it goes first (a heap of positions keeps a 30,000-node chain linear-logarithmic).
    pos = {i: k for k, i in enumerate(order)}
    users: dict[int, list[int]] = {i: [] for i in order}
    missing = {}
    for i in order:
        for d in deps[i]:
            users[d].append(i)
        missing[i] = len(deps[i])
    heap = [pos[i] for i in order if missing[i] == 0]
    heapq.heapify(heap)
    result: list[int] = []
    while heap:
        first = order[heapq.heappop(heap)]
        result.append(first)
        for u in users[first]:
            missing[u] -= 1
            if missing[u] == 0:
                heapq.heappush(heap, pos[u])
    if len(result) < len(order):
        placed = set(result)
        names = ", ".join(f"{i} {model.nodes[i].name!r}" for i in order if i not in placed)
        raise KernelError("execute", f"cycle among nodes {names}")
    return result


def check_model(model: Any, produced: Collection[int] = ()) -> list[int]:
    """The model's node order, after checking every index it holds: model inputs and outputs
    name tensors, nodes name tensors (see :func:`node_order`), and every value a node reads or
    the model returns is a model input, a constant, some node's output or one of ``produced``
    (the tensors host operators write, see :mod:`.host`)."""
    n = len(model.allTensors)
    for kind, idx in (("input", model.inputIndex), ("output", model.outputIndex)):
        for k, ti in enumerate(int(i) for i in idx):
            if not 0 <= ti < n:
                raise KernelError("execute", f"model {kind} {k} names tensor {ti} of {n}")
    order = node_order(model)
    known = {int(i) for i in model.inputIndex}
    known.update(int(i) for i in produced)
    known.update(i for i, t in enumerate(model.allTensors) if has_constant(t))
    for ni in order:
        known.update(int(t) for t in model.nodes[ni].outputIndex)
    for ni in order:
        for t in (int(t) for t in model.nodes[ni].inputIndex):
            if t not in known:
                raise KernelError(
                    node_where(model, ni),
                    f"input {tensor_name(model, t)} has no value "
                    "(not an input, constant or output)",
                )
    for k, ti in enumerate(int(i) for i in model.outputIndex):
        if ti not in known:
            raise KernelError(
                "execute", f"model output {k} ({tensor_name(model, ti)}) is never computed"
            )
    return order


def resolve_node(model: Any, ni: int, km: Any) -> Any:
    """Node ``ni``'s decoded attributes, after checking the kernels module ``km`` runs its type."""
    node = model.nodes[ni]
    if node.nodeType not in km.KERNELS:
        raise KernelError(node_where(model, ni), "no kernel for this node type")
    try:
        return km.decode_node_attr(node.nodeType, bytes(node.nodeAttr))
    except ValueError as e:
        raise KernelError(node_where(model, ni), f"cannot decode nodeAttr: {e}") from None


def check_inputs(
    inputs: Sequence[Any],
    dtypes: Sequence[np.dtype[Any] | None],
    dims: Sequence[Sequence[int]],
    name: Callable[[int], str],
) -> list[np.ndarray]:
    """The call's arrays for the model's inputs, given each input tensor's declared dtype, dims
    and ``name(k)``: as many as the model has, an ndarray exactly of the declared dtype (other
    sequences are converted to it), of the declared shape (a negative dim matches any size)."""
    if len(inputs) != len(dtypes):
        raise KernelError("execute", f"model has {len(dtypes)} inputs, got {len(inputs)} arrays")
    out = []
    for k, (arr, dt, want) in enumerate(zip(inputs, dtypes, dims)):
        a = np.asarray(arr) if isinstance(arr, np.ndarray) or dt is None else np.asarray(arr, dt)
        if dt is not None and a.dtype != dt:
            raise KernelError(
                "execute", f"input {k} ({name(k)}) is {a.dtype}, the tensor declares {dt}"
            )
        if want and (len(want) != a.ndim or any(d >= 0 and d != s for d, s in zip(want, a.shape))):
            raise KernelError(
                "execute",
                f"input {k} ({name(k)}) has shape {a.shape}, declared {list(want)}",
            )
        out.append(a)
    return out


def check_output_count(where: str, produced: int, declared: int) -> None:
    if produced < declared:
        raise KernelError(where, f"kernel produced {produced} outputs, node declares {declared}")
