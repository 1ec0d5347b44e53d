"""Shared test fixtures: the repository root and the optional ../shared corpora; the test tiers."""

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


#: The tests outside the default suite, by tier. Each tier is a pytest marker (registered in
#: ``pyproject.toml``, whose ``addopts`` deselects them all); ``.ci/run`` runs the default suite
#: and then every tier but ``heavy``. An entry is a test (``file::name``, every parameter), one
#: parametrized case (``file::name[id]``), or a directory (``dir/``). A test can also carry the
#: marker itself (``@pytest.mark.slow``). ``tests/test_tiers.py`` checks that every entry still
#: names a test. The README's "Tests" section says how to run each tier.
TIERS: dict[str, tuple[str, ...]] = {
    # building the wheel and installing it into fresh virtual environments (pip, venv)
    "install": (
        "tests/install/",
        "tests/test_ci_integration.py::test_pre_commit_try_repo_runs_both_hooks",
    ),
    # mypy --strict runs over idlgen and over generated code (each a cold mypy process)
    "mypy": (
        "tests/test_quality.py::test_idlgen_passes_mypy_strict",
        "tests/test_generate.py::test_generated_passes_mypy_strict_and_black",
        "tests/test_generate.py::test_user_code_gets_the_generated_types",
        "tests/fbs/test_codegen.py::test_generated_code_passes_mypy_strict",
        "tests/hdi/test_corpus_generate.py::test_sample_of_generated_corpus_passes_mypy_strict",
        "tests/security/test_generated_hostile_typecheck.py::test_hostile_names_typecheck",
    ),
    # long randomized runs: the black-model differential tests (random input laid out by
    # idlgen.backend.blackstyle and by black), long fuzz and kill loops, and the long
    # differential runs against external tools (flatc on monster_test and on a multi-MB model,
    # g++ on random enums)
    "slow": (
        "tests/test_black_stable.py::test_corpus_sample_is_black_stable",
        "tests/test_black_stable.py::test_configured_line_length_is_black_stable",
        "tests/test_black_stable.py::test_unformatted_and_stabilized_differ_only_in_layout",
        "tests/test_black_stable.py::test_layout_matches_black",
        "tests/test_black_stable.py::test_import_layout_matches_black",
        "tests/test_black_stable.py::test_def_layout_matches_black",
        "tests/test_black_stable.py::test_docstring_layout_matches_black",
        "tests/test_black_stable.py::test_assignment_layout_matches_black",
        "tests/test_black_stable.py::test_long_table_layout_matches_black",
        "tests/fbs/test_differential.py::test_random_values_agree_with_flatc[monster_test.fbs]",
        "tests/test_lalr.py::test_mutated_hdi_files_fail_as_lark_does",
        "tests/test_lalr.py::test_mutated_fbs_files_fail_as_lark_does",
        "tests/security/test_generated_invariant.py::test_fbs_build_fails_located_or_imports_inert",
        "tests/security/test_generated_invariant.py::test_hdi_build_fails_located_or_imports_inert",
        "tests/security/test_atomic.py::test_sigkill_at_random_instants_leaves_old_or_new_tree",
        "tests/security/test_cli_fuzz.py::test_hostile_schemas",
        "tests/security/test_cli_fuzz.py::test_hostile_file_names",
        "tests/security/test_cli_fuzz.py::test_mutated_corpus_packages",
        "tests/fbs/test_scale.py::test_large_model_agrees_with_flatc",
        "tests/hdi/test_enum_eval.py::test_enum_values_match_gxx",
    ),
    # full-size models; also needs IDLGEN_HEAVY_MODELS=1 (and network for the real-model corpus)
    "heavy": (
        "tests/models/test_onnx_import.py::test_full_size_models",
        "tests/models/test_real_models.py",
    ),
}


def tier_entry_matches(entry: str, nodeid: str) -> bool:
    if entry.endswith("/"):
        return nodeid.startswith(entry)
    return nodeid == entry or nodeid.startswith((entry + "[", entry + "::"))


def pytest_itemcollected(item: pytest.Item) -> None:
    """Give the tests named in ``TIERS`` their tier's marker (before ``-m`` selects)."""
    for tier, entries in TIERS.items():
        if any(tier_entry_matches(e, item.nodeid) for e in entries):
            item.add_marker(getattr(pytest.mark, tier))
