"""The hand-written binding table: NNRt attribute struct -> runtime function, IDL field -> parameter.

Every field of every operator struct must be decided here: bound to a keyword parameter of the
runtime function, or listed as ``Ignored("why")``. ``check_bindings`` compares the table with a
schema's struct fields so that adding a field to the IDL without deciding what it means fails the
build. Versions differ only where ``ABSENT`` says so (fields a struct lacks in that version).
"""

from __future__ import annotations

import importlib
import inspect
import keyword
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "Binding",
    "Ignored",
    "BINDINGS",
    "ABSENT",
    "StubSpec",
    "stub_spec",
    "stub_specs",
    "check_bindings",
    "binding_problems",
    "BindingProblem",
    "attr_name",
    "plain",
    "resolve",
    "call",
    "match_node_types",
]


@dataclass(frozen=True)
class Ignored:
    """A schema field the runtime deliberately does not read, with the reason."""

    reason: str


@dataclass(frozen=True)
class Binding:
    """``func`` is ``"module:function"`` (module relative to ``idlgen.runtime`` or absolute)."""

    func: str
    params: Mapping[str, str | Ignored] = field(default_factory=dict)

    @property
    def module(self) -> str:
        mod = self.func.split(":", 1)[0]
        return mod if "." in mod else f"idlgen.runtime.{mod}"

    @property
    def function(self) -> str:
        return self.func.split(":", 1)[1]


_NHWC = Ignored("informational: NNRt runs NHWC regardless (NNRt's builders default it to NCHW)")
_ACT = "activation"


def _b(func: str, **params: str | Ignored) -> Binding:
    return Binding(func, params)


def _none(func: str) -> Binding:
    return Binding(func, {})


_POOL: dict[str, str | Ignored] = dict(
    kernelSize="kernel_size", strides="strides", pad="pad", padMode="pad_mode", roundMode="round_mode",
    format=_NHWC, global_="global_pool", activationType=_ACT,
)  # fmt: skip
_CONV: dict[str, str | Ignored] = dict(
    kernelSize="kernel_size", stride="stride", dilation="dilation", padMode="pad_mode", padList="pad_list",
    group="group", inChannel="in_channel", outChannel="out_channel", activationType=_ACT,
)  # fmt: skip


def _kw(d: Mapping[str, str | Ignored]) -> dict[str, str | Ignored]:
    # ``global`` cannot be a Python keyword argument name; the table's key is the IDL name.
    return {k.rstrip("_") if k == "global_" else k: v for k, v in d.items()}


