"""The layering of ``idlgen/``, as an allow-list checked on the real import graph.

``LAYERS`` below is the one table: every module of ``idlgen/`` (and of the shipped generated
packages, ``generated/`` installed as ``idlgen.prebuilt``) belongs to exactly one layer, and a
layer lists what its modules may import: other layers, single modules, and third-party packages
(the standard library is always allowed). Some imports are allowed only *lazily*, inside a
function, so that importing the module does not load them (``onnx`` for the runtime, the
FlatBuffers JSON codec for the front end).

Every import statement counts, including those inside functions (a lazy import still runs);
only the body of ``if TYPE_CHECKING:`` is left out, since it never executes. A call of
``importlib.import_module`` or ``__import__`` with a literal module name is an import too, and
is a violation anywhere but the one registry of string imports (``idlgen.runtime.packages``);
the module names that registry declares are its imports. A call with a computed name cannot be
followed statically: the modules allowed to make one are listed in ``DYNAMIC_IMPORTS``.

The "Layers" table of ``ARCHITECTURE.md`` is generated from ``LAYERS``; a test fails when they
disagree. After editing the table, rewrite it with ``python -m tests.test_architecture``.

Adding a module: a module in a package is covered by the package's ``idlgen.pkg.*`` pattern;
a new top-level module or a module that needs other imports than its package gets its own
row (or its name added to a row's ``modules``). The most specific pattern wins: an exact name
beats a package pattern, a longer package pattern beats a shorter one.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "idlgen"
#: The committed generated packages, shipped in the wheel as ``idlgen.prebuilt`` (pyproject).
PREBUILT = REPO / "generated"
ARCHITECTURE_MD = REPO / "ARCHITECTURE.md"

#: The only module that may import a module named by a string literal.
REGISTRY = "idlgen.runtime.packages"


@dataclass(frozen=True)
class Layer:
    name: str
    #: ``idlgen.x`` is that module; ``idlgen.x.*`` is the package ``idlgen.x`` and all below it
    modules: tuple[str, ...]
    #: layer names, or single modules (``idlgen.wire.fbliterals``), importable anywhere
    may_import: tuple[str, ...]
    #: third-party top-level packages (the standard library is always allowed)
    libs: tuple[str, ...] = ()
    #: layers, modules or third-party packages that may be imported only inside functions
    lazy: tuple[str, ...] = ()
    #: one line for ARCHITECTURE.md
    what: str = ""


# Bottom-up. A module may always import modules of its own layer.
LAYERS: tuple[Layer, ...] = (
    Layer(
        "base",
        ("idlgen", "idlgen.errors"),
        (),
        what="the exception hierarchy and the version; everyone may import them",
    ),
    Layer(
        "wire",
        ("idlgen.wire.*",),
        ("base",),
        libs=("numpy", "flatbuffers"),
        what="the wire formats generated code calls (FlatBuffers, fbjson, Parcel, IPC, records)",
    ),
    Layer(
        "registry",
        (REGISTRY,),
        ("base", "prebuilt"),
        what="the one registry of modules the runtime imports by name (the shipped generated "
        "packages)",
    ),
    Layer(
        "runtime",
        ("idlgen.runtime.*",),
        ("base", "wire", "registry"),
        libs=("numpy", "flatbuffers"),
        lazy=("onnx",),
        what="NumPy kernels, bindings, execution plan, model builder and model import",
    ),
    Layer(
        "run-command",
        ("idlgen.runtime.cli_run",),
        ("base", "wire", "registry", "runtime"),
        libs=("numpy",),
        lazy=("onnx", "onnxruntime", "ai_edge_litert"),
        what="`idlgen run` (`--compare` runs onnxruntime or LiteRT)",
    ),
    Layer(
        "prebuilt",
        ("idlgen.prebuilt.*",),
        ("base", "wire", "runtime"),
        libs=("numpy",),
        what="the committed generated packages (`generated/`, shipped as `idlgen.prebuilt`); "
        "kernels modules call the runtime",
    ),
    Layer(
        "runtime-tools",
        ("idlgen.tools.*", "idlgen.runtime.conformance"),
        ("base", "wire", "registry", "runtime"),
        libs=("numpy", "onnx"),
        what="shipped developer tools on the runtime side: the ONNX conformance harness "
        "(`python -m idlgen.runtime.conformance` is its entry point, which the runtime never "
        "imports)",
    ),
    Layer(
        "support",
        ("idlgen.bounds", "idlgen.resources", "idlgen.escaping", "idlgen.safe_read"),
        ("base",),
        what="leaves the compiler shares: input limits, packaged resources, per-context escaping, "
        "reading untrusted files",
    ),
    Layer(
        "ir",
        ("idlgen.ir.*", "idlgen.diagnostics", "idlgen.sarif"),
        ("base", "support", "wire"),
        what="the frozen IR and its wire facts, diagnostics as values, their SARIF form",
    ),
    Layer(
        "frontend",
        ("idlgen.frontend.*",),
        ("base", "support", "ir", "idlgen.wire.fbliterals"),
        libs=("lark",),
        lazy=("wire",),
        what="schema text to IR plus diagnostics; flatc's number syntax from the runtime, and "
        "fbjson only to check a schema's trailing JSON document (parsing imports no numpy)",
    ),
    Layer(
        "compiler-tools",
        ("idlgen.tools.lalr_tables",),
        ("base", "support", "ir", "frontend"),
        libs=("lark",),
        what="shipped developer tools on the compiler side: refreshing the LALR tables",
    ),
    Layer(
        "backend",
        ("idlgen.backend.*",),
        ("base", "support", "ir", "wire", "idlgen.runtime.bindings"),
        libs=("jinja2", "black"),
        what="IR to Python: views, codec tables, kernel stubs, templates, black-stable text",
    ),
    Layer(
        "diff",
        ("idlgen.diff.*",),
        ("base", "support", "ir", "frontend"),
        libs=("jinja2", "markupsafe"),
        what="schema compatibility: matching, rules, policy, reports",
    ),
    Layer(
        "data",
        ("idlgen.data.*",),
        ("base", "support", "ir", "wire", "frontend", "backend"),
        what="`idlgen convert` / `idlgen annotate`: a schema compiled in memory, its bytes "
        "converted and labelled through the wire codecs",
    ),
    Layer(
        "fmt",
        ("idlgen.fmt.*",),
        ("base", "support", "ir", "frontend", "settings"),
        what="`idlgen fmt`: the canonical layout of `.idl`/`.fbs` text from its tokens and "
        "comments, checked by the front end's parsers",
    ),
    Layer(
        "lsp",
        ("idlgen.lsp.*",),
        ("base", "support", "ir", "frontend", "fmt", "settings"),
        libs=("pygls", "lsprotocol"),
        what="`idlgen lsp`: the language server (workspace of files and open buffers, cached "
        "analyses, hover with wire facts, definition, references, symbols, completion, fmt)",
    ),
    Layer(
        "lint",
        ("idlgen.lint.*",),
        ("base", "support", "ir", "frontend", "settings"),
        what="`idlgen lint`: style rules as a table over the IR, the engine applying them and "
        "the configuration, the command",
    ),
    Layer(
        "settings",
        ("idlgen.config", "idlgen.outtree", "idlgen.extras"),
        ("base", "support"),
        what="the driver's leaves: `[tool.idlgen]`, the output tree, install extras",
    ),
    Layer(
        "driver",
        ("idlgen.build", "idlgen.cli.*", "idlgen.__main__"),
        (
            "base",
            "support",
            "ir",
            "frontend",
            "backend",
            "diff",
            "data",
            "fmt",
            "lint",
            "lsp",
            "settings",
            "run-command",
        ),
        what="the command line and `build`: load, generate, write",
    ),
)

#: Modules that call ``importlib.import_module`` / ``__import__`` with a computed name, and why.
#: The test fails when another module starts doing so, or one of these stops.
DYNAMIC_IMPORTS: dict[str, str] = {
    REGISTRY: "the registry itself",
    "idlgen.runtime.nnrt": "a generated package's `kernels` module, named from the package",
    "idlgen.runtime.bindings": "the kernel function a binding names",
    "idlgen.runtime.builder": "the `kernels` module of the package a model is built against",
    "idlgen.wire.flatbuffers.descriptors": "the generated module of a descriptor's namespace",
    "idlgen.tools.onnx_conformance": "the `--package` to run and its `kernels` module",
    "idlgen.data.schema": "a module of the package it generated in memory",
}

#: Known violations, still to be fixed in the importing module (not by widening the table), as
#: ``violations()`` words them. The test keeps this list exact: a new violation fails, and so
#: does an entry whose import is gone.
TO_FIX: set[str] = set()


# --- the import graph -------------------------------------------------------------------------


def _modules() -> dict[str, Path]:
    out = {}
    for root, prefix in ((PKG, ("idlgen",)), (PREBUILT, ("idlgen", "prebuilt"))):
        for p in sorted(root.rglob("*.py")):
            parts = [*prefix, *p.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = p
    return out


MODULES = _modules()


@dataclass(frozen=True)
class Import:
    target: str  # the module named (``pkg.mod.name`` when a name is imported from ``pkg.mod``)
    lazy: bool  # inside a function
    kind: str = "statement"  # or "literal" (import_module("x")) or "registry" (a declared name)


_IMPORT_FUNCS = {"import_module", "__import__"}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _scan(name: str, path: Path, *, type_only: bool = False) -> tuple[set[Import], int]:
    """What the module imports, and how many import calls with a computed name it makes.

    With ``type_only``, imports under ``if TYPE_CHECKING:`` count too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[Import] = set()
    dynamic = 0

    def absolute(level: int, module: str | None) -> str:
        if not level:
            return module or ""
        base = package.split(".")[: len(package.split(".")) - level + 1]
        return ".".join(base + ([module] if module else []))

    def visit(node: ast.AST, lazy: bool) -> None:
        nonlocal dynamic
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_only:
            for stmt in node.orelse:  # the else branch does run
                visit(stmt, lazy)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for sub in ast.iter_child_nodes(node):  # decorators and defaults run eagerly,
                visit(sub, True)  # but they rarely import: treating all as lazy is enough
            return
        if isinstance(node, ast.Import):
            found.update(Import(a.name, lazy) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = absolute(node.level, node.module)
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES]
            targets = subs if len(subs) == len(node.names) else [mod, *subs]
            found.update(Import(t, lazy) for t in targets)
        elif isinstance(node, ast.Call):
            f = node.func
            fname = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if fname in _IMPORT_FUNCS:
                arg = node.args[0] if node.args else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    target = arg.value
                    if target.startswith("."):  # import_module(".x", package="literal")
                        pkg = next((k.value for k in node.keywords if k.arg == "package"), None)
                        if isinstance(pkg, ast.Constant) and isinstance(pkg.value, str):
                            level = len(target) - len(target.lstrip("."))
                            rest = target.lstrip(".") or None
                            parts = pkg.value.split(".")
                            target = ".".join(
                                parts[: len(parts) - level + 1] + ([rest] if rest else [])
                            )
                    found.add(Import(target, lazy, "literal"))
                else:
                    dynamic += 1
        for child in ast.iter_child_nodes(node):
            visit(child, lazy)

    visit(tree, False)
    if name == REGISTRY:  # the module names the registry declares are what it imports
        for node in tree.body:
            if (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and re.fullmatch(r"idlgen(\.\w+)+", node.value.value)
            ):
                found.add(Import(node.value.value, True, "registry"))
    return found, dynamic


