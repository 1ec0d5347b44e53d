"""hdi-gen vs idlgen over the 611-file HDI corpus, in CPU seconds (user + sys of the process tree).

hdi-gen runs as OpenHarmony's GN build drives it: once per package directory (``run-hdigen-
corpus.sh`` from shared/tools/hdigen, which also says how to build hdi-gen). Set ``HDIGEN_BIN``
to the built binary; without it the peer columns say "skipped". idlgen runs as a user would:
``idlgen build`` into a fresh output directory with no caches (cold), and ``idlgen parse``
(parse + check, no generation). CPU time rather than wall time: the machine is shared.
``BENCH_REPEAT`` (default 3) runs of each; the median is reported.

Parse + check compares ``idlgen parse DIR --root ohos.hdi:DIR`` (one process, interpreter
start-up and imports included) with the runner's ``parse`` mode: hdi-gen has no parse-only
flag, so it runs ``--dump-ast`` without ``-d`` (parse, import resolution and checks, the AST
printed to /dev/null, nothing generated), once per package directory as GN does. The two are
interleaved run by run (the load of a shared machine moves both alike); target: idlgen's CPU
at most hdi-gen's (issue 21).

    HDIGEN_BIN=/tmp/hdigen/out/bin/hdi-gen python bench/run.py hdigen
    BENCH_HDIGEN_ONLY=parse BENCH_REPEAT=5 HDIGEN_BIN=... python bench/run.py hdigen
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.common import Result

REPO = Path(__file__).resolve().parent.parent


def _shared() -> Path | None:
    env = os.environ.get("IDLGEN_SHARED")
    for cand in ([Path(env)] if env else []) + [
        REPO.parent / "shared",
        REPO.parent.parent / "shared",
    ]:
        if (cand / "corpus" / "hdi" / "drivers_interface").is_dir():
            return cand
    return None


def _cpu(argv: Sequence[str], env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + sys) of one run of ``argv`` and everything it spawns."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{argv[:3]} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(fn: Callable[[], float]) -> float:
    n = max(1, int(os.environ.get("BENCH_REPEAT", "3")))
    return statistics.median(fn() for _ in range(n))


def run() -> list[Result]:
    shared = _shared()
    if shared is None:
        return [Result("hdigen: corpus not found (shared/corpus/hdi)", 0.0, note="skipped")]
    corpus = shared / "corpus" / "hdi" / "drivers_interface"
    script = shared / "tools" / "hdigen" / "run-hdigen-corpus.sh"
    hdigen = os.environ.get("HDIGEN_BIN", "")
    have_peer = bool(hdigen) and Path(hdigen).is_file() and script.is_file()
    root = f"ohos.hdi:{corpus}"
    env = {**os.environ, "IDLGEN_CACHE_DIR": "", "PYTHONPATH": str(REPO)}
    idlgen = [sys.executable, "-m", "idlgen"]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-hdigen-") as tmp:
        work = Path(tmp)

        def fresh(p: Path) -> Path:
            shutil.rmtree(p, ignore_errors=True)
            for suffix in (".failed", ".stderr"):
                Path(f"{p}{suffix}").unlink(missing_ok=True)
            return p

        def peer(mode: str) -> float | None:
            if not have_peer:
                return None
            out = work / f"hdigen-{mode}"
            args = ["bash", str(script), hdigen, "hdigen", str(corpus), str(out)]
            if mode == "parse":
                args.append("parse")

            def once() -> float:
                fresh(out)
                return _cpu(args)

            return _median(once)

        def cold() -> float:
            out = fresh(work / "idlgen-gen")
            return _cpu(
                [*idlgen, "build", str(corpus), "--root", root, "--out", str(out), "-q"], env
            )

        def parse(e: dict[str, str] = env) -> float:
            return _cpu([*idlgen, "parse", str(corpus), "--root", root], e)

        peer_name = "hdi-gen (C++)" if have_peer else "hdi-gen: skipped (set HDIGEN_BIN)"
        if os.environ.get("BENCH_HDIGEN_ONLY") != "parse":  # =parse: the parse line alone
            gen_peer = peer("gen")
            t = _median(cold)
            results.append(
                Result(
                    "hdigen: 611-file corpus, generate, cold (CPU s)",
                    t,
                    peer_name,
                    gen_peer,
                    note=_target(t, gen_peer, 0.7, "cold CPU <= 0.7x hdi-gen"),
                )
            )
        # interleaved: hdi-gen, idlgen, hdi-gen, idlgen, ...
        n = max(1, int(os.environ.get("BENCH_REPEAT", "3")))
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(n):
            if have_peer:
                fresh(work / "hdigen-parse")
                theirs.append(
                    _cpu(
                        [
                            "bash",
                            str(script),
                            hdigen,
                            "hdigen",
                            str(corpus),
                            str(work / "hdigen-parse"),
                            "parse",
                        ]
                    )
                )
            ours.append(parse())
        t = statistics.median(ours)
        parse_peer = statistics.median(theirs) if theirs else None
        results.append(
            Result(
                "hdigen: 611-file corpus, parse + check (CPU s)",
                t,
                peer_name,
                parse_peer,
                note="no caches; "
                + _target(t, parse_peer, 1.0, "parse CPU <= 1.0x hdi-gen --dump-ast"),
            )
        )
    return results


def _target(t: float, peer: float | None, factor: float, what: str) -> str:
    if peer is None:
        return f"target {what}"
    return f"idlgen/hdi-gen = {t / peer:.2f}; target {what}: {'met' if t <= factor * peer else 'not met'}"
