"""The lint rules: style, separate from validity (what the front ends already reject).

Each rule has an id (the language, then the subject first, buf-style: ``HDI_FIELD_LOWER_CAMEL_CASE``),
a category, a one-line why and whether it runs by default. The defaults were tuned on the 611
real OpenHarmony HDI files and the real FlatBuffers schemas (TFLite, MindSpore Lite, ArmNN,
Arrow, flatc's tests): a default rule fires where the corpus itself treats the case as a
deviation (HDI follows OpenHarmony's HDI design specification; FlatBuffers follows flatc's style
guide where the real schemas do). Rules that would flag a convention many real schemas keep on
purpose are opt-in (``use = ["COMMENTS"]``, or the rule id).

A check is a function ``(SchemaFile, Schema) -> Iterator[Finding]``; :data:`RULES` is the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from .. import ir

__all__ = ["CATEGORIES", "Finding", "RULES", "Rule"]

#: Rule families.
CATEGORIES = ("NAMING", "ENUMS", "PACKAGE", "COMMENTS", "FIELDS", "METHODS")


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    span: ir.Span | None
    #: Where a file-level finding points when the IR holds no span for it: the first source
    #: line matching this pattern (outside comments).
    anchor: str = ""


Check = Callable[[ir.SchemaFile, ir.Schema], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    language: str  # "hdi" or "fbs"
    category: str
    why: str
    default: bool
    check: Check


# -- name shapes -------------------------------------------------------------------------------

_PASCAL = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
_LOWER_CAMEL = re.compile(r"[a-z][A-Za-z0-9]*\Z")
_UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*\Z")
_LOWER_SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*\Z")
# OpenHarmony versions a type or method that changed in a minor version with a suffix
# (``StreamInfo_V1_1``, ``OpenCamera_V1_3``): that is the convention, not a deviation.
# The corpus spells it several ways: ``_V1_1``, ``V1_2``, ``_V_3``, ``_v1_4``, ``_1_2``, ``1_2``.
_HDI_VERSION_SUFFIX = re.compile(r"(_?[Vv]_?\d+(_\d+)?|_?\d+_\d+)\Z")


def _pascal_hdi(name: str) -> bool:
    return bool(_PASCAL.match(_HDI_VERSION_SUFFIX.sub("", name)))


T = TypeVar("T")


@overload
def _decls(f: ir.SchemaFile, kind: type[T]) -> Iterator[T]: ...
@overload
def _decls(f: ir.SchemaFile, kind: tuple[type, ...]) -> Iterator[Any]: ...
def _decls(f: ir.SchemaFile, kind: Any) -> Iterator[Any]:
    for d in f.decls:
        if isinstance(d, kind):
            yield d


def _kind(d: ir.Decl) -> str:
    if isinstance(d, ir.Struct):
        return "table" if d.is_table else "struct"
    if isinstance(d, ir.Interface):
        return "interface"
    return type(d).__name__.lower()


# -- naming cases ------------------------------------------------------------------------------

Named = Iterator[tuple[str, str, "ir.Span | None"]]  # (what, name, where)


def _naming(
    rule: str,
    names: Callable[[ir.SchemaFile], Named],
    ok: Callable[[str], bool],
    case: str,
    fix: Callable[[str], str],
    note: str = "",
) -> Check:
    """A rule that every name ``names`` yields passes ``ok``; the finding suggests ``fix``."""

    def check(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
        for what, name, span in names(f):
            if not ok(name):
                yield Finding(rule, f"{what} should be {case} ({fix(name)}){note}", span)

    return check


def _types(kinds: tuple[type, ...]) -> Callable[[ir.SchemaFile], Named]:
    def names(f: ir.SchemaFile) -> Named:
        for d in _decls(f, kinds):
            yield f"{_kind(d)} {d.name}", d.name, d.span

    return names


def _methods(f: ir.SchemaFile) -> Named:
    for d in _decls(f, ir.Interface):
        for m in d.methods:
            if not m.implicit:
                yield f"method {d.name}.{m.name}", m.name, m.span


def _params(f: ir.SchemaFile) -> Named:
    for d in _decls(f, ir.Interface):
        for m in d.methods:
            for p in m.params:
                yield f"parameter {p.name} of {d.name}.{m.name}", p.name, p.span or m.span


def _members(f: ir.SchemaFile) -> Named:
    """HDI struct and union members declared here (not inherited)."""
    for d in _decls(f, (ir.Struct, ir.Union)):
        for m in d.fields if isinstance(d, ir.Struct) else d.members:
            if not getattr(m, "inherited_from", ""):
                yield f"member {d.name}.{m.name}", m.name, m.span


def _fields(f: ir.SchemaFile) -> Named:
    for d in _decls(f, ir.Struct):
        for x in d.fields:
            yield f"field {d.name}.{x.name}", x.name, x.span


def _enum_values(what: str, own: bool) -> Callable[[ir.SchemaFile], Named]:
    def names(f: ir.SchemaFile) -> Named:
        for d in _decls(f, ir.Enum):
            for m in d.members:
                if not (own and m.inherited_from):
                    yield f"{what} {d.name}.{m.name}", m.name, m.span

    return names


def _matches(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda name: bool(pattern.match(name))


def _pascal_not_upper(name: str) -> bool:
    """UpperCamelCase, and not a longer UPPER_SNAKE name (``RED`` is not ``Red``)."""
    return bool(_PASCAL.match(name)) and not (len(name) > 1 and _UPPER_SNAKE.match(name))


# -- HDI ---------------------------------------------------------------------------------------


def hdi_interface_i_prefix(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Interface):
        if not (d.name.startswith("I") and _pascal_hdi(d.name[1:])):
            yield Finding(
                "HDI_INTERFACE_I_PREFIX",
                f"interface {d.name} should be named I + UpperCamelCase (e.g. "
                f"I{_to_pascal(d.name.removeprefix('I'))})",
                d.span,
            )


def _enum_prefix(f: ir.SchemaFile, s: ir.Schema, rule: str) -> Iterator[Finding]:
    for d in _decls(f, ir.Enum):
        own = [m for m in d.members if not m.inherited_from]
        if len(own) < 2 or d.parent:
            continue
        first = own[0].name.split("_")[0]
        if not all(m.name.startswith(first + "_") for m in own):
            yield Finding(
                rule,
                f"the members of enum {d.name} share no common prefix: HDI enums are unscoped in "
                f"C++, so members of different enums of a package collide",
                d.span,
            )


def hdi_enum_value_prefix(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    return _enum_prefix(f, s, "HDI_ENUM_VALUE_PREFIX")


def hdi_package_lower_case(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    parts = f.namespace.split(".")
    bad = [p for p in parts[:-1] if not re.fullmatch(r"[a-z][a-z0-9_]*", p)]
    if bad:
        yield Finding(
            "HDI_PACKAGE_LOWER_CASE",
            f"package {f.namespace}: components should be lower case ({', '.join(bad)})",
            f.span,
            anchor=r"\bpackage\b",
        )


def hdi_package_version_suffix(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    last = f.namespace.rsplit(".", 1)[-1]
    if not re.fullmatch(r"v(0|[1-9][0-9]*)_(0|[1-9][0-9]*)", last):
        yield Finding(
            "HDI_PACKAGE_VERSION_SUFFIX",
            f"package {f.namespace} should end in a version v<major>_<minor> without leading "
            f"zeros (e.g. v1_0)",
            f.span,
            anchor=r"\bpackage\b",
        )


def hdi_callback_suffix(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Interface):
        if d.callback and not d.name.endswith("Callback"):
            yield Finding(
                "HDI_CALLBACK_SUFFIX",
                f"callback interface {d.name} should end in Callback",
                d.span,
            )


def hdi_interface_no_interface_suffix(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Interface):
        if d.name.endswith("Interface") and d.name != "IInterface":
            yield Finding(
                "HDI_INTERFACE_NO_INTERFACE_SUFFIX",
                f"interface {d.name}: the Interface suffix is redundant",
                d.span,
            )


def hdi_out_params_last(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Interface):
        for m in d.methods:
            seen_out = False
            for p in m.params:
                if p.direction == "out":
                    seen_out = True
                elif seen_out:
                    yield Finding(
                        "HDI_OUT_PARAMS_LAST",
                        f"{d.name}.{m.name}: [in] parameter {p.name} follows an [out] "
                        "parameter; [out] parameters go last",
                        p.span or m.span,
                    )
                    break


_GETTER = re.compile(r"(Get|Query|Is|Has)[A-Z0-9_]")


def hdi_oneway_getter(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Interface):
        if d.callback:
            continue
        for m in d.methods:
            if m.oneway and _GETTER.match(m.name):
                yield Finding(
                    "HDI_ONEWAY_GETTER",
                    f"{d.name}.{m.name} is [oneway] but named like a query: a oneway call "
                    "returns nothing and the caller cannot tell whether it ran",
                    m.span,
                )


def _doc_rule(rule: str, kinds: tuple[type, ...], methods: bool = False) -> Check:
    def check(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
        for d in _decls(f, kinds):
            if methods:
                assert isinstance(d, ir.Interface)
                for m in d.methods:
                    if not m.implicit and not m.doc.strip():
                        yield Finding(rule, f"method {d.name}.{m.name} has no doc comment", m.span)
            elif not d.doc.strip():
                yield Finding(rule, f"{_kind(d)} {d.name} has no doc comment", d.span)

    return check


# -- FlatBuffers ---------------------------------------------------------------------------------


def _field_case(name: str) -> str:
    if "_" not in name and name[:1].islower() and any(c.isupper() for c in name):
        return "camelCase"
    if _LOWER_SNAKE.match(name):
        return "snake_case" if "_" in name else "lower"
    return "other"


def fbs_field_case_consistent(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    """Fields of one file share one case: snake_case (flatc's) or the file's own camelCase.
    One-word lower-case names fit both."""
    fields = [(d, x) for d in _decls(f, ir.Struct) for x in d.fields]
    cases = [_field_case(x.name) for _, x in fields]
    snake, camel = cases.count("snake_case"), cases.count("camelCase")
    major = "camelCase" if camel > snake else "snake_case"
    for (d, x), c in zip(fields, cases):
        if c == "other" or (c != "lower" and c != major):
            want = _to_lower_snake(x.name) if major == "snake_case" else _to_lower_camel(x.name)
            yield Finding(
                "FBS_FIELD_CASE_CONSISTENT",
                f"field {d.name}.{x.name} is not {major} like the other fields of this file "
                f"({want})",
                x.span,
            )


def fbs_enum_value_case_consistent(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Enum):
        names = [m.name for m in d.members]
        if len(names) < 2:
            continue
        kinds = {
            "upper" if _UPPER_SNAKE.match(n) else "pascal" if _PASCAL.match(n) else "other"
            for n in names
        }
        if kinds in ({"upper"}, {"pascal"}):
            continue
        odd = [n for n in names if not (_PASCAL.match(n) or _UPPER_SNAKE.match(n))]
        detail = f" ({', '.join(odd[:3])} are neither)" if odd else ""
        yield Finding(
            "FBS_ENUM_VALUE_CASE_CONSISTENT",
            f"enum {d.name} mixes value cases: use UpperCamelCase (flatc's style) or "
            f"UPPER_SNAKE_CASE for all of them{detail}",
            d.span,
        )


def fbs_enum_zero_value(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Enum):
        if d.bit_flags or any(m.value == 0 for m in d.members):
            continue
        yield Finding(
            "FBS_ENUM_ZERO_VALUE",
            f"enum {d.name} has no value 0: a field of this type that is absent from a table "
            "reads as 0, which names no value",
            d.span,
        )


def fbs_namespace_defined(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    if f.decls and not f.namespace:
        yield Finding(
            "FBS_NAMESPACE_DEFINED",
            "declarations in the global namespace: set a namespace so generated code of "
            "different schemas cannot collide",
            f.decls[0].span or f.span,
        )


def fbs_deprecated_field_documented(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Struct):
        for fld in d.fields:
            if fld.deprecated and not fld.doc.strip():
                yield Finding(
                    "FBS_DEPRECATED_FIELD_DOCUMENTED",
                    f"deprecated field {d.name}.{fld.name} has no doc comment saying what "
                    "replaces it",
                    fld.span,
                )


def fbs_field_explicit_id(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    for d in _decls(f, ir.Struct):
        if (
            d.is_table
            and d.fields
            and not any(a.name == "id" for x in d.fields for a in x.attributes)
        ):
            yield Finding(
                "FBS_FIELD_EXPLICIT_ID",
                f"table {d.name} numbers its fields by position: explicit (id: n) attributes "
                "keep a reordering from changing the wire format",
                d.span,
            )


def fbs_root_type_file_identifier(f: ir.SchemaFile, s: ir.Schema) -> Iterator[Finding]:
    if f.root_type and not f.file_identifier:
        yield Finding(
            "FBS_ROOT_TYPE_FILE_IDENTIFIER",
            f"root_type {f.root_type.rsplit('.', 1)[-1]} without a file_identifier: buffers "
            "cannot be told from other schemas' buffers",
            f.span,
            anchor=r"\broot_type\b",
        )


# -- name conversion for the suggestions ----------------------------------------------------------

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")


def _words(name: str) -> list[str]:
    return _WORDS.findall(name)


def _to_pascal(name: str) -> str:
    return (
        "".join(
            w[:1].upper() + w[1:].lower() if w.isupper() else w[:1].upper() + w[1:]
            for w in _words(name)
        )
        or name
    )


def _to_lower_camel(name: str) -> str:
    p = _to_pascal(name)
    return p[:1].lower() + p[1:]


def _to_upper_snake(name: str) -> str:
    return "_".join(w.upper() for w in _words(name)) or name


def _to_lower_snake(name: str) -> str:
    return "_".join(w.lower() for w in _words(name)) or name


# -- the table ---------------------------------------------------------------------------------


def _r(id: str, category: str, why: str, check: Check, default: bool = True) -> Rule:
    return Rule(id, id.split("_", 1)[0].lower(), category, why, default, check)


RULES: tuple[Rule, ...] = (
    _r("HDI_INTERFACE_I_PREFIX", "NAMING", "OpenHarmony names interfaces I + UpperCamelCase (99% of the corpus)", hdi_interface_i_prefix),
    _r("HDI_TYPE_PASCAL_CASE", "NAMING", "structs, enums and unions are UpperCamelCase; a version suffix (_V1_1, V1_2, _1_2) is allowed", _naming("HDI_TYPE_PASCAL_CASE", _types((ir.Struct, ir.Enum, ir.Union)), _pascal_hdi, "UpperCamelCase", _to_pascal)),
    _r("HDI_METHOD_PASCAL_CASE", "NAMING", "methods are UpperCamelCase; a version suffix (_V1_1, V1_2, _1_2) is allowed", _naming("HDI_METHOD_PASCAL_CASE", _methods, _pascal_hdi, "UpperCamelCase", _to_pascal)),
    _r("HDI_FIELD_LOWER_CAMEL_CASE", "NAMING", "struct and union members are lowerCamelCase (no C++ member_ suffix)", _naming("HDI_FIELD_LOWER_CAMEL_CASE", _members, _matches(_LOWER_CAMEL), "lowerCamelCase", _to_lower_camel)),
    _r("HDI_PARAM_LOWER_CAMEL_CASE", "NAMING", "parameters are lowerCamelCase", _naming("HDI_PARAM_LOWER_CAMEL_CASE", _params, _matches(_LOWER_CAMEL), "lowerCamelCase", _to_lower_camel)),
    _r("HDI_ENUM_VALUE_UPPER_SNAKE_CASE", "NAMING", "enum members are UPPER_SNAKE_CASE constants", _naming("HDI_ENUM_VALUE_UPPER_SNAKE_CASE", _enum_values("enum member", own=True), _matches(_UPPER_SNAKE), "UPPER_SNAKE_CASE", _to_upper_snake)),
    _r("HDI_ENUM_VALUE_PREFIX", "ENUMS", "unscoped C++ enums collide without a per-enum prefix (28% of the corpus lacks one: opt-in)", hdi_enum_value_prefix, default=False),
    _r("HDI_PACKAGE_LOWER_CASE", "PACKAGE", "package components are lower case, like the directories they live in", hdi_package_lower_case),
    _r("HDI_PACKAGE_VERSION_SUFFIX", "PACKAGE", "the version component is v<major>_<minor> without leading zeros", hdi_package_version_suffix),
    _r("HDI_CALLBACK_SUFFIX", "NAMING", "a [callback] interface says so in its name (152 of 155 in the corpus)", hdi_callback_suffix),
    _r("HDI_INTERFACE_NO_INTERFACE_SUFFIX", "NAMING", "the Interface suffix is redundant (the spec says so; 20% of the corpus keeps it: opt-in)", hdi_interface_no_interface_suffix, default=False),
    _r("HDI_OUT_PARAMS_LAST", "METHODS", "[out] parameters follow every [in] parameter (reordering breaks the Parcel, so only new methods can: opt-in)", hdi_out_params_last, default=False),
    _r("HDI_ONEWAY_GETTER", "METHODS", "a [oneway] Get/Query/Is method returns nothing; its answer must come through a callback (RIL does this on purpose: opt-in)", hdi_oneway_getter, default=False),
    _r("HDI_COMMENT_INTERFACE", "COMMENTS", "an interface is documented (36% of the corpus is not: opt-in)", _doc_rule("HDI_COMMENT_INTERFACE", (ir.Interface,)), default=False),
    _r("HDI_COMMENT_METHOD", "COMMENTS", "a method is documented", _doc_rule("HDI_COMMENT_METHOD", (ir.Interface,), methods=True), default=False),
    _r("HDI_COMMENT_TYPE", "COMMENTS", "a struct, enum or union is documented", _doc_rule("HDI_COMMENT_TYPE", (ir.Struct, ir.Enum, ir.Union)), default=False),
    _r("FBS_TYPE_PASCAL_CASE", "NAMING", "flatc's style guide: tables, structs, enums, unions and services are UpperCamelCase", _naming("FBS_TYPE_PASCAL_CASE", _types((ir.Struct, ir.Enum, ir.Union, ir.Interface)), _matches(_PASCAL), "UpperCamelCase", _to_pascal)),
    _r("FBS_FIELD_CASE_CONSISTENT", "NAMING", "one case for the fields of a file: flatc's snake_case, or the camelCase a schema chose (ArmNN, MindSpore)", fbs_field_case_consistent),
    _r("FBS_FIELD_LOWER_SNAKE_CASE", "NAMING", "flatc's style guide (and flatc's own warning): fields are lower_snake_case (whole real schemas use camelCase: opt-in)", _naming("FBS_FIELD_LOWER_SNAKE_CASE", _fields, _matches(_LOWER_SNAKE), "lower_snake_case", _to_lower_snake, "; flatc warns about it too"), default=False),
    _r("FBS_ENUM_VALUE_CASE_CONSISTENT", "NAMING", "one case for all values of an enum (UpperCamelCase or the UPPER_SNAKE_CASE real schemas use)", fbs_enum_value_case_consistent),
    _r("FBS_ENUM_VALUE_PASCAL_CASE", "NAMING", "flatc's style guide: enum values are UpperCamelCase (TFLite and others use UPPER_SNAKE: opt-in)", _naming("FBS_ENUM_VALUE_PASCAL_CASE", _enum_values("enum value", own=False), _pascal_not_upper, "UpperCamelCase", _to_pascal), default=False),
    _r("FBS_ENUM_ZERO_VALUE", "ENUMS", "an absent field reads as 0, so a (non bit_flags) enum names its 0", fbs_enum_zero_value),
    _r("FBS_NAMESPACE_DEFINED", "PACKAGE", "types in the global namespace collide across schemas", fbs_namespace_defined),
    _r("FBS_DEPRECATED_FIELD_DOCUMENTED", "FIELDS", "a deprecated field says what replaces it", fbs_deprecated_field_documented),
    _r("FBS_FIELD_EXPLICIT_ID", "FIELDS", "explicit ids keep reordering from breaking the wire (most real schemas rely on order: opt-in)", fbs_field_explicit_id, default=False),
    _r("FBS_ROOT_TYPE_FILE_IDENTIFIER", "FIELDS", "a root type's buffers carry a file_identifier so readers can check them", fbs_root_type_file_identifier, default=False),
    _r("FBS_COMMENT_TYPE", "COMMENTS", "a table, struct, enum or union is documented", _doc_rule("FBS_COMMENT_TYPE", (ir.Struct, ir.Enum, ir.Union)), default=False),
)  # fmt: skip