_SCANS = {name: _scan(name, path) for name, path in MODULES.items()}
GRAPH: dict[str, set[Import]] = {m: s[0] for m, s in _SCANS.items()}
DYNAMIC: dict[str, int] = {m: s[1] for m, s in _SCANS.items() if s[1]}


def _internal(name: str) -> str | None:
    """The idlgen module an import names (a name imported from a module counts as the module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_idlgen(name: str) -> bool:
    return name == "idlgen" or name.startswith("idlgen.")


EDGES = {
    m: {t for i in imps if _is_idlgen(i.target) and (t := _internal(i.target)) and t != m}
    for m, imps in GRAPH.items()
}


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _match(module: str, pattern: str) -> int:
    """How specifically ``pattern`` names ``module``: 0 not at all, higher is more specific."""
    if pattern.endswith(".*"):
        base = pattern[:-2]
        return 1 + base.count(".") if _within(module, (base,)) else 0
    return 1000 if module == pattern else 0


def layer_of(module: str) -> Layer | None:
    best = max(((_match(module, p), layer) for layer in LAYERS for p in layer.modules),
               key=lambda x: x[0], default=(0, None))  # fmt: skip
    return best[1] if best[0] else None


LAYER_BY_NAME = {layer.name: layer for layer in LAYERS}
LAYER_OF = {m: layer_of(m) for m in MODULES}


def _allowed(entries: Iterable[str], target: str) -> bool:
    """Whether ``target`` (an idlgen module) is in one of the layers or modules ``entries``."""
    own = LAYER_OF[target]
    return any(
        (e in LAYER_BY_NAME and own is not None and own.name == e)
        or (e not in LAYER_BY_NAME and _within(target, (e,)))
        for e in entries
    )


def violations() -> list[str]:
    """Every import the table does not allow, as readable lines."""
    out: list[str] = []
    for m, imps in sorted(GRAPH.items()):
        layer = LAYER_OF[m]
        if layer is None:
            continue  # reported by test_every_module_has_a_layer
        for i in sorted(imps, key=lambda i: (i.target, i.lazy)):
            how = "lazily " if i.lazy else ""
            if i.kind == "literal" and m != REGISTRY:
                out.append(f"{m} imports {i.target!r} by string (only {REGISTRY} may)")
            if _is_idlgen(i.target):
                t = _internal(i.target)
                if t is None or t == m:
                    continue
                ok = LAYER_OF[t] is layer or _allowed(layer.may_import, t)
                if not ok and i.lazy:
                    ok = _allowed(layer.lazy, t)
                if not ok:
                    tl = getattr(LAYER_OF[t], "name", "?")
                    out.append(f"{m} ({layer.name}) {how}imports {t} ({tl})")
            else:
                top = i.target.split(".")[0]
                if top in sys.stdlib_module_names or top in layer.libs:
                    continue
                if i.lazy and top in layer.lazy:
                    continue
                out.append(f"{m} ({layer.name}) {how}imports third-party {top!r}")
    return list(dict.fromkeys(out))


# --- the tests --------------------------------------------------------------------------------


def test_every_module_has_a_layer() -> None:
    assert [m for m, layer in LAYER_OF.items() if layer is None] == []


def test_the_table_names_only_real_layers_and_modules() -> None:
    names = [layer.name for layer in LAYERS]
    assert len(names) == len(set(names))
    patterns = [p for layer in LAYERS for p in layer.modules]
    assert len(patterns) == len(set(patterns))
    stale = [p for p in patterns if not any(_match(m, p) for m in MODULES)]
    stale += [
        e
        for layer in LAYERS
        for e in (*layer.may_import, *layer.lazy)
        if e not in LAYER_BY_NAME and _is_idlgen(e) and not any(_within(m, (e,)) for m in MODULES)
    ]
    stale += [e for layer in LAYERS for e in layer.may_import if not _is_idlgen(e)
              and e not in LAYER_BY_NAME]  # fmt: skip
    assert stale == []


def test_every_import_is_allowed_by_the_table() -> None:
    assert [v for v in violations() if v not in TO_FIX] == []


def test_known_violations_to_fix_are_still_there() -> None:
    """Keeps ``TO_FIX`` exact: drop an entry once its import is gone."""
    assert TO_FIX - set(violations()) == set()


def test_string_imports_with_computed_names_are_the_known_ones() -> None:
    assert set(DYNAMIC) == set(DYNAMIC_IMPORTS)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for root in edges:
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
        m: {
            t
            for i in _scan(m, p, type_only=True)[0]
            if (t := _internal(i.target)) in wire and t != m
        }
        for m, p in wire.items()
    }
    assert _cycles(edges) == []


RUNTIME_PROFILE = ("base", "wire", "registry", "runtime", "run-command", "prebuilt")
COMPILER_LAYERS = ("ir", "frontend", "compiler-tools", "backend", "diff", "settings", "driver")
COMPILER_LIBS = ("lark", "jinja2", "black")


def _closure(start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for t in EDGES[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


@pytest.mark.parametrize(
    "module", [m for m, layer in LAYER_OF.items() if layer and layer.name in RUNTIME_PROFILE]
)
def test_runtime_never_reaches_the_compiler(module: str) -> None:
    """What ``pip install idlgen`` ships never loads the compiler, whatever the table says."""
    reach = _closure(module)
    assert [m for m in reach if (layer := LAYER_OF[m]) and layer.name in COMPILER_LAYERS] == []
    libs = {i.target.split(".")[0] for m in reach for i in GRAPH[m]}
    assert not libs & set(COMPILER_LIBS)


def test_front_ends_have_the_same_shape() -> None:
    for lang in ("hdi", "fbs"):
        for role in ("parser", "ast", "lower", "loader"):
            assert f"idlgen.frontend.{lang}.{role}" in MODULES


# --- ARCHITECTURE.md --------------------------------------------------------------------------

BEGIN = "<!-- layers: generated from LAYERS in tests/test_architecture.py; run `python -m tests.test_architecture` -->"
END = "<!-- end of layers -->"


def _code(items: Iterable[str]) -> str:
    return ", ".join(f"`{x}`" for x in items) or "—"


def layers_markdown() -> str:
    rows = [
        "| Layer | Modules | May import | Only inside functions | Third-party | What |",
        "|---|---|---|---|---|---|",
    ]
    for layer in LAYERS:
        lazy_libs = [x for x in layer.lazy if not _is_idlgen(x) and x not in LAYER_BY_NAME]
        lazy_ours = [x for x in layer.lazy if x not in lazy_libs]
        libs = ", ".join([*(f"`{x}`" for x in layer.libs), *(f"`{x}` (lazily)" for x in lazy_libs)])
        rows.append(
            f"| **{layer.name}** | {_code(layer.modules)} | {_code(layer.may_import)} "
            f"| {_code(lazy_ours)} | {libs or '—'} | {layer.what} |"
        )
    dyn = "\n".join(f"- `{m}`: {why}" for m, why in DYNAMIC_IMPORTS.items() if m != REGISTRY)
    fix = "\n".join(f"- {v}" for v in sorted(TO_FIX))
    text = (
        "\n".join(rows)
        + "\n\nImports with a computed module name (not followed statically):\n\n"
        + dyn
    )
    if fix:
        text += "\n\nKnown violations, still to be fixed in the importing module:\n\n" + fix
    return f"{BEGIN}\n{text}\n{END}"


_SECTION = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)


def test_architecture_md_shows_the_table() -> None:
    text = ARCHITECTURE_MD.read_text(encoding="utf-8")
    found = _SECTION.search(text)
    assert found, f"ARCHITECTURE.md lacks the generated layers section ({BEGIN})"
    assert found.group(0) == layers_markdown(), "run `python -m tests.test_architecture`"


if __name__ == "__main__":  # rewrite ARCHITECTURE.md's layer table from LAYERS
    text = ARCHITECTURE_MD.read_text(encoding="utf-8")
    new = layers_markdown()
    text = _SECTION.sub(lambda _: new, text) if _SECTION.search(text) else text + "\n" + new + "\n"
    ARCHITECTURE_MD.write_text(text, encoding="utf-8")
    print(f"{ARCHITECTURE_MD.name}: layers table written ({len(LAYERS)} layers)")
