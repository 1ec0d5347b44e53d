"""Recovery and hints (issue 21): a missing ';' or '}' is reported once, right after the token
it should follow, and repaired, so files that import the broken one see its declarations; an
unknown type another file of the package declares suggests the import; an import no root
covers suggests the --root that finds it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from idlgen.diagnostics import render_all
from idlgen.frontend.loader import load

PKG = "ohos.hdi.foo.v1_0"


def write(root: Path, files: dict[str, str]) -> list[Path]:
    out = []
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))
        out.append(p)
    return out


def errors(paths: list[Path], **kw: object) -> list[tuple[str, int, int, str]]:
    r = load(paths, **kw)  # type: ignore[arg-type]
    return [
        (Path(d.span.file).name if d.span else "", *(d.span[1:3] if d.span else (0, 0)), d.message)
        for d in r.diagnostics
        if d.is_error
    ]


@pytest.fixture()
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


TYPES_MISSING_SEMI = f"""
    package {PKG};

    struct Point {{
        int x
        int y;
    }};
    """
IFOO = f"""
    package {PKG};

    import {PKG}.Types;

    interface IFoo {{
        Move([in] struct Point p);
    }}
    """


def test_hdi_missing_semicolon_once_at_the_line_and_no_follow_on_errors(cwd: Path) -> None:
    paths = write(cwd / "foo/v1_0", {"Types.idl": TYPES_MISSING_SEMI, "IFoo.idl": IFOO})
    assert errors(paths) == [("Types.idl", 4, 10, "expected ';' before 'int'")]
    r = load(paths)
    text = render_all(r.diagnostics, r.sources)
    # the caret stands where the ';' is missing, after 'int x'
    assert " 4 |     int x\n   |          ^" in text


def test_hdi_missing_semicolon_after_package_points_at_the_package_line(cwd: Path) -> None:
    cases = [
        ("/**\n * Doc.\n */\nstruct S { int a; };", "struct"),
        (f"import {PKG}.Other;", "import"),
    ]
    for after, word in cases:
        paths = write(cwd / "foo/v1_0", {"Types.idl": f"package {PKG}\n\n{after}\n"})
        write(cwd / "foo/v1_0", {"Other.idl": f"package {PKG};\nstruct O {{ int a; }};\n"})
        errs = errors(paths)
        assert errs[0] == ("Types.idl", 1, 26, f"expected ';' before '{word}'")
        assert len(errs) == 1, errs


def test_hdi_missing_semicolon_after_a_method(cwd: Path) -> None:
    src = f"package {PKG};\ninterface IFoo {{\n    A([in] int a)\n    B();\n}}\n"
    paths = write(cwd / "foo/v1_0", {"IFoo.idl": src})
    assert errors(paths) == [("IFoo.idl", 3, 18, "expected ';' before 'B'")]


def test_hdi_missing_brace_before_the_next_declaration(cwd: Path) -> None:
    types = f"""
        package {PKG};

        struct Point {{
            int x;
            int y;

        /** Another. */
        struct Other {{
            int z;
        }};
        """
    ifoo = IFOO.replace("struct Point p", "struct Point p, [in] struct Other o")
    paths = write(cwd / "foo/v1_0", {"Types.idl": types, "IFoo.idl": ifoo})
    assert errors(paths) == [("Types.idl", 5, 11, "expected '}' before 'struct'")]


@pytest.mark.parametrize(
    "src, line, col",
    [
        (f"package {PKG};\ninterface IFoo {{\n    A();\n", 3, 9),
        (f"package {PKG};\nenum E {{\n    A,\n    B\n", 4, 6),
        (f"package {PKG};\nstruct S {{\n    int a;\n", 3, 11),
    ],
)
def test_hdi_missing_brace_at_the_end_of_the_file(cwd: Path, src: str, line: int, col: int) -> None:
    name = "IFoo.idl" if "interface" in src else "Types.idl"
    paths = write(cwd / "foo/v1_0", {name: src})
    assert errors(paths) == [(name, line, col, "expected '}' at end of file")]


def test_hdi_unknown_type_declared_by_a_sibling_suggests_the_import(cwd: Path) -> None:
    ibar = f"package {PKG};\ninterface IBar {{\n    Move([in] struct Point p);\n}}\n"
    types = f"package {PKG};\nstruct Point {{ int x; }};\n"
    [bar, _] = write(cwd / "foo/v1_0", {"IBar.idl": ibar, "Types.idl": types})
    for given in ([bar], [bar, cwd / "foo/v1_0/Types.idl"]):  # on disk only, or loaded
        r = load(given)
        [d] = [d for d in r.diagnostics if d.is_error]
        assert d.code == "HDI202" and d.message == "unknown type 'Point'"
        assert list(d.help) == [
            f"'Point' is declared in 'foo/v1_0/Types.idl': add 'import {PKG}.Types;'"
        ]


def test_hdi_flat_folder_suggests_the_root_that_works(cwd: Path) -> None:
    types = f"package {PKG};\nstruct Point {{ int x; }};\n"
    paths = write(cwd / "flat", {"Types.idl": types, "IFoo.idl": IFOO})
    r = load(paths)
    [d] = [d for d in r.diagnostics if d.is_error]  # and no unknown 'Point' after it
    assert d.code == "HDI105"
    assert d.help[-1].endswith(f"pass --root {PKG}:flat")
    assert load(paths, roots={PKG: cwd / "flat"}).ok  # the suggested root works


FBS_BROKEN = """
    namespace Game

    /// A point.
    struct Vec3 {
      x:float;
      y:float
      z:float;

    table Monster {
      pos:Vec3;
      hp:short = 100
    }

    table Weapon {
      name:string;
    """


def test_fbs_missing_semicolons_and_braces_once_each_and_includers_clean(cwd: Path) -> None:
    [a, b] = write(
        cwd,
        {
            "a.fbs": FBS_BROKEN,
            "b.fbs": 'include "a.fbs";\nnamespace Game;\n'
            "table User { m:Monster; w:Weapon; v:Vec3; }\nroot_type User;\n",
        },
    )
    assert errors([b]) == [
        ("a.fbs", 1, 15, "syntax error: expected ';' before 'struct'"),
        ("a.fbs", 6, 10, "syntax error: expected ';' before 'z'"),
        ("a.fbs", 7, 11, "syntax error: expected '}' before 'table'"),
        ("a.fbs", 11, 17, "syntax error: expected ';' before '}'"),
        ("a.fbs", 15, 15, "syntax error: expected '}' before end of file"),
    ]


def test_hdi_a_method_at_column_one_is_not_a_missing_brace(cwd: Path) -> None:
    src = f"package {PKG};\ninterface IFoo {{\n[oneway] A();\n    B(int x);\n}}\n"
    paths = write(cwd / "foo/v1_0", {"IFoo.idl": src})
    [d] = [d for d in load(paths).diagnostics if d.is_error]
    assert (d.span.line, d.message) == (4, "unexpected 'int'")  # type: ignore[union-attr]
    assert "direction" in d.help[0]


@pytest.mark.parametrize(
    "body,col,before",
    [
        ("    int x int y;", 10, "int"),  # two members on one line
        ("    int x Point2 y;", 10, "Point2"),  # the second member's type is a name
        ("    int x List<int> y;", 10, "List"),
    ],
)
def test_a_semicolon_missing_mid_line_is_repaired(
    cwd: Path, body: str, col: int, before: str
) -> None:
    text = f"package {PKG};\n\nstruct Point2 {{\n    int z;\n}};\n\nstruct Point {{\n{body}\n}};\n"
    files = write(cwd, {"foo/v1_0/Types.idl": "", "foo/v1_0/IFoo.idl": IFOO})
    files[0].write_text(text)
    got = errors(files, roots={"ohos.hdi": cwd})
    # reported once, at the end of the token it should follow; the file and its importer
    # are otherwise clean (the repair keeps both members)
    assert got == [("Types.idl", 8, col, f"expected ';' before '{before}'")], got


def test_a_semicolon_missing_between_methods_on_one_line_is_repaired(cwd: Path) -> None:
    files = write(cwd, {"foo/v1_0/IFoo.idl": f"package {PKG};\n\ninterface IFoo {{\n"
                        "    Ping([in] int a) Pong();\n}\n"})  # fmt: skip
    assert errors(files, roots={"ohos.hdi": cwd}) == [
        ("IFoo.idl", 4, 21, "expected ';' before 'Pong'")
    ]


def test_two_names_without_a_type_are_not_guessed(cwd: Path) -> None:
    """``int a b;`` is no missing ';' (b is no member): a plain syntax error, as before."""
    files = write(
        cwd, {"foo/v1_0/Types.idl": f"package {PKG};\n\nstruct T {{\n    int a b;\n}};\n"}
    )
    (got,) = errors(files, roots={"ohos.hdi": cwd})
    assert got[:3] == ("Types.idl", 4, 11) and "unexpected 'b'" in got[3]


def test_a_fbs_semicolon_missing_between_fields_on_one_line_is_repaired(cwd: Path) -> None:
    files = write(cwd, {"s.fbs": "namespace N;\ntable T { a:int b:int; }\ntable U { c:T; }\n"})
    got = errors(files)
    assert len(got) == 1 and got[0][:3] == ("s.fbs", 2, 16), got
    assert "expected ';' before 'b'" in got[0][3]


def test_a_brace_missing_before_an_indented_declaration_is_repaired(cwd: Path) -> None:
    """The declaration after the unclosed struct is indented; an indented 'struct B m;' member
    of a later struct is still a member, not taken for a declaration."""
    text = (
        f"package {PKG};\n\nstruct A {{\n    int a;\n\n    struct B {{\n        int b;\n    }};\n\n"
        "struct C {\n    struct B m;\n};\n"
    )
    files = write(cwd, {"foo/v1_0/Types.idl": ""})
    files[0].write_text(text)
    assert errors(files, roots={"ohos.hdi": cwd}) == [
        ("Types.idl", 4, 11, "expected '}' before 'struct'")
    ]


def test_a_fbs_brace_missing_before_an_indented_declaration_is_repaired(cwd: Path) -> None:
    files = write(cwd, {"s.fbs": "namespace N;\ntable T {\n  a:int;\n  table U {\n    b:int;\n  }\n"
                        "table V { u:U; t:T; }\n"})  # fmt: skip
    got = errors(files)
    assert len(got) == 1 and got[0][:3] == ("s.fbs", 3, 9), got
    assert "expected '}' before 'table'" in got[0][3]
