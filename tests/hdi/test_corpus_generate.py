"""The whole 611-file corpus generates into a package that imports and type-checks."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from idlgen.cli import main
from tests.conftest import HDI_CORPUS, REPO, need


@pytest.fixture(scope="module")
def corpus_pkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = need(HDI_CORPUS)
    out = tmp_path_factory.mktemp("corpus") / "hdicorpus"
    assert main(["build", str(root), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q"]) == 0
    return out


def test_every_generated_module_imports(corpus_pkg: Path) -> None:
    sys.path.insert(0, str(corpus_pkg.parent))
    try:
        modules = sorted(corpus_pkg.rglob("*.py"))
        assert len(modules) > 800
        for p in modules:
            parts = p.relative_to(corpus_pkg.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            importlib.import_module(name)
    finally:
        sys.path.remove(str(corpus_pkg.parent))


def test_sample_of_generated_corpus_passes_mypy_strict(corpus_pkg: Path) -> None:
    # Every package that has interfaces, unions, sequenceables or extended enums, plus a spread
    # of the rest: the whole tree takes minutes, this sample covers every construct.
    wanted = [
        "ril/v1_0",
        "camera/v1_3",
        "sensor/v2_1",
        "codec/v4_0",
        "display/composer/v1_2",
        "audio/v1_0",
        "nnrt/v2_1",
        "usb/v1_0",
        "wlan/chip/v1_0",
        "drm/v1_1",
    ]
    targets = [
        str(corpus_pkg / "ohos" / "hdi" / w)
        for w in wanted
        if (corpus_pkg / "ohos/hdi" / w).is_dir()
    ]
    assert len(targets) == len(wanted)
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", *targets],
        cwd=corpus_pkg.parent,
        capture_output=True,
        text=True,
        env={"MYPYPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stdout[-3000:]
