"""ONNX conformance: run every ONNX backend node test case whose operator maps onto an NNRt
operator through an adapter (NCHW <-> NHWC, OIHW <-> OHWI, pad order, auto_pad, ceil_mode,
count_include_pad, DataType numbers) and the NNRt kernels.

``python -m idlgen.runtime.conformance [--package idlgen.prebuilt.ohos.hdi.nnrt.v2_1] [-v]`` prints a
per-operator table and ends with ``conformance: P passed, F failed, S skipped of N mapped ONNX
cases``. Kernels come from the generated package's ``kernels.KERNELS`` when it exists (attributes
built as the generated dataclasses and round-tripped through ``encode_node_attr`` /
``decode_node_attr``), otherwise straight from the binding table.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import typing
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from ..runtime import bindings as B
from ..runtime import onnx_lowering as L
from ..runtime.errors import KernelError

__all__ = ["Plan", "Skip", "ADAPTERS", "Runner", "run_conformance", "main"]

DEFAULT_PACKAGE = "idlgen.prebuilt.ohos.hdi.nnrt.v2_1"


#: The case uses an ONNX attribute/input with no NNRt counterpart; the message says which (the
#: shared lowering in ``runtime.onnx_lowering`` raises it too).
Skip = L.NotExpressible


@dataclass
class Plan:
    struct: str
    attrs: dict[str, Any]
    inputs: list[Any]
    post: Callable[[list[np.ndarray]], list[np.ndarray]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Composite lowering: more NNRt ops run after this one. Each step's inputs are its own list
    #: with ``PREV`` standing for the previous op's first output (prepended when absent).
    then: list[tuple[str, dict[str, Any], list[Any]]] = field(default_factory=list)


PREV = object()


Node = Any  # onnx.NodeProto
Adapter = Callable[[Node, dict[str, Any], list[Any]], Plan]

# ---------------------------------------------------------------------------------------------
# helpers


def _nhwc(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(x, 1, -1))


def _nchw(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(x, -1, 1))


def _back(outs: list[np.ndarray]) -> list[np.ndarray]:
    return [_nchw(outs[0])] + list(outs[1:])


def _need_2d(op: str, x: np.ndarray) -> None:
    if x.ndim != 4:
        raise Skip(f"{x.ndim - 2}-D spatial input: NNRt {op} is 2-D (NHWC) only")


# ONNX TensorProto element type -> NNRt DataType.
_ONNX_TO_NNRT = {
    1: 43,
    2: 37,
    3: 32,
    4: 38,
    5: 33,
    6: 34,
    7: 35,
    9: 30,
    10: 42,
    11: 44,
    12: 39,
    13: 40,
}
_NP_TO_NNRT = {
    np.dtype(np.float32): 43, np.dtype(np.uint8): 37, np.dtype(np.int8): 32, np.dtype(np.uint16): 38,
    np.dtype(np.int16): 33, np.dtype(np.int32): 34, np.dtype(np.int64): 35, np.dtype(np.bool_): 30,
    np.dtype(np.float16): 42, np.dtype(np.float64): 44, np.dtype(np.uint32): 39, np.dtype(np.uint64): 40,
}  # fmt: skip


def _nnrt_type(onnx_type: int, what: str) -> int:
    code = _ONNX_TO_NNRT.get(int(onnx_type))
    if code is None:
        import onnx

        name = onnx.TensorProto.DataType.Name(int(onnx_type))
        raise Skip(f"{what}={name}: no NNRt DataType")
    return code


def _np_type(a: np.ndarray, what: str) -> int:
    code = _NP_TO_NNRT.get(np.asarray(a).dtype)
    if code is None:
        raise Skip(f"{what} dtype {np.asarray(a).dtype}: no NNRt DataType")
    return code


_only = L.only


def _scalar(v: Any) -> float:
    return float(np.asarray(v).reshape(-1)[0])


def _opt(inputs: list[Any], i: int) -> Any:
    return inputs[i] if len(inputs) > i else None


# ---------------------------------------------------------------------------------------------
# adapters

ADAPTERS: dict[str, Adapter] = {}
adapter = L.registry(ADAPTERS)
_UNARY = L.UNARY


@adapter(*_UNARY)
def _unary(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan(_UNARY[node.op_type], {}, x[:1])


@adapter("Exp")
def _exp(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("ExpFusion", dict(L.EXP), x[:1])


def _act(code: int, x: list[Any], **kw: Any) -> Plan:
    return Plan("Activation", L.activation(code, **kw), x[:1])


_SIMPLE_ACT = L.ACTIVATIONS


@adapter(*_SIMPLE_ACT)
def _simple_act(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    if not isinstance(x[0], np.ndarray):
        raise Skip("sequence/optional input: NNRt tensors only")
    return _act(_SIMPLE_ACT[node.op_type], x)


@adapter("Elu")
def _elu(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return _act(4, x, alpha=float(a.get("alpha", 1.0)))


@adapter("LeakyRelu")
def _leaky(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("LeakyRelu", {"negativeSlope": float(a.get("alpha", 0.01))}, x[:1])


@adapter("ThresholdedRelu")
def _thr(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return _act(14, x, alpha=float(a.get("alpha", 1.0)))


def _const(v: float, like: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.asarray(like).dtype)


@adapter("Selu")
def _selu(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    alpha, gamma = float(a.get("alpha", 1.67326319)), float(a.get("gamma", 1.05070102))
    if abs(alpha - 1.67326319) < 1e-6 and abs(gamma - 1.05070102) < 1e-6:
        return _act(11, x)
    # Other constants: gamma * ELU_alpha(x) = Activation(ELU) then MulFusion.
    plan = _act(4, x, alpha=alpha)
    plan.then.append(("MulFusion", {"activationType": 0}, [_const(gamma, x[0])]))
    return plan


@adapter("HardSigmoid")
def _hsig(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    alpha, beta = float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))
    if abs(alpha - 1 / 6) < 1e-6 and abs(beta - 0.5) < 1e-6:
        return _act(13, x)
    # clip(alpha*x + beta, 0, 1) = MulFusion, AddFusion, Clip.
    plan = Plan("MulFusion", {"activationType": 0}, [x[0], _const(alpha, x[0])])
    plan.then.append(("AddFusion", {"activationType": 0}, [_const(beta, x[0])]))
    plan.then.append(("Clip", {"min": 0.0, "max": 1.0}, []))
    return plan


@adapter("Gelu")
def _gelu(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return _act(19, x, approximate=a.get("approximate", "none") == "tanh")


@adapter("Swish")
def _swish(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, alpha=lambda v: v == 1.0)
    return _act(18, x)


@adapter("Clip")
def _clip(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    lo, hi = _opt(x, 1), _opt(x, 2)
    return Plan("Clip", {
        "min": _scalar(lo) if lo is not None else float(a.get("min", -np.inf)),
        "max": _scalar(hi) if hi is not None else float(a.get("max", np.inf)),
    }, x[:1])  # fmt: skip


_BINARY = L.BINARY


@adapter(*_BINARY)
def _binary(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan(_BINARY[node.op_type], {"activationType": 0}, x[:2])


_CMP = L.COMPARE


@adapter(*_CMP)
def _cmp(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    if any(np.asarray(v).dtype.kind in "OUS" for v in x):
        raise Skip("string tensors: no NNRt DataType")
    return Plan(_CMP[node.op_type], {}, list(x))


@adapter("Pow")
def _pow(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("PowFusion", {"scale": 1.0, "shift": 0.0}, x[:2])


@adapter("Mod")
def _mod(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    if int(a.get("fmod", 0)) != 1:
        # Floor modulo equals C fmod unless a non-zero remainder has operands of mixed signs.
        x0, x1 = np.broadcast_arrays(np.asarray(x[0]), np.asarray(x[1]))
        with np.errstate(all="ignore"):
            same = (np.fmod(x0, x1) == 0) | ((x0 < 0) == (x1 < 0))
        if not np.all(same):
            raise Skip(
                "fmod=0 (floor modulo) on mixed signs: NNRt Mod is C fmod (nnacl ElementMod)"
            )
    return Plan("Mod", {}, x[:2])


@adapter("Max", "Min", "Sum")
def _nary(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    if len(x) == 2 and node.op_type != "Sum":
        return Plan("Maximum" if node.op_type == "Max" else "Minimum", {}, x)
    if node.op_type == "Min":
        if len(x) == 1:
            return _act(15, x)  # min of one tensor: LINEAR (identity)
        plan = Plan("Minimum", {}, x[:2])  # Eltwise has no MIN mode: fold with binary Minimum
        plan.then.extend(("Minimum", {}, [v]) for v in x[2:])
        return plan
    return Plan("Eltwise", {"mode": 2 if node.op_type == "Max" else 1}, list(x))


@adapter("PRelu")
def _prelu(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("PReLUFusion", {"channelShared": np.asarray(x[1]).size == 1}, x[:2])


# --- shape / layout --------------------------------------------------------------------------


@adapter("Reshape")
def _reshape(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    if int(a.get("allowzero", 0)) and 0 in np.asarray(x[1]).tolist():
        raise Skip("allowzero=1 with a 0 dim: NNRt Reshape copies the input dim")
    return Plan("Reshape", {}, x[:2])


@adapter("Transpose")
def _transpose(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    perm = np.asarray(a.get("perm", list(range(x[0].ndim))[::-1]), dtype=np.int32)
    return Plan("Transpose", {}, [x[0], perm])


@adapter("Concat")
def _concat(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("Concat", {"axis": int(a["axis"])}, list(x))


@adapter("Flatten")
def _flatten(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("Flatten", {"axis": int(a.get("axis", 1))}, x[:1])


@adapter("Squeeze")
def _squeeze(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    axes = _opt(x, 1)
    return Plan(
        "Squeeze",
        {"axis": [int(v) for v in (axes if axes is not None else a.get("axes", []))]},
        x[:1],
    )


@adapter("Unsqueeze")
def _unsqueeze(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    axes = _opt(x, 1)
    return Plan(
        "Unsqueeze",
        {"axis": [int(v) for v in (axes if axes is not None else a.get("axes", []))]},
        x[:1],
    )


@adapter("Split")
def _split(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    sizes = _opt(x, 1)
    sizes = list(a.get("split", [])) if sizes is None else [int(v) for v in sizes]
    n = len(node.output)
    return Plan(
        "Split",
        {"outputNum": n, "sizeSplits": sizes, "axis": int(a.get("axis", 0))},
        x[:1],
    )


@adapter("Tile")
def _tile(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("TileFusion", {"dims": []}, x[:2])


@adapter("Expand")
def _expand(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("BroadcastTo", {"shape": [int(v) for v in x[1]]}, x[:1])


@adapter("Slice")
def _slice(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    data = x[0]
    starts, ends = [int(v) for v in x[1]], [int(v) for v in x[2]]
    axes = [int(v) for v in x[3]] if _opt(x, 3) is not None else list(range(len(starts)))
    steps = [int(v) for v in x[4]] if _opt(x, 4) is not None else [1] * len(starts)
    axes = [ax + data.ndim if ax < 0 else ax for ax in axes]
    if all(s == 1 for s in steps):
        begin, size = L.slice_window(data.shape, axes, starts, ends)
        return Plan(
            "SliceFusion",
            {"axes": axes},
            [data, np.array(begin, np.int32), np.array(size, np.int32)],
        )
    # Any step != 1: a StridedSlice over every dim; unsliced dims use begin/end masks.
    bl, el, st = [0] * data.ndim, [0] * data.ndim, [1] * data.ndim
    bm = em = (1 << data.ndim) - 1
    big = 2**31 - 1
    for ax, s0, e0, s in zip(axes, starts, ends, steps):
        bl[ax], el[ax], st[ax] = max(min(s0, big), -big), max(min(e0, big), -big - 1), s
        bm &= ~(1 << ax)
        em &= ~(1 << ax)
    attrs = {
        "beginMask": bm,
        "endMask": em,
        "ellipsisMask": 0,
        "newAxisMask": 0,
        "shrinkAxisMask": 0,
    }
    return Plan(
        "StridedSlice",
        attrs,
        [data, np.array(bl, np.int64), np.array(el, np.int64), np.array(st, np.int64)],
    )


@adapter("Shape")
def _shape(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    plan = Plan("Shape", {}, x[:1])
    if "start" in a or "end" in a:  # Shape then SliceFusion of the shape vector
        r = x[0].ndim
        s, e = int(a.get("start", 0)), int(a.get("end", r))
        s = min(max(s + r if s < 0 else s, 0), r)
        e = min(max(e + r if e < 0 else e, 0), r)
        plan.then.append(
            (
                "SliceFusion",
                {"axes": [0]},
                [np.array([s], np.int32), np.array([max(e - s, 0)], np.int32)],
            )
        )
    return plan


@adapter("ConstantOfShape")
def _cos(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    from onnx import numpy_helper

    v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    return Plan(
        "ConstantOfShape",
        {"dataType": _np_type(v, "value"), "value": [float(v.reshape(-1)[0])]},
        x[:1],
    )


@adapter("Range")
def _range(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan(
        "Range",
        {"dataType": _np_type(x[0], "start"), "start": 0, "limit": 0, "delta": 1},
        x[:3],
    )


@adapter("Cast")
def _cast(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    to = _nnrt_type(a["to"], "to")
    _np_type(x[0], "input")
    return Plan("Cast", {}, [x[0], np.array([to], np.int32)])


@adapter("CastLike")
def _cast_like(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    to = _np_type(x[1], "target_type")
    _np_type(x[0], "input")
    return Plan("Cast", {}, [x[0], np.array([to], np.int32)])


@adapter("DepthToSpace")
def _d2s(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("DepthToSpace", {"blockSize": int(a["blocksize"]), "format": 1, "mode": a.get("mode", "DCR")},
                [_nhwc(x[0])], _back)  # fmt: skip


@adapter("SpaceToDepth")
def _s2d(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, mode=lambda v: v == "DCR")
    return Plan(
        "SpaceToDepth",
        {"blockSize": int(a["blocksize"]), "format": 1},
        [_nhwc(x[0])],
        _back,
    )


@adapter("Pad")
def _pad(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    mode = a.get("mode", "constant")
    if mode not in ("constant", "reflect"):
        raise Skip(f"mode={mode}: NNRt PaddingMode has CONSTANT/REFLECT/SYMMETRIC only")
    data = x[0]
    pads = [int(v) for v in (x[1] if _opt(x, 1) is not None else a["pads"])]
    axes = [int(v) for v in x[3]] if _opt(x, 3) is not None else list(range(data.ndim))
    rows = [[0, 0] for _ in range(data.ndim)]
    k = len(axes)
    for i, ax in enumerate(axes):
        rows[ax + data.ndim if ax < 0 else ax] = [pads[i], pads[i + k]]
    cv = _opt(x, 2)
    value = _scalar(cv) if cv is not None and np.asarray(cv).size else float(a.get("value", 0.0))
    return Plan("PadFusion", {"paddings": rows, "paddingMode": 0 if mode == "constant" else 1,
                              "constantValue": value}, [data])  # fmt: skip


# --- gather ----------------------------------------------------------------------------------


@adapter("Gather")
def _gather(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan("Gather", {}, [x[0], x[1], np.array([int(a.get("axis", 0))], np.int32)])


@adapter("GatherND")
def _gather_nd(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, batch_dims=lambda v: v == 0)
    return Plan("GatherNd", {}, x[:2])


@adapter("OneHot")
def _one_hot(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    vals = np.asarray(x[2])
    return Plan("OneHot", {"axis": int(a.get("axis", -1))}, [x[0], x[1], vals[1:2], vals[0:1]])


# --- reductions ------------------------------------------------------------------------------

_REDUCE = L.REDUCE


@adapter(*_REDUCE)
def _reduce(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    axes = _opt(x, 1)
    axes = np.asarray(a.get("axes", []) if axes is None else axes, dtype=np.int32)
    if axes.size == 0 and int(a.get("noop_with_empty_axes", 0)):
        raise Skip("noop_with_empty_axes=1: NNRt empty axes reduce everything")
    return Plan("ReduceFusion", {"keepDims": bool(a.get("keepdims", 1)), "mode": _REDUCE[node.op_type],
                                 "reduceToEnd": False, "coeff": 1.0}, [x[0], axes])  # fmt: skip


@adapter("ArgMax")
def _argmax(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    attrs = {"axis": int(a.get("axis", 0)), "topK": 1, "keepDims": bool(a.get("keepdims", 1)),
             "outMaxValue": False}  # fmt: skip
    if not int(a.get("select_last_index", 0)):
        return Plan("ArgMaxFusion", attrs, x[:1])
    # Last index of the max = n-1 - first index in the reversed axis: StridedSlice (stride -1),
    # ArgMaxFusion, MulFusion(-1), AddFusion(n-1).
    data = x[0]
    ax = attrs["axis"] + data.ndim if attrs["axis"] < 0 else attrs["axis"]
    strides = np.ones(data.ndim, np.int64)
    strides[ax] = -1
    full = (1 << data.ndim) - 1
    zeros = np.zeros(data.ndim, np.int64)
    ss = {
        "beginMask": full,
        "endMask": full,
        "ellipsisMask": 0,
        "newAxisMask": 0,
        "shrinkAxisMask": 0,
    }
    plan = Plan("StridedSlice", ss, [data, zeros, zeros, strides])
    plan.then.append(("ArgMaxFusion", attrs, []))
    plan.then.append(("MulFusion", {"activationType": 0}, [np.int32(-1)]))
    plan.then.append(("AddFusion", {"activationType": 0}, [np.int32(data.shape[ax] - 1)]))
    return plan


@adapter("TopK")
def _topk(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, largest=lambda v: v == 1)
    return Plan(
        "TopKFusion",
        {"sorted": bool(a.get("sorted", 1)), "axis": int(a.get("axis", -1))},
        x[:2],
    )


# --- normalisation ---------------------------------------------------------------------------


@adapter("Softmax", "LogSoftmax")
def _softmax(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    axis = int(a.get("axis", -1))
    if node.op_type == "Softmax":
        return Plan("Softmax", {"axis": [axis]}, x[:1])
    return Plan("LogSoftmax", {"axis": axis}, x[:1])


@adapter("BatchNormalization")
def _bn(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, training_mode=lambda v: v == 0)
    return Plan(
        "FusedBatchNorm",
        {"epsilon": float(a.get("epsilon", 1e-5))},
        [_nhwc(x[0])] + list(x[1:5]),
        _back,
    )


@adapter("InstanceNormalization")
def _inorm(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan(
        "InstanceNorm",
        {"epsilon": float(a.get("epsilon", 1e-5))},
        [_nhwc(x[0]), x[1], x[2]],
        _back,
    )


@adapter("LayerNormalization")
def _lnorm(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    axis = int(a.get("axis", -1))
    eps = float(a.get("epsilon", 1e-5))

    def post(outs: list[np.ndarray]) -> list[np.ndarray]:
        y, mean, var = outs
        return [
            y,
            mean.astype(np.float32),
            (1 / np.sqrt(var.astype(np.float64) + eps)).astype(np.float32),
        ]

    return Plan("LayerNormFusion", {"beginNormAxis": axis, "epsilon": eps, "elementwiseAffine": True,
                                    "beginParamsAxis": axis}, list(x), post)  # fmt: skip


@adapter("LRN")
def _lrn(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    size = int(a["size"])
    if size % 2 == 0:
        raise Skip(f"size={size} (even): an asymmetric window has no NNRt depthRadius")
    attrs = {"depthRadius": (size - 1) // 2, "bias": float(a.get("bias", 1.0)),
             "alpha": float(a.get("alpha", 1e-4)) / size, "beta": float(a.get("beta", 0.75)),
             "normRegion": "ACROSS_CHANNELS"}  # fmt: skip
    return Plan("LRN", attrs, [_nhwc(x[0])], _back)


@adapter("LpNormalization")
def _lpnorm(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, p=lambda v: v in (1, 2))
    if int(a.get("p", 2)) == 1:  # x / sum|x|: ReduceFusion(ASUM, keepDims) then DivFusion
        axes = np.array([int(a.get("axis", -1))], np.int32)
        plan = Plan("ReduceFusion", {"keepDims": True, "mode": 6, "reduceToEnd": False, "coeff": 1.0},
                    [x[0], axes])  # fmt: skip
        plan.then.append(("DivFusion", {"activationType": 0}, [x[0], PREV]))
        return plan
    return Plan(
        "L2NormalizeFusion",
        {"axis": [int(a.get("axis", -1))], "epsilon": 0.0, "activationType": 0},
        x[:1],
    )


# --- convolution / pooling -------------------------------------------------------------------


def _lift_1d(fn: Adapter) -> Adapter:
    """Run a 1-D (N, C, W) window op as 2-D with H = 1: a pure layout change."""

    def wrapped(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
        if x[0] is None or np.asarray(x[0]).ndim != 3:
            return fn(node, a, x)
        b = dict(a)
        for key, unit in (
            ("kernel_shape", 1),
            ("strides", 1),
            ("dilations", 1),
            ("output_padding", 0),
        ):
            if key in b:
                b[key] = [unit, *b[key]]
        if "pads" in b:
            b["pads"] = [0, b["pads"][0], 0, b["pads"][1]]
        y = list(x)
        y[0] = x[0][:, :, None, :]
        if len(y) > 1 and y[1] is not None and np.asarray(y[1]).ndim == 3:
            y[1] = y[1][:, :, None, :]
        plan = fn(node, b, y)
        inner = plan.post

        def post(outs: list[np.ndarray]) -> list[np.ndarray]:
            outs = inner(outs) if inner is not None else outs
            return [outs[0][:, :, 0, :]] + list(outs[1:])

        plan.post = post
        return plan

    return wrapped


@adapter("Conv")
@_lift_1d
def _conv(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _need_2d("Conv2DFusion", x[0])
    w = x[1]
    attrs = L.conv_attrs(a, w.shape[2:], x[0].shape[1], w.shape[0])
    ins = [_nhwc(x[0]), np.ascontiguousarray(w.transpose(0, 2, 3, 1))] + (
        [x[2]] if _opt(x, 2) is not None else []
    )
    return Plan("Conv2DFusion", attrs, ins, _back)


@adapter("ConvTranspose")
@_lift_1d
def _deconv(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _need_2d("Conv2dTransposeFusion", x[0])
    w = x[1]
    attrs = L.deconv_attrs(a, w.shape[2:], x[0].shape[1], w.shape[1])
    ins = [_nhwc(x[0]), np.ascontiguousarray(w.transpose(0, 2, 3, 1))] + (
        [x[2]] if _opt(x, 2) is not None else []
    )
    return Plan("Conv2dTransposeFusion", attrs, ins, _back)


def _pool(node: Node, a: dict[str, Any], x: list[Any], struct: str) -> Plan:
    _need_2d(struct, x[0])
    _only(a, storage_order=lambda v: v == 0)
    attrs = L.pool_attrs(a, indices=len(node.output) > 1)
    mode, pads = attrs["padMode"], attrs["pad"]
    include = struct == "AvgPoolFusion" and int(a.get("count_include_pad", 0))
    if include and (any(pads) or mode == 1):
        if mode != 0 or attrs["roundMode"]:
            raise Skip(
                "count_include_pad=1 with auto_pad/ceil_mode: NNRt average pooling excludes padding"
            )
        # Padding that counts = zero PadFusion first, then an unpadded AvgPoolFusion.
        t, b, l, r = pads
        rows = [[0, 0], [t, b], [l, r], [0, 0]]
        plan = Plan(
            "PadFusion",
            {"paddings": rows, "paddingMode": 0, "constantValue": 0.0},
            [_nhwc(x[0])],
            _back,
        )
        plan.then.append((struct, {**attrs, "pad": [0, 0, 0, 0]}, []))
        return plan
    return Plan(struct, attrs, [_nhwc(x[0])], _back)


@adapter("AveragePool")
@_lift_1d
def _avgpool(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return _pool(node, a, x, "AvgPoolFusion")


@adapter("MaxPool")
@_lift_1d
def _maxpool(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return _pool(node, a, x, "MaxPoolFusion")


@adapter("GlobalAveragePool", "GlobalMaxPool")
@_lift_1d
def _gpool(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    struct = "AvgPoolFusion" if node.op_type == "GlobalAveragePool" else "MaxPoolFusion"
    _need_2d(struct, x[0])
    return Plan(struct, dict(L.GLOBAL_POOL), [_nhwc(x[0])], _back)


@adapter("MatMul")
def _matmul(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    return Plan(
        "MatMulFusion",
        {"transposeA": False, "transposeB": False, "activationType": 0},
        x[:2],
    )


@adapter("Gemm")
def _gemm(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    attrs = {
        "transposeA": bool(a.get("transA", 0)),
        "transposeB": bool(a.get("transB", 0)),
        "activationType": 0,
    }
    c = _opt(x, 2)
    if alpha == 1.0 and beta == 1.0:
        return Plan("MatMulFusion", attrs, [v for v in x[:3] if v is not None])
    if alpha == 0.0:
        raise Skip("alpha=0: no NNRt lowering keeps A@B out")
    # alpha*A@B + beta*C = alpha*(A@B + (beta/alpha)*C): MulFusion on C, MatMulFusion with it
    # as the bias input, then MulFusion by alpha.
    scale = _const(alpha, x[0])
    if c is None:
        plan = Plan("MatMulFusion", attrs, x[:2])
    else:
        plan = Plan("MulFusion", {"activationType": 0}, [c, _const(beta / alpha, c)])
        plan.then.append(("MatMulFusion", attrs, [x[0], x[1], PREV]))
    plan.then.append(("MulFusion", {"activationType": 0}, [scale]))
    return plan


@adapter("Resize")
def _resize(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _need_2d("Resize", x[0])
    attrs = L.resize_attrs(a)
    size_in = L.resize_size(a, _opt(x, 2), _opt(x, 3), x[0].shape)
    return Plan("Resize", attrs, [_nhwc(x[0]), size_in], _back)


@adapter("LSTM")
def _lstm(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, layout=lambda v: v == 0, direction=lambda v: v in ("forward", "bidirectional"),
          input_forget=lambda v: v == 0, clip=lambda v: False,
          activations=lambda v: list(v) in ([b"Sigmoid", b"Tanh", b"Tanh"] * 2, [b"Sigmoid", b"Tanh", b"Tanh"]))  # fmt: skip
    if _opt(x, 7) is not None:
        raise Skip("peephole input P: NNRt LSTM has no peepholes")
    seq_lens = _opt(x, 4)
    xs, w, r = x[0], x[1], x[2]
    if seq_lens is not None and not np.all(np.asarray(seq_lens) == xs.shape[0]):
        raise Skip("sequence_lens shorter than the sequence: NNRt LSTM has no sequence lengths")
    dirs, h = w.shape[0], w.shape[1] // 4
    order = np.concatenate([np.arange(h) + g * h for g in (0, 2, 3, 1)])  # ONNX iofc -> i f g o
    bias = _opt(x, 3)
    b = np.zeros((dirs, 8 * h), xs.dtype) if bias is None else bias
    b = np.concatenate([b[:, : 4 * h][:, order], b[:, 4 * h :][:, order]], axis=1)
    attrs = {"bidirectional": dirs == 2, "hasBias": True, "inputSize": xs.shape[2], "hiddenSize": h, "numLayers": 1,
             "numDirections": dirs, "dropout": 0.0, "zoneoutCell": 0.0, "zoneoutHidden": 0.0, "projSize": 0}  # fmt: skip
    ins = [xs, w[:, order], r[:, order], b]
    h0, c0 = _opt(x, 5), _opt(x, 6)
    batch = xs.shape[1]
    ins.append(h0 if h0 is not None else np.zeros((dirs, batch, h), xs.dtype))
    ins.append(c0 if c0 is not None else np.zeros((dirs, batch, h), xs.dtype))

    def post(outs: list[np.ndarray]) -> list[np.ndarray]:
        y, hn, cn = outs
        seq = y.shape[0]
        return [y.reshape(seq, batch, dirs, h).transpose(0, 2, 1, 3), hn, cn]

    return Plan("LSTM", attrs, ins, post)


# --- quantisation ----------------------------------------------------------------------------


@adapter("QuantizeLinear")
def _quantize(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, block_size=lambda v: v == 0, output_dtype=lambda v: v in (0, 2, 3, 4, 5))
    zp = _opt(x, 2)
    out_dt = np.asarray(zp).dtype if zp is not None else np.dtype(np.uint8)
    dst = _np_type(np.zeros(0, out_dt), "y_zero_point")
    if out_dt not in (np.int8, np.uint8, np.int16, np.uint16):
        raise Skip(f"output dtype {out_dt}: NNRt quantises to 8/16-bit integers only")
    if x[0].dtype != np.float32:
        raise Skip(f"input dtype {x[0].dtype}: QuantDTypeCast srcT float32 only here")
    scale = np.asarray(x[1], np.float64)
    zpv = np.zeros(scale.shape, np.int64) if zp is None else np.asarray(zp, np.int64)
    axis = int(a.get("axis", 1)) if scale.size > 1 else 0
    from ..runtime.quant import QuantParams, scaled

    v = scaled(x[0], QuantParams(scale.reshape(-1), zpv.reshape(-1)), axis=axis).astype(np.float64)
    away = np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))
    if np.any(np.rint(v) != away):
        raise Skip(
            "exact .5 ties: ONNX rounds half to even, NNRt (nnacl round()) half away from zero"
        )
    return Plan("QuantDTypeCastV2", {"srcT": 43, "dstT": dst, "axis": axis}, [x[0], scale, zpv])


@adapter("DequantizeLinear")
def _dequantize(node: Node, a: dict[str, Any], x: list[Any]) -> Plan:
    _only(a, block_size=lambda v: v == 0)
    src = _np_type(x[0], "x")
    if x[0].dtype not in (np.int8, np.uint8, np.int16, np.uint16, np.int32):
        raise Skip(f"input dtype {x[0].dtype}: NNRt dequantises integers only")
    scale = np.asarray(x[1])
    zp = _opt(x, 2)
    zpv = np.zeros(scale.shape, np.int64) if zp is None else np.asarray(zp, np.int64)
    axis = int(a.get("axis", 1)) if scale.size > 1 else 0
    dst = {np.dtype(np.float32): 43, np.dtype(np.float16): 42}.get(scale.dtype)
    if dst is None:
        raise Skip(f"scale dtype {scale.dtype}: no NNRt float DataType for the output")
    return Plan(
        "QuantDTypeCastV2",
        {"srcT": src, "dstT": dst, "axis": axis},
        [x[0], scale.astype(np.float64), zpv],
    )


# ---------------------------------------------------------------------------------------------
# running


_attr_dict = L.attributes


def _array(v: Any) -> Any:
    if type(v).__name__ == "TensorProto":
        from onnx import numpy_helper

        return numpy_helper.to_array(v)
    return v


def _case_inputs(case: Any, inputs: Sequence[Any]) -> list[Any]:
    by_name = {vi.name: _array(v) for vi, v in zip(case.model.graph.input, inputs)}
    node = case.model.graph.node[0]
    return [by_name.get(n) if n else None for n in node.input]


class Runner:
    """Executes plans through a generated ``kernels`` module or, without one, the bindings."""

    def __init__(self, package: str | None = DEFAULT_PACKAGE) -> None:
        self.kernels: ModuleType | None = None
        self.package: ModuleType | None = None
        self.import_error = ""
        self.node_types: dict[str, Any] = {}
        if package:
            try:
                self.kernels = importlib.import_module(package + ".kernels")
                self.package = importlib.import_module(package)
            except Exception as e:  # not generated yet, or a broken build: use the bindings
                self.kernels = self.package = None
                self.import_error = f"{type(e).__name__}: {e}"
        self.round_trip = False
        if self.kernels is not None and self.package is not None:
            nt = getattr(self.package, "NodeType")
            pairs, _, _ = B.match_node_types([m.name for m in nt], list(B.BINDINGS))
            self.node_types = {s: nt[m] for m, s in pairs}
            try:  # nodeAttr round trip only once the Parcel codecs are generated
                probe = self.package.Concat(axis=1)
                self.round_trip = (
                    self.kernels.decode_node_attr(
                        self.node_types["Concat"], self.kernels.encode_node_attr(probe)
                    )
                    == probe
                )
            except Exception:
                self.round_trip = False

    @property
    def mode(self) -> str:
        if self.kernels is None:
            why = f": {self.import_error}" if self.import_error else ""
            return f"binding table (no generated kernels{why})"
        return "generated kernels" + (
            " with nodeAttr Parcel round trip" if self.round_trip else " (no Parcel codec yet)"
        )

    def run(self, plan: Plan) -> list[np.ndarray]:
        out = self._run(plan)
        for struct, attrs, step_inputs in plan.then:
            if not any(v is PREV for v in step_inputs):
                step_inputs = [PREV, *step_inputs]
            ins = [out[0] if v is PREV else v for v in step_inputs]
            out = self._run(Plan(struct, attrs, ins))
        return out

    def _run(self, plan: Plan) -> list[np.ndarray]:
        if self.package is not None and plan.struct not in self.node_types:
            raise Skip(f"{self.package.__name__} has no {plan.struct} operator")
        if self.kernels is None or plan.struct not in self.node_types or plan.extra:
            ns = SimpleNamespace(**{B.attr_name(k): v for k, v in plan.attrs.items()})
            spec = B.stub_spec(plan.struct, "v2_1")
            fn = B.resolve(B.BINDINGS[plan.struct])
            kwargs = {
                p: B.plain(getattr(ns, B.attr_name(f)))
                for f, p in spec.params
                if hasattr(ns, B.attr_name(f))
            }
            return fn(plan.inputs, **kwargs, **plan.extra)
        pkg = self.package
        assert pkg is not None
        cls = getattr(pkg, plan.struct)
        have = {f.name for f in dataclasses.fields(cls)}
        values = {B.attr_name(k): v for k, v in plan.attrs.items()}
        for k, v in list(values.items()):
            # An older schema may lack a field: only its zero value is expressible there.
            if k not in have and v:
                raise Skip(f"{pkg.__name__}.{plan.struct} has no {k} (needed: {v!r})")
            if k not in have:
                del values[k]
        attrs = cls(**{k: _typed(cls, k, v) for k, v in values.items()})
        nt = self.node_types[plan.struct]
        if self.round_trip:
            attrs = self.kernels.decode_node_attr(nt, self.kernels.encode_node_attr(attrs))
        return self.kernels.KERNELS[nt](attrs, plan.inputs)  # type: ignore[no-any-return]


def _typed(cls: type, name: str, v: Any) -> Any:
    """Coerce a plain value to the dataclass field's enum type when it has one."""
    hints = typing.get_type_hints(cls)
    t = hints.get(name)
    if (
        isinstance(t, type)
        and issubclass(t, int)
        and not isinstance(v, bool)
        and t is not int
        and t is not bool
    ):
        return t(v)
    return v


