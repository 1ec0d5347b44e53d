"""Lower a ``.tflite`` model onto NNRt v2_1 operators.

The file is read with idlgen's own generated package for the TFLite schema
(``idlgen.prebuilt.tflite``, from ``schemas/fbs/tflite.fbs``). TFLite is NHWC with ``[O, H, W, I]``
convolution weights like NNRt, so no layout changes are needed except for depthwise weights
(``[1, H, W, C*M]`` -> ``[C*M, H, W, 1]`` grouped convolution). Fused activations map onto NNRt's
``activationType``; int8/uint8 tensors keep their integer data and carry their scale/zero point
(per channel too) as ``quantParams``, which the executor honours; float16 weights are cast.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from idlgen.errors import DecodeError

from .builder import ModelBuilder
from .dtypes import from_numpy
from .packages import tflite_package
from .program import Program, UnsupportedModelError, target_package

__all__ = ["import_tflite", "TFLITE_PACKAGE"]

TFLITE_PACKAGE = "idlgen.prebuilt.tflite"  # .packages.TFLITE

# tflite TensorType -> NumPy dtype (schema enum values).
_TYPES = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_,
          7: np.int16, 9: np.int8, 10: np.float64, 12: np.uint64, 15: np.uint32, 16: np.uint16}  # fmt: skip
# tflite ActivationFunctionType -> NNRt ActivationType.
_ACT = {0: 0, 1: 1, 2: 7, 3: 3, 4: 10}


class _Unsupported(Exception):
    pass


def _bad(what: str) -> DecodeError:
    """An index, count or shape in the file that cannot be: the file is malformed."""
    return DecodeError(f"malformed TFLite model: {what}")


class TfliteImporter:
    def __init__(self, model: Any, package: Any, tfl: Any) -> None:
        self.m = model
        self.pkg = package
        self.T = tfl
        if not model.subgraphs:
            raise UnsupportedModelError("Model", "<file>", "no subgraphs")
        self.g = model.subgraphs[0]
        self.tensors = list(self.g.tensors or [])
        self.codes = list(model.operator_codes or [])
        self.b = ModelBuilder(package, name=str(self.g.name or "tflite"))
        self.idx: dict[int, int] = {}  # tflite tensor -> NNRt tensor

    def t(self, ti: int) -> Any:
        """Tensor ``ti`` of the subgraph; every tensor index read from the file comes here."""
        if not 0 <= ti < len(self.tensors):
            raise _bad(f"tensor index {ti}, but subgraph 0 has {len(self.tensors)} tensors")
        return self.tensors[ti]

    def dtype(self, ti: int) -> np.dtype[Any]:
        t = self.t(ti)
        dt = _TYPES.get(int(t.type))
        if dt is None:
            code = int(t.type)
            kind = self.T.TensorType(code).name if code in set(self.T.TensorType) else code
            raise _Unsupported(f"tensor {t.name!r} of type {kind}")
        return np.dtype(dt)

    def dims(self, ti: int) -> list[int]:
        """The tensor's static shape: every dimension a size (0 or more)."""
        t = self.t(ti)
        dims = [int(d) for d in (t.shape or [])]
        if any(d < 0 for d in dims):
            raise _bad(f"tensor {ti} {t.name!r} has shape {dims}")
        return dims

    def shape(self, ti: int) -> list[int]:
        """The shape with unknown dimensions as -1 (``shape_signature`` where it fits)."""
        t = self.t(ti)
        dims = self.dims(ti)
        sig = [int(d) for d in (t.shape_signature or [])]
        if any(d < -1 for d in sig):
            raise _bad(f"tensor {ti} {t.name!r} has shape_signature {sig}")
        return sig if sig and len(sig) == len(dims) else dims

    def data(self, ti: int) -> np.ndarray | None:
        t = self.t(ti)
        bufs = self.m.buffers or []
        b = int(t.buffer)
        if b == 0:  # buffer 0 is the empty sentinel: no constant data
            return None
        if not 0 < b < len(bufs):
            raise _bad(f"tensor {ti} {t.name!r} names buffer {b}, but the model has {len(bufs)}")
        buf = bufs[b]
        raw = bytes(buf.data or b"")
        if not raw:
            if int(buf.offset) > 1:
                raise _Unsupported(f"buffer {b} is stored after the FlatBuffer (offset/size)")
            return None
        dt = self.dtype(ti)
        shape = self.dims(ti)
        n = math.prod(shape)
        if len(raw) != n * dt.itemsize:
            raise DecodeError(
                f"buffer {b} holds {len(raw)} bytes, tensor {t.name!r} needs {n * dt.itemsize}"
            )
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()

    def quant(
        self, ti: int, axis_map: Callable[[int], int] | None = None
    ) -> list[tuple[float, int]] | None:
        t = self.t(ti)
        q = t.quantization
        if q is None or not list(q.scale or []):
            return None
        scales = [float(s) for s in q.scale]
        zps = [int(z) for z in (q.zero_point or [0] * len(scales))]
        if len(zps) == 1 and len(scales) > 1:
            zps = zps * len(scales)
        if len(zps) != len(scales):
            raise _bad(f"tensor {ti} {t.name!r} has {len(scales)} scales, {len(zps)} zero points")
        return list(zip(scales, zps))

    def num_bits(self, ti: int) -> int:
        """QuantParam.numBits: the integer type's full width, as LiteRT uses it (int16 is
        16-bit, not an int8 range)."""
        dt = self.dtype(ti)
        return 8 * dt.itemsize if dt.kind in "iu" else 8

    def tensor(self, ti: int) -> int:
        if ti in self.idx:
            return self.idx[ti]
        t = self.t(ti)
        arr = self.data(ti)
        name = str(t.name or f"t{ti}")
        qp = self.quant(ti)
        if arr is not None:
            self.idx[ti] = self.b.constant(name, arr, quant=qp, num_bits=self.num_bits(ti))
        else:
            raise _Unsupported(f"tensor {name!r} is read before any operator writes it")
        return self.idx[ti]

    def const(
        self, name: str, arr: np.ndarray, quant: list[tuple[float, int]] | None = None
    ) -> int:
        bits = 8 * arr.dtype.itemsize if arr.dtype.kind in "iu" else 8
        return self.b.constant(name, np.ascontiguousarray(arr), quant=quant, num_bits=bits)

    def emit(
        self, struct: str, attrs: dict[str, Any], inputs: list[int], outs: list[int], name: str
    ) -> None:
        rec = getattr(self.pkg, struct).from_dict(attrs)
        specs = []
        for ti in outs:
            t = self.t(ti)
            specs.append((str(t.name or f"t{ti}"), self.dtype(ti), self.shape(ti)))
        r = self.b.node(rec, inputs, outputs=specs, name=name)
        for ti, i in zip(outs, r if isinstance(r, list) else [r]):
            qp = self.quant(ti)
            if qp is not None:
                bits = self.num_bits(ti)
                self.b.tensors[i].quantParams = [
                    self.pkg.QuantParam(numBits=bits, zeroPoint=z, scale=s) for s, z in qp
                ]
            self.idx[ti] = i

    def run(self, source: str) -> Program:
        in_names, in_dtypes, in_shapes = [], [], []
        for ti in self.g.inputs or []:
            ti = int(ti)
            t = self.t(ti)
            name = str(t.name or f"t{ti}")
            try:
                dt = self.dtype(ti)
            except _Unsupported as e:
                raise UnsupportedModelError("input", name, str(e)) from None
            self.idx[ti] = self.b.input(
                name, dt, self.shape(ti), quant=self.quant(ti), num_bits=self.num_bits(ti)
            )
            in_names.append(name)
            in_dtypes.append(dt)
            in_shapes.append(self.shape(ti))
        for k, op in enumerate(self.g.operators or []):
            opname = self.opname(op, k)
            outs = [int(o) for o in (op.outputs or [])]
            ins = [int(i) for i in (op.inputs or [])]
            for i in outs:
                self.t(i)
            for i in ins:
                if i != -1:  # -1: an optional input left out
                    self.t(i)
            node = f"{k}:{self.tensors[outs[0]].name if outs else ''}"
            if opname == "CUSTOM":
                oc = self.codes[int(op.opcode_index)]
                raise UnsupportedModelError(f"CUSTOM {oc.custom_code}", node)
            fn = _HANDLERS.get(opname)
            if fn is None:
                raise UnsupportedModelError(opname, node)
            need_in, need_out = _ARITY[opname]
            if len(ins) < need_in or len(outs) < need_out or -1 in ins[:need_in]:
                raise _bad(
                    f"operator {k} ({opname}) has inputs {ins} and outputs {outs}; "
                    f"it takes at least {need_in} inputs and {need_out} outputs"
                )
            opts = op.builtin_options
            want = _OPTIONS.get(opname)
            if opts is None and opname in _NEEDS_OPTIONS:
                raise _bad(f"operator {k} ({opname}) has no {want}")
            if opts is not None and want is not None and type(opts).__name__ != want:
                raise _bad(f"operator {k} ({opname}) carries {type(opts).__name__}, not {want}")
            try:
                fn(self, op, ins, outs, node)
            except _Unsupported as e:
                raise UnsupportedModelError(opname, node, str(e)) from None
        out_names = []
        for ti in self.g.outputs or []:
            ti = int(ti)
            if ti not in self.idx:
                self.tensor(ti)
            self.b.output(self.idx[ti])
            out_names.append(str(self.t(ti).name or f"t{ti}"))
        model, buffers = self.b.build()
        return Program(model, buffers, in_names, out_names, source, in_dtypes, in_shapes)

    def opname(self, op: Any, k: int | None = None) -> str:
        """The operator's BuiltinOperator name, after checking its opcode index."""
        i = int(op.opcode_index)
        if not 0 <= i < len(self.codes):
            where = f"operator {k}" if k is not None else "an operator"
            raise _bad(f"{where} names opcode {i}, but the model has {len(self.codes)}")
        oc = self.codes[i]
        code = max(int(oc.builtin_code), int(oc.deprecated_builtin_code))
        try:
            return str(self.T.BuiltinOperator(code).name)
        except ValueError:
            return f"builtin {code}"


