"""Base classes and helpers of generated record classes.

Generated classes are plain dataclasses with typed fields; everything else (dict conversion,
field-name checks, the Parcel and FlatBuffers methods) lives here once, driven by each class's
dataclass fields and type annotations (resolved on first use, so modules that import each
other still load) and by the wire descriptor the codec table binds to the class.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self, TypeVar, cast

from .parcel import DEFAULT_CAPACITY

__all__ = [
    "OpenIntEnum",
    "Record",
    "ParcelRecord",
    "FlatRecord",
    "descriptor_of",
    "enum_from",
    "set_schema_names",
    "schema_members",
    "bytes_from",
    "map_items",
    "union_to_dict",
]

E = TypeVar("E", bound=enum.Enum)


class OpenIntEnum(enum.IntEnum):
    """An IntEnum that keeps unknown values.

    The C++ side stores whatever number arrives (``static_cast<E>(u64)``); so do we: calling the
    class with an unknown int returns a pseudo-member named ``UNKNOWN_<n>`` carrying the raw
    value, instead of raising.
    """

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        pseudo = int.__new__(cls, value)
        pseudo._name_ = f"UNKNOWN_{value}" if value >= 0 else f"UNKNOWN_MINUS_{-value}"
        pseudo._value_ = value
        return pseudo


def set_schema_names(cls: type[enum.Enum], names: Mapping[str, str]) -> None:
    """Record the schema names of members whose Python names were escaped (``None`` → ``None_``)."""
    setattr(cls, "_schema_names_", dict(names))


def schema_members(cls: type[E]) -> dict[str, E]:
    """Members (aliases included) by their schema names."""
    renamed: Mapping[str, str] = getattr(cls, "_schema_names_", {})
    return {renamed.get(n, n): m for n, m in cls.__members__.items()}


def enum_from(cls: type[E], v: object) -> E:
    """An enum member from an int or a member name (the schema's or the Python one)."""
    if isinstance(v, cls):
        return v
    if isinstance(v, str):
        # not ``or``: a member worth 0 is falsy (IntEnum), and would fall through
        member = cls.__members__.get(v)
        if member is None:
            member = schema_members(cls).get(v)
        if member is not None:
            return member
        raise ValueError(f"{v!r} is not a member of {cls.__name__}")
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{cls.__name__} value must be an int or a name, not {type(v).__name__}")
    return cls(v)


def bytes_from(v: object) -> bytes:
    """``bytes`` from bytes-like input or a list of ints (signed bytes are taken mod 256)."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, Iterable) and not isinstance(v, str):
        out = bytearray()
        for x in v:
            if isinstance(x, bool) or not isinstance(x, int) or not -128 <= x <= 255:
                raise ValueError(f"byte value out of range: {x!r}")
            out.append(x & 0xFF)
        return bytes(out)
    raise TypeError(f"expected bytes or a list of ints, not {type(v).__name__}")


def map_items(v: object) -> Iterable[tuple[Any, Any]]:
    """Key/value pairs from a dict or a list of ``[key, value]`` pairs."""
    if isinstance(v, Mapping):
        return list(v.items())
    if isinstance(v, Iterable) and not isinstance(v, (str, bytes)):
        pairs = []
        for item in v:
            k, val = item
            pairs.append((k, val))
        return pairs
    raise TypeError(f"expected a dict or a list of pairs, not {type(v).__name__}")


def union_to_dict(v: object) -> object:
    """A union member's value in dict form (records → dicts, strings as they are)."""
    to_dict = getattr(v, "to_dict", None)
    return to_dict() if callable(to_dict) else v


def _fb_union_converters(u: Any, vector: bool) -> tuple[_Conv, _Conv]:
    """(to_dict, from_dict) of a FlatBuffers union field (``vector``: a vector of unions).

    The dict form names the member, as an HDI union's does: ``{"A2": {...}}``, so aliased
    members (``UnionValue``) and string members round-trip. ``from_dict`` also takes the
    member's value itself (a record, a string, a ``UnionValue``), as the constructor does.
    """

    def to(x: Any) -> Any:
        if x is None:
            return None
        disc, _, payload = u.member_of(x)
        return {u.by_value[disc][0]: union_to_dict(payload)}

    def frm(v: Any) -> Any:
        if not isinstance(v, Mapping):
            return v
        if len(v) != 1:
            raise ValueError(f"a {u.qualname} value is one {{member: value}} pair, not {v!r}")
        ((name, x),) = v.items()
        u.prepare()
        hit = u.by_name.get(name)
        if hit is None:
            raise ValueError(f"{name!r} is not a member of union {u.qualname}")
        h = hit[1]
        cls = getattr(getattr(h, "desc", None), "cls", None)
        if cls is None:  # a string member
            if not isinstance(x, str):
                raise TypeError(f"union member {name} is a string, not {type(x).__name__}")
        elif isinstance(x, Mapping):
            x = cls.from_dict(x) if hasattr(cls, "from_dict") else cls(**x)
        return u.wrap(name, h, x)

    if not vector:
        return to, (lambda v: None if v is None else frm(v))
    return (
        lambda xs: None if xs is None else [to(x) for x in xs],
        lambda vs: None if vs is None else [None if v is None else frm(v) for v in vs],
    )


def _fb_union_fields(cls: type) -> dict[str, tuple[_Conv, _Conv]]:
    """The union fields of a FlatBuffers table class, by attribute."""
    desc = cls.__dict__.get("_FB_DESC")
    if desc is None or not hasattr(desc, "fields") or not hasattr(desc, "identifier"):
        return {}
    from .flatbuffers import K_UNION, K_UNION_VEC

    desc.prepare()
    return {
        r.attr: _fb_union_converters(r.union, r.kind == K_UNION_VEC)
        for r in desc._rf
        if r.kind in (K_UNION, K_UNION_VEC) and not r.dep
    }


# ---------------------------------------------------------------------------------------------
# Record base classes

_Conv = Callable[[Any], Any]


def _ident(x: Any) -> Any:
    return x


def _converters(tp: Any) -> tuple[_Conv, _Conv]:
    """(to_dict, from_dict) conversions of a value annotated ``tp``."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        if len(args) == 1:
            to, frm = _converters(args[0])
        elif bytes in args:  # FlatBuffers [ubyte]: bytes or a zero-copy vector
            to, frm = bytes, bytes_from
        elif any(typing.get_origin(a) is list for a in args):  # list or a zero-copy vector
            to, frm = _converters(next(a for a in args if typing.get_origin(a) is list))
        else:  # a FlatBuffers union: its member's dict, values taken as they are
            to, frm = union_to_dict, _ident
        if not optional or (to is _ident and frm is _ident):
            return to, frm
        return (lambda x: None if x is None else to(x)), (lambda v: None if v is None else frm(v))
    if origin is list:
        (elem,) = typing.get_args(tp)
        eto, efrm = _converters(elem)
        to_l: _Conv = list if eto is _ident else (lambda x: [eto(e) for e in x])
        return to_l, (lambda v: [efrm(e) for e in v])
    if origin is dict:
        kt, vt = typing.get_args(tp)
        kto, kfrm = _converters(kt)
        vto, vfrm = _converters(vt)
        if kto is _ident and vto is _ident:
            to_d: _Conv = dict
        else:
            to_d = lambda x: {kto(k): vto(v) for k, v in x.items()}  # noqa: E731
        return to_d, (lambda v: {kfrm(k): vfrm(w) for k, w in map_items(v)})
    if tp in (int, float, str):
        return _ident, tp
    if tp is bool:
        return _ident, bool
    if tp is bytes:
        return _ident, bytes_from
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return int, (lambda v: enum_from(tp, v))
    if isinstance(tp, type) and hasattr(tp, "from_dict"):
        return (lambda x: x.to_dict()), tp.from_dict
    return _ident, _ident  # out-of-band objects, interfaces, sequenceables


class _Plan:
    """Per-class field table: (attribute, schema name, to_dict, from_dict)."""

    def __init__(self, cls: type) -> None:
        hints = typing.get_type_hints(cls)
        unions = _fb_union_fields(cls)
        self.fields: tuple[tuple[str, str, _Conv, _Conv], ...] = tuple(
            (
                f.name,
                f.metadata.get("schema_name", f.name),
                *(unions.get(f.name) or _converters(hints[f.name])),
            )
            for f in dataclasses.fields(cls)
        )
        self.names = frozenset(n for _, n, _, _ in self.fields)


def _plan(cls: type) -> _Plan:
    plan = cls.__dict__.get("_plan_")
    if plan is None:
        plan = _Plan(cls)
        setattr(cls, "_plan_", plan)
    return cast(_Plan, plan)


class Record:
    """Base of generated struct/table classes: dict conversion keyed by schema field names."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """This value as a dict keyed by schema field names."""
        return {n: to(getattr(self, a)) for a, n, to, _ in _plan(type(self)).fields}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Self:
        """Build from a dict keyed by schema field names; missing keys keep their defaults."""
        plan = _plan(cls)
        unknown = set(d) - plan.names
        if unknown:
            raise ValueError(f"unknown field(s) for {cls.__name__}: {sorted(unknown)}")
        obj = cls()
        for a, n, _, frm in plan.fields:
            if n in d:
                setattr(obj, a, frm(d[n]))
        return obj


class ParcelRecord(Record):
    """Base of generated HDI structs; ``_parcel_codec_`` is bound by the module's codec table."""

    __slots__ = ()
    _parcel_codec_: ClassVar[Any]

    def to_parcel(
        self, objects: list[object] | None = None, *, limit: int | None = DEFAULT_CAPACITY
    ) -> bytes:
        """The bytes OpenHarmony's ``<Struct>BlockMarshalling`` writes (in-band part).

        Out-of-band objects (file descriptors, remote objects, ...) are appended to ``objects``;
        ``limit`` is the Parcel capacity (``None``: unlimited).
        """
        data: bytes = self._parcel_codec_.encode(self, objects, limit=limit)
        return data

    @classmethod
    def from_parcel(cls, data: bytes, objects: Sequence[object] | None = None) -> Self:
        """Decode ``<Struct>BlockUnmarshalling`` bytes; malformed input raises ``idlgen.DecodeError``."""
        return cast(Self, cls._parcel_codec_.decode(data, objects))


class FlatRecord(Record):
    """Base of generated FlatBuffers tables/structs; ``_FB_DESC`` is their descriptor
    (:mod:`idlgen.wire.flatbuffers`), bound by the module's descriptor table."""

    __slots__ = ()
    _FB_DESC: ClassVar[Any]

    def to_flatbuffer(self, *, size_prefixed: bool = False) -> bytes:
        """Encode as a FlatBuffer, byte-identical with ``flatc -b`` of ``self.to_json()``."""
        data: bytes = self._FB_DESC.encode(self, size_prefixed=size_prefixed)
        return data

    @classmethod
    def from_flatbuffer(
        cls,
        data: bytes,
        *,
        verify: bool = True,
        size_prefixed: bool = False,
        check_identifier: bool | None = None,
    ) -> Self:
        """Decode a FlatBuffer; malformed input (or, when verifying, a missing ``file_identifier``
        the schema declares; ``check_identifier=False`` skips that) raises ``idlgen.DecodeError``.
        """
        return cast(
            Self,
            cls._FB_DESC.decode(
                data,
                verify=verify,
                size_prefixed=size_prefixed,
                check_identifier=check_identifier,
            ),
        )

    def to_json(self) -> str:
        """The JSON ``flatc --json --strict-json`` prints for ``self.to_flatbuffer()``."""
        from . import fbjson

        return fbjson.to_json(self._FB_DESC, self)

    @classmethod
    def from_json(cls, text: str) -> Self:
        """Parse JSON as flatc reads it (unquoted keys, enum names, comments, trailing commas)."""
        from . import fbjson

        return cast(Self, fbjson.from_json(cls._FB_DESC, text))

    @classmethod
    def _lookup_by_key(cls, items: Sequence[Self], key: Any) -> Self | None:
        from . import flatbuffers

        return cast("Self | None", flatbuffers.lookup_by_key(cls._FB_DESC, items, key))


def descriptor_of(cls: type) -> Any:
    """The wire descriptor bound to a generated record class (FlatBuffers or Parcel)."""
    for attr in ("_FB_DESC", "_parcel_codec_"):
        d = cls.__dict__.get(attr)
        if d is not None:
            return d
    raise TypeError(f"{cls.__name__} has no wire descriptor")
