"""``idlgen lsp`` driven by a real LSP client (pytest-lsp) over stdio, in a subprocess.

One server session for the module, on a small project: a two-file HDI package (an interface
importing its types) and a FlatBuffers schema including a file found through ``include``; the
project's ``pyproject.toml`` gives the roots and include paths, as for the CLI.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as T  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from idlgen.frontend import load  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

TYPES = textwrap.dedent("""\
    package ohos.hdi.demo.v1_0;

    /** A point on the canvas. */
    struct Point {
        int x;
        int y;
    };

    /** What can be drawn. */
    enum Kind {
        CIRCLE = 0,
        SQUARE,
    };

    /** A shape: not plain data (it has a name). */
    struct Shape {
        enum Kind kind;
        struct Point origin;
        /** Shown in the legend. */
        String name;
    };
    """)

IDEMO = textwrap.dedent("""\
    package ohos.hdi.demo.v1_0;

    import ohos.hdi.demo.v1_0.Types;

    interface IDemo {
        /** Draws a shape; returns its id. */
        Draw([in] struct Shape shape, [out] int id);
        [oneway] Move([in] struct Point to);
    }
    """)

MONSTER = textwrap.dedent("""\
    include "common.fbs";

    namespace Game;

    /// A monster.
    table Monster {
      pos: Vec3;
      hp: short = 100;
      name: string;
      /// Its colour.
      color: Color = Blue;
      equipped: Equipment;
    }

    table Weapon {
      damage: int;
    }

    union Equipment { Weapon }

    root_type Monster;
    """)

COMMON = textwrap.dedent("""\
    namespace Game;

    enum Color : byte { Red, Green, Blue }

    /// A position.
    struct Vec3 {
      x: float;
      y: float;
      z: float;
    }
    """)

PYPROJECT = textwrap.dedent("""\
    [tool.idlgen]
    inputs = ["hdi", "fbs"]
    roots = ["ohos.hdi:hdi"]
    include = ["fbs/inc"]
    """)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lsp").resolve()
    pkg = root / "hdi/demo/v1_0"
    pkg.mkdir(parents=True)
    (pkg / "Types.idl").write_text(TYPES)
    (pkg / "IDemo.idl").write_text(IDEMO)
    (root / "fbs/inc").mkdir(parents=True)
    (root / "fbs/monster.fbs").write_text(MONSTER)
    (root / "fbs/inc/common.fbs").write_text(COMMON)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "idlgen", "lsp"]),
)
async def client(lsp_client: LanguageClient, project: Path) -> AsyncIterator[None]:
    registered: list[str] = []

    @lsp_client.feature(T.CLIENT_REGISTER_CAPABILITY)  # type: ignore[untyped-decorator]
    def _register(params: T.RegistrationParams) -> None:
        registered.extend(r.method for r in params.registrations)

    await lsp_client.initialize_session(
        T.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=project.as_uri(),
            workspace_folders=[T.WorkspaceFolder(project.as_uri(), "lsp")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def uri(project: Path, rel: str) -> str:
    return (project / rel).as_uri()


async def until(pred: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for the server's notifications to make ``pred`` true."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        assert loop.time() < end, "timed out waiting for the server"
        await asyncio.sleep(0.02)


def clean(client: LanguageClient, u: str) -> bool:
    """Diagnostics for ``u`` arrived, and there are none."""
    return u in client.diagnostics and len(client.diagnostics[u]) == 0


def open_doc(client: LanguageClient, project: Path, rel: str, text: str | None = None) -> str:
    u = uri(project, rel)
    lang = "idl" if rel.endswith(".idl") else "fbs"
    body = (project / rel).read_text() if text is None else text
    client.diagnostics.pop(u, None)
    client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(u, lang, 1, body)))
    return u


def change(client: LanguageClient, u: str, version: int, text: str) -> None:
    client.diagnostics.pop(u, None)
    client.text_document_did_change(
        T.DidChangeTextDocumentParams(
            T.VersionedTextDocumentIdentifier(version, u),
            [T.TextDocumentContentChangeWholeDocument(text)],
        )
    )


def at(text: str, needle: str, offset: int = 0, nth: int = 0) -> T.Position:
    """The position of ``needle`` (its ``nth`` occurrence) plus ``offset`` characters."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += offset
    line = text.count("\n", 0, i)
    return T.Position(line, i - (text.rfind("\n", 0, i) + 1))


def hover_text(h: T.Hover | None) -> str:
    assert h is not None and isinstance(h.contents, T.MarkupContent)
    return h.contents.value


