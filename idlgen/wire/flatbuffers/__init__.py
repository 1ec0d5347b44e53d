"""FlatBuffers runtime for generated code: descriptors, a flatc-identical encoder, a verifier.

Generated modules create one descriptor per table and struct at import time, each field by
keyword (``attr`` only where the Python attribute differs from the schema name)::

    _FB_REG = _fb.registry(__name__.rsplit(".", 2)[0])
    _fb.Table(
        "MyGame.Example.Monster",
        Monster,
        fields=[
            _fb.field("pos", slot=0, type=_fb.struct("MyGame.Example.Vec3")),
            _fb.field("mana", slot=1, type="h", default=150),
            _fb.field("name", slot=3, type="string", required=True, key=True),
            _fb.field("inventory", slot=5, type=_fb.vector("B")),
            ...
        ],
        identifier="MONS",
        reg=_FB_REG,
    )

Field type specs are literals, written with small constructors: a struct format char for
scalars (``"i"``, ``"?"``...), ``"string"``, ``_fb.vector(spec)``, ``_fb.array(spec, n)``,
``_fb.table(qualname)``, ``_fb.struct(qualname)``, ``_fb.enum(qualname, base=fmt,
cls="EnumClass")`` and, spelled out inline, ``_fb.union(qualname, members=[_fb.member(name,
value=v, type=spec), ...])``. Tables and structs are looked up by name in the package's
registry the first time a descriptor is used, so declaration order and cycles across modules
do not matter.

The encoder reproduces what ``flatc -b`` does for the JSON that :mod:`idlgen.wire.fbjson`
writes for the same value (src/idl_parser.cpp ``ParseTable``/``ParseVector`` over
flatbuffer_builder.h): children are built depth-first in field order before their parent,
table fields are written by size class 8, 4, 2, 1 and descending id, vtables are deduplicated,
key-sorted vectors are ordered with flatc's own (unstable) quicksort. The decoder verifies as it
reads, with the limits of the C++ ``Verifier`` (and a budget of decoded objects proportional
to the buffer size, against shared sub-objects), checks the root's ``file_identifier``, and
remembers on each decoded table which fields the buffer stored (``_fb_vt``) and the values
of deprecated fields (``_fb_dep``), so that JSON and re-encoding reproduce flatc exactly.
``offset64``/``vector64`` fields use 64-bit offsets (and lengths). Encoding errors raise
``EncodeError`` with the path of the offending field (``Model.subgraphs[0].name``).

The runtime is split by role: :mod:`.scalars` (formats, ranges, hashes), :mod:`.values`
(UnionValue, NestedBuffer, ScalarVector), :mod:`.builder` (the back-to-front builder),
:mod:`.handlers` (resolved types, the decode context), :mod:`.encoder` / :mod:`.decoder`
(tables), :mod:`.fields` (enum and field records), :mod:`.descriptors` (what generated code
declares; the codecs see it through protocols in :mod:`.handlers`), :mod:`.flex` (FlexBuffers),
:mod:`.literals` (flatc's number and string syntax). The public names are re-exported here,
and after them the internal API that :mod:`idlgen.wire.fbjson`, :mod:`idlgen.wire.records` and
the data tools share with the codecs (resolved handlers, field kinds, scalar tables, flatc's
hash and sort): stable within idlgen, not for generated code.
"""

from __future__ import annotations

from .builder import (
    simple_qsort as simple_qsort,
)
from .decoder import (
    read_table as read_table,
    read_union_vector as read_union_vector,
)
from .descriptors import (
    Struct as Struct,
    Table as Table,
    Union as Union,
    key_value as key_value,
    decode_nested as decode_nested,
    lookup_by_key as lookup_by_key,
)
from .encoder import (
    build_child as build_child,
    build_table as build_table,
)
from .fields import (
    Enum as Enum,
    Field as Field,
    TypeSpec as TypeSpec,
    array as array,
    enum as enum,
    field as field,
    member as member,
    struct as struct,
    table as table,
    union as union,
    vector as vector,
)
from .flex import (
    flex_is_null as flex_is_null,
    flex_dumps as flex_dumps,
    flex_loads as flex_loads,
)
from .handlers import (
    K_SCALAR as K_SCALAR,
    K_TABLE as K_TABLE,
    K_UNION as K_UNION,
    K_UNION_VEC as K_UNION_VEC,
    ArrayH as ArrayH,
    Handler as Handler,
    ScalarH as ScalarH,
    StringH as StringH,
    StructH as StructH,
    TableH as TableH,
    VectorH as VectorH,
    present as present,
)
from ..fbliterals import (
    parse_float as parse_float,
    parse_int as parse_int,
    unescape as unescape,
)
from .registry import (
    lookup as lookup,
    registry as registry,
)
from .scalars import (
    INT_RANGE as INT_RANGE,
    NP_DTYPE as NP_DTYPE,
    MAX_DEPTH as MAX_DEPTH,
    MAX_TABLES as MAX_TABLES,
    ZERO_COPY_MIN as ZERO_COPY_MIN,
    flatc_hash as flatc_hash,
    to_signed as to_signed,
)
from .values import (
    NestedBuffer as NestedBuffer,
    ScalarVector as ScalarVector,
    UnionValue as UnionValue,
)

__all__ = [
    "Table",
    "Struct",
    "Union",
    "Enum",
    "Field",
    "TypeSpec",
    "field",
    "vector",
    "array",
    "table",
    "struct",
    "enum",
    "union",
    "member",
    "UnionValue",
    "ScalarVector",
    "NestedBuffer",
    "lookup",
    "registry",
    "lookup_by_key",
    "decode_nested",
    "flex_dumps",
    "flex_loads",
    "parse_int",
    "parse_float",
    "unescape",
    "to_signed",
    "MAX_DEPTH",
    "MAX_TABLES",
    "ZERO_COPY_MIN",
    # internal API (see the module docstring)
    "Handler",
    "ScalarH",
    "StringH",
    "StructH",
    "TableH",
    "VectorH",
    "ArrayH",
    "K_SCALAR",
    "K_TABLE",
    "K_UNION",
    "K_UNION_VEC",
    "INT_RANGE",
    "NP_DTYPE",
    "flatc_hash",
    "simple_qsort",
    "key_value",
    "flex_is_null",
    "present",
    "read_table",
    "read_union_vector",
    "build_child",
    "build_table",
]
