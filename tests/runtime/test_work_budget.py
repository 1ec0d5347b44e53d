"""The work budget and the budget of arrays held at once (``idlgen.runtime.budget``, issue 20
point 6's target of 2 s and 300 MB): small model files whose every array fits the per-array
budget but whose work does not (chains of big matrix products or elementwise passes, a Loop
with a trip count of 10^9, 30,000 nodes) are refused with ``WorkBudgetError``, and those that
hold too many arrays at once (kept for a final Sum, folded at load) with ``MemoryBudgetError``
(``idlgen run``: exit 1 naming the node) instead of running for minutes or growing to
gigabytes; both counts are deterministic, and the real models stay well within them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.errors import IdlgenError
from idlgen.runtime import budget

from .test_budget import run_capped

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = TensorProto.FLOAT
vi = helper.make_tensor_value_info


def _model(nodes: list, inputs: list, outputs: list, inits: list = ()) -> bytes:  # type: ignore[type-arg,assignment]
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return bytes(m.SerializeToString())


def matmul_chain(n: int, d: int = 2048) -> bytes:
    """x squared ``n`` times: ~550 bytes, every array 16 MiB, 8.6 G multiply-adds a node."""
    nodes = [helper.make_node("MatMul", [f"x{i}", f"x{i}"], [f"x{i + 1}"]) for i in range(n)]
    return _model(nodes, [vi("x0", F, [d, d])], [vi(f"x{n}", F, [d, d])])


def add_chain(n: int, shape: tuple[int, ...] = (3000, 4000)) -> bytes:
    """``n`` Adds over one 46 MiB input."""
    nodes = [helper.make_node("Add", [f"x{i}", "x0"], [f"x{i + 1}"]) for i in range(n)]
    return _model(nodes, [vi("x0", F, list(shape))], [vi(f"x{n}", F, list(shape))])


def long_loop(trips: int) -> bytes:
    """A Loop adding 1 to a 4-vector ``trips`` times (the trip count is a constant)."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["v", "one"], ["v2"]),
            helper.make_node("Identity", ["c"], ["c2"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("v", F, [4])],
        [vi("c2", TensorProto.BOOL, []), vi("v2", F, [4])],
        [numpy_helper.from_array(np.ones(4, np.float32), "one")],
    )
    return _model(
        [helper.make_node("Loop", ["M", "cond", "v0"], ["vout"], body=body)],
        [vi("v0", F, [4])],
        [vi("vout", F, [4])],
        [numpy_helper.from_array(np.array(trips, np.int64), "M"),
         numpy_helper.from_array(np.array(True), "cond")],
    )  # fmt: skip


def relu_chain(n: int, width: int = 4) -> bytes:
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"x{i + 1}"]) for i in range(n)]
    return _model(nodes, [vi("x0", F, [width])], [vi(f"x{n}", F, [width])])


HOSTILE = {
    "matmul": (lambda: matmul_chain(20), "NODE_TYPE_MATMUL_FUSION"),
    "add": (lambda: add_chain(5000), "NODE_TYPE_ADD_FUSION"),
    "loop": (lambda: long_loop(10**9), "host node 'vout' (Loop)"),
    "nodes": (lambda: relu_chain(30000), "importing 30000 nodes"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_small_files_that_would_run_for_minutes_are_refused(tmp_path, name: str) -> None:  # type: ignore[no-untyped-def]
    make, where = HOSTILE[name]
    data = make()
    assert len(data) < 1 << 20
    (tmp_path / "m.onnx").write_bytes(data)
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path)
    assert rc == 1, out
    assert "over the work budget" in out and budget.WORK_ENV in out, out
    assert where in out, out
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_raised_budget_lets_the_same_work_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "m.onnx").write_bytes(long_loop(3000))
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path, {budget.WORK_ENV: "1e6"})
    assert rc == 1 and "over the work budget of 1,000,000" in out, out
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path)
    assert rc == 0, out
    assert np.load(tmp_path / "out" / "vout.npy").shape == (4,)


