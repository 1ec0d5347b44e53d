"""Hostile schema names and docs: a build either fails with a located diagnostic, or the
package imports, round-trips values, and runs nothing the schema wrote."""

from __future__ import annotations

import builtins
import importlib
import itertools
import keyword
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.backend import GenerateOptions, generate
from idlgen.backend.naming import comment_text, docstring, identifier, string_literal
from idlgen.diagnostics import Diagnostics, render_all
from idlgen.frontend import load
from idlgen.wire.records import FlatRecord, ParcelRecord

# Names generated code binds or Python treats specially.
HOSTILE = [
    *(k for k in keyword.kwlist if k.isidentifier()),
    "global_",
    "class_",
    "self",
    "field",
    "dataclass",
    "annotations",
    "enum",
    "Any",
    "Sequence",
    "ClassVar",
    "Protocol",
    "TYPE_CHECKING",
    "ScalarVector",
    "list",
    "dict",
    "str",
    "bytes",
    "object",
    "type",
    "_parcel",
    "_fb",
    "_rec",
    "_fbjson",
    "_FB_REG",
    "_FB_DESC",
    "_m_x",
    "_plan_",
    "to_dict",
    "from_dict",
    "to_json",
    "from_flatbuffer",
    "lookup_by_key",
    "_lookup_by_key",
    "name",
    "value",
    "mro",
    "_value_",
    "_missing_",
    "_name_",
    "__init__",
    "__class__",
    "__dict__",
    "__x",
    "x__",
    "_x_",
    "a",
    "b",
]
PAYLOAD = "import builtins; builtins.IDLGEN_PWNED = 1"
DOCS = [
    "",
    f'"""; {PAYLOAD} #',
    f"'''\n{PAYLOAD}\n'''",
    "trailing backslash \\",
    "\\N{BULLET} \\x00 \\u2028 \r carriage",
    f"\n{PAYLOAD}\n",
]

_counter = itertools.count()


def _idents(n: int) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=n)


def _doc(text: str) -> str:
    return "".join(f"/// {line}\n" for line in text.splitlines() or [""]) if text else ""


@st.composite
def schemas(draw: st.DrawFn) -> tuple[str, list[str], list[str], str]:
    fields = draw(_idents(4))
    members = list(dict.fromkeys(draw(_idents(3))))
    table = draw(st.sampled_from(HOSTILE))
    enum = draw(st.sampled_from(HOSTILE))
    doc = draw(st.sampled_from(DOCS))
    lines = [_doc(doc) + f"enum {enum} : byte {{ {', '.join(members)} }}"]
    body = "".join(f"  {_doc(doc)}  {f}:int;\n" for f in fields)
    body += f"  tagged:{enum};\n"
    lines.append(_doc(doc) + f"table {table} {{\n{body}}}")
    lines.append(f"root_type {table};")
    return "\n".join(lines) + "\n", fields, members, table


def _build(text: str, tmp: Path) -> tuple[Diagnostics, dict[str, Any] | None, Any]:
    tag = f"_esc{next(_counter)}"
    src = tmp / tag / "hostile.fbs"
    src.parent.mkdir(parents=True)
    src.write_text(text, encoding="utf-8")
    res = load([src])
    diags = Diagnostics()
    diags.extend(res.diagnostics)
    if diags.has_errors:
        return diags, None, res
    tree = generate(res.schema, list(res.schema.files), diags, GenerateOptions(format=False))
    if diags.has_errors:
        return diags, None, res
    # a fresh top-level package per build; it stays imported (the runtime resolves enums and
    # annotations through sys.modules on first use)
    out = tmp / tag / tag
    for rel, code in tree.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(code, encoding="utf-8")
    sys.path.insert(0, str(tmp / tag))
    importlib.invalidate_caches()
    mod = importlib.import_module(f"{tag}.hostile")
    return diags, dict(vars(mod)), res


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas())
def test_hostile_names_and_docs(tmp_path_factory: pytest.TempPathFactory, case: Any) -> None:
    text, fields, members, table = case
    diags, ns, res = _build(text, tmp_path_factory.mktemp("esc"))
    assert not hasattr(builtins, "IDLGEN_PWNED")
    if ns is None:
        errors = [d for d in diags if d.severity.name == "ERROR"]
        assert errors
        rendered = render_all(diags, res.sources)
        for d in errors:  # located: file:line:col and a caret line
            assert d.span is not None and d.span.line >= 1, d
        assert re.search(r"hostile\.fbs:\d+:\d+", rendered) and "^" in rendered, rendered
        return
    (cls,) = [v for v in ns.values() if isinstance(v, type) and issubclass(v, FlatRecord)]
    schema_fields = list(dict.fromkeys(fields))
    obj = cls.from_dict({f: i + 1 for i, f in enumerate(schema_fields)})
    d = obj.to_dict()
    assert [k for k in d if k != "tagged"] == schema_fields
    assert [d[f] for f in schema_fields] == list(range(1, len(schema_fields) + 1))
    assert cls.from_flatbuffer(obj.to_flatbuffer()) == obj
    assert cls.from_json(obj.to_json()) == obj
    assert cls.from_dict(d) == obj
    # every enum member keeps its schema name in JSON
    for i, m in enumerate(members):
        tagged = cls.from_dict({"tagged": m})
        assert int(tagged.tagged) == i
        assert f'"tagged": "{m}"' in tagged.to_json() or i == 0


def test_colliding_escapes_are_a_located_error(tmp_path: Path) -> None:
    diags, ns, res = _build("table T { global:int; global_:int; }\nroot_type T;\n", tmp_path)
    assert ns is None
    (err,) = [d for d in diags if d.code == "GEN001"]
    assert "'global' and 'global_'" in err.message
    assert err.span is not None and (err.span.line, err.span.col) == (1, 23)
    assert "hostile.fbs:1:23" in render_all(diags, res.sources)


@pytest.mark.parametrize(
    "name,taken,expected",
    [
        ("global", frozenset(), "global_"),
        ("field", frozenset({"field"}), "field_"),
        ("__x", frozenset(), "x__"),
        ("__init__", frozenset(), "init____"),
        ("_value_", frozenset(), "_value__"),
        ("_parcel", frozenset(), "_parcel__"),
        ("_m_mod", frozenset(), "m_mod_"),
        ("plain", frozenset({"other"}), "plain"),
    ],
)
def test_identifier(name: str, taken: frozenset[str], expected: str) -> None:
    out = identifier(name, taken)
    assert out == expected and out.isidentifier() and not keyword.iskeyword(out)


@given(st.text())
def test_text_contexts_round_trip(text: str) -> None:
    assert eval(string_literal(text)) == text  # noqa: S307 - our own literal
    assert "\n" not in string_literal(text)
    line = comment_text(text)
    assert "\n" not in line and "\r" not in line and "\x0c" not in line
    value = eval(docstring(text))  # noqa: S307 - our own literal
    assert value == text.strip() or not text.isprintable()


@st.composite
def hdi_schemas(draw: st.DrawFn) -> tuple[str, list[str], str]:
    fields = list(dict.fromkeys(draw(_idents(4))))
    members = list(dict.fromkeys(draw(_idents(3))))
    struct, enum = draw(st.sampled_from(HOSTILE)), draw(st.sampled_from(HOSTILE))
    doc = draw(st.sampled_from(DOCS)).replace("*/", "* /")
    body = "".join(f"    /** {doc} */\n    int {f};\n" for f in fields)
    text = (
        "package ohos.hdi.t.v1_0;\n\n"
        f"/** {doc} */\nenum {enum} {{ {', '.join(members)} }};\n\n"
        f"/** {doc} */\nstruct {struct} {{\n{body}    enum {enum} tagged;\n}};\n"
    )
    return text, fields, struct


def _build_hdi(text: str, tmp: Path) -> tuple[Diagnostics, dict[str, Any] | None, Any]:
    tag = f"_esc{next(_counter)}"
    src = tmp / tag / "t" / "v1_0" / "Hostile.idl"
    src.parent.mkdir(parents=True)
    src.write_text(text, encoding="utf-8")
    res = load([src], roots={"ohos.hdi": tmp / tag})
    diags = Diagnostics()
    diags.extend(res.diagnostics)
    if diags.has_errors:
        return diags, None, res
    tree = generate(res.schema, list(res.schema.files), diags, GenerateOptions(format=False))
    if diags.has_errors:
        return diags, None, res
    out = tmp / tag / tag
    for rel, code in tree.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(code, encoding="utf-8")
    sys.path.insert(0, str(tmp / tag))
    importlib.invalidate_caches()
    mod = importlib.import_module(f"{tag}.ohos.hdi.t.v1_0.hostile")
    return diags, dict(vars(mod)), res


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(hdi_schemas())
def test_hostile_hdi_names_and_docs(tmp_path_factory: pytest.TempPathFactory, case: Any) -> None:
    text, fields, _ = case
    diags, ns, res = _build_hdi(text, tmp_path_factory.mktemp("esc"))
    assert not hasattr(builtins, "IDLGEN_PWNED")
    if ns is None:
        errors = [d for d in diags if d.severity.name == "ERROR"]
        assert errors and all(d.span is not None and d.span.line >= 1 for d in errors), errors
        assert re.search(r"Hostile\.idl:\d+:\d+", render_all(diags, res.sources))
        return
    (cls,) = [v for v in ns.values() if isinstance(v, type) and issubclass(v, ParcelRecord)]
    obj = cls.from_dict({f: -(i + 1) for i, f in enumerate(fields)})
    d = obj.to_dict()
    assert [k for k in d if k != "tagged"] == fields
    assert [d[f] for f in fields] == [-(i + 1) for i in range(len(fields))]
    assert cls.from_parcel(obj.to_parcel()) == obj and cls.from_dict(d) == obj


@pytest.mark.parametrize(
    "text",
    ['a """', 'a ""', 'a "', 'a \\"', 'a \\\\"', '"""', "x\u2028y\x85z\u202e", "end \\"],
)
def test_docstring_ends(text: str) -> None:
    lit = docstring(text)
    assert eval(lit) == text.strip()  # noqa: S307 - our own literal
    assert "\u2028" not in lit and "\x85" not in lit and "\u202e" not in lit


def _files(tmp: Path, files: dict[str, str]) -> tuple[Diagnostics, Any]:
    """Load and generate ``files`` (name → text) from one directory; no import."""
    tag = f"_lay{next(_counter)}"
    paths = []
    for name, text in files.items():
        p = tmp / tag / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    res = load(sorted(paths))
    diags = Diagnostics()
    diags.extend(res.diagnostics)
    if not diags.has_errors:
        generate(res.schema, list(res.schema.files), diags, GenerateOptions(format=False))
    return diags, res


