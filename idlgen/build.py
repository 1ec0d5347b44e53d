"""``idlgen build`` / ``check``: load, generate in memory, then write only what changed.

Nothing is written unless the whole generation succeeded. Each file is replaced atomically
(temporary file + rename). A manifest (``.idlgen-manifest.json``, committed with the output)
lists the files idlgen produced, so a later build removes the stale ones and nothing else. A
cache file (``.idlgen-cache.json``, not meant for version control) lets a build whose inputs,
options and generator are unchanged skip parsing and generation.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from importlib.metadata import version

from . import __version__
from .config import Config
from .diagnostics import Diagnostic, Diagnostics, Severity
from .frontend import LoadResult, load
from .ir import Span

__all__ = ["BuildResult", "expand_inputs", "run_build", "MANIFEST", "CACHE"]

MANIFEST = ".idlgen-manifest.json"
CACHE = ".idlgen-cache.json"
SCHEMA_SUFFIXES = (".idl", ".fbs")


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


def expand_inputs(paths: Iterable[Path], diags: Diagnostics) -> list[Path]:
    """Schema files named directly, and every ``.idl``/``.fbs`` below named directories."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(
                sorted(q for q in p.rglob("*") if q.suffix in SCHEMA_SUFFIXES and q.is_file())
            )
        elif p.is_file():
            out.append(p)
        else:
            diags.error("IDL001", f"input not found: {p}")
    return list(dict.fromkeys(out))


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
    return h.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _read_json(p: Path) -> dict[str, object]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _cache_hit(out: Path, key: str) -> list[str] | None:
    """The output list when the cache says nothing changed and the files are intact."""
    cache = _read_json(out / CACHE)
    if cache.get("key") != key:
        return None
    sources = cache.get("sources")
    outputs = cache.get("outputs")
    if not isinstance(sources, dict) or not isinstance(outputs, dict):
        return None
    for path, digest in sources.items():
        try:
            if hashlib.sha256(Path(path).read_bytes()).hexdigest() != digest:
                return None
        except OSError:
            return None
    for rel, digest in outputs.items():
        try:
            if hashlib.sha256((out / rel).read_bytes()).hexdigest() != digest:
                return None
        except OSError:
            return None
    return sorted(outputs)


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


ExtraFiles = Callable[[Config, LoadResult, Diagnostics], dict[str, str]]
# progress(phase, done, total): called as phases start and advance (see idlgen.progress).
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
    """The warnings the build that filled the cache printed, so a cached build prints them too."""
    out = Diagnostics()
    rows = cache.get("diagnostics")
    for row in rows if isinstance(rows, list) else []:
        try:
            span = Span(*row["span"]) if row["span"] else None
            out.append(
                Diagnostic(
                    Severity(row["severity"]),
                    str(row["code"]),
                    str(row["message"]),
                    span,
                    tuple(row["help"]),
                    tuple(row["notes"]),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
        if span is not None and span.file not in result.sources:
            try:
                result.sources[span.file] = Path(span.file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass
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
    out = cfg.out
    key = _cache_key(cfg, inputs, "reports" if extra_files else "")
    if not check:
        hit = _cache_hit(out, key)
        if hit is not None:
            result.cached = True
            result.unchanged = hit
            diags.extend(_replay(_read_json(out / CACHE), result))
            return result, diags

    tick = progress or (lambda phase, done, total: None)
    tick("parse", 0, len(inputs))
    lr = load(inputs, roots=cfg.roots, include_dirs=cfg.include)
    result.load = lr
    diags.extend(lr.diagnostics)
    if lr.diagnostics.has_errors:
        return result, diags
    tick("parse", len(inputs), len(inputs))
    # Imported here: jinja2 and black cost ~0.1 s to import, which `idlgen parse` does not need.
    from .backend.generate import GenerateOptions, generate

    options = GenerateOptions(line_length=cfg.line_length, base_dir=cfg.base_dir)
    tick("generate", 0, len(lr.schema.files))
    files = generate(lr.schema, list(lr.schema.files), diags, options)
    if extra_files is not None:
        files.update(extra_files(cfg, lr, diags))
    if diags.has_errors:
        return result, diags
    files[MANIFEST] = json.dumps({"generator": "idlgen", "files": sorted(files)}, indent=2) + "\n"
    result.files = files

    previous = _read_json(out / MANIFEST).get("files")
    old_files = {f for f in previous if isinstance(f, str)} if isinstance(previous, list) else set()
    stale_old = sorted(old_files - set(files) - {MANIFEST})

    tick("generate", len(lr.schema.files), len(lr.schema.files))
    for i, (rel, text) in enumerate(files.items()):
        tick("check" if check else "write", i, len(files))
        path = out / rel
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current == text:
            result.unchanged.append(rel)
            continue
        if check:
            result.stale.append(rel)
            if want_diffs:
                result.diffs.append(
                    "".join(
                        difflib.unified_diff(
                            (current or "").splitlines(keepends=True),
                            text.splitlines(keepends=True),
                            f"a/{rel}",
                            f"b/{rel}",
                        )
                    )
                )
        else:
            _atomic_write(path, text)
            result.written.append(rel)
    tick("check" if check else "write", len(files), len(files))
    for rel in stale_old:
        if check:
            if (out / rel).exists():
                result.extra.append(rel)
            continue
        try:
            (out / rel).unlink()
            result.removed.append(rel)
        except FileNotFoundError:
            continue
        _prune_empty(out / rel, out)
    if not check:
        sources = {
            str(Path(p).resolve()): hashlib.sha256(Path(p).read_bytes()).hexdigest()
            for p in _source_paths(lr)
        }
        cache = {
            "key": key,
            "sources": sources,
            "outputs": {rel: _sha(text) for rel, text in files.items()},
            "diagnostics": _diags_to_json(diags),
        }
        _atomic_write(out / CACHE, json.dumps(cache, indent=1, sort_keys=True) + "\n")
    return result, diags


def _source_paths(lr: LoadResult) -> list[str]:
    return sorted(f.path for f in lr.schema.files)


def _prune_empty(path: Path, stop: Path) -> None:
    d = path.parent
    while d != stop and stop in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent
