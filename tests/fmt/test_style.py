"""The canonical layouts, rule by rule (README "Formatting schemas")."""

from __future__ import annotations

import textwrap

import pytest

from idlgen.fmt import format_text
from idlgen.fmt.printer import LINE_LIMIT


def fmt(text: str, name: str) -> str:
    r = format_text(textwrap.dedent(text).lstrip("\n"), name)
    assert r.ok, list(r.diagnostics)
    assert format_text(r.text, name).text == r.text  # stable
    return r.text


def d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


HDI_IN = """
/*
 * Copyright (c) 2026 Example.
 *   indented line
 */
package  ohos.hdi.demo.v1_0 ;
import ohos.hdi.demo.v1_0.Types;



/**
 * @brief The demo interface.
 */
[callback]interface IDemo{

    /** Opens. */
    Open([in] String name,[out] int fd);   // trailing comment
  [oneway]   Close ( [in] int fd ) ;
    Many([in] unsigned int firstArgument, [in] List<Map<int,String>> secondArgument, [in] int[ ] third, [out] int result);
    Empty();

};
enum Mode:unsigned int{MODE_A=1<<0,MODE_B = ~(MODE_A|2), /**< member doc */
  MODE_C=-1,};
struct Info{int a; /**< a */
    String b;   /* block */ int[] c
};
union U { int a; float b; };
"""

HDI_OUT = """
/*
 * Copyright (c) 2026 Example.
 *   indented line
 */
package ohos.hdi.demo.v1_0;
import ohos.hdi.demo.v1_0.Types;

/**
 * @brief The demo interface.
 */
[callback] interface IDemo {
    /** Opens. */
    Open([in] String name, [out] int fd); // trailing comment
    [oneway] Close([in] int fd);
    Many([in] unsigned int firstArgument, [in] List<Map<int, String>> secondArgument,
        [in] int[] third, [out] int result);
    Empty();
}

enum Mode : unsigned int {
    MODE_A = 1 << 0,
    MODE_B = ~(MODE_A | 2), /**< member doc */
    MODE_C = -1,
};

struct Info {
    int a; /**< a */
    String b; /* block */
    int[] c
};

union U {
    int a;
    float b;
};
"""


def test_hdi_style() -> None:
    assert fmt(HDI_IN, "IDemo.idl") == d(HDI_OUT)


FBS_IN = """
// header comment
include "other.fbs";
namespace  My.Game ;
attribute "priority";

/// A colour.
enum Color:ubyte (bit_flags) { Red = 0, // red
  Green, Blue = 3 }
union Any { Monster, W: Weapon }
struct Vec3 { x:float; y : float; z:float(deprecated); }

table Monster (priority: 1) {
  pos:Vec3 (id:0);
  name:string(required, key);
  hp:short=100;
  inventory:[ubyte] (id: 2, nested_flatbuffer: "Monster", flexbuffer, deprecated, some_other_attribute: "xyz");
  angle:float = deg(30);
  arr:[int:4];
  friends:[Monster]=[];
  /* a block
     comment */
  color:Color=Blue;
}
table Empty {}
rpc_service Game { Store(Monster):Monster (streaming: "none"); }
root_type Monster;
file_identifier "MONS";
"""

FBS_OUT = """
// header comment
include "other.fbs";
namespace My.Game;
attribute "priority";

/// A colour.
enum Color : ubyte (bit_flags) {
  Red = 0, // red
  Green,
  Blue = 3
}

union Any {
  Monster,
  W:Weapon
}

struct Vec3 {
  x:float;
  y:float;
  z:float (deprecated);
}

table Monster (priority: 1) {
  pos:Vec3 (id: 0);
  name:string (required, key);
  hp:short = 100;
  inventory:[ubyte] (id: 2, nested_flatbuffer: "Monster", flexbuffer, deprecated,
      some_other_attribute: "xyz");
  angle:float = deg(30);
  arr:[int:4];
  friends:[Monster] = [];
  /* a block
     comment */
  color:Color = Blue;
}

table Empty {}

rpc_service Game {
  Store(Monster):Monster (streaming: "none");
}

root_type Monster;
file_identifier "MONS";
"""


def test_fbs_style() -> None:
    assert fmt(FBS_IN, "monster.fbs") == d(FBS_OUT)


@pytest.mark.parametrize(
    "src, out",
    [
        # runs of blank lines become one; none after '{' or before '}'
        ("package a.b.v1_0;\n\n\n\nstruct S {\n\n  int a;\n\n\n  int b;\n\n};", None),
        # a comment on its own line stays on its own line, re-indented
        ("package a.b.v1_0;\nstruct S {\n        // own line\nint a; };", None),
    ],
)
def test_hdi_blank_lines_and_comments(src: str, out: str | None) -> None:
    got = fmt(src, "Types.idl")
    assert "\n\n\n" not in got and "{\n\n" not in got and "\n\n}" not in got
    assert got.endswith(";\n") or got.endswith("}\n")


