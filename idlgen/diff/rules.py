"""The rule catalogue: stable ids, default severities and why each change matters on the wire.

HDI rules reason about OpenHarmony's MessageParcel (positional, no tags: command id = method
position, members marshalled in declaration order, plain-data structs copied as one raw
``sizeof`` block, enums as uint64). FlatBuffers rules reason about vtable slots and fixed
struct layouts. Ids never change meaning once published; suppressions and baselines key on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Categories, Severity

__all__ = ["Rule", "RULES", "HDI_RULES", "FBS_RULES", "LangRules", "LANG_RULES", "rule"]

B, W, I = Severity.BREAKING, Severity.WARNING, Severity.INFO
# What a change breaks (``findings.CATEGORIES``): the bytes, the JSON / ``to_dict`` names, the
# generated Python API. A rule's default severity follows from the default ``breaking =
# ["WIRE"]``: breaking when it breaks WIRE, warning when it breaks only JSON or SOURCE, and its
# own severity (warning: meaning changes; info: compatible) when it breaks nothing.
WI: Categories = ("WIRE",)
WI_SO: Categories = ("WIRE", "SOURCE")
ALL: Categories = ("WIRE", "JSON", "SOURCE")
JS_SO: Categories = ("JSON", "SOURCE")
SO: Categories = ("SOURCE",)
NONE: Categories = ()


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    name: str
    severity: Severity  # under the default ``breaking = ["WIRE"]``
    categories: Categories
    why: str


HDI_RULES: tuple[tuple[str, str, Severity, Categories, str], ...] = (
    # ---- HDI: package and version -----------------------------------------------------------
    (
        "HDI-PKG-01",
        "VERSION_BUMP_POLICY",
        B,
        WI,
        "proxies accept any minor version of the same major, so a minor (or no) bump promises that "
        "old and new peers still exchange identical bytes",
    ),
    (
        "HDI-PKG-02",
        "VERSION_DECREASED",
        B,
        WI,
        "the new package version is lower than the old one",
    ),
    (
        "HDI-PKG-03",
        "PACKAGE_RENAMED",
        B,
        WI_SO,
        "the interface token written at the start of every request carries the package name; "
        "stubs reject a token they do not know",
    ),
    # ---- HDI: interfaces and methods --------------------------------------------------------
    (
        "HDI-IF-01",
        "INTERFACE_DELETED",
        B,
        WI_SO,
        "requests for this interface's descriptor find no stub",
    ),
    (
        "HDI-IF-02",
        "CALLBACK_ATTR_CHANGED",
        W,
        SO,
        "[callback]/[full|lite|mini] change which side implements the interface and what is generated",
    ),
    (
        "HDI-IF-03",
        "INTERFACE_RENAMED",
        B,
        WI_SO,
        "the interface token (package + interface name) changes, so stubs reject old proxies",
    ),
    (
        "HDI-IF-04",
        "INTERFACE_PARENT_CHANGED",
        B,
        WI_SO,
        "command ids are counted across `extends`, so a new parent renumbers every method",
    ),
    (
        "HDI-M-01",
        "METHOD_DELETED",
        B,
        WI_SO,
        "its command id is no longer handled: old proxies get an error reply",
    ),
    (
        "HDI-M-02",
        "METHOD_ORDINAL_SHIFT",
        B,
        WI,
        "the command id is the method's position; old proxies send the old number and reach "
        "another method, which reads their parcel with a different layout",
    ),
    (
        "HDI-M-03",
        "METHOD_APPENDED",
        I,
        NONE,
        "a new command id above all old ones; old proxies never send it",
    ),
    (
        "HDI-M-04",
        "METHOD_RENAMED",
        W,
        SO,
        "same command id and parameters, so the bytes are unchanged; generated code changes name",
    ),
    (
        "HDI-M-05",
        "PARAM_LIST_CHANGED",
        B,
        WI_SO,
        "parameters travel positionally with no tags: the peer reads the next value as the wrong "
        "parameter and every later one is shifted",
    ),
    (
        "HDI-M-06",
        "PARAM_TYPE_CHANGED",
        B,
        WI_SO,
        "the value is written with a different Parcel call or width, so the reader misparses it",
    ),
    (
        "HDI-M-07",
        "PARAM_DIRECTION_CHANGED",
        B,
        WI_SO,
        "[in] values go in the request parcel and [out] values in the reply; moving one between "
        "them shifts both",
    ),
    (
        "HDI-M-08",
        "PARAM_RENAMED",
        I,
        NONE,
        "parameter names are not on the wire (OpenHarmony allows it in a minor version)",
    ),
    (
        "HDI-M-09",
        "ONEWAY_CHANGED",
        B,
        WI,
        "[oneway] sends TF_ASYNC and no reply; the two sides disagree about whether a reply exists",
    ),
    (
        "HDI-M-10",
        "METHOD_INSERTED",
        B,
        WI,
        "it takes a command id that old peers use for another method",
    ),
    # ---- HDI: structs and unions ------------------------------------------------------------
    (
        "HDI-S-01",
        "STRUCT_DELETED",
        B,
        ALL,
        "peers that still send or expect this struct have no counterpart",
    ),
    (
        "HDI-S-02",
        "FIELD_APPENDED",
        B,
        WI,
        "members are marshalled in order with no length prefix: old readers leave the new bytes "
        "unread and every later value in the parcel is read out of step",
    ),
    (
        "HDI-S-03",
        "FIELD_INSERTED_OR_REORDERED",
        B,
        WI_SO,
        "members are positional: every member after the change is read from the wrong bytes",
    ),
    (
        "HDI-S-04",
        "FIELD_DELETED",
        B,
        ALL,
        "members are positional: readers expecting it consume the next member's bytes instead",
    ),
    (
        "HDI-S-05",
        "FIELD_TYPE_CHANGED",
        B,
        ALL,
        "the member is written with a different Parcel call or width",
    ),
    (
        "HDI-S-06",
        "FIELD_RENAMED",
        W,
        JS_SO,
        "same position and type, so the bytes are unchanged; generated code changes name",
    ),
    (
        "HDI-S-07",
        "POD_LAYOUT_CHANGED",
        B,
        WI,
        "a plain-data struct is copied as one raw sizeof(T) block: any change to its members, their "
        "order, an enum's base type, or plain<->non-plain changes the block or the whole encoding",
    ),
    (
        "HDI-S-08",
        "STRUCT_PARENT_CHANGED",
        B,
        ALL,
        "a parent's members are marshalled first, so the inherited prefix changes",
    ),
    (
        "HDI-U-01",
        "UNION_LAYOUT_CHANGED",
        B,
        WI,
        "a union is copied as one raw sizeof(U) block; member types and the block size must match",
    ),
    (
        "HDI-U-02",
        "UNION_MEMBER_ADDED",
        I,
        NONE,
        "the raw block keeps its size; old readers cannot interpret the new member",
    ),
    (
        "HDI-U-03",
        "UNION_MEMBER_RENAMED",
        W,
        JS_SO,
        "same position and type, so the bytes are unchanged; generated code changes name",
    ),
    # ---- HDI: enums -------------------------------------------------------------------------
    (
        "HDI-E-01",
        "ENUM_VALUE_RENUMBERED",
        B,
        WI,
        "enums travel as their number (uint64); the same name now means a different number",
    ),
    (
        "HDI-E-02",
        "ENUM_IMPLICIT_SHIFT",
        B,
        WI,
        "a member inserted without `=` shifts every later implicit value; old peers decode the "
        "numbers as other members",
    ),
    (
        "HDI-E-03",
        "ENUM_VALUE_DELETED",
        B,
        ALL,
        "peers still send the number; the new side has no member for it",
    ),
    (
        "HDI-E-04",
        "ENUM_VALUE_ADDED",
        I,
        NONE,
        "compatible, but old readers receive a number they have no member for",
    ),
    (
        "HDI-E-05",
        "ENUM_VALUE_RENAMED",
        W,
        JS_SO,
        "same number, so the bytes are unchanged; generated code changes name",
    ),
    (
        "HDI-E-06",
        "ENUM_BASE_CHANGED",
        W,
        NONE,
        "parameters and members send enums as uint64 either way, but raw blocks (plain structs, "
        "unions, T[] of enums) hold the enum at its base type's size",
    ),
    # ---- HDI: types and docs ----------------------------------------------------------------
    ("HDI-Y-01", "TYPE_ADDED", I, NONE, "new declarations do not affect existing messages"),
    (
        "HDI-Y-02",
        "TYPE_DELETED",
        B,
        ALL,
        "peers that still send or expect this type have no counterpart",
    ),
    (
        "HDI-Y-03",
        "TYPE_KIND_CHANGED",
        B,
        ALL,
        "enum, struct, union and interface values are marshalled in entirely different ways",
    ),
    (
        "HDI-Y-04",
        "TYPE_RENAMED",
        W,
        SO,
        "struct, union and enum names are not written to the parcel; generated code changes name",
    ),
    (
        "HDI-T-01",
        "TYPE_SPELLING_CHANGED",
        I,
        NONE,
        "`T[]` and `List<T>` are the same std::vector on the wire",
    ),
    (
        "HDI-T-02",
        "SIGNEDNESS_CHANGED",
        W,
        NONE,
        "same width, so readers get the same bits (8/16-bit values travel widened to 4 bytes and "
        "are truncated back), but values beyond the shared range change meaning "
        "(e.g. -1 becomes 4294967295)",
    ),
    ("HDI-D-02", "DOC_ONLY", I, NONE, "comments are not on the wire"),
)

FBS_RULES: tuple[tuple[str, str, Severity, Categories, str], ...] = (
    # ---- FlatBuffers: tables ----------------------------------------------------------------
    (
        "FBS-T-01",
        "FIELD_APPENDED",
        I,
        NONE,
        "a new vtable slot after all old ones: old readers never look at it, new readers see it "
        "absent in old buffers and use the default",
    ),
    (
        "FBS-T-02",
        "FIELD_SLOT_CHANGED",
        B,
        WI,
        "fields are found by vtable slot; old buffers store this field's value under another slot",
    ),
    (
        "FBS-T-03",
        "FIELD_DELETED",
        B,
        ALL,
        "the slot may be reused and old code reads it with the old type; deprecate instead",
    ),
    (
        "FBS-T-04",
        "FIELD_DEPRECATED",
        W,
        JS_SO,
        "the slot stays reserved (wire-compatible) but the accessors disappear from generated code",
    ),
    (
        "FBS-T-05",
        "FIELD_RENAMED",
        W,
        JS_SO,
        "same slot and type, so binaries are unchanged; generated code and JSON keys change",
    ),
    (
        "FBS-T-06",
        "RENAMED_TYPE_CHANGED",
        B,
        ALL,
        "the slot now holds a value of another type: old buffers are read as the new type",
    ),
    (
        "FBS-T-07",
        "FIELD_TYPE_CHANGED",
        B,
        ALL,
        "the slot's bytes are interpreted with a different type or width",
    ),
    (
        "FBS-T-08",
        "OFFSET64_CHANGED",
        B,
        WI,
        "64-bit offsets are stored with a different width and placed differently in the buffer",
    ),
    (
        "FBS-T-09",
        "DEFAULT_CHANGED",
        B,
        WI,
        "defaults are not stored: every buffer that omitted the field silently reads the new value",
    ),
    (
        "FBS-T-10",
        "REQUIRED_CHANGED",
        B,
        WI,
        "the verifier rejects buffers that lack a required field; old writers may omit it",
    ),
    (
        "FBS-T-11",
        "OPTIONAL_SCALAR_CHANGED",
        W,
        SO,
        "`= null` changes whether an absent field reads as None or as the default",
    ),
    (
        "FBS-T-12",
        "SIGNEDNESS_CHANGED",
        W,
        NONE,
        "same width, so the bytes are read the same, but values beyond the shared range change "
        "meaning (e.g. -1 becomes 4294967295)",
    ),
    (
        "FBS-T-13",
        "FIELD_UNDEPRECATED",
        I,
        NONE,
        "the reserved slot comes back with its old type; old buffers without it read the default",
    ),
    # ---- FlatBuffers: structs, kinds, types -------------------------------------------------
    (
        "FBS-S-01",
        "STRUCT_LAYOUT_CHANGED",
        B,
        WI,
        "structs are stored inline at fixed offsets with no vtable; any change to a member, its "
        "offset, the size or the alignment changes where every byte is read",
    ),
    (
        "FBS-S-02",
        "STRUCT_FIELD_RENAMED",
        W,
        JS_SO,
        "same offset and type, so binaries are unchanged; generated code and JSON keys change",
    ),
    (
        "FBS-K-01",
        "KIND_CHANGED",
        B,
        WI_SO,
        "a table is referenced by offset and read through a vtable, a struct is stored inline",
    ),
    (
        "FBS-Y-01",
        "TYPE_DELETED",
        B,
        ALL,
        "buffers that still contain this type cannot be read by the new schema's code",
    ),
    ("FBS-Y-02", "TYPE_ADDED", I, NONE, "new declarations do not affect existing buffers"),
    (
        "FBS-Y-03",
        "TYPE_RENAMED",
        W,
        SO,
        "type names are not stored in buffers; generated code and JSON schema names change",
    ),
    # ---- FlatBuffers: enums and unions ------------------------------------------------------
    (
        "FBS-E-01",
        "ENUM_VALUE_CHANGED",
        B,
        WI,
        "enums are stored as their number; the same name now means a different number",
    ),
    (
        "FBS-E-02",
        "ENUM_VALUE_DELETED",
        B,
        ALL,
        "old buffers still hold the number (there is no deprecation for enum values)",
    ),
    (
        "FBS-E-03",
        "ENUM_VALUE_ADDED",
        I,
        NONE,
        "compatible, but old code receives a number it has no member for",
    ),
    (
        "FBS-E-04",
        "ENUM_UNDERLYING_CHANGED",
        B,
        WI,
        "the stored width of every field and struct member of this enum changes",
    ),
    (
        "FBS-E-05",
        "ENUM_VALUE_RENAMED",
        W,
        JS_SO,
        "same number, so binaries are unchanged; generated code and JSON names change",
    ),
    (
        "FBS-E-06",
        "BIT_FLAGS_CHANGED",
        W,
        JS_SO,
        "`bit_flags` changes how member values are computed and what generated code exposes",
    ),
    (
        "FBS-U-01",
        "UNION_DISCRIMINANT_CHANGED",
        B,
        WI,
        "the union's type field stores this number; old buffers now select another member",
    ),
    (
        "FBS-U-02",
        "UNION_MEMBER_DELETED",
        B,
        ALL,
        "old buffers still carry its discriminant; new code cannot read the value",
    ),
    (
        "FBS-U-03",
        "UNION_MEMBER_RETYPED",
        B,
        WI_SO,
        "the same discriminant now names a different table: the value is read with the wrong layout",
    ),
    (
        "FBS-U-04",
        "UNION_UNDERLYING_CHANGED",
        B,
        WI,
        "the discriminant is stored with a different width",
    ),
    (
        "FBS-U-05",
        "UNION_MEMBER_RENAMED",
        W,
        JS_SO,
        "same discriminant and type, so binaries are unchanged; generated names change",
    ),
    (
        "FBS-U-06",
        "UNION_MEMBER_ADDED",
        I,
        NONE,
        "compatible, but old code receives a discriminant it does not know",
    ),
    # ---- FlatBuffers: files, namespaces, attributes, services -------------------------------
    (
        "FBS-F-01",
        "ROOT_TYPE_CHANGED",
        B,
        WI,
        "the root offset of existing buffers points at a table of the old root type",
    ),
    (
        "FBS-F-02",
        "FILE_IDENTIFIER_CHANGED",
        B,
        WI,
        "bytes 4-7 of every buffer hold the identifier; BufferHasIdentifier checks fail",
    ),
    (
        "FBS-F-03",
        "NAMESPACE_CHANGED",
        W,
        SO,
        "types keep their layouts (binaries are compatible) but generated code moves to another "
        "module or package",
    ),
    ("FBS-F-04", "FILE_EXTENSION_CHANGED", I, NONE, "only the suggested file name changes"),
    (
        "FBS-A-01",
        "ATTRIBUTE_CHANGED",
        W,
        SO,
        "key/nested_flatbuffer/flexbuffer/hash change lookups, verification and generated accessors",
    ),
    ("FBS-R-01", "RPC_METHOD_DELETED", B, WI_SO, "clients still call the method by name"),
    (
        "FBS-R-02",
        "RPC_METHOD_CHANGED",
        B,
        WI_SO,
        "the request or response table differs, so the peer parses the message with the wrong type",
    ),
    ("FBS-R-03", "RPC_METHOD_ADDED", I, NONE, "old clients never call it"),
    ("FBS-D-01", "DOC_ONLY", I, NONE, "comments are not in the buffer"),
)

RULES: dict[str, Rule] = {r[0]: Rule(*r) for r in HDI_RULES + FBS_RULES}


@dataclass(frozen=True, slots=True)
class LangRules:
    """The rule ids of the changes both languages have, for the routines they share.

    ``deleted``/``added``/``type_renamed`` map a declaration kind (``struct``, ``interface``,
    ...) to its rule; ``""`` is every other kind.
    """

    doc: str
    signedness: str
    kind_changed: str
    deleted: dict[str, str]
    added: dict[str, str]
    type_renamed: dict[str, str]
    namespace_moved: str
    namespace_word: str

    def for_decl(self, table: dict[str, str], kind: str) -> str:
        return table.get(kind, table[""])


LANG_RULES: dict[str, LangRules] = {
    "hdi": LangRules(
        doc="HDI-D-02",
        signedness="HDI-T-02",
        kind_changed="HDI-Y-03",
        deleted={
            "interface": "HDI-IF-01",
            "struct": "HDI-S-01",
            "union": "HDI-S-01",
            "": "HDI-Y-02",
        },
        added={"": "HDI-Y-01"},
        type_renamed={"interface": "HDI-IF-03", "": "HDI-Y-04"},
        namespace_moved="HDI-PKG-03",
        namespace_word="package",
    ),
    "fbs": LangRules(
        doc="FBS-D-01",
        signedness="FBS-T-12",
        kind_changed="FBS-K-01",
        deleted={"interface": "FBS-R-01", "": "FBS-Y-01"},
        added={"interface": "FBS-R-03", "": "FBS-Y-02"},
        type_renamed={"": "FBS-Y-03"},
        namespace_moved="FBS-F-03",
        namespace_word="namespace",
    ),
}


def rule(rule_id: str) -> Rule:
    return RULES[rule_id]
