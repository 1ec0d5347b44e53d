"""The generated NNRt kernels module and its build-time checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from idlgen.cli import main
from tests.conftest import REPO


def _copy_nnrt(tmp_path: Path) -> Path:
    root = tmp_path / "hdi"
    shutil.copytree(REPO / "schemas" / "hdi" / "nnrt" / "v2_1", root / "nnrt" / "v2_1")
    return root


def _build(root: Path, out: Path) -> int:
    return main(["build", str(root), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q"])


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