#: Struct name -> binding. Field names are the IDL names.
BINDINGS: dict[str, Binding] = {
    "Abs": _none("elementwise:abs_"),
    "Activation": _b("activations:activation", activationType="activation_type", alpha="alpha",
                     minVal="min_val", maxVal="max_val", approximate="approximate"),
    "AddFusion": _b("elementwise:add", activationType=_ACT),
    "All": _b("reduce:all_", keepDims="keep_dims"),
    "ArgMaxFusion": _b("reduce:argmax", axis="axis", topK="top_k", keepDims="keep_dims",
                       outMaxValue="out_max_value"),
    "Assert": _b("misc:assert_", summarize="summarize"),
    "AvgPoolFusion": Binding("pool:avg_pool", _kw(_POOL)),
    "BatchToSpaceND": _b("shape:batch_to_space_nd", blockShape="block_shape", crops="crops"),
    "BiasAdd": _none("elementwise:bias_add"),
    "BroadcastTo": _b("shape:broadcast_to", shape="shape"),
    "Cast": _none("shape:cast"),
    "Ceil": _none("elementwise:ceil"),
    "Clip": _b("elementwise:clip", max="max_val", min="min_val"),
    "Concat": _b("shape:concat", axis="axis"),
    "Conv2DFusion": Binding("conv:conv2d", _CONV),
    "Conv2dTransposeFusion": Binding("conv:conv2d_transpose", {**_CONV, "outputPaddings": "output_paddings"}),
    "Cos": _none("elementwise:cos"),
    "ConstantOfShape": _b("shape:constant_of_shape", dataType="data_type", value="value"),
    "Crop": _b("shape:crop", axis="axis", offset="offset"),
    "DetectionPostProcess": _b(
        "detection:detection_post_process", format=_NHWC,
        inputSize=Ignored("informational: the model input size; decoding uses the anchors"),
        scale="scale", nmsIoUThreshold="nms_iou_threshold", nmsScoreThreshold="nms_score_threshold",
        maxDetections="max_detections", detectionsPerClass="detections_per_class",
        maxClassesPerDetection="max_classes_per_detection", numClasses="num_classes",
        useRegularNms="use_regular_nms",
        outQuantized=Ignored("output dtype is decided by the output tensors (the executor requantises)"),
    ),
    "DepthToSpace": _b("shape:depth_to_space", blockSize="block_size", format=_NHWC, mode="mode"),
    "DivFusion": _b("elementwise:div", activationType=_ACT),
    "Eltwise": _b("elementwise:eltwise", mode="mode"),
    "Equal": _none("elementwise:equal"),
    "ExpFusion": _b("elementwise:exp", base="base", scale="scale", shift="shift"),
    "ExpandDims": _none("shape:expand_dims"),
    "Flatten": _b("shape:flatten", axis="axis"),
    "Floor": _none("elementwise:floor"),
    "Fill": _none("shape:fill"),
    "FullConnection": _b("conv:full_connection", hasBias="has_bias", useAxis="use_axis", axis="axis",
                         activationType=_ACT),
    "FusedBatchNorm": _b("norm:batch_norm", epsilon="epsilon"),
    "Gather": _none("gather:gather"),
    "GatherNd": _none("gather:gather_nd"),
    "Greater": _none("elementwise:greater"),
    "GreaterEqual": _none("elementwise:greater_equal"),
    "InstanceNorm": _b("norm:instance_norm", epsilon="epsilon"),
    "LayerNormFusion": _b("norm:layer_norm", beginNormAxis="begin_norm_axis", epsilon="epsilon",
                          elementwiseAffine="elementwise_affine", beginParamsAxis="begin_params_axis"),
    "LeakyRelu": _b("activations:leaky_relu", negativeSlope="negative_slope"),
    "Less": _none("elementwise:less"),
    "LessEqual": _none("elementwise:less_equal"),
    "Log": _none("elementwise:log"),
    "LogicalAnd": _none("elementwise:logical_and"),
    "LogicalNot": _none("elementwise:logical_not"),
    "LogicalOr": _none("elementwise:logical_or"),
    "LRN": _b("norm:lrn", depthRadius="depth_radius", bias="bias", alpha="alpha", beta="beta",
              normRegion="norm_region"),
    "L2NormalizeFusion": _b("norm:l2_normalize", axis="axis", epsilon="epsilon", activationType=_ACT),
    "LSTM": _b(
        "recurrent:lstm", bidirectional="bidirectional", hasBias="has_bias", inputSize="input_size",
        hiddenSize="hidden_size", numLayers="num_layers", numDirections="num_directions",
        dropout=Ignored("training only: inference applies no dropout"),
        zoneoutCell="zoneout_cell", zoneoutHidden="zoneout_hidden", projSize="proj_size",
    ),
    "MatMulFusion": _b("conv:matmul", transposeA="transpose_a", transposeB="transpose_b", activationType=_ACT),
    "Maximum": _none("elementwise:maximum"),
    "MaxPoolFusion": Binding("pool:max_pool", _kw(_POOL)),
    "Minimum": _none("elementwise:minimum"),
    "Mod": _none("elementwise:mod"),
    "MulFusion": _b("elementwise:mul", activationType=_ACT),
    "Neg": _none("elementwise:neg"),
    "NotEqual": _none("elementwise:not_equal"),
    "OneHot": _b("gather:one_hot", axis="axis"),
    "PadFusion": _b("shape:pad", paddings="paddings", paddingMode="padding_mode", constantValue="constant_value"),
    "PowFusion": _b("elementwise:power", scale="scale", shift="shift"),
    "PReLUFusion": _b("elementwise:prelu", channelShared="channel_shared"),
    "QuantDTypeCast": _b("quant:quant_dtype_cast", srcT="src_t", dstT="dst_t"),
    "QuantDTypeCastV2": _b("quant:quant_dtype_cast_v2", srcT="src_t", dstT="dst_t", axis="axis"),
    "Rank": _none("shape:rank"),
    "Range": _b("shape:range_", dataType="data_type", start="start", limit="limit", delta="delta"),
    "Reciprocal": _none("elementwise:reciprocal"),
    "RealDiv": _none("elementwise:real_div"),
    "ReduceFusion": _b("reduce:reduce", keepDims="keep_dims", mode="mode", reduceToEnd="reduce_to_end",
                       coeff="coeff"),
    "Reshape": _none("shape:reshape"),
    "Resize": _b(
        "resize:resize", method="method", newHeight="new_height", newWidth="new_width",
        preserveAspectRatio="preserve_aspect_ratio", coordinateTransformMode="coordinate_transform_mode",
        cubicCoeff="cubic_coeff", excludeOutside="exclude_outside",
        extrapolationValue=Ignored("only TF crop-and-resize samples outside the input; NNRt has no such mode"),
        nearestMode="nearest_mode",
    ),
    "Round": _none("elementwise:round_"),
    "Rsqrt": _none("elementwise:rsqrt"),
    "ScaleFusion": _b("elementwise:scale", axis="axis", activationType=_ACT),
    "ScatterNd": _none("gather:scatter_nd"),
    "Select": _none("elementwise:select"),
    "Shape": _none("shape:shape"),
    "Sin": _none("elementwise:sin"),
    "SliceFusion": _b("shape:slice_", axes="axes"),
    "Softmax": _b("norm:softmax", axis="axis"),
    "LogSoftmax": _b("norm:log_softmax", axis="axis"),
    "SpaceToBatchND": _b("shape:space_to_batch_nd", blockShape="block_shape", paddings="paddings"),
    "SpaceToDepth": _b("shape:space_to_depth", blockSize="block_size", format=_NHWC),
    "SparseToDense": _none("gather:sparse_to_dense"),
    "Split": _b("shape:split", outputNum="output_num", sizeSplits="size_splits", axis="axis"),
    "Sqrt": _none("elementwise:sqrt"),
    "Square": _none("elementwise:square"),
    "SquaredDifference": _none("elementwise:squared_difference"),
    "Squeeze": _b("shape:squeeze", axis="axis"),
    "Stack": _b("shape:stack", axis="axis"),
    "StridedSlice": _b("shape:strided_slice", beginMask="begin_mask", endMask="end_mask",
                       ellipsisMask="ellipsis_mask", newAxisMask="new_axis_mask",
                       shrinkAxisMask="shrink_axis_mask"),
    "SubFusion": _b("elementwise:sub", activationType=_ACT),
    "TileFusion": _b("shape:tile", dims="dims"),
    "TopKFusion": _b("reduce:topk", sorted="sorted", axis="axis"),
    "Transpose": _none("shape:transpose"),
    "Unsqueeze": _b("shape:unsqueeze", axis="axis"),
    "Unstack": _b("shape:unstack", axis="axis"),
    "Where": _none("elementwise:where"),
    "Erf": _none("elementwise:erf_"),
}  # fmt: skip

