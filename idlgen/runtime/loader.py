"""``load(path_or_model) -> Program``: import an ONNX or TFLite model onto NNRt v2_1.

The format is told by the file suffix or the TFLite file identifier (``TFL3``); the importer
modules are imported on demand, so TFLite users never import ``onnx``.

Input shapes: ``input_shapes={name: dims}`` pins dims ahead of time. Without it, open dims
(symbolic batch, sequence or image sizes) still work: the model is imported with them open, and
where its graph needs their values (shape arithmetic, computed reshape targets, windows over
them) the ``Program`` imports it again for the concrete shapes of each call (see
``Program.run``), as a runtime that compiles per input shape does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from ..errors import DecodeError, IdlgenError

from .program import Program, UnsupportedModelError

__all__ = ["load"]

Shapes = Mapping[str, Sequence[int]]


def load(
    path_or_model: Any,
    *,
    input_shapes: Shapes | None = None,
    nnrt_only: bool = False,
    package: str | ModuleType | None = None,
) -> Program:
    """Import an ONNX ``ModelProto`` / ``.onnx`` file or a ``.tflite`` file (path or bytes).

    ``input_shapes`` pins input dims; ``nnrt_only`` refuses any operator that would run on the
    host (``UnsupportedModelError`` naming the first); ``package`` is the generated NNRt
    package to lower onto (a module or dotted name; default the shipped ``idlgen.prebuilt``
    one)."""
    from .budget import max_work, metered

    size = _model_bytes(path_or_model)
    with metered(max_work(size)):
        program = _load(path_or_model, shapes=dict(input_shapes or {}), nnrt_only=nnrt_only,
                        package=package)  # fmt: skip
    program._model_bytes = size
    return program


def _model_bytes(path_or_model: Any) -> int:
    """The size of the model file (what its work budget grows with)."""
    try:
        if isinstance(path_or_model, (str, os.PathLike)):
            return os.path.getsize(path_or_model)
        if isinstance(path_or_model, (bytes, bytearray, memoryview)):
            return len(path_or_model)
        return int(path_or_model.ByteSize())
    except (OSError, AttributeError, TypeError, ValueError):
        return 0


def _load(
    path_or_model: Any, *, shapes: Any, nnrt_only: bool, package: str | ModuleType | None
) -> Program:
    if isinstance(path_or_model, (str, os.PathLike)):
        path = os.fspath(path_or_model)
        with open(path, "rb") as f:
            head = f.read(8)
        if path.endswith(".tflite") or head[4:8] == b"TFL3":
            with open(path, "rb") as f:
                return _tflite(f.read(), shapes, nnrt_only, package, path)
        return _onnx(path, shapes, nnrt_only, package, path)
    if isinstance(path_or_model, (bytes, bytearray, memoryview)):
        data = bytes(path_or_model)
        if data[4:8] == b"TFL3":
            return _tflite(data, shapes, nnrt_only, package, "<bytes>")
        return _onnx(data, shapes, nnrt_only, package, "<bytes>")
    if type(path_or_model).__name__ == "ModelProto":
        return _onnx(path_or_model, shapes, nnrt_only, package, "<ModelProto>")
    raise TypeError(f"load() takes a path, bytes or an onnx.ModelProto, not {type(path_or_model)}")


def _tflite(
    data: bytes, shapes: dict[str, list[int]] | Shapes, nnrt_only: bool, package: Any, source: str
) -> Program:
    from .tflite_import import import_tflite

    def importer(d: Any, *, package: Any, source: str) -> Program:
        return import_tflite(
            d, package=package, source=source, input_shapes=shapes, nnrt_only=nnrt_only
        )

    program: Program = _decoded(importer, data, package, source, "TFLite")
    return program


def _onnx(model: Any, shapes: Shapes, nnrt_only: bool, package: Any, source: str) -> Program:
    from .onnx_import import import_onnx, parse_onnx
    from .onnx_shapes import check_shapes, graph_inputs, open_dims, pin_input_dims

    proto = _decoded(lambda m, **_: parse_onnx(m), model, package, source, "ONNX")
    pinned = check_shapes(proto, shapes) if shapes else {}
    base = pin_input_dims(proto, pinned) if pinned else proto

    def body(m: Any) -> Program:
        """A control-flow body, loaded as any model is (its open dims handled at run time)."""
        return load(m, nnrt_only=nnrt_only, package=package)

    def imported(m: Any) -> Program:
        program: Program
        program = _decoded(
            lambda mm, **kw: import_onnx(mm, nnrt_only=nnrt_only, load_body=body, **kw),
            m,
            package,
            source,
            "ONNX",
        )
        return program

    if not open_dims(base):
        return imported(base)
    names = [n for n, _, _ in graph_inputs(base)]

    def specialize(key: tuple[tuple[int, ...], ...]) -> Program:
        return imported(pin_input_dims(base, dict(zip(names, key))))

    try:
        program = imported(base)
    except UnsupportedModelError as e:
        # The graph needs values of the open dims. Importing it for a representative shape
        # (open dims 1) tells a shape dependence from an operator idlgen cannot run at all:
        # the same refusal again is final.
        ones = tuple(tuple(d if d >= 0 else 1 for d in dims) for _, _, dims in graph_inputs(base))
        try:
            program = specialize(ones)
        except UnsupportedModelError as again:
            if (again.op, again.node, again.reason) == (e.op, e.node, e.reason):
                raise
            program = _deferred(base, e)
        except IdlgenError:
            program = _deferred(base, e)
        else:
            # the model stays valid for any shape: calls with other shapes import again
            program.input_shapes = [list(dims) for _, _, dims in graph_inputs(base)]
            program._variants[ones] = None
            program._generic = False  # folded for that shape: other shapes get their own
    program._specialize = specialize
    return program


def _deferred(model: Any, why: UnsupportedModelError) -> Program:
    """A Program with no ``model`` until its first call gives concrete input shapes."""
    from .onnx_shapes import graph_inputs

    ins = graph_inputs(model)
    import numpy as np

    return Program(
        None,
        {},
        [n for n, _, _ in ins],
        [o.name for o in model.graph.output],
        input_dtypes=[dt if dt is not None else np.dtype(np.float32) for _, dt, _ in ins],
        input_shapes=[list(dims) for _, _, dims in ins],
    )


def _decoded(importer: Any, data: Any, package: Any, source: str, kind: str) -> Any:
    """A model file is untrusted bytes: whatever its contents trip in the importer (a protobuf
    parse error, an index or shape that does not fit) is a DecodeError naming the file; idlgen's
    own errors (UnsupportedModelError, ...) and a missing ``onnx`` pass through."""
    try:
        return importer(data, package=package, source=source)
    except (IdlgenError, ImportError):
        raise
    except Exception as e:  # noqa: BLE001 - the boundary where file contents become errors
        raise DecodeError(f"malformed {kind} model: {type(e).__name__}: {e}", path=source) from e
