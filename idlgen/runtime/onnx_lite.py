"""The part of the ``onnx`` package the importer needs, without importing the package.

``import onnx`` costs about a second (most of it ``ml_dtypes`` registering its types with
numpy), far more than reading and lowering a small model. The importer needs only the protobuf
classes, shape inference (a C++ extension) and a handful of helpers. This module loads the
package's own ``onnx_ml_pb2`` and ``onnx_cpp2py_export`` from its folder under their real
names, without running ``onnx/__init__``; a later ``import onnx`` finds them in ``sys.modules``
and reuses them, so the message classes stay one set (``onnx.ModelProto is ModelProto``). The
helpers below follow the ``onnx`` functions of the same names for what the importer uses; any
other data type or feature (external data, bfloat16, the reference evaluator) goes to the real
package, imported then. When ``onnx`` is already imported, everything is the real package.

Use it as ``from . import onnx_lite as onnx``: ``onnx.helper``, ``onnx.numpy_helper``,
``onnx.shape_inference``, ``onnx.load``, ``onnx.ModelProto`` ... as in the real package.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import numbers
import os
import sys
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

__all__ = [
    "available",
    "helper",
    "load",
    "load_from_string",
    "numpy_helper",
    "real",
    "shape_inference",
]


def real() -> ModuleType:
    """The ``onnx`` package itself (imported on first use; the submodules loaded here become
    its attributes, as if it had imported them itself)."""
    import onnx

    for name in ("onnx_ml_pb2", "onnx_cpp2py_export"):
        mod = sys.modules.get(f"onnx.{name}")
        if mod is not None and not hasattr(onnx, name):
            setattr(onnx, name, mod)
    return onnx


def available() -> bool:
    """The ``onnx`` package is installed (nothing is imported to tell)."""
    return "onnx" in sys.modules or importlib.util.find_spec("onnx") is not None


def _package_dir() -> str:
    spec = importlib.util.find_spec("onnx")
    if spec is None or spec.origin is None:
        raise ImportError("No module named 'onnx'", name="onnx")
    return os.path.dirname(spec.origin)


class _BindWhenImported(importlib.abc.MetaPathFinder):
    """When the real ``onnx`` package is imported after this module loaded some of its
    submodules, make them its attributes (the import system binds only what it loads itself)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "onnx":
            return None
        finder = self

        spec = None
        for f in sys.meta_path:
            if f is not self and hasattr(f, "find_spec"):
                spec = f.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None:
            return spec
        inner = spec.loader

        class Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return inner.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                if finder in sys.meta_path:
                    sys.meta_path.remove(finder)
                inner.exec_module(module)
                for sub in ("onnx_ml_pb2", "onnx_cpp2py_export"):
                    mod = sys.modules.get(f"onnx.{sub}")
                    if mod is not None and not hasattr(module, sub):
                        setattr(module, sub, mod)

        spec.loader = Loader()
        return spec


def _submodule(name: str, filename: str) -> ModuleType:
    """``onnx.<name>`` loaded from the package folder without the package's ``__init__``."""
    full = f"onnx.{name}"
    mod = sys.modules.get(full)
    if mod is not None:
        return mod
    d = _package_dir()
    if "onnx" not in sys.modules and not any(
        isinstance(f, _BindWhenImported) for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _BindWhenImported())
    path = os.path.join(d, filename)
    if filename.endswith(".so") or filename.endswith(".pyd"):
        loader: Any = importlib.machinery.ExtensionFileLoader(full, path)
        spec = importlib.util.spec_from_file_location(full, path, loader=loader)
    else:
        spec = importlib.util.spec_from_file_location(full, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {full} from {path}", name=full)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[full] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[full]
        raise
    return mod


def _pb2() -> ModuleType:
    mod = sys.modules.get("onnx.onnx_ml_pb2")
    if mod is not None:
        return mod
    if "onnx" in sys.modules:  # the package imported it (or _BindWhenImported bound ours)
        return getattr(sys.modules["onnx"], "onnx_ml_pb2")  # type: ignore[no-any-return]
    return _submodule("onnx_ml_pb2", "onnx_ml_pb2.py")


def _cpp() -> ModuleType:
    mod = sys.modules.get("onnx.onnx_cpp2py_export")
    if mod is not None:
        return mod
    if "onnx" in sys.modules:
        return getattr(sys.modules["onnx"], "onnx_cpp2py_export")  # type: ignore[no-any-return]
    d = _package_dir()
    names = [
        f
        for f in os.listdir(d)
        if f.startswith("onnx_cpp2py_export.") and f.endswith((".so", ".pyd"))
    ]
    if not names:
        raise ImportError("onnx's C++ extension is missing", name="onnx")
    return _submodule("onnx_cpp2py_export", sorted(names)[0])


def __getattr__(name: str) -> Any:
    """``ModelProto``, ``TensorProto``, ``AttributeProto``, ... from the protobuf module; the
    rest of the real package's names from it."""
    if name.startswith("__"):  # the import system asks for __path__, __spec__, ...
        raise AttributeError(name)
    pb = _pb2()
    if hasattr(pb, name):
        return getattr(pb, name)
    return getattr(real(), name)


def load_from_string(data: bytes) -> Any:
    if "onnx" in sys.modules:
        return sys.modules["onnx"].load_from_string(data)
    model = _pb2().ModelProto()
    model.ParseFromString(bytes(data))
    if _has_external_data(model):
        return real().load_from_string(data)
    return model


def load(path: str | os.PathLike[str]) -> Any:
    if "onnx" in sys.modules:
        return sys.modules["onnx"].load(path)
    with open(path, "rb") as f:
        data = f.read()
    model = _pb2().ModelProto()
    model.ParseFromString(data)
    if _has_external_data(model):
        return real().load(path)  # the real loader resolves the files beside the model
    return model


def _has_external_data(model: Any) -> bool:
    external = _pb2().TensorProto.EXTERNAL
    return any(t.data_location == external for t in model.graph.initializer)


# -- element types -------------------------------------------------------------------------------

_NP_OF = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
    9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
}  # fmt: skip
_ONNX_OF = {np.dtype(v): k for k, v in _NP_OF.items()}