@pytest.mark.parametrize(
    "files,message",
    [
        (
            {
                "aB.fbs": "namespace t;\ntable A { x:int; }\n",
                "a_b.fbs": "namespace t;\ntable B { x:int; }\n",
            },
            "module 'a_b' (from aB.fbs) and module 'a_b' (from a_b.fbs)",
        ),
        (
            {
                "a.fbs": "namespace t.x;\ntable A { x:int; }\n",
                "x.fbs": "namespace t;\ntable B { x:int; }\n",
            },
            "namespace 't.x' and module 'x' (from x.fbs)",
        ),
        ({"x.fbs": "namespace t;\ntable x { y:int; }\n"}, "module 'x' (from x.fbs) and class 'x'"),
        (
            {"x.fbs": "namespace class.y;\ntable A { y:int; }\n"},
            "segment 'class' is a Python keyword",
        ),
        (
            {
                "a.fbs": "namespace T.q;\ntable A { x:int; }\n",
                "b.fbs": "namespace t.r;\ntable B { x:int; }\n",
            },
            "namespace 'T' and namespace 't' differ only in case",
        ),
    ],
)
def test_layout_collisions_are_located_errors(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    diags, res = _files(tmp_path, files)
    errors = [d for d in diags if d.code == "GEN002"]
    assert any(message in d.message for d in errors), [d.message for d in diags]
    assert all(d.span is not None and d.span.line >= 1 for d in errors)
    assert re.search(r"\.fbs:\d+:\d+", render_all(diags, res.sources))


def test_hdi_keyword_package_segment(tmp_path: Path) -> None:
    src = tmp_path / "import" / "v1_0" / "Types.idl"
    src.parent.mkdir(parents=True)
    src.write_text("package ohos.hdi.import.v1_0;\nstruct S { int x; };\n", encoding="utf-8")
    res = load([src], roots={"ohos.hdi": tmp_path})
    diags = Diagnostics()
    diags.extend(res.diagnostics)
    generate(res.schema, list(res.schema.files), diags, GenerateOptions(format=False))
    (err,) = [d for d in diags if d.code == "GEN002"]
    assert "segment 'import' is a Python keyword" in err.message
    assert re.search(r"Types\.idl:1:\d+", render_all(diags, res.sources))  # the package line


_HDI_TYPES = """package ohos.hdi.t.v1_0;
/** ends in quotes "\"" */
struct self { int field; int DESCRIPTOR; };
union raw { int self; float _raw; int from_parcel; };
"""
_HDI_IFACE = """package ohos.hdi.t.v1_0;
import ohos.hdi.t.v1_0.Types;
/** iface doc \"\"\" */
interface ITypes {
    global([in] int self, [in] struct self field, [out] int Protocol);
    self([in] int ClassVar, [in] union raw raw);
    to_dict([in] int _parcel, [out] int int);
}
"""


def test_hostile_hdi_interface_and_union(tmp_path: Path) -> None:
    """Methods, parameters and union members named like what the generated code binds: the
    Protocol and the union escape them, dicts keep schema names, and IPC dispatches to the
    escaped method names."""
    from idlgen.wire import ipc

    tag = f"_esc{next(_counter)}"
    d = tmp_path / tag / "t" / "v1_0"
    d.mkdir(parents=True)
    (d / "Types.idl").write_text(_HDI_TYPES, encoding="utf-8")
    (d / "ITypes.idl").write_text(_HDI_IFACE, encoding="utf-8")
    res = load(sorted(d.iterdir()), roots={"ohos.hdi": tmp_path / tag})
    diags = Diagnostics()
    diags.extend(res.diagnostics)
    tree = generate(res.schema, list(res.schema.files), diags, GenerateOptions())
    assert not diags.has_errors, render_all(diags, res.sources)
    for rel, code in tree.items():
        p = tmp_path / tag / tag / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(code, encoding="utf-8")
    sys.path.insert(0, str(tmp_path / tag))
    importlib.invalidate_caches()
    types = importlib.import_module(f"{tag}.ohos.hdi.t.v1_0.types")
    iface = importlib.import_module(f"{tag}.ohos.hdi.t.v1_0.i_types").ITypes
    assert not hasattr(builtins, "IDLGEN_PWNED")

    u = types.raw(self_=7)
    assert u.to_dict() == {"self": 7} and types.raw.from_dict({"self": 7}) == u
    assert types.raw.from_parcel(u.to_parcel()) == u
    s = vars(types)["self"].from_dict({"field": 1, "DESCRIPTOR": 2})
    assert s.to_dict() == {"field": 1, "DESCRIPTOR": 2}

    assert {"global_", "self_", "to_dict"} <= set(vars(iface))
    codec = ipc.interface_codec(iface.DESCRIPTOR)
    assert codec is not None and {"global_", "self_", "to_dict"} <= set(codec.by_name)

    class Impl:
        def global_(self, self_: int, field: Any) -> int:
            return self_ + field.field_

        def self_(self, ClassVar: int, raw: Any) -> None:
            return None

        def to_dict(self, _parcel__: int) -> int:
            return -_parcel__

    proxy = ipc.loopback(codec, Impl())
    assert proxy.global_(40, s) == 41
    assert proxy.to_dict(5) == -5


def test_enum_from_takes_python_and_schema_names_of_a_zero_member() -> None:
    """A member renamed in Python (``None`` -> ``None_``) whose value is 0 (falsy) is found
    by either name."""
    import enum

    from idlgen.wire.records import enum_from, set_schema_names

    class E(enum.IntEnum):
        None_ = 0
        One = 1

    set_schema_names(E, {"None_": "None"})
    assert enum_from(E, "None_") is E.None_
    assert enum_from(E, "None") is E.None_
    assert enum_from(E, "One") is E.One


def test_quoted_source_lines_carry_no_control_or_bidi_characters() -> None:
    """The source line under a diagnostic is schema text: terminal escapes and bidi overrides
    become one visible '?' each, so the caret still lines up."""
    from idlgen.diagnostics import Diagnostics, render
    from idlgen.ir import Span

    text = "struct S { x\x1b[2J\u202eevil y; };\n"
    diags = Diagnostics()
    diags.error("HDI202", "unknown type", Span("a.idl", 1, 12, 1, 13))
    (d,) = diags
    out = render(d, {"a.idl": text})
    assert "\x1b" not in out and "\u202e" not in out
    src_line, caret_line = out.splitlines()[1:3]
    assert src_line.endswith("struct S { x?[2J?evil y; };")
    assert caret_line.index("^") == src_line.index("x")
