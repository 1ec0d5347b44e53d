"""Every construct of the HDI language, lowered into the IR."""

from __future__ import annotations

from pathlib import Path

from idlgen import ir
from idlgen.frontend.hdi.loader import load


def _load(tmp_path: Path, files: dict[str, str]) -> object:
    paths = []
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        paths.append(p)
    return load(paths, roots={"ohos.hdi": tmp_path})


TYPES = """/* license block: not a doc comment */
package ohos.hdi.lang.v1_0;

sequenceable ohos.hdi.lang.v1_0.Blob;

[mini, lite] enum Small : unsigned char { A = 0b101, B = 017, C = 0x1F, };
enum Mid : Small { D = C + 1 };
struct S {
    List<List<int>> nested;
    Map<String, unsigned int[]> table;
    SharedMemQueue<unsigned short> queue;
    int[][] grid;
    Ashmem mem;
    NativeBuffer buf;
    FileDescriptor fd;
    sequenceable Blob blob;
    enum Mid mid;
    unsigned long big
};
union U { int i; struct P p; };
struct P { double x; };
"""

IFACE = """package ohos.hdi.lang.v1_0;
import ohos.hdi.lang.v1_0.Types;
import ohos.hdi.lang.v1_0.ICb;
[oneway] interface ILang {
    /** Documented. */
    Fire([in] struct S s, [in] ICb cb);
    [full] Go([in] List<String> names);
}
"""

CB = """package ohos.hdi.lang.v1_0;
[callback] interface ICb {
}
"""


def test_every_construct(tmp_path: Path) -> None:
    r = _load(
        tmp_path,
        {"lang/v1_0/Types.idl": TYPES, "lang/v1_0/ILang.idl": IFACE, "lang/v1_0/ICb.idl": CB},
    )
    assert list(r.diagnostics) == []  # type: ignore[attr-defined]
    d = r.schema.decls()  # type: ignore[attr-defined]
    small, mid = d["ohos.hdi.lang.v1_0.Small"], d["ohos.hdi.lang.v1_0.Mid"]
    assert small.base is ir.ScalarKind.U8 and [m.value for m in small.members] == [5, 15, 31]
    assert mid.parent == small.qualname and [m.value for m in mid.members] == [5, 15, 31, 32]
    assert mid.members[0].inherited_from == small.qualname
    s = {f.name: f.type for f in d["ohos.hdi.lang.v1_0.S"].fields}
    i32 = ir.Scalar(ir.ScalarKind.I32)
    assert s["nested"] == ir.Vector(ir.Vector(i32, "list"), "list")
    assert s["table"] == ir.Map(ir.String(), ir.Vector(ir.Scalar(ir.ScalarKind.U32)))
    assert s["queue"] == ir.SharedMemQueue(ir.Scalar(ir.ScalarKind.U16))
    assert s["grid"] == ir.Vector(ir.Vector(i32))
    assert s["mem"] == ir.Handle(ir.HandleKind.ASHMEM)
    assert s["blob"] == ir.Ref("ohos.hdi.lang.v1_0.Blob", ir.RefKind.SEQUENCEABLE)
    assert s["big"] == ir.Scalar(ir.ScalarKind.U64)
    u = d["ohos.hdi.lang.v1_0.U"]
    assert [m.name for m in u.members] == ["i", "p"]
    lang = d["ohos.hdi.lang.v1_0.ILang"]
    assert [(m.name, m.cmd_id, m.oneway) for m in lang.methods] == [
        ("GetVersion", 0, False),
        ("Fire", 1, True),
        ("Go", 2, True),
    ]
    assert lang.methods[1].doc == "Documented."
    assert d["ohos.hdi.lang.v1_0.ICb"].callback


def test_ir_equality_ignores_positions(tmp_path: Path) -> None:
    a = _load(tmp_path / "a", {"lang/v1_0/Types.idl": TYPES})
    spaced = TYPES.replace("struct P { double x; };", "\n\n\nstruct   P {\n  double x;\n};")
    b = _load(tmp_path / "b", {"lang/v1_0/Types.idl": spaced})
    da, db = a.schema.decls(), b.schema.decls()  # type: ignore[attr-defined]
    assert da == db
    assert da["ohos.hdi.lang.v1_0.P"].span != db["ohos.hdi.lang.v1_0.P"].span
    assert hash(da["ohos.hdi.lang.v1_0.P"]) == hash(db["ohos.hdi.lang.v1_0.P"])