def test_the_count_is_deterministic_and_the_same_on_both_executor_paths() -> None:
    """The unrolled plan and the plain loop charge the same units, run after run."""
    from idlgen.runtime import load

    prog = load(relu_chain(50, width=1000))
    x = {"x0": np.ones(1000, np.float32)}
    used = []
    for _ in range(5):  # calls 1-2 loop, then the plan is unrolled
        with budget.metered(10**12) as m:
            prog.run(x)
            used.append(m.used)
    assert prog._plan._unrolled is not None
    # the first call also compiles the plan
    assert used[1] == used[2] == used[3] == used[4]
    assert used[0] == used[1] + budget.COMPILE_STEP_COST * 50
    # 50 steps: input and output elements, the step cost; one plan call
    assert used[1] == budget.CALL_COST + 50 * (budget.STEP_COST + 2000)


def test_a_loop_body_draws_on_the_run_that_calls_it() -> None:
    from idlgen.runtime import load

    prog = load(long_loop(200))
    with budget.metered(10**12) as m:
        prog.run({"v0": np.zeros(4, np.float32)})
    once = m.used
    prog2 = load(long_loop(400))
    with budget.metered(10**12) as m:
        prog2.run({"v0": np.zeros(4, np.float32)})
    per_trip = (m.used - once) // 200
    # each trip: at least the body's plan call and its Add
    assert per_trip >= budget.CALL_COST + budget.STEP_COST


def test_a_library_run_is_refused_with_the_node_named() -> None:
    from idlgen.runtime import load
    from idlgen.runtime.budget import WorkBudgetError

    prog = load(matmul_chain(3, d=256))
    x = {"x0": np.ones((256, 256), np.float32)}
    prog.run(x)  # well within the default
    with budget.metered(1_000_000):
        with pytest.raises(WorkBudgetError, match=r"node \d+ '.*' \(NODE_TYPE_MATMUL_FUSION\)"):
            prog.run(x)


@settings(max_examples=30, deadline=None)
@given(
    units=st.lists(st.integers(0, 10**6), min_size=1, max_size=20),
    limit=st.integers(10**6, 5 * 10**6),
)
def test_charge_refuses_exactly_when_the_sum_passes_the_limit(units: list[int], limit: int) -> None:
    total = 0
    with budget.metered(limit):
        for k, u in enumerate(units):
            total += u
            if total > limit:
                with pytest.raises(budget.WorkBudgetError) as e:
                    budget.charge(u, f"step {k}")
                assert e.value.used == total and e.value.limit == limit
                assert f"step {k}" in str(e.value)
                break
            budget.charge(u, f"step {k}")
    assert budget.meter() is None
    budget.charge(10**18, "no run in progress")  # outside a load or run: nothing to count


def test_nested_loads_and_runs_share_the_outer_meter() -> None:
    with budget.metered(10**9) as outer:
        with budget.metered(5) as inner:
            assert inner is outer
            budget.charge(100, "x")
        assert outer.used == 100


def test_max_work_grows_with_the_model_and_the_environment_fixes_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(budget.WORK_ENV, raising=False)
    assert budget.max_work(0) == budget.DEFAULT_MAX_WORK
    assert budget.max_work(10**6) == budget.DEFAULT_MAX_WORK + budget.WORK_PER_MODEL_BYTE * 10**6
    monkeypatch.setenv(budget.WORK_ENV, "2e9")
    assert budget.max_work(10**9) == 2 * 10**9
    monkeypatch.setenv(budget.WORK_ENV, "12345678")
    assert budget.max_work() == 12345678
    monkeypatch.setenv(budget.WORK_ENV, "lots")
    with pytest.raises(IdlgenError, match="IDLGEN_MAX_WORK='lots'"):
        budget.max_work()


def test_heavy_cost_of_a_matmul_counts_its_multiply_adds() -> None:
    a = np.zeros((64, 128), np.float32)
    b = np.zeros((128, 32), np.float32)
    # a's 8192 elements times b's larger trailing dim (128): an upper bound of 64*128*32
    assert budget.heavy_cost("NODE_TYPE_MATMUL_FUSION", [a, b]) == 8192 * 128 // 16
    assert budget.heavy_cost("NODE_TYPE_ADD_FUSION", [a, a]) == 0


def held_many(k: int, shape: tuple[int, ...] = (3000, 4000)) -> bytes:
    """``k`` different Adds of one 46 MiB input, all kept for a final Sum."""
    nodes = [helper.make_node("Add", ["x", f"k{i}"], [f"a{i}"]) for i in range(k)]
    nodes.append(helper.make_node("Sum", [f"a{i}" for i in range(k)], ["y"]))
    inits = [numpy_helper.from_array(np.array([float(i)], np.float32), f"k{i}") for i in range(k)]
    return _model(nodes, [vi("x", F, list(shape))], [vi("y", F, list(shape))], inits)


def folded_many(k: int) -> bytes:
    """``k`` constants of 16 MiB folded at load time (broadcast Adds of tiny initializers), all
    kept for a final Sum: a 1 KB file that held 850 MB."""
    inits = [numpy_helper.from_array(np.ones((2048, 1), np.float32), "a"),
             numpy_helper.from_array(np.ones((1, 2048), np.float32), "b")]  # fmt: skip
    nodes = []
    for i in range(k):
        inits.append(numpy_helper.from_array(np.array([float(i)], np.float32), f"s{i}"))
        nodes += [helper.make_node("Add", ["a", "b"], [f"t{i}"]),
                  helper.make_node("Mul", [f"t{i}", f"s{i}"], [f"c{i}"])]  # fmt: skip
    nodes.append(helper.make_node("Sum", [f"c{i}" for i in range(k)] + ["x"], ["y"]))
    return _model(nodes, [vi("x", F, [2048, 2048])], [vi("y", F, [2048, 2048])], inits)


@pytest.mark.parametrize(
    "make, where",
    [(lambda: held_many(8), "node 2 'a2'"), (lambda: folded_many(12), "constant node")],
    ids=["run", "load"],
)
def test_holding_too_much_at_once_is_refused(tmp_path, make, where: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "m.onnx").write_bytes(make())
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path)
    assert rc == 1, out
    assert "the arrays held together" in out and "over the memory budget" in out, out
    assert where in out, out


def test_held_bytes_are_counted_before_a_declared_output_is_allocated() -> None:
    """Where the model declares a step's output dims, the step is refused before it runs; the
    count returns to where it was after each run (loops do not accumulate)."""
    from idlgen.runtime import load
    from idlgen.runtime.budget import MemoryBudgetError

    shape = (512, 512)  # 1 MiB float32 arrays
    prog = load(held_many(4, shape))
    x = {"x": np.ones(shape, np.float32)}
    with budget.metered(10**12) as m:
        prog.run(x)
        assert m.live == 0  # the plan gave back what it held
        # the four kept Adds and the Sum (the inputs are the caller's)
        assert m.peak == 5 << 20
    with budget.metered(10**12) as m:
        # inside a caller's meter the inputs are the caller's: room for three of the Adds
        m.memory = 3 << 20
        with pytest.raises(MemoryBudgetError, match=r"node 3 'a3'.*arrays held together"):
            prog.run(x)
        assert m.peak == 4 << 20  # refused at the count, before a3 was allocated


def test_a_loop_does_not_accumulate_held_bytes() -> None:
    from idlgen.runtime import load

    prog = load(long_loop(5000))
    with budget.metered(10**12) as m:
        prog.run({"v0": np.zeros(4, np.float32)})
        assert m.live == 0
        assert m.peak < 1 << 12  # a few 16-byte vectors, not 5,000 of them