# --- diagnostics -------------------------------------------------------------------------------


async def test_diagnostics_on_open_change_save_match_the_cli(
    client: LanguageClient, project: Path
) -> None:
    # an astral character before the error: LSP columns are UTF-16 code units (2 for it)
    bad = TYPES.replace("int y;", "/* \U0001f600 */ Strng y;")
    u = open_doc(client, project, "hdi/demo/v1_0/Types.idl", bad)
    await until(lambda: bool(client.diagnostics.get(u)))
    (d,) = client.diagnostics[u]
    assert d.code == "HDI202" and d.source == "idlgen" and "Strng" in d.message
    line = bad.splitlines()[d.range.start.line]
    assert line[d.range.start.character - 1 : d.range.end.character - 1] == "Strng"  # the 😀
    # the same diagnostics as the CLI's front end on the same text
    cli = load(
        [project / "hdi/demo/v1_0/Types.idl"], overlay={project / "hdi/demo/v1_0/Types.idl": bad}
    )
    assert [(c.code, c.message.split("\n")[0]) for c in cli.diagnostics] == [
        (d.code, d.message.split("\n")[0])
    ]

    # the importer is checked against the open buffer, not the file on disk
    ui = open_doc(client, project, "hdi/demo/v1_0/IDemo.idl")
    await until(lambda: ui in client.diagnostics)
    change(client, u, 2, TYPES.replace("struct Shape", "struct Figure"))
    await until(lambda: bool(client.diagnostics.get(ui)) and u in client.diagnostics)
    assert clean(client, u)
    assert any("Shape" in x.message for x in client.diagnostics[ui])

    # fixed: both are clean again (the importer re-checked without being touched)
    change(client, u, 3, TYPES)
    await until(lambda: clean(client, ui) and clean(client, u))

    # save: diagnostics are pushed again
    client.diagnostics.pop(u, None)
    client.text_document_did_save(
        T.DidSaveTextDocumentParams(T.TextDocumentIdentifier(u), text=TYPES)
    )
    await until(lambda: clean(client, u))


async def test_diagnostics_are_the_cli_json_ones(
    client: LanguageClient, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file broken on disk, opened as it is: ``idlgen parse --format json`` from the
    project's directory gives the same diagnostics (code, message, help, line, column)."""
    from idlgen.cli.main import main

    rel = "hdi/demo/v1_0/Broken.idl"
    text = TYPES.replace("int y;", "Strng y;").replace("struct Point origin", "struct Pnt o")
    (project / rel).write_text(text)
    try:
        monkey = pytest.MonkeyPatch()
        monkey.chdir(project)
        try:
            assert main(["parse", rel, "--format", "json"]) == 1
        finally:
            monkey.undo()
        cli = json.loads(capsys.readouterr().out)
        u = open_doc(client, project, rel)
        await until(lambda: bool(client.diagnostics.get(u)))
        got = client.diagnostics[u]
        assert len(got) == len(cli) == 2
        for d, c in zip(sorted(got, key=lambda d: d.range.start.line), cli):
            assert (d.code, d.message.split("\n")[0]) == (c["code"], c["message"])
            assert [h for h in d.message.split("\n")[1:]] == [f"help: {h}" for h in c["help"]]
            loc = c["location"]
            assert (d.range.start.line + 1, d.range.start.character + 1) == (
                loc["line"],
                loc["col"],
            )
        client.text_document_did_close(T.DidCloseTextDocumentParams(T.TextDocumentIdentifier(u)))
    finally:
        (project / rel).unlink()


async def test_fbs_diagnostics_through_includes(client: LanguageClient, project: Path) -> None:
    u = open_doc(client, project, "fbs/monster.fbs")
    await until(lambda: u in client.diagnostics)
    assert clean(client, u)
    change(client, u, 2, MONSTER.replace("pos: Vec3;", "pos: Vec4;"))
    await until(lambda: bool(client.diagnostics.get(u)))
    assert any("Vec4" in d.message for d in client.diagnostics[u])
    change(client, u, 3, MONSTER)
    await until(lambda: clean(client, u))


async def test_files_changed_on_disk_are_checked_again(
    client: LanguageClient, project: Path
) -> None:
    types = project / "hdi/demo/v1_0/Types.idl"
    ut = uri(project, "hdi/demo/v1_0/Types.idl")
    client.text_document_did_close(T.DidCloseTextDocumentParams(T.TextDocumentIdentifier(ut)))
    ui = open_doc(client, project, "hdi/demo/v1_0/IDemo.idl")
    await until(lambda: clean(client, ui))

    def changed() -> None:
        client.diagnostics.pop(ui, None)
        client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams([T.FileEvent(ut, T.FileChangeType.Changed)])
        )

    types.write_text(TYPES.replace("struct Shape", "struct Figure"))
    try:
        changed()
        await until(lambda: bool(client.diagnostics.get(ui)))
    finally:
        types.write_text(TYPES)
    changed()
    await until(lambda: clean(client, ui))


