"""Import a generated package tree (relative path → source) without writing it to disk."""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

__all__ = ["install"]


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, package: str, tree: Mapping[str, str]) -> None:
        self.sources: dict[str, str] = {}
        self.packages: set[str] = {package}
        for rel, text in tree.items():
            parts = [package, *rel.removesuffix(".py").split("/")]
            for i in range(2, len(parts)):
                self.packages.add(".".join(parts[:i]))
            if parts[-1] == "__init__":
                parts.pop()
            self.sources[".".join(parts)] = text

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.sources and fullname not in self.packages:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, self, is_package=fullname in self.packages)
        if fullname in self.packages:
            spec.submodule_search_locations = []
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        src = self.sources.get(name, "")
        exec(compile(src, f"<idlgen:{name}>", "exec"), module.__dict__)


def install(tree: Mapping[str, str]) -> str:
    """Make ``tree`` importable under a private top-level package; returns its name."""
    h = hashlib.sha256()
    for rel in sorted(tree):
        h.update(rel.encode() + b"\0" + tree[rel].encode() + b"\0")
    package = "_idlgen_data_" + h.hexdigest()[:16]
    if not any(isinstance(f, _Finder) and package in f.packages for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(package, tree))
        importlib.invalidate_caches()
    return package
