"""The language server's view of the schemas: files on disk, open buffers over them, and one
cached analysis per file that was asked about.

An analysis is what ``idlgen parse FILE`` does with the project's configuration (same front
end, same roots and include paths, same diagnostics), with the open buffers read instead of the
disk (``frontend.load(..., overlay=...)``). It remembers every file it loaded; a change to a
file drops exactly the analyses that loaded it, so after an edit only the edited file and the
files that import it (directly or not) are checked again, and everything else is answered from
the cache.

Positions here are 0-based lines and columns in code points (what Python strings index); the
server converts them to the client's encoding (UTF-16 by default).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import os
import re
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .. import ir
from ..config import Config, load_config
from ..diagnostics import Diagnostic, Diagnostics, Severity
from ..errors import ConfigError
from ..frontend import LoadResult, load
from ..frontend.files import ParseCache, read_schema
from ..frontend.inputs import SCHEMA_SUFFIXES, expand_inputs

__all__ = [
    "Analysis",
    "FileView",
    "Member",
    "Target",
    "Token",
    "Workspace",
    "inherited",
    "language_of",
    "members_of",
]

# Identifiers (dotted: qualified names, imports), string literals and comments; the last two
# are matched only to be skipped.
_TOKEN_RE = re.compile(
    r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"?|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)',
    re.S,
)
# At most this many schema files are looked at when searching the workspace for references.
MAX_WORKSPACE_FILES = 5000

Member = ir.Field | ir.EnumMember | ir.UnionMember | ir.Method | ir.Param


def inherited(m: Member) -> bool:
    """A member a declaration inherits (declared in its parent, not here)."""
    return isinstance(m, (ir.Field, ir.EnumMember)) and bool(m.inherited_from)


def language_of(path: Path) -> str | None:
    return {".idl": "hdi", ".fbs": "fbs"}.get(path.suffix)


def members_of(d: ir.Decl) -> tuple[Member, ...]:
    if isinstance(d, ir.Struct):
        return d.fields
    if isinstance(d, (ir.Enum, ir.Union)):
        return d.members
    if isinstance(d, ir.Interface):
        return d.methods
    return ()


@dataclass(frozen=True)
class Token:
    """An identifier (possibly dotted) or a string literal, 0-based, columns in code points."""

    line: int
    col: int
    end: int
    text: str

    def contains(self, line: int, col: int) -> bool:
        return self.line == line and self.col <= col <= self.end


@dataclass(frozen=True)
class Target:
    """What a name denotes: a declaration, a member of one, or a whole file (import/include)."""

    decl: ir.Decl | None = None
    member: Member | None = None
    owner: ir.Decl | None = None  # the declaration ``member`` belongs to
    file: Path | None = None
    param_of: ir.Method | None = None

    @property
    def span(self) -> ir.Span | None:
        if self.member is not None:
            return self.member.span
        if self.decl is not None:
            return self.decl.span
        return None


@dataclass
class FileView:
    """One loaded file: its text as the front end read it and what it lowered to."""

    path: Path
    display: str
    text: str
    schema_file: ir.SchemaFile | None

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def _line_starts(self) -> list[int]:
        starts = [0]
        for m in re.finditer("\n", self.text):
            starts.append(m.end())
        return starts

    @cached_property
    def tokens(self) -> list[Token]:
        out: list[Token] = []
        starts = self._line_starts
        for m in _TOKEN_RE.finditer(self.text):
            if m.group(1) is None and not m.group(0).startswith('"'):
                continue  # a comment
            line = bisect.bisect_right(starts, m.start()) - 1
            col = m.start() - starts[line]
            out.append(Token(line, col, col + len(m.group(0)), m.group(0)))
        return out

    @cached_property
    def _starts(self) -> list[tuple[int, int]]:
        return [(t.line, t.col) for t in self.tokens]

    def token_at(self, line: int, col: int) -> Token | None:
        toks = self.tokens
        i = bisect.bisect_left(self._starts, (line, col + 1)) - 1
        if i >= 0 and toks[i].contains(line, col):
            return toks[i]
        return None

    def name_token(self, span: ir.Span | None, name: str, *, last: bool = False) -> Token | None:
        """The token writing ``name`` inside ``span`` (an HDI name's span is the name itself; a
        FlatBuffers declaration's and an HDI parameter's span cover all of it)."""
        if span is None:
            return None
        first = (span.line - 1, span.col - 1)
        end = (span.end_line - 1, span.end_col - 1)
        toks = self.tokens
        hits = []
        for i in range(bisect.bisect_left(self._starts, first), len(toks)):
            t = toks[i]
            if (t.line, t.end) > end:
                break
            if t.text == name:
                hits.append(t)
                if not last:
                    break
        if not hits:
            return None
        return hits[-1] if last else hits[0]

    def enclosing(self, line: int) -> ir.Decl | None:
        """The declaration of this file whose text holds ``line`` (0-based), roughly: from its
        name (or start) to its last member."""
        if self.schema_file is None:
            return None
        for d in self.schema_file.decls:
            if d.span is None:
                continue
            last = max(
                [d.span.end_line, *(m.span.end_line for m in members_of(d) if m.span)],
            )
            if d.span.line - 1 <= line <= last - 1:
                return d
        return None

    @cached_property
    def declared(self) -> dict[tuple[int, int], Target]:
        """Declaration and member names of this file by (line, col) of their name token."""
        out: dict[tuple[int, int], Target] = {}
        if self.schema_file is None:
            return out
        for d in self.schema_file.decls:
            tok = self.name_token(d.span, d.name)
            if tok is not None:
                out[(tok.line, tok.col)] = Target(decl=d)
            for m in members_of(d):
                tok = self.name_token(m.span, m.name)
                if tok is not None and not inherited(m):
                    out[(tok.line, tok.col)] = Target(member=m, owner=d)
                if isinstance(m, ir.Method):
                    for p in m.params:
                        tok = self.name_token(p.span, p.name, last=True)
                        if tok is not None:
                            out[(tok.line, tok.col)] = Target(member=p, owner=d, param_of=m)
        return out


@dataclass
class Analysis:
    """``idlgen parse ENTRY`` over the workspace's files and buffers."""

    entry: Path
    result: LoadResult
    files: dict[Path, FileView]
    decls: dict[str, ir.Decl] = field(default_factory=dict)
    decl_file: dict[str, Path] = field(default_factory=dict)
    include_dirs: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        for fv in self.files.values():
            if fv.schema_file is None:
                continue
            for d in fv.schema_file.decls:
                self.decls[d.qualname] = d
                self.decl_file[d.qualname] = fv.path

    @cached_property
    def _by_short(self) -> dict[str, list[ir.Decl]]:
        out: dict[str, list[ir.Decl]] = {}
        for d in self.decls.values():
            out.setdefault(d.name, []).append(d)
        return out

    def diagnostics_by_file(self) -> dict[Path, list[Diagnostic]]:
        """Diagnostics by the file they point into; those without a place go to the entry."""
        out: dict[Path, list[Diagnostic]] = {self.entry: []}
        for d in self.result.diagnostics:
            p = _real(d.span.file) if d.span is not None else self.entry
            out.setdefault(p, []).append(d)
        return out

    def resolve_name(self, fv: FileView, name: str) -> ir.Decl | None:
        """The declaration ``name`` denotes in ``fv``: a qualified name, a name in the file's
        namespaces or their parents (FlatBuffers' lookup), else the one declaration so named."""
        if name in self.decls:
            return self.decls[name]
        spaces: dict[str, None] = {}
        if fv.schema_file is not None:
            spaces[fv.schema_file.namespace] = None
            for d in fv.schema_file.decls:
                spaces[d.namespace] = None
        for ns in spaces:
            parts = ns.split(".") if ns else []
            for i in range(len(parts), -1, -1):
                q = ".".join([*parts[:i], name])
                if q in self.decls:
                    return self.decls[q]
        same = self._by_short.get(name, [])
        return same[0] if len(same) == 1 else None

    def file_of_import(self, fv: FileView, tok: Token) -> Path | None:
        """The file an HDI ``import`` name or a FlatBuffers ``include "…"`` names."""
        sf = fv.schema_file
        if tok.text.startswith('"'):
            name = tok.text.strip('"')
            line = fv.lines[tok.line][: tok.col]
            if "include" not in line:
                return None
            for d in [fv.path.parent, *self.include_dirs]:
                p = _real(str(Path(d) / name))
                if p in self.files:
                    return p
            return None
        if sf is None or tok.text not in sf.imports:
            return None
        for other in self.files.values():
            of = other.schema_file
            if of is not None and f"{of.namespace}.{other.path.stem}" == tok.text:
                return other.path
        return None

    def target_at(self, path: Path, line: int, col: int) -> tuple[Target, Token] | None:
        fv = self.files.get(path)
        if fv is None:
            return None
        tok = fv.token_at(line, col)
        if tok is None:
            return None
        hit = fv.declared.get((tok.line, tok.col))
        if hit is not None:
            return hit, tok
        f = self.file_of_import(fv, tok)
        if f is not None:
            return Target(file=f), tok
        if tok.text.startswith('"'):
            return None
        d = self.resolve_name(fv, tok.text)
        if d is not None:
            return Target(decl=d), tok
        head = tok.text[: col - tok.col]
        cut = tok.text.find(".", len(head))
        if cut < 0:  # the cursor is on the last part: an enum value?
            member = self.enum_value(fv, tok)
            if member is not None:
                return member, tok
        # the part of a dotted name under the cursor (``ns.Type``, ``Enum.Member``)
        d = self.resolve_name(fv, tok.text[:cut]) if cut > 0 else None
        return (Target(decl=d), tok) if d is not None else None

    def enum_value(self, fv: FileView, tok: Token) -> Target | None:
        """The enum member a value names: ``Enum.MEMBER``, a member of the enum being declared
        (HDI values are expressions over them), the enum type of the FlatBuffers field whose
        default it is, else the one member of that name among the loaded enums."""
        head, _, name = tok.text.rpartition(".")
        enums: list[ir.Enum] = []
        if head:
            d = self.resolve_name(fv, head)
            enums += [d] if isinstance(d, ir.Enum) else []
        else:
            encl = fv.enclosing(tok.line)
            if isinstance(encl, ir.Enum):
                enums.append(encl)
            elif isinstance(encl, ir.Struct):
                for f in encl.fields:
                    t = f.type
                    if f.span is not None and f.span.line - 1 == tok.line and isinstance(t, ir.Ref):
                        d = self.decls.get(t.qualname)
                        enums += [d] if isinstance(d, ir.Enum) else []
            if not enums:
                enums = [
                    e
                    for e in self.decls.values()
                    if isinstance(e, ir.Enum) and any(m.name == name for m in e.members)
                ]
                enums = enums if len(enums) == 1 else []
        for e in enums:
            for m in e.members:
                if m.name == name:
                    return Target(member=m, owner=e)
        return None

    def references_in(self, fv: FileView, qualname: str, with_decl: bool) -> Iterator[Token]:
        """Where ``fv`` names the declaration ``qualname`` (as a type, parent, root type…)."""
        short = qualname.rsplit(".", 1)[-1]
        for tok in fv.tokens:
            if tok.text.rsplit(".", 1)[-1] != short:
                continue
            hit = fv.declared.get((tok.line, tok.col))
            if hit is not None:
                if with_decl and hit.decl is not None and hit.decl.qualname == qualname:
                    yield tok
                continue
            if self.file_of_import(fv, tok) is not None:
                continue  # ``import pkg.File``: names the file, even when it is also a type's
            d = self.resolve_name(fv, tok.text)
            if d is not None and d.qualname == qualname:
                yield tok