# --- hover ---------------------------------------------------------------------------------------


async def test_hover_shows_declaration_doc_and_wire_facts(
    client: LanguageClient, project: Path
) -> None:
    u = open_doc(client, project, "hdi/demo/v1_0/IDemo.idl")
    ident = T.TextDocumentIdentifier(u)
    h = await client.text_document_hover_async(T.HoverParams(ident, at(IDEMO, "Shape", 2)))
    text = hover_text(h)
    assert "struct Shape" in text and "not plain data" in text
    assert "3 members written one by one" in text
    h = await client.text_document_hover_async(T.HoverParams(ident, at(IDEMO, "Point", 1)))
    assert "raw memory image (WriteUnpadBuffer) of 8 bytes" in hover_text(h)
    assert "x@0, y@4" in hover_text(h)
    h = await client.text_document_hover_async(T.HoverParams(ident, at(IDEMO, "Draw(", 1)))
    assert "command id: 1" in hover_text(h) and "Draws a shape" in hover_text(h)
    h = await client.text_document_hover_async(T.HoverParams(ident, at(IDEMO, "Move", 1)))
    assert "command id: 2" in hover_text(h) and "oneway" in hover_text(h)

    ut = open_doc(client, project, "hdi/demo/v1_0/Types.idl")
    h = await client.text_document_hover_async(
        T.HoverParams(T.TextDocumentIdentifier(ut), at(TYPES, "y;"))
    )
    assert "offset 4, size 4" in hover_text(h)

    um = open_doc(client, project, "fbs/monster.fbs")
    mi = T.TextDocumentIdentifier(um)
    h = await client.text_document_hover_async(T.HoverParams(mi, at(MONSTER, "pos:")))
    assert "slot 0: vtable offset 4, inline size 12" in hover_text(h)
    h = await client.text_document_hover_async(T.HoverParams(mi, at(MONSTER, "color:")))
    assert "slot 3: vtable offset 10, inline size 1" in hover_text(h)
    assert "Its colour." in hover_text(h)
    h = await client.text_document_hover_async(T.HoverParams(mi, at(MONSTER, "equipped:")))
    assert "slot 5: vtable offset 14, inline size 4" in hover_text(h)
    assert "slot 4" in hover_text(h)  # the hidden equipped_type
    h = await client.text_document_hover_async(T.HoverParams(mi, at(MONSTER, "Vec3", 1)))
    assert "struct: size 12, align 4" in hover_text(h) and "A position." in hover_text(h)


# --- navigation ----------------------------------------------------------------------------------


async def test_definition_across_imports_and_includes(
    client: LanguageClient, project: Path
) -> None:
    u = open_doc(client, project, "hdi/demo/v1_0/IDemo.idl")
    ident = T.TextDocumentIdentifier(u)
    types_uri = uri(project, "hdi/demo/v1_0/Types.idl")
    locs = await client.text_document_definition_async(
        T.DefinitionParams(ident, at(IDEMO, "Shape", 1))
    )
    assert isinstance(locs, list) and len(locs) == 1
    assert locs[0].uri == types_uri and locs[0].range.start == at(TYPES, "Shape {")
    locs = await client.text_document_definition_async(
        T.DefinitionParams(ident, at(IDEMO, "Types;", 1))
    )
    assert isinstance(locs, list) and locs[0].uri == types_uri

    um = open_doc(client, project, "fbs/monster.fbs")
    mi = T.TextDocumentIdentifier(um)
    common = uri(project, "fbs/inc/common.fbs")
    locs = await client.text_document_definition_async(
        T.DefinitionParams(mi, at(MONSTER, "Vec3", 1))
    )
    assert isinstance(locs, list) and locs[0].uri == common
    assert locs[0].range.start == at(COMMON, "Vec3")
    locs = await client.text_document_definition_async(
        T.DefinitionParams(mi, at(MONSTER, "common.fbs", 2))
    )
    assert isinstance(locs, list) and locs[0].uri == common
    # an enum value (a field's default) goes to the enum's member
    locs = await client.text_document_definition_async(
        T.DefinitionParams(mi, at(MONSTER, "Blue", 1))
    )
    assert isinstance(locs, list) and locs[0].uri == common
    assert locs[0].range.start == at(COMMON, "Blue")
    h = await client.text_document_hover_async(T.HoverParams(mi, at(MONSTER, "Blue", 1)))
    assert "value: 2" in hover_text(h)


