"""A malformed NNRt model fails the same way through ``execute`` and the compiled plan: both run
``idlgen.runtime.validate`` (the plan at compile time, ``execute`` on the call)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from idlgen.runtime.errors import KernelError
from idlgen.runtime.nnrt import execute
from idlgen.runtime.plan import compile_model

from .test_executor import _codec, _package, _tiny

f32 = np.float32


def _error(run: Callable[[], Any]) -> str:
    with pytest.raises(KernelError) as info:
        run()
    return str(info.value)


def _both(model: Any, buffers: Any, kernels: Any, inputs: list[Any]) -> tuple[str, str]:
    via_execute = _error(lambda: execute(model, inputs, buffers=buffers, kernels=kernels))
    via_plan = _error(lambda: compile_model(model, buffers, kernels=kernels)(inputs))
    return via_execute, via_plan


def _extra_output(model: Any) -> None:
    """Node 0 (Add) declares a second output the kernel never produces."""
    model.allTensors.append(copy.copy(model.allTensors[2]))
    model.allTensors[-1].name = "extra"
    model.nodes[0].outputIndex = [2, len(model.allTensors) - 1]


def _dangling(model: Any) -> None:
    """Mul reads a tensor that nothing defines: no input, constant or producer."""
    model.allTensors.append(copy.copy(model.allTensors[2]))
    model.allTensors[-1].name = "ghost"
    model.nodes[1].inputIndex = [2, len(model.allTensors) - 1]


X = np.zeros((2, 2), f32)
CASES: list[tuple[str, Callable[[Any], None], list[Any], str]] = [
    ("input index", lambda m: setattr(m, "inputIndex", [99]), [X], "model input 0 names tensor 99"),
    ("negative input", lambda m: setattr(m, "inputIndex", [-1]), [X], "names tensor -1"),
    ("output index", lambda m: setattr(m, "outputIndex", [7]), [X], "model output 0 names tensor 7"),
    ("negative output", lambda m: setattr(m, "outputIndex", [-1]), [X], "names tensor -1"),
    ("node tensor", lambda m: setattr(m.nodes[1], "inputIndex", [2, 99]), [X], "names tensor 99"),
    ("node index", lambda m: setattr(m.subGraph[0], "nodeIndices", [0, 5]), [X], "names node 5"),
    ("cycle", lambda m: setattr(m.nodes[0], "inputIndex", [0, 3]), [X], "cycle among nodes"),
    ("dangling", _dangling, [X], "'ghost' has no value"),
    ("output arity", _extra_output, [X], "kernel produced 1 outputs, node declares 2"),
    ("input arity", lambda m: None, [X, X], "model has 1 inputs, got 2 arrays"),
    ("input dtype", lambda m: None, [X.astype(np.float64)], "declares float32"),
    ("input shape", lambda m: None, [np.zeros((2, 3), f32)], "has shape (2, 3), declared [2, 2]"),
]  # fmt: skip


@pytest.mark.parametrize("label,mutate,inputs,message", CASES, ids=[c[0] for c in CASES])
def test_malformed_model_fails_alike_on_both_paths(
    label: str, mutate: Callable[[Any], None], inputs: list[Any], message: str
) -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _tiny(P, enc)
    mutate(model)
    via_execute, via_plan = _both(model, buffers, kernels, inputs)
    assert via_execute == via_plan
    assert message in via_execute


def test_unknown_node_type_fails_alike() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _tiny(P, enc)
    table = {k: v for k, v in kernels.KERNELS.items() if k != model.nodes[1].nodeType}
    only = type("K", (), {"KERNELS": table, "decode_node_attr": kernels.decode_node_attr})
    via_execute, via_plan = _both(model, buffers, only, [X])
    assert via_execute == via_plan
    assert "node 1" in via_execute and "no kernel for this node type" in via_execute


def test_valid_model_runs_alike() -> None:
    """The checks reject nothing that runs: the tiny model still computes (x + 1) ** 2."""
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _tiny(P, enc)
    x = np.arange(4, dtype=f32).reshape(2, 2)
    (a,) = execute(model, [x], buffers=buffers, kernels=kernels)
    (b,) = compile_model(model, buffers, kernels=kernels)([x])
    np.testing.assert_array_equal(a, (x + 1) ** 2)
    np.testing.assert_array_equal(b, a)
