"""``load(path_or_model) -> Program``: import an ONNX or TFLite model onto NNRt v2_1.

The format is told by the file suffix or the TFLite file identifier (``TFL3``); the importer
modules are imported on demand, so TFLite users never import ``onnx``.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import DecodeError, IdlgenError

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
                return _decoded(import_tflite, f.read(), package, path, "TFLite")
        from .onnx_import import import_onnx

        return _decoded(import_onnx, path, package, path, "ONNX")
    if isinstance(path_or_model, (bytes, bytearray, memoryview)):
        data = bytes(path_or_model)
        if data[4:8] == b"TFL3":
            from .tflite_import import import_tflite

            return _decoded(import_tflite, data, package, "<bytes>", "TFLite")
        from .onnx_import import import_onnx

        return _decoded(import_onnx, data, package, "<bytes>", "ONNX")
    if type(path_or_model).__name__ == "ModelProto":
        from .onnx_import import import_onnx

        return import_onnx(path_or_model, package=package, source="<ModelProto>")
    raise TypeError(f"load() takes a path, bytes or an onnx.ModelProto, not {type(path_or_model)}")


def _decoded(importer: Any, data: Any, package: str, source: str, kind: str) -> Program:
    """A model file is untrusted bytes: whatever its contents trip in the importer (a protobuf
    parse error, an index or shape that does not fit) is a DecodeError naming the file; idlgen's
    own errors (UnsupportedModelError, ...) and a missing ``onnx`` pass through."""
    try:
        result: Program = importer(data, package=package, source=source)
    except (IdlgenError, ImportError):
        raise
    except Exception as e:  # noqa: BLE001 - the boundary where file contents become errors
        raise DecodeError(f"malformed {kind} model: {type(e).__name__}: {e}", path=source) from e
    return result
