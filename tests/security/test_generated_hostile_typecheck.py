"""Generated code for schemas named after what generated code binds is still black-stable and
``mypy --strict`` clean (a method named like a class its annotations use, a field named like
its own class, members named like the runtime's attributes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FBS = '''namespace t;
/// doc """ \\
enum int : byte { name, value, mro, _value_, None }
struct self { x:int; field:int; }
table global { self:int; to_dict:int; global:int (key); str:string; }
table B { q:int; Sequence:int; }
union U { global, B }
table Root { u:U; s:self; e:int; list:[global]; }
rpc_service Svc { global(global):B; B(B):Root; }
root_type Root;
'''
TYPES = """package ohos.hdi.t.v1_0;
/** ends in quotes "\\"" */
enum Protocol { DESCRIPTOR, self, int };
struct self { int field; int DESCRIPTOR; enum Protocol ClassVar; };
union raw { int self; float _raw; int from_parcel; };
struct W { union raw raw; struct self self; };
"""
IFACE = """package ohos.hdi.t.v1_0;
import ohos.hdi.t.v1_0.Types;
/** iface doc \\"\\"\\" */
interface ITypes {
    global([in] int self, [in] struct self field, [out] int Protocol);
    self([in] int ClassVar, [in] union raw raw, [out] enum Protocol int);
    Protocol([in] enum Protocol x, [out] struct W w);
    to_dict([in] int _parcel);
}
"""


def test_hostile_names_typecheck(tmp_path: Path) -> None:
    (tmp_path / "fbs").mkdir()
    (tmp_path / "fbs" / "a.fbs").write_text(FBS, encoding="utf-8")
    hdi = tmp_path / "hdi" / "t" / "v1_0"
    hdi.mkdir(parents=True)
    (hdi / "Types.idl").write_text(TYPES, encoding="utf-8")
    (hdi / "ITypes.idl").write_text(IFACE, encoding="utf-8")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    for args in (
        [str(tmp_path / "fbs"), "--out", str(tmp_path / "out" / "gfbs")],
        [
            str(hdi),
            "--root",
            f"ohos.hdi:{tmp_path / 'hdi'}",
            "--out",
            str(tmp_path / "out" / "ghdi"),
        ],
    ):
        build = subprocess.run(
            [sys.executable, "-m", "idlgen", "build", *args, "-q"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert build.returncode == 0, build.stderr
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "gfbs", "ghdi"],
        capture_output=True,
        text=True,
        cwd=tmp_path / "out",
        env=env,
        timeout=600,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
