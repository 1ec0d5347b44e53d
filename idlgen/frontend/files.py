"""Reading schema files: regular files only, size-bounded, names the OS rejects, and path
resolution shared by one load.

An editor's unsaved buffers take part through :func:`overlay`: inside it, the files it names
read as the given text (and exist) wherever the front ends read them. Nothing else changes:
imports and includes still resolve, and are contained, exactly as for files on disk. A caller
that loads the same files over and over (the language server) also passes a
:class:`ParseCache`: a file whose bytes did not change is not parsed again."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from ..bounds import MAX_SCHEMA_BYTES
from ..diagnostics import Diagnostic, Diagnostics

__all__ = ["ParseCache", "Resolver", "is_file", "overlay", "parsed", "read_schema"]

_T = TypeVar("_T")


# Texts that replace files' contents (keys: real paths) and the parse cache, set only inside
# ``overlay``.
class ParseCache:
    """Syntax trees (and the parser's diagnostics) of files by path and content digest: one
    entry per file, replaced when its bytes change. Lowering never mutates a syntax tree."""

    def __init__(self) -> None:
        self._trees: dict[tuple[str, str], tuple[str, Any, tuple[Diagnostic, ...]]] = {}


_OVERLAY: ContextVar[Mapping[str, str] | None] = ContextVar("idlgen_overlay", default=None)
_CACHE: ContextVar[ParseCache | None] = ContextVar("idlgen_parse_cache", default=None)


@contextlib.contextmanager
def overlay(texts: Mapping[Path, str], cache: ParseCache | None = None) -> Iterator[None]:
    """Inside the block, reading any of ``texts``' files gives its text (UTF-8 encoded) instead
    of what is on disk, and the file exists even if it is not saved yet; with ``cache``,
    :func:`parsed` answers unchanged files from it."""
    token = _OVERLAY.set({os.path.realpath(p): t for p, t in texts.items()} or None)
    ctoken = _CACHE.set(cache)
    try:
        yield
    finally:
        _CACHE.reset(ctoken)
        _OVERLAY.reset(token)


def parsed(
    language: str, display: str, digest: str, parse: Callable[[Diagnostics], _T], diags: Diagnostics
) -> _T:
    """``parse(diags)``, or its earlier result for the same file and bytes (the diagnostics it
    reported are reported again) when a :class:`ParseCache` is active."""
    cache = _CACHE.get()
    if cache is None:
        return parse(diags)
    hit = cache._trees.get((language, display))
    if hit is not None and hit[0] == digest:
        diags.extend(hit[2])
        return hit[1]  # type: ignore[no-any-return]
    mine = Diagnostics()
    tree = parse(mine)
    cache._trees[(language, display)] = (digest, tree, tuple(mine))
    diags.extend(mine)
    return tree


def _overlaid(path: Path) -> str | None:
    texts = _OVERLAY.get()
    return None if texts is None else texts.get(os.path.realpath(path))


def read_schema(path: Path) -> bytes:
    """A schema file's bytes; ``OSError`` for non-regular files (a FIFO must not hang us,
    ``/dev/zero`` must not fill memory) and for files over ``MAX_SCHEMA_BYTES``."""
    text = _overlaid(path)
    if text is not None:
        data = text.encode("utf-8", errors="surrogateescape")
        if len(data) > MAX_SCHEMA_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_SCHEMA_BYTES >> 20} MiB", str(path))
        return data
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size > MAX_SCHEMA_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_SCHEMA_BYTES >> 20} MiB", str(path))
        with os.fdopen(fd, "rb", closefd=False) as f:
            # the size fstat gave, plus a byte: a read of the limit allocates the limit
            data = f.read(st.st_size + 1)
            if len(data) > st.st_size:  # it grew meanwhile: on up to the limit
                data += f.read(MAX_SCHEMA_BYTES + 1 - len(data))
    finally:
        os.close(fd)
    if len(data) > MAX_SCHEMA_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_SCHEMA_BYTES >> 20} MiB", str(path))
    return data


def is_file(p: Path) -> bool:
    """``Path.is_file`` that is False, not an exception, for names the OS rejects (too long,
    NUL bytes) — an include or import name comes straight from the schema."""
    try:
        return p.is_file() or _overlaid(p) is not None
    except (OSError, ValueError):
        return False


_PATH = type(Path())  # PosixPath or WindowsPath


class Resolver:
    """``Path.resolve()`` for many files in few directories, within one load.

    Resolving a file costs an ``lstat`` per path component; a corpus resolves thousands of
    files in a few hundred directories. Directories are resolved once (per instance, so a
    later run sees a changed tree), the last component is followed only when it is a link.
    """

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}

    def __call__(self, p: Path) -> Path:
        head, tail = os.path.split(os.path.abspath(p))
        real = self._dirs.get(head)
        if real is None:
            real = self._dirs[head] = os.path.realpath(head)
        full = os.path.join(real, tail)
        if os.path.islink(full):
            return Path(os.path.realpath(full))
        # already resolved (a corpus's files, mostly): the same path, not a new one parsed
        return p if type(p) is _PATH and str(p) == full else Path(full)
