"""ONNX import: realistic models against onnxruntime, layouts, names, errors, the Model record."""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from idlgen.runtime import Program, UnsupportedModelError, load  # noqa: E402
from idlgen.errors import IdlgenError  # noqa: E402

from .onnx_zoo import ZOO, G, mobilenet_v2, resnet_block, yolo_block  # noqa: E402

HEAVY = os.environ.get("IDLGEN_HEAVY_MODELS") == "1"


def reference(model: "onnx.ModelProto", feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return list(s.run(None, feeds))


def feeds_for(p: Program, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        n: rng.standard_normal([max(d, 1) for d in s]).astype(dt)
        for n, dt, s in zip(p.input_names, p.input_dtypes, p.input_shapes)
    }


def assert_close(got: np.ndarray, want: np.ndarray, rel: float = 1e-3) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(float(np.max(np.abs(want))), 1e-6)
    assert float(np.max(np.abs(got - want))) <= rel * scale


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_matches_onnxruntime(name: str) -> None:
    m = ZOO[name]()
    p = load(m)
    feeds = feeds_for(p)
    got = p.run(feeds)
    assert list(got) == [o.name for o in m.graph.output]
    for g, w in zip(got.values(), reference(m, feeds)):
        assert_close(g, w)


@pytest.mark.skipif(not HEAVY, reason="heavy models: set IDLGEN_HEAVY_MODELS=1")
@pytest.mark.parametrize(
    "make", [lambda: mobilenet_v2(224, 32), lambda: resnet_block(112, 64), lambda: yolo_block(320)]
)
def test_full_size_models(make: object) -> None:
    m = make()  # type: ignore[operator]
    p = load(m)
    feeds = feeds_for(p, 1)
    for g, w in zip(p.run(feeds).values(), reference(m, feeds)):
        assert_close(g, w)


def test_program_model_is_a_generated_v2_1_model_that_round_trips() -> None:
    from idlgen.prebuilt.ohos.hdi.nnrt import v2_1 as nnrt
    from idlgen.runtime.nnrt import execute

    m = mobilenet_v2(32, 8)
    p = load(m)
    assert isinstance(p.model, nnrt.Model)
    objects: list[object] = []
    again = nnrt.Model.from_parcel(p.model.to_parcel(objects, limit=None), objects)
    assert again == p.model
    feeds = feeds_for(p)
    (out,) = execute(again, [feeds["x"]], buffers=p.buffers)
    np.testing.assert_array_equal(out, p.run(feeds)[p.output_names[0]])
    # A CNN runs NHWC inside: one transpose in, none after the first convolution.
    names = [n.nodeType.name for n in p.model.nodes]
    assert names.count("NODE_TYPE_TRANSPOSE") == 1
    assert "NODE_TYPE_FUSED_BATCH_NORM" not in names  # folded into the convolutions


def test_load_from_file_and_bytes(tmp_path: "os.PathLike[str]") -> None:
    m = resnet_block(16, 8)
    path = os.path.join(tmp_path, "r.onnx")
    onnx.save(m, path)
    a, b = load(path), load(m.SerializeToString())
    f = feeds_for(a)
    np.testing.assert_array_equal(a.run(f)[a.output_names[0]], b.run(f)[b.output_names[0]])


def _single(op: str, shape: list[int], **attrs: object) -> "onnx.ModelProto":
    g = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], name="the_node", **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_operator_outside_nnrt_runs_on_the_host_and_is_counted() -> None:
    m = _single("Det", [2, 3, 3])
    p = load(m)
    assert p.coverage() == {"nnrt_nodes": 0, "host_nodes": 1, "host_ops": {"Det": 1}}
    x = np.random.default_rng(3).standard_normal((2, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(p.run({"x": x})["y"], reference(m, {"x": x})[0], rtol=1e-5)


def test_nnrt_only_names_operator_node_and_the_true_reason() -> None:
    with pytest.raises(UnsupportedModelError) as e:
        load(_single("Det", [2, 3, 3]), nnrt_only=True)
    assert isinstance(e.value, IdlgenError)
    assert e.value.op == "Det" and e.value.node == "the_node"
    assert "Det" in str(e.value) and "the_node" in str(e.value)
    assert "NNRt v2_1 has no operator for Det" in str(e.value)


def test_unsupported_attribute_value_is_named_under_nnrt_only() -> None:
    m = _single("MaxPool", [1, 1, 4, 4], kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    with pytest.raises(UnsupportedModelError, match="auto_pad=SAME_LOWER"):
        load(m, nnrt_only=True)
    # without nnrt_only the node runs on the host, with ONNX's semantics
    x = np.random.default_rng(4).standard_normal((1, 1, 4, 4)).astype(np.float32)
    np.testing.assert_array_equal(load(m).run({"x": x})["y"], reference(m, {"x": x})[0])


def test_unknown_custom_domain_is_refused() -> None:
    g = helper.make_graph(
        [helper.make_node("Foo", ["x"], ["y"], name="n", domain="com.example")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    )
    with pytest.raises(UnsupportedModelError, match="com.example"):
        load(m)


def test_shape_arithmetic_is_folded_and_dtypes_kept() -> None:
    # y = reshape(x, concat(shape(x)[0:1], [-1])) : flatten via shape ops, all folded.
    g = G(7)
    s = g.op("Shape", ["x"])
    n = g.op("Gather", [s, g.const(np.array([0], np.int64))], axis=0)
    shp = g.op("Concat", [n, g.const(np.array([-1], np.int64))], axis=0)
    y = g.op("Reshape", ["x", shp])
    i = g.op("Cast", [y], to=TensorProto.INT32)
    m = g.model([("x", [2, 3, 4])], [i], opset=13)
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.INT32
    p = load(m)
    kinds = {n.nodeType.name for n in p.model.nodes}
    assert "NODE_TYPE_SHAPE" not in kinds and "NODE_TYPE_GATHER" not in kinds
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 1.5
    out = p.run({"x": x})[i]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, reference(m, {"x": x})[0])


@pytest.mark.parametrize("opset", [11, 13, 17, 21])
def test_opsets(opset: int) -> None:
    g = G(8)
    y = g.conv("x", 3, 8, k=3, stride=2)
    y = g.op("Softmax", [g.op("Flatten", [y], axis=1)], axis=1 if opset < 13 else -1)
    m = g.model([("x", [1, 3, 8, 8])], [y], opset=opset)
    p = load(m)
    f = feeds_for(p)
    assert_close(p.run(f)[y], reference(m, f)[0])


def test_float16_model() -> None:
    g = G(9)
    w = g.const((g.rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float16))
    y = g.op("Relu", [g.op("Conv", ["x", w], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])
    m = g.model([("x", [1, 3, 6, 6])], [y], dtype=TensorProto.FLOAT16)
    p = load(m)
    f = {"x": np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype(np.float16)}
    got = p.run(f)[y]
    want = reference(m, f)[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(
        got.astype(np.float32), want.astype(np.float32), atol=2e-2, rtol=2e-2
    )


def test_qdq_int8_model_within_one_quantum() -> None:
    g = G(10)
    scale, zp = np.float32(0.05), np.int8(3)
    q = g.op("QuantizeLinear", ["x", g.const(scale), g.const(zp)])
    d = g.op("DequantizeLinear", [q, g.const(scale), g.const(zp)])
    wq = g.const(g.rng.integers(-20, 20, (4, 2, 3, 3)).astype(np.int8))
    w = g.op("DequantizeLinear", [wq, g.const(np.float32(0.02)), g.const(np.int8(0))])
    y = g.op("Conv", [d, w], kernel_shape=[3, 3])
    yq = g.op("QuantizeLinear", [y, g.const(np.float32(0.03)), g.const(np.int8(-1))])
    m = g.model([("x", [1, 2, 6, 6])], [yq], opset=13)
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.INT8
    p = load(m)
    f = feeds_for(p)
    got, want = p.run(f)[yq], reference(m, f)[0]
    assert got.dtype == np.int8
    assert np.max(np.abs(got.astype(np.int32) - want.astype(np.int32))) <= 1


def test_missing_target_package_is_a_config_error() -> None:
    from idlgen.errors import ConfigError

    with pytest.raises(ConfigError, match="no_such_pkg"):
        load(resnet_block(8, 4), package="no_such_pkg.v2_1")


@pytest.mark.parametrize("shared", [False, True])
def test_transposed_matmul_operand_folds_into_transpose_b(shared: bool) -> None:
    """MatMul(a, Transpose(b, swap last two)) lowers to one MatMulFusion with transposeB, unless
    the transposed value has another consumer; either way it matches onnxruntime."""
    g = G(7)
    kt = g.op("Transpose", ["b"], perm=[0, 1, 3, 2])
    y = g.op("MatMul", ["a", kt])
    outs = [y, g.op("Relu", [kt])] if shared else [y]
    m = g.model([("a", [1, 2, 5, 3]), ("b", [1, 2, 4, 3])], outs)
    p = load(m)
    kinds = [n.nodeType.name for n in p.model.nodes]
    assert ("NODE_TYPE_TRANSPOSE" in kinds) == shared
    feeds = feeds_for(p)
    for got, want in zip(p.run(feeds).values(), reference(m, feeds)):
        assert_close(got, want)


def test_run_rejects_an_input_of_another_kind() -> None:
    """float64 for a float32 input is cast (NumPy's default dtype); floats for an integer
    input would be truncated silently, so they are an error."""
    x = helper.make_tensor_value_info("x", TensorProto.INT32, [4])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, [4])
    g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g", [x], [y])
    prog = load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    out = prog.run({"x": np.arange(4, dtype=np.int64)})["y"]
    np.testing.assert_array_equal(out, -np.arange(4))
    with pytest.raises(ValueError, match="expected int32"):
        prog.run({"x": np.full(4, 2.7)})


def test_models_lower_onto_the_shipped_package_whatever_the_working_directory(
    tmp_path: "os.PathLike[str]",
) -> None:
    """One class identity for one schema: ``load`` never tries the repository's ``generated``
    package, so the result is the same from the repository root and from anywhere else."""
    import subprocess
    import sys

    code = (
        "from tests.models.onnx_zoo import resnet_block\n"
        "from idlgen.runtime import load\n"
        "import sys\n"
        "m = load(resnet_block(8, 4)).model\n"
        "print(type(m).__module__.rsplit('.', 1)[0], 'generated' in sys.modules)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mods = set()
    for cwd in (root, os.fspath(tmp_path)):
        env = dict(os.environ, PYTHONPATH=root)
        out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True,
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
        mods.add(out)
    assert mods == {"idlgen.prebuilt.ohos.hdi.nnrt.v2_1 False"}


def test_package_may_be_passed_as_a_module() -> None:
    from idlgen.prebuilt.ohos.hdi.nnrt import v2_1 as shipped

    assert isinstance(load(resnet_block(8, 4), package=shipped).model, shipped.Model)
