"""Host operators: what NNRt v2_1 cannot run executes on the host between NNRt subgraphs of the
same Model (control flow, operators without an NNRt counterpart), checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from idlgen.runtime import UnsupportedModelError, load  # noqa: E402


def _ort(m: "onnx.ModelProto", feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return list(s.run(None, feeds))


def _if_model() -> "onnx.ModelProto":
    """y = relu(x) ; z = If(sum(y) > 0, then: y + 1 (reads y from outside), else: y * 2) ; w = z - 3"""
    f = TensorProto.FLOAT
    then = helper.make_graph(
        [helper.make_node("Add", ["y", "one"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", f, None)],
        [helper.make_tensor("one", f, [], [1.0])],
    )  # fmt: skip
    other = helper.make_graph(
        [helper.make_node("Mul", ["y", "two"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", f, None)],
        [helper.make_tensor("two", f, [], [2.0])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="relu"),
        helper.make_node("ReduceSum", ["y"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Greater", ["s", "thr"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other, name="if"),
        helper.make_node("Sub", ["z", "three"], ["w"], name="sub"),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, [2, 3])],
        [helper.make_tensor_value_info("w", f, None)],
        [helper.make_tensor("thr", f, [], [3.0]), helper.make_tensor("three", f, [], [3.0])],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("scale", [0.1, 5.0])  # both branches
def test_if_runs_on_the_host_between_nnrt_segments(scale: float) -> None:
    m = _if_model()
    p = load(m)
    cov = p.coverage()
    assert cov["host_ops"] == {"If": 1} and cov["nnrt_nodes"] >= 3
    # The NNRt nodes before and after the host node are two subgraphs of the same Model, and so
    # are the branches; the main subgraph runs only the main graph's nodes.
    subs = {s.name.removeprefix(p.model.name + "_"): s for s in p.model.subGraph[1:]}
    assert sorted(subs) == ["if_else", "if_then", "nnrt0", "nnrt1"]
    main = list(p.model.subGraph[0].nodeIndices)
    assert sorted(main) == sorted(list(subs["nnrt0"].nodeIndices) + list(subs["nnrt1"].nodeIndices))
    branches = list(subs["if_then"].nodeIndices) + list(subs["if_else"].nodeIndices)
    assert sorted(main + branches) == list(range(len(p.model.nodes)))
    assert len(subs["if_then"].nodeIndices) == len(subs["if_else"].nodeIndices) == 1
    x = (np.random.default_rng(1).standard_normal((2, 3)) * scale).astype(np.float32)
    np.testing.assert_allclose(p.run({"x": x})["w"], _ort(m, {"x": x})[0], rtol=1e-6)


def test_branches_run_as_subgraphs_of_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel runs the branch from the Model's own subgraph, not from a separate Program."""
    from idlgen.runtime import onnx_control

    def no(*_: object) -> object:
        raise AssertionError("branch ran outside the model")

    monkeypatch.setattr(onnx_control._Control, "_run_program", no)
    m = _if_model()
    x = np.full((2, 3), 2.0, np.float32)
    np.testing.assert_allclose(load(m).run({"x": x})["w"], _ort(m, {"x": x})[0], rtol=1e-6)


def test_nnrt_only_refuses_control_flow_with_the_true_reason() -> None:
    with pytest.raises(UnsupportedModelError, match="NNRt v2_1 has no operator for If"):
        load(_if_model(), nnrt_only=True)


def test_loop_with_a_carried_value() -> None:
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", f, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", f, None)],
    )  # fmt: skip
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "zero"], ["acc"], body=body, name="loop")], "g",
        [helper.make_tensor_value_info("x", f, [4]), helper.make_tensor_value_info("n", i64, [])],
        [helper.make_tensor_value_info("acc", f, None)],
        [helper.make_tensor("zero", f, [4], [0.0] * 4)],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p = load(m)
    assert p.coverage()["host_ops"] == {"Loop": 1}
    assert [s.name for s in p.model.subGraph][-1] == f"{p.model.name}_loop_body"
    feeds = {"x": np.arange(4, dtype=np.float32), "n": np.array(5, np.int64)}
    np.testing.assert_array_equal(p.run(feeds)["acc"], _ort(m, feeds)[0])


def test_host_node_outputs_feed_nnrt_nodes_and_the_model_round_trips() -> None:
    """A host node's tensors live in the same Model.allTensors: the Model still round-trips
    through its Parcel encoding, and a Program rebuilt from it runs the same."""
    from idlgen.prebuilt.ohos.hdi.nnrt import v2_1 as nnrt
    from idlgen.runtime.program import Program

    m = _if_model()
    p = load(m)
    objects: list[object] = []
    again = nnrt.Model.from_parcel(p.model.to_parcel(objects, limit=None), objects)
    assert again == p.model
    q = Program(again, p.buffers, p.input_names, p.output_names, host=p.host)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(q.run({"x": x})["w"], p.run({"x": x})["w"])


def test_a_reference_evaluator_failure_is_a_kernel_error() -> None:
    """The fuzzer's mutant #278 (seed 20): an AveragePool that lost its required kernel_shape
    runs on the reference evaluator, whose own check raised a bare RuntimeError."""
    import numpy as np
    from onnx import TensorProto, helper

    from idlgen.runtime import KernelError, load

    vi = helper.make_tensor_value_info
    g = helper.make_graph([helper.make_node("AveragePool", ["x"], ["y"])], "g",
                          [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                          [vi("y", TensorProto.FLOAT, None)])  # fmt: skip
    p = load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    with pytest.raises(KernelError, match=r"host node 'y' \(AveragePool\).*kernel_shape"):
        p.run({"x": np.ones((1, 1, 4, 4), np.float32)})
