"""``idlgen lsp``: diagnostics after an edit of the 78 KB NNRt ``NodeAttrTypes.idl`` (issue 21.4:
within 200 ms).

With every file of ``ohos.hdi.nnrt.v2_1`` open (as an editor with the package open),
plus an edit of ``NnrtTypes.idl``, which the four other files import (five files checked again):

- in process: the edit reaches the workspace, what it can affect (the file and the open files
  that import it) is checked again, and the diagnostics are converted to LSP's (what the server
  does on ``didChange`` before it writes the notification);
- end to end: a pygls client sends ``didChange`` (the whole 78 KB text, Full sync) to
  ``idlgen lsp`` in a subprocess and waits for the ``publishDiagnostics`` of that version.

No peer: there is no other HDI language server.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from bench.common import Result

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "schemas" / "hdi" / "nnrt" / "v2_1"
TARGET = PKG / "NodeAttrTypes.idl"
EDITS = 20


def _edit(text: str, i: int) -> str:
    """A real edit: a field added to the first struct (so the file's IR changes)."""
    edited = text.replace("struct Activation\n{\n", f"struct Activation\n{{\nint added{i};\n", 1)
    assert edited != text
    return edited


def in_process(target: Path = TARGET) -> list[float]:
    from idlgen.lsp import features as F
    from idlgen.lsp.workspace import Workspace

    ws = Workspace(REPO, pause_gc=True)  # as the server runs it
    for p in sorted(PKG.glob("*.idl")):
        ws.open(p, p.read_text(encoding="utf-8"))
        ws.analysis(p)
    base = target.read_text(encoding="utf-8")
    codec = F.Codec()
    times = []
    for i in range(EDITS):
        t0 = time.perf_counter()
        for p in ws.set_text(target, _edit(base, i) if target == TARGET else f"{base}//{i}\n"):
            a = ws.analysis(p)
            for f, diags in a.diagnostics_by_file().items():
                fv = a.files.get(f)
                F.to_lsp_diagnostics(diags, fv.lines if fv else [], codec)
        times.append(time.perf_counter() - t0)
    return times


async def _end_to_end() -> list[float]:
    from lsprotocol import types as T
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("bench", "1")
    got: dict[tuple[str, int | None], asyncio.Event] = {}

    @client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
    def _published(ls: LanguageClient, params: T.PublishDiagnosticsParams) -> None:
        got.setdefault((params.uri, params.version), asyncio.Event()).set()

    async def published(uri: str, version: int) -> None:
        await asyncio.wait_for(got.setdefault((uri, version), asyncio.Event()).wait(), 30)

    await client.start_io(sys.executable, "-m", "idlgen", "lsp")
    await client.initialize_async(
        T.InitializeParams(capabilities=T.ClientCapabilities(), root_uri=REPO.as_uri())
    )
    client.initialized(T.InitializedParams())
    target = TARGET.as_uri()
    for p in sorted(PKG.glob("*.idl")):
        item = T.TextDocumentItem(p.as_uri(), "idl", 1, p.read_text(encoding="utf-8"))
        client.text_document_did_open(T.DidOpenTextDocumentParams(item))
        await published(p.as_uri(), 1)
    base = TARGET.read_text(encoding="utf-8")
    times = []
    for i in range(EDITS):
        version = i + 2
        t0 = time.perf_counter()
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                T.VersionedTextDocumentIdentifier(version, target),
                [T.TextDocumentContentChangeWholeDocument(_edit(base, i))],
            )
        )
        await published(target, version)
        times.append(time.perf_counter() - t0)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]
    return times


def end_to_end() -> list[float]:
    return asyncio.run(_end_to_end())


def _figures(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median of {len(times)} edits; p95 {p95 * 1e3:.0f} ms, max {ordered[-1] * 1e3:.0f} ms"


def run() -> list[Result]:
    out = []
    t = in_process()
    out.append(
        Result(
            "lsp: edit NodeAttrTypes.idl → diagnostics (in process)",
            statistics.median(t),
            note=_figures(t) + "; target 200 ms",
        )
    )
    t = in_process(PKG / "NnrtTypes.idl")
    out.append(
        Result(
            "lsp: edit NnrtTypes.idl → diagnostics of it and its 4 importers (in process)",
            statistics.median(t),
            note=_figures(t),
        )
    )
    try:
        import pygls  # noqa: F401
    except ImportError:
        return out
    t = end_to_end()
    out.append(
        Result(
            "lsp: didChange → publishDiagnostics (idlgen lsp subprocess)",
            statistics.median(t),
            note=_figures(t) + "; target 200 ms",
        )
    )
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    from bench.common import format_table

    print(format_table(run()))
