"""Python naming and literal escaping: every decision about generated identifiers lives here."""

from __future__ import annotations

import keyword
import re
import unicodedata

from .blackstyle import normalize_quotes

__all__ = [
    "MODULE_NAMES",
    "RECORD_NAMES",
    "UNION_NAMES",
    "RESERVED_METHODS",
    "identifier",
    "class_name",
    "method_name",
    "param_name",
    "comment_text",
    "py_ident",
    "module_name",
    "enum_member_name",
    "docstring",
    "string_literal",
    "INTERFACE_NAMES",
    "package_segment_problem",
]

# Every schema identifier reaches generated Python through ``identifier`` with the set of
# names its scope already binds; an identifier in that set (or a keyword, or a name Python
# would mangle) gets trailing underscores. Views report two names that end up equal.

# Names a generated module binds or uses besides its classes: imports, helper aliases, the
# builtins generated code calls or annotates with.
MODULE_NAMES = frozenset(
    {
        "annotations",
        "dataclass",
        "field",
        "enum",
        "TYPE_CHECKING",
        "ClassVar",
        "Protocol",
        "Sequence",
        "Callable",
        "Any",
        "ScalarVector",
        "np",
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
# Module-level names generated code binds under a private alias: runtime modules, the
# FlatBuffers registry, modules of an import cycle (``_m_<package>_<module>``).
_HELPERS = frozenset({"_parcel", "_rec", "_fb", "_fbjson", "_ipc", "_FB_REG"})
_HELPER_PREFIX = "_m_"

# Names a record class body uses or inherits besides its fields: methods and attributes of the
# runtime base classes (idlgen.wire.records, idlgen.wire.parcel.UnionRecord), ``self``, and
# what its annotations and defaults name (builtins, ``field``, typing helpers).
RECORD_NAMES = frozenset(
    {
        "self",
        "to_dict",
        "from_dict",
        "to_parcel",
        "from_parcel",
        "to_flatbuffer",
        "from_flatbuffer",
        "to_json",
        "from_json",
        "lookup_by_key",
        "_lookup_by_key",
        "_FB_DESC",
        "field",
        "Any",
        "Sequence",
        "ScalarVector",
        "TYPE_CHECKING",
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
# HDI unions (idlgen.wire.parcel.UnionRecord) also have these.
UNION_NAMES = RECORD_NAMES | frozenset(
    {"raw", "_raw", "_member", "_from_raw", "_SIZE", "_MEMBERS", "_SCHEMA_NAMES"}
)
RESERVED_METHODS = RECORD_NAMES  # kept for callers of the old name
# Enum classes: names Enum itself gives meaning to, and the runtimes' class attributes.
_ENUM_NAMES = frozenset({"name", "value", "mro", "_FB_DESC"})


def identifier(name: str, taken: frozenset[str] = frozenset()) -> str:
    """A schema identifier as a Python identifier in a scope that binds ``taken``.

    Keywords and taken names get a trailing ``_`` (``global`` → ``global_``), as often as
    needed; a leading ``__`` (name mangling, dunders) and ``_sunder_`` shapes are moved out of
    the way (``__x`` → ``x__``). Private names of the runtime (``_name_``-like, ``_plan_``)
    and helper aliases (``_parcel``, ``_m_…``) count as taken.
    """
    # Python reads identifiers NFKC-normalised (``ﬁeld`` is ``field``): check what it will see.
    out = name if name.isascii() else unicodedata.normalize("NFKC", name)  # ASCII is NFKC
    if out.startswith("__") or out.startswith(_HELPER_PREFIX):
        out = out.lstrip("_") + "_" * (len(out) - len(out.lstrip("_")))
    while (
        keyword.iskeyword(out)
        or out in taken
        or out in _HELPERS
        or (len(out) > 2 and out[0] == "_" and out[-1] == "_" and out[1] != "_" and out[-2] != "_")
    ):
        out += "_"
    return out


def py_ident(name: str, reserved: frozenset[str] = RECORD_NAMES) -> str:
    """A record field name (the default scope) or, with ``reserved``, any other identifier."""
    return identifier(name, reserved)


def enum_member_name(name: str) -> str:
    return identifier(name, _ENUM_NAMES)


def method_name(name: str, cmd_id: int, overload: bool, taken: frozenset[str] = frozenset()) -> str:
    """An interface method: an overload of an ancestor's method gets ``_<cmd_id>`` (as hdi-gen
    names its command constant ``CMD_FOO_PING_4``). ``taken``: the class names the interface's
    annotations use (a method binds its name in the class body, where later annotations are
    resolved)."""
    return identifier(name, INTERFACE_NAMES | taken) + (f"_{cmd_id}" if overload else "")


def param_name(name: str) -> str:
    """A method parameter (``self`` is the receiver)."""
    return identifier(name, _PARAM_NAMES)


# An interface class (a typing.Protocol) binds these besides its methods; its annotations use
# the module's names.
INTERFACE_NAMES = MODULE_NAMES | frozenset(
    {
        "DESCRIPTOR",
        "self",
        "tuple",
        "None",
        "_is_protocol",
        "_is_runtime_protocol",
        "_abc_impl",
    }
)
_PARAM_NAMES = frozenset({"self"})


def class_name(name: str) -> str:
    """A declaration's class name (module scope)."""
    return identifier(name, MODULE_NAMES)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def module_name(stem: str) -> str:
    """Schema file stem → module name: ``NodeAttrTypes`` → ``node_attr_types``,
    ``INnrtDevice`` → ``innrt_device``, ``monster_test`` → ``monster_test``."""
    s = _CAMEL.sub("_", stem).lower()
    s = re.sub(r"[^0-9a-z_]", "_", s)
    if not s or s[0].isdigit() or s[0] == "_":  # ``__init__.fbs`` must not be the package's
        s = "m_" + s
    if keyword.iskeyword(s) or s in ("kernels", "reports"):
        s += "_"
    return s


def package_segment_problem(segment: str) -> str | None:
    """Why a namespace segment cannot be a Python package directory name, or None."""
    if not segment.isidentifier() or not segment.isascii():
        return "is not an ASCII Python identifier"
    if keyword.iskeyword(segment):
        return "is a Python keyword"
    if segment.startswith("__") or segment in ("kernels", "reports"):
        return "is a name Python or idlgen reserves"
    return None


# Characters a docstring shows as escapes: controls (CR, NEL, ...), format characters (bidi
# overrides, zero-width), line/paragraph separators, surrogates, private use, unassigned.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _visible(ch: str) -> str:
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def _escape_body(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n" or ch == "\t":
            out.append(ch)
        elif not ch.isascii() and unicodedata.category(ch) in _HIDDEN or ord(ch) < 0x20:
            out.append(_visible(ch))
        elif ch == "\x7f":
            out.append("\\x7f")
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
    # A closing quote must not touch ours; one already escaped (odd run of backslashes) is fine.
    if body.endswith('"') and (len(body) - 1 - len(body[:-1].rstrip("\\"))) % 2 == 0:
        body = body[:-1] + '\\"'
    return f'"""{body}"""'


def string_literal(text: str) -> str:
    """A one-line string literal (``repr`` is exact for str and never spans lines), in black's
    quotes so that generated code need not go through black."""
    r = repr(text)
    if r[0] == "'" and '"' not in r and "\\" not in r:
        return f'"{r[1:-1]}"'  # normalize_quotes' common case, without its call
    return normalize_quotes(r)


def py_literal(value: object) -> str:
    """A default or flag value as Python source in black's spelling: strings in its quotes,
    ``1e20`` (no ``+`` in an exponent), ``float("-inf")`` for what has no literal, ``()``."""
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, float):
        r = repr(value)
        return f'float("{r}")' if r in ("inf", "-inf", "nan") else r.replace("e+", "e")
    return repr(value)


def comment_text(text: str) -> str:
    """Text for a ``#`` comment: line breaks and other controls as escapes, so schema text
    (file names, say) cannot end the comment."""
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
