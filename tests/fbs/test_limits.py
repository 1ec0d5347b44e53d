"""Encode errors carry a field path; file identifiers are checked; verified decoding is bounded
for hostile input (shared sub-objects, deep JSON)."""

from __future__ import annotations

import struct
import tracemalloc
from typing import Any

import pytest

from idlgen import DecodeError, EncodeError
from idlgen.wire import fbjson

from .common import runtime_text


def _runtime(src: str) -> dict[str, Any]:
    return runtime_text(src)


# -- encode errors -------------------------------------------------------------------------------

NESTED = """
namespace N;
struct V { x:short; }
table Leaf { name:string; n:ubyte; v:V; }
table Root { leaves:[Leaf]; req:string (required); }
root_type Root;
"""


@pytest.mark.parametrize(
    "make,path",
    [
        (
            lambda rt: rt["N.Root"](req="r", leaves=[rt["N.Leaf"](), rt["N.Leaf"](n=300)]),
            "Root.leaves[1].n",
        ),
        (lambda rt: rt["N.Root"](req="r", leaves=[rt["N.Leaf"](name=5)]), "Root.leaves[0].name"),
        (
            lambda rt: rt["N.Root"](req="r", leaves=[rt["N.Leaf"](v=rt["N.V"](x=1 << 20))]),
            "Root.leaves[0].v",
        ),
        (lambda rt: rt["N.Root"](req=None, leaves=[]), "Root.req"),  # a required field unset
        (lambda rt: rt["N.Root"](req="r", leaves=["x"]), "Root.leaves[0]"),
    ],
)
def test_encode_errors_name_the_field(make: Any, path: str) -> None:
    rt = _runtime(NESTED)
    with pytest.raises(EncodeError) as e:
        rt["desc:N.Root"].encode(make(rt))
    assert e.value.path == path
    assert isinstance(e.value, ValueError)


def test_struct_encode_error() -> None:
    rt = _runtime(NESTED)
    with pytest.raises(EncodeError) as e:
        rt["desc:N.V"].encode(rt["N.V"](x="a"))
    assert e.value.path == "V"


# -- file identifiers ----------------------------------------------------------------------------

IDENT = 'table T { a:int; } root_type T; file_identifier "ABCD";'


def test_identifier_checked_when_verifying() -> None:
    rt = _runtime(IDENT)
    desc = rt["desc:T"]
    data = desc.encode(rt["T"](a=1))
    assert data[4:8] == b"ABCD"
    assert desc.decode(data) == rt["T"](a=1)
    other = desc.encode(rt["T"](a=1), file_identifier="WXYZ")
    with pytest.raises(DecodeError, match="identifier") as e:
        desc.decode(other)
    assert e.value.offset == 4
    assert desc.decode(other, check_identifier=False) == rt["T"](a=1)
    assert desc.decode(other, verify=False) == rt["T"](a=1)
    # size-prefixed buffers carry the identifier after the prefix
    sp = desc.encode(rt["T"](a=2), size_prefixed=True)
    assert desc.decode(sp, size_prefixed=True) == rt["T"](a=2)
    with pytest.raises(DecodeError, match="identifier"):
        desc.decode(sp)  # read without its prefix the identifier is in the wrong place


def test_no_identifier_declared_accepts_anything() -> None:
    rt = _runtime("table T { a:int; } root_type T;")
    desc = rt["desc:T"]
    data = bytearray(desc.encode(rt["T"](a=3)))
    assert desc.decode(bytes(data)) == rt["T"](a=3)


# -- bounded decoding ----------------------------------------------------------------------------

DAG = "table N { a:N; b:N; s:string; } root_type N;"


def _dag(depth: int) -> bytes:
    """A chain of ``depth`` tables whose fields a and b both point at the next one: tiny
    bytes, 2**depth tables when expanded as a tree."""
    # Built by hand: every table is [soffset][a][b], sharing one vtable.
    out = bytearray()
    out += struct.pack("<I", 0)  # root offset, patched below
    vt = len(out)
    out += struct.pack("<HHHH", 8, 12, 4, 8)  # vtable: size 8, table 12, a at 4, b at 8
    tables = []
    for i in range(depth):
        tables.append(len(out))
        out += struct.pack("<iII", len(out) - vt, 0, 0)
    for i in range(depth - 1):
        t, nxt = tables[i], tables[i + 1]
        struct.pack_into("<II", out, t + 4, nxt - (t + 4), nxt - (t + 8))
    last = tables[-1]
    struct.pack_into("<HHHH", out, vt, 4, 4, 0, 0)  # not used by the last table...
    # ...which gets its own empty vtable
    evt = len(out)
    out += struct.pack("<HH", 4, 4)
    out += b"\0\0\0\0"
    struct.pack_into("<HHHH", out, vt, 8, 12, 4, 8)
    struct.pack_into("<i", out, last, last - evt)
    struct.pack_into("<I", out, 0, tables[0])
    return bytes(out)


def test_shared_subtables_do_not_amplify() -> None:
    rt = _runtime(DAG)
    desc = rt["desc:N"]
    small = _dag(4)  # 15 table visits: fine
    v = desc.decode(small)
    assert v.a is not None and v.a.b is not None
    data = _dag(40)  # ~600 bytes, 2**40 tables as a tree
    assert len(data) < 1024
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="more objects"):
            desc.decode(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024


def test_shared_string_is_decoded_once() -> None:
    rt = _runtime("table T { s:[string]; } root_type T;")
    desc = rt["desc:T"]
    # one 1000-byte string referenced 200 times
    body = bytearray()
    data = desc.encode(rt["T"](s=["x" * 1000] + ["y"] * 199))
    # redirect every element to the first string
    i = data.index(struct.pack("<I", 200))
    start = i + 4
    first = start + struct.unpack_from("<I", data, start)[0]
    body = bytearray(data)
    for k in range(200):
        p = start + 4 * k
        struct.pack_into("<I", body, p, first - p)
    v = desc.decode(bytes(body))
    assert len(v.s) == 200 and all(x is v.s[0] for x in v.s)


def test_deep_json_is_a_decode_error() -> None:
    rt = _runtime("table T { t:T; v:[int]; } root_type T;")
    desc = rt["desc:T"]
    for text in (
        "{t:" * 100_000 + "}" * 100_000,
        '{"t":' * 5000 + "{}" + "}" * 5000,
        "[" * 100_000,
    ):
        with pytest.raises(DecodeError):
            fbjson.from_json(desc, text)
    with pytest.raises(DecodeError):
        fbjson.from_json(desc, '{"v": ' + "[" * 100_000 + "]" * 100_000 + "}")