def test_hdi_comment_positions() -> None:
    src = d("""
        package a.b.v1_0;
        struct S {
                // own line
        int a; // after a
            /* before b
               second line */
          int b;
        };
        """)
    assert fmt(src, "Types.idl") == d("""
        package a.b.v1_0;
        struct S {
            // own line
            int a; // after a
            /* before b
               second line */
            int b;
        };
        """)


def test_comments_inside_a_statement_stay_there() -> None:
    src = d("""
        package a.b.v1_0;
        interface IFoo {
            Call([in] int a, // first
                 /* own line */
                 [in] int b /* inline */, [out] int c);
        }
        """)
    assert fmt(src, "IFoo.idl") == d("""
        package a.b.v1_0;
        interface IFoo {
            Call([in] int a, // first
                /* own line */
                [in] int b /* inline */, [out] int c);
        }
        """)


def test_long_enum_members_are_one_per_line_and_long_lists_wrap_at_the_limit() -> None:
    params = ", ".join(f"[in] int parameterNumber{i}" for i in range(12))
    out = fmt(f"package a.b.v1_0;\ninterface IFoo {{\n    Call({params});\n}}\n", "IFoo.idl")
    lines = out.splitlines()
    assert all(len(ln) <= LINE_LIMIT for ln in lines)
    call = [ln for ln in lines if "parameterNumber" in ln]
    assert call[0].startswith("    Call(") and all(ln.startswith(" " * 8) for ln in call[1:])


def test_interface_semicolon_dropped_and_struct_semicolon_kept() -> None:
    out = fmt("package a.b.v1_0;\ninterface IFoo { F(); };\n", "IFoo.idl")
    assert out == "package a.b.v1_0;\ninterface IFoo {\n    F();\n}\n"


def test_final_newline_and_trailing_blanks() -> None:
    out = fmt("package a.b.v1_0;   \nstruct S { int a; };   ", "Types.idl")
    assert out == "package a.b.v1_0;\nstruct S {\n    int a;\n};\n"


def test_fbs_json_document_is_kept_as_written() -> None:
    src = 'table T { a:int; }\nroot_type T;\n{ a: 1,\n    "b": [1, 2] }\n'
    assert (
        fmt(src, "t.fbs") == 'table T {\n  a:int;\n}\n\nroot_type T;\n{ a: 1,\n    "b": [1, 2] }\n'
    )


def test_fbs_doc_comment_text_is_kept_byte_for_byte() -> None:
    src = "/// doc with trailing blanks   \ntable T { a:int; }\n"
    assert fmt(src, "t.fbs").startswith("/// doc with trailing blanks   \n")


def test_hdi_member_docs_stay_attached_or_detached() -> None:
    """A '/**<' documents the member before it only when it follows on the same line, after at
    most one ',' or ';': the layout must neither attach nor detach one (found by hypothesis)."""
    src = d("""
        package a.b.v1_0;
        enum E { A = 1
        , /**< not A's: the ',' began a line */ B, /**< B's */ };
        struct S { int a
        ; /**< not a's */ int b; /**< b's */ }
        ; /**< the struct's own (after its ';') */
        interface IFoo { F(); } /**< not the interface's */ ;
        """)
    out = fmt(src, "Types.idl")
    assert _docs(out) == _docs(src)
    assert out == d("""
        package a.b.v1_0;
        enum E {
            A = 1,
            /**< not A's: the ',' began a line */
            B, /**< B's */
        };

        struct S {
            int a;
            /**< not a's */
            int b; /**< b's */
        }; /**< the struct's own (after its ';') */

        interface IFoo {
            F();
        } /**< not the interface's */;
        """)


def _docs(text: str) -> list[object]:
    from idlgen.diagnostics import Diagnostics
    from idlgen.frontend.hdi.parser import parse

    raw = parse("Types.idl", text, Diagnostics())
    assert raw is not None
    out: list[object] = []
    for decl in raw.decls:
        items = getattr(decl, "members", None) or getattr(decl, "methods", [])
        out.append((decl.name.text, decl.doc, [m.doc for m in items]))
    return out


def test_crlf_becomes_lf() -> None:
    src = "package a.b.v1_0;\r\n/* x\r\n * y\r\n */\r\nstruct S { // c\r\n  int a; /**< d */\r\n};\r\n"
    out = fmt(src, "Types.idl")
    assert "\r" not in out and _docs(out) == _docs(src)
    assert (
        fmt("/// doc  \r\ntable T { a:int; }\r\n", "t.fbs") == "/// doc  \ntable T {\n  a:int;\n}\n"
    )
