"""FlatBuffers JSON as flatc writes it (``--json --strict-json``) and reads it.

Writing follows src/idl_gen_text.cpp: fields in declaration order, only fields that would be
stored (defaults omitted, ``key`` fields always; for a value decoded from bytes, exactly the
fields the buffer stored, explicit defaults and deprecated fields included, and key-sorted
vectors in the stored order, as for a value read from JSON: flatc's sort is not stable, so
sorting again could swap equal keys), unions as
``x_type`` + ``x``, enum members by their schema names (bit_flags as space-separated names),
doubles with 12 and floats with 6 fixed decimals minus trailing zeros, non-ASCII escaped as
``\\uXXXX``. Reading accepts what flatc's parser accepts: unquoted keys, single-quoted
strings, enum names and numbers in strings, ``nan``/``inf``, trailing commas and comments.
Strict JSON goes through the C ``json`` module and plain scalar vectors through NumPy; other
text through a tokenizer that reads as it parses. ``from_json`` remembers the key order of
every table so that re-encoding builds children in the same order ``flatc -b`` would.
"""

from __future__ import annotations

import json
import math
import re
import struct
from typing import Any, TypeVar

import numpy as np

from ..errors import DecodeError
from . import flatbuffers as fb
from .flatbuffers.handlers import StructDesc, TableDesc
from .fbliterals import parse_float, parse_int, unescape

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


def _scalar(h: fb.ScalarH, v: Any) -> str:
    fmt = h.fmt
    if fmt == "?":
        return "true" if v else "false"
    if fmt in "fd":
        return _float(float(v), fmt == "f")
    iv = int(v)
    e = h.enum
    if e is not None:
        if e.bit_flags:
            if iv:
                names = []
                rest = iv
                for mv, name in e.names:
                    if mv and iv & mv == mv and name not in names:
                        names.append(name)
                        rest &= ~mv
                if not rest and names:
                    return _esc(" ".join(names))
        else:
            for mv, name in e.names:
                if mv == iv:
                    return _esc(name)
    return str(iv)


def _value(h: fb.Handler, v: Any, ind: str, f: fb.Field | None = None, keep: bool = False) -> str:
    """``keep``: print a key-sorted vector in its stored order (decoded or read from JSON)."""
    if isinstance(h, fb.ScalarH):
        return _scalar(h, v)
    if isinstance(h, fb.StringH):
        return _esc(v)
    if isinstance(h, fb.TableH):
        return _table(h.desc, v, ind)
    if isinstance(h, fb.StructH):
        return _struct(h.desc, v, ind)
    if isinstance(h, (fb.VectorH, fb.ArrayH)):
        e = h.elem
        if isinstance(v, fb.ScalarVector):
            v = v.numpy().tolist()
        elif isinstance(v, (bytes, bytearray, memoryview)):
            v = list(bytes(v))
        if isinstance(e, fb.ScalarH) and e.enum is None and v:
            return _scalars(e.fmt, v, ind)
        items = list(v)
        if isinstance(e, fb.TableH):
            e.desc.prepare()
        if keep or not isinstance(h, fb.VectorH):
            pass  # flatc prints the bytes' order; sorting again could swap equal keys
        elif isinstance(e, fb.TableH) and e.desc._key is not None:
            items = _sorted_by_key(e.desc, items)
        elif isinstance(e, fb.StructH) and e.desc.key:
            keyed = [(getattr(x, e.desc.key), x) for x in items]
            fb.simple_qsort(keyed, lambda a, c: a[0] < c[0])
            items = [x for _, x in keyed]
        if not items:
            return "[\n\n" + ind + "]"
        inner = ind + "  "
        return "[\n" + ",\n".join(inner + _value(e, x, inner) for x in items) + "\n" + ind + "]"
    raise TypeError(f"cannot write {type(h).__name__} as JSON")


