"""The memory budget (``idlgen.runtime.budget``, issue 20 point 6): hostile shapes, windows, folds
and ``.npy`` headers are refused before anything is allocated.

Every reproducer runs ``idlgen run`` in a subprocess whose address space is capped with
``RLIMIT_AS``, so a regression fails the test instead of taking the machine down.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from idlgen.runtime import budget

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
AS_LIMIT = 1536 << 20  # address space of the child: enough for Python, NumPy and onnx


def run_capped(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``idlgen run ARGS`` in a child limited to AS_LIMIT bytes of address space and 120 s."""
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({AS_LIMIT}, {AS_LIMIT}))
        sys.path.insert(0, {str(ROOT)!r})
        from idlgen.cli import main
        sys.exit(main(["run"] + sys.argv[1:]))
        """)
    e = dict(os.environ, OPENBLAS_NUM_THREADS="1", **(env or {}))
    e.pop(budget.ENV, None) if env is None or budget.ENV not in env else None
    r = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=e, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    return r.returncode, r.stdout + r.stderr


def _onnx_model(nodes: list, inputs: list, outputs: list, inits: list = ()) -> bytes:  # type: ignore[type-arg,assignment]
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return bytes(m.SerializeToString())


def huge_input_onnx() -> bytes:
    """The issue's 67-byte model: an input declared [1e5, 1e5, 100] (7 TiB as float32)."""
    vi = helper.make_tensor_value_info
    dims = [100000, 100000, 100]
    return _onnx_model([helper.make_node("Relu", ["x"], ["y"])],
                       [vi("x", TensorProto.FLOAT, dims)], [vi("y", TensorProto.FLOAT, dims)])  # fmt: skip


def constant_of_shape_onnx(shape: list[int]) -> bytes:
    """ConstantOfShape of a constant shape: folded at load time."""
    vi = helper.make_tensor_value_info
    return _onnx_model([helper.make_node("ConstantOfShape", ["s"], ["y"])], [],
                       [vi("y", TensorProto.FLOAT, None)],
                       [numpy_helper.from_array(np.array(shape, np.int64), "s")])  # fmt: skip


def relu_onnx() -> bytes:
    vi = helper.make_tensor_value_info
    return _onnx_model([helper.make_node("Relu", ["x"], ["y"])],
                       [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])  # fmt: skip


def wide_max_pool_tflite(width: int = 1_500_000_000, padding: str = "SAME") -> bytes:
    """The issue's 372-byte TFLite MAX_POOL_2D with a filter width of 1.5e9."""
    from generated import tflite as T

    from tests.models.tflite_builder import TB

    b = TB()
    x = b.input("x", [1, 8, 8, 1])
    y = b.tensor("y", [1, 8, 8, 1])
    b.op("MAX_POOL_2D", [x], [y], T.Pool2DOptions(padding=getattr(T.Padding, padding), stride_w=1,
                                                   stride_h=1, filter_width=width, filter_height=1))  # fmt: skip
    b.outputs = [y]
    return b.finish()


def big_npy_header(n: int = 10**12) -> bytes:
    """A 2 KB ``.npy`` whose header declares ``n`` float32 elements."""
    hdr = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}"
    hdr = hdr + " " * (118 - len(hdr)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 1900


# -- the four reproducers of issue 20 ---------------------------------------------------------


def test_huge_declared_input_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(huge_input_onnx())
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path)
    assert rc == 1, out
    assert "memory budget" in out and "[100000, 100000, 100]" in out
    assert not (tmp_path / "out").exists()  # nothing written


def test_constant_of_shape_fold_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(constant_of_shape_onnx([20000, 20000]))
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path)
    assert rc == 1, out
    # refused when folded at load time, or by the declared shape of its output
    assert "memory budget" in out and ("ConstantOfShape" in out or "[20000, 20000]" in out)


def test_wide_pool_window_runs_bounded(tmp_path: Path) -> None:
    (tmp_path / "m.tflite").write_bytes(wide_max_pool_tflite())
    rc, out = run_capped(["m.tflite", "--output-dir", "out"], tmp_path)
    assert rc == 0, out
    y = np.load(tmp_path / "out" / "y.npy")
    x = np.random.default_rng(0).standard_normal([1, 8, 8, 1]).astype(np.float32)
    # every SAME window of width 1.5e9 covers the whole row
    np.testing.assert_array_equal(y, np.broadcast_to(x.max(axis=2, keepdims=True), y.shape))


def test_huge_npy_header_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(relu_onnx())
    (tmp_path / "big.npy").write_bytes(big_npy_header())
    rc, out = run_capped(["m.onnx", "--input", "x=big.npy", "--output-dir", "out"], tmp_path)
    assert rc == 1, out
    assert "memory budget" in out


def test_npy_header_larger_than_its_file_is_a_read_error(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(relu_onnx())
    (tmp_path / "short.npy").write_bytes(big_npy_header(10**6))  # 4 MB declared, 2 KB held
    rc, out = run_capped(["m.onnx", "--input", "x=short.npy"], tmp_path)
    assert rc == 2, out
    assert "file holds" in out


def test_budget_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(constant_of_shape_onnx([500, 600]))  # 1.2 MB as float32
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path, {budget.ENV: "1M"})
    assert rc == 1 and "1 MiB" in out, out
    rc, out = run_capped(["m.onnx", "--output-dir", "out"], tmp_path, {budget.ENV: "16M"})
    assert rc == 0, out


