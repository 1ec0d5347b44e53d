"""Reading a file an attacker may have placed (a committed manifest, a cache, a user template):
regular files only, never through a symlink, never a FIFO that blocks, within a size limit."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["MAX_READ", "read_regular"]

# Manifests, caches, templates and generated modules are small; anything bigger is not ours.
MAX_READ = 64 << 20


def read_regular(path: Path, limit: int = MAX_READ) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a symlink), else None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)
