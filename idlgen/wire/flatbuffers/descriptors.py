"""Descriptors: what generated modules declare per enum, union, struct and table."""

from __future__ import annotations

import enum
import importlib
import struct
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ...errors import DecodeError, EncodeError
from . import decoder, encoder
from .builder import Builder
from .fields import Enum, Field
from .handlers import (
    ResolvedField,
    K_SCALAR,
    K_STRING,
    K_STRUCT,
    K_TABLE,
    K_UNION,
    K_UNION_VEC,
    K_VECTOR,
    ArrayH,
    DecodeContext,
    Handler,
    ScalarH,
    StringH,
    StructH,
    TableH,
    UnionH,
    VectorH,
)
from .registry import PACKAGE_KEY, attach, resolve_target, lookup, registry
from .scalars import U32
from .values import UnionValue

T = TypeVar("T")


def _import_enum(
    qualname: str,
    fmt: str,
    class_name: str,
    reg: dict[str, Any],
    renamed: Sequence[tuple[str, str]] = (),
) -> Enum:
    """The generated enum class, from its namespace package (``__init__`` re-exports every
    type of the namespace), registered for later lookups."""
    pkg = reg.get(PACKAGE_KEY)
    if not pkg:
        raise LookupError(f"enum {qualname!r}: registry has no package to import it from")
    ns = qualname.rpartition(".")[0]
    module = importlib.import_module(f"{pkg}.{ns}" if ns else pkg)
    cls = getattr(module, class_name)
    return Enum(qualname, cls, fmt, issubclass(cls, enum.Flag), reg=reg, renamed=renamed)


def _resolve(spec: Any, reg: dict[str, Any]) -> Handler:
    if isinstance(spec, str):
        if spec == "string":
            return StringH()
        return ScalarH(spec)
    tag = spec[0]
    if tag == "enum":
        if not isinstance(spec[1], str):  # ("enum", EnumClass, fmt): the class itself
            cls = spec[1]
            return ScalarH(
                spec[2], Enum(cls.__qualname__, cls, spec[2], issubclass(cls, enum.Flag), reg={})
            )
        e = reg.get(spec[1])
        if e is None and len(spec) >= 4:
            # ("enum", qualname, fmt, ClassName[, ((python, schema), ...)]): generated code
            e = _import_enum(spec[1], spec[2], spec[3], reg, spec[4] if len(spec) > 4 else ())
        elif e is None:
            e = lookup(spec[1], reg)
        return ScalarH(e.fmt, e)
    if tag == "vector":
        return VectorH(_resolve(spec[1], reg))
    if tag == "array":
        return ArrayH(_resolve(spec[1], reg), int(spec[2]))
    if tag == "union":
        if len(spec) > 2:  # ("union", qualname, disc, members): inline
            return UnionH(Union(spec[1], members=spec[3], disc=spec[2], reg={}, parent_reg=reg))
        return UnionH(lookup(spec[1], reg))
    d = resolve_target(spec[1], reg)
    if tag == "table":
        return TableH(d)
    if tag == "struct":
        return StructH(d)
    raise ValueError(f"bad FlatBuffers type spec {spec!r}")