def _scalars(fmt: str, v: Any, ind: str) -> str:
    """A non-empty vector of plain scalars, one per line (the bulk of a model's JSON)."""
    if fmt == "?":
        strs: Any = ["true" if x else "false" for x in v]
    elif fmt in "fd":
        single = fmt == "f"
        strs = [_float(float(x), single) for x in v]
    else:
        strs = map(str, map(int, v))
    inner = ind + "  "
    return "[\n" + inner + (",\n" + inner).join(strs) + "\n" + ind + "]"


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


def _from_flex_json(v: Any, depth: int = 0) -> Any:
    """A parsed JSON tree as the Python values a FlexBuffer is built from.

    Strict JSON reaches here from the C ``json`` module, which has no nesting limit of flatc's
    size, so the limit is applied here too."""
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)")
    if v is None or type(v) in (bool, int, float):  # from the json module's fast path
        return v
    if isinstance(v, JsonNumber):
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
        return {k: _from_flex_json(x, depth + 1) for k, x in v}
    if isinstance(v, list):
        return [_from_flex_json(x, depth + 1) for x in v]
    raise ValueError(f"bad flexbuffer JSON value {v!r}")


def _sorted_by_key(desc: TableDesc, items: list[Any]) -> list[Any]:
    kr = desc._key
    assert kr is not None
    keyed = []
    for x in items:
        k = getattr(x, kr.attr)
        if k is None:
            k = kr.default
        keyed.append((k.encode("utf-8") if isinstance(k, str) else k, x))
    fb.simple_qsort(keyed, lambda a, c: a[0] < c[0])
    return [x for _, x in keyed]


def _obj(parts: list[str], ind: str) -> str:
    if not parts:
        return "{\n" + ind + "}"
    return "{\n" + ",\n".join(parts) + "\n" + ind + "}"


def _struct(desc: StructDesc, v: Any, ind: str) -> str:
    desc.prepare()
    inner = ind + "  "
    parts = []
    for (attr, name, _), (_, h) in zip(desc.fields, desc.handlers):
        x = getattr(v, attr)
        if isinstance(h, fb.ArrayH):
            x = list(x) if x is not None else []
            if isinstance(h.elem, fb.StructH):
                x += [h.elem.desc.cls() for _ in range(h.n - len(x))]
            else:
                x += [0] * (h.n - len(x))
        elif isinstance(h, fb.StructH) and x is None:
            x = h.desc.cls()
        parts.append(f'{inner}"{name}": {_value(h, x, inner)}')
    return _obj(parts, ind)


def _table(desc: TableDesc, v: Any, ind: str) -> str:
    desc.prepare()
    inner = ind + "  "
    parts = []
    vt = getattr(v, "_fb_vt", None)  # decoded values print what the buffer stored
    dep = getattr(v, "_fb_dep", None)
    # decoded or read from JSON: key-sorted vectors keep their order (the encoder sorts once)
    keep = vt is not None or getattr(v, "_fb_json_order", None) is not None
    for r in desc._rf:
        f = r.f
        if f.deprecated:
            if dep is None:
                continue
            x = dep.get(f.name)
        else:
            x = getattr(v, r.attr, None)
        if x is None:
            continue
        k = r.kind
        if k == fb.K_SCALAR:
            h = r.h
            assert isinstance(h, fb.ScalarH)
            if f.hash and isinstance(x, str):
                x = fb.flatc_hash(f.hash, x, h.fmt)
            # flatc prints key fields even when they hold the default (and are not stored)
            if (
                r.cmp_default is not None
                and h.pack(x) == r.cmp_default
                and not f.key
                and not fb.present(vt, r.slot)
            ):
                continue
            parts.append(f'{inner}"{f.name}": {_scalar(h, x)}')
        elif k == fb.K_UNION:
            assert r.union is not None
            disc, mh, payload = r.union.member_of(x)
            name = r.union.by_value[disc][0]
            parts.append(f'{inner}"{f.name}_type": {_esc(name)}')
            parts.append(f'{inner}"{f.name}": {_value(mh, payload, inner)}')
        elif k == fb.K_UNION_VEC:
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
            if vt is not None and r.absent is not None and not fb.present(vt, r.slot):
                if len(x) == 0 if isinstance(r.absent, list) else x == r.absent:
                    continue  # absent from the decoded buffer (see Table.build)
            text = None
            if f.flexbuffer and len(x):
                if fb.flex_is_null(x):
                    continue  # not stored (see Table.build)
                try:
                    text = _flex(fb.flex_loads(bytes(x)))
                except Exception:  # not a valid flexbuffer: print the bytes
                    text = None
            if f.nested_desc is not None and not len(x):
                continue  # not stored (see Table.build)
            if f.nested_desc is not None:
                try:  # flatc prints a nested flatbuffer as the object it holds
                    text = _table(
                        f.nested_desc, f.nested_desc.decode(bytes(x), check_identifier=False), inner
                    )
                except (DecodeError, ValueError):
                    text = None
            if text is None:
                text = _value(r.h, x, inner, f, keep)
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


