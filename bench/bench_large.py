"""idlgen on ~1 MB schemas (bench/large_inputs.py), against flatc and hdi-gen on the same files.

For each shape: ``idlgen parse`` (parse + check), ``idlgen build`` (everything, into a fresh
output, no caches) and ``idlgen diff --format markdown`` of two ~0.5 MB files of the shape (the
two sides together are the 1 MB input), in CPU seconds (user + sys) and peak RSS of the
process; the security
target (SECURITY.md) is under 2 s and under 300 MB for any input under 1 MB. Peers, on the
same file: ``flatc --python`` for ``.fbs`` shapes, ``hdi-gen -l cpp`` for ``.idl`` shapes when
``HDIGEN_BIN`` names a built hdi-gen (shared/tools/hdigen). ``BENCH_REPEAT`` (default 3)
runs of idlgen each, the median reported; peers run once (hdi-gen takes minutes on some).

    HDIGEN_BIN=/tmp/hdigen/out/bin/hdi-gen python bench/run.py large
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.common import Result
from bench.large_inputs import SIZE, write_all

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 2.0
TARGET_MB = 300


def _run(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB) of one run of ``argv``."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert p.stderr is not None
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{argv[:3]} failed ({p.returncode}): {err.decode()[-500:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _median(
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    fresh: Path | None = None,
    repeat: int | None = None,
) -> tuple[float, float]:
    runs = []
    for _ in range(repeat or max(1, int(os.environ.get("BENCH_REPEAT", "3")))):
        if fresh is not None:
            shutil.rmtree(fresh, ignore_errors=True)
        runs.append(_run(argv, env))
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def run() -> list[Result]:
    env = {**os.environ, "IDLGEN_CACHE_DIR": "", "PYTHONPATH": str(REPO)}
    idlgen = [sys.executable, "-m", "idlgen"]
    flatc = shutil.which("flatc")
    hdigen = os.environ.get("HDIGEN_BIN", "")
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-large-") as tmp:
        work = Path(tmp)
        halves = write_all(work / "half", SIZE // 2)
        for shape, path in write_all(work / "in").items():
            out = work / "out" / shape
            parse_s, parse_mb = _median([*idlgen, "parse", str(path)], env)
            build_s, build_mb = _median(
                [*idlgen, "build", str(path), "--out", str(out), "-q"], env, fresh=out
            )
            half = str(halves[shape])
            diff_s, diff_mb = _median([*idlgen, "diff", half, half, "--format", "markdown"], env)
            peer, peer_s = "", None
            peer_out = work / "peer" / shape
            if path.suffix == ".fbs" and flatc:
                peer = "flatc --python"
                argv = [flatc, "--python", "-o", str(peer_out), str(path)]
                peer_s, _ = _median(argv, None, peer_out, repeat=1)
            elif path.suffix == ".idl" and hdigen and Path(hdigen).is_file():
                peer = "hdi-gen -l cpp"
                argv = [hdigen, "-s", "full", "-m", "ipc", "-l", "cpp", "-d", str(peer_out)]
                argv += ["-c", str(path), "-r", f"a:{path.parent.parent}"]
                peer_s, _ = _median(argv, None, peer_out, repeat=1)
            size = path.stat().st_size / (1 << 20)
            for what, s, mb, p, ps in (
                ("parse + check", parse_s, parse_mb, "", None),
                ("build", build_s, build_mb, peer, peer_s),
                ("diff of two halves", diff_s, diff_mb, "", None),
            ):
                met = s < TARGET_S and mb < TARGET_MB
                results.append(
                    Result(
                        f"large: {shape} ({size:.2f} MB) {what} (CPU s)",
                        s,
                        p,
                        ps,
                        note=f"peak {mb:.0f} MB; target < {TARGET_S:g} s, < {TARGET_MB} MB: "
                        + ("met" if met else "not met"),
                    )
                )
    return results
