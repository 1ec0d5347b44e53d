"""Mutation fuzzing of model files (issue 20 point 6): a mutated ONNX or TFLite model either loads
and runs within the memory budget, or is refused with an ``IdlgenError``; never a ``MemoryError``,
another exception, a crash or a hang.

The mutants run in a child process whose address space is capped with ``RLIMIT_AS`` (a
regression fails the test instead of taking the machine down). By default a bounded number of
mutants per format runs; ``IDLGEN_FUZZ_MODELS=N`` runs N per format (the long run) and prints
the slowest mutant and the child's peak memory.

Mutations: ONNX models are parsed and 1-3 integer fields anywhere in the protobuf (dims,
attribute values, shapes of initializers, opset) are set to extreme values (0, -1, 2^31-1,
1.5e9, ...), or bytes are flipped; TFLite models get aligned int32 words overwritten with such
values (dims, filter sizes, strides and indices are int32 in the FlatBuffer) or bytes flipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
AS_LIMIT = 1536 << 20
DEFAULT_COUNT = 40
EXTREMES = [0, 1, 2, 3, -1, -2, 7, 255, 1 << 16, 1 << 20, 2**31 - 1, -(2**31), 1_500_000_000,
            100000, 2**62]  # fmt: skip


# -- seeds -----------------------------------------------------------------------------------


def onnx_seeds() -> list[bytes]:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    vi = helper.make_tensor_value_info

    def model(nodes: list[Any], ins: list[Any], outs: list[Any], inits: list[Any]) -> bytes:
        g = helper.make_graph(nodes, "seed", ins, outs, inits)
        return bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
                     .SerializeToString())  # fmt: skip

    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(4, np.float32), "b")
    fc = numpy_helper.from_array(rng.standard_normal((16, 5)).astype(np.float32), "fc")
    shape = numpy_helper.from_array(np.array([1, 16], np.int64), "shape")
    cnn = model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Reshape", ["a", "shape"], ["f"]),
            helper.make_node("MatMul", ["f", "fc"], ["y"]),
        ],
        [vi("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [vi("y", TensorProto.FLOAT, [1, 5])],
        [w, b, fc, shape],
    )
    reps = numpy_helper.from_array(np.array([2, 3], np.int64), "reps")
    shp = numpy_helper.from_array(np.array([3, 4], np.int64), "shp")
    lim = numpy_helper.from_array(np.array(12, np.int64), "lim")
    shapes = model(
        [
            helper.make_node("ConstantOfShape", ["shp"], ["k"],
                             value=numpy_helper.from_array(np.array([0.5], np.float32))),  # fmt: skip
            helper.make_node("Add", ["x", "k"], ["s"]),
            helper.make_node("Tile", ["s", "reps"], ["t"]),
            helper.make_node("Range", ["zero", "lim", "one"], ["rg"]),
            helper.make_node("Cast", ["rg"], ["rgf"], to=TensorProto.FLOAT),
            helper.make_node("Reshape", ["rgf", "shp"], ["r2"]),
            helper.make_node("Mul", ["s", "r2"], ["y"]),
        ],
        [vi("x", TensorProto.FLOAT, [3, 4])],
        [vi("y", TensorProto.FLOAT, [3, 4]), vi("t", TensorProto.FLOAT, [6, 12])],
        [reps, shp, lim, numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array(1, np.int64), "one")],
    )  # fmt: skip
    return [cnn, shapes]


def tflite_seeds() -> list[bytes]:
    from tests.models.tflite_builder import float_cnn, int8_cnn

    return [float_cnn(16), int8_cnn(16)]


# -- mutators --------------------------------------------------------------------------------


def _int_fields(msg: Any, out: list[tuple[Any, Any, int | None]]) -> None:
    from google.protobuf.descriptor import FieldDescriptor as F

    ints = {F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_UINT32, F.TYPE_SINT64, F.TYPE_SINT32}
    for fd, value in msg.ListFields():
        repeated = getattr(fd, "is_repeated", None)
        rep = repeated if repeated is not None else fd.label == F.LABEL_REPEATED
        if fd.type == F.TYPE_MESSAGE:
            for m in value if rep else [value]:
                _int_fields(m, out)
        elif fd.type in ints:
            if rep:
                out.extend((msg, fd, i) for i in range(len(value)))
            else:
                out.append((msg, fd, None))


def mutate_onnx(data: bytes, rng: np.random.Generator) -> bytes:
    import onnx

    if rng.random() < 0.2:
        return flip_bytes(data, rng)
    m = onnx.ModelProto()
    m.ParseFromString(data)
    fields: list[tuple[Any, Any, int | None]] = []
    _int_fields(m, fields)
    for _ in range(int(rng.integers(1, 4))):
        msg, fd, i = fields[int(rng.integers(len(fields)))]
        v = int(rng.choice(EXTREMES))
        try:
            if i is None:
                setattr(msg, fd.name, v)
            else:
                getattr(msg, fd.name)[i] = v
        except (ValueError, TypeError, OverflowError):
            pass  # out of the field's range
    return bytes(m.SerializeToString())


def mutate_tflite(data: bytes, rng: np.random.Generator) -> bytes:
    if rng.random() < 0.2:
        return flip_bytes(data, rng)
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        off = int(rng.integers(2, len(buf) // 4)) * 4
        v = int(rng.choice(EXTREMES)) & 0xFFFFFFFF
        buf[off : off + 4] = v.to_bytes(4, "little")
    return bytes(buf)


def flip_bytes(data: bytes, rng: np.random.Generator) -> bytes:
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 6))):
        buf[int(rng.integers(len(buf)))] = int(rng.integers(256))
    return bytes(buf)


# -- the child -------------------------------------------------------------------------------


def worker(kind: str, count: int, seed: int) -> None:
    """Run ``count`` mutants of ``kind``; print one JSON line per finding, then a summary."""
    import resource
    import time
    import traceback

    from idlgen.errors import IdlgenError
    from idlgen.runtime import budget, load
    from idlgen.runtime.cli_run import random_inputs

    seeds = onnx_seeds() if kind == "onnx" else tflite_seeds()
    mutate = mutate_onnx if kind == "onnx" else mutate_tflite
    rng = np.random.default_rng(seed)
    slowest = (0.0, -1)
    outcomes: dict[str, int] = {}
    for i in range(count):
        data = mutate(seeds[i % len(seeds)], rng)
        print(json.dumps({"start": i}), flush=True)
        t = time.perf_counter()
        try:
            p = load(data)
            outs = p.run(random_inputs(p, {}))
            budget.check_bytes(sum(int(a.nbytes) for a in outs.values()), "outputs")
            what = "ran"
        except IdlgenError as e:
            what = type(e).__name__
        except BaseException as e:  # noqa: BLE001 - the finding
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            print(json.dumps({"finding": i, "error": f"{type(e).__name__}: {e}"[:300],
                              "where": "".join(tb[-3:])[-600:],
                              "model": data.hex() if len(data) < 4096 else ""}), flush=True)  # fmt: skip
            what = "finding"
        outcomes[what] = outcomes.get(what, 0) + 1
        dt = time.perf_counter() - t
        slowest = max(slowest, (dt, i))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"done": count, "outcomes": outcomes, "slowest_s": round(slowest[0], 3),
                      "slowest": slowest[1], "peak_rss_mb": peak}), flush=True)  # fmt: skip


def run_child(kind: str, count: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({AS_LIMIT}, {AS_LIMIT}))
        sys.path.insert(0, {str(ROOT)!r})
        from tests.models.test_model_fuzz import worker
        worker({kind!r}, {count}, {seed})
        """)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    env.pop("IDLGEN_MAX_MEMORY", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120 + 10 * count)  # fmt: skip
    lines = [json.loads(s) for s in r.stdout.splitlines() if s.startswith("{")]
    findings = [d for d in lines if "finding" in d]
    summary = next((d for d in lines if "done" in d), None)
    if summary is None:
        last = max((d["start"] for d in lines if "start" in d), default=-1)
        raise AssertionError(
            f"{kind} fuzz child died (rc {r.returncode}) at mutant {last} of seed {seed}:\n"
            f"{r.stderr[-2000:]}"
        )
    return findings, summary


@pytest.mark.parametrize("kind", ["onnx", "tflite"])
def test_mutated_models_load_run_or_are_refused(kind: str) -> None:
    pytest.importorskip("onnx")
    count = int(os.environ.get("IDLGEN_FUZZ_MODELS", DEFAULT_COUNT))
    findings, summary = run_child(kind, count, seed=20)
    print(f"{kind}: {summary}")
    assert not findings, "\n".join(f"#{f['finding']}: {f['error']}\n{f['where']}" for f in findings)
