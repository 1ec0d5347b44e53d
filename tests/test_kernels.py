"""The generated NNRt kernels module and its build-time checks."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from idlgen.cli import main
from tests.conftest import REPO


def _copy_nnrt(tmp_path: Path) -> Path:
    root = tmp_path / "hdi"
    shutil.copytree(REPO / "schemas" / "hdi" / "nnrt" / "v2_1", root / "nnrt" / "v2_1")
    return root


def _build(root: Path, out: Path, *kernels: str) -> int:
    """``idlgen build`` of ``root``; the NNRt v2_1 package gets kernels unless others are named."""
    flags = [f"--kernels={k}" for k in kernels or ("ohos.hdi.nnrt.v2_1",)]
    return main(["build", str(root), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q", *flags])


def test_kernels_cover_every_operator() -> None:
    from generated.ohos.hdi.nnrt.v1_0 import kernels as k10
    from generated.ohos.hdi.nnrt.v2_1 import NodeType, kernels

    assert len(kernels.KERNELS) == 96 and len(k10.KERNELS) == 48
    assert set(kernels.KERNELS) == set(NodeType) - {NodeType.NODE_TYPE_NONE}
    assert set(kernels.ATTRIBUTE_TYPES) == set(kernels.KERNELS)


def test_stub_runs_the_runtime_and_nodeattr_round_trips() -> None:
    from generated.ohos.hdi.nnrt.v2_1 import Activation, ActivationType, NodeType, kernels

    attrs = Activation(activationType=ActivationType.ACTIVATION_TYPE_RELU6)
    data = kernels.encode_node_attr(attrs)
    assert len(data) == 24
    assert kernels.decode_node_attr(NodeType.NODE_TYPE_ACTIVATION, data) == attrs
    (y,) = kernels.KERNELS[NodeType.NODE_TYPE_ACTIVATION](
        attrs, [np.array([-1.0, 3.0, 9.0], np.float32)]
    )
    assert y.tolist() == [0.0, 3.0, 6.0]


def test_unbound_schema_field_fails_the_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy_nnrt(tmp_path)
    f = root / "nnrt/v2_1/NodeAttrTypes.idl"
    text = f.read_text()
    at = text.index("{", text.index("struct AvgPoolFusion"))
    f.write_text(text[: at + 1] + "\n    float ceilingBias;" + text[at + 1 :])
    assert _build(root, tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert "error[KRN003]" in err and "AvgPoolFusion.ceilingBias" in err
    assert "float ceilingBias;" in err  # the caret points at the new field
    assert not (tmp_path / "out").exists()


def test_struct_without_node_type_fails_the_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy_nnrt(tmp_path)
    f = root / "nnrt/v2_1/NodeAttrTypes.idl"
    f.write_text(f.read_text() + "\nstruct Frobnicate { long amount; };\n")
    assert _build(root, tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert "error[KRN001]: attribute struct 'Frobnicate' has no NodeType member" in err


_BLUR = """package ohos.hdi.blur.v1_0;

enum NodeType { NODE_TYPE_NONE = 0, NODE_TYPE_BLUR = 1 };

