"""``idlgen run MODEL [--input NAME=FILE.npy ...] [--output-dir DIR] [--compare] [--report]
[--nnrt-only] [--input-shape NAME=D0,D1,...]``.

Imports the model (ONNX or TFLite) onto NNRt v2_1, runs it with the NumPy runtime and writes each
output to ``DIR/<name>.npy``. ``--compare`` also runs the model's own runtime (onnxruntime, or the
LiteRT interpreter from ``ai-edge-litert``) when installed and prints the largest differences.
Needs only the runtime install (numpy, flatbuffers; ``onnx`` for ``.onnx``).

Model files and ``.npy`` inputs are untrusted: every array they make idlgen allocate (declared
and computed shapes, folded constants, window buffers, ``.npy`` contents, the outputs before any
is written) is checked first against one memory budget, 96 MiB per array by default, and the
arrays held at once against 1.5 times that (``IDLGEN_MAX_MEMORY``, e.g. ``512M``, ``2G``; see
:mod:`idlgen.runtime.budget`). Exceeding it is an error naming the tensor or node, exit 1. The load and the run together draw on one work
budget (``IDLGEN_MAX_WORK``, default 3e9 units plus 200 per byte of the model file), so a
small file cannot make idlgen compute for minutes either.

Exit codes: 0 success, 1 the model cannot be imported or run (or exceeds a budget),
2 usage error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from idlgen.errors import ConfigError, IdlgenError

from . import budget

__all__ = ["load_npy", "main", "output_file_name", "random_inputs"]

SEED = 0


def output_file_name(name: str) -> str:
    """``<name>.npy`` with every character other than letters, digits, ``.``, ``_``, ``-`` as ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    if safe in ("", ".", ".."):
        safe = safe.replace(".", "_") or "_"
    return safe + ".npy"


