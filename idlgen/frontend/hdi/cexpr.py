"""Evaluate HDI enum value expressions the way a C++ compiler does (LP64 target).

hdi-gen re-emits enum expressions verbatim into C++, so the real value is the compiler's:
C operator precedence (the grammar already parses with it), integer literal types chosen by
value and suffix, the usual arithmetic conversions, two's-complement wrap-around (C++20 shift
semantics), and inside an enum with a fixed underlying type every enumerator has that type.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import ast as A

__all__ = ["CInt", "EvalError", "evaluate", "parse_literal", "INT", "UINT", "LONG", "ULONG"]


@dataclass(frozen=True, slots=True)
class CType:
    bits: int
    signed: bool
    rank: int  # int < long < long long (long and long long are both 64-bit on LP64)

    def wrap(self, v: int) -> int:
        mask = (1 << self.bits) - 1
        v &= mask
        if self.signed and v >> (self.bits - 1):
            v -= 1 << self.bits
        return v

    def fits(self, v: int) -> bool:
        if self.signed:
            return -(1 << (self.bits - 1)) <= v < (1 << (self.bits - 1))
        return 0 <= v < (1 << self.bits)

    def limits(self) -> tuple[int, int]:
        """The least and greatest value (``fits`` is ``lo <= v <= hi``)."""
        if self.signed:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1


INT = CType(32, True, 1)
UINT = CType(32, False, 1)
LONG = CType(64, True, 2)
ULONG = CType(64, False, 2)
LLONG = CType(64, True, 3)
ULLONG = CType(64, False, 3)


@dataclass(frozen=True, slots=True)
class CInt:
    value: int
    type: CType


class EvalError(Exception):
    def __init__(self, message: str, node: A.Expr) -> None:
        super().__init__(message)
        self.node = node


_SUFFIX = re.compile(r"(u|l|ll|ul|ull)?$", re.IGNORECASE)
_DEC = re.compile(r"(0|[1-9][0-9]*)([A-Za-z]*)$")
_OCT = re.compile(r"0([0-7]+)([A-Za-z]*)$")
_BIN = re.compile(r"0[bB]([01]+)([A-Za-z]*)$")
_HEX = re.compile(r"0[xX]([0-9a-fA-F]+)$")


def parse_literal(text: str) -> CInt | None:
    """A literal's value and C type, or None when hdi-gen would reject its form."""
    try:
        return _parse_literal(text)
    except ValueError:  # a decimal of more digits than int() converts: fits no C type anyway
        return None


def _parse_literal(text: str) -> CInt | None:
    if text.isdigit() and text.isascii() and (text[0] != "0" or text == "0"):
        # the common case, a plain decimal: int, else long (C++ [lex.icon])
        value = int(text)
        for t in (INT, LONG):
            if t.fits(value):
                return CInt(value, t)
        return None
    m = _HEX.match(text)
    if m:
        value, suffix, decimal = int(m.group(1), 16), "", False
    else:
        for rx, base in ((_BIN, 2), (_OCT, 8), (_DEC, 10)):
            m = rx.match(text)
            if m:
                value, suffix, decimal = int(m.group(1), base), m.group(2), base == 10
                break
        else:
            return None
    if not _SUFFIX.fullmatch(suffix):
        return None
    s = suffix.lower()
    unsigned = "u" in s
    longs = s.count("l")
    # C++ [lex.icon]: the first type in the list that can represent the value.
    if decimal and not unsigned:
        candidates = [INT, LONG, LLONG][longs if longs < 2 else 2 :]
    elif unsigned:
        candidates = [UINT, ULONG, ULLONG][longs if longs < 2 else 2 :]
    else:  # binary/octal/hex without 'u' may become unsigned
        candidates = [INT, UINT, LONG, ULONG, LLONG, ULLONG][2 * longs if longs < 2 else 4 :]
    for t in candidates:
        if t.fits(value):
            return CInt(value, t)
    return None


def _common(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions (both operands already promoted)."""
    if a.signed == b.signed:
        return a if a.rank >= b.rank else b
    s, u = (a, b) if a.signed else (b, a)
    if u.rank >= s.rank:
        return u
    if s.bits > u.bits:
        return s
    return CType(s.bits, False, s.rank)


def _promote(t: CType) -> CType:
    return INT if t.bits < 32 else t


# Enum values repeat their literals (0, 1, shift counts): parse each text once per process;
# bounded, so many distinct literals only evict.
_literal = functools.lru_cache(maxsize=4096)(parse_literal)


def evaluate(e: A.Expr, lookup: Callable[[A.NameRef], CInt]) -> CInt:
    """Evaluate ``e``; ``lookup`` resolves enumerator names (raises EvalError when unknown)."""
    if isinstance(e, A.Binary):  # the most common node first
        left = evaluate(e.left, lookup)
        right = evaluate(e.right, lookup)
        op = e.op
        if op in ("<<", ">>"):
            t = _promote(left.type)
            n = right.value
            if n < 0 or n >= t.bits:
                raise EvalError(f"shift count {n} is out of range for a {t.bits}-bit value", e)
            if op == "<<":
                return CInt(t.wrap(left.value << n), t)
            return CInt(t.wrap(left.value >> n), t)
        lt = left.type
        t = _promote(lt) if lt is right.type else _common(_promote(lt), _promote(right.type))
        a, b = t.wrap(left.value), t.wrap(right.value)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op in ("/", "%"):
            if b == 0:
                raise EvalError("division by zero in constant expression", e)
            q = abs(a) // abs(b)
            q = q if (a >= 0) == (b >= 0) else -q  # C truncates toward zero
            r = q if op == "/" else a - q * b
        elif op == "&":
            r = a & b
        elif op == "|":
            r = a | b
        elif op == "^":
            r = a ^ b
        else:  # pragma: no cover - the grammar has no other operators
            raise EvalError(f"unsupported operator '{op}'", e)
        return CInt(t.wrap(r), t)
    if isinstance(e, A.Num):
        lit = _literal(e.text)
        if lit is None:
            raise EvalError(f"unknown integer number '{e.text}'", e)
        return lit
    if isinstance(e, A.NameRef):
        return lookup(e)
    if isinstance(e, A.Paren):
        return evaluate(e.inner, lookup)
    # A.Unary
    if e.op in ("++", "--"):
        raise EvalError(f"'{e.op}' is not allowed in a constant expression", e)
    v = evaluate(e.operand, lookup)
    t = _promote(v.type)
    if e.op == "+":
        return CInt(v.value, t)
    if e.op == "-":
        return CInt(t.wrap(-v.value), t)
    return CInt(t.wrap(~v.value), t)  # "~"


def ctype_of(bits: int, signed: bool) -> CType:
    return CType(bits, signed, 1 if bits <= 32 else 2)
