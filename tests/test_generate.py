"""Generated code: golden trees, behaviour of the generated classes, typing, determinism."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from idlgen.cli import main
from tests.conftest import REPO

CASES = REPO / "tests" / "cases"
UPDATE = os.environ.get("IDLGEN_UPDATE_SNAPSHOTS") == "1"


def _build(case: str, out: Path) -> None:
    src = CASES / case
    rc = main(["build", str(src), "--root", f"ohos.hdi:{src}", "--out", str(out), "-q"])
    assert rc == 0


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.name != ".idlgen-cache.json"
    }


@pytest.mark.parametrize("case", ["hdi_basic"])
def test_golden_tree(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "gen"
    _build(case, out)
    got = _tree(out)
    expected_dir = CASES / case / "expected"
    if UPDATE:
        shutil.rmtree(expected_dir, ignore_errors=True)
        for rel, text in got.items():
            p = expected_dir / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
    want = _tree(expected_dir)
    assert sorted(got) == sorted(want)
    for rel in want:
        if got[rel] != want[rel]:
            diff = "".join(
                difflib.unified_diff(
                    want[rel].splitlines(True), got[rel].splitlines(True), rel, rel
                )
            )
            pytest.fail(f"generated {rel} differs from the golden file:\n{diff}")


@pytest.fixture(scope="module")
def basic(tmp_path_factory: pytest.TempPathFactory) -> object:
    root = tmp_path_factory.mktemp("basic")
    _build("hdi_basic", root / "genbasic")
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("genbasic.ohos.hdi.foo.v1_0")
    finally:
        sys.path.remove(str(root))


def test_keyword_fields(basic: object) -> None:
    k = basic.Keywords()  # type: ignore[attr-defined]
    assert (k.global_, k.from_, k.class_, k.to_dict_) == (False, 0, "", 0)
    d = k.to_dict()
    assert set(d) == {"global", "from", "class", "to_dict", "lambda"}
    recorded = {f.name: f.metadata.get("schema_name") for f in dataclasses.fields(k)}
    assert recorded == {
        "global_": "global",
        "from_": "from",
        "class_": "class",
        "to_dict_": "to_dict",
        "lambda_": "lambda",
    }
    k2 = basic.Keywords.from_dict({"global": True, "lambda": "GREEN", "to_dict": 7})  # type: ignore[attr-defined]
    assert k2.global_ is True and k2.lambda_ == basic.Color.GREEN and k2.to_dict_ == 7  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown field"):
        basic.Keywords.from_dict({"global_": True})  # type: ignore[attr-defined]


def test_enum_values_and_unknown_values(basic: object) -> None:
    color = basic.Color  # type: ignore[attr-defined]
    assert [(m.name, m.value) for m in color] == [
        ("RED", 0),
        ("GREEN", 5),
        ("BLUE", 6),
        ("MIXED", 10),
    ]
    unknown = color(99)
    assert unknown == 99 and isinstance(unknown, color) and unknown.name == "UNKNOWN_99"
    assert basic.Flags.FLAG_ALL == 3  # type: ignore[attr-defined]


def test_docstrings_survive_escaping(basic: object) -> None:
    doc = basic.Color.__doc__  # type: ignore[attr-defined]
    assert "a backslash \\ and Doxygen math \\f$x^2\\f$" in doc
    assert 'triple quotes: """ and a trailing quote"' in doc


def test_dict_round_trip_and_containers(basic: object) -> None:
    e = basic.Everything.from_dict(  # type: ignore[attr-defined]
        {
            "b": -3,
            "raw": [1, -1, 255],
            "grid": [[1, 2], [3]],
            "names": ["a", "b"],
            "table": [["k", [1, 2]]],
            "origin": {"x": 1.5},
            "path": [{"x": 1.0, "y": 2.0}],
            "flags": "FLAG_B",
            "fd": 4,
        }
    )
    assert e.raw == b"\x01\xff\xff" and e.table == {"k": [1, 2]} and e.flags == 2
    assert basic.Everything.from_dict(e.to_dict()) == e  # type: ignore[attr-defined]
    # Defaults are fresh objects, not shared between instances.
    a, b = basic.Everything(), basic.Everything()  # type: ignore[attr-defined]
    a.ints.append(1)
    assert b.ints == [] and a.origin is not b.origin
    assert basic.Derived().to_dict() == {"x": 0.0, "y": 0.0, "z": 0.0}  # type: ignore[attr-defined]


def test_interfaces_are_protocols(tmp_path: Path) -> None:
    src = CASES / "hdi_basic"
    out = tmp_path / "g"
    assert main(["build", str(src), "--root", f"ohos.hdi:{src}", "--out", str(out), "-q"]) == 0
    text = (out / "ohos/hdi/foo/v1_1/i_foo.py").read_text()
    assert "def Send_4(self, p: Point, retries: int) -> str:" in text
    assert 'DESCRIPTOR: ClassVar[str] = "ohos.hdi.foo.v1_1.IFoo"' in text
    v10 = (out / "ohos/hdi/foo/v1_0/i_foo.py").read_text()
    assert "def Stats(self) -> tuple[int, Everything]:" in v10
    assert "def GetVersion(self) -> tuple[int, int]:" in v10


def test_determinism_across_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for seed in ("0", "4242"):
        out = tmp_path / f"gen{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "idlgen",
                "build",
                "schemas",
                "tests/cases/hdi_basic",
                "--root",
                "ohos.hdi:schemas/hdi",
                "--root",
                "ohos.hdi.foo:tests/cases/hdi_basic/foo",
                "--out",
                str(out),
                "-q",
            ],
            cwd=REPO,
            env=env,
            check=True,
        )
        outs.append(_tree(out))
    assert outs[0] == outs[1]


def test_committed_generated_is_fresh() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "idlgen", "check"], cwd=REPO, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_generated_passes_mypy_strict_and_black() -> None:
    r = subprocess.run(
        # idlgen's own modules are checked by their own test; here only the generated code.
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "generated"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--quiet", "--line-length", "100", "generated"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


USER_CODE = """
from typing import assert_type

from generated.armnnSerializer import SerializedGraph
from generated.ohos.hdi.nnrt.v2_1 import Abs, ActivationType, Activation, Model

assert_type(Abs.from_parcel(bytes(8)), Abs)
assert_type(Model.from_parcel(Model().to_parcel([])), Model)
assert_type(Activation.from_dict({"alpha": 1.0}).activationType, ActivationType)
assert_type(SerializedGraph.from_flatbuffer(SerializedGraph().to_flatbuffer()), SerializedGraph)
assert_type(SerializedGraph.from_json("{}"), SerializedGraph)
"""


def test_user_code_gets_the_generated_types(tmp_path: Path) -> None:
    """Classmethods inherited from the runtime base classes return the generated class."""
    probe = tmp_path / "probe.py"
    probe.write_text(USER_CODE)
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", str(probe)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(REPO)},
    )
    assert r.returncode == 0, r.stdout


def test_repository_package_imports() -> None:
    from generated.ohos.hdi.nnrt.v2_1 import AvgPoolFusion, Model, NodeType

    assert AvgPoolFusion().global_ is False
    assert NodeType.NODE_TYPE_AVGPOOL_FUSION == 17
    assert Model().nodes == []
