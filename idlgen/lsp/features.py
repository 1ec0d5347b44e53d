"""What the server answers, as LSP values: diagnostics, hover, definition, references, document
symbols, completion and formatting, over :class:`~idlgen.lsp.workspace.Workspace`.

Everything here works in code points and converts at the edge with :class:`Codec` (the
position encoding the client and server agreed on; UTF-16 unless the client offers another).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as T

from .. import ir
from ..diagnostics import Diagnostic, Severity
from .wirefacts import wire_facts
from .workspace import (
    Analysis,
    FileView,
    Target,
    Token,
    Workspace,
    inherited,
    language_of,
    members_of,
)

__all__ = [
    "Codec",
    "HDI_KEYWORDS",
    "FBS_KEYWORDS",
    "completion",
    "definition",
    "document_symbols",
    "formatting",
    "hover",
    "path_of",
    "references",
    "to_lsp_diagnostics",
    "uri_of",
]

HDI_KEYWORDS = (
    "package import sequenceable interface struct enum union extends in out unsigned "
    "boolean byte short int long float double char String List Map SharedMemQueue "
    "FileDescriptor Ashmem NativeBuffer Pointer"
).split()
HDI_ATTRIBUTES = ("oneway", "callback", "full", "lite", "mini")
FBS_KEYWORDS = (
    "namespace include native_include attribute table struct enum union root_type "
    "file_identifier file_extension rpc_service bool byte ubyte short ushort int uint long "
    "ulong float double int8 uint8 int16 uint16 int32 uint32 int64 uint64 float32 float64 string"
).split()
FBS_ATTRIBUTES = (
    "id deprecated required key hash force_align bit_flags nested_flatbuffer flexbuffer "
    "original_order shared offset64 vector64 native_inline native_default native_custom_alloc "
    "native_type native_type_pack_name cpp_type cpp_ptr_type cpp_str_type cpp_str_flex_ctor "
    "streaming idempotent"
).split()


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def uri_of(path: Path) -> str:
    return Path(os.path.abspath(path)).as_uri()


class Codec:
    """Columns in code points ↔ the client's position encoding (utf-8, utf-16, utf-32)."""

    def __init__(self, encoding: str = "utf-16") -> None:
        self.encoding = encoding

    def _units(self, s: str) -> int:
        if self.encoding == "utf-8":
            return len(s.encode("utf-8", "surrogatepass"))
        if self.encoding == "utf-32":
            return len(s)
        return len(s.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, lines: Sequence[str], line: int, col: int) -> T.Position:
        text = lines[line] if 0 <= line < len(lines) else ""
        return T.Position(line, self._units(text[:col]))

    def range(self, lines: Sequence[str], line: int, col: int, eline: int, ecol: int) -> T.Range:
        return T.Range(self.position(lines, line, col), self.position(lines, eline, ecol))

    def column(self, lines: Sequence[str], pos: T.Position) -> int:
        """The code-point column of a client position."""
        text = lines[pos.line] if 0 <= pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(text):
            if units >= pos.character:
                return i
            units += self._units(ch)
        return len(text)

    def span_range(self, lines: Sequence[str], span: ir.Span) -> T.Range:
        end_line, end_col = span.end_line, span.end_col
        if (end_line, end_col) <= (span.line, span.col):
            end_line, end_col = span.line, span.col + 1
        return self.range(lines, span.line - 1, span.col - 1, end_line - 1, end_col - 1)

    def token_range(self, lines: Sequence[str], tok: Token) -> T.Range:
        return self.range(lines, tok.line, tok.col, tok.line, tok.end)


_SEVERITY = {
    Severity.ERROR: T.DiagnosticSeverity.Error,
    Severity.WARNING: T.DiagnosticSeverity.Warning,
    Severity.NOTE: T.DiagnosticSeverity.Information,
}


def to_lsp_diagnostics(
    diags: Sequence[Diagnostic], lines: Sequence[str], codec: Codec
) -> list[T.Diagnostic]:
    """The CLI's diagnostics as LSP ones: same code, message, help and notes."""
    out = []
    for d in diags:
        rng = (
            codec.span_range(lines, d.span)
            if d.span is not None
            else T.Range(T.Position(0, 0), T.Position(0, 0))
        )
        extra = [f"help: {h}" for h in d.help] + [f"note: {n}" for n in d.notes]
        message = "\n".join([d.message, *extra])
        out.append(T.Diagnostic(rng, message, _SEVERITY[d.severity], d.code, source="idlgen"))
    return out


def _location(fv: FileView, rng: T.Range) -> T.Location:
    return T.Location(uri_of(fv.path), rng)


