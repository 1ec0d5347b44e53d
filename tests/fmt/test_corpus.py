"""``idlgen fmt`` on every real schema: the 611 OpenHarmony HDI files, flatc's test schemas and
the real-world FlatBuffers schemas of ../shared, and this repository's ``schemas/``.

On every file: it formats, the IR of the formatted tree equals the original's (positions
aside), every comment is kept in order, and a second run changes nothing. Files with syntax
errors (hdi-gen's own failure cases) are left as they are.
"""

from __future__ import annotations

from pathlib import Path

from idlgen.fmt import format_text
from idlgen.frontend.loader import load
from tests.conftest import HDI_CORPUS, HDIGEN_TESTS, REPO, SHARED, need
from tests.fmt.common import format_tree, same_ir

FBS_CORPUS = SHARED / "corpus" / "fbs"


def test_hdi_corpus(tmp_path: Path) -> None:
    root = need(HDI_CORPUS)
    files = sorted(root.rglob("*.idl"))
    assert len(files) == 611
    counts = format_tree(root, tmp_path, files)
    assert counts["changed"] > 500  # the corpus is far from one layout
    a = load(files, roots={"ohos.hdi": root})
    b = load(sorted(tmp_path.rglob("*.idl")), roots={"ohos.hdi": tmp_path})
    assert len(a.schema.files) == 611
    same_ir(a, b, root, tmp_path)


def test_hdigen_cases_format_or_stay_untouched(tmp_path: Path) -> None:
    root = need(HDIGEN_TESTS)
    bad = 0
    for f in sorted(root.rglob("*.idl")):
        text = f.read_bytes().decode("utf-8")
        r = format_text(text, str(f))
        if not r.ok:
            bad += 1
            assert r.text == text and r.diagnostics.has_errors
            continue
        assert format_text(r.text, str(f)).text == r.text
    assert bad == 3  # the empty file, the two files without 'package'


def _fbs_include_dirs(schema: Path, root: Path) -> list[Path]:
    """The -I paths flatc's own test scripts use (as in tests/fbs/common.py), below ``root``."""
    tests = root / "flatbuffers-tests"
    if (root / "real") in schema.parents:
        return [schema.parent]
    return [tests, tests / "include_test", tests / "include_test" / "sub", root]


def test_fbs_corpus(tmp_path: Path) -> None:
    root = need(FBS_CORPUS)
    files = sorted(root.rglob("*.fbs"))
    assert len(files) >= 70
    counts = format_tree(root, tmp_path, files)
    assert counts["changed"] > 30
    for f in files:
        g = tmp_path / f.relative_to(root)
        a = load([f], include_dirs=_fbs_include_dirs(f, root))
        b = load([g], include_dirs=_fbs_include_dirs(g, tmp_path))
        same_ir(a, b, root, tmp_path)


def test_repo_schemas(tmp_path: Path) -> None:
    root = REPO / "schemas"
    files = sorted([*root.rglob("*.idl"), *root.rglob("*.fbs")])
    format_tree(root, tmp_path, files)

    def load_tree(base: Path) -> object:
        paths = sorted([*base.rglob("*.idl"), *base.rglob("*.fbs")])
        return load(paths, roots={"ohos.hdi": base / "hdi"}, include_dirs=[base / "fbs"])

    a, b = load_tree(root), load_tree(tmp_path)
    assert a.ok  # type: ignore[attr-defined]
    same_ir(a, b, root, tmp_path)  # type: ignore[arg-type]
