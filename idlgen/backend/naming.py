"""Python naming and literal escaping: every decision about generated identifiers lives here."""

from __future__ import annotations

import keyword
import re

__all__ = [
    "RESERVED_METHODS",
    "py_ident",
    "module_name",
    "enum_member_name",
    "docstring",
    "string_literal",
]

# A field with one of these names gets a trailing "_": the methods generated on record classes,
# and the builtin types generated annotations use (a field named `list` would otherwise make
# `list[int]` in the same class body refer to the field).
RESERVED_METHODS = frozenset(
    {
        "to_dict",
        "from_dict",
        "to_parcel",
        "from_parcel",
        "to_flatbuffer",
        "from_flatbuffer",
        "to_json",
        "from_json",
        "lookup_by_key",
        "bool",
        "bytes",
        "dict",
        "float",
        "int",
        "list",
        "object",
        "str",
    }
)
_ENUM_RESERVED = frozenset({"name", "value", "mro"})


def py_ident(name: str, reserved: frozenset[str] = RESERVED_METHODS) -> str:
    """A schema identifier as a Python identifier (``global`` → ``global_``)."""
    if keyword.iskeyword(name) or name in reserved or name.startswith("__"):
        return name + "_"
    return name


def enum_member_name(name: str) -> str:
    return py_ident(name, _ENUM_RESERVED)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def module_name(stem: str) -> str:
    """Schema file stem → module name: ``NodeAttrTypes`` → ``node_attr_types``,
    ``INnrtDevice`` → ``innrt_device``, ``monster_test`` → ``monster_test``."""
    s = _CAMEL.sub("_", stem).lower()
    s = re.sub(r"[^0-9a-z_]", "_", s)
    if not s or s[0].isdigit():
        s = "m_" + s
    if keyword.iskeyword(s) or s in ("kernels", "reports"):
        s += "_"
    return s


def _escape_body(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n" or ch == "\t":
            out.append(ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out).replace('"""', '\\"\\"\\"')


def docstring(text: str, indent: int = 0) -> str:
    """A triple-quoted literal whose value is ``text`` (backslashes, quotes, controls escaped).

    ``indent`` spaces are put before continuation lines, for docstrings of attributes (which,
    unlike class docstrings, black leaves alone).
    """
    body = _escape_body(text.strip())
    if indent:
        body = body.replace("\n", "\n" + " " * indent).replace(" " * indent + "\n", "\n")
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    return f'"""{body}"""'


def string_literal(text: str) -> str:
    """A one-line string literal (``repr`` is already exact for str)."""
    return repr(text)