class Struct(Generic[T]):
    """A fixed-layout struct: ``fields`` in declaration order (:func:`.fields.field`, no slot),
    kept as ``(attr, name, spec)``; ``key``: the attribute of the ``key`` field."""

    def __init__(
        self,
        qualname: str,
        cls: Callable[..., T],
        *,
        fields: Sequence[Field],
        force_align: int = 0,
        key: str = "",
        reg: dict[str, Any] | None = None,
    ) -> None:
        self.reg = registry() if reg is None else reg
        self.qualname = qualname
        self.cls = cls
        self.fields: list[tuple[str, str, Any]] = [(f.attr, f.name, f.spec) for f in fields]
        self.force_align = force_align
        self.key = key
        self._ready = False
        self.size = 0
        self.align = 1
        self._fmt_body = ""
        self.reg[qualname] = self
        attach(cls, self)

    def prepare(self) -> None:
        if self._ready:
            return
        fmt: list[str] = []
        off = 0
        align = 1
        self.handlers: list[tuple[str, Handler]] = []
        for attr, _, spec in self.fields:
            h = _resolve(spec, self.reg)
            base = h.elem if isinstance(h, ArrayH) else h
            if isinstance(base, StructH):
                a, sz = base.align, base.size
                f1 = base.desc._fmt_body
            else:
                assert isinstance(base, ScalarH)
                a, sz, f1 = base.size, base.size, base.fmt
            n = h.n if isinstance(h, ArrayH) else 1
            pad = -off & (a - 1)
            if pad:
                fmt.append(f"{pad}x")
            fmt.append(f1 * n if isinstance(base, StructH) else (f"{n}{f1}" if n > 1 else f1))
            off += pad + sz * n
            align = max(align, a)
            self.handlers.append((attr, h))
        if self.force_align > align:
            align = self.force_align
        tail = -off & (align - 1)
        if tail:
            fmt.append(f"{tail}x")
        self.size = off + tail
        self.align = align
        self._fmt_body = "".join(fmt)
        self._st = struct.Struct("<" + self._fmt_body)
        assert self._st.size == self.size, (self.qualname, self._st.size, self.size)
        # Structs of plain scalars into a plain dataclass: vectors of them are filled through
        # __dict__ straight from struct.iter_unpack (a model's big struct vectors)
        cls = self.cls
        self._flat: tuple[str, ...] | None = None
        if (
            isinstance(cls, type)
            and "__slots__" not in cls.__dict__
            and not hasattr(cls, "__post_init__")
            and set(getattr(cls, "__dataclass_fields__", ())) == {a for a, _ in self.handlers}
            and all(isinstance(h, ScalarH) and h.conv is None for _, h in self.handlers)
        ):
            self._flat = tuple(a for a, _ in self.handlers)
        self._ready = True

    def _make(self, it: Any) -> Any:
        kw: dict[str, Any] = {}
        for attr, h in self.handlers:
            if isinstance(h, ArrayH):
                e = h.elem
                if isinstance(e, StructH):
                    kw[attr] = [e.desc._make(it) for _ in range(h.n)]
                else:
                    assert isinstance(e, ScalarH)
                    c = e.conv
                    kw[attr] = [c(next(it)) if c else next(it) for _ in range(h.n)]
            elif isinstance(h, StructH):
                kw[attr] = h.desc._make(it)
            else:
                assert isinstance(h, ScalarH)
                v = next(it)
                kw[attr] = h.conv(v) if h.conv is not None else v
        return self.cls(**kw)

    def _flatten(self, obj: Any, out: list[Any]) -> None:
        if obj is None:
            obj = self.cls()
        for attr, h in self.handlers:
            v = getattr(obj, attr)
            if isinstance(h, ArrayH):
                e = h.elem
                vals = list(v) if v is not None else []
                if len(vals) > h.n:
                    raise EncodeError(f"at most {h.n} elements, got {len(vals)}", path=attr)
                if isinstance(e, StructH):
                    vals += [None] * (h.n - len(vals))
                    for x in vals:
                        e.desc._flatten(x, out)
                else:
                    vals += [0] * (h.n - len(vals))
                    out.extend(vals)
            elif isinstance(h, StructH):
                h.desc._flatten(v, out)
            else:
                out.append(v)

    def encode(self, obj: T, *, size_prefixed: bool = False) -> bytes:
        """The struct's inline bytes (structs are never roots of a buffer); with
        ``size_prefixed`` preceded by their u32 length."""
        try:
            data = self.pack(obj)
        except encoder.ENCODE_ERRORS as e:
            raise encoder.encode_error(e, self.qualname.rpartition(".")[2]) from None
        return U32.pack(len(data)) + data if size_prefixed else data

    def decode(
        self,
        data: Any,
        *,
        verify: bool = True,
        size_prefixed: bool = False,
        check_identifier: bool | None = None,
    ) -> T:
        """Inverse of :meth:`encode`: exactly ``size`` bytes (a struct has no identifier)."""
        self.prepare()
        data = bytes(data)
        if size_prefixed:
            if len(data) < 4 or U32.unpack_from(data, 0)[0] != len(data) - 4:
                raise DecodeError(f"bad size prefix for {self.qualname}", offset=0)
            data = data[4:]
        if len(data) != self.size:
            raise DecodeError(f"{self.qualname} takes {self.size} bytes, got {len(data)}", offset=0)
        out: T = self._make(iter(self._st.unpack_from(data, 0)))
        return out

    def pack(self, obj: Any) -> bytes:
        self.prepare()
        vals: list[Any] = []
        self._flatten(obj, vals)
        try:
            return self._st.pack(*vals)
        except (struct.error, OverflowError) as e:
            raise EncodeError(str(e)) from None

    def read(self, d: DecodeContext, p: int) -> Any:
        if self.verify_bounds(d, p):
            return self._make(iter(self._st.unpack_from(d.buf, p)))
        raise d.fail(f"struct {self.qualname} out of bounds", p)

    def verify_bounds(self, d: DecodeContext, p: int) -> bool:
        return 0 <= p and p + self.size <= d.n


