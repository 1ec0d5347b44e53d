"""Encodings like flatc: a UTF-8 BOM is skipped; invalid UTF-8 is a located error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from idlgen.frontend.encoding import decode_schema
from idlgen.frontend import load

from ._support import run


def _load(path: Path, data: bytes) -> list[tuple[str, str, int, int]]:
    path.write_bytes(data)
    r = load([path])
    return [
        (d.code, d.message, d.span.line if d.span else 0, d.span.col if d.span else 0)
        for d in r.diagnostics
    ]


def test_fbs_bom_is_accepted(tmp_path: Path) -> None:
    assert _load(tmp_path / "b.fbs", b"\xef\xbb\xbftable T { a:int; }\nroot_type T;\n") == []


def test_idl_bom_is_accepted(tmp_path: Path) -> None:
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    assert _load(d / "B.idl", b"\xef\xbb\xbfpackage a.v1_0;\nstruct S { int a; };\n") == []


def test_fbs_invalid_utf8_in_string_literal(tmp_path: Path) -> None:
    got = _load(tmp_path / "s.fbs", b'table T { a:string; }\nattribute "\xc3\x28";\n')
    assert got == [("FBS004", "illegal UTF-8 sequence", 2, 12)]


@pytest.mark.parametrize(
    "data,line,col",
    [
        (b"\xff\xfetable T { a:int; }\n", 1, 1),
        (b"table T {\n  a:int; \x80 }\n", 2, 10),
        (b"table \xc3\xa9T { a:int; }\n\xed\xa0\x80", 2, 1),  # a UTF-16 surrogate
        (b"// caf\xc3\xa9 \xe9\ntable T { a:int; }\n", 1, 9),
    ],
)
def test_fbs_not_utf8_is_located(tmp_path: Path, data: bytes, line: int, col: int) -> None:
    got = _load(tmp_path / "x.fbs", data)
    assert len(got) == 1 and got[0][0] == "FBS004" and got[0][2:] == (line, col), got


def test_idl_not_utf8_is_located(tmp_path: Path) -> None:
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    got = _load(d / "X.idl", b"package a.v1_0;\nstruct S { int \xfe; };\n")
    assert got == [("HDI004", "invalid UTF-8 byte 0xfe", 2, 16)]


def test_idl_not_utf8_column_counts_code_points(tmp_path: Path) -> None:
    """Columns are code points everywhere (SARIF says so): 'é' and '€' before the bad byte
    count one each, not two and three."""
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    data = "package a.v1_0;\n// é€ ".encode() + b"\xfe\nstruct S { int a; };\n"
    got = _load(d / "X.idl", data)
    assert got == [("HDI004", "invalid UTF-8 byte 0xfe", 2, 7)]
    # after a BOM, line 1 counts from the first character after it, as the parser does
    got = _load(d / "Y.idl", b"\xef\xbb\xbfpackage a.v1_0; \xc3\xa9\xff\n")
    assert got == [("HDI004", "invalid UTF-8 byte 0xff", 1, 18)]


@given(
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
    st.sampled_from([b"\x80", b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xe2\x82"]),
    st.binary(max_size=10),
    st.booleans(),
)
def test_decode_schema_locates_the_first_bad_byte(
    before: str, bad: bytes, after: bytes, literals: bool
) -> None:
    """Differential: the location from the bytes equals the one counted on the valid prefix
    as text; the replacement text keeps every line, so the caret line can be shown."""
    before = before.removeprefix("\ufeff")
    # `after` starts with ';', so it cannot complete a truncated sequence
    data = before.encode() + bad + b";" + after
    text, where = decode_schema(data, string_literals=literals)
    assert where is not None
    line_start = before.rfind("\n") + 1
    assert (where.line, where.col) == (before.count("\n") + 1, len(before) - line_start + 1)
    assert text.startswith(before) and text.count("\n") >= before.count("\n")
    in_string = before[line_start:].replace("\\\\", "").replace('\\"', "").count('"') % 2
    if literals and in_string:
        assert where.message == "illegal UTF-8 sequence"
    else:
        assert where.message == f"invalid UTF-8 byte 0x{bad[0]:02x}"


@pytest.mark.parametrize("fmt", ["text", "github", "json"])
def test_cli_prints_invalid_utf8_diagnostics(tmp_path: Path, fmt: str) -> None:
    f = tmp_path / "x.fbs"
    f.write_bytes(b'table T { a:string = "\xff"; }\n')
    rc, out, err = run("parse", str(f), "--format", fmt)
    assert rc == 1 and "illegal UTF-8 sequence" in out + err


@pytest.mark.parametrize("name", ["\n.idl", "a\rb.fbs", "x\x1b[2J.idl", "t\x85.fbs"])
def test_control_characters_in_file_names_are_refused(tmp_path: Path, name: str) -> None:
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    f = d / name
    f.write_text("package a.v1_0;\nstruct S { int a; };\n" if name.endswith(".idl") else "")
    rc, _, err = run("build", str(f), "--out", str(tmp_path / "gen"))
    assert rc == 1 and "control character" in err and "Traceback" not in err


def test_file_names_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    for raw in (b"\xff.idl", b"T\xfe.fbs"):
        with open(os.path.join(os.fsencode(d), raw), "w") as f:
            f.write("package a.v1_0;\nstruct S { int a; };\n" if raw.endswith(b".idl") else "")
    for fmt in ("text", "github", "json"):
        rc, _, err = run("build", str(tmp_path), "--out", str(tmp_path / "gen"), "--format", fmt)
        assert rc == 1 and "Traceback" not in err
    rc, _, err = run("build", str(tmp_path), "--out", str(tmp_path / "gen"))
    assert err.count("is not valid UTF-8") == 2


def test_include_and_import_names_the_os_rejects(tmp_path: Path) -> None:
    f = tmp_path / "x.fbs"
    f.write_text('include "' + "n" * 5000 + '.fbs";\ninclude "a\\u0000b";\ntable T { a:int; }\n')
    rc, _, err = run("parse", str(f))
    assert rc == 1 and "FBS010" in err and "Traceback" not in err
    d = tmp_path / "a" / "v1_0"
    d.mkdir(parents=True)
    g = d / "I.idl"
    g.write_text("package a.v1_0;\nimport a.v1_0." + "X" * 5000 + ";\nstruct S { int a; };\n")
    rc, _, err = run("parse", str(g))
    assert rc == 1 and "HDI105" in err and "Traceback" not in err
