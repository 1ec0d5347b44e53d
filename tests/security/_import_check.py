"""Run in a fresh interpreter: import a generated package under an audit hook and round-trip
one value of every record; print a JSON report on stdout.

Usage: python _import_check.py OUT_PARENT PACKAGE MARKER

The hook records what generated code must never do: start processes, open the marker path,
or call exec/eval/compile itself. The import system and dataclasses compile and exec code on
the package's behalf; those events are told apart by the Python frame that raised them (a
frame in a generated file means the generated code asked for it).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import os
import pkgutil
import sys
from typing import Any

OUT_PARENT, PACKAGE, MARKER = sys.argv[1], sys.argv[2], sys.argv[3]
GEN_DIR = os.path.realpath(os.path.join(OUT_PARENT, PACKAGE)) + os.sep
_PROCESS = ("os.system", "subprocess.Popen", "os.exec", "os.spawn", "os.posix_spawn", "os.fork")
_PROCESS += ("os.startfile", "pty.spawn")
violations: list[str] = []


def _generated(filename: str) -> bool:
    return os.path.realpath(filename).startswith(GEN_DIR)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith(_PROCESS):
        violations.append(f"{event} {args!r:.200}")
    elif event == "open" and args and isinstance(args[0], (str, bytes)):
        path = os.fsdecode(args[0])
        if os.path.basename(MARKER) in path:
            violations.append(f"open {path!r}")
    elif event in ("exec", "compile"):
        caller = sys._getframe(1)  # the Python frame that called exec/eval/compile
        if _generated(caller.f_code.co_filename):
            violations.append(f"{event} from {caller.f_code.co_filename}:{caller.f_lineno}")


def _sample(cls: Any) -> Any:
    """A value of record ``cls`` with its scalar and string fields set off their defaults."""
    from idlgen.wire.parcel import UnionRecord

    if issubclass(cls, UnionRecord):
        return cls()
    values: dict[str, Any] = {}
    for i, f in enumerate(dataclasses.fields(cls)):
        key = f.metadata.get("schema_name", f.name)
        ann = str(f.type).removesuffix(" | None")  # the builtins, not a class named ``str_``
        if ann == "int":
            values[key] = i + 1
        elif ann == "bool":
            values[key] = True
        elif ann == "str":
            values[key] = 'q"\\\n\u2028'
    return cls.from_dict(values)


def main() -> None:
    from idlgen.wire import ipc
    from idlgen.wire.parcel import UnionRecord
    from idlgen.wire.records import FlatRecord, ParcelRecord

    sys.path.insert(0, OUT_PARENT)
    sys.addaudithook(_hook)
    pkg = importlib.import_module(PACKAGE)
    modules = [pkg] + [
        importlib.import_module(m.name) for m in pkgutil.walk_packages(pkg.__path__, PACKAGE + ".")
    ]
    counts = {"modules": len(modules), "records": 0, "enums": 0, "interfaces": 0}
    for mod in modules:
        for obj in list(vars(mod).values()):
            if not isinstance(obj, type) or obj.__module__ != mod.__name__:
                continue
            if issubclass(obj, (FlatRecord, ParcelRecord, UnionRecord)):
                v = _sample(obj)
                assert obj.from_dict(v.to_dict()) == v, (obj, v)
                if issubclass(obj, FlatRecord):
                    assert obj.from_flatbuffer(v.to_flatbuffer()) == v, (obj, v)
                    assert obj.from_json(v.to_json()) == v, (obj, v)
                else:
                    assert obj.from_parcel(v.to_parcel()) == v, (obj, v)
                counts["records"] += 1
            elif issubclass(obj, enum.Enum):
                for m in obj:
                    assert obj(m.value) is m or obj(m.value) == m
                counts["enums"] += 1
            elif isinstance(getattr(obj, "DESCRIPTOR", None), str):
                codec = ipc.interface_codec(obj.DESCRIPTOR)
                if codec is not None:  # HDI: every dispatched name is a Protocol method
                    for py_name in codec.by_name:
                        assert callable(getattr(obj, py_name, None)), (obj, py_name)
                counts["interfaces"] += 1
    import builtins

    if hasattr(builtins, "IDLGEN_PWNED"):
        violations.append("builtins.IDLGEN_PWNED was set")
    print(json.dumps({"violations": violations, **counts}))


if __name__ == "__main__":
    main()