class Union:
    """A union: ``members`` are ``(name, value, spec)`` (:func:`.fields.member`); the
    discriminant is ``disc`` (a scalar format char, ``"B"`` unless declared)."""

    def __init__(
        self,
        qualname: str,
        *,
        members: Sequence[tuple[str, int, Any]],
        disc: str = "B",
        reg: dict[str, Any] | None = None,
        parent_reg: dict[str, Any] | None = None,
    ) -> None:
        self.qualname = qualname
        self.members = list(members)
        self.disc = disc
        self._ready = False
        self.reg = registry() if reg is None else reg
        self.reg[qualname] = self
        # where member types are looked up (inline unions live in a private registry)
        self.lookup_reg = self.reg if parent_reg is None else parent_reg

    def prepare(self) -> None:
        if self._ready:
            return
        self.by_value: dict[int, tuple[str, Handler]] = {}
        self.by_name: dict[str, tuple[int, Handler]] = {}
        self.by_cls: dict[Any, tuple[int, Handler]] = {}
        counts: dict[Any, int] = {}
        for name, value, spec in self.members:
            h = _resolve(spec, self.lookup_reg)
            self.by_value[value] = (name, h)
            self.by_name[name] = (value, h)
            key = str if isinstance(h, StringH) else h.desc.cls  # type: ignore[attr-defined]
            counts[key] = counts.get(key, 0) + 1
            self.by_cls.setdefault(key, (value, h))
        self.ambiguous = {k for k, n in counts.items() if n > 1}
        self.disc_h = ScalarH(self.disc)
        self._ready = True

    def member_of(self, v: Any) -> tuple[int, Handler, Any]:
        """-> (discriminant, handler, payload) for a Python value."""
        self.prepare()
        if isinstance(v, UnionValue):
            try:
                value, h = self.by_name[v.type]
            except KeyError:
                raise ValueError(f"{v.type!r} is not a member of union {self.qualname}") from None
            return value, h, v.value
        key = str if isinstance(v, str) else type(v)
        hit = self.by_cls.get(key)
        if hit is None:
            raise TypeError(f"{type(v).__name__} is not a member type of union {self.qualname}")
        return hit[0], hit[1], v

    def wrap(self, name: str, h: Handler, v: Any) -> Any:
        key = str if isinstance(h, StringH) else h.desc.cls  # type: ignore[attr-defined]
        return UnionValue(name, v) if key in self.ambiguous else v

    def read_value(self, d: DecodeContext, utype: int, p: int, depth: int) -> Any:
        hit = self.by_value.get(utype)
        if hit is None:
            if d.verify:
                raise d.fail(f"unknown union type {utype} for {self.qualname}", p)
            return None
        name, h = hit
        if isinstance(h, StructH):
            t = d.uoffset(p)
            return self.wrap(name, h, h.desc.read(d, t))
        return self.wrap(name, h, h.read(d, p, depth))

    def build_value(self, b: Builder, v: Any) -> tuple[int, int]:
        """Build the member out of line; -> (discriminant, offset)."""
        value, h, payload = self.member_of(v)
        if isinstance(h, StructH):
            b.align(h.align)  # flatc parses the struct first (StartStruct aligns)
            b.align(h.align)
            b.push(h.desc.pack(payload))
            return value, b.size
        return value, h.build(b, payload)