def tensor_dtype_to_np_dtype(elem_type: int) -> np.dtype[Any]:
    t: Any = _NP_OF.get(int(elem_type))
    if t is None:
        t = real().helper.tensor_dtype_to_np_dtype(elem_type)
    dt: np.dtype[Any] = np.dtype(t)
    return dt


def np_dtype_to_tensor_dtype(dtype: Any) -> int:
    k = _ONNX_OF.get(np.dtype(dtype))
    if k is None:
        return int(real().helper.np_dtype_to_tensor_dtype(dtype))
    return k


# -- tensors ---------------------------------------------------------------------------------------


def to_array(tensor: Any, base_dir: str = "") -> np.ndarray:
    """The tensor's values (``onnx.numpy_helper.to_array`` for the common types)."""
    pb = _pb2()
    dt = int(tensor.data_type)
    if (
        "onnx" in sys.modules
        or dt not in _NP_OF
        or tensor.data_location == pb.TensorProto.EXTERNAL
        or tensor.HasField("segment")
    ):
        return np.asarray(real().numpy_helper.to_array(tensor, base_dir))
    dims = tuple(int(d) for d in tensor.dims)
    np_dt = np.dtype(_NP_OF[dt]).newbyteorder("<")
    if tensor.HasField("raw_data"):
        arr = np.frombuffer(tensor.raw_data, dtype=np_dt).astype(np_dt.newbyteorder("="))
        return arr.reshape(dims)
    if dt == 1:
        vals: Any = tensor.float_data
    elif dt == 11:
        vals = tensor.double_data
    elif dt == 7:
        vals = tensor.int64_data
    elif dt in (12, 13):
        vals = tensor.uint64_data
    elif dt == 10:  # float16 values travel as their bits in int32_data
        return np.asarray(tensor.int32_data, dtype=np.uint16).view(np.float16).reshape(dims).copy()
    else:
        vals = tensor.int32_data
    return np.asarray(vals, dtype=_NP_OF[dt]).reshape(dims)


def from_array(arr: np.ndarray, name: str | None = None) -> Any:
    a = np.asarray(arr)
    if "onnx" in sys.modules or a.dtype not in _ONNX_OF:
        return real().numpy_helper.from_array(a, name)
    t = _pb2().TensorProto()
    if name:
        t.name = name
    t.dims.extend(int(d) for d in a.shape)
    t.data_type = _ONNX_OF[a.dtype]
    t.raw_data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
    return t


# -- attributes, nodes, graphs, models -------------------------------------------------------------


def get_attribute_value(attr: Any) -> Any:
    A = _pb2().AttributeProto
    t = attr.type
    if t == A.FLOAT:
        return attr.f
    if t == A.INT:
        return attr.i
    if t == A.STRING:
        return attr.s
    if t == A.TENSOR:
        return attr.t
    if t == A.GRAPH:
        return attr.g
    if t == A.FLOATS:
        return list(attr.floats)
    if t == A.INTS:
        return list(attr.ints)
    if t == A.STRINGS:
        return list(attr.strings)
    if t == A.TENSORS:
        return list(attr.tensors)
    if t == A.GRAPHS:
        return list(attr.graphs)
    return real().helper.get_attribute_value(attr)


