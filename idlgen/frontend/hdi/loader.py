"""Load HDI files: read, parse, follow imports, order files, then lower them into the IR.

Package prefixes map to directories like hdi-gen's ``-r ohos.hdi:DIR``. When no root covers a
file's package, the root is inferred from the file's location (``…/nnrt/v2_1/X.idl`` with
``package ohos.hdi.nnrt.v2_1`` implies ``ohos.hdi`` → ``…``), so a single file can be checked
without flags.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..encoding import decode_schema
from ..files import Resolver, is_file, parsed, read_schema
from ...diagnostics import Diagnostics
from ..contract import LoadResult, display_path
from ..graphs import cycle_names, depth_first
from ...ir import Schema, Span
from . import ast as A
from .lower import Lowerer
from .parser import parse

__all__ = ["load", "display_path", "PACKAGE_RE"]

PACKAGE_RE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)+[Vv](\d+)_(\d+)$")
IMPORT_RE = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*\.)+[Vv]\d+_\d+)\.([A-Za-z_][A-Za-z0-9_]*)$")


@dataclass
class _Unit:
    path: Path
    display: str
    text: str
    digest: str
    raw: A.RawFile | None


class _Roots:
    def __init__(self, roots: Mapping[str, Path]) -> None:
        self.map = {k: v.resolve() for k, v in roots.items()}
        self._dirs: dict[str, Path | None] = {}  # dir_for's answers while ``map`` stays

    def dir_for(self, package: str) -> Path | None:
        """Directory of ``package`` under the longest matching root prefix."""
        if package in self._dirs:
            return self._dirs[package]
        d = self._dirs[package] = self._dir_for(package)
        return d

    def _dir_for(self, package: str) -> Path | None:
        best: tuple[int, Path] | None = None
        for prefix, root in self.map.items():
            if package == prefix or package.startswith(prefix + "."):
                rest = package[len(prefix) :].lstrip(".")
                d = root.joinpath(*rest.split(".")) if rest else root
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), d)
        return best[1] if best else None

    def infer(self, package: str, directory: Path) -> None:
        """Add a root implied by a file of ``package`` living in ``directory``."""
        if self.dir_for(package) is not None:
            return
        parts = package.split(".")
        dparts = directory.parts
        for k in range(len(parts) - 1, 0, -1):
            if len(dparts) > k and list(dparts[-k:]) == parts[-k:]:
                self.map[".".join(parts[:-k])] = Path(*dparts[:-k])
                self._dirs.clear()
                return


def _read(path: Path, diags: Diagnostics) -> _Unit | None:
    display = display_path(path)
    try:
        data = read_schema(path)
    except OSError as e:
        diags.error("HDI100", f"cannot read '{display}': {e.strerror or e}")
        return None
    digest = hashlib.sha256(data).hexdigest()
    text, bad = decode_schema(data)
    if bad is not None:
        span = Span(display, bad.line, bad.col, bad.line, bad.col + 1)
        diags.error("HDI004", bad.message, span)
        return _Unit(path, display, text, digest, None)
    raw = parsed("hdi", display, digest, lambda d: parse(display, text, d), diags)
    return _Unit(path, display, text, digest, raw)


def load(
    paths: Sequence[Path],
    *,
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
    inferred_roots: Mapping[str, Path] | None = None,
) -> LoadResult:
    """``inferred_roots`` (guessed from where files sit, e.g. by ``idlgen diff``) take
    precedence over ``roots`` for lookups but, unlike ``roots``, are not trusted places: an
    import found through one must still lie below an input's directory, ``roots`` or ``-I``."""
    diags = Diagnostics()
    roots = roots or {}
    r = _Roots({**roots, **(inferred_roots or {})})
    units: dict[Path, _Unit] = {}
    order: list[Path] = []
    inputs: list[str] = []
    edges: dict[Path, list[tuple[Path, A.Name]]] = {}
    incomplete: set[Path] = set()  # files with an import that could not be loaded
    uninferred: dict[str, Path] = {}  # packages no root covers -> a directory of theirs

    # Imports may only resolve below these (a schema must not pull in, say, ~/.ssh/x.idl
    # through '..', an absolute root inferred from a crafted package name, or a symlink).
    resolve = Resolver()
    bases = _bases(paths, roots, include_dirs, resolve)
    found: dict[tuple[str, str, int], tuple[Path | None, bool]] = {}  # -> (file, contained)
    queue = [resolve(p) for p in paths]
    for p in queue:
        if p not in units:
            u = _read(p, diags)
            if u is None:
                continue
            units[p] = u
            order.append(p)
        inputs.append(units[p].display)
    i = 0
    while i < len(order):
        u = units[order[i]]
        i += 1
        if u.raw is None:
            continue
        pkg = u.raw.package.text
        if not _valid_package(pkg):
            diags.error(
                "HDI101",
                f"invalid package name '{pkg}'",
                u.raw.package.span,
                help=["a package name ends with its version, e.g. 'ohos.hdi.foo.v1_0'"],
            )
            continue
        r.infer(pkg, u.path.parent)
        expected = r.dir_for(pkg)
        if expected is None:
            uninferred.setdefault(pkg, u.path.parent)
        if expected is not None and expected != u.path.parent:
            diags.error(
                "HDI102",
                f"package '{pkg}' does not match the file's location",
                u.raw.package.span,
                notes=[f"files of this package belong in '{display_path(expected)}'"],
            )
        seen: set[str] = set()
        edges[u.path] = []
        for imp in u.raw.imports:
            if imp.text in seen:
                diags.error("HDI103", f"multiple import of '{imp.text}'", imp.span)
                continue
            seen.add(imp.text)
            m = IMPORT_RE.match(imp.text)
            if not m:
                diags.error(
                    "HDI104",
                    f"invalid import '{imp.text}'",
                    imp.span,
                    help=[
                        "imports name a file by package and name, e.g. 'ohos.hdi.foo.v1_0.Types'"
                    ],
                )
                continue
            # one lookup per imported file and state of the roots (a root inferred later may
            # find what an earlier lookup did not)
            key = (m.group(1), m.group(2), len(r.map))
            if key in found:
                target, inside = found[key]
            else:
                target = _find_import(m.group(1), m.group(2), r, include_dirs, resolve)
                inside = target is not None and _contained(target, bases)
                found[key] = (target, inside)
            if not inside:
                incomplete.add(u.path)
            if target is not None and not inside:
                diags.error(
                    "HDI108",
                    f"import '{imp.text}' resolves outside the schema directories",
                    imp.span,
                    help=[
                        "imports resolve only below the inputs' directories, --root and -I"
                        " directories; pass --root PREFIX:DIR for the package's root"
                    ],
                )
                continue
            if target is None:
                d = r.dir_for(m.group(1))
                where = f" (looked for '{display_path(d / (m.group(2) + '.idl'))}')" if d else ""
                diags.error(
                    "HDI105",
                    f"cannot find import '{imp.text}'{where}",
                    imp.span,
                    help=_root_hint(m.group(1), m.group(2), d, u.path.parent, uninferred),
                )
                continue
            if target not in units:
                t = _read(target, diags)
                if t is None:
                    incomplete.add(u.path)
                    continue
                units[target] = t
                order.append(target)
            edges[u.path].append((target, imp))

    sorted_units = _order(order, edges, units, diags)
    lowerer = Lowerer(diags, _Siblings())
    for p in sorted_units:
        u = units[p]
        if u.raw is not None and _valid_package(u.raw.package.text):
            lowerer.add(
                u.raw,
                u.digest,
                [(units[t].raw, imp) for t, imp in edges.get(p, [])],
                incomplete=p in incomplete,
            )
    files = lowerer.lower_all()
    return LoadResult(
        Schema(tuple(files)),
        diags,
        {u.display: u.text for u in units.values()},
        tuple(dict.fromkeys(inputs)),
    )