_HANDLERS: dict[str, Callable[[TfliteImporter, Any, list[int], list[int], str], None]] = {}
# Operator name -> (inputs, outputs) its handler reads at the least.
_ARITY: dict[str, tuple[int, int]] = {}


def _h(*names: str, ins: int = 1, outs: int = 1) -> Callable[[Any], Any]:
    def deco(fn: Any) -> Any:
        for n in names:
            _HANDLERS[n] = fn
            _ARITY[n] = (ins, outs)
        return fn

    return deco


# The builtin_options type each operator's handler reads, and the operators that cannot do
# without theirs (the others fall back to TFLite's defaults).
_OPTIONS = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions", "ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions",
    "DIV": "DivOptions", "RESHAPE": "ReshapeOptions", "GELU": "GeluOptions",
    "LEAKY_RELU": "LeakyReluOptions", "SOFTMAX": "SoftmaxOptions",
    "CONCATENATION": "ConcatenationOptions", "MEAN": "ReducerOptions", "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions", "REDUCE_PROD": "ReducerOptions", "SUM": "ReducerOptions",
    "SQUEEZE": "SqueezeOptions", "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions", "BATCH_MATMUL": "BatchMatMulOptions",
    "GATHER": "GatherOptions", "PACK": "PackOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
}  # fmt: skip
_NEEDS_OPTIONS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D",
                            "LEAKY_RELU", "CONCATENATION", "RESIZE_BILINEAR",
                            "RESIZE_NEAREST_NEIGHBOR", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH"})  # fmt: skip


