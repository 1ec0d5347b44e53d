"""``idlgen build`` / ``check``: load, generate in memory, then write only what changed.

Nothing is written unless the whole generation succeeded, and then the changed files are
committed as one crash-safe step (see ``outtree``: staging dir, journal, lock). A manifest (``.idlgen-manifest.json``, committed with the output)
lists the files idlgen produced, so a later build removes the stale ones and nothing else.

A build cache lets a build whose inputs, options and generator are unchanged skip parsing and
generation. It lives in the user cache directory (``IDLGEN_CACHE_DIR``, else
``$XDG_CACHE_HOME/idlgen`` or ``~/.cache/idlgen``; ``IDLGEN_CACHE_DIR=""`` disables it), one
file per output directory, never in the output tree: nothing a pull request commits can make
a build answer "unchanged". A hit still hashes every output file against the digests of what
idlgen generated, so a tampered file is regenerated. A ``.idlgen-cache.json`` left in the
output by older versions is never read, and a build deletes it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from importlib.metadata import version

from . import __version__
from .frontend.encoding import bad_name
from .config import Config
from . import outtree
from .diagnostics import Diagnostic, Diagnostics, Severity
from .frontend import LoadResult, load
from .frontend.inputs import expand_inputs
from .ir import Span
from .outtree import contained, read_regular, safe_rel

__all__ = ["BuildResult", "expand_inputs", "run_build", "MANIFEST", "CACHE"]

MANIFEST = ".idlgen-manifest.json"
CACHE = ".idlgen-cache.json"  # the legacy in-tree cache: never read, deleted by a build


def cache_file(out: Path) -> Path | None:
    """The build cache of output directory ``out`` in the user cache dir (None: disabled)."""
    configured = os.environ.get("IDLGEN_CACHE_DIR")
    if configured == "":
        return None
    base = (
        Path(configured)
        if configured
        else (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "idlgen")
    )
    name = hashlib.sha256(os.fsencode(out)).hexdigest()[:40]
    return base / "build" / f"{name}.json"


def _write_cache(out: Path, data: str) -> None:
    """Best effort: write the cache atomically (a temp file renamed over it)."""
    path = cache_file(out)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(data, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full cache dir costs speed, not correctness


def _load_cache(out: Path) -> dict[str, object]:
    path = cache_file(out)
    if path is None:
        return {}
    cache = _read_json(path)
    return cache if cache.get("out") == str(out) else {}


@dataclass
class BuildResult:
    load: LoadResult | None = None
    files: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # check mode: out of date or missing
    extra: list[str] = field(default_factory=list)  # check mode: would be removed
    diffs: list[str] = field(default_factory=list)
    cached: bool = False
    # Source texts for rendering replayed diagnostics of a cached build (no load result then).
    sources: dict[str, str] = field(default_factory=dict)


def _generator_digest() -> str:
    """Hash of everything that shapes the output besides the inputs."""
    h = hashlib.sha256(f"{__version__}|{version('black')}".encode())
    pkg = Path(__file__).resolve().parent
    from .resources import resource_dir

    roots = [pkg, resource_dir("templates"), resource_dir("grammars")]
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".j2", ".lark") and p.is_file():
                h.update(p.name.encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def _cache_key(cfg: Config, inputs: Sequence[Path], extra: str) -> str:
    h = hashlib.sha256(_generator_digest().encode())
    h.update(
        repr((sorted(map(str, inputs)), sorted((k, str(v)) for k, v in cfg.roots.items()))).encode()
    )
    h.update(
        repr((list(map(str, cfg.include)), cfg.line_length, str(cfg.base_dir), extra)).encode()
    )
    h.update(repr("auto" if cfg.kernels is None else sorted(cfg.kernels)).encode())
    return h.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _read_json(p: Path) -> dict[str, object]:
    """A JSON object from a regular file (never through a symlink), else ``{}``."""
    raw = read_regular(p)
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _trusted_bases(cfg: Config) -> list[Path]:
    """Directories sources may come from: the named inputs, roots and include dirs."""
    bases = [p.resolve() if p.is_dir() else p.resolve().parent for p in cfg.inputs]
    bases += [p.resolve() for p in cfg.roots.values()]
    bases += [p.resolve() for p in cfg.include]
    return bases


def _under(p: Path, bases: Sequence[Path]) -> bool:
    return any(p == b or b in p.parents for b in bases)


def _cache_hit(out: Path, key: str, cfg: Config, diags: Diagnostics) -> list[str] | None:
    """The output list when the cache says nothing changed and the files are intact.

    The cache lives in the user cache dir, never in the (untrusted) output tree; even so,
    entries naming files outside the inputs or the output (elsewhere, ``..``, through symlinks)
    are ignored with a warning and never read, and every output file is hashed against the
    digest of what idlgen generated for this key.
    """
    cache = _load_cache(out)
    if cache.get("key") != key:
        return None
    sources = cache.get("sources")
    outputs = cache.get("outputs")
    if not isinstance(sources, dict) or not isinstance(outputs, dict):
        return None
    bases = _trusted_bases(cfg)
    for path, digest in sources.items():
        ok = isinstance(path, str) and "\x00" not in path and os.path.isabs(path)
        if not ok or os.path.realpath(path) != path or not _under(Path(path), bases):
            diags.warning("IDL006", f"ignoring cache entry outside the inputs: {path!r}")
            return None
        data = read_regular(Path(path))
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
    for rel, digest in outputs.items():
        target = contained(out, rel)
        if target is None:
            diags.warning("IDL006", f"ignoring cache entry outside the output: {rel!r}")
            return None
        data = read_regular(target)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
    return sorted(outputs)


ExtraFiles = Callable[[Config, LoadResult, Diagnostics], dict[str, str]]
# progress(phase, done, total): called as phases start and advance (see idlgen.cli.progress).
Progress = Callable[[str, int, int], None]


def _diags_to_json(diags: Diagnostics) -> list[dict[str, object]]:
    return [
        {
            "severity": d.severity.value,
            "code": d.code,
            "message": d.message,
            "span": list(d.span) if d.span else None,
            "help": list(d.help),
            "notes": list(d.notes),
        }
        for d in diags
    ]


def _replay(cache: dict[str, object], result: BuildResult) -> Diagnostics:
    """The warnings the build that filled the cache printed, so a cached build prints them too.

    The cache is untrusted: rows must be well-typed, and source lines are shown only for files
    the cache hit just verified (never a file a crafted span names).
    """
    out = Diagnostics()
    rows = cache.get("diagnostics")
    sources = cache.get("sources")
    known = set(sources) if isinstance(sources, dict) else set()
    for row in rows if isinstance(rows, list) else []:
        try:
            raw = row["span"]
            span = None
            if raw is not None:
                f, *nums = raw
                if not isinstance(f, str) or len(nums) != 4:
                    continue
                if not all(isinstance(n, int) and 0 <= n < 1 << 31 for n in nums):
                    continue
                span = Span(f, *nums)
            d = Diagnostic(
                Severity(row["severity"]),
                str(row["code"]),
                str(row["message"]),
                span,
                tuple(map(str, row["help"])),
                tuple(map(str, row["notes"])),
            )
        except (KeyError, TypeError, ValueError):
            continue
        out.append(d)
        if span is not None and span.file not in result.sources:
            real = os.path.realpath(span.file)
            data = read_regular(Path(real)) if real in known else None
            if data is not None:
                result.sources[span.file] = data.decode("utf-8", errors="replace")
    return out


def run_build(
    cfg: Config,
    *,
    check: bool = False,
    want_diffs: bool = False,
    extra_files: ExtraFiles | None = None,
    progress: Progress | None = None,
) -> tuple[BuildResult, Diagnostics]:
    """Build (or, with ``check``, compare) the configured output. Diagnostics are returned."""
    diags = Diagnostics()
    result = BuildResult()
    if cfg.out is None:
        diags.error("IDL002", "no output directory: pass --out or set [tool.idlgen] out")
        return result, diags
    if not cfg.inputs:
        diags.error("IDL003", "no inputs: name schema files or set [tool.idlgen] inputs")
        return result, diags
    inputs = expand_inputs(cfg.inputs, diags)
    if diags.has_errors:
        return result, diags
    if cfg.out.is_symlink():
        diags.error(
            "IDL004", f"output directory '{cfg.out}' is a symlink; pass the directory it names"
        )
        return result, diags
    try:
        out = cfg.out.resolve()
    except (OSError, RuntimeError) as e:  # RuntimeError: a symlink loop on the way
        diags.error("IDL005", f"cannot use the output directory '{cfg.out}': {e}")
        return result, diags
    key = _cache_key(cfg, inputs, "reports" if extra_files else "")
    tick = progress or (lambda phase, done, total: None)
    job = _Job(cfg, inputs, out, key, check, want_diffs, extra_files, result, diags, tick)
    try:
        if check:
            if os.path.lexists(out / outtree.JOURNAL):
                diags.warning("IDL007", f"an interrupted build left '{out}' incomplete")
            with outtree.locked(out, exclusive=False):
                job.run()
            return result, diags
        created = not os.path.lexists(out)
        with outtree.locked(out, create=True):
            for w in outtree.recover(out):
                diags.warning("IDL006", w)
            hit = _cache_hit(out, key, cfg, diags)
            if hit is not None:
                result.cached = True
                result.unchanged = hit
                diags.extend(_replay(_load_cache(out), result))
                return result, diags
            job.run()
            if created and diags.has_errors:
                _remove_if_empty(out)  # a failed first build leaves no trace
    except (OSError, outtree.OutputError) as e:
        msg = str(e) if isinstance(e, outtree.OutputError) else f"{e.strerror or e}: '{out}'"
        diags.error("IDL005", f"cannot write the output: {msg}")
        result.written = []
        result.removed = []
    return result, diags


def _remove_if_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass


@dataclass
class _Job:
    cfg: Config
    inputs: Sequence[Path]
    out: Path
    key: str
    check: bool
    want_diffs: bool
    extra_files: ExtraFiles | None
    result: BuildResult
    diags: Diagnostics
    tick: Progress

    def run(self) -> None:
        """Load and generate; then compare (check) or commit the changes in one step."""
        cfg, out, result, diags = self.cfg, self.out, self.result, self.diags
        tick = self.tick
        tick("parse", 0, len(self.inputs))
        lr = load(self.inputs, roots=cfg.roots, include_dirs=cfg.include)
        result.load = lr
        diags.extend(lr.diagnostics)
        if lr.diagnostics.has_errors:
            return
        tick("parse", len(self.inputs), len(self.inputs))
        for sf in lr.schema.files:
            why = bad_name(sf.path)
            if why is not None:  # the name would be written into generated headers
                diags.error("IDL010", f"cannot generate code: {why}", Span(sf.path, 1, 1, 1, 1))
        if diags.has_errors:
            return
        # Imported here: jinja2 and black cost ~0.1 s to import, which `idlgen parse` does not need.
        from .backend.generate import GenerateOptions, generate

        options = GenerateOptions(
            line_length=cfg.line_length, base_dir=cfg.base_dir, kernels=cfg.kernels
        )
        tick("generate", 0, len(lr.schema.files))
        files = generate(lr.schema, list(lr.schema.files), diags, options)
        if self.extra_files is not None:
            files.update(self.extra_files(cfg, lr, diags))
        for rel in files:
            if safe_rel(rel) != rel:
                diags.error("IDL008", f"generated file name {rel!r} would leave the output")
        if diags.has_errors:
            return
        files[MANIFEST] = json.dumps({"generator": "idlgen", "files": sorted(files)}, indent=2)
        files[MANIFEST] += "\n"
        result.files = files

        tick("generate", len(lr.schema.files), len(lr.schema.files))
        changed: dict[str, str] = {}
        for i, (rel, text) in enumerate(files.items()):
            tick("check" if self.check else "write", i, len(files))
            path = contained(out, rel)
            raw = read_regular(path) if path is not None else None
            try:
                current = raw.decode("utf-8") if raw is not None else None
            except UnicodeDecodeError:
                current = None
            if current == text:
                result.unchanged.append(rel)
            elif not self.check:
                changed[rel] = text
            else:
                result.stale.append(rel)
                if self.want_diffs:
                    result.diffs.append(_unified(rel, current or "", text))
        removed = []
        for rel in self._previous_files(set(files)):
            path = contained(out, rel)
            if path is None:
                diags.warning("IDL006", f"ignoring manifest entry through a symlink: {rel!r}")
            elif os.path.lexists(path) and not path.is_dir():
                removed.append(rel)
        if self.check:
            tick("check", len(files), len(files))
            result.extra = removed
            return
        sources = {}
        for src in _source_paths(lr):
            real = Path(src).resolve()
            data = read_regular(real)
            if data is not None:
                sources[str(real)] = hashlib.sha256(data).hexdigest()
        cache = {
            "out": str(out),
            "key": self.key,
            "sources": sources,
            "outputs": {rel: _sha(text) for rel, text in files.items()},
            "diagnostics": _diags_to_json(diags),
        }
        legacy = contained(out, CACHE)
        drop = [CACHE] if legacy is not None and read_regular(legacy) is not None else []
        if changed or removed or drop:
            outtree.commit(out, changed, removed + drop)
        _write_cache(out, json.dumps(cache, indent=1, sort_keys=True) + "\n")
        tick("write", len(files), len(files))
        result.written = sorted(changed)
        result.removed = removed

    def _previous_files(self, current: set[str]) -> list[str]:
        """Files the last build produced and this one does not; foreign entries ignored."""
        previous = _read_json(self.out / MANIFEST).get("files")
        old: set[str] = set()
        for f in previous if isinstance(previous, list) else []:
            if isinstance(f, str) and safe_rel(f) == f:
                old.add(f)
            else:
                self.diags.warning("IDL006", f"ignoring manifest entry outside the output: {f!r}")
        return sorted(old - current - {MANIFEST, CACHE})


def _unified(rel: str, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
        )
    )


def _source_paths(lr: LoadResult) -> list[str]:
    return sorted(f.path for f in lr.schema.files)
