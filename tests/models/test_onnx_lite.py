"""``runtime.onnx_lite``: reading ONNX without importing the ``onnx`` package, checked against
the package itself (same bytes, same arrays, same inferred shapes)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from idlgen.runtime import onnx_lite  # noqa: E402

from .onnx_zoo import resnet_block  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.int64, np.uint32, np.uint64, np.bool_]  # fmt: skip


def test_load_does_not_import_the_onnx_package_and_shares_its_classes(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "r.onnx")
    onnx.save(resnet_block(8, 4), path)
    code = (
        "import sys\n"
        "from idlgen.runtime import load\n"
        f"p = load({path!r})\n"
        "print('onnx' in sys.modules)\n"
        "import onnx\n"
        "from idlgen.runtime import onnx_lite\n"
        "print(onnx.ModelProto is onnx_lite.ModelProto, onnx.onnx_ml_pb2 is onnx_lite._pb2())\n"
    )
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    assert out == ["False", "True", "True"]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DTYPES).flatmap(
        lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    ),
    st.booleans(),
)
def test_arrays_round_trip_as_the_package_does(arr: np.ndarray, typed_fields: bool) -> None:
    t = onnx.numpy_helper.from_array(arr, "t")
    if typed_fields and arr.dtype not in (np.float16,):
        # the same values in the typed repeated fields instead of raw_data
        t = onnx.helper.make_tensor("t", t.data_type, arr.shape, arr.reshape(-1).tolist())
    got = onnx_lite.to_array(t)
    want = onnx.numpy_helper.to_array(t)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert onnx_lite.from_array(arr, "t").SerializeToString() == (
        onnx.numpy_helper.from_array(arr, "t").SerializeToString()
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"axis": 1},
        {"alpha": 0.2, "beta": 0.5},
        {"mode": "linear", "pads": [1, 2, 3, 4], "scales": [1.0, 2.5]},
        {"value": onnx.numpy_helper.from_array(np.array([1.5], np.float32))},
        {"strings": ["a", "b"], "flag": True, "mixed": [1, 2.5]},
    ],
)
def test_nodes_and_attributes_equal_the_package(kwargs: dict[str, object]) -> None:
    a = onnx_lite.make_node("Op", ["x", ""], ["y"], name="n", domain="d", **kwargs)
    b = onnx.helper.make_node("Op", ["x", ""], ["y"], name="n", domain="d", **kwargs)
    assert a.SerializeToString() == b.SerializeToString()
    for at in a.attribute:
        got, want = onnx_lite.get_attribute_value(at), onnx.helper.get_attribute_value(at)
        assert got == want or (hasattr(got, "SerializeToString") and got == want)


def test_shape_inference_equals_the_package() -> None:
    m = resnet_block(8, 4)
    got = onnx_lite.infer_shapes(m, data_prop=True)
    want = onnx.shape_inference.infer_shapes(m, data_prop=True)
    assert got.SerializeToString() == want.SerializeToString()
