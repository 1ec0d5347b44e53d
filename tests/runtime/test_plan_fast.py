"""The plan's shortcuts give exactly what the kernels give: the bare ufunc steps (``plan._bare``),
the table dequantiser and the requantiser (``plan._dequantizer`` / ``plan._quantizer``)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from idlgen.runtime import activations as A
from idlgen.runtime import elementwise as E
from idlgen.runtime import plan
from idlgen.runtime import quant as Q
from idlgen.runtime.errors import KernelError

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 6.0, -6.0, 0.5]


def _same(a: np.ndarray, b: np.ndarray) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    assert np.array_equal(np.signbit(a), np.signbit(b))


def _inputs(rng: np.random.Generator, shape: tuple[int, ...], dt: type) -> np.ndarray:
    x = (rng.standard_normal(shape) * 10).astype(dt)
    flat = x.reshape(-1)
    flat[: min(len(SPECIALS), flat.size)] = SPECIALS[: flat.size]
    return x


KERNELS = [
    functools.partial(E.neg),
    functools.partial(E.add, activation=0),
    functools.partial(E.add, activation=1),
    functools.partial(E.sub, activation=3),
    functools.partial(E.mul, activation=7),
    functools.partial(E.mul, activation=0),
    functools.partial(A.leaky_relu, negative_slope=0.2),
    functools.partial(A.leaky_relu, negative_slope=1.0),
] + [
    functools.partial(A.activation, activation_type=code, alpha=0.0, min_val=-1.0, max_val=2.0,
                      approximate=False)
    for code in sorted(A.EXACT)
]  # fmt: skip


@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f"{f.func.__name__}{f.keywords}")
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16, np.int8, np.int32])
@pytest.mark.parametrize("shapes", [[(3, 5)], [(2, 3, 4), (4,)], [(1, 4), (3, 1)], [(), ()]])
def test_bare_steps_match_their_kernels(fn: functools.partial, dt: type, shapes: list) -> None:  # type: ignore[type-arg]
    fast = plan._bare(fn)
    assert fast is not None
    rng = np.random.default_rng(0)
    n_in = 2 if fn.func in (E.add, E.sub, E.mul) else 1
    shapes = (shapes * 2)[:n_in]
    raw = [_inputs(rng, s, dt) if np.dtype(dt).kind == "f" else
           rng.integers(-50, 50, s).astype(dt) for s in shapes]  # fmt: skip
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want = fn(raw)
        except KernelError:
            with pytest.raises(KernelError):
                fast(raw)
            return
        got = fast(raw)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


def test_bare_steps_fall_back_on_mixed_or_unbroadcastable_inputs() -> None:
    fast = plan._bare(functools.partial(E.add, activation=0))
    assert fast is not None
    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float64)
    _same(fast([a, b])[0], E.add([a, b])[0])
    with pytest.raises((KernelError, ValueError)):
        fast([np.ones((2, 3), np.float32), np.ones((4,), np.float32)])


def test_bare_is_not_used_for_parameterised_entries() -> None:
    assert plan._bare(functools.partial(A.leaky_relu, negative_slope=0.0)) is None
    assert plan._bare(functools.partial(A.leaky_relu, negative_slope=1.5)) is None
    assert plan._bare(functools.partial(A.activation, activation_type=2)) is None  # sigmoid
    assert plan._bare(functools.partial(E.div, activation=0)) is None


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32"])
@pytest.mark.parametrize("bits", [8, 16, 0])
def test_requantiser_matches_quantize(dt: str, bits: int) -> None:
    rng = np.random.default_rng(bits)
    for trial in range(40):
        qp = Q.QuantParams(np.array([float(rng.uniform(1e-4, 2))]),
                           np.array([int(rng.integers(-5, 5))]), bits)  # fmt: skip
        shape = (3, 5, 7) if trial % 2 else (40, 30, 11)
        x = (rng.standard_normal(shape) * rng.uniform(0.1, 400)).astype(
            np.float32 if trial % 3 else np.float64
        )
        x.reshape(-1)[:9] = SPECIALS
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            _same(plan._quantizer(qp, np.dtype(dt))(x), Q.quantize(x, qp, np.dtype(dt)))


def test_dequantiser_matches_dequantize() -> None:
    rng = np.random.default_rng(1)
    for dt in (np.int8, np.uint8, np.int16):
        info = np.iinfo(dt)
        q = rng.integers(info.min, info.max, (6, 7)).astype(dt)
        qp = Q.QuantParams(np.array([0.037]), np.array([3]))
        _same(plan._dequantizer(qp)(q), Q.dequantize(q, qp, axis=0))
    per_channel = Q.QuantParams(np.array([0.1, 0.2, 0.3]), np.array([0, 1, 2]))
    q = rng.integers(-128, 127, (3, 4)).astype(np.int8)
    _same(plan._dequantizer(per_channel)(q), Q.dequantize(q, per_channel, axis=0))
