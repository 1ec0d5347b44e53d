"""``quant.quantize`` rounds half away from zero, saturates and maps NaN to 0 — checked against
the plain formula (floor(v + 0.5) / ceil(v - 0.5), nan_to_num, clip) on adversarial values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.runtime.quant import QuantParams, dequantize, quantize, scaled

_SPECIAL = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.5,
    -1.5,
    2.5,
    -2.5,
    126.5,
    -128.5,
    np.inf,
    -np.inf,
    np.nan,
    1e30,
]


def _reference(x: np.ndarray, qp: QuantParams, dt: type) -> np.ndarray:
    v = scaled(x, qp)
    r = np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))
    info = np.iinfo(dt)
    with np.errstate(invalid="ignore"):
        return np.clip(
            np.nan_to_num(r, nan=0.0, posinf=info.max, neginf=info.min), info.min, info.max
        ).astype(dt)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(_SPECIAL), st.floats(-300, 300, width=32)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([1.0, 0.5, 0.1, 0.02, 3.0]),
    st.integers(-5, 5),
    st.sampled_from([np.int8, np.uint8, np.int16]),
)
def test_quantize_matches_the_formula(vals: list[float], scale: float, zp: int, dt: type) -> None:
    x = np.array(vals, np.float32)
    qp = QuantParams(np.array([scale]), np.array([zp]), 8 if np.dtype(dt).itemsize == 1 else 16)
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal(quantize(x, qp, dt), _reference(x, qp, dt))


@given(
    scale=st.floats(1e-6, 1e3, allow_nan=False),
    zp=st.integers(-128, 255),
    unsigned=st.booleans(),
)
def test_8bit_dequantise_table_matches_formula(scale: float, zp: int, unsigned: bool) -> None:
    """The 256-entry table path gives exactly the float64 formula's float32 values."""
    dt = np.uint8 if unsigned else np.int8
    q = np.arange(256, dtype=np.uint8).view(dt).reshape(16, 16)[:, ::-1]  # strided too
    qp = QuantParams(np.array([scale]), np.array([zp]))
    want = ((q.astype(np.float64) - zp) * scale).astype(np.float32)
    got = dequantize(q, qp)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
