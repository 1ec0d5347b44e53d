"""idlgen's own code: strictly typed, and every subpackage shipped in the wheel."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import REPO


def test_idlgen_passes_mypy_strict() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "idlgen"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-4000:]


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "idlgen").rglob("__init__.py")
    }
    assert found <= listed, sorted(found - listed)
