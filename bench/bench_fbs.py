"""FlatBuffers encode/decode against flatc's own generated Python object API.

Peer: ``flatc --python --gen-object-api`` output, generated into a temporary directory at
benchmark time (nothing committed): decode = ``XT.InitFromPackedBuf(buf)`` (UnPack), encode =
``Builder`` + ``XT.Pack`` + ``Finish``. Ours: ``Table.decode`` into dataclasses and
``Table.encode`` (flatc's byte layout). Two workloads: flatc's test monster
(monsterdata_test.mon) and a TFLite-like model (100 operators, a 1 MB weight buffer).

Run: ``python bench/run.py fbs`` (needs ../shared and ``flatc`` on PATH).
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.common import Result, timeit
from tests._gen import descriptor, generate_schema

REPO = Path(__file__).resolve().parents[1]


def _generated(schema: Path, include_dirs: list[Path]) -> dict[str, Any]:
    """Generated classes by qualified name, plus ``"desc:" + qualname`` → their descriptors."""
    g = generate_schema(schema, include_dirs=include_dirs)
    rt: dict[str, Any] = dict(g.classes)
    rt.update({"desc:" + q: descriptor(c) for q, c in g.classes.items() if hasattr(c, "_FB_DESC")})
    return rt


FBS = Path(os.environ.get("IDLGEN_SHARED") or REPO.parent / "shared") / "corpus" / "fbs"
MONSTER = FBS / "flatbuffers-tests" / "monster_test.fbs"
TFLITE = FBS / "real" / "tflite" / "schema.fbs"


def _flatc_python(schema: Path, out: Path, *inc: Path) -> None:
    args = ["flatc", "--python", "--gen-object-api", "-o", str(out)]
    for i in inc:
        args += ["-I", str(i)]
    subprocess.run([*args, str(schema)], check=True, capture_output=True)


def _tflite_model(rt: dict[str, Any], weights: int) -> Any:
    """A model shaped like a small CNN: 100 CONV_2D operators over 101 tensors."""
    T = {k.split(".")[-1]: v for k, v in rt.items() if not k.startswith("desc:")}
    tensors = [
        T["Tensor"](shape=[1, 32, 32, 8], type=T["TensorType"](0), buffer=i + 1, name=f"t{i}")
        for i in range(101)
    ]
    ops = [
        T["Operator"](
            opcode_index=0,
            inputs=[i, 0],
            outputs=[i + 1],
            builtin_options=T["Conv2DOptions"](
                stride_w=1, stride_h=1, fused_activation_function=T["ActivationFunctionType"](1)
            ),
        )
        for i in range(100)
    ]
    sub = T["SubGraph"](tensors=tensors, inputs=[0], outputs=[100], operators=ops, name="main")
    buffers = [T["Buffer"](data=b"")] + [T["Buffer"](data=bytes(64)) for _ in range(100)]
    buffers[1] = T["Buffer"](data=bytes(range(256)) * (weights // 256))
    codes = [
        T["OperatorCode"](
            deprecated_builtin_code=3, version=1, builtin_code=T["BuiltinOperator"](3)
        )
    ]
    return T["Model"](
        version=3, operator_codes=codes, subgraphs=[sub], description="bench", buffers=buffers
    )


def run() -> list[Result]:
    if not FBS.is_dir() or shutil.which("flatc") is None:
        print("bench_fbs: needs ../shared/corpus/fbs and flatc; skipped", file=sys.stderr)
        return []
    import flatbuffers

    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        _flatc_python(MONSTER, out, MONSTER.parent / "include_test")
        _flatc_python(TFLITE, out)
        sys.path.insert(0, str(out))
        try:
            peer_monster = importlib.import_module("MyGame.Example.Monster")
            peer_model = importlib.import_module("tflite.Model")
        finally:
            sys.path.remove(str(out))

        # --- monster
        rt = _generated(MONSTER, [MONSTER.parent / "include_test"])
        desc = rt["desc:MyGame.Example.Monster"]
        buf = (MONSTER.parent / "monsterdata_test.mon").read_bytes()
        obj = desc.decode(buf)
        assert desc.encode(obj) == desc.encode(desc.decode(desc.encode(obj)))
        MonsterT = peer_monster.MonsterT

        def peer_pack(t: Any, ident: bytes) -> bytes:
            b = flatbuffers.Builder(1024)
            b.Finish(t.Pack(b), file_identifier=ident)
            return bytes(b.Output())

        mt = MonsterT.InitFromPackedBuf(buf, 0)
        peer_bytes = peer_pack(mt, b"MONS")
        note = f"{len(desc.encode(obj))} B (= flatc -b) vs {len(peer_bytes)} B"
        results.append(
            Result(
                "fbs monster decode",
                timeit(lambda: desc.decode(buf)),
                "flatc py UnPack",
                timeit(lambda: MonsterT.InitFromPackedBuf(buf, 0)),
                "verifying decoder",
            )
        )
        results.append(
            Result(
                "fbs monster decode (verify=False)",
                timeit(lambda: desc.decode(buf, verify=False)),
                "flatc py UnPack",
                timeit(lambda: MonsterT.InitFromPackedBuf(buf, 0)),
            )
        )
        results.append(
            Result(
                "fbs monster encode",
                timeit(lambda: desc.encode(obj)),
                "flatc py Pack",
                timeit(lambda: peer_pack(mt, b"MONS")),
                note,
            )
        )

        # --- tflite-like model with a 1 MB weight vector
        trt = _generated(TFLITE, [])
        mdesc = trt["desc:tflite.Model"]
        model = _tflite_model(trt, 1 << 20)
        mbuf = mdesc.encode(model)
        ModelT = peer_model.ModelT
        pt = ModelT.InitFromPackedBuf(mbuf, 0)
        assert len(pt.subgraphs[0].operators) == 100 and len(pt.buffers[1].data) == 1 << 20
        decoded = mdesc.decode(mbuf)
        results.append(
            Result(
                "fbs tflite-like decode (100 ops, 1 MB)",
                timeit(lambda: mdesc.decode(mbuf)),
                "flatc py UnPack",
                timeit(lambda: ModelT.InitFromPackedBuf(mbuf, 0)),
                f"{len(mbuf)} B; weights zero-copy",
            )
        )
        results.append(
            Result(
                "fbs tflite-like encode (100 ops, 1 MB)",
                timeit(lambda: mdesc.encode(decoded)),
                "flatc py Pack",
                timeit(lambda: peer_pack(pt, b"TFL3")),
            )
        )
        big = _tflite_model(trt, 16 << 20)
        bbuf = mdesc.encode(big)
        results.append(
            Result(
                "fbs tflite-like decode (100 ops, 16 MB)",
                timeit(lambda: mdesc.decode(bbuf)),
                "idlgen, 1 MB weights",
                timeit(lambda: mdesc.decode(mbuf)),
                "ratio ~1 = decode time independent of vector length",
            )
        )
        # ~7 MB of weights print as ~80 MB of JSON (one element per line, as flatc writes)
        results += _json_rows(mdesc, mdesc.encode(_tflite_model(trt, 7 << 20)), out)
    return results


def _once(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _json_rows(desc: Any, buf: bytes, tmp: Path) -> list[Result]:
    """from_json / to_json of a large model against flatc -b / flatc --json on the same files
    (one run each: flatc's time includes process start and file I/O, ours the Python call)."""
    from idlgen.wire import fbjson

    bin_path = tmp / "big.tflite"
    bin_path.write_bytes(buf)
    to_flatc = _once(
        lambda: subprocess.run(
            ["flatc", "--json", "--strict-json", "--raw-binary", "-o", str(tmp), str(TFLITE)]
            + ["--", str(bin_path)],
            check=True,
        )
    )
    text = (tmp / "big.json").read_text()
    from_flatc = _once(
        lambda: subprocess.run(
            ["flatc", "-b", "-o", str(tmp / "b"), str(TFLITE), str(tmp / "big.json")], check=True
        )
    )
    value = desc.decode(buf)
    to_ours = _once(lambda: fbjson.to_json(desc, value))
    from_ours = _once(lambda: fbjson.from_json(desc, text))
    tracemalloc.start()
    fbjson.from_json(desc, text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    mb = f"{len(text) / 1e6:.0f} MB JSON"
    mem = f"{mb}; peak {peak / 1e6:.0f} MB ({peak / len(text):.2f}x text)"
    return [
        Result("fbs tflite-like from_json (~80 MB)", from_ours, "flatc -b", from_flatc, mem),
        Result("fbs tflite-like to_json (~80 MB)", to_ours, "flatc --json", to_flatc, mb),
    ]
