"""``load(path_or_model) -> Program``: import an ONNX or TFLite model onto NNRt v2_1.

The format is told by the file suffix or the TFLite file identifier (``TFL3``); the importer
modules are imported on demand, so TFLite users never import ``onnx``.
"""

from __future__ import annotations

import os
from typing import Any

from .program import DEFAULT_PACKAGE, Program

__all__ = ["load"]


def load(path_or_model: Any, *, package: str = DEFAULT_PACKAGE) -> Program:
    """Import an ONNX ``ModelProto`` / ``.onnx`` file or a ``.tflite`` file (path or bytes)."""
    if isinstance(path_or_model, (str, os.PathLike)):
        path = os.fspath(path_or_model)
        with open(path, "rb") as f:
            head = f.read(8)
        if path.endswith(".tflite") or head[4:8] == b"TFL3":
            from .tflite_import import import_tflite

            with open(path, "rb") as f:
                return import_tflite(f.read(), package=package, source=path)
        from .onnx_import import import_onnx

        return import_onnx(path, package=package, source=path)
    if isinstance(path_or_model, (bytes, bytearray, memoryview)):
        data = bytes(path_or_model)
        if data[4:8] == b"TFL3":
            from .tflite_import import import_tflite

            return import_tflite(data, package=package, source="<bytes>")
        from .onnx_import import import_onnx

        return import_onnx(data, package=package, source="<bytes>")
    if type(path_or_model).__name__ == "ModelProto":
        from .onnx_import import import_onnx

        return import_onnx(path_or_model, package=package, source="<ModelProto>")
    raise TypeError(f"load() takes a path, bytes or an onnx.ModelProto, not {type(path_or_model)}")