# -- the module ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, value",
    [
        ("1024", 1 << 20),
        ("4096K", 4 << 20),
        ("2g", 2 << 30),
        ("512MiB", 512 << 20),
        (" 3 M ", 3 << 20),
    ],
)
def test_max_memory_parses_the_env(monkeypatch: pytest.MonkeyPatch, raw: str, value: int) -> None:
    monkeypatch.setenv(budget.ENV, raw)
    assert budget.max_memory() == value


def test_max_memory_default_and_bad_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(budget.ENV, raising=False)
    assert budget.max_memory() == budget.DEFAULT_MAX_MEMORY
    monkeypatch.setenv(budget.ENV, "lots")
    with pytest.raises(budget.IdlgenError, match=budget.ENV):
        budget.max_memory()


def test_check_shape_uses_exact_integers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.ENV, "1M")
    budget.check_shape([512, 512], 4, "ok")  # exactly 1 MiB
    with pytest.raises(budget.MemoryBudgetError, match="over the memory budget"):
        budget.check_shape([2**40, 2**40, 2**40], 4, "x")  # would overflow int64
    err = budget.MemoryBudgetError("y", 10, 5).at("node 3")
    assert err.what == "node 3: y" and isinstance(err, ValueError)


@pytest.mark.parametrize(
    "op, consts",
    [
        ("ConstantOfShape", [np.array([1 << 20, 1 << 20])]),
        ("Range", [np.array(0.0), np.array(1e12), np.array(1.0)]),
        ("Range", [np.array(0), np.array(10), np.array(0)]),
        ("Expand", [np.ones((1, 1)), np.array([1 << 16, 1 << 16])]),
        ("Tile", [np.ones((4, 4)), np.array([1 << 14, 1 << 14])]),
        ("Pad", [np.ones((2, 2)), np.array([0, 0, 1 << 15, 1 << 15])]),
        ("Add", [np.ones((1 << 14, 1)), np.ones((1, 1 << 14))]),
    ],
)
def test_check_fold_refuses_big_results(op: str, consts: list[np.ndarray]) -> None:
    with pytest.raises(budget.MemoryBudgetError):
        budget.check_fold(op, {}, consts, [], "node")


def test_check_fold_passes_small_results() -> None:
    budget.check_fold("ConstantOfShape", {}, [np.array([3, 4])], [[3, 4]], "node")
    budget.check_fold("Range", {}, [np.array(0), np.array(10), np.array(2)], [None], "node")


# -- pooling windows wider than the input ------------------------------------------------------


def _pool_reference(x: np.ndarray, k: tuple[int, int], s: tuple[int, int], pads: tuple[int, ...],
                    oh: int, ow: int, kind: str) -> np.ndarray:  # fmt: skip
    """Window by window over real cells only (padding never contributes)."""
    n, h, w, c = x.shape
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s[0] - pads[0], j * s[1] - pads[2]
            win = x[:, max(r0, 0) : min(r0 + k[0], h), max(c0, 0) : min(c0 + k[1], w)]
            red = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
            out[:, i, j] = red
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(
    "k, s",
    [
        ((3, 10**9), (1, 1)),
        ((10**9, 2), (2, 1)),
        ((7, 9), (3, 2)),
        ((1, 1), (1, 1)),
        ((5, 5), (4, 7)),
    ],
)
def test_pool_same_windows_match_the_definition(kind: str, k: tuple[int, int], s: tuple[int, int]) -> None:  # fmt: skip
    from idlgen.runtime import window as W
    from idlgen.runtime.pool import avg_pool, max_pool

    x = np.random.default_rng(1).standard_normal((2, 6, 5, 3)).astype(np.float32)
    fn = max_pool if kind == "max" else avg_pool
    (y,) = fn([x], kernel_size=list(k), strides=list(s), pad_mode=W.SAME)
    oh, pt, _ = W.same_pads(6, k[0], s[0])
    ow, pl, _ = W.same_pads(5, k[1], s[1])
    want = _pool_reference(x, k, s, (pt, 0, pl, 0), oh, ow, kind)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_npy_headers_of_every_version_are_sized_first(tmp_path: Path, version: int) -> None:
    from idlgen.runtime.cli_run import load_npy

    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }"
    hdr = hdr + " " * (118 - len(hdr)) + "\n"
    size = len(hdr).to_bytes(2 if version == 1 else 4, "little")
    (tmp_path / "big.npy").write_bytes(b"\x93NUMPY" + bytes([version, 0]) + size + hdr.encode())
    with pytest.raises(budget.MemoryBudgetError):
        load_npy(str(tmp_path / "big.npy"))
    np.save(tmp_path / "ok.npy", np.arange(6, dtype=np.int16).reshape(2, 3))
    np.testing.assert_array_equal(load_npy(str(tmp_path / "ok.npy")), np.arange(6).reshape(2, 3))
