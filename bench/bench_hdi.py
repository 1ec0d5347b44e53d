"""HDI front end and build: parse + check the 611-file corpus; cold and warm `idlgen build`.

No peer runs here (hdi-gen is C++ inside the OpenHarmony tree), so these lines carry idlgen's
figures only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Result

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus" / "hdi" / "drivers_interface"


def _best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    subprocess.run(
        [sys.executable, "-m", "idlgen", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
    )


def run() -> list[Result]:
    results: list[Result] = []
    if CORPUS.exists():
        from idlgen.frontend.hdi.loader import load

        files = sorted(CORPUS.rglob("*.idl"))
        load(files[:5], roots={"ohos.hdi": CORPUS})  # build the parser once
        t = _best(lambda: load(files, roots={"ohos.hdi": CORPUS}))
        results.append(Result("hdi: parse+check 611 corpus files (in-process)", t))
        t = _best(lambda: _cli("parse", *map(str, files), "--root", f"ohos.hdi:{CORPUS}", cwd=REPO))
        results.append(Result("hdi: `idlgen parse` 611 corpus files (process)", t))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "gen"

        def cold(cache: str) -> None:
            shutil.rmtree(out, ignore_errors=True)
            _cli("build", "--out", str(out), "-q", cwd=REPO, env={"IDLGEN_CACHE_DIR": cache})

        t = _best(lambda: cold(""), repeat=2)
        results.append(Result("build: repository schemas, cold (process)", t, note="no caches"))
        _cli("build", "--out", str(out), "-q", cwd=REPO)
        warm = _best(lambda: _cli("build", "--out", str(out), "-q", cwd=REPO), repeat=5)
        results.append(Result("build: repository schemas, warm/no change (process)", warm))
    return results
