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
from ..files import Resolver, is_file, read_schema
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

    def dir_for(self, package: str) -> Path | None:
        """Directory of ``package`` under the longest matching root prefix."""
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
    return _Unit(path, display, text, digest, parse(display, text, diags))


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

    # Imports may only resolve below these (a schema must not pull in, say, ~/.ssh/x.idl
    # through '..', an absolute root inferred from a crafted package name, or a symlink).
    resolve = Resolver()
    bases = _bases(paths, roots, include_dirs)
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
            target = _find_import(m.group(1), m.group(2), r, include_dirs, resolve)
            if target is not None and not _contained(target, bases):
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
                diags.error("HDI105", f"cannot find import '{imp.text}'{where}", imp.span)
                continue
            if target not in units:
                t = _read(target, diags)
                if t is None:
                    continue
                units[target] = t
                order.append(target)
            edges[u.path].append((target, imp))

    sorted_units = _order(order, edges, units, diags)
    lowerer = Lowerer(diags)
    for p in sorted_units:
        u = units[p]
        if u.raw is not None and _valid_package(u.raw.package.text):
            lowerer.add(u.raw, u.digest, [(units[t].raw, imp) for t, imp in edges.get(p, [])])
    files = lowerer.lower_all()
    return LoadResult(
        Schema(tuple(files)),
        diags,
        {u.display: u.text for u in units.values()},
        tuple(dict.fromkeys(inputs)),
    )


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
    paths: Sequence[Path], roots: Mapping[str, Path], include_dirs: Sequence[Path]
) -> frozenset[Path]:
    # a set: a corpus build has one base per input directory, and every import is checked
    bases = {Path(d).resolve() for d in {os.path.dirname(os.path.abspath(p)) for p in paths}}
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
