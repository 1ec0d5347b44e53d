"""Reports a reviewer reads in seconds: findings that follow from one root cause are listed
right after it, and every finding has a real line."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings, strategies as st

from idlgen.diff import compare
from idlgen.diff.findings import Finding
from idlgen.diff.report import Report, render_json, render_markdown, render_text
from idlgen.diff.sources import load_paths

TYPES = ["int", "string", "short", "[int]", "float", "bool", "long", "double"]


def _schema(fields: list[tuple[str, str]], ident: str = "ABCD", extra: str = "") -> str:
    body = "\n".join(f"  {n}:{t};" for n, t in fields)
    return (
        "namespace ns;\n"
        '// file_identifier "XXXX"; root_type Nope;  (a comment: not the declaration)\n'
        f"{extra}"
        f"table T {{\n{body}\n}}\n\n"
        "root_type T;\n"
        f'file_identifier "{ident}";\n'
    )


def _compare(tmp: Path, old: str, new: str) -> list[Finding]:
    (tmp / "old.fbs").write_text(old)
    (tmp / "new.fbs").write_text(new)
    lo, ln = load_paths([tmp / "old.fbs"]), load_paths([tmp / "new.fbs"])
    assert lo.ok and ln.ok, (lo.diagnostics, ln.diagnostics)
    return compare(lo.schema, ln.schema)


BASE = [
    ("a", "int"),
    ("b", "string"),
    ("c", "short"),
    ("d", "[int]"),
    ("e", "float"),
    ("f", "bool"),
]


def test_inserted_table_field_groups_its_slot_shifts(tmp_path: Path) -> None:
    new = BASE[:1] + [("new_field", "long")] + BASE[1:]
    fs = _compare(tmp_path, _schema(BASE), _schema(new))
    slot = [f for f in fs if f.rule == "FBS-T-02"]
    assert [f.path for f in slot] == ["T.new_field", "T.b", "T.c", "T.d", "T.e", "T.f"]
    root = slot[0]
    assert root.message.startswith("field added at slot 1") and root.cause == ""
    assert all(f.cause == root.fingerprint for f in slot[1:])
    # the group is contiguous in the report: root first, then its consequences by name
    k = fs.index(root)
    assert fs[k : k + 6] == slot

    r = Report("old.fbs", "new.fbs", fs)
    text = render_text(r).splitlines()
    i = next(n for n, x in enumerate(text) if "T.new_field:" in x)
    assert text[i + 1] == "  = note: root cause of the 5 findings below"
    assert "T.b: slot changed from 1 to 2" in text[i + 2]
    assert text[i + 3] == "  = note: follows from T.new_field"
    md = render_markdown(r)
    assert "(**root cause of 5 more**)" in md
    assert "| ↳ `T.b` | slot changed from 1 to 2 (follows from `T.new_field`) |" in md
    data = json.loads(render_json(r))
    by_path = {x["path"]: x for x in data["findings"] if x["rule"] == "FBS-T-02"}
    assert by_path["T.new_field"]["cause"] is None
    assert by_path["T.c"]["cause"] == by_path["T.new_field"]["fingerprint"]


def test_file_level_declarations_have_real_lines(tmp_path: Path) -> None:
    fs = _compare(
        tmp_path,
        _schema(BASE, "ABCD"),
        _schema(BASE, "ABCE", extra="table R { r:int; }\n").replace("root_type T;", "root_type R;"),
    )
    by = {f.rule: f for f in fs}
    ident, root = by["FBS-F-02"], by["FBS-F-01"]
    old_lines = _schema(BASE, "ABCD").splitlines()
    new_lines = (tmp_path / "new.fbs").read_text().splitlines()
    assert ident.old is not None and ident.new is not None
    assert old_lines[ident.old.line - 1] == 'file_identifier "ABCD";'
    assert new_lines[ident.new.line - 1] == 'file_identifier "ABCE";'
    assert (ident.new.col, ident.new.end_col) == (1, len('file_identifier "ABCE";') + 1)
    assert root.old is not None and root.new is not None
    assert old_lines[root.old.line - 1] == "root_type T;"
    assert new_lines[root.new.line - 1] == "root_type R;"


def test_no_finding_is_placed_on_line_one_by_default(tmp_path: Path) -> None:
    """Removed file-level declarations are annotated on a real declaration of the new file."""
    old = _schema(BASE).replace("namespace ns;\n", 'namespace ns;\nfile_extension "car";\n')
    new = _schema(BASE).replace('file_identifier "ABCD";\n', "")
    for f in _compare(tmp_path, old, new):
        for span in (f.old, f.new, f.location):
            assert span is None or span.line > 1, f


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 7),
    data=st.data(),
    delete=st.booleans(),
)
def test_one_insertion_or_deletion_is_one_group(n, data, delete, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("g")
    fields = [(f"f{k}", data.draw(st.sampled_from(TYPES))) for k in range(n)]
    at = data.draw(st.integers(0, n - 1))
    if delete:
        old, new = fields, fields[:at] + fields[at + 1 :]
        root_path, root_rule = f"T.f{at}", "FBS-T-03"
    else:
        old, new = fields, fields[:at] + [("inserted", "long")] + fields[at:]
        root_path, root_rule = "T.inserted", "FBS-T-02"
    fs = _compare(tmp, _schema(old), _schema(new))
    root = next(f for f in fs if f.path == root_path and f.rule == root_rule)
    shifted = [f for f in fs if f.rule == "FBS-T-02" and "slot changed" in f.message]
    later = [f"T.f{k}" for k in range(at + 1 if delete else at, n)]
    assert sorted(f.path for f in shifted) == later
    assert all(f.cause == root.fingerprint for f in shifted)
    k = fs.index(root)
    assert fs[k + 1 : k + 1 + len(shifted)] == sorted(shifted, key=lambda f: f.path)


def test_renumbering_of_its_own_is_not_grouped(tmp_path: Path) -> None:
    """Explicit ids edited while a field is appended: the slot changes are not its doing."""
    old = _schema([("a", "int"), ("b", "int"), ("c", "int")])
    new = "\n".join(
        [
            "namespace ns;",
            "table T {",
            "  a:int (id: 0);",
            "  c:int (id: 1);",
            "  b:int (id: 2);",
            "  z:int (id: 3);",
            "}",
            "root_type T;",
            'file_identifier "ABCD";',
            "",
        ]
    )
    fs = _compare(tmp_path, old, new)
    assert {f.path for f in fs if f.rule == "FBS-T-02"} == {"T.b", "T.c"}
    assert all(f.cause == "" for f in fs)
