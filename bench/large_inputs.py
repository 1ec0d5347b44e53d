"""Valid schemas of about 1 MB, one per shape that stresses a different part of idlgen.

``write_all(DIR)`` writes ``DIR/<shape>/a/v1_0/<File>.{idl,fbs}`` and returns the paths
(``size``: another size than 1 MB, for the two sides of a diff, say). The
shapes: many small declarations, one huge declaration, long enum expressions, a huge
interface, many doc comments, tiny tokens, and a trailing JSON document (FlatBuffers).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

SIZE = 1 << 20


def _fill(make: Callable[[int], str], head: str, tail: str) -> Callable[[int], str]:
    """``head`` + ``make(0)`` + ``make(1)`` + … + ``tail``, just under ``limit`` characters."""
    return lambda limit: _filled(make, head, tail, limit)


def _filled(make: Callable[[int], str], head: str, tail: str, limit: int) -> str:
    parts, size, i = [head], len(head) + len(tail), 0
    while True:
        s = make(i)
        if size + len(s) > limit - 64:
            break
        parts.append(s)
        size += len(s)
        i += 1
    parts.append(tail)
    return "".join(parts)


PKG = "package a.v1_0;\n"
SHAPES: dict[str, tuple[str, Callable[[int], str]]] = {
    # name: (file name, text of a given size)
    "hdi_structs": (
        "Types.idl",
        _fill(lambda i: f"struct S{i} {{ int a; String b; List<int> c; }};\n", PKG, ""),
    ),
    "hdi_members": (
        "Types.idl",
        _fill(lambda i: f"    unsigned int m{i};\n", PKG + "struct S {\n", "};\n"),
    ),
    "hdi_enum": (
        "Types.idl",
        _fill(lambda i: f"    E{i} = ({i} << 1) | 1,\n", PKG + "enum E {\n", "};\n"),
    ),
    "hdi_iface": (
        "IFoo.idl",
        _fill(
            lambda i: f"    M{i}([in] int a, [in] List<String> b, [out] int c);\n",
            PKG + "interface IFoo {\n",
            "}\n",
        ),
    ),
    "hdi_docs": (
        "Types.idl",
        _fill(
            lambda i: f"/** doc {i} */\nstruct S{i} {{\n    /** m */\n    int a;\n}};\n", PKG, ""
        ),
    ),
    "hdi_tiny": ("Types.idl", _fill(lambda i: f"A{i},", PKG + "enum E {\n", "};\n")),
    "fbs_tables": (
        "Types.fbs",
        _fill(lambda i: f"table T{i} {{ a:int; b:string; c:[ubyte]; }}\n", "namespace a;\n", ""),
    ),
    "fbs_fields": (
        "Types.fbs",
        _fill(
            lambda i: f"  f{i}:int = {i} (id: {i});\n",
            "namespace a;\ntable T {\n",
            "}\nroot_type T;\n",
        ),
    ),
    "fbs_tiny": ("Types.fbs", _fill(lambda i: f"A{i},", "namespace a;\nenum E:int {\n", "}\n")),
    "fbs_json": (
        "Types.fbs",
        _fill(
            lambda i: f"{i},",
            "namespace a;\ntable T { v:[int]; }\nroot_type T;\n{ v: [",
            "] }\n",
        ),
    ),
}


def write_all(root: Path, size: int = SIZE) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, (file, text) in SHAPES.items():
        d = root / name / "a" / "v1_0"
        d.mkdir(parents=True, exist_ok=True)
        (d / file).write_text(text(size), encoding="utf-8")
        out[name] = d / file
    return out