_unescape = unescape


MAX_JSON_DEPTH = 64  # flatc's nesting limit

# ``-0`` must stay a negative zero for float fields: the json module would read it as int 0
_NEG_ZERO = re.compile(r"-0+(?![0-9.eExX])")


def _reject(token: str) -> Any:
    raise ValueError(f"not flatc JSON: {token}")


def _parse(text: str) -> Any:
    """Strict JSON (what flatc --strict-json writes) goes through the C ``json`` module: one
    pass, objects as (key, value) pairs, numbers as int/float; anything else (unquoted keys,
    comments, hex, nan...) through :func:`parse_json`."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_Obj,
            parse_constant=_reject,
            parse_int=JsonNumber if _NEG_ZERO.search(text) else int,
        )
    except (ValueError, RecursionError):
        return parse_json(text)


def _scalar_vector(e: fb.ScalarH, v: Any) -> Any:
    """A vector of plain scalars in one NumPy conversion (bytes for ``[ubyte]``, a zero-copy
    ScalarVector when large, as decoding gives); None to take the element-wise path."""
    if not isinstance(v, list) or not v:
        return None
    fmt = e.fmt
    if fmt == "B":
        try:
            return bytes(v)  # ints in 0..255 only (TypeError/ValueError otherwise)
        except (TypeError, ValueError):
            return None
    if len(v) < 64:
        return None
    try:
        arr = np.array(v)
    except (ValueError, OverflowError, TypeError):
        return None
    kind = arr.dtype.kind
    if fmt == "?":
        if kind != "b":
            return None
        out = arr
    elif fmt in "fd":
        if kind not in "iuf":
            return None
        wide = arr.astype(np.float64)
        out = wide.astype(fb.NP_DTYPE[fmt])
        if fmt == "f" and not np.array_equal(np.isfinite(wide), np.isfinite(out)):
            return None  # out of float32 range: the exact path reports it
    else:
        if kind not in "iu":
            return None
        lo, hi = fb.INT_RANGE[fmt]
        if int(arr.min()) < lo or int(arr.max()) > hi:
            raise ValueError(f"constant does not fit (type '{fmt}')")
        out = arr.astype(fb.NP_DTYPE[fmt])
    out = out.astype(fb.NP_DTYPE[fmt], copy=False)
    if out.nbytes < fb.ZERO_COPY_MIN:
        return out.tolist()
    out.flags.writeable = False
    return fb.ScalarVector(out)


_PLAIN_INT = re.compile(r"[+-]?[0-9]+")


def parse_json(text: str) -> Any:
    """flatc-style JSON -> Python: objects become lists of (key, value) pairs (key order is
    significant to flatc), decimal integers ``int``, other numbers :class:`JsonNumber`, bare
    words :class:`_Ident`. Tokens are read as the parser goes (no token list), so memory is
    the tree itself.
    """
    n = len(text)
    match = _TOKEN.match
    pos = 0
    kind, tok, at = "", "", 0  # the current token

    def advance() -> None:
        nonlocal pos, kind, tok, at
        while pos < n:
            m = match(text, pos)
            if m is None:
                raise ValueError(f"invalid JSON at offset {pos}: {text[pos:pos + 20]!r}")
            pos = m.end()
            k = m.lastgroup or ""
            if k != "ws":
                kind, tok, at = k, m.group(), m.start()
                return
        kind, tok, at = "", "", n

    def expect_more() -> None:
        if not kind:
            raise ValueError("unexpected end of JSON")

    def value(depth: int) -> Any:
        if depth > MAX_JSON_DEPTH:
            raise ValueError("JSON nested too deeply")
        expect_more()
        k, t, p = kind, tok, at
        advance()
        if k == "punct":
            if t == "{":
                pairs = _Obj()
                while True:
                    expect_more()
                    if tok == "}":
                        advance()
                        return pairs
                    if kind == "str":
                        key = _unescape(tok[1:-1])
                    elif kind in ("ident", "num"):
                        key = tok
                    else:
                        raise ValueError(f"expected a field name at offset {at}")
                    advance()
                    if tok != ":":
                        raise ValueError(f"expected ':' at offset {at}")
                    advance()
                    pairs.append((key, value(depth + 1)))
                    if tok == ",":
                        advance()
                    elif tok != "}":
                        expect_more()
                        raise ValueError(f"expected ',' or '}}' at offset {at}")
            if t == "[":
                items: list[Any] = []
                while True:
                    expect_more()
                    if tok == "]":
                        advance()
                        return items
                    items.append(value(depth + 1))
                    if tok == ",":
                        advance()
                    elif tok != "]":
                        expect_more()
                        raise ValueError(f"expected ',' or ']' at offset {at}")
            raise ValueError(f"unexpected {t!r} at offset {p}")
        if k == "str":
            return _unescape(t[1:-1])
        if k == "num":
            # plain decimal integers (the bulk of a model) as ints; "-0" stays text so a
            # float field keeps its sign
            if _PLAIN_INT.fullmatch(t) and not (t[0] == "-" and not t.strip("-0")):
                return int(t)
            return JsonNumber(t)
        return _Ident(t)

    advance()
    v = value(0)
    if kind:
        raise ValueError(f"trailing data at offset {at}")
    return v


def _num(t: str, fmt: str) -> Any:
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


def _enum_value(e: fb.Enum, s: str, fmt: str) -> Any:
    """flatc's enum strings: a number (``"2"``, ``"0x2"``, ``"-1"``) or member names separated
    by single spaces, OR-ed together (``"Red Blue"``); names are the schema's, unscoped."""
    try:
        x = _num(s, fmt)
    except ValueError:
        pass
    else:
        return e.cls(_in_range(x, fmt))
    total = 0
    for word in s.split(" "):
        m = e.by_name.get(word)
        if m is None:
            raise ValueError(f"unknown enum value: {word!r} for {e.qualname}")
        total |= int(m)
    return e.cls(total)


