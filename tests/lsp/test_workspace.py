"""The server's workspace in process: open buffers override the disk for every importer, and an
edit re-checks only the edited file and the open files that import it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("lsprotocol")

from idlgen.diagnostics import Diagnostics  # noqa: E402
from idlgen.frontend import load  # noqa: E402
from idlgen.lsp.workspace import Workspace  # noqa: E402

BASE = "package demo.v1_0;\n\nstruct Base {\n    int a;\n};\n"
USER = textwrap.dedent("""\
    package demo.v1_0;

    import demo.v1_0.Base;

    struct User {
        struct Base base;
    };
    """)
OTHER = "package demo.v1_0;\n\nstruct Other {\n    int b;\n};\n"


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    d = tmp_path / "demo" / "v1_0"
    d.mkdir(parents=True)
    (d / "Base.idl").write_text(BASE)
    (d / "User.idl").write_text(USER)
    (d / "Other.idl").write_text(OTHER)
    return d


def test_overlay_is_read_instead_of_the_disk_and_keeps_containment(pkg: Path) -> None:
    r = load([pkg / "User.idl"], overlay={pkg / "Base.idl": BASE.replace("Base", "Gone")})
    assert any("Base" in d.message for d in r.diagnostics)
    assert (pkg / "Base.idl").read_text() == BASE  # nothing written
    assert load([pkg / "User.idl"]).ok


def test_an_edit_rechecks_the_file_and_its_open_importers_only(
    pkg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pkg.parents[1])
    ws = Workspace(pkg.parents[1])
    for name in ("Base.idl", "User.idl", "Other.idl"):
        ws.open(pkg / name, (pkg / name).read_text())
        assert ws.analysis(pkg / name).result.ok
    assert ws.checks == 3

    again = ws.set_text(pkg / "Base.idl", BASE.replace("struct Base", "struct Renamed"))
    assert again == [(pkg / "Base.idl").resolve(), (pkg / "User.idl").resolve()]
    user = ws.analysis(pkg / "User.idl")
    assert not user.result.ok and ws.analysis(pkg / "Other.idl").result.ok
    assert ws.checks == 4  # User again; Other from the cache (Base on the next request)

    assert ws.set_text(pkg / "Other.idl", OTHER + "\n") == [(pkg / "Other.idl").resolve()]
    ws.close(pkg / "Base.idl")  # back to the disk: User is fine again
    assert ws.analysis(pkg / "User.idl").result.ok


def test_references_without_a_config_search_the_root(
    pkg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pkg.parents[1])
    ws = Workspace(pkg.parents[1])
    refs = ws.references("demo.v1_0.Base")
    assert sorted((fv.path.name, t.line) for fv, t in refs) == [("Base.idl", 2), ("User.idl", 5)]


def test_parse_cache_parses_only_changed_files_and_replays_their_diagnostics(
    pkg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from idlgen.frontend.files import ParseCache
    from idlgen.frontend.hdi import loader as hdi_loader
    from idlgen.frontend.hdi.parser import parse as real_parse

    parsed: list[str] = []

    def counting(display: str, text: str, diags: Diagnostics) -> object:
        parsed.append(Path(display).name)
        return real_parse(display, text, diags)

    monkeypatch.setattr(hdi_loader, "parse", counting)
    cache = ParseCache()
    files = [pkg / "User.idl", pkg / "Other.idl"]
    first = load(files, cache=cache)
    assert sorted(parsed) == ["Base.idl", "Other.idl", "User.idl"]
    parsed.clear()
    again = load(files, cache=cache)
    assert parsed == [] and again.schema == first.schema
    broken = {pkg / "Base.idl": BASE.replace("int a;", "int a b;")}  # a syntax error
    without = load(files, overlay=broken)
    parsed.clear()
    with_cache = [load(files, overlay=broken, cache=cache) for _ in range(2)]
    assert parsed == ["Base.idl"]  # once, then from the cache with its diagnostics
    for r in with_cache:
        assert [str(d) for d in r.diagnostics] == [str(d) for d in without.diagnostics] != []


REPO = Path(__file__).resolve().parents[2]
NNRT = REPO / "schemas" / "hdi" / "nnrt" / "v2_1"


@pytest.mark.skipif(not NNRT.is_dir(), reason="NNRt schemas missing")
def test_hover_on_the_real_nnrt_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wire facts on NNRt v2_1 agree with the IR: Parcel image offsets, command ids."""
    from lsprotocol import types as T

    from idlgen import ir
    from idlgen.ir.hdi_layout import struct_layout
    from idlgen.lsp import features as F

    monkeypatch.chdir(REPO)
    ws = Workspace(REPO)
    codec = F.Codec()
    attrs = NNRT / "NodeAttrTypes.idl"
    a = ws.analysis(attrs)
    act = a.decls["ohos.hdi.nnrt.v2_1.Activation"]
    assert isinstance(act, ir.Struct)
    lay = struct_layout(act, a.decls.__getitem__)
    assert lay is not None
    fv = a.files[attrs.resolve()]
    for f, off in zip(act.fields, lay.offsets):
        assert f.span is not None
        h = F.hover(ws, attrs, T.Position(f.span.line - 1, f.span.col), codec)
        assert h is not None and isinstance(h.contents, T.MarkupContent)
        assert f"(offset {off}, size" in h.contents.value, fv.lines[f.span.line - 1]
    dev = NNRT / "INnrtDevice.idl"
    a = ws.analysis(dev)
    iface = a.decls["ohos.hdi.nnrt.v2_1.INnrtDevice"]
    assert isinstance(iface, ir.Interface)
    for m in iface.methods:
        if m.span is None:
            continue  # implicit (GetVersion)
        h = F.hover(ws, dev, T.Position(m.span.line - 1, m.span.col), codec)
        assert h is not None and isinstance(h.contents, T.MarkupContent)
        assert f"command id: {m.cmd_id};" in h.contents.value
