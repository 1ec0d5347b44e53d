"""Limits that keep hostile schemas cheap: nesting depth, suggestion work, file size.

The parsers (LALR) are iterative, but lowering and the enum evaluator recurse once per nesting
level; the parser stops at ``MAX_TREE_DEPTH`` levels (``idlgen.frontend.lalr``), which turns
``((((…`` into a located diagnostic instead of a ``RecursionError``.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_INCLUDE_DEPTH",
    "MAX_INHERITANCE",
    "MAX_SCHEMA_BYTES",
    "MAX_TREE_DEPTH",
    "MAX_TYPE_NESTING",
    "MAX_VALUE_NESTING",
    "BadUtf8",
    "bad_name",
    "batch_gc",
    "decode_schema",
    "is_file",
    "no_cyclic_gc",
    "read_schema",
    "Resolver",
]

# Parse-tree levels (one nesting level of a type or expression is 1-2 tree levels). Real
# schemas stay below 15; the limit leaves the recursive passes far from Python's stack limit.
MAX_TREE_DEPTH = 100
# Nested includes/imports followed recursively.
MAX_INCLUDE_DEPTH = 64
# Nesting of one type (List<…>, Map<…>, trailing []): generated annotations recurse on it.
MAX_TYPE_NESTING = 32
# Struct inheritance levels (each level copies its parent's fields).
MAX_INHERITANCE = 64
# Structs/unions held by value inside each other (S0 holds S1 holds …): the POD and layout
# rules recurse once per level. Real schemas stay below 5.
MAX_VALUE_NESTING = 64
# A schema file larger than this is refused before it is parsed.
MAX_SCHEMA_BYTES = 16 << 20


def read_schema(path: Path) -> bytes:
    """A schema file's bytes; ``OSError`` for non-regular files (a FIFO must not hang us,
    ``/dev/zero`` must not fill memory) and for files over ``MAX_SCHEMA_BYTES``."""
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


@dataclass(frozen=True)
class BadUtf8:
    """Where a schema stops being UTF-8: 1-based line and column (in code points, like every
    other column of a diagnostic) of the first bad byte, and what to say about it."""

    line: int
    col: int
    message: str


def decode_schema(data: bytes, *, string_literals: bool = False) -> tuple[str, BadUtf8 | None]:
    """A schema file's text without a UTF-8 BOM (flatc and hdi-gen skip one).

    Invalid UTF-8 gives the text with U+FFFD for the bad bytes (to show the line) and where
    the first one is. With ``string_literals`` (FlatBuffers), a bad byte inside a "…" literal
    is flatc's "illegal UTF-8 sequence".
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        bad = e.start
    line_start = data.rfind(b"\n", 0, bad) + 1
    line = data.count(b"\n", 0, bad) + 1
    prefix = data[line_start:bad]  # valid UTF-8: the decoder stopped after it
    col = len(prefix.decode("utf-8")) + 1
    message = f"invalid UTF-8 byte 0x{data[bad]:02x}"
    if string_literals:
        unescaped = prefix.replace(b"\\\\", b"").replace(b'\\"', b"")
        if unescaped.count(b'"') % 2 == 1:
            message = "illegal UTF-8 sequence"
    return data.decode("utf-8", errors="replace"), BadUtf8(line, col, message)


def bad_name(path: str) -> str | None:
    """Why ``path`` is refused as the name of a schema to generate code from, if it is.

    Control characters (newlines, escapes) would end up verbatim in generated headers, in
    diagnostics and in CI annotations, and undecodable bytes cannot be written to UTF-8 output;
    no real schema needs either.
    """
    for ch in path:
        cat = unicodedata.category(ch)
        if cat == "Cc":
            return f"file name {path!r} contains a control character"
        if cat == "Cs":  # os.fsdecode's stand-in for a byte that is not UTF-8
            return f"file name {path!r} is not valid UTF-8"
    return None


def is_file(p: Path) -> bool:
    """``Path.is_file`` that is False, not an exception, for names the OS rejects (too long,
    NUL bytes) — an include or import name comes straight from the schema."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a schema is parsed and lowered.

    Parsing builds a large, long-lived graph (the AST, then the IR) without creating cyclic
    garbage; every collection the allocations trigger re-scans that growing graph, which once
    measured 60 % of the time of a 1 MB schema. Reference counting still frees everything as
    usual.

    On the way out, everything allocated meanwhile moves to the oldest generation unscanned
    (``freeze`` then ``unfreeze``, both O(1)): re-enabling alone made the next allocation
    scan every object of the new IR as one young generation (0.1-0.2 s after a 1 MB schema).
    Cyclic garbage among them is still found, by the next full collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


@contextlib.contextmanager
def batch_gc() -> Iterator[None]:
    """Run Python's cyclic garbage collector less often, for one CLI command.

    Loading and generating already pause it (``no_cyclic_gc``); what remains, such as
    comparing two 1 MB schemas in ``diff`` (3.8 s against 3.5 s CPU) or writing reports, also
    allocates many objects that live until the command ends and makes almost no cyclic
    garbage. Young collections still run, every 100,000 allocations instead of 700, so any
    cyclic garbage is still freed.
    """
    old = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)


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
