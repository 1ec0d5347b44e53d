"""Real schema histories: NNRt HDI v1_0 → v2_0 → v2_1 and ArmNN's FlatBuffers releases."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from idlgen.diff import Finding, Severity, compare
from idlgen.diff.policy import hdi_version_policy
from idlgen.diff.sources import load_paths

from ._flatc import covers, flatc_message

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
if not SHARED.is_dir():
    pytest.skip("../shared (reference corpus) is absent", allow_module_level=True)

DI = SHARED / "corpus" / "hdi" / "drivers_interface"
NNRT = DI / "nnrt"
ARMNN = SHARED / "corpus" / "fbs" / "real" / "armnn"
HISTORY = [
    ARMNN / "history" / f"{n}.fbs"
    for n in (
        "Schema_2019-01-30_969eea33",
        "ArmnnSchema_19_02",
        "ArmnnSchema_19_05",
        "ArmnnSchema_19_08",
        "ArmnnSchema_19_11",
        "ArmnnSchema_20_02",
        "ArmnnSchema_20_05",
        "ArmnnSchema_20_08",
    )
] + [ARMNN / "ArmnnSchema.fbs"]


def _load(path: Path):  # type: ignore[no-untyped-def]
    res = load_paths([path], roots={"ohos.hdi": DI})
    assert res.ok, res.diagnostics
    return res.schema


@pytest.fixture(scope="module")
def nnrt() -> dict[str, object]:
    return {v: _load(NNRT / v) for v in ("v1_0", "v2_0", "v2_1")}


def _by(findings: list[Finding]) -> dict[tuple[str, str], Finding]:
    return {(f.rule, f.path): f for f in findings}


def test_nnrt_v1_0_to_v2_0(nnrt) -> None:  # type: ignore[no-untyped-def]
    f = compare(nnrt["v1_0"], nnrt["v2_0"])
    by = _by(f)
    assert "command id 13" in by[("HDI-M-10", "INnrtDevice.PrepareOfflineModel")].message
    assert "from 13 to 14" in by[("HDI-M-02", "INnrtDevice.AllocateBuffer")].message
    assert "from 14 to 15" in by[("HDI-M-02", "INnrtDevice.ReleaseBuffer")].message
    gidr = by[("HDI-M-10", "IPreparedModel.GetInputDimRanges")]
    assert "`Run`" in gidr.message
    assert "from 2 to 3" in by[("HDI-M-02", "IPreparedModel.Run")].message
    lost = by[("HDI-M-05", "IPreparedModel.Run.isOutputBufferEnough")]
    assert lost.new is None and lost.old is not None and lost.anchor is not None
    mp = by[("HDI-S-03", "MaxPoolFusion.roundMode")]
    assert "before `global`" in mp.message and mp.old is None and mp.new is not None
    assert ("HDI-S-02", "ModelConfig.extensions") in by
    breaking = {(x.rule, x.path) for x in f if x.severity is Severity.BREAKING}
    assert breaking == {
        ("HDI-M-10", "INnrtDevice.PrepareOfflineModel"),
        ("HDI-M-02", "INnrtDevice.AllocateBuffer"),
        ("HDI-M-02", "INnrtDevice.ReleaseBuffer"),
        ("HDI-M-10", "IPreparedModel.GetInputDimRanges"),
        ("HDI-M-02", "IPreparedModel.Run"),
        ("HDI-M-05", "IPreparedModel.Run.isOutputBufferEnough"),
        ("HDI-S-03", "MaxPoolFusion.roundMode"),
        ("HDI-S-02", "ModelConfig.extensions"),
        # ModelConfig was plain data (one raw block) and gained a Map member.
        ("HDI-S-07", "ModelConfig"),
    }
    # Locations point at the right lines of the right files.
    assert mp.new is not None and mp.new.file.endswith("v2_0/NodeAttrTypes.idl")
    src = Path(mp.new.file).read_text().splitlines()[mp.new.line - 1]
    assert "roundMode" in src
    pol = hdi_version_policy(nnrt["v1_0"], nnrt["v2_0"], f)
    assert pol is not None and pol.ok and "major bump" in pol.summary


def test_nnrt_v2_0_to_v2_1_is_additive_and_passes_minor_policy(nnrt) -> None:  # type: ignore[no-untyped-def]
    f = compare(nnrt["v2_0"], nnrt["v2_1"])
    assert {x.severity for x in f} == {Severity.INFO}
    rules = defaultdict(list)
    for x in f:
        rules[x.rule].append(x.path)
    assert set(rules) <= {"HDI-Y-01", "HDI-E-04", "HDI-D-02"}
    assert len(rules["HDI-Y-01"]) == 48
    node_types = [p for p in rules["HDI-E-04"] if p.startswith("NodeType.")]
    assert len(node_types) == 48 and "NodeType.NODE_TYPE_ABS" in node_types
    others = [p for p in rules["HDI-E-04"] if not p.startswith("NodeType.")]
    assert len(others) == 1 and others[0].startswith("ReduceMode.")
    pol = hdi_version_policy(nnrt["v2_0"], nnrt["v2_1"], f)
    assert pol is not None and pol.ok and not pol.findings


def test_nnrt_reverse_is_a_policy_error(nnrt) -> None:  # type: ignore[no-untyped-def]
    f = compare(nnrt["v2_1"], nnrt["v2_0"])
    pol = hdi_version_policy(nnrt["v2_1"], nnrt["v2_0"], f)
    assert pol is not None and not pol.ok
    assert [x.rule for x in pol.findings] == ["HDI-PKG-02"]
    # Removing the 48 types and enum values is breaking in this direction.
    assert sum(x.rule == "HDI-E-03" for x in f) == 49


def test_nnrt_minor_bump_with_break_violates_policy(nnrt) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    # v1_0's content relabelled v2_0, then v2_1: the same breaking changes under a minor bump.
    old = nnrt["v1_0"]
    fake = dataclasses.replace(
        old,
        files=tuple(dataclasses.replace(x, version=(2, 0)) for x in old.files),
    )
    f = compare(fake, nnrt["v2_1"])
    pol = hdi_version_policy(fake, nnrt["v2_1"], f)
    assert pol is not None and not pol.ok and [x.rule for x in pol.findings] == ["HDI-PKG-01"]


# ---- ArmNN history vs flatc --conform -------------------------------------------------------

PAIRS = list(zip(HISTORY, HISTORY[1:])) + [(HISTORY[3], HISTORY[-1])]


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not on PATH")
@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a.stem}->{b.stem}" for a, b in PAIRS])
def test_armnn_flatc_breaks_are_among_ours(old: Path, new: Path) -> None:
    findings = compare(_load(old), _load(new))
    msg = flatc_message(old, new)
    if msg is not None:
        assert covers(msg, findings), (msg, [(f.rule, f.path) for f in findings][:40])


@pytest.mark.skipif(shutil.which("flatc") is None, reason="flatc not on PATH")
def test_armnn_history_has_real_breaks_flatc_confirms() -> None:
    # Guard against the comparison above passing vacuously: three transitions break conform.
    msgs = [flatc_message(a, b) for a, b in PAIRS]
    assert sum(m is not None for m in msgs) >= 3


def test_armnn_namespace_move_is_still_diffed() -> None:
    f = compare(_load(HISTORY[0]), _load(HISTORY[1]))
    rules = {(x.rule, x.path) for x in f}
    assert ("FBS-F-03", "armnnSerializer") in rules
    moved = next(x for x in f if x.rule == "FBS-F-03")
    assert "armnn.armnnSerializer" in moved.message
    # Types were matched across the move: no deletions, but real changes inside them.
    assert not [x for x in f if x.rule == "FBS-Y-01"]
    assert ("FBS-U-01", "Layer.AdditionLayer") in rules
    assert ("FBS-E-01", "LayerType.Output") in rules


def test_armnn_19_08_to_current() -> None:
    f = compare(_load(HISTORY[3]), _load(HISTORY[-1]))
    by = _by(f)
    rename = by[("FBS-T-05", "ActivationDescriptor.activationFunction")]
    assert rename.severity is Severity.WARNING and "renamed from `function`" in rename.message
    assert by[("FBS-T-12", "SerializedGraph.inputIds")].severity is Severity.WARNING
    assert not [x for x in f if x.severity is Severity.BREAKING]


def test_armnn_19_02_to_19_05_reports_every_shifted_slot() -> None:
    f = compare(_load(HISTORY[1]), _load(HISTORY[2]))
    paths = {x.path for x in f if x.rule == "FBS-T-02"}
    # flatc stops at dilationX; both descriptors gained two mid-table fields.
    for t in ("Convolution2dDescriptor", "DepthwiseConvolution2dDescriptor"):
        assert {f"{t}.dilationX", f"{t}.dilationY", f"{t}.biasEnabled", f"{t}.dataLayout"} <= paths


# ---- self-diff over the whole corpus --------------------------------------------------------


def _hdi_dirs() -> list[Path]:
    return sorted({p.parent for p in DI.rglob("*.idl")})


def test_self_diff_is_empty_for_every_hdi_package() -> None:
    dirs = _hdi_dirs()
    files = 0
    for d in dirs:
        a = load_paths([d], roots={"ohos.hdi": DI})
        b = load_paths([d], roots={"ohos.hdi": DI})  # an independent second load
        assert a.ok, (d, a.diagnostics[:1])
        files += len(a.inputs)
        assert compare(a.schema, b.schema) == [], d
    assert files == 611


def test_self_diff_is_empty_for_every_loadable_fbs_schema() -> None:
    root = SHARED / "corpus" / "fbs"
    n = 0
    for p in sorted(root.rglob("*.fbs")):
        inc = [p.parent]
        a = load_paths([p], include_dirs=inc)
        if not a.ok:
            continue  # deliberately malformed inputs
        b = load_paths([p], include_dirs=inc)
        assert compare(a.schema, b.schema) == [], p
        n += 1
    assert n >= 50


# ---- HDI minor versions that `extends` the previous one --------------------------------------

EXTENDS_PAIRS = [
    ("sensor/v2_0", "sensor/v2_1"),
    ("face_auth/v1_0", "face_auth/v1_1"),
    ("display/composer/v1_0", "display/composer/v1_1"),
    ("display/composer/v1_1", "display/composer/v1_2"),
    ("user_auth/v1_0", "user_auth/v1_1"),
]


@pytest.mark.parametrize("old,new", EXTENDS_PAIRS)
def test_minor_version_by_extends_is_compatible(old: str, new: str) -> None:
    # The new package declares `interface IFoo extends vX_Y.IFoo` and loads the old one too;
    # command ids continue across the parent, so nothing may be reported as moved or deleted.
    a, b = _load(DI / old), _load(DI / new)
    f = compare(a, b)
    assert not [x for x in f if x.severity is Severity.BREAKING], [(x.rule, x.path) for x in f]
    assert any(x.rule == "HDI-M-03" for x in f) or any(x.rule == "HDI-Y-01" for x in f)
    pol = hdi_version_policy(a, b, f)
    assert pol is not None and pol.ok


def test_real_break_in_a_minor_version_is_caught() -> None:
    # thermal v1_1 inserted IsolateCpu before Register/Unregister in a minor version.
    a, b = _load(DI / "thermal" / "v1_0"), _load(DI / "thermal" / "v1_1")
    f = compare(a, b)
    assert {(x.rule, x.path) for x in f if x.severity is Severity.BREAKING} == {
        ("HDI-M-10", "IThermalInterface.IsolateCpu"),
        ("HDI-M-02", "IThermalInterface.Register"),
        ("HDI-M-02", "IThermalInterface.Unregister"),
    }
    pol = hdi_version_policy(a, b, f)
    assert pol is not None and not pol.ok and pol.findings[0].rule == "HDI-PKG-01"


def test_older_minor_copy_reached_is_a_warning_not_a_deletion() -> None:
    # camera v1_5 reaches v1_4.EncodeType (with ENCODE_TYPE_DNG_XDRAW); v1_6 only imports the
    # v1_3 copy. That is not v1_6 deleting a value: one warning, nothing breaking.
    a, b = _load(DI / "camera" / "v1_5"), _load(DI / "camera" / "v1_6")
    f = compare(a, b)
    assert not [x for x in f if x.severity is Severity.BREAKING], [
        (x.rule, x.path) for x in f if x.severity is Severity.BREAKING
    ]
    enc = [x for x in f if x.path == "EncodeType"]
    assert [(x.rule, x.severity) for x in enc] == [("HDI-Y-02", Severity.WARNING)]
    assert "v1_3.EncodeType" in enc[0].message and "v1_4.EncodeType" in enc[0].message
