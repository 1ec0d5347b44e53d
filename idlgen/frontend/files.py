"""Reading schema files: regular files only, size-bounded, names the OS rejects, and path
resolution shared by one load.

An editor's unsaved buffers take part through :func:`overlay`: inside it, the files it names
read as the given text (and exist) wherever the front ends read them. Nothing else changes:
imports and includes still resolve, and are contained, exactly as for files on disk."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path

from ..bounds import MAX_SCHEMA_BYTES

__all__ = ["Resolver", "is_file", "overlay", "read_schema"]

# Texts that replace files' contents (keys: real paths), set only inside ``overlay``.
_OVERLAY: ContextVar[Mapping[str, str] | None] = ContextVar("idlgen_overlay", default=None)


@contextlib.contextmanager
def overlay(texts: Mapping[Path, str]) -> Iterator[None]:
    """Inside the block, reading any of ``texts``' files gives its text (UTF-8 encoded) instead
    of what is on disk, and the file exists even if it is not saved yet."""
    token = _OVERLAY.set({os.path.realpath(p): t for p, t in texts.items()} or None)
    try:
        yield
    finally:
        _OVERLAY.reset(token)


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
            data = f.read(MAX_SCHEMA_BYTES + 1)
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
        return Path(os.path.realpath(full) if os.path.islink(full) else full)
