"""The LSP server (pygls): buffers in, diagnostics out, requests answered by ``features``.

Text sync is Full, like buf's: schemas are small, and the front end reads whole files anyway.
Diagnostics are pushed on open, change and save for the file and for the open files that
import it (the others come from the workspace's cache), and for imported files that have
problems of their own.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

from .. import __version__
from . import features as F
from .workspace import Workspace

__all__ = ["IdlgenServer", "make_server"]


class IdlgenServer(LanguageServer):
    """pygls' server plus the schema workspace and what was published where."""

    def __init__(self) -> None:
        super().__init__("idlgen", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Full)
        self._ws: Workspace | None = None
        # files (not open) we pushed diagnostics for, to clear them once they are fixed
        self.published: set[Path] = set()
        # the URI the client opened each file under (it may name it through a symlink)
        self.uris: dict[Path, str] = {}

    @property
    def schemas(self) -> Workspace:
        if self._ws is None:
            root = self.workspace.root_path
            base = Path(root) if root else Path.cwd()
            if base.is_dir():
                os.chdir(base)  # diagnostics name files relative to the project, as the CLI does
            self._ws = Workspace(base, pause_gc=True)
        return self._ws

    @property
    def codec(self) -> F.Codec:
        enc = self.workspace.position_encoding
        return F.Codec(str(getattr(enc, "value", enc) or "utf-16"))

    def publish(self, paths: list[Path]) -> None:
        ws = self.schemas
        for p in dict.fromkeys(paths):
            if p not in ws.buffers:
                continue
            a = ws.analysis(p)
            by_file = a.diagnostics_by_file()
            for f, diags in by_file.items():
                if f != p and f in ws.buffers:
                    continue  # an open file gets its diagnostics from its own analysis
                if f != p and not diags and f not in self.published:
                    continue
                fv = a.files.get(f)
                lines = fv.lines if fv is not None else (ws.text_of(f) or "").split("\n")
                if f != p:
                    (self.published.add if diags else self.published.discard)(f)
                uri = self.uris.get(f) or F.uri_of(f)
                version = None
                if f == p:  # the version of the buffer these diagnostics were computed from
                    version = self.workspace.get_text_document(uri).version
                self.text_document_publish_diagnostics(
                    T.PublishDiagnosticsParams(
                        uri, F.to_lsp_diagnostics(diags, lines, self.codec), version
                    )
                )

    def clear(self, path: Path) -> None:
        uri = self.uris.get(path) or F.uri_of(path)
        self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, []))


def _real(uri: str) -> Path:
    return Path(os.path.realpath(F.path_of(uri)))


def make_server() -> IdlgenServer:
    server = IdlgenServer()

    @server.feature(T.INITIALIZED)
    def initialized(ls: IdlgenServer, params: T.InitializedParams) -> None:
        """Ask the client to report schema files and pyproject.toml changed on disk (by git,
        another editor, a build), when it can be asked."""
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps is not None else None
        if watched is None or not watched.dynamic_registration:
            return
        watchers = [T.FileSystemWatcher(g) for g in ("**/*.idl", "**/*.fbs", "**/pyproject.toml")]
        options = T.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
        reg = T.Registration("idlgen-watch", T.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)
        ls.client_register_capability(T.RegistrationParams([reg]))

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: IdlgenServer, params: T.DidOpenTextDocumentParams) -> None:
        p = _real(params.text_document.uri)
        ls.uris[p] = params.text_document.uri
        ls.publish(ls.schemas.open(p, params.text_document.text))

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: IdlgenServer, params: T.DidChangeTextDocumentParams) -> None:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        ls.publish(ls.schemas.set_text(_real(params.text_document.uri), doc.source))

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE, T.SaveOptions(include_text=True))
    def did_save(ls: IdlgenServer, params: T.DidSaveTextDocumentParams) -> None:
        p = _real(params.text_document.uri)
        again = ls.schemas.disk_changed(p)
        if params.text is not None:
            again += ls.schemas.set_text(p, params.text)
        ls.publish([p, *again])

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: IdlgenServer, params: T.DidCloseTextDocumentParams) -> None:
        p = _real(params.text_document.uri)
        again = ls.schemas.close(p)
        ls.clear(p)
        ls.uris.pop(p, None)
        ls.publish(again)

    @server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: IdlgenServer, params: T.DidChangeWatchedFilesParams) -> None:
        again: list[Path] = []
        for ch in params.changes:
            p = _real(ch.uri)
            if p.name == "pyproject.toml":
                again += ls.schemas.reload_config()
            else:
                again += ls.schemas.disk_changed(p)
        ls.publish(again)

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    def hover(ls: IdlgenServer, params: T.HoverParams) -> T.Hover | None:
        return F.hover(ls.schemas, _real(params.text_document.uri), params.position, ls.codec)

    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: IdlgenServer, params: T.DefinitionParams) -> list[T.Location]:
        p = _real(params.text_document.uri)
        return F.definition(ls.schemas, p, params.position, ls.codec)

    @server.feature(T.TEXT_DOCUMENT_REFERENCES)
    def references(ls: IdlgenServer, params: T.ReferenceParams) -> list[T.Location]:
        p = _real(params.text_document.uri)
        with_decl = params.context.include_declaration
        return F.references(ls.schemas, p, params.position, ls.codec, with_decl)

    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: IdlgenServer, params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
        return F.document_symbols(ls.schemas, _real(params.text_document.uri), ls.codec)

    @server.feature(
        T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=["[", "(", ","])
    )
    def completion(ls: IdlgenServer, params: T.CompletionParams) -> T.CompletionList:
        p = _real(params.text_document.uri)
        return F.completion(ls.schemas, p, params.position, ls.codec)

    if fmt_available():

        @server.feature(T.TEXT_DOCUMENT_FORMATTING)
        def formatting(
            ls: IdlgenServer, params: T.DocumentFormattingParams
        ) -> list[T.TextEdit] | None:
            doc = ls.workspace.get_text_document(params.text_document.uri)
            return F.formatting(doc.source, _real(params.text_document.uri), ls.codec)

    return server


def fmt_available() -> bool:
    """``idlgen fmt`` is part of this install (formatting is offered only then)."""
    try:
        return importlib.util.find_spec("idlgen.fmt") is not None
    except (ImportError, ValueError):
        return False


def serve(**kwargs: Any) -> None:
    """Serve LSP on stdin/stdout until the client exits."""
    make_server().start_io(**kwargs)