def _root_hint(
    package: str, name: str, d: Path | None, importer_dir: Path, uninferred: Mapping[str, Path]
) -> list[str]:
    """The ``--root`` that would find an import no root covers (a flat folder of files, or
    folders not named after the package)."""
    if d is not None:
        return []
    tail = "/".join(package.split(".")[-2:])
    for where in (importer_dir, uninferred.get(package)):
        if where is not None and is_file(where / f"{name}.idl"):
            shown = display_path(where)
            return [
                f"no --root covers package '{package}' and its folder '{shown}' does not end "
                f"in '{tail}', so no root could be inferred; pass --root {package}:{shown}"
            ]
    return [f"no --root covers package '{package}'; pass --root PREFIX:DIR for its root"]


# a declaration starts its line (a `struct X` parameter type does not)
_DECL_OF = re.compile(
    r"^[ \t]*(?:\[[^\]\n]*\][ \t]*)?(?:struct|enum|union|interface|sequenceable)[ \t]+"
    r"([A-Za-z_][A-Za-z0-9_.]*)",
    re.MULTILINE,
)
_PACKAGE_OF = re.compile(r"\bpackage\s+([A-Za-z_][A-Za-z0-9_.]*)\s*;")
_COMMENTS = re.compile(r"/\*[\s\S]*?\*/|//[^\n]*")
_MAX_SIBLINGS = 256