@dataclass
class Outcome:
    op: str
    name: str
    status: str  # "pass" | "fail" | "skip"
    detail: str = ""


def _compare(got: list[np.ndarray], want: list[np.ndarray], rtol: float, atol: float) -> str:
    if len(got) < len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape} != {w.shape}"
        same_kind = g.dtype == w.dtype or (g.dtype.kind in "iu" and w.dtype.kind in "iu")
        if not same_kind:
            return f"output {i}: dtype {g.dtype} != {w.dtype}"
        if w.dtype.kind in "OUS":
            return f"output {i}: string tensors"
        if w.dtype.kind in "fc":
            try:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
            except AssertionError as e:
                return f"output {i}: " + str(e).strip().splitlines()[-1][:200]
        elif not np.array_equal(g, w):
            return f"output {i}: values differ"
    return ""


def iter_cases() -> Iterator[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            cases = collect_testcases(None)
    for c in cases:
        if c.kind == "node":
            yield c


def case_op(case: Any) -> str:
    """The ONNX operator a case tests (an ``_expanded`` case tests its base operator)."""
    if "_expanded" in case.name:
        return _base_op(case)
    return str(case.model.graph.node[0].op_type)


_OP_NAMES: dict[str, str] = {}


def _base_op(case: Any) -> str:
    """``test_layer_normalization_2d_axis0_expanded`` -> ``LayerNormalization (expanded)``."""
    if not _OP_NAMES:
        import onnx.defs

        for s in onnx.defs.get_all_schemas():
            _OP_NAMES[s.name.lower()] = s.name
    stem = case.name.removeprefix("test_").split("_expanded")[0].split("_")
    for n in range(len(stem), 0, -1):
        name = _OP_NAMES.get("".join(stem[:n]))
        if name:
            return f"{name} (expanded)"
    return f"{stem[0]} (expanded)"


def is_mapped(case: Any) -> bool:
    """Every node of the case's graph maps onto an NNRt operator (``Constant`` is data)."""
    return all(n.op_type in ADAPTERS or n.op_type == "Constant" for n in case.model.graph.node)


def _constant(node: Node) -> np.ndarray:
    from onnx import numpy_helper

    a = _attr_dict(node)
    if "value" in a:
        return np.asarray(numpy_helper.to_array(a["value"]))
    for key, dt in (("value_float", np.float32), ("value_floats", np.float32), ("value_int", np.int64),
                    ("value_ints", np.int64)):  # fmt: skip
        if key in a:
            return np.asarray(a[key], dtype=dt)
    raise Skip(f"Constant with {sorted(a)}: not a tensor value")


def _run_node(runner: Runner, node: Node, ins: list[Any]) -> list[np.ndarray]:
    plan = ADAPTERS[node.op_type](node, _attr_dict(node), ins)
    with np.errstate(all="ignore"):
        got = runner.run(plan)
        if plan.post is not None:
            got = plan.post(list(got))
    return list(got)


def run_case(runner: Runner, case: Any) -> Outcome:
    graph = case.model.graph
    op = case_op(case)
    for inputs, outputs in case.data_sets:
        env: dict[str, Any] = {vi.name: _array(v) for vi, v in zip(graph.input, inputs)}
        try:
            for node in graph.node:
                if node.op_type == "Constant":
                    env[node.output[0]] = _constant(node)
                    continue
                ins = [env.get(n) if n else None for n in node.input]
                try:
                    got = _run_node(runner, node, ins)
                except Skip as s:
                    raise Skip(
                        str(s) if len(graph.node) == 1 else f"{node.op_type} node: {s}"
                    ) from None
                present = [i for i, n in enumerate(node.output) if n]
                for i in present:
                    if i < len(got):
                        env[node.output[i]] = got[i]
        except Skip as s:
            return Outcome(op, case.name, "skip", str(s))
        except KernelError as e:
            return Outcome(op, case.name, "fail", f"KernelError: {e}")
        except Exception as e:  # a crash is a failure, reported with its type
            return Outcome(op, case.name, "fail", f"{type(e).__name__}: {e}")
        missing = [vi.name for vi in graph.output if vi.name not in env]
        if missing:
            return Outcome(op, case.name, "fail", f"outputs {missing} not produced")
        got_out = [env[vi.name] for vi in graph.output]
        msg = _compare(got_out, [_array(o) for o in outputs], case.rtol, case.atol)
        if msg:
            return Outcome(op, case.name, "fail", msg)
    return Outcome(op, case.name, "pass")


def run_conformance(
    package: str | None = DEFAULT_PACKAGE,
) -> tuple[list[Outcome], Runner]:
    runner = Runner(package)
    outcomes = [run_case(runner, c) for c in iter_cases() if is_mapped(c)]
    return outcomes, runner


def summary(outcomes: Sequence[Outcome]) -> str:
    c = Counter(o.status for o in outcomes)
    return (
        f"conformance: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped "
        f"of {len(outcomes)} mapped ONNX cases"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m idlgen.runtime.conformance",
        description=__doc__.split("\n\n")[0],
    )
    ap.add_argument(
        "--package",
        default=DEFAULT_PACKAGE,
        help="generated NNRt package (default: %(default)s)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="list every skip and failure")
    args = ap.parse_args(argv)
    try:
        outcomes, runner = run_conformance(args.package)
    except ImportError as e:
        print(f"conformance needs the 'onnx' package: {e}", file=sys.stderr)
        return 2
    print(f"kernels: {runner.mode}")
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        per[o.op][o.status] += 1
    w = max(len(k) for k in per) if per else 10
    print(f"{'ONNX op':<{w}}  pass  fail  skip")
    for op in sorted(per):
        c = per[op]
        print(f"{op:<{w}}  {c['pass']:>4}  {c['fail']:>4}  {c['skip']:>4}")
    for o in outcomes:
        if o.status == "fail" or (args.verbose and o.status == "skip"):
            print(f"  {o.status.upper()} {o.name}: {o.detail}")
    print(summary(outcomes))
    return 1 if any(o.status == "fail" for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