def _act(opts: Any) -> int:
    a = int(getattr(opts, "fused_activation_function", 0) or 0)
    if a not in _ACT:
        raise _Unsupported(f"fused activation {a}")
    return _ACT[a]


def _pad_mode(opts: Any) -> int:
    return 1 if int(opts.padding) == 0 else 2  # SAME (extra bottom/right, as NNRt) / VALID


@_h("CONV_2D", "DEPTHWISE_CONV_2D", ins=2)
def _conv(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    w = imp.data(ins[1])
    if w is None:
        raise _Unsupported("weights computed at run time")
    x_shape = imp.shape(ins[0])
    if len(x_shape) != 4 or w.ndim != 4 or 0 in w.shape:
        raise _bad(f"{node}: convolution of a {x_shape} input with {list(w.shape)} weights")
    in_c = x_shape[3]
    wq = imp.quant(ins[1])
    if type(o).__name__ == "DepthwiseConv2DOptions":
        w = np.ascontiguousarray(w.transpose(3, 1, 2, 0))  # [1, H, W, C*M] -> [C*M, H, W, 1]
        group, out_c = in_c, w.shape[0]
    else:
        group, out_c = in_c // w.shape[3], w.shape[0]
    attrs = {"kernelSize": [w.shape[1], w.shape[2]], "stride": [int(o.stride_h), int(o.stride_w)],
             "dilation": [int(o.dilation_h_factor), int(o.dilation_w_factor)], "padMode": _pad_mode(o),
             "padList": [0, 0, 0, 0], "group": group, "inChannel": in_c, "outChannel": out_c,
             "activationType": _act(o)}  # fmt: skip
    inputs = [imp.tensor(ins[0]), imp.const(imp.t(ins[1]).name or node + ":w", w, wq)]
    if len(ins) > 2 and ins[2] >= 0:
        inputs.append(imp.tensor(ins[2]))
    imp.emit("Conv2DFusion", attrs, inputs, outs, node)


@_h("FULLY_CONNECTED", ins=2)
def _fc(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    w = imp.data(ins[1])
    if w is None:
        raise _Unsupported("weights computed at run time")
    if o is not None and int(o.weights_format) != 0:
        raise _Unsupported("shuffled weights format")
    has_bias = len(ins) > 2 and ins[2] >= 0
    keep = bool(o.keep_num_dims) if o is not None else False
    x_shape = imp.shape(ins[0])
    act = _act(o) if o is not None else 0
    inputs = [
        imp.tensor(ins[0]),
        imp.const(imp.t(ins[1]).name or node + ":w", w, imp.quant(ins[1])),
    ]
    if has_bias:
        inputs.append(imp.tensor(ins[2]))
    use_axis = keep and len(x_shape) > 2
    imp.emit("FullConnection", {"hasBias": has_bias, "useAxis": use_axis, "axis": len(x_shape) - 1 if use_axis else 0,
                                "activationType": act}, inputs, outs, node)  # fmt: skip


@_h("AVERAGE_POOL_2D", "MAX_POOL_2D")
def _pool(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    code = "AvgPoolFusion" if _opname(imp, op) == "AVERAGE_POOL_2D" else "MaxPoolFusion"
    attrs = {"kernelSize": [int(o.filter_height), int(o.filter_width)], "strides": [int(o.stride_h), int(o.stride_w)],
             "pad": [0, 0, 0, 0], "padMode": _pad_mode(o), "roundMode": 0, "format": 1, "global": False,
             "activationType": _act(o)}  # fmt: skip
    imp.emit(code, attrs, [imp.tensor(ins[0])], outs, node)


def _opname(imp: TfliteImporter, op: Any) -> str:
    return imp.opname(op)


_BIN = {"ADD": "AddFusion", "SUB": "SubFusion", "MUL": "MulFusion", "DIV": "DivFusion"}


@_h(*_BIN, ins=2)
def _binary(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    act = _act(o) if o is not None else 0
    imp.emit(
        _BIN[_opname(imp, op)],
        {"activationType": act},
        [imp.tensor(i) for i in ins[:2]],
        outs,
        node,
    )


_PLAIN = {"MAXIMUM": "Maximum", "MINIMUM": "Minimum", "LESS": "Less", "GREATER": "Greater", "EQUAL": "Equal",
          "SQUARED_DIFFERENCE": "SquaredDifference", "NEG": "Neg", "SQRT": "Sqrt", "RSQRT": "Rsqrt",
          "ABS": "Abs", "FLOOR": "Floor", "LOG": "Log", "SIN": "Sin", "COS": "Cos", "SQUARE": "Square",
          "RESHAPE": "Reshape", "TRANSPOSE": "Transpose", "GATHER_ND": "GatherNd", "SHAPE": "Shape",
          "SELECT": "Select", "SELECT_V2": "Select"}  # fmt: skip


@_h(*_PLAIN)
def _plain(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    inputs = [imp.tensor(i) for i in ins if i >= 0]
    if name == "RESHAPE" and len(inputs) < 2:
        shape = list(
            (op.builtin_options.new_shape if op.builtin_options else None) or imp.shape(outs[0])
        )
        inputs.append(imp.const(node + ":shape", np.array(shape, np.int32)))
    imp.emit(_PLAIN[name], {}, inputs, outs, node)


_ACTS = {
    "RELU": 1,
    "RELU6": 3,
    "RELU_N1_TO_1": 7,
    "LOGISTIC": 2,
    "TANH": 10,
    "HARD_SWISH": 12,
    "GELU": 19,
}


@_h(*_ACTS)
def _activation(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    approx = bool(getattr(op.builtin_options, "approximate", False)) if name == "GELU" else False
    imp.emit("Activation", {"activationType": _ACTS[name], "alpha": 0.0, "minVal": 0.0, "maxVal": 0.0,
                            "approximate": approx}, [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("LEAKY_RELU")
def _leaky(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit(
        "LeakyRelu",
        {"negativeSlope": float(op.builtin_options.alpha)},
        [imp.tensor(ins[0])],
        outs,
        node,
    )


@_h("SOFTMAX")
def _softmax(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    beta = float(op.builtin_options.beta) if op.builtin_options is not None else 1.0
    if beta != 1.0:
        raise _Unsupported(f"beta={beta}: NNRt Softmax has no temperature")
    imp.emit("Softmax", {"axis": [-1]}, [imp.tensor(ins[0])], outs, node)


@_h("CONCATENATION")
def _concat(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    if _act(o):
        raise _Unsupported("fused activation on CONCATENATION")
    imp.emit("Concat", {"axis": int(o.axis)}, [imp.tensor(i) for i in ins], outs, node)


_REDUCE = {"MEAN": 0, "REDUCE_MAX": 1, "REDUCE_MIN": 2, "REDUCE_PROD": 3, "SUM": 4}


@_h(*_REDUCE, ins=2)
def _reduce(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    keep = bool(op.builtin_options.keep_dims) if op.builtin_options is not None else False
    axes = imp.data(ins[1])
    if axes is None:
        raise _Unsupported("axes computed at run time")
    imp.emit("ReduceFusion", {"keepDims": keep, "mode": _REDUCE[_opname(imp, op)], "reduceToEnd": False,
                              "coeff": 1.0}, [imp.tensor(ins[0]), imp.const(node + ":axes", axes.astype(np.int32))],
             outs, node)  # fmt: skip


@_h("PAD", "PADV2", ins=2)
def _pad(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    pads = imp.data(ins[1])
    if pads is None:
        raise _Unsupported("paddings computed at run time")
    value = 0.0
    if len(ins) > 2 and ins[2] >= 0:
        cv = imp.data(ins[2])
        if cv is None:
            raise _Unsupported("constant value computed at run time")
        value = float(cv.reshape(-1)[0])
        cq = imp.quant(ins[2])
        if cq is not None and cv.dtype.kind in "iu":  # a quantised pad value: its real value
            value = float((value - cq[0][1]) * cq[0][0])
    # A quantised PAD fills with the zero point, i.e. real 0: the executor pads the real values.
    imp.emit("PadFusion", {"paddings": pads.astype(int).tolist(), "paddingMode": 0, "constantValue": value},
             [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("SQUEEZE")
def _squeeze(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    dims = list(op.builtin_options.squeeze_dims or []) if op.builtin_options is not None else []
    if not dims:
        dims = [i for i, d in enumerate(imp.shape(ins[0])) if d == 1]
    imp.emit("Squeeze", {"axis": [int(d) for d in dims]}, [imp.tensor(ins[0])], outs, node)


@_h("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", ins=2)
def _resize(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    size = imp.data(ins[1])
    if size is None:
        raise _Unsupported("size computed at run time")
    align, half = bool(o.align_corners), bool(o.half_pixel_centers)
    bilinear = _opname(imp, op) == "RESIZE_BILINEAR"
    if half and not bilinear:
        raise _Unsupported("half_pixel_centers on nearest neighbour (TFLite rounds differently)")
    ctm = 1 if align else (2 if half else 0)
    attrs = {"method": 0 if bilinear else 1, "newHeight": 0, "newWidth": 0, "preserveAspectRatio": False,
             "coordinateTransformMode": ctm, "cubicCoeff": -0.75, "excludeOutside": 0,
             "extrapolationValue": 0.0, "nearestMode": 4 if align else 3}  # fmt: skip
    imp.emit(
        "Resize",
        attrs,
        [imp.tensor(ins[0]), imp.const(node + ":size", size.astype(np.int32))],
        outs,
        node,
    )


@_h("QUANTIZE", "DEQUANTIZE")
def _quant(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    src, dst = imp.dtype(ins[0]), imp.dtype(outs[0])
    if src == np.float16 and dst == np.float32:  # float16 weights: a plain Cast
        code = imp.const(node + ":to", np.array([from_numpy(dst)], np.int32))
        imp.emit("Cast", {}, [imp.tensor(ins[0]), code], outs, node)
        return
    imp.emit("QuantDTypeCastV2", {"srcT": from_numpy(src), "dstT": from_numpy(dst), "axis": 0},
             [imp.tensor(ins[0])], outs, node)  # fmt: skip


def import_tflite(data: bytes, *, package: str, source: str = "") -> Program:
    tfl = tflite_package()
    model = tfl.Model.from_flatbuffer(data)
    pkg = target_package(package)
    return TfliteImporter(model, pkg, tfl).run(source)


@_h("BATCH_MATMUL", ins=2)
def _batch_matmul(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    adj_x, adj_y = (bool(o.adj_x), bool(o.adj_y)) if o is not None else (False, False)
    attrs = {"transposeA": adj_x, "transposeB": adj_y, "activationType": 0}
    imp.emit("MatMulFusion", attrs, [imp.tensor(i) for i in ins[:2]], outs, node)


@_h("GATHER", ins=2)
def _gather(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    if o is not None and int(o.batch_dims):
        raise _Unsupported("batch_dims != 0")
    axis = int(o.axis) if o is not None else 0
    ax = imp.const(node + ":axis", np.array([axis], np.int32))
    imp.emit("Gather", {}, [imp.tensor(ins[0]), imp.tensor(ins[1]), ax], outs, node)


@_h("SPLIT", ins=2)
def _split(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    axis = imp.data(ins[0])  # SPLIT takes (axis, input)
    if axis is None:
        raise _Unsupported("axis computed at run time")
    ax = int(axis.reshape(-1)[0])
    shape = imp.shape(ins[1])
    ax = ax + len(shape) if ax < 0 else ax
    if not 0 <= ax < len(shape):
        raise _bad(f"{node}: SPLIT axis {int(axis.reshape(-1)[0])} of a rank-{len(shape)} input")
    n = len(outs)
    if shape[ax] < 0 or shape[ax] % n:
        raise _Unsupported(f"dimension {shape[ax]} does not split evenly into {n}")
    attrs = {"outputNum": n, "sizeSplits": [shape[ax] // n] * n, "axis": ax}
    imp.emit("Split", attrs, [imp.tensor(ins[1])], outs, node)


@_h("PACK")
def _pack(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    axis = int(op.builtin_options.axis) if op.builtin_options is not None else 0
    imp.emit("Stack", {"axis": axis}, [imp.tensor(i) for i in ins], outs, node)


@_h("EXP")
def _exp(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    attrs = {"base": -1.0, "scale": 1.0, "shift": 0.0}
    imp.emit("ExpFusion", attrs, [imp.tensor(ins[0])], outs, node)


@_h("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def _d2s(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    attrs: dict[str, Any] = {"blockSize": int(op.builtin_options.block_size), "format": 1}
    if _opname(imp, op) == "DEPTH_TO_SPACE":
        imp.emit("DepthToSpace", {**attrs, "mode": "DCR"}, [imp.tensor(ins[0])], outs, node)
    else:
        imp.emit("SpaceToDepth", attrs, [imp.tensor(ins[0])], outs, node)
