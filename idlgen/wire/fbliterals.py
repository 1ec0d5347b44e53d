"""flatc's literal syntax (numbers, string escapes), shared by the JSON reader and the schema
front end; the runtime owns it so that generated code never imports the compiler."""

from __future__ import annotations

import math

__all__ = ["parse_int", "parse_float", "unescape"]


def parse_int(text: str) -> int:
    """A flatc integer literal: optional sign, decimal or ``0x`` hex (leading zeros allowed)."""
    t = text.strip()
    neg = t.startswith("-")
    if t[:1] in "+-":
        t = t[1:]
    v = int(t[2:], 16) if t[:2].lower() == "0x" else int(t, 10)
    return -v if neg else v


def parse_float(text: str) -> float:
    """A flatc float literal: decimal, hex (``0x1.8p3``), ``nan``, ``inf``/``infinity``."""
    t = text.strip().lower()
    body = t.lstrip("+-")
    neg = t.startswith("-")
    if body in ("nan",):
        return math.nan
    if body in ("inf", "infinity"):
        return -math.inf if neg else math.inf
    if body.startswith("0x"):
        if "p" not in body:
            body += "p0"
        v = float.fromhex(body)
        return -v if neg else v
    return float(t)


_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    '"': '"',
    "'": "'",
    "\\": "\\",
    "/": "/",
}


def unescape(body: str) -> str:
    """Decode flatc string escapes (``\\xHH``, ``\\uXXXX`` with surrogate pairs)."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif e == "u":
            cp = int(body[i + 2 : i + 6], 16)
            i += 6
            if 0xD800 <= cp < 0xDC00 and body[i : i + 2] == "\\u":
                lo = int(body[i + 2 : i + 6], 16)
                if 0xDC00 <= lo < 0xE000:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
            out.append(chr(cp))
        else:
            raise ValueError(f"unknown escape code in string constant: \\{e}")
    return "".join(out)