def _real(display: str) -> Path:
    return Path(os.path.realpath(os.path.join(os.getcwd(), display)))


class Workspace:
    """Files on disk under ``root`` and the open buffers, configured like the CLI."""

    def __init__(
        self, root: Path | None = None, config: Config | None = None, *, pause_gc: bool = False
    ) -> None:
        """``pause_gc``: pause the cyclic collector while an analysis runs (the server, which
        owns its process, does; as for the CLI's compiler commands, see ``cli.gctuning``)."""
        self.root = (root or Path.cwd()).resolve()
        self.pause_gc = pause_gc
        self.config_error: str | None = None
        self.config = config if config is not None else self._load_config()
        self.buffers: dict[Path, str] = {}
        self._analyses: dict[Path, Analysis] = {}
        self._parsed = ParseCache()  # syntax trees of files whose bytes did not change
        self.checks = 0  # how many analyses ran (tests and the benchmark look at it)

    def _load_config(self) -> Config:
        """``[tool.idlgen]`` of the nearest pyproject.toml, as the CLI reads it; a broken one is
        reported on every file (``LSP001``) and the defaults are used."""
        self.config_error = None
        try:
            return load_config(None, cwd=self.root)
        except ConfigError as e:
            self.config_error = str(e)
            return Config(base_dir=self.root)

    def reload_config(self) -> list[Path]:
        """pyproject.toml changed: read it again; every open file is checked again."""
        self.config = self._load_config()
        self._analyses.clear()
        return list(self.buffers)

    # -- buffers -------------------------------------------------------------------------------

    def open(self, path: Path, text: str) -> list[Path]:
        return self.set_text(path, text)

    def set_text(self, path: Path, text: str) -> list[Path]:
        """The buffer of ``path`` now holds ``text``: the files to check again (``path`` and the
        open files that loaded it)."""
        path = Path(os.path.realpath(path))
        before = self.buffers[path] if path in self.buffers else self.text_of(path)
        self.buffers[path] = text
        if before == text:  # opened as it is on disk, or saved: nothing read it differently
            return [path]
        return [path, *self._invalidate(path)]

    def close(self, path: Path) -> list[Path]:
        """The buffer is closed: the file is what is on disk again."""
        path = Path(os.path.realpath(path))
        if self.buffers.pop(path, None) is None:
            return []
        return [p for p in self._invalidate(path) if p != path]

    def disk_changed(self, path: Path) -> list[Path]:
        """A file changed on disk (saved, or changed by another program)."""
        path = Path(os.path.realpath(path))
        again = self._invalidate(path)
        return [path, *again] if path in self.buffers else again

    def _invalidate(self, path: Path) -> list[Path]:
        """Drop the analyses that loaded ``path``; the open files among them, but ``path``."""
        stale = [e for e, a in self._analyses.items() if path in a.files or e == path]
        for e in stale:
            del self._analyses[e]
        return [e for e in stale if e != path and e in self.buffers]

    def text_of(self, path: Path) -> str | None:
        if path in self.buffers:
            return self.buffers[path]
        try:
            return read_schema(path).decode("utf-8", errors="replace").removeprefix("\ufeff")
        except OSError:
            return None

    # -- analyses ------------------------------------------------------------------------------

    def analysis(self, path: Path) -> Analysis:
        """``idlgen parse path`` with the project's configuration, over the open buffers."""
        path = Path(os.path.realpath(path))
        a = self._analyses.get(path)
        if a is None:
            a = self._analyses[path] = self._analyse(path)
        return a

    def covering(self, path: Path) -> Analysis:
        """Any cached analysis that loaded ``path`` (its imports are loaded too), else its own."""
        path = Path(os.path.realpath(path))
        if path in self._analyses:
            return self._analyses[path]
        for a in self._analyses.values():
            if path in a.files:
                return a
        return self.analysis(path)

    def _analyse(self, path: Path) -> Analysis:
        self.checks += 1
        cfg = self.config
        with self._gc_paused():
            res = load(
                [path],
                roots=cfg.roots,
                include_dirs=cfg.include,
                overlay=self.buffers,
                cache=self._parsed,
            )
        if self.config_error is not None:
            res.diagnostics.insert(
                0, Diagnostic(Severity.WARNING, "LSP001", f"config: {self.config_error}")
            )
        by_display = {f.path: f for f in res.schema.files}
        files: dict[Path, FileView] = {}
        for display, text in res.sources.items():
            real = _real(display)
            files[real] = FileView(real, display, text, by_display.get(display))
        return Analysis(path, res, files, include_dirs=tuple(cfg.include))

    @contextlib.contextmanager
    def _gc_paused(self) -> Generator[None]:
        """Parsing makes a large graph and no cyclic garbage: collections during it only
        re-scan it. Afterwards it moves to the oldest generation unscanned (freeze/unfreeze)."""
        if not self.pause_gc or not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            gc.freeze()
            gc.unfreeze()
            gc.enable()

    def cached(self) -> list[Analysis]:
        return list(self._analyses.values())

    # -- the whole workspace -------------------------------------------------------------------

    def schema_files(self) -> list[Path]:
        """The configured inputs' schema files (else those under the root, at most
        ``MAX_WORKSPACE_FILES``, hidden directories skipped) and the open buffers."""
        found: list[Path] = []
        if self.config.inputs:
            try:
                found = expand_inputs(list(self.config.inputs), Diagnostics())
            except OSError:
                found = []
        else:
            found = _walk(self.root, MAX_WORKSPACE_FILES)
        out = dict.fromkeys(Path(os.path.realpath(p)) for p in found[:MAX_WORKSPACE_FILES])
        out.update(dict.fromkeys(p for p in self.buffers if p.suffix in SCHEMA_SUFFIXES))
        return list(out)

    def references(
        self, qualname: str, *, with_decl: bool = True, files: Iterable[Path] | None = None
    ) -> list[tuple[FileView, Token]]:
        """Every place a workspace file names the declaration ``qualname``."""
        short = qualname.rsplit(".", 1)[-1]
        word = re.compile(rf"\b{re.escape(short)}\b")
        out: list[tuple[FileView, Token]] = []
        for p in files if files is not None else self.schema_files():
            text = self.text_of(p)
            if text is None or not word.search(text):
                continue
            a = self.covering(p)
            fv = a.files.get(p)
            if fv is None:
                continue
            out.extend((fv, t) for t in a.references_in(fv, qualname, with_decl))
        return out


def _walk(root: Path, limit: int) -> list[Path]:
    """Schema files below ``root`` (no config names the inputs): hidden directories and
    symlinked ones are skipped, and the walk stops at ``limit`` files."""
    out: list[Path] = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "node_modules")
        for n in sorted(names):
            if os.path.splitext(n)[1] in SCHEMA_SUFFIXES:
                out.append(Path(d, n))
                if len(out) >= limit:
                    return out
    return out