class Table(Generic[T]):
    """A table descriptor: ``fields`` are :class:`Field` objects (:func:`.fields.field`, each
    with its slot). ``identifier`` is the root's ``file_identifier`` ("" for none)."""

    def __init__(
        self,
        qualname: str,
        cls: Callable[..., T],
        *,
        fields: Sequence[Field],
        identifier: str = "",
        reg: dict[str, Any] | None = None,
    ) -> None:
        self.qualname = qualname
        self.cls = cls
        self.fields = list(fields)
        for f in self.fields:
            if f.slot < 0:
                raise ValueError(f"{qualname}.{f.name}: a table field needs its slot")
        self.identifier = identifier
        self._ready = False
        self.reg = registry() if reg is None else reg
        self.reg[qualname] = self
        attach(cls, self)

    # -- preparation ---------------------------------------------------------------------
    def prepare(self) -> None:
        if self._ready:
            return
        self._ready = True  # set first: tables may refer to themselves
        rs: list[ResolvedField] = []
        for f in self.fields:
            r = ResolvedField()
            r.f = f
            r.attr = f.attr
            r.slot = f.slot
            h = _resolve(f.spec, self.reg)
            r.h = h
            r.union = None
            r.vec_elem = None
            r.struct_desc = None
            r.table_desc = None
            r.size = 4
            r.align = 4
            r.default = f.default
            r.cmp_default = None
            r.dep = f.deprecated
            r.wide = 2 if f.vector64 else 1 if f.offset64 else 0
            if r.wide:
                if not isinstance(h, (StringH, VectorH)):
                    raise ValueError(f"{self.qualname}.{f.name}: offset64 needs a string or vector")
                h.wide = r.wide
                r.size = r.align = 8
            if f.nested:
                f.nested_desc = resolve_target(f.nested, self.reg)
            if isinstance(h, ScalarH):
                r.kind = K_SCALAR
                r.size = r.align = h.size
                if f.default is not None and not f.optional:
                    r.cmp_default = h.pack(f.default)
                if h.conv is not None and f.default is not None:
                    r.default = h.conv(f.default)
            elif isinstance(h, StringH):
                r.kind = K_STRING
            elif isinstance(h, TableH):
                r.kind = K_TABLE
                r.table_desc = h.desc
            elif isinstance(h, StructH):
                r.kind = K_STRUCT
                r.struct_desc = h.desc
                r.size, r.align = h.size, h.align
            elif isinstance(h, UnionH):
                r.kind = K_UNION
                r.union = h.desc
                h.desc.prepare()
            elif isinstance(h, VectorH):
                if isinstance(h.elem, UnionH):
                    r.kind = K_UNION_VEC
                    r.union = h.elem.desc
                    h.elem.desc.prepare()
                else:
                    r.kind = K_VECTOR
                    r.vec_elem = h.elem
            else:
                raise ValueError(f"{self.qualname}.{f.name}: arrays are only allowed in structs")
            rs.append(r)
        self._rf = rs
        self._by_name = {r.f.name: r for r in rs}
        self._key = next((r for r in rs if r.f.key), None)
        # flatc's write order: size class 8, 4, 2, 1; descending id within a class. Inline
        # structs and offsets count as 4, the union type as 1.
        entries: list[tuple[int, int, ResolvedField, bool]] = []
        for r in rs:
            # flatc sorts by the base type's size: Vector64 is 8, an offset64 String/Vector 4
            cls_size = r.size if r.kind == K_SCALAR else 8 if r.wide == 2 else 4
            entries.append((cls_size, r.slot, r, False))
            if r.kind in (K_UNION, K_UNION_VEC):
                tsize = r.union.disc_h.size if r.kind == K_UNION else 4
                entries.append((tsize, r.slot - 1, r, True))
        entries.sort(key=lambda e: (-e[0], -e[1]))
        self._write_order = [(e[2], e[3]) for e in entries]
        for rank, (r, is_type) in enumerate(self._write_order):
            if is_type:
                r.trank = rank
            else:
                r.rank = rank
        for r in rs:
            r.optional = r.f.optional
            r.required = r.f.required
            r.hashed = bool(r.f.hash)
            # what an absent non-scalar field decodes to (skipped again when re-encoding)
            r.absent = [] if isinstance(r.default, tuple) else r.default
        self._enc = [r for r in rs if not r.f.deprecated]
        # Deprecated fields are not Python attributes (a generated class may still declare one;
        # it is left at its default): decoded values and JSON carry them in ``_fb_dep``.
        cls_fields = set(getattr(self.cls, "__dataclass_fields__", ()))
        attrs = [r for r in rs if not r.f.deprecated or r.attr in cls_fields]
        # decoding: defaults for absent fields, fields by vtable slot
        self._defaults = {r.attr: r.default for r in attrs if not isinstance(r.default, tuple)}
        self._fresh = [r.attr for r in attrs if isinstance(r.default, tuple)]
        self._required = [r for r in rs if r.f.required]
        top = max((r.slot for r in rs), default=-1)
        self._by_slot: list[ResolvedField | None] = [None] * (top + 1)
        for r in rs:
            self._by_slot[r.slot] = r
        # A plain class (no __slots__, no __post_init__, dataclass __init__ only assigning) can
        # be filled through its __dict__, which is several times faster than calling __init__.
        cls = self.cls
        self._type: Any = cls if isinstance(cls, type) else object
        self._plain = (
            isinstance(cls, type)
            and "__slots__" not in cls.__dict__
            and not hasattr(cls, "__post_init__")
            and hasattr(cls, "__dataclass_fields__")
            and set(cls.__dataclass_fields__) == {r.attr for r in attrs}
        )

    # -- encoding -------------------------------------------------------------------------
    def encode(
        self,
        obj: Any,
        *,
        size_prefixed: bool = False,
        file_identifier: str | None = None,
    ) -> bytes:
        self.prepare()
        b = Builder()
        try:
            root = self.build(b, obj)
        except encoder.ENCODE_ERRORS as e:  # a value of the wrong Python type somewhere
            raise encoder.encode_error(e, self.qualname.rpartition(".")[2]) from None
        ident = self.identifier if file_identifier is None else file_identifier
        return b.finish(root, ident.encode("utf-8") if ident else None, size_prefixed)

    def encode_nested(self, obj: Any) -> tuple[bytes, int]:
        """The buffer flatc builds for a ``nested_flatbuffer`` value written as a JSON object
        (no file identifier) and its alignment, which flatc forces on the enclosing vector."""
        self.prepare()
        b = Builder()
        try:
            root = self.build(b, obj)
        except encoder.ENCODE_ERRORS as e:
            raise encoder.encode_error(e, self.qualname.rpartition(".")[2]) from None
        data = b.finish(root, None, False)
        return data, b.minalign

    build = encoder.build_table
    read = decoder.read_table

    # -- decoding -------------------------------------------------------------------------
    def decode(
        self,
        data: Any,
        *,
        verify: bool = True,
        size_prefixed: bool = False,
        check_identifier: bool | None = None,
    ) -> T:
        """Decode a buffer whose root is this table. With ``verify`` (and unless
        ``check_identifier=False``) a declared ``file_identifier`` must be present, as flatc's
        ``VerifyXBuffer`` requires; pass False for foreign or identifier-less buffers."""
        self.prepare()
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"expected bytes, not {type(data).__name__}")
        d = DecodeContext(data, verify)
        base = 0
        if size_prefixed:
            if len(data) < 4:
                raise DecodeError("buffer too small for a size prefix", offset=0)
            size = U32.unpack_from(data, 0)[0]
            if verify and size + 4 > len(data):
                raise DecodeError("size prefix larger than the buffer", offset=0)
            base = 4
        if len(data) < base + 8:
            raise DecodeError("buffer too small", offset=0)
        ident = self.identifier
        if ident and (verify if check_identifier is None else check_identifier):
            want = ident.encode("utf-8")
            got = data[base + 4 : base + 8]
            if got != want:
                raise DecodeError(
                    f"file identifier {got!r} is not {self.qualname}'s {ident!r}", offset=base + 4
                )
        try:
            root = d.uoffset(base)
            out: T = self.read(d, root, 1)
            return out
        except DecodeError:
            raise
        except (
            struct.error,
            IndexError,
            ValueError,
            OverflowError,
            RecursionError,
        ) as e:
            raise DecodeError(f"malformed buffer: {e}") from None