def _target_at(ws: Workspace, path: Path, pos: T.Position, codec: Codec) -> (
    tuple[
        Analysis,
        Target,
        Token,
    ]
    | None
):
    a = ws.analysis(path)
    fv = a.files.get(Path(os.path.realpath(path)))
    if fv is None:
        return None
    hit = a.target_at(fv.path, pos.line, codec.column(fv.lines, pos))
    return None if hit is None else (a, hit[0], hit[1])


def _decl_location(a: Analysis, target: Target, codec: Codec) -> T.Location | None:
    if target.file is not None:
        return T.Location(uri_of(target.file), T.Range(T.Position(0, 0), T.Position(0, 0)))
    span = target.span
    if span is None:
        return None
    owner = target.owner or target.decl
    assert owner is not None
    p = a.decl_file.get(owner.qualname)
    fv = a.files.get(p) if p is not None else None
    if fv is None:
        return None
    named = target.member if target.member is not None else owner
    tok = fv.name_token(span, named.name, last=target.param_of is not None)
    rng = codec.token_range(fv.lines, tok) if tok else codec.span_range(fv.lines, span)
    return _location(fv, rng)


def definition(ws: Workspace, path: Path, pos: T.Position, codec: Codec) -> list[T.Location]:
    """Where the name under the cursor is declared (across imports and includes), or the file
    an import/include names."""
    hit = _target_at(ws, path, pos, codec)
    if hit is None:
        return []
    loc = _decl_location(hit[0], hit[1], codec)
    return [loc] if loc is not None else []


def references(
    ws: Workspace, path: Path, pos: T.Position, codec: Codec, with_decl: bool
) -> list[T.Location]:
    """Every place a workspace file names the declaration under the cursor."""
    hit = _target_at(ws, path, pos, codec)
    if hit is None:
        return []
    a, target, _ = hit
    if target.decl is None:
        if target.member is None:
            return []
        loc = _decl_location(a, target, codec)  # members: their declaration only
        return [loc] if loc is not None and with_decl else []
    out = []
    seen: set[tuple[Path, int, int]] = set()
    for fv, tok in ws.references(target.decl.qualname, with_decl=with_decl):
        key = (fv.path, tok.line, tok.col)
        if key not in seen:
            seen.add(key)
            out.append(_location(fv, codec.token_range(fv.lines, tok)))
    return out


def _signature(fv: FileView, span: ir.Span | None) -> str:
    if span is None or span.line - 1 >= len(fv.lines):
        return ""
    return fv.lines[span.line - 1].strip().rstrip("{").strip()


def hover(ws: Workspace, path: Path, pos: T.Position, codec: Codec) -> T.Hover | None:
    """The declaration, its doc comment and its wire facts."""
    hit = _target_at(ws, path, pos, codec)
    if hit is None:
        return None
    a, target, tok = hit
    here = a.files[Path(os.path.realpath(path))]
    rng = codec.token_range(here.lines, tok)
    if target.file is not None:
        fv = a.files.get(target.file)
        sf = fv.schema_file if fv is not None else None
        text = f"`{fv.display if fv else target.file}`"
        if sf is not None:
            text += f"\n\n{len(sf.decls)} declaration(s) in `{sf.namespace or '(global)'}`"
        return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, text), rng)
    owner = target.owner or target.decl
    assert owner is not None
    p = a.decl_file.get(owner.qualname)
    fv = a.files.get(p) if p is not None else None
    if fv is None:
        return None
    lang = language_of(fv.path) or "hdi"
    sig = _signature(fv, target.span)
    name = owner.qualname
    if target.param_of is not None and target.member is not None:
        name = f"{owner.qualname}.{target.param_of.name}({target.member.name})"
    elif target.member is not None:
        name = f"{owner.qualname}.{target.member.name}"
    parts = [f"```{'idl' if lang == 'hdi' else 'fbs'}\n{sig}\n```", f"`{name}` — `{fv.display}`"]
    doc = getattr(target.member if target.member is not None else owner, "doc", "")
    if doc:
        parts.append(doc.strip())
    facts = wire_facts(lang, owner, target.member, a.decls, target.param_of)
    if facts:
        parts.append("**Wire:** " + "  \n".join(facts))
    return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, "\n\n".join(parts)), rng)


_DECL_KIND = {
    ir.Enum: T.SymbolKind.Enum,
    ir.Struct: T.SymbolKind.Struct,
    ir.Union: T.SymbolKind.Enum,
    ir.Interface: T.SymbolKind.Interface,
    ir.Sequenceable: T.SymbolKind.Class,
}