class _Siblings:
    """Which file beside a file declares a name of its package: read (only when a type is
    unknown) from the ``.idl`` files of the same folder, a cheap scan, not a parse."""

    def __init__(self) -> None:
        self.cache: dict[Path, dict[tuple[str, str], str]] = {}

    def __call__(self, display: str, package: str, name: str) -> str | None:
        folder = Path(display).parent
        table = self.cache.get(folder)
        if table is None:
            table = self.cache[folder] = {}
            try:
                files = sorted(folder.glob("*.idl"))[:_MAX_SIBLINGS]
            except OSError:
                files = []
            for q in files:
                try:
                    text, _ = decode_schema(read_schema(q))
                except (OSError, ValueError):
                    continue
                code = _COMMENTS.sub(" ", text)
                pkg = _PACKAGE_OF.search(code)
                if pkg is None:
                    continue
                for m in _DECL_OF.finditer(code):
                    short = m.group(1).rsplit(".", 1)[-1]
                    table.setdefault((pkg.group(1), short), display_path(q))
        found = table.get((package, name))
        return None if found is None or Path(found) == Path(display) else found


def _valid_package(package: str) -> bool:
    """``package`` ends with a version whose numbers convert (int() refuses 4301+ digits)."""
    m = PACKAGE_RE.match(package)
    if m is None:
        return False
    try:
        for number in m.groups():
            int(number)
    except ValueError:
        return False
    return True


def _bases(
    paths: Sequence[Path],
    roots: Mapping[str, Path],
    include_dirs: Sequence[Path],
    resolve: Callable[[Path], Path] = Path.resolve,
) -> frozenset[Path]:
    # a set: a corpus build has one base per input directory, and every import is checked;
    # ``resolve`` (a Resolver) resolves their parent directories once
    bases = {resolve(Path(d)) for d in {os.path.dirname(os.path.abspath(p)) for p in paths}}
    bases.update(Path(d).resolve() for d in roots.values())
    bases.update(Path(d).resolve() for d in include_dirs)
    return frozenset(bases)


def _contained(target: Path, bases: frozenset[Path]) -> bool:
    """``target`` (resolved) is one of the bases' files, at any depth."""
    return not bases.isdisjoint(target.parents)


def _find_import(
    package: str,
    name: str,
    roots: _Roots,
    include_dirs: Sequence[Path],
    resolve: Callable[[Path], Path],
) -> Path | None:
    d = roots.dir_for(package)
    candidates = [d / f"{name}.idl"] if d is not None else []
    if include_dirs:
        rel = Path(*package.split(".")) / f"{name}.idl"
        candidates += [inc.resolve() / rel for inc in include_dirs]
    for c in candidates:
        if is_file(c):
            return resolve(c)
    return None


def _order(
    order: list[Path],
    edges: Mapping[Path, list[tuple[Path, A.Name]]],
    units: Mapping[Path, _Unit],
    diags: Diagnostics,
) -> list[Path]:
    """Imported files before their importers; each import cycle is reported (one per back
    edge, located at its import) and broken there."""

    def name(p: Path) -> str:
        raw = units[p].raw
        return f"{raw.package.text}.{p.stem}" if raw else units[p].display

    def report(path: Sequence[Path], i: int, imp: A.Name, _: int) -> None:
        chain = " -> ".join(cycle_names(path, i, path[i], name))
        diags.error("HDI106", f"circular import: {chain}", imp.span)

    out: list[Path] = []
    # Files without edges (unparsed, bad package) have no imports: as roots they are leaves
    # and change neither the reports nor the order of the others.
    depth_first(order, lambda p: edges.get(p, []), report, out.append)
    return out
