"""black, in process, on every core, behind a content-addressed cache.

Formatting is nearly all of a cold build's time (black takes ~0.5 s per thousand lines), and
most rebuilds change a few modules only. Each unformatted source is keyed by its SHA-256 plus
black's version and mode; the formatted text is stored under the user cache directory
(``IDLGEN_CACHE_DIR`` overrides it; ``IDLGEN_CACHE_DIR=""`` disables the cache). Output is
exactly black's output either way.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing as mp
import os
import tempfile
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from pathlib import Path

import black
from black.mode import TargetVersion
from black.parsing import InvalidInput

__all__ = ["format_source", "format_many"]

# Below this much unformatted source, worker processes cost more than they save.
_PARALLEL_MIN_BYTES = 200_000


@functools.cache
def _mode(line_length: int) -> black.Mode:
    return black.Mode(target_versions={TargetVersion.PY311}, line_length=line_length)


def format_source(src: str, line_length: int, what: str) -> str:
    try:
        return black.format_str(src, mode=_mode(line_length))
    except InvalidInput as e:  # a template bug: show where
        raise RuntimeError(f"generated code for {what} is not valid Python: {e}\n{src}") from e


def _cache_dir() -> Path | None:
    configured = os.environ.get("IDLGEN_CACHE_DIR")
    if configured == "":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "idlgen" / "black"


def _key(src: str, line_length: int) -> str:
    h = hashlib.sha256(f"black {version('black')} py311 {line_length}\n".encode())
    h.update(src.encode())
    return h.hexdigest()


def _load(d: Path | None, key: str) -> str | None:
    if d is None:
        return None
    try:
        return (d / key[:2] / f"{key}.py").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _store(d: Path | None, key: str, text: str) -> None:
    if d is None:
        return
    try:
        sub = d / key[:2]
        sub.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=sub, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, sub / f"{key}.py")
    except OSError:
        pass  # a read-only or full cache only costs time


def _format_job(job: tuple[str, str, int]) -> str:
    rel, src, line_length = job
    return format_source(src, line_length, rel)


def format_many(sources: Mapping[str, str], line_length: int) -> dict[str, str]:
    """Format every ``{path: source}``; cached results first, the rest on every core."""
    d = _cache_dir()
    out: dict[str, str] = {}
    todo: list[tuple[str, str, int]] = []
    keys: dict[str, str] = {}
    for rel, src in sources.items():
        keys[rel] = _key(src, line_length)
        hit = _load(d, keys[rel])
        if hit is not None:
            out[rel] = hit
        else:
            todo.append((rel, src, line_length))
    workers = min(os.cpu_count() or 1, len(todo))
    parallel = (
        workers > 1
        and sum(len(s) for _, s, _ in todo) >= _PARALLEL_MIN_BYTES
        and "fork" in mp.get_all_start_methods()
    )
    if parallel:
        # Largest first, so the long modules do not end up last on one worker.
        todo.sort(key=lambda j: -len(j[1]))
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
            results = list(pool.map(_format_job, todo))
    else:
        results = [_format_job(j) for j in todo]
    for (rel, _, _), text in zip(todo, results):
        out[rel] = text
        _store(d, keys[rel], text)
    return {rel: out[rel] for rel in sources}
