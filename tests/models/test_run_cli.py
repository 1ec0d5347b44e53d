"""``idlgen run``: inputs from .npy, random missing inputs, sanitised output names, --compare."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from idlgen.cli import main  # noqa: E402
from idlgen.runtime.cli_run import output_file_name  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _model(tmp_path: Path) -> Path:
    g = helper.make_graph(
        [helper.make_node("Add", ["a/in", "b"], ["sum:0"]), helper.make_node("Relu", ["sum:0"], ["out put"])],
        "g",
        [helper.make_tensor_value_info("a/in", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("out put", TensorProto.FLOAT, [2, 3])],
    )  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize(
    "name, file", [("out put", "out_put.npy"), ("a/b:0", "a_b_0.npy"), ("x.y-z_1", "x.y-z_1.npy"),
                   ("ü", "_.npy"), ("..", "__.npy")],
)  # fmt: skip
def test_output_file_name(name: str, file: str) -> None:
    assert output_file_name(name) == file


def test_run_with_given_and_random_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _model(tmp_path)
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    np.save(tmp_path / "a.npy", a)
    out = tmp_path / "out"
    rc = main(
        ["run", str(model), "--input", f"a/in={tmp_path / 'a.npy'}", "--output-dir", str(out)]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "input b: random float32 [2, 3] (seed 0)" in text
    got = np.load(out / "out_put.npy")
    b = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_array_equal(got, np.maximum(a + b, 0))
    # Same seed, same result.
    assert main(["run", str(model), "--output-dir", str(tmp_path / "o2")]) == 0
    assert main(["run", str(model), "--output-dir", str(tmp_path / "o3")]) == 0
    np.testing.assert_array_equal(
        np.load(tmp_path / "o2/out_put.npy"), np.load(tmp_path / "o3/out_put.npy")
    )


def test_compare_prints_errors_and_timings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime")
    assert main(["run", str(_model(tmp_path)), "--output-dir", str(tmp_path), "--compare"]) == 0
    text = capsys.readouterr().out
    assert "compare out put: max abs error 0, max rel error 0" in text
    assert "onnxruntime" in text and "ms per run" in text


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _model(tmp_path)
    assert main(["run", str(tmp_path / "missing.onnx")]) == 2
    assert main(["run", str(model), "--input", "nofile"]) == 2
    assert main(["run", str(model), "--input", f"zz={tmp_path / 'none.npy'}"]) == 2
    np.save(tmp_path / "z.npy", np.zeros((2, 3), np.float32))
    assert main(["run", str(model), "--input", f"zz={tmp_path / 'z.npy'}"]) == 2
    assert "unknown input zz" in capsys.readouterr().err


def test_unsupported_model_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="hm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )  # fmt: skip
    path = tmp_path / "h.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    assert main(["run", str(path), "--output-dir", str(tmp_path), "--nnrt-only"]) == 1
    err = capsys.readouterr().err
    assert "Det" in err and "'hm'" in err
    # without --nnrt-only it runs, Hardmax on the host, and --report says so
    assert main(["run", str(path), "--output-dir", str(tmp_path), "--report"]) == 0
    out = capsys.readouterr().out
    assert "coverage: 0 of 1 nodes on NNRt v2_1, 1 on the host" in out
    assert "host Det: 1" in out


def test_run_never_imports_the_compiler(tmp_path: Path) -> None:
    model = _model(tmp_path)
    code = (
        "import sys\n"
        "from idlgen.runtime.cli_run import main\n"
        f"rc = main([{str(model)!r}, '--output-dir', {str(tmp_path)!r}])\n"
        "bad = sorted(m for m in ('lark', 'jinja2', 'black') if m in sys.modules)\n"
        "print(rc, bad)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(REPO), timeout=120)  # fmt: skip
    assert r.stdout.strip().splitlines()[-1] == "0 []", r.stderr


def test_outputs_whose_names_sanitise_alike_do_not_overwrite(tmp_path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in ("a/b", "a_b")]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a/b"]), helper.make_node("Neg", ["x"], ["a_b"])],
        "g",
        [x],
        outs,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    assert main(["run", str(path), "--output-dir", str(tmp_path / "o")]) == 0
    relu, neg = np.load(tmp_path / "o/a_b.npy"), np.load(tmp_path / "o/a_b_2.npy")
    np.testing.assert_array_equal(relu, np.maximum(-neg, 0))  # Relu(x) from Neg(x): both kept
