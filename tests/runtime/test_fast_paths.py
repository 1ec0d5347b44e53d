"""The runtime's fast paths against the straightforward formulation: blocked GEMM vs ``@``, the
executor's per-model plan cache vs a fresh model (mutations between calls must be seen)."""

from __future__ import annotations

import copy
import gc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.runtime import conv, nnrt
from idlgen.runtime.builder import ModelBuilder
from idlgen.runtime.errors import KernelError
from idlgen.runtime.nnrt import execute

from .test_executor import _codec, _package

f32 = np.float32
SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(
    m=st.integers(1, 3000),
    k=st.integers(1, 80),
    n=st.integers(1, 70),
    seed=st.integers(0, 2**32 - 1),
)
def test_gemm_matches_matmul(m: int, k: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(f32)
    b = rng.standard_normal((k, n)).astype(f32)
    got = conv.gemm(a, b)
    assert got.dtype == f32 and got.shape == (m, n)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_gemm_blocks_mid_sized_products() -> None:
    # Exercise the row-blocked branch for sure (and the unblocked ones on either side).
    rng = np.random.default_rng(1)
    for m, k, n in [(4096, 27, 32), (7, 3, 5), (64, 512, 1100)]:
        a = rng.standard_normal((m, k)).astype(f32)
        b = rng.standard_normal((k, n)).astype(f32)
        np.testing.assert_allclose(conv.gemm(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert conv._SERIAL_MNK < 4096 * 27 * 32 <= conv._THREADED_MNK


def _model(P: Any, enc: Any, c: np.ndarray) -> tuple[Any, dict[int, bytes]]:
    b = ModelBuilder(P, encode=enc)
    x = b.input("x", f32, [2, 2])
    k = b.constant("c", c)
    y = b.node(P.AddFusion(), [x, k])
    b.output(b.node(P.MulFusion(), [y, k]))
    b.output(k)
    return b.build()


def _fresh(model: Any) -> Any:
    return copy.deepcopy(model)


def test_plan_cache_sees_model_mutations() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    c = np.array([[1, 2], [3, 4]], f32)
    model, buffers = _model(P, enc, c)
    x = np.arange(4, dtype=f32).reshape(2, 2)
    y, k = execute(model, [x], buffers=buffers, kernels=kernels)
    np.testing.assert_array_equal(y, (x + c) * c)
    # A constant returned as a model output is the caller's own writable array.
    assert k.flags.writeable
    k[...] = 0
    y2, k2 = execute(model, [x], buffers=buffers, kernels=kernels)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(k2, c)
    # Swap Add for Sub (node type + attribute bytes): the cached plan must not be reused.
    model.nodes[0].nodeType = P.NodeType.NODE_TYPE_SUB_FUSION
    model.nodes[0].nodeAttr = bytes(
        kernels.encode_node_attr(P.SubFusion()) if enc is None else enc(P.SubFusion())
    )
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0], (x - c) * c
    )
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0],
        execute(_fresh(model), [x], buffers=buffers, kernels=kernels)[0],
    )
    # Rewire an input index in place (same list object).
    model.nodes[1].inputIndex[1] = model.nodes[1].inputIndex[0]
    np.testing.assert_array_equal(
        execute(model, [x], buffers=buffers, kernels=kernels)[0], (x - c) * (x - c)
    )
    # Other buffer bytes for the same fd: new constant values.
    (fd,) = buffers
    other = {fd: np.full(4, 10, f32).tobytes()}
    model2, _ = _model(P, enc, c)
    np.testing.assert_array_equal(
        execute(model2, [x], buffers=other, kernels=kernels)[0], (x + 10) * 10
    )
    np.testing.assert_array_equal(
        execute(model2, [x], buffers=buffers, kernels=kernels)[0], (x + c) * c
    )


def test_mutable_buffers_are_reread_every_call() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    c = np.ones((2, 2), f32)
    model, buffers = _model(P, enc, c)
    (fd,) = buffers
    buf = bytearray(buffers[fd])
    x = np.zeros((2, 2), f32)
    np.testing.assert_array_equal(execute(model, [x], buffers={fd: buf}, kernels=kernels)[0], c)
    buf[:] = np.full(4, 3, f32).tobytes()
    np.testing.assert_array_equal(
        execute(model, [x], buffers={fd: buf}, kernels=kernels)[0], np.full((2, 2), 9, f32)
    )


def test_errors_still_raised_with_a_cached_plan() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _model(P, enc, np.ones((2, 2), f32))
    x = np.zeros((2, 2), f32)
    execute(model, [x], buffers=buffers, kernels=kernels)
    with pytest.raises(KernelError, match="not in buffers"):
        execute(model, [x], buffers={}, kernels=kernels)
    model.nodes[0].nodeAttr = b"\xff"
    if enc is None:
        with pytest.raises(KernelError, match="node 0 .*cannot decode nodeAttr"):
            execute(model, [x], buffers=buffers, kernels=kernels)
    model, buffers = _model(P, enc, np.ones((2, 2), f32))
    execute(model, [x], buffers=buffers, kernels=kernels)
    model.nodes[0].inputIndex = [0, 3]
    with pytest.raises(KernelError, match="cycle"):
        execute(model, [x], buffers=buffers, kernels=kernels)


def test_plans_are_dropped_with_their_model() -> None:
    P = _package("v2_1")
    kernels, enc = _codec(P)
    model, buffers = _model(P, enc, np.ones((2, 2), f32))
    execute(model, [np.zeros((2, 2), f32)], buffers=buffers, kernels=kernels)
    key = id(model)
    assert key in nnrt._PLANS
    del model
    gc.collect()
    assert key not in nnrt._PLANS