async def test_references_across_files(client: LanguageClient, project: Path) -> None:
    ut = open_doc(client, project, "hdi/demo/v1_0/Types.idl")
    refs = await client.text_document_references_async(
        T.ReferenceParams(
            text_document=T.TextDocumentIdentifier(ut),
            position=at(TYPES, "Point {", 1),
            context=T.ReferenceContext(include_declaration=True),
        )
    )
    assert refs is not None
    got = sorted((r.uri.rsplit("/", 1)[-1], r.range.start.line) for r in refs)
    assert got == [
        ("IDemo.idl", at(IDEMO, "Point").line),
        ("Types.idl", at(TYPES, "Point {").line),
        ("Types.idl", at(TYPES, "Point origin").line),
    ]

    um = open_doc(client, project, "fbs/monster.fbs")
    refs = await client.text_document_references_async(
        T.ReferenceParams(
            text_document=T.TextDocumentIdentifier(um),
            position=at(MONSTER, "Color", 1),
            context=T.ReferenceContext(include_declaration=False),
        )
    )
    assert refs is not None
    assert [(r.uri.rsplit("/", 1)[-1], r.range.start) for r in refs] == [
        ("monster.fbs", at(MONSTER, "Color"))
    ]


async def test_document_symbols(client: LanguageClient, project: Path) -> None:
    ut = open_doc(client, project, "hdi/demo/v1_0/Types.idl")
    syms = await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(T.TextDocumentIdentifier(ut))
    )
    assert syms is not None
    tree = [(s.name, [c.name for c in s.children or []]) for s in syms]  # type: ignore[union-attr]
    assert tree == [
        ("Point", ["x", "y"]),
        ("Kind", ["CIRCLE", "SQUARE"]),
        ("Shape", ["kind", "origin", "name"]),
    ]
    um = open_doc(client, project, "fbs/monster.fbs")
    syms = await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(T.TextDocumentIdentifier(um))
    )
    assert syms is not None and [s.name for s in syms] == ["Monster", "Weapon", "Equipment"]


async def test_completion_of_types_keywords_and_attributes(
    client: LanguageClient, project: Path
) -> None:
    u = open_doc(client, project, "hdi/demo/v1_0/IDemo.idl")
    ident = T.TextDocumentIdentifier(u)
    res = await client.text_document_completion_async(
        T.CompletionParams(ident, at(IDEMO, "struct Shape", 0))
    )
    assert isinstance(res, T.CompletionList)
    labels = {i.label for i in res.items}
    assert {"Shape", "Point", "Kind", "IDemo", "struct", "List"} <= labels
    res = await client.text_document_completion_async(
        T.CompletionParams(ident, at(IDEMO, "[oneway]", 1))
    )
    assert isinstance(res, T.CompletionList)
    assert {i.label for i in res.items} == {"oneway", "callback", "full", "lite", "mini"}

    um = open_doc(client, project, "fbs/monster.fbs")
    res = await client.text_document_completion_async(
        T.CompletionParams(T.TextDocumentIdentifier(um), at(MONSTER, "pos: Vec3", 5))
    )
    assert isinstance(res, T.CompletionList)
    assert {"Vec3", "Color", "Monster", "table", "ubyte"} <= {i.label for i in res.items}


async def test_formatting_through_fmt(client: LanguageClient, project: Path) -> None:
    fmt = pytest.importorskip("idlgen.fmt")
    messy = TYPES.replace("    int x;", "int   x ;")
    u = open_doc(client, project, "hdi/demo/v1_0/Types.idl", messy)
    edits = await client.text_document_formatting_async(
        T.DocumentFormattingParams(T.TextDocumentIdentifier(u), T.FormattingOptions(4, True))
    )
    assert edits is not None and len(edits) == 1
    assert edits[0].new_text == fmt.format_text(messy, "Types.idl").text
    assert edits[0].range.start == T.Position(0, 0)
    change(client, u, 5, edits[0].new_text)
    edits = await client.text_document_formatting_async(
        T.DocumentFormattingParams(T.TextDocumentIdentifier(u), T.FormattingOptions(4, True))
    )
    assert edits is not None and len(edits) == 0
    change(client, u, 6, TYPES)
