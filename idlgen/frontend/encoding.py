"""What text a schema may hold: UTF-8 contents (``decode_schema``) and file names that are
UTF-8 without control characters (``bad_name``: they end up in generated headers)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = ["BadUtf8", "bad_name", "decode_schema"]


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
