"""Shared test fixtures: the repository root and the optional ../shared corpora."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = (REPO.parent / "shared").resolve()
HDI_CORPUS = SHARED / "corpus" / "hdi" / "drivers_interface"
HDIGEN_TESTS = SHARED / "corpus" / "hdi" / "hdi-gen-tests" / "test"


def need(path: Path) -> Path:
    """Skip the calling test when a ../shared resource is absent."""
    if not path.exists():
        pytest.skip(f"{path} not available (../shared is optional)")
    return path
