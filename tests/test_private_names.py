"""Private names (``_x``) stay inside their module, in all of ``idlgen/`` (issue 23.5).

A use crosses a module boundary when one idlgen module takes another's private name:
``from idlgen.m import _x`` or ``m._x`` with ``m`` an imported idlgen module (a private module,
``from . import _m``, counts too). What modules share is a small public internal API instead
(``wire.flatbuffers``' handlers and scalar tables, ``wire.parcel.stream``'s structs, ``nnrt``'s
tensor facts for ``plan``...). ``ALLOWED`` names each remaining exception with its reason, at
most ``MAX_ALLOWED`` of them. ``python -m tests.test_private_names [-v]`` prints the counts.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVERYWHERE = ("idlgen/",)
CORE = ("idlgen/backend/", "idlgen/frontend/", "idlgen/ir/", "idlgen/bounds")

#: (using module, module.private_name) → why it may cross. Empty since 23.5: every crossing
#: became a public internal name (or an import alias of one).
ALLOWED: dict[tuple[str, str], str] = {}
MAX_ALLOWED = 25


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str, root: Path) -> bool:
    p = root / name.replace(".", "/")
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def crossings(prefixes: tuple[str, ...] = CORE, root: Path = ROOT) -> list[tuple[str, str, int]]:
    """(using module, ``module.name``, line) for every private name taken from another module."""
    out: list[tuple[str, str, int]] = []
    for path in sorted((root / "idlgen").rglob("*.py")):
        if not path.relative_to(root).as_posix().startswith(prefixes):
            continue
        here = _module(path, root)
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: dict[str, str] = {}  # local name → the idlgen module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "idlgen":
                        modules[a.asname or a.name] = a.name
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0:
                    source = node.module or ""
                else:
                    parts = package.split(".")
                    source = ".".join(parts[: len(parts) - node.level + 1])
                    source += f".{node.module}" if node.module else ""
                if source.split(".")[0] != "idlgen":
                    continue
                for a in node.names:
                    if _private(a.name):
                        out.append((here, f"{source}.{a.name}", node.lineno))
                    elif _is_module(f"{source}.{a.name}", root):
                        modules[a.asname or a.name] = f"{source}.{a.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                out.append((here, f"{modules[node.value.id]}.{node.attr}", node.lineno))
    return sorted(out)


def test_private_names_stay_in_their_module() -> None:
    found = {(m, name) for m, name, _ in crossings(EVERYWHERE)}
    assert sorted(found - set(ALLOWED)) == []
    assert sorted(set(ALLOWED) - found) == []  # no stale exceptions


def test_the_core_keeps_its_private_names() -> None:
    assert [(m, n) for m, n, _ in crossings()] == []  # no exceptions at all in the compiler core


def test_every_exception_has_a_reason_and_there_are_few() -> None:
    assert len(ALLOWED) <= MAX_ALLOWED
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_counter_finds_both_forms(tmp_path: Path) -> None:
    pkg = tmp_path / "idlgen" / "backend"
    pkg.mkdir(parents=True)
    for init in (tmp_path / "idlgen", pkg):
        (init / "__init__.py").write_text("")
    (pkg / "a.py").write_text("_x = 1\n_y = 2\n")
    (pkg / "b.py").write_text(
        "from . import a\nfrom .a import _x\nfrom .. import backend\n"
        "print(a._y, _x, a.__name__, backend.a)\n"
    )
    (pkg / "c.py").write_text("import idlgen.backend.a as m\n\ndef f() -> int:\n    return m._y\n")
    assert crossings(root=tmp_path) == [
        ("idlgen.backend.b", "idlgen.backend.a._x", 2),
        ("idlgen.backend.b", "idlgen.backend.a._y", 4),
        ("idlgen.backend.c", "idlgen.backend.a._y", 4),
    ]


if __name__ == "__main__":
    rows = crossings(EVERYWHERE)
    if "-v" in sys.argv:
        for m, name, line in rows:
            print(f"{m}:{line}: {name}")
    pairs = {(m, name) for m, name, _ in rows}
    core = crossings()
    print(
        f"idlgen: {len(rows)} uses, {len(pairs)} (module, private name) pairs, "
        f"{len(pairs & set(ALLOWED))} allowed (at most {MAX_ALLOWED}); core: {len(core)}"
    )