def make_attribute(key: str, value: Any) -> Any:
    pb = _pb2()
    A = pb.AttributeProto
    attr = A()
    attr.name = key
    if isinstance(value, bool) or isinstance(value, numbers.Integral):
        attr.i, attr.type = int(value), A.INT
    elif isinstance(value, numbers.Real):
        attr.f, attr.type = float(value), A.FLOAT
    elif isinstance(value, (str, bytes)):
        attr.s, attr.type = value.encode() if isinstance(value, str) else value, A.STRING
    elif isinstance(value, pb.TensorProto):
        attr.t.CopyFrom(value)
        attr.type = A.TENSOR
    elif isinstance(value, pb.GraphProto):
        attr.g.CopyFrom(value)
        attr.type = A.GRAPH
    elif isinstance(value, (list, tuple, np.ndarray)) and len(value) > 0:
        items = list(value)
        if all(isinstance(v, numbers.Integral) for v in items):
            attr.ints.extend(int(v) for v in items)
            attr.type = A.INTS
        elif all(isinstance(v, numbers.Real) for v in items):
            attr.floats.extend(float(v) for v in items)
            attr.type = A.FLOATS
        elif all(isinstance(v, (str, bytes)) for v in items):
            attr.strings.extend(v.encode() if isinstance(v, str) else v for v in items)
            attr.type = A.STRINGS
        elif all(isinstance(v, pb.TensorProto) for v in items):
            attr.tensors.extend(items)
            attr.type = A.TENSORS
        elif all(isinstance(v, pb.GraphProto) for v in items):
            attr.graphs.extend(items)
            attr.type = A.GRAPHS
        else:
            return real().helper.make_attribute(key, value)
    else:
        return real().helper.make_attribute(key, value)
    return attr


def make_node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str | None = None,
    doc_string: str | None = None,
    domain: str | None = None,
    **kwargs: Any,
) -> Any:
    node = _pb2().NodeProto()
    node.op_type = op_type
    node.input.extend(inputs)
    node.output.extend(outputs)
    if name:
        node.name = name
    if doc_string:
        node.doc_string = doc_string
    if domain is not None:
        node.domain = domain
    node.attribute.extend(make_attribute(k, v) for k, v in sorted(kwargs.items()) if v is not None)
    return node


def make_tensor_value_info(
    name: str, elem_type: int, shape: Sequence[Any] | None, doc_string: str = ""
) -> Any:
    vi = _pb2().ValueInfoProto()
    vi.name = name
    if doc_string:
        vi.doc_string = doc_string
    tt = vi.type.tensor_type
    tt.elem_type = int(elem_type)
    if shape is not None:
        tt.shape.SetInParent()
        for d in shape:
            dim = tt.shape.dim.add()
            if isinstance(d, numbers.Integral):
                dim.dim_value = int(d)
            elif isinstance(d, str):
                dim.dim_param = d
    return vi


def make_empty_tensor_value_info(name: str) -> Any:
    vi = _pb2().ValueInfoProto()
    vi.name = name
    return vi


def make_graph(
    nodes: Sequence[Any],
    name: str,
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    initializer: Sequence[Any] | None = None,
    doc_string: str | None = None,
    value_info: Sequence[Any] | None = None,
) -> Any:
    g = _pb2().GraphProto()
    g.node.extend(nodes)
    g.name = name
    g.input.extend(inputs)
    g.output.extend(outputs)
    g.initializer.extend(initializer or [])
    g.value_info.extend(value_info or [])
    if doc_string:
        g.doc_string = doc_string
    return g


def make_opsetid(domain: str, version: int) -> Any:
    o = _pb2().OperatorSetIdProto()
    o.domain = domain
    o.version = int(version)
    return o


def make_model(graph: Any, **kwargs: Any) -> Any:
    pb = _pb2()
    if "onnx" in sys.modules:
        return sys.modules["onnx"].helper.make_model(graph, **kwargs)
    model = pb.ModelProto()
    model.ir_version = int(pb.IR_VERSION)
    model.graph.CopyFrom(graph)
    opsets = kwargs.pop("opset_imports", None)
    if opsets is None:  # the default opset needs onnx.defs: the real helper
        return real().helper.make_model(graph, **kwargs)
    model.opset_import.extend(opsets)
    for k, v in kwargs.items():
        setattr(model, k, v)
    return model


def infer_shapes(
    model: Any, check_type: bool = False, strict_mode: bool = False, data_prop: bool = False
) -> Any:
    """``onnx.shape_inference.infer_shapes`` through the package's C++ extension."""
    if "onnx" in sys.modules:
        return sys.modules["onnx"].shape_inference.infer_shapes(
            model, check_type=check_type, strict_mode=strict_mode, data_prop=data_prop
        )
    data = model if isinstance(model, bytes) else model.SerializeToString()
    out = _cpp().shape_inference.infer_shapes(data, check_type, strict_mode, data_prop)
    return load_from_string(out)


helper = SimpleNamespace(
    get_attribute_value=get_attribute_value,
    make_attribute=make_attribute,
    make_node=make_node,
    make_tensor_value_info=make_tensor_value_info,
    make_empty_tensor_value_info=make_empty_tensor_value_info,
    make_graph=make_graph,
    make_model=make_model,
    make_opsetid=make_opsetid,
    tensor_dtype_to_np_dtype=tensor_dtype_to_np_dtype,
    np_dtype_to_tensor_dtype=np_dtype_to_tensor_dtype,
)
numpy_helper = SimpleNamespace(to_array=to_array, from_array=from_array)
shape_inference = SimpleNamespace(infer_shapes=infer_shapes)