struct Blur { float radius; int passes; };
"""


def _blur(tmp_path: Path) -> Path:
    root = tmp_path / "hdi"
    (root / "blur" / "v1_0").mkdir(parents=True)
    (root / "blur" / "v1_0" / "Types.idl").write_text(_BLUR)
    return root


def test_a_package_not_selected_is_plain_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's package whose enum happens to be called NodeType, with a struct named after a
    member, is not NNRt: no binding check (Blur is in no binding table), no kernels module."""
    root = _blur(tmp_path)
    out = tmp_path / "gen"
    assert main(["build", str(root), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q"]) == 0
    pkg = out / "ohos" / "hdi" / "blur" / "v1_0"
    assert not (pkg / "kernels.py").exists()
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("gen.ohos.hdi.blur.v1_0")
    try:
        assert mod.Blur(radius=1.5).to_dict() == {"radius": 1.5, "passes": 0}
        assert mod.NodeType.NODE_TYPE_BLUR == 1
    finally:
        for name in [m for m in sys.modules if m == "gen" or m.startswith("gen.")]:
            del sys.modules[name]


def test_nnrt_packages_get_kernels_when_nothing_is_selected(tmp_path: Path) -> None:
    """The contract's case: building NNRt's HDI with no kernels key and no flag gives its
    packages a kernels module, identical to the committed one."""
    root = _copy_nnrt(tmp_path)
    out = tmp_path / "out"
    args = ["build", str(root), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q"]
    assert main(args) == 0
    body = (out / "ohos/hdi/nnrt/v2_1/kernels.py").read_text().split("\n", 1)[1]
    committed = REPO / "generated/ohos/hdi/nnrt/v2_1/kernels.py"
    assert body == committed.read_text().split("\n", 1)[1]


def test_nnrt_types_alone_is_plain_schema_by_default(tmp_path: Path) -> None:
    """NnrtTypes.idl declares NodeType but not the operator structs: with nothing selected, a
    build of it alone has no kernels module and no binding errors."""
    root = tmp_path / "hdi"
    (root / "nnrt" / "v2_1").mkdir(parents=True)
    shutil.copy(REPO / "schemas/hdi/nnrt/v2_1/NnrtTypes.idl", root / "nnrt/v2_1")
    out = tmp_path / "out"
    args = ["build", str(root), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q"]
    assert main(args) == 0
    assert (out / "ohos/hdi/nnrt/v2_1/nnrt_types.py").is_file()
    assert not (out / "ohos/hdi/nnrt/v2_1/kernels.py").exists()


def test_selected_packages_get_kernels(tmp_path: Path) -> None:
    root = _copy_nnrt(tmp_path)
    shutil.copytree(REPO / "schemas/hdi/nnrt/v1_0", root / "nnrt/v1_0")
    out = tmp_path / "out"
    assert _build(root, out, "ohos.hdi.nnrt.v1_0") == 0
    assert (out / "ohos/hdi/nnrt/v1_0/kernels.py").is_file()
    assert not (out / "ohos/hdi/nnrt/v2_1/kernels.py").exists()
    committed = REPO / "generated/ohos/hdi/nnrt/v1_0/kernels.py"
    body = (out / "ohos/hdi/nnrt/v1_0/kernels.py").read_text().split("\n", 1)[1]
    assert body == committed.read_text().split("\n", 1)[1]  # all but the header's paths


def test_selecting_a_package_that_is_not_built_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy_nnrt(tmp_path)
    assert _build(root, tmp_path / "out", "ohos.hdi.nnrt.v2_2") == 2
    err = capsys.readouterr().err
    assert "'ohos.hdi.nnrt.v2_2' is not an HDI package of this build" in err
    assert "did you mean 'ohos.hdi.nnrt.v2_1'?" in err
    assert not (tmp_path / "out" / "ohos").exists()


def test_unknown_kernels_in_the_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _blur(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.idlgen]\ninputs = ["hdi"]\nout = "gen"\nroots = ["ohos.hdi:hdi"]\n'
        'kernels = ["ohos.hdi.nnrt.v2_1"]\n'
    )
    monkeypatch.chdir(tmp_path)
    assert main(["build", "-q"]) == 2
    assert "kernels: 'ohos.hdi.nnrt.v2_1' is not an HDI package" in capsys.readouterr().err
    # The package exists but is not NNRt.
    (tmp_path / "pyproject.toml").write_text(
        (tmp_path / "pyproject.toml").read_text().replace("nnrt.v2_1", "blur.v1_0")
    )
    (root / "blur/v1_0/Types.idl").write_text(_BLUR.replace("NodeType", "Kind"))
    assert main(["build", "-q"]) == 2
    assert "package 'ohos.hdi.blur.v1_0' declares no enum NodeType" in capsys.readouterr().err
    # Not a package name at all.
    (tmp_path / "pyproject.toml").write_text(
        (tmp_path / "pyproject.toml").read_text().replace("blur.v1_0", "blur..v1_0")
    )
    assert main(["build", "-q"]) == 2
    assert "'ohos.hdi.blur..v1_0' is not a package name" in capsys.readouterr().err


def test_a_missing_runtime_is_an_error_not_a_silent_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kernels were asked for: when the binding table cannot be imported the build fails
    (exit 123 here: a broken installation), it never quietly leaves the kernels out."""
    root = _copy_nnrt(tmp_path)
    import idlgen.runtime

    monkeypatch.delattr(idlgen.runtime, "bindings", raising=False)
    monkeypatch.setitem(sys.modules, "idlgen.runtime.bindings", None)
    assert _build(root, tmp_path / "out") == 123
    assert "idlgen.runtime.bindings" in capsys.readouterr().err
    assert not (tmp_path / "out" / "ohos").exists()


def test_changing_the_selection_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    root = _copy_nnrt(tmp_path)
    out = tmp_path / "out"
    kernels = out / "ohos/hdi/nnrt/v2_1/kernels.py"
    assert _build(root, out) == 0 and kernels.is_file()
    # the same inputs, configured with kernels turned off
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(
        f'[tool.idlgen]\ninputs = ["{root.name}"]\nout = "{out.name}"\n'
        f'roots = ["ohos.hdi:{root.name}"]\nkernels = []\n',
        encoding="utf-8",
    )
    assert main(["build", "--config", str(cfg), "-q"]) == 0
    assert not kernels.exists()  # removed: the previous build's file, no longer produced
    assert _build(root, out) == 0 and kernels.is_file()
