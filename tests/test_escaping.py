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