def random_inputs(
    program: Any, given: dict[str, np.ndarray], seed: int = SEED
) -> dict[str, np.ndarray]:
    """``given`` plus a seeded random array for every other input (unknown dims become 1)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    total = 0
    for name, dt, shape in zip(program.input_names, program.input_dtypes, program.input_shapes):
        if name in given:
            out[name] = given[name]
            continue
        dims = [d if d >= 0 else 1 for d in shape]
        dt = np.dtype(dt)
        # the declared shape is the model file's word: sized before anything is allocated, at
        # the 8 bytes per value the generator draws (int64 / float64) before the cast
        total += budget.nbytes(dims, 8)
        budget.check_shape(dims, 8, f"random input {name!r}")
        budget.check_bytes(total, "the random inputs together")
        if dt.kind == "f":
            out[name] = rng.standard_normal(dims).astype(dt)
        elif dt.kind == "b":
            out[name] = rng.integers(0, 2, dims).astype(dt)
        else:
            info = np.iinfo(dt)
            lo, hi = (info.min, info.max) if dt.itemsize == 1 else (0, 10)
            out[name] = rng.integers(lo, int(hi) + 1, dims).astype(dt)
    return out


def load_npy(file: str) -> np.ndarray:
    """``np.load(file, allow_pickle=False)`` after reading the header: the array it declares must
    fit the memory budget and the bytes the file holds (a 2 KB file may declare 10^12 elements)."""
    with open(file, "rb") as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            else:  # 2.0 and 3.0 headers differ only in their text encoding
                shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        except (ValueError, OSError, SyntaxError, UnicodeDecodeError):
            shape = None
        if shape is not None:
            need = budget.nbytes(shape, dtype.itemsize)
            budget.check_shape(shape, dtype.itemsize, "the array")
            have = os.fstat(f.fileno()).st_size - f.tell()
            if dtype.itemsize and need > have:
                raise ValueError(f"header declares {list(shape)} {dtype} ({need} bytes) but the "
                                 f"file holds {have} bytes of data")  # fmt: skip
    if shape is None:
        # a header this reader does not parse: map the file (nothing is read or allocated), size
        # what numpy found, and only then copy it into memory
        mm = np.load(file, mmap_mode="r", allow_pickle=False)
        if not isinstance(mm, np.ndarray):
            raise ValueError("not a .npy array")
        budget.check_shape(mm.shape, mm.dtype.itemsize, "the array")
        return np.array(mm)
    arr: np.ndarray = np.load(file, allow_pickle=False)
    return arr


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="idlgen run",
        description="Import an ONNX or TFLite model onto NNRt v2_1 and run it with NumPy.",
        epilog="Every array a model or .npy file makes idlgen allocate is checked first against "
        "a memory budget of 96 MiB per array (1.5 times that for the arrays held at once); "
        "IDLGEN_MAX_MEMORY (e.g. 512M, 2G) changes it. "
        "Loading and running draw on a work budget of 3e9 units (about 1 ns each) plus 200 "
        "per byte of the model file; IDLGEN_MAX_WORK (e.g. 1e10) sets it. Exceeding either "
        "exits 1.",
    )
    p.add_argument("model", metavar="MODEL", help="a .onnx or .tflite file")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input array (repeatable); missing inputs are random (seed 0)")  # fmt: skip
    p.add_argument("--output-dir", default=".", metavar="DIR",
                   help="where <output name>.npy files go (default: current directory)")  # fmt: skip
    p.add_argument("--compare", action="store_true",
                   help="also run onnxruntime / LiteRT and print max abs/rel error and timings")  # fmt: skip
    p.add_argument("--nnrt-only", action="store_true",
                   help="refuse operators NNRt v2_1 does not run instead of running them on "
                        "the host (exit 1 naming the first)")  # fmt: skip
    p.add_argument("--report", action="store_true",
                   help="print how many nodes NNRt runs and which operators run on the host")  # fmt: skip
    p.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="pin an input's dims at load time (repeatable)")  # fmt: skip
    return p


def _reference(
    path: str, program: Any
) -> tuple[str, Callable[[dict[str, np.ndarray]], list[np.ndarray]]] | str:
    """(runtime name, run function) for the model's own runtime, or why there is none."""
    if path.endswith(".tflite") or _is_tflite(path):
        try:
            from ai_edge_litert.interpreter import Interpreter  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            return "LiteRT interpreter not installed (pip install ai-edge-litert)"
        it = Interpreter(model_path=path, num_threads=1)
        it.allocate_tensors()
        ins = {d["name"]: d["index"] for d in it.get_input_details()}
        outs = [d["index"] for d in it.get_output_details()]

        def run_tfl(feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
            for n, a in feeds.items():
                it.set_tensor(ins[n], a)
            it.invoke()
            return [it.get_tensor(i) for i in outs]

        return "LiteRT", run_tfl
    try:
        import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return "onnxruntime not installed"
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    def run_ort(feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        return list(sess.run(None, feeds))

    return f"onnxruntime {ort.__version__}", run_ort


def _print_report(program: Any) -> None:
    """``Program.coverage()`` as lines: NNRt's share, then each host operator and its count."""
    cov = program.coverage()
    total = cov["nnrt_nodes"] + cov["host_nodes"]
    print(f"coverage: {cov['nnrt_nodes']} of {total} nodes on NNRt v2_1, "
          f"{cov['host_nodes']} on the host")  # fmt: skip
    for op, n in cov["host_ops"].items():
        print(f"  host {op}: {n}")


def _is_tflite(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(8)[4:8] == b"TFL3"


def _timed(fn: Callable[[], Any], repeat: int = 5) -> tuple[Any, float]:
    """Result of one call and the median seconds over ``repeat`` calls (after a warm-up)."""
    result = fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return result, float(np.median(times))


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if e.code in (0, None) else 2
    from .loader import load

    given: dict[str, np.ndarray] = {}
    for spec in args.input:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            print(f"idlgen run: error: --input {spec!r}: expected NAME=FILE.npy", file=sys.stderr)
            return 2
        try:
            given[name] = load_npy(file)
        except budget.MemoryBudgetError as e:
            print(f"idlgen run: error: --input {name}: {file}: {e}", file=sys.stderr)
            return 1
        except (OSError, ValueError) as e:
            print(f"idlgen run: error: --input {name}: cannot read {file}: {e}", file=sys.stderr)
            return 2
    shapes: dict[str, list[int]] = {}
    for spec in args.input_shape:
        name, sep, dims = spec.partition("=")
        try:
            shapes[name] = [int(d) for d in dims.split(",") if d.strip()]
        except ValueError:
            sep = ""
        if not sep or not name:
            print(f"idlgen run: error: --input-shape {spec!r}: expected NAME=D0,D1,...",
                  file=sys.stderr)  # fmt: skip
            return 2
    if not os.path.isfile(args.model):
        print(f"idlgen run: error: {args.model}: no such file", file=sys.stderr)
        return 2
    try:
        is_model = args.model.lower().endswith((".onnx", ".tflite")) or _is_tflite(args.model)
    except OSError as e:
        print(f"idlgen run: error: {args.model}: {e.strerror or e}", file=sys.stderr)
        return 2
    if not is_model:
        print(f"idlgen run: error: {args.model}: not a model file (expected an ONNX .onnx "
              "or a TFLite .tflite file)", file=sys.stderr)  # fmt: skip
        return 2
    if args.compare:  # timed runs: each draws on a budget of its own
        return _load_and_run(args, shapes, given)
    # the load and the run draw on one work budget: what a file can make idlgen spend in all
    with budget.metered(budget.max_work(os.path.getsize(args.model))):
        return _load_and_run(args, shapes, given)


def _load_and_run(
    args: argparse.Namespace, shapes: dict[str, list[int]], given: dict[str, np.ndarray]
) -> int:
    from .loader import load

    try:
        program = load(args.model, input_shapes=shapes or None, nnrt_only=args.nnrt_only)
    except ConfigError as e:
        print(f"idlgen run: error: {e}", file=sys.stderr)
        return 2
    except IdlgenError as e:
        print(f"idlgen run: error: {args.model}: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"idlgen run: error: {e}", file=sys.stderr)
        return 2
    except MemoryError as e:
        print(f"idlgen run: error: {args.model}: out of memory ({e})", file=sys.stderr)
        return 1
    unknown = sorted(set(given) - set(program.input_names))
    if unknown:
        names = ", ".join(program.input_names)
        print(f"idlgen run: error: unknown input {', '.join(unknown)} (the model has: {names})",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        feeds = random_inputs(program, given)
        budget.hold(feeds.values(), "the inputs")
    except IdlgenError as e:
        print(f"idlgen run: error: {args.model}: {e}", file=sys.stderr)
        return 1
    for n in program.input_names:
        if n not in given:
            a = feeds[n]
            print(f"input {n}: random {a.dtype} {list(a.shape)} (seed {SEED})")
    try:
        # timed (warm-up + 5 runs) only when comparing; otherwise the model runs once
        outs, ours = (
            _timed(lambda: program.run(feeds)) if args.compare else (program.run(feeds), 0.0)
        )
        # nothing is written unless all of it fits
        budget.check_bytes(sum(int(a.nbytes) for a in outs.values()), "the outputs together")
    except (IdlgenError, ValueError) as e:
        print(f"idlgen run: error: {e}", file=sys.stderr)
        return 1
    except MemoryError as e:  # an allocation the budget did not foresee: still a clear error
        print(f"idlgen run: error: out of memory ({e}); {budget.ENV} bounds arrays up front",
              file=sys.stderr)  # fmt: skip
        return 1
    if args.report:
        _print_report(program)
    os.makedirs(args.output_dir, exist_ok=True)
    used: set[str] = set()
    for name, arr in outs.items():
        # two names can sanitise to one file ("a/b", "a_b"): never overwrite an output
        file, k = output_file_name(name), 1
        while file in used:
            k += 1
            file = output_file_name(f"{name}_{k}")
        used.add(file)
        path = os.path.join(args.output_dir, file)
        np.save(path, arr, allow_pickle=False)
        print(f"output {name}: {arr.dtype} {list(arr.shape)} -> {path}")
    if not args.compare:
        return 0
    print(f"idlgen (NumPy): {ours * 1e3:.3f} ms per run (median of 5)")
    ref = _reference(args.model, program)
    if isinstance(ref, str):
        print(f"compare: skipped: {ref}")
        return 0
    label, run_ref = ref
    want, theirs = _timed(lambda: run_ref(feeds))
    for (name, got), w in zip(outs.items(), want):
        w = np.asarray(w)
        if got.shape != w.shape:
            print(f"compare {name}: shape {list(got.shape)} vs {list(w.shape)}")
            continue
        diff = np.abs(got.astype(np.float64) - w.astype(np.float64))
        mx = float(diff.max()) if diff.size else 0.0
        scale = float(np.abs(w.astype(np.float64)).max()) if w.size else 0.0
        rel = mx / scale if scale else mx
        print(f"compare {name}: max abs error {mx:.3g}, max rel error {rel:.3g}")
    print(f"{label}: {theirs * 1e3:.3f} ms per run (median of 5, 1 thread); "
          f"ratio {theirs / ours:.2f}x of its speed")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
