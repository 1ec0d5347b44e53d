"""The FlatBuffers runtime (and generated code using it) works without the compiler's
dependencies: lark, jinja2 and black are blocked in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

from .common import REPO

_SCRIPT = """
import sys
for m in ("lark", "jinja2", "black"):
    sys.modules[m] = None
import generated.armnnSerializer as a
g = a.SerializedGraph(
    layers=[a.AnyLayer(layer=a.InputLayer(base=a.BindableLayerBase(layerBindingId=3)))],
    inputIds=[1, 2],
)
assert a.SerializedGraph.from_json(g.to_json()) == g
assert a.SerializedGraph.from_json('{inputIds: ["0x10", 2,], /* c */ layers: []}').inputIds == [16, 2]
assert a.SerializedGraph.from_flatbuffer(g.to_flatbuffer()) == g
assert not any(
    m.startswith(("idlgen.frontend.fbs", "idlgen.frontend.hdi", "lark")) and sys.modules[m] for m in sys.modules
), sorted(
    m for m in sys.modules if m.startswith("idlgen")
)
print("ok")
"""


def test_generated_fbs_code_needs_no_compiler() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
