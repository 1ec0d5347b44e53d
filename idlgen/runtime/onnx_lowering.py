"""ONNX operator -> NNRt attribute translation, shared by the model importer (``onnx_import``)
and the ONNX conformance harness (``idlgen.tools.onnx_conformance``).

Only what depends on the ONNX attributes alone lives here: operator tables, padding order,
activation / convolution / pooling / Resize attribute records. Where the two differ is how
values are laid out (the importer tracks NHWC tensors; the harness transposes arrays), so
that stays with each. Anything NNRt cannot express raises :class:`NotExpressible`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "ACTIVATIONS",
    "BINARY",
    "COMPARE",
    "GLOBAL_POOL",
    "NotExpressible",
    "ShapeUnknown",
    "REDUCE",
    "UNARY",
    "activation",
    "attributes",
    "conv_attrs",
    "deconv_attrs",
    "only",
    "pad_mode",
    "pads",
    "pool_attrs",
    "registry",
    "resize_attrs",
    "resize_size",
    "slice_window",
]


class NotExpressible(Exception):
    """An ONNX attribute or input value with no NNRt counterpart; the message says which."""


class ShapeUnknown(NotExpressible):
    """The lowering needs a shape, or a value, that pinned input dims would make known (a
    dimension left open, a shape subgraph's result): with open input dims the importer asks
    for concrete ones (the model is imported per input shape) instead of a host node."""


F = TypeVar("F")


def registry(table: dict[str, F]) -> Callable[..., Callable[[F], F]]:
    """A decorator ``@register("Op", ...)`` that files the function in ``table`` per op type."""

    def register(*ops: str) -> Callable[[F], F]:
        def deco(fn: F) -> F:
            for op in ops:
                table[op] = fn
            return fn

        return deco

    return register


def attributes(node: Any) -> dict[str, Any]:
    """An ONNX node's attributes as Python values (byte strings decoded)."""
    from .onnx_lite import helper

    out: dict[str, Any] = {}
    for at in node.attribute:
        v = helper.get_attribute_value(at)
        out[at.name] = v.decode() if isinstance(v, bytes) else v
    return out


def only(a: dict[str, Any], **allowed: Callable[[Any], bool]) -> None:
    """Refuse an ONNX attribute whose value NNRt cannot express."""
    for k, ok in allowed.items():
        if k in a and not ok(a[k]):
            raise NotExpressible(f"{k}={a[k]!r} has no NNRt counterpart")


# ONNX op -> NNRt ActivationType for one-input activations with no attributes.
ACTIVATIONS = {"Relu": 1, "Sigmoid": 2, "Tanh": 10, "Softsign": 8, "Softplus": 9, "Sign": 17,
               "HardSwish": 12, "Identity": 15}  # fmt: skip

UNARY = {"Abs": "Abs", "Ceil": "Ceil", "Cos": "Cos", "Erf": "Erf", "Floor": "Floor", "Log": "Log",
         "Neg": "Neg", "Reciprocal": "Reciprocal", "Round": "Round", "Sin": "Sin", "Sqrt": "Sqrt",
         "Not": "LogicalNot"}  # fmt: skip

# Broadcasting binary ops that carry an activationType.
BINARY = {"Add": "AddFusion", "Sub": "SubFusion", "Mul": "MulFusion", "Div": "DivFusion"}

COMPARE = {"Equal": "Equal", "Greater": "Greater", "GreaterOrEqual": "GreaterEqual", "Less": "Less",
           "LessOrEqual": "LessEqual", "And": "LogicalAnd", "Or": "LogicalOr", "Where": "Where"}  # fmt: skip

# ONNX reduction -> NNRt ReduceMode.
REDUCE = {"ReduceMean": 0, "ReduceMax": 1, "ReduceMin": 2, "ReduceProd": 3, "ReduceSum": 4,
          "ReduceSumSquare": 5, "ReduceL1": 6, "ReduceL2": 8}  # fmt: skip

EXP = {"base": -1.0, "scale": 1.0, "shift": 0.0}  # ExpFusion for e**x

GLOBAL_POOL = {"kernelSize": [], "strides": [], "pad": [], "padMode": 0, "roundMode": 0,
               "format": 1, "global": True, "activationType": 0}  # fmt: skip


def activation(code: int, **kw: Any) -> dict[str, Any]:
    """``Activation`` attributes for ActivationType ``code`` (``kw`` overrides the defaults)."""
    attrs: dict[str, Any] = {
        "activationType": code,
        "alpha": 0.0,
        "minVal": 0.0,
        "maxVal": 0.0,
        "approximate": False,
    }
    attrs.update(kw)
    return attrs


_AUTO_PAD = {"NOTSET": 0, "SAME_UPPER": 1, "VALID": 2}


def pads(a: dict[str, Any]) -> list[int]:
    p = list(a.get("pads", [0, 0, 0, 0]))
    return [p[0], p[2], p[1], p[3]]  # ONNX [t, l, b, r] -> NNRt [t, b, l, r]


def pad_mode(a: dict[str, Any]) -> int:
    ap = a.get("auto_pad", "NOTSET")
    if ap not in _AUTO_PAD:
        raise NotExpressible(f"auto_pad={ap}: NNRt SAME puts the extra padding bottom/right only")
    return _AUTO_PAD[ap]


def conv_attrs(
    a: dict[str, Any], kernel: Any, in_channels: int, out_channels: int
) -> dict[str, Any]:
    """``Conv2DFusion`` attributes; ``kernel`` is the OIHW weight shape's spatial part."""
    return {"kernelSize": [int(k) for k in kernel], "stride": list(a.get("strides", [1, 1])),
            "dilation": list(a.get("dilations", [1, 1])), "padMode": pad_mode(a), "padList": pads(a),
            "group": int(a.get("group", 1)), "inChannel": int(in_channels),
            "outChannel": int(out_channels), "activationType": 0}  # fmt: skip


def deconv_attrs(a: dict[str, Any], kernel: Any, in_channels: int, w_out: int) -> dict[str, Any]:
    """``Conv2dTransposeFusion`` attributes; ``w_out`` is the weight's per-group output count."""
    if "output_shape" in a:
        raise NotExpressible(
            "output_shape: NNRt derives the output size from pads and outputPaddings"
        )
    attrs = conv_attrs(a, kernel, in_channels, int(w_out) * int(a.get("group", 1)))
    attrs["outputPaddings"] = list(a.get("output_padding", [0, 0]))
    return attrs


def pool_attrs(a: dict[str, Any], *, indices: bool) -> dict[str, Any]:
    """``MaxPoolFusion`` / ``AvgPoolFusion`` attributes (the caller handles count_include_pad)."""
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        raise NotExpressible("dilations: NNRt pooling has no dilation")
    if indices:
        raise NotExpressible("Indices output: NNRt MaxPoolFusion has one output")
    return {"kernelSize": list(a["kernel_shape"]), "strides": list(a.get("strides", [1, 1])),
            "pad": pads(a), "padMode": pad_mode(a), "roundMode": int(a.get("ceil_mode", 0)),
            "format": 1, "global": False, "activationType": 0}  # fmt: skip


def resize_attrs(a: dict[str, Any], *, upsample: bool = False) -> dict[str, Any]:
    """``Resize`` attributes for ONNX Resize (or the older Upsample: asymmetric, floor)."""
    only(a, antialias=lambda v: v == 0, keep_aspect_ratio_policy=lambda v: v == "stretch",
         coordinate_transformation_mode=lambda v: v in ("half_pixel", "asymmetric", "align_corners",
                                                      "pytorch_half_pixel"),
         mode=lambda v: v in ("nearest", "linear", "cubic", "bilinear"))  # fmt: skip
    ctm = "asymmetric" if upsample else a.get("coordinate_transformation_mode", "half_pixel")
    # pytorch_half_pixel is half_pixel except for an output length of 1 (the caller checks).
    ctm = "half_pixel" if ctm == "pytorch_half_pixel" else ctm
    nm = "floor" if upsample else a.get("nearest_mode", "round_prefer_floor")
    return {"method": {"linear": 0, "bilinear": 0, "nearest": 1, "cubic": 2}[a.get("mode", "nearest")],
            "newHeight": 0, "newWidth": 0, "preserveAspectRatio": False,
            "coordinateTransformMode": {"asymmetric": 0, "align_corners": 1, "half_pixel": 2}[ctm],
            "cubicCoeff": float(a.get("cubic_coeff_a", -0.75)),
            "excludeOutside": int(a.get("exclude_outside", 0)), "extrapolationValue": 0.0,
            "nearestMode": {"round_prefer_floor": 1, "round_prefer_ceil": 2, "floor": 3, "ceil": 4}[nm]}  # fmt: skip


def resize_size(a: dict[str, Any], scales: Any, sizes: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Resize's size input: float32 H/W scales, or int32 H/W sizes, from the ONNX scales or sizes
    (``axes`` applied) of an NCHW input of ``shape``; NNRt resizes H and W only."""
    out = _resize_size(a, scales, sizes, shape)
    if a.get("coordinate_transformation_mode") == "pytorch_half_pixel":
        hw = (
            [int(np.floor(shape[2] * out[0])), int(np.floor(shape[3] * out[1]))]
            if out.dtype.kind == "f"
            else [int(v) for v in out]
        )
        if any(o == 1 and i != 1 for o, i in zip(hw, shape[2:])):
            raise NotExpressible(
                "pytorch_half_pixel with an output length of 1 (not half_pixel there)"
            )
    return out


def _resize_size(a: dict[str, Any], scales: Any, sizes: Any, shape: tuple[int, ...]) -> np.ndarray:
    axes = list(a.get("axes", [0, 1, 2, 3]))
    if scales is not None and np.asarray(scales).size:
        full = dict(zip(axes, [float(v) for v in np.asarray(scales).reshape(-1)]))
        if full.get(0, 1.0) != 1.0 or full.get(1, 1.0) != 1.0:
            raise NotExpressible("scales on N or C: NNRt Resize scales H and W only")
        return np.array([full.get(2, 1.0), full.get(3, 1.0)], np.float32)
    if sizes is not None and np.asarray(sizes).size:
        n, c, h, w = shape
        full_i = dict(zip(axes, [int(v) for v in np.asarray(sizes).reshape(-1)]))
        if full_i.get(0, n) != n or full_i.get(1, c) != c:
            raise NotExpressible("sizes on N or C: NNRt Resize sizes H and W only")
        return np.array([full_i.get(2, h), full_i.get(3, w)], np.int32)
    raise NotExpressible("neither scales nor sizes")


def slice_window(
    shape: Any, axes: list[int], starts: list[int], ends: list[int]
) -> tuple[list[int], list[int]]:
    """``SliceFusion`` begin and size for an ONNX Slice with steps of 1 (negative and
    out-of-range starts/ends clamped as ONNX does)."""
    begin, size = [], []
    for ax, s, e in zip(axes, starts, ends):
        n = int(shape[ax])
        s = min(max(s + n if s < 0 else s, 0), n)
        e = min(max(e + n if e < 0 else e, 0), n)
        begin.append(s)
        size.append(max(e - s, 0))
    return begin, size