def key_value(desc: Table[Any] | Struct[Any], item: Any) -> Any:
    if isinstance(desc, Struct):
        k = getattr(item, desc.key)
    else:
        desc.prepare()
        kr = desc._key
        assert kr is not None
        k = getattr(item, kr.attr)
        if k is None:
            k = kr.default
    return k.encode("utf-8") if isinstance(k, str) else k


def lookup_by_key(desc: Table[T] | Struct[T], items: Sequence[T], key: Any) -> T | None:
    """Binary search ``items`` (sorted by the ``key`` field, as flatc stores them) for ``key``."""
    if isinstance(desc, Table):
        desc.prepare()
    if (desc.key if isinstance(desc, Struct) else desc._key) in ("", None):
        raise TypeError(f"{desc.qualname} has no key field")
    want = key.encode("utf-8") if isinstance(key, str) else key
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        k = key_value(desc, items[mid])
        if k < want:
            lo = mid + 1
        elif want < k:
            hi = mid
        else:
            return items[mid]
    return None


def decode_nested(obj: Any, field: str, *, verify: bool = True) -> Any:
    """Decode the ``nested_flatbuffer`` held in ``obj.<field>`` (schema field name) as its
    declared root table; None when the field is empty."""
    desc = getattr(type(obj), "_FB_DESC", None)
    if not isinstance(desc, Table):
        raise TypeError(f"{type(obj).__name__} is not a FlatBuffers table")
    desc.prepare()
    r = desc._by_name.get(field)
    if r is None or not r.f.nested:
        raise ValueError(f"{desc.qualname}.{field} is not a nested_flatbuffer field")
    data = getattr(obj, r.attr)
    if not data:
        return None
    return resolve_target(r.f.nested, desc.reg).decode(
        bytes(data), verify=verify, check_identifier=False
    )
