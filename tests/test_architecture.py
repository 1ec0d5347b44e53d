"""The layering in ARCHITECTURE.md, checked on the import graph of ``idlgen/``.

Every import statement counts, including those inside functions (a lazy import still runs);
only imports under ``if TYPE_CHECKING:`` are left out, since they never execute.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "idlgen"

COMPILER = ("idlgen.frontend", "idlgen.backend", "idlgen.diff", "idlgen.cli", "idlgen.build")
COMPILER_LIBS = ("lark", "jinja2", "black")


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _imports(name: str, path: Path, *, type_only: bool = False) -> set[str]:
    """What the module imports; with ``type_only`` those under ``if TYPE_CHECKING:`` too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test) and not type_only:
            skip.update(id(m) for m in ast.walk(n))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES]
            found.update(subs if len(subs) == len(node.names) else [mod, *subs])
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _internal(name: str) -> str | None:
    """The idlgen module an import names (a name imported from a module counts as the module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


EDGES = {m: {t for i in imps if (t := _internal(i)) and t != m} for m, imps in GRAPH.items()}


def _closure(start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for t in EDGES[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for root in edges:  # iterative Tarjan
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))
    return cycles


def test_no_import_cycles() -> None:
    assert _cycles(EDGES) == []


def test_wire_has_no_type_only_cycles_either() -> None:
    """The FlatBuffers codecs are typed against protocols, not the descriptors that build on
    them: not even ``TYPE_CHECKING`` imports go round in a circle in the wire layer."""
    wire = {m: p for m, p in MODULES.items() if _within(m, ("idlgen.wire",))}
    edges = {
        m: {t for i in _imports(m, p, type_only=True) if (t := _internal(i)) in wire and t != m}
        for m, p in wire.items()
    }
    assert _cycles(edges) == []


RUNTIME = ["idlgen", "idlgen.errors"] + [
    m for m in MODULES if _within(m, ("idlgen.wire", "idlgen.runtime"))
]


@pytest.mark.parametrize("module", RUNTIME)
def test_runtime_never_reaches_the_compiler(module: str) -> None:
    reach = _closure(module)
    assert not [m for m in reach if _within(m, COMPILER + ("idlgen.ir",))]
    libs = {i.split(".")[0] for m in reach for i in GRAPH[m]}
    assert not libs & set(COMPILER_LIBS)


@pytest.mark.parametrize(
    "layer,forbidden",
    [
        ("idlgen.frontend", ("idlgen.backend", "idlgen.diff", "idlgen.cli", "idlgen.build")),
        ("idlgen.backend", ("idlgen.frontend", "idlgen.diff", "idlgen.cli", "idlgen.build")),
        ("idlgen.ir", COMPILER),
        ("idlgen.diff", ("idlgen.backend", "idlgen.cli", "idlgen.build")),
    ],
)
def test_layers_import_only_what_they_may(layer: str, forbidden: tuple[str, ...]) -> None:
    bad = {
        (m, t) for m in MODULES if _within(m, (layer,)) for t in EDGES[m] if _within(t, forbidden)
    }
    assert bad == set()


def test_front_ends_have_the_same_shape() -> None:
    for lang in ("hdi", "fbs"):
        for role in ("parser", "ast", "lower", "loader"):
            assert f"idlgen.frontend.{lang}.{role}" in MODULES
