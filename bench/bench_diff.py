"""Schema diff end to end (load both versions, compare, render the markdown report).

Peer: ``flatc --conform OLD NEW`` on the same ArmNN pair (one process per run; it stops at the
first problem, so it does strictly less work). NNRt has no peer (OpenHarmony has no HDI diff).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bench.common import Result, timeit
from idlgen.diff import compare
from idlgen.diff.policy import hdi_version_policy
from idlgen.diff.report import Report, render_markdown
from idlgen.diff.sources import load_paths

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"


def _diff(old: Path, new: Path) -> int:
    lo = load_paths([old])
    ln = load_paths([new])
    findings = compare(lo.schema, ln.schema)
    pol = hdi_version_policy(lo.schema, ln.schema, findings)
    render_markdown(Report(str(old), str(new), findings, [], pol))
    return len(findings)


def run() -> list[Result]:
    out: list[Result] = []
    nnrt = SHARED / "corpus" / "hdi" / "drivers_interface" / "nnrt"
    if not nnrt.is_dir():
        nnrt = REPO / "schemas" / "hdi" / "nnrt"
    old, new = nnrt / "v1_0", nnrt / "v2_1"
    n = _diff(old, new)
    out.append(
        Result(
            "diff NNRt v1_0→v2_1 (10 .idl, parse+compare+markdown)",
            timeit(lambda: _diff(old, new), min_time=1.0, repeat=3),
            note=f"{n} findings",
        )
    )
    armnn = SHARED / "corpus" / "fbs" / "real" / "armnn"
    if armnn.is_dir():
        a_old, a_new = (
            armnn / "history" / "ArmnnSchema_19_08.fbs",
            armnn / "ArmnnSchema.fbs",
        )
        n = _diff(a_old, a_new)
        peer_s = None
        if shutil.which("flatc"):

            def flatc() -> None:
                subprocess.run(["flatc", "--conform", str(a_old), str(a_new)], capture_output=True)

            peer_s = timeit(flatc, min_time=1.0, repeat=3)
        out.append(
            Result(
                "diff ArmNN 19.08→current (parse+compare+markdown)",
                timeit(lambda: _diff(a_old, a_new), min_time=1.0, repeat=3),
                "flatc --conform" if peer_s is not None else "",
                peer_s,
                note=f"{n} findings; flatc reports 1",
            )
        )
    return out