def _member_kind(m: object) -> T.SymbolKind:
    if isinstance(m, ir.EnumMember):
        return T.SymbolKind.EnumMember
    if isinstance(m, ir.Method):
        return T.SymbolKind.Method
    return T.SymbolKind.Field


def document_symbols(ws: Workspace, path: Path, codec: Codec) -> list[T.DocumentSymbol]:
    """Declarations of the file, with their members as children."""
    a = ws.analysis(path)
    fv = a.files.get(Path(os.path.realpath(path)))
    if fv is None or fv.schema_file is None:
        return []
    out = []
    for d in fv.schema_file.decls:
        if d.span is None or a.decl_file.get(d.qualname) != fv.path:
            continue
        whole = codec.span_range(fv.lines, d.span)
        tok = fv.name_token(d.span, d.name)
        sel = codec.token_range(fv.lines, tok) if tok else whole
        children = []
        end = whole.end
        for m in members_of(d):
            if m.span is None or inherited(m) or m.span.file != d.span.file:
                continue
            r = codec.span_range(fv.lines, m.span)
            mt = fv.name_token(m.span, m.name)
            ms = codec.token_range(fv.lines, mt) if mt else r
            children.append(T.DocumentSymbol(m.name, _member_kind(m), r, ms))
            end = max(end, r.end, key=lambda p: (p.line, p.character))
        kind = _DECL_KIND.get(type(d), T.SymbolKind.Class)
        if isinstance(d, ir.Struct) and d.is_table:
            kind = T.SymbolKind.Class
        out.append(
            T.DocumentSymbol(
                d.name, kind, T.Range(whole.start, end), sel, detail=d.namespace, children=children
            )
        )
    return out


def completion(ws: Workspace, path: Path, pos: T.Position, codec: Codec) -> T.CompletionList:
    """Type names the file can see, the language's keywords, and attributes inside ``[...]``
    (HDI) or ``(...)`` (FlatBuffers)."""
    a = ws.analysis(path)
    real = Path(os.path.realpath(path))
    fv = a.files.get(real)
    lang = language_of(real) or "hdi"
    text = fv.lines[pos.line] if fv is not None and pos.line < len(fv.lines) else ""
    before = text[: codec.column(fv.lines, pos)] if fv is not None else ""
    opener, closer = ("[", "]") if lang == "hdi" else ("(", ")")
    in_attrs = before.rfind(opener) > before.rfind(closer)
    if lang == "fbs" and in_attrs:
        # ``name: type (attrs`` or ``table T (attrs``, not an rpc method's ``Call(Request``
        head = before[: before.rfind("(")]
        in_attrs = ":" in head or bool(re.match(r"\s*(table|struct|enum|union)\b", head))
    items: list[T.CompletionItem] = []
    if in_attrs:
        for name in HDI_ATTRIBUTES if lang == "hdi" else FBS_ATTRIBUTES:
            items.append(T.CompletionItem(name, kind=T.CompletionItemKind.Property))
        return T.CompletionList(False, items)
    seen: set[str] = set()
    for q, d in sorted(a.decls.items()):
        label = d.name if d.name not in seen else q
        seen.add(label)
        kind = T.CompletionItemKind.Struct
        if isinstance(d, ir.Enum):
            kind = T.CompletionItemKind.Enum
        elif isinstance(d, ir.Interface):
            kind = T.CompletionItemKind.Interface
        elif isinstance(d, ir.Struct) and d.is_table:
            kind = T.CompletionItemKind.Class
        doc = getattr(d, "doc", "").strip().split("\n", 1)[0]
        items.append(T.CompletionItem(label, kind=kind, detail=q, documentation=doc or None))
    for kw in HDI_KEYWORDS if lang == "hdi" else FBS_KEYWORDS:
        items.append(T.CompletionItem(kw, kind=T.CompletionItemKind.Keyword))
    return T.CompletionList(False, items)


def formatting(text: str, path: Path, codec: Codec) -> list[T.TextEdit] | None:
    """One edit replacing the whole document with ``idlgen fmt``'s layout; none when it is
    already formatted, ``None`` when it has syntax errors (the file is left as it is)."""
    from ..fmt import FormatError, format_text

    try:
        res = format_text(text, str(path))
    except FormatError:  # a layout that would change a token: keep the text
        return None
    if not res.ok:
        return None
    if res.text == text:
        return []
    lines = text.split("\n")
    end = codec.position(lines, len(lines) - 1, len(lines[-1]))
    return [T.TextEdit(T.Range(T.Position(0, 0), end), res.text)]
