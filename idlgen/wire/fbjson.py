"""FlatBuffers JSON as flatc writes it (``--json --strict-json``) and reads it.

Writing follows src/idl_gen_text.cpp: fields in id order, only fields that would be stored
(defaults omitted, ``key`` fields always), unions as ``x_type`` + ``x``, enum names (bit_flags
as space-separated names), doubles with 12 and floats with 6 fixed decimals minus trailing
zeros, non-ASCII escaped as ``\\uXXXX``. Reading accepts what flatc's parser accepts:
unquoted keys, single-quoted strings, enum names and numbers in strings, ``nan``/``inf``,
trailing commas and comments. ``from_json`` remembers the key order of every table so that
re-encoding builds children in the same order ``flatc -b`` would.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any, TypeVar

from ..errors import DecodeError
from . import flatbuffers as fb
from . import records

__all__ = ["to_json", "from_json", "parse_json", "JsonNumber"]

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# Writing


def _esc(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif o < 0x20 or o >= 0x7F:
            if o > 0xFFFF:
                o -= 0x10000
                out.append(f"\\u{0xD800 + (o >> 10):04X}\\u{0xDC00 + (o & 0x3FF):04X}")
            else:
                out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_F32 = struct.Struct("<f")


def _float(v: float, single: bool) -> str:
    if single:
        v = _F32.unpack(_F32.pack(v))[0]
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = f"{v:.{6 if single else 12}f}".rstrip("0")
    return s + "0" if s.endswith(".") else s


def _scalar(h: fb._ScalarH, v: Any) -> str:
    fmt = h.fmt
    if fmt == "?":
        return "true" if v else "false"
    if fmt in "fd":
        return _float(float(v), fmt == "f")
    iv = int(v)
    e = h.enum
    if e is not None:
        cls: Any = e.cls
        if e.bit_flags:
            if iv:
                names = []
                rest = iv
                for name, m in records.schema_members(cls).items():
                    mv = int(m)
                    if mv and iv & mv == mv and name not in names:
                        names.append(name)
                        rest &= ~mv
                if not rest and names:
                    return _esc(" ".join(names))
        else:
            for name, m in records.schema_members(cls).items():
                if int(m) == iv:
                    return _esc(name)
    return str(iv)


def _value(h: fb._H, v: Any, ind: str, f: fb.Field | None = None) -> str:
    if isinstance(h, fb._ScalarH):
        return _scalar(h, v)
    if isinstance(h, fb._StringH):
        return _esc(v)
    if isinstance(h, fb._TableH):
        return _table(h.desc, v, ind)
    if isinstance(h, fb._StructH):
        return _struct(h.desc, v, ind)
    if isinstance(h, (fb._VectorH, fb._ArrayH)):
        e = h.elem
        if isinstance(v, fb.ScalarVector):
            v = v.numpy().tolist()
        elif isinstance(v, (bytes, bytearray, memoryview)):
            v = list(bytes(v))
        items = list(v)
        if isinstance(e, fb._TableH):
            e.desc.prepare()
        if isinstance(e, fb._TableH) and e.desc._key is not None and isinstance(h, fb._VectorH):
            items = _sorted_by_key(e.desc, items)
        elif isinstance(e, fb._StructH) and e.desc.key and isinstance(h, fb._VectorH):
            keyed = [(getattr(x, e.desc.key), x) for x in items]
            fb._simple_qsort(keyed, lambda a, c: a[0] < c[0])
            items = [x for _, x in keyed]
        if not items:
            return "[\n\n" + ind + "]"
        inner = ind + "  "
        return "[\n" + ",\n".join(inner + _value(e, x, inner) for x in items) + "\n" + ind + "]"
    raise TypeError(f"cannot write {type(h).__name__} as JSON")


def _flex(v: Any) -> str:
    """A FlexBuffer value on one line, as flexbuffers::Reference::ToString prints it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v, False)
    if isinstance(v, str):
        return _esc(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_esc(k)}: {_flex(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[ " + ", ".join(_flex(x) for x in v) + " ]"
    raise TypeError(f"no JSON form for FlexBuffer value {type(v).__name__}")


def _from_flex_json(v: Any) -> Any:
    """A parsed JSON tree as the Python values a FlexBuffer is built from."""
    if isinstance(v, JsonNumber):
        from ..fbs.lower import parse_float, parse_int

        t = str(v).lower()
        is_int = not any(c in t for c in ".pn") and (
            "e" not in t or t.lstrip("+-").startswith("0x")
        )
        return parse_int(t) if is_int else parse_float(t)
    if isinstance(v, _Ident):
        words = {"true": True, "false": False, "null": None}
        if str(v) in words:
            return words[str(v)]
        return _num(v, "d")
    if isinstance(v, str):
        return str(v)
    if isinstance(v, _Obj):
        return {k: _from_flex_json(x) for k, x in v}
    if isinstance(v, list):
        return [_from_flex_json(x) for x in v]
    raise ValueError(f"bad flexbuffer JSON value {v!r}")


def _sorted_by_key(desc: fb.Table[Any], items: list[Any]) -> list[Any]:
    kr = desc._key
    assert kr is not None
    keyed = []
    for x in items:
        k = getattr(x, kr.attr)
        if k is None:
            k = kr.default
        keyed.append((k.encode("utf-8") if isinstance(k, str) else k, x))
    fb._simple_qsort(keyed, lambda a, c: a[0] < c[0])
    return [x for _, x in keyed]


def _obj(parts: list[str], ind: str) -> str:
    if not parts:
        return "{\n" + ind + "}"
    return "{\n" + ",\n".join(parts) + "\n" + ind + "}"


def _struct(desc: fb.Struct[Any], v: Any, ind: str) -> str:
    desc.prepare()
    inner = ind + "  "
    parts = []
    for (attr, name, _), (_, h) in zip(desc.fields, desc.handlers):
        x = getattr(v, attr)
        if isinstance(h, fb._ArrayH):
            x = list(x) if x is not None else []
            if isinstance(h.elem, fb._StructH):
                x += [h.elem.desc.cls() for _ in range(h.n - len(x))]
            else:
                x += [0] * (h.n - len(x))
        elif isinstance(h, fb._StructH) and x is None:
            x = h.desc.cls()
        parts.append(f'{inner}"{name}": {_value(h, x, inner)}')
    return _obj(parts, ind)


def _table(desc: fb.Table[Any], v: Any, ind: str) -> str:
    desc.prepare()
    inner = ind + "  "
    parts = []
    for r in desc._rf:
        f = r.f
        if f.deprecated:
            continue
        x = getattr(v, r.attr, None)
        if x is None:
            continue
        k = r.kind
        if k == fb._K_SCALAR:
            h = r.h
            assert isinstance(h, fb._ScalarH)
            if f.hash and isinstance(x, str):
                x = fb._hash(f.hash, x, h.fmt)
            # flatc prints key fields even when they hold the default (and are not stored)
            if r.cmp_default is not None and h.pack(x) == r.cmp_default and not f.key:
                continue
            parts.append(f'{inner}"{f.name}": {_scalar(h, x)}')
        elif k == fb._K_UNION:
            assert r.union is not None
            disc, mh, payload = r.union.member_of(x)
            name = r.union.by_value[disc][0]
            parts.append(f'{inner}"{f.name}_type": {_esc(name)}')
            parts.append(f'{inner}"{f.name}": {_value(mh, payload, inner)}')
        elif k == fb._K_UNION_VEC:
            assert r.union is not None
            items = [r.union.member_of(y) for y in x]
            tnames = [r.union.by_value[t][0] for t, _, _ in items]
            if items:
                i2 = inner + "  "
                parts.append(
                    f'{inner}"{f.name}_type": [\n'
                    + ",\n".join(i2 + _esc(n) for n in tnames)
                    + "\n"
                    + inner
                    + "]"
                )
                parts.append(
                    f'{inner}"{f.name}": [\n'
                    + ",\n".join(i2 + _value(mh, p, i2) for _, mh, p in items)
                    + "\n"
                    + inner
                    + "]"
                )
            else:
                parts.append(f'{inner}"{f.name}_type": [\n\n{inner}]')
                parts.append(f'{inner}"{f.name}": [\n\n{inner}]')
        else:
            text = None
            if f.flexbuffer and len(x):
                if fb._flex_is_null(x):
                    continue  # not stored (see Table.build)
                try:
                    text = _flex(fb.flex_loads(bytes(x)))
                except Exception:  # not a valid flexbuffer: print the bytes
                    text = None
            if f.nested_desc is not None and not len(x):
                continue  # not stored (see Table.build)
            if f.nested_desc is not None:
                try:  # flatc prints a nested flatbuffer as the object it holds
                    text = _table(f.nested_desc, f.nested_desc.decode(bytes(x)), inner)
                except (DecodeError, ValueError):
                    text = None
            if text is None:
                text = _value(r.h, x, inner, f)
            parts.append(f'{inner}"{f.name}": {text}')
    return _obj(parts, ind)


def to_json(desc: fb.Table[T] | fb.Struct[T], obj: T) -> str:
    """The text ``flatc --json --strict-json`` prints for the buffer ``desc.encode(obj)``
    (a struct prints as the object flatc would print for it inside a table)."""
    desc.prepare()
    if isinstance(desc, fb.Struct):
        return _struct(desc, obj, "") + "\n"
    return _table(desc, obj, "") + "\n"


# ---------------------------------------------------------------------------------------------
# Reading


class JsonNumber(str):
    """A number kept as its source text (64-bit integers and exact float parsing)."""


class _Ident(str):
    """A bare identifier (enum name, ``true``, ``nan``...)."""


class _Obj(list):  # type: ignore[type-arg]
    """A JSON object: its (key, value) pairs in document order."""


_TOKEN = re.compile(
    r"""
    (?P<ws>(?:\s+|//[^\n]*|/\*.*?\*/)+)
  | (?P<punct>[{}\[\]:,])
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<num>[+-]?(?:0[xX][0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?\d+)?|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?:nan|inf|infinity)(?![A-Za-z0-9_])))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
    """,
    re.VERBOSE | re.DOTALL,
)


def _unescape(body: str) -> str:
    from ..fbs.parser import unescape

    return unescape(body)


def parse_json(text: str) -> Any:
    """flatc-style JSON -> Python: objects become lists of (key, value) pairs (key order is
    significant to flatc), numbers stay :class:`JsonNumber`, bare words :class:`_Ident`.
    """
    toks: list[tuple[str, str, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"invalid JSON at offset {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        if kind != "ws":
            toks.append((kind, m.group(), pos))
        pos = m.end()
    i = 0

    def value(depth: int) -> Any:
        nonlocal i
        if depth > 64:
            raise ValueError("JSON nested too deeply")
        if i >= len(toks):
            raise ValueError("unexpected end of JSON")
        kind, t, p = toks[i]
        i += 1
        if kind == "punct":
            if t == "{":
                pairs = _Obj()
                while True:
                    if toks[i][1] == "}":
                        i += 1
                        return pairs
                    kk, kt, kp = toks[i]
                    if kk == "str":
                        key = _unescape(kt[1:-1])
                    elif kk in ("ident", "num"):
                        key = kt
                    else:
                        raise ValueError(f"expected a field name at offset {kp}")
                    i += 1
                    if toks[i][1] != ":":
                        raise ValueError(f"expected ':' at offset {toks[i][2]}")
                    i += 1
                    pairs.append((key, value(depth + 1)))
                    if toks[i][1] == ",":
                        i += 1
                    elif toks[i][1] != "}":
                        raise ValueError(f"expected ',' or '}}' at offset {toks[i][2]}")
            if t == "[":
                items: list[Any] = []
                while True:
                    if toks[i][1] == "]":
                        i += 1
                        return items
                    items.append(value(depth + 1))
                    if toks[i][1] == ",":
                        i += 1
                    elif toks[i][1] != "]":
                        raise ValueError(f"expected ',' or ']' at offset {toks[i][2]}")
            raise ValueError(f"unexpected {t!r} at offset {p}")
        if kind == "str":
            return _unescape(t[1:-1])
        if kind == "num":
            return JsonNumber(t)
        return _Ident(t)

    try:
        v = value(0)
    except IndexError:
        raise ValueError("unexpected end of JSON") from None
    if i != len(toks):
        raise ValueError(f"trailing data at offset {toks[i][2]}")
    return v


def _num(t: str, fmt: str) -> Any:
    from ..fbs.lower import parse_float, parse_int

    if fmt == "f":  # stored as float32: keep the value the buffer will hold
        return _F32.unpack(_F32.pack(parse_float(t)))[0]
    if fmt == "d":
        return parse_float(t)
    try:
        return parse_int(t)
    except ValueError:
        fv = parse_float(t)
        if fv != int(fv):
            raise ValueError(f"{t!r} is not an integer") from None
        return int(fv)


def _to_scalar(h: fb._ScalarH, v: Any, f: fb.Field | None) -> Any:
    fmt = h.fmt
    if isinstance(v, _Ident) or (isinstance(v, str) and not isinstance(v, JsonNumber)):
        s = str(v)
        if fmt == "?" and s in ("true", "false"):
            return s == "true"
        if fmt in "fd" and s.lstrip("+-") in ("nan", "inf", "infinity"):
            return _num(s, fmt)
        if f is not None and f.hash and not isinstance(v, _Ident):
            return fb._hash(f.hash, s, h.fmt)
        if h.enum is not None:
            cls: Any = h.enum.cls
            total = 0
            for word in (s.replace(".", " ").split() if " " in s else [s.rsplit(".", 1)[-1]]):
                word = word.rsplit(".", 1)[-1]
                members = records.schema_members(cls)
                if word in members:
                    total |= int(members[word])
                else:
                    try:
                        total |= _num(word, fmt)
                    except ValueError:
                        raise ValueError(
                            f"unknown enum value {word!r} for {h.enum.qualname}"
                        ) from None
            return cls(total)
        try:
            x = _num(s, fmt)  # numbers given as strings ("2")
        except ValueError:
            raise ValueError(f"invalid value {s!r}") from None
    else:
        x = _num(v, fmt)
    if fmt == "?":
        return bool(x)
    rng = fb._INT_RANGE.get(fmt)
    if rng is not None and not rng[0] <= x <= rng[1]:
        raise ValueError(f"constant does not fit: {x} (type '{fmt}')")
    if h.enum is not None:
        return h.enum.cls(x)
    return x


def _to_value(h: fb._H, v: Any, f: fb.Field | None = None) -> Any:
    if isinstance(h, fb._ScalarH):
        return _to_scalar(h, v, f)
    if isinstance(h, fb._StringH):
        if not isinstance(v, str) or isinstance(v, (JsonNumber, _Ident)):
            raise ValueError(f"expected a string, got {v!r}")
        return str(v)
    if isinstance(h, fb._TableH):
        return _to_table(h.desc, v)
    if isinstance(h, fb._StructH):
        return _to_struct(h.desc, v)
    if isinstance(h, (fb._VectorH, fb._ArrayH)):
        if f is not None and f.flexbuffer:
            try:
                return fb.NestedBuffer(fb.flex_dumps(_from_flex_json(v)), 8)
            except (RuntimeError, TypeError, OverflowError) as ex:
                raise ValueError(f"cannot build flexbuffer: {ex}") from None
        if f is not None and f.nested and isinstance(v, list) and isinstance(v, _Obj):
            nested = f.nested_desc
            return fb.NestedBuffer(*nested.encode_nested(_to_table(nested, v)))
        if not isinstance(v, list):
            raise ValueError(f"expected a list, got {v!r}")
        e = h.elem
        items = [_to_value(e, x, f) for x in v]
        if (
            isinstance(e, fb._ScalarH)
            and e.fmt == "B"
            and e.enum is None
            and isinstance(h, fb._VectorH)
        ):
            return bytes(items)
        return items
    raise TypeError(type(h).__name__)


def _to_struct(desc: fb.Struct[Any], pairs: Any) -> Any:
    desc.prepare()
    if not isinstance(pairs, _Obj):
        raise ValueError(f"expected an object for struct {desc.qualname}")
    hs = {name: (attr, h) for (attr, name, _), (_, h) in zip(desc.fields, desc.handlers)}
    kw = {}
    for k, v in pairs:
        if k not in hs:
            raise ValueError(f"unknown field: {k} in {desc.qualname}")
        attr, h = hs[k]
        kw[attr] = _to_value(h, v)
    return desc.cls(**kw)


def _to_table(desc: fb.Table[Any], pairs: Any) -> Any:
    desc.prepare()
    if not isinstance(pairs, _Obj):
        raise ValueError(f"expected an object for table {desc.qualname}")
    by_name = desc._by_name
    types: dict[str, Any] = {}
    for k, v in pairs:
        if k.endswith("_type") and k[:-5] in by_name and by_name[k[:-5]].union is not None:
            types[k[:-5]] = v
    kw: dict[str, Any] = {}
    order: list[str] = []
    for k, v in pairs:
        r = by_name.get(k)
        if r is None:
            if k.endswith("_type") and k[:-5] in types:
                continue
            raise ValueError(f"unknown field: {k} in {desc.qualname}")
        if isinstance(v, _Ident) and v == "null":
            if r.f.optional:
                kw[r.attr] = None
                order.append(k)
            continue
        order.append(k)
        if r.kind == fb._K_UNION:
            assert r.union is not None
            t = types.get(k)
            if t is None:
                raise ValueError(f"missing type field for this union value: {k}")
            kw[r.attr] = _union_value(r.union, t, v)
        elif r.kind == fb._K_UNION_VEC:
            assert r.union is not None
            ts = types.get(k)
            if not isinstance(ts, list) or not isinstance(v, list) or len(ts) != len(v):
                raise ValueError(f"union vector {k} needs a {k}_type vector of the same length")
            kw[r.attr] = [_union_value(r.union, t, x) for t, x in zip(ts, v)]
        else:
            kw[r.attr] = _to_value(r.h, v, r.f)
    obj = desc.cls(**kw)
    try:
        object.__setattr__(obj, "_fb_json_order", tuple(order))
    except (AttributeError, TypeError):
        pass  # slotted classes: encoding falls back to schema order
    return obj


def _union_value(u: fb.Union, t: Any, v: Any) -> Any:
    u.prepare()
    if str(t) == "NONE" or (isinstance(t, JsonNumber) and _num(t, "q") == 0):
        raise ValueError(f"illegal type id NONE for a {u.qualname} value")
    if isinstance(t, JsonNumber):
        hit = u.by_value.get(int(_num(t, "q")))
        if hit is None:
            raise ValueError(f"unknown union type {t} for {u.qualname}")
        name, h = hit
    else:
        name = str(t).rsplit(".", 1)[-1] if str(t) not in u.by_name else str(t)
        if name not in u.by_name:
            raise ValueError(f"unknown union type {t!r} for {u.qualname}")
        h = u.by_name[name][1]
    return u.wrap(name, h, _to_value(h, v))


def from_json(desc: fb.Table[T] | fb.Struct[T], text: str) -> T:
    """Parse flatc-style JSON for the table ``desc``; bad input raises DecodeError."""
    try:
        if isinstance(desc, fb.Struct):
            out: T = _to_struct(desc, parse_json(text))
        else:
            out = _to_table(desc, parse_json(text))
        return out
    except DecodeError:
        raise
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        OverflowError,
        RecursionError,
    ) as e:
        raise DecodeError(f"invalid JSON for {desc.qualname}: {e}") from None