#: Fields that a struct does not have in a given schema version (everything else is shared).
ABSENT: dict[str, dict[str, frozenset[str]]] = {
    "v1_0": {"MaxPoolFusion": frozenset({"roundMode"})},  # added in v2_0
}


def _version(version: str) -> str:
    m = re.search(r"v\d+_\d+", version)
    return m.group(0) if m else version


def _fields(binding: Binding, struct: str, version: str) -> dict[str, str | Ignored]:
    absent = ABSENT.get(_version(version), {}).get(struct, frozenset())
    return {f: p for f, p in binding.params.items() if f not in absent}


def attr_name(field_name: str) -> str:
    """The generated dataclass attribute for an IDL field (keywords get a trailing ``_``)."""
    return f"{field_name}_" if keyword.iskeyword(field_name) else field_name


@dataclass(frozen=True)
class StubSpec:
    """What the generator needs to render one kernel stub."""

    struct: str
    module: str  # import path, e.g. "idlgen.runtime.pool"
    function: str  # e.g. "avg_pool"
    params: tuple[
        tuple[str, str], ...
    ]  # ordered (IDL field, keyword parameter); ignored fields omitted
    ignored: tuple[tuple[str, str], ...]  # (IDL field, reason)


def stub_spec(struct: str, version: str, field_order: Sequence[str] | None = None) -> StubSpec:
    """The stub for ``struct`` in ``version``; ``field_order`` (schema order) orders the pairs."""
    b = BINDINGS[struct]
    fields = _fields(b, struct, version)
    order = list(field_order) if field_order is not None else list(fields)
    params = tuple((f, p) for f in order if isinstance(p := fields.get(f), str))
    ignored = tuple((f, p.reason) for f in order if isinstance(p := fields.get(f), Ignored))
    return StubSpec(struct, b.module, b.function, params, ignored)


def stub_specs(struct_fields: Mapping[str, Sequence[str]], version: str) -> dict[str, StubSpec]:
    """``stub_spec`` for every bound struct of a schema, in schema field order."""
    return {s: stub_spec(s, version, f) for s, f in struct_fields.items() if s in BINDINGS}


def resolve(binding: Binding) -> Callable[..., list[np.ndarray]]:
    fn = getattr(importlib.import_module(binding.module), binding.function)
    return fn  # type: ignore[no-any-return]