def _in_range(x: int, fmt: str) -> int:
    rng = fb.INT_RANGE.get(fmt)
    if rng is not None and not rng[0] <= x <= rng[1]:
        raise ValueError(f"constant does not fit: {x} (type '{fmt}')")
    return x


def _kind(v: Any) -> str:
    """How a JSON value is named in an error."""
    if v is None:
        return "null"
    if isinstance(v, _Obj):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, (JsonNumber, int, float)) and not isinstance(v, bool):
        return f"the number {v}"
    return f"{str(v)!r}"


class _At(ValueError):
    """A value error with the field path (innermost last) where it happened."""

    def __init__(self, reason: str, path: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path


def _at(e: Exception, step: str) -> _At:
    if isinstance(e, _At):
        return _At(e.reason, step + e.path)
    return _At(str(e), step)


_FIELD_ERRORS = (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError)


def _to_scalar(h: fb.ScalarH, v: Any, f: fb.Field | None) -> Any:
    fmt = h.fmt
    # values from the json module's fast path (see _parse)
    if v is True or v is False:
        v = _Ident("true" if v else "false")
    elif type(v) is int:
        if fmt in "fd":
            return _num(str(v), fmt)
        if fmt == "?":
            return bool(v)
        v = _in_range(v, fmt)
        return h.enum.cls(v) if h.enum is not None else v
    elif type(v) is float:
        v = JsonNumber(repr(v))
    if isinstance(v, _Ident) or (isinstance(v, str) and not isinstance(v, JsonNumber)):
        s = str(v)
        if fmt == "?" and s in ("true", "false"):
            return s == "true"
        if fmt in "fd" and s.lstrip("+-") in ("nan", "inf", "infinity"):
            return _num(s, fmt)
        if f is not None and f.hash and not isinstance(v, _Ident):
            return fb.flatc_hash(f.hash, s, h.fmt)
        if h.enum is not None:
            return _enum_value(h.enum, s, fmt)
        try:
            x = _num(s, fmt)  # numbers given as strings ("2")
        except ValueError:
            raise ValueError(f"invalid value {s!r}") from None
    elif isinstance(v, str):
        x = _num(v, fmt)
    else:  # a list, an object or null where a scalar belongs
        raise ValueError(f"expected a scalar, got {_kind(v)}")
    if fmt == "?":
        return bool(x)
    rng = fb.INT_RANGE.get(fmt)
    if rng is not None and not rng[0] <= x <= rng[1]:
        raise ValueError(f"constant does not fit: {x} (type '{fmt}')")
    if h.enum is not None:
        return h.enum.cls(x)
    return x


def _to_value(h: fb.Handler, v: Any, f: fb.Field | None = None, depth: int = 0) -> Any:
    if isinstance(h, fb.ScalarH):
        return _to_scalar(h, v, f)
    if isinstance(h, fb.StringH):
        if not isinstance(v, str) or isinstance(v, (JsonNumber, _Ident)):
            raise ValueError(f"expected a string, got {v!r}")
        return str(v)
    if isinstance(h, fb.TableH):
        return _to_table(h.desc, v, depth + 1)
    if isinstance(h, fb.StructH):
        return _to_struct(h.desc, v, depth + 1)
    if isinstance(h, (fb.VectorH, fb.ArrayH)):
        if f is not None and f.flexbuffer:
            try:
                return fb.NestedBuffer(fb.flex_dumps(_from_flex_json(v)), 8)
            except (RuntimeError, TypeError, OverflowError) as ex:
                raise ValueError(f"cannot build flexbuffer: {ex}") from None
        if f is not None and f.nested and isinstance(v, list) and isinstance(v, _Obj):
            nested = f.nested_desc
            return fb.NestedBuffer(*nested.encode_nested(_to_table(nested, v, depth + 1)))
        if not isinstance(v, list):
            raise ValueError(f"expected a list, got {v!r}")
        e = h.elem
        if (
            isinstance(e, fb.ScalarH)
            and e.enum is None
            and isinstance(h, fb.VectorH)
            and not (f is not None and f.hash)
        ):
            fast = _scalar_vector(e, v)
            if fast is not None:
                return fast
        items = []
        i = 0
        try:
            for i, x in enumerate(v):
                items.append(_to_value(e, x, f, depth + 1))
        except _FIELD_ERRORS as ex:
            raise _at(ex, f"[{i}]") from None
        if (
            isinstance(e, fb.ScalarH)
            and e.fmt == "B"
            and e.enum is None
            and isinstance(h, fb.VectorH)
        ):
            return bytes(items)
        return items
    raise TypeError(type(h).__name__)


def _to_struct(desc: StructDesc, pairs: Any, depth: int = 0) -> Any:
    desc.prepare()
    if depth > MAX_JSON_DEPTH:
        raise ValueError("JSON nested too deeply")
    if not isinstance(pairs, _Obj):
        raise ValueError(f"expected an object for struct {desc.qualname}")
    hs = {name: (attr, h) for (attr, name, _), (_, h) in zip(desc.fields, desc.handlers)}
    kw = {}
    for k, v in pairs:
        if k not in hs:
            raise ValueError(f"unknown field: {k} in {desc.qualname}")
        attr, h = hs[k]
        try:
            kw[attr] = _to_value(h, v, None, depth)
        except _FIELD_ERRORS as ex:
            raise _at(ex, f".{k}") from None
    return desc.cls(**kw)


def _to_table(desc: TableDesc, pairs: Any, depth: int = 0) -> Any:
    desc.prepare()
    if depth > MAX_JSON_DEPTH:
        raise ValueError("JSON nested too deeply")
    if not isinstance(pairs, _Obj):
        raise ValueError(f"expected an object for table {desc.qualname}")
    by_name = desc._by_name
    types: dict[str, Any] = {}
    for k, v in pairs:
        if k.endswith("_type") and k[:-5] in by_name and by_name[k[:-5]].union is not None:
            types[k[:-5]] = v
    kw: dict[str, Any] = {}
    dep: dict[str, Any] = {}  # deprecated fields: flatc still reads, stores and prints them
    order: list[str] = []
    for k, v in pairs:
        r = by_name.get(k)
        if r is None:
            if k.endswith("_type") and k[:-5] in types:
                continue
            raise ValueError(f"unknown field: {k} in {desc.qualname}")
        if v is None or (isinstance(v, _Ident) and v == "null"):
            if r.f.optional:
                kw[r.attr] = None
                order.append(k)
            continue
        order.append(k)
        try:
            if r.kind == fb.K_UNION:
                assert r.union is not None
                t = types.get(k)
                if t is None:
                    raise ValueError(f"missing type field for this union value: {k}")
                kw[r.attr] = _union_value(r.union, t, v, depth)
            elif r.kind == fb.K_UNION_VEC:
                assert r.union is not None
                ts = types.get(k)
                if not isinstance(ts, list) or not isinstance(v, list) or len(ts) != len(v):
                    raise ValueError(f"union vector {k} needs a {k}_type vector of the same length")
                kw[r.attr] = [_union_value(r.union, t, x, depth) for t, x in zip(ts, v)]
            else:
                kw[r.attr] = _to_value(r.h, v, r.f, depth)
        except _FIELD_ERRORS as ex:
            raise _at(ex, f".{k}") from None
        if r.f.deprecated and r.attr in kw:
            dep[k] = kw.pop(r.attr)
    obj = desc.cls(**kw)
    try:
        object.__setattr__(obj, "_fb_json_order", tuple(order))
        if dep:
            object.__setattr__(obj, "_fb_dep", dep)
    except (AttributeError, TypeError):
        pass  # slotted classes: encoding falls back to schema order
    return obj


def _union_value(u: fb.Union, t: Any, v: Any, depth: int = 0) -> Any:
    u.prepare()
    if type(t) is int:
        t = JsonNumber(str(t))
    elif not isinstance(t, str):
        raise ValueError(f"union type must be a name or a number, got {_kind(t)}")
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
    return u.wrap(name, h, _to_value(h, v, None, depth))


def from_json(desc: fb.Table[T] | fb.Struct[T], text: str) -> T:
    """Parse flatc-style JSON for the table ``desc``; bad input raises DecodeError."""
    try:
        if isinstance(desc, fb.Struct):
            out: T = _to_struct(desc, _parse(text))
        else:
            out = _to_table(desc, _parse(text))
        return out
    except DecodeError:
        raise
    except _At as e:  # a field's value: the message names the field path
        path = desc.qualname + e.path
        raise DecodeError(f"invalid JSON for {desc.qualname}: {e.reason}", path=path) from None
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        OverflowError,
        RecursionError,
        AttributeError,
    ) as e:
        raise DecodeError(f"invalid JSON for {desc.qualname}: {e}") from None
