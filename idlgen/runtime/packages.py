"""The one registry of generated packages the runtime imports by name.

The model importers lower onto the NNRt v2_1 package and read ``.tflite`` files with the TFLite
package that idlgen ships inside its wheel as ``idlgen.prebuilt.…`` (the committed
``generated/`` tree, mapped by ``pyproject.toml``). They are always imported under that one
name, so a model's classes are the same objects whatever the working directory: the repository's
top-level ``generated`` package is never tried. A caller who built another NNRt package passes it
explicitly (``load(..., package=module_or_dotted_name)``). Nothing else in the runtime imports a
module from a string.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from idlgen.errors import ConfigError

__all__ = ["NNRT_V2_1", "TFLITE", "nnrt_package", "tflite_package"]

#: The shipped NNRt v2_1 package (``schemas/hdi/nnrt/v2_1``).
NNRT_V2_1 = "idlgen.prebuilt.ohos.hdi.nnrt.v2_1"
#: The shipped TFLite schema package (``schemas/fbs/tflite.fbs``).
TFLITE = "idlgen.prebuilt.tflite"


def nnrt_package(package: str | ModuleType | None = None) -> ModuleType:
    """The NNRt package to lower onto: a module as given, a dotted name imported, or the shipped
    v2_1 package for ``None``."""
    if isinstance(package, ModuleType):
        return package
    return _import(package or NNRT_V2_1)


def tflite_package() -> ModuleType:
    return _import(TFLITE)


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ConfigError(
            f"generated package {name!r} is not importable ({e}); pass package= naming a "
            "module of an idlgen build"
        ) from e
