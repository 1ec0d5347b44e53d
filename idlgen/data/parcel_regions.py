"""The regions of a MessageParcel (``idlgen annotate`` on an ``.idl`` struct): the walk reads the
bytes through the record's own codecs (the generated ``Struct``/``PodStruct``/array/map codecs
of :mod:`idlgen.wire.parcel`), member by member, and labels what each member read: fields,
array and map lengths (``vector``), strings and the 4-byte alignment padding after them.
"""

from __future__ import annotations

import enum
import re
import struct
from typing import Any

from ..errors import DecodeError
from ..wire.parcel import codecs as pc
from ..wire.parcel import composite as pcc
from ..wire.parcel.stream import Reader
from .regions import Claims

__all__ = ["walk_parcel"]

_POD = re.compile(r"(\d*)([a-zA-Z?])")
_CTYPE = {
    "b": "int8_t",
    "B": "uint8_t",
    "h": "int16_t",
    "H": "uint16_t",
    "i": "int32_t",
    "I": "uint32_t",
    "q": "int64_t",
    "Q": "uint64_t",
    "f": "float",
    "d": "double",
    "?": "bool",
}


def _value(v: Any) -> str:
    if isinstance(v, enum.Enum):
        return f"{v.value} ({v.name})"
    text = repr(v)
    return text if len(text) <= 60 else text[:59] + "…"


def _pod_leaves(codec: Any, prefix: str) -> list[str]:
    names: list[str] = []
    for name, conv in codec.fields:
        if isinstance(conv, pcc.PodStruct):
            names += _pod_leaves(conv, f"{prefix}{name}.")
        else:
            names.append(f"{prefix}{name}")
    return names


class _Walk:
    def __init__(self, data: bytes) -> None:
        self.c = Claims(data)
        self.r = Reader(data)
        self.data = data

    def pod(self, codec: Any, path: str, section: str) -> None:
        start = self.r.pos
        codec.read(self.r)  # bounds
        names = iter(_pod_leaves(codec, ""))
        off = start
        for count, code in _POD.findall(codec.pod_fmt):
            n = int(count) if count else 1
            if code == "x":
                self.c.claim(off, n, "padding", section, f"uint8_t[{n}]", "", "padding")
                off += n
            elif code == "s":
                name = next(names, "?")
                self.c.claim(off, n, "field", section, f"uint8_t[{n}]", "", f"union `{name}`")
                off += n
            else:
                size = {"b": 1, "B": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "f": 4}.get(code, 8)
                for _ in range(n):
                    name = next(names, "?")
                    shown = struct.unpack_from("<" + code, self.data, off)[0]
                    self.c.claim(
                        off, size, "field", section, _CTYPE.get(code, code), _value(shown),
                        f"{path}.{name}" if path else name,
                    )  # fmt: skip
                    off += size

    def walk(self, codec: Any, path: str, section: str) -> None:
        r = self.r
        start = r.pos
        if isinstance(codec, pcc.Struct):
            sec = f"struct ({codec.name})"
            for name, c in codec.fields:
                self.walk(c, f"{path}.{name}" if path else name, sec)
            return
        if isinstance(codec, pcc.PodStruct):
            self.pod(codec, path, f"struct ({codec.name})")
            return
        if isinstance(codec, (pcc.Array, pcc.Map)):
            n = r.read_uint32()
            r.pos = start
            # the codec's own checks (limits, bytes left) before walking the elements
            if isinstance(codec, pcc.Array):
                if n > codec._limit or n * codec.element.min_size > r.end - r.pos - 4:
                    codec.read(r)  # raises the located DecodeError
            elif n * codec._min > r.end - r.pos - 4:
                codec.read(r)
            r.pos = start + 4
            kind = "vector"
            self.c.claim(start, 4, kind, f"vector ({path})", "uint32_t", str(n), "length")
            for i in range(n):
                if not self.c.spend(1):
                    r.fail("annotation budget exhausted")
                if isinstance(codec, pcc.Array):
                    if not codec.element.min_size:
                        r.free_elements -= 1
                        if r.free_elements < 0:
                            r.fail("zero-size elements exceed the decode budget")
                    self.walk(codec.element, f"{path}[{i}]", f"vector ({path})")
                else:
                    self.walk(codec.key, f"{path}[{i}].key", f"vector ({path})")
                    self.walk(codec.value, f"{path}[{i}].value", f"vector ({path})")
            return
        if isinstance(codec, (pcc.Bytes, pcc.PodArray)):
            v = codec.read(r)
            n = len(v)
            sec = f"vector ({path})"
            self.c.claim(start, 4, "vector", sec, "uint32_t", str(n), "length")
            body = r.pos - start - 4
            used = len(bytes(v)) if isinstance(codec, pcc.Bytes) else n * codec._size
            if used:
                self.c.claim(start + 4, used, "vector", sec, f"uint8_t[{used}]", _value(v), path)
            if body > used:
                pad = body - used
                self.c.claim(
                    start + 4 + used, pad, "padding", sec, f"uint8_t[{pad}]", "", "padding"
                )
            return
        if codec is pc.STRING:
            v = codec.read(r)
            sec = f"string ({path})"
            nul = self.data.find(b"\0", start, r.pos)
            self.c.claim(start, nul - start, "string", sec, f"char[{nul - start}]", _value(v), path)
            self.c.claim(nul, 1, "string", sec, "char", "0", "string terminator")
            if r.pos > nul + 1:
                pad = r.pos - nul - 1
                self.c.claim(nul + 1, pad, "padding", sec, f"uint8_t[{pad}]", "", "padding")
            return
        v = codec.read(r)
        size = r.pos - start
        if size:
            name = getattr(codec, "name", type(codec).__name__)
            self.c.claim(start, size, "field", section, str(name), _value(v), path)


def walk_parcel(cls: Any, data: bytes) -> Claims:
    """Label every byte of ``data``, the Parcel encoding of the HDI record class ``cls``."""
    w = _Walk(data)
    codec = pcc.codec_of(cls)
    try:
        w.walk(codec, "", f"struct ({codec.name})")
        w.r.check_done()
    except DecodeError as e:
        w.c.problem(e.offset if e.offset is not None else w.r.pos, str(e))
    return w.c
