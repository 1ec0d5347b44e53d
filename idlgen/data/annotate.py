"""``idlgen annotate``: the regions of a FlatBuffer or Parcel, as text or JSON.

:mod:`.fb_regions` and :mod:`.parcel_regions` walk the bytes, :mod:`.regions` keeps the
claimed regions; this module picks the walker and renders the result.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from .fb_regions import walk_flatbuffer
from .parcel_regions import walk_parcel
from .regions import Claims, Region

__all__ = ["annotate", "render_text", "render_json"]

#: bytes shown per region in text output; longer regions end in "…"
_SHOWN = 8


def annotate(compiled: Any, data: bytes, *, size_prefixed: bool = False) -> Claims:
    """The regions of ``data`` held by the compiled schema's root type."""
    if compiled.kind == "fbs":
        return walk_flatbuffer(compiled.codec, data, size_prefixed=size_prefixed)
    return walk_parcel(compiled.codec, data)


def _hex(data: bytes, r: Region) -> str:
    shown = data[r.offset : r.offset + min(r.size, _SHOWN)]
    text = " ".join(f"{b:02X}" for b in shown)
    return text + (" …" if r.size > _SHOWN else "")


def render_text(compiled: Any, schema: str, binary: str, data: bytes, claims: Claims) -> str:
    regions = claims.finish()
    width = max(4, len(f"{len(data):X}"))
    out = [
        "// Annotated binary (idlgen annotate)",
        "//",
        f"// Schema file: {schema}",
        f"// Binary file: {binary}",
        f"// Root type: {compiled.qualname} ({'FlatBuffers' if compiled.kind == 'fbs' else 'Parcel'})",
        f"// Size: {len(data)} bytes",
    ]
    types = max([len(r.type) for r in regions] + [4])
    values = min(max([len(r.value) for r in regions] + [4]), 40)
    section = None
    for r in regions:
        if r.section != section:
            section = r.section
            out.append("")
            out.append(f"{section}:")
        value = r.value if len(r.value) <= 40 else r.value[:39] + "…"
        out.append(
            f"  +0x{r.offset:0{width}X} | {_hex(data, r):<25} | {r.type:<{types}} | "
            f"{value:<{values}} | {r.label}"
        )
    if claims.problems:
        out.append("")
        out.append("errors:")
        out.extend(f"  +0x{o:0{width}X} | {m}" for o, m in claims.problems)
    return "\n".join(out) + "\n"


def render_json(compiled: Any, binary: str, data: bytes, claims: Claims) -> str:
    regions = claims.finish()
    doc: dict[str, Any] = {
        "root_type": compiled.qualname,
        "format": "flatbuffers" if compiled.kind == "fbs" else "parcel",
        "binary": binary,
        "size": len(data),
        "regions": [asdict(r) for r in regions],
        "errors": [{"offset": o, "message": m} for o, m in claims.problems],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
