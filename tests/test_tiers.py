"""The test tiers stay consistent: ``TIERS`` (tests/conftest.py) names real tests, pyproject
registers and deselects exactly those markers, and ``.ci/run`` runs every tier but ``heavy``."""

from __future__ import annotations

import ast
import re
import shlex
import tomllib

from tests.conftest import REPO, TIERS, tier_entry_matches

OPT_IN_BY_CI = {"heavy"}  # needs network model downloads: not run by .ci/run


def _functions(path: str) -> set[str]:
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    return {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def test_every_tier_entry_names_a_test() -> None:
    missing = []
    for tier, entries in TIERS.items():
        for entry in entries:
            path, _, name = entry.partition("::")
            if entry.endswith("/"):
                ok = (REPO / path).is_dir() and any((REPO / path).rglob("test_*.py"))
            elif not (REPO / path).is_file():
                ok = False
            else:
                ok = not name or name.partition("[")[0] in _functions(path)
            if not ok:
                missing.append(f"{tier}: {entry}")
    assert missing == []


def test_entry_matching() -> None:
    assert tier_entry_matches("tests/a.py::t", "tests/a.py::t")
    assert tier_entry_matches("tests/a.py::t", "tests/a.py::t[1-2]")
    assert not tier_entry_matches("tests/a.py::t", "tests/a.py::t_other")
    assert tier_entry_matches("tests/a.py", "tests/a.py::C::t")
    assert not tier_entry_matches("tests/a.py", "tests/a.pyx::t")
    assert tier_entry_matches("tests/install/", "tests/install/test_x.py::t")


def _pytest_config() -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["pytest"]["ini_options"]  # type: ignore[no-any-return]


def _words(expr: str) -> set[str]:
    return set(re.findall(r"\w+", expr)) - {"not", "and", "or"}


def test_pyproject_registers_and_deselects_the_tiers() -> None:
    ini = _pytest_config()
    markers = {str(m).partition(":")[0].strip() for m in ini["markers"]}  # type: ignore[attr-defined]
    assert markers == set(TIERS)
    opts = shlex.split(str(ini["addopts"]))
    expr = opts[opts.index("-m") + 1]
    assert expr.startswith("not ") and _words(expr) == set(TIERS)


def test_ci_runs_the_default_suite_and_every_tier_but_heavy() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    runs = [
        shlex.split(line.strip())
        for line in script.splitlines()
        if line.strip().startswith("run_pytest ")
    ]
    assert [r[1:] for r in runs if "-m" not in r] != [], "the default suite is not run"
    selected = {w for r in runs if "-m" in r for w in _words(r[r.index("-m") + 1])}
    assert selected == set(TIERS) - OPT_IN_BY_CI