class BindingProblem(NamedTuple):
    """One disagreement between the table and a schema: the struct (and field) it is about."""

    struct: str
    field: str
    message: str


def check_bindings(struct_fields: Mapping[str, Sequence[str]], version: str) -> list[str]:
    """Human-readable problems between a schema's operator structs and the table (empty = ok).

    ``struct_fields`` maps each operator attribute struct to its field names in schema order.
    """
    return [p.message for p in binding_problems(struct_fields, version)]


def binding_problems(
    struct_fields: Mapping[str, Sequence[str]], version: str
) -> list[BindingProblem]:
    """``check_bindings`` with the struct/field each message is about (for diagnostics spans)."""
    out: list[BindingProblem] = []
    v = _version(version)

    def err(struct: str, fld: str, msg: str) -> None:
        out.append(BindingProblem(struct, fld, f"{v}: {msg}"))

    for struct, fields in struct_fields.items():
        b = BINDINGS.get(struct)
        if b is None:
            err(struct, "", f"struct {struct} has no runtime binding")
            continue
        bound = _fields(b, struct, v)
        for f in fields:
            if f not in bound:
                err(
                    struct,
                    f,
                    f"{struct}.{f} is in the schema but has no binding (bind it or mark it Ignored)",
                )
        for f in bound:
            if f not in fields:
                err(struct, f, f"{struct}.{f} is bound but not in the schema")
        for f in sorted(ABSENT.get(v, {}).get(struct, frozenset())):
            if f in fields:
                err(
                    struct,
                    f,
                    f"{struct}.{f} is declared absent in {v} but the schema has it",
                )
        try:
            fn = resolve(b)
        except (ImportError, AttributeError) as e:
            err(struct, "", f"{struct} binds {b.func}, which does not exist ({e})")
            continue
        sig = inspect.signature(fn)
        accepted = {
            n
            for n, p in sig.parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }
        params = {f: p for f, p in bound.items() if isinstance(p, str)}
        for f, p in params.items():
            if p not in accepted:
                err(
                    struct,
                    f,
                    f"{struct} binds a parameter {p!r} that {b.func} does not accept",
                )
        for n, prm in sig.parameters.items():
            if (
                prm.kind is prm.KEYWORD_ONLY
                and prm.default is prm.empty
                and n not in params.values()
            ):
                err(
                    struct,
                    "",
                    f"{b.func} requires {n!r} but {struct} binds no field to it",
                )
        if len(set(params.values())) != len(params):
            err(struct, "", f"{struct} binds two fields to the same parameter")
    return out


def plain(value: Any) -> Any:
    """Attribute value -> plain Python (enum -> int, sequences -> lists, bytes kept)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Enum):
        return int(value.value)
    if isinstance(value, (int, float, str, bytes)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    return value


def call(
    struct: str,
    attrs: Any,
    inputs: Sequence[np.ndarray],
    *,
    version: str = "v2_1",
    **extra: Any,
) -> list[np.ndarray]:
    """Run ``struct``'s runtime function with the fields read from ``attrs`` (any object with the
    generated attribute names), converted by ``plain``. ``extra`` adds keyword arguments.
    """
    spec = stub_spec(struct, version)
    fn = resolve(BINDINGS[struct])
    kwargs = {p: plain(getattr(attrs, attr_name(f))) for f, p in spec.params}
    kwargs.update(extra)
    return fn(inputs, **kwargs)


def _norm(name: str) -> str:
    return name.upper().replace("_", "")


def match_node_types(
    node_type_members: Sequence[str], struct_names: Sequence[str]
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """Pair ``NodeType`` members with attribute structs by normalised name
    (``NODE_TYPE_AVGPOOL_FUSION`` <-> ``AvgPoolFusion``): upper-case, underscores removed.

    Returns (pairs, unmatched members, unmatched structs); ``NODE_TYPE_NONE`` is expected to stay
    unmatched and is not reported.
    """
    by_norm: dict[str, str] = {}
    for s in struct_names:
        by_norm[_norm(s)] = s
    pairs: list[tuple[str, str]] = []
    unmatched_members: list[str] = []
    used: set[str] = set()
    for m in node_type_members:
        key = _norm(m[len("NODE_TYPE_") :] if m.startswith("NODE_TYPE_") else m)
        found = by_norm.get(key)
        if found is None:
            if m != "NODE_TYPE_NONE":
                unmatched_members.append(m)
            continue
        pairs.append((m, found))
        used.add(found)
    return pairs, unmatched_members, [s for s in struct_names if s not in used]
