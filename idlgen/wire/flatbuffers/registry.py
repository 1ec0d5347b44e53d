"""Descriptors find each other by qualified name in a registry."""

from __future__ import annotations

from typing import Any

_REGISTRIES: dict[str, dict[str, Any]] = {}


def registry(name: str = "") -> dict[str, Any]:
    """The registry named ``name`` (created on first use); for generated code the name is the
    root package, where enum classes are imported from when first needed."""
    return _REGISTRIES.setdefault(name, {PACKAGE_KEY: name})


PACKAGE_KEY = " package"  # registry key of the owning package name (never a qualified name)


def lookup(qualname: str, reg: dict[str, Any] | None = None) -> Any:
    try:
        return (registry() if reg is None else reg)[qualname]
    except KeyError:
        raise LookupError(
            f"FlatBuffers type {qualname!r} is not registered (module not imported?)"
        ) from None


def resolve_target(x: Any, reg: dict[str, Any]) -> Any:
    """A table/struct descriptor from a qualified name or a generated class."""
    if isinstance(x, str):
        return lookup(x, reg)
    d = getattr(x, "_FB_DESC", None)
    if d is None:
        raise LookupError(f"{x!r} has no FlatBuffers descriptor")
    return d


new_instance = object.__new__


def attach(cls: Any, desc: Any) -> None:
    try:
        cls._FB_DESC = desc
    except (AttributeError, TypeError):
        pass
