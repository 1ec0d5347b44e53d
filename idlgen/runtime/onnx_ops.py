"""What becomes of each ONNX operator on NNRt v2_1: the data behind the op audit
(``python -m idlgen.tools.op_audit``, shipped as ``idlgen/runtime/ops_audit.md``) and behind the
importer's messages ("NNRt v2_1 has no operator for X" only when that is so).

Statuses:

- ``mapped``: one NNRt operator (plus layout moves: Transpose/Reshape);
- ``decomposed``: an exact composition of NNRt operators;
- ``folded``: evaluated at load time (its inputs are constants once input dims are pinned); it
  never becomes an NNRt node;
- ``host``: NNRt v2_1 has no operator for it; a hand-written host kernel (``host_onnx``, or the
  control-flow kernels) runs it;
- ``no NNRt operator``: NNRt v2_1 has no operator or composition for it (data-dependent output
  shapes, strings, sequences, randomness, ...); the ONNX reference implementation runs it on the
  host;
- ``not imported yet``: NNRt v2_1 has the operators to express it; idlgen does not lower it yet
  (it runs on the host meanwhile).

``ONNX[op] = (status, how)``; ``how`` names the NNRt structs or says why not.
"""

from __future__ import annotations

__all__ = ["DECOMPOSED", "FOLDED", "HOST", "MAPPED", "NOT_YET", "NO_NNRT", "ONNX", "status",
           "nnrt_has_no_operator"]  # fmt: skip

MAPPED = "mapped"
DECOMPOSED = "decomposed"
FOLDED = "folded"
HOST = "host"
NO_NNRT = "no NNRt operator"
NOT_YET = "not imported yet"

_ACT = "Activation"

ONNX: dict[str, tuple[str, str]] = {
    # --- mapped onto one NNRt operator ---------------------------------------------------------
    "Abs": (MAPPED, "Abs"),
    "Add": (MAPPED, "AddFusion (MatMulFusion bias when it follows one)"),
    "And": (MAPPED, "LogicalAnd"),
    "ArgMax": (MAPPED, "ArgMaxFusion (select_last_index=0)"),
    "AveragePool": (MAPPED, "AvgPoolFusion (+PadFusion for count_include_pad); 1-D as 2-D"),
    "BatchNormalization": (MAPPED, "FusedBatchNorm, or folded into the Conv before it"),
    "Cast": (MAPPED, "Cast"),
    "Ceil": (MAPPED, "Ceil"),
    "Clip": (MAPPED, "Clip (RELU6 fused into the producer)"),
    "Concat": (MAPPED, "Concat"),
    "ConstantOfShape": (MAPPED, "ConstantOfShape (folded when its shape is constant)"),
    "Conv": (MAPPED, "Conv2DFusion; 1-D as 2-D with height 1"),
    "ConvTranspose": (MAPPED, "Conv2dTransposeFusion; 1-D as 2-D"),
    "Cos": (MAPPED, "Cos"),
    "DepthToSpace": (MAPPED, "DepthToSpace"),
    "DequantizeLinear": (MAPPED, "QuantDTypeCastV2 (folded for constant weights)"),
    "Div": (MAPPED, "DivFusion"),
    "Dropout": (MAPPED, "Activation LINEAR (inference: identity)"),
    "Elu": (MAPPED, "Activation ELU"),
    "Equal": (MAPPED, "Equal"),
    "Erf": (MAPPED, "Erf"),
    "Exp": (MAPPED, "ExpFusion"),
    "Expand": (MAPPED, "BroadcastTo"),
    "Flatten": (MAPPED, "Flatten"),
    "Floor": (MAPPED, "Floor"),
    "Gather": (MAPPED, "Gather (+Squeeze for a scalar index)"),
    "Gelu": (MAPPED, "Activation GELU"),
    "Gemm": (MAPPED, "MatMulFusion (alpha/beta folded into constant B/C)"),
    "GlobalAveragePool": (MAPPED, "AvgPoolFusion global"),
    "GlobalMaxPool": (MAPPED, "MaxPoolFusion global"),
    "Greater": (MAPPED, "Greater"),
    "GreaterOrEqual": (MAPPED, "GreaterEqual"),
    "HardSwish": (MAPPED, "Activation HSWISH"),
    "Identity": (MAPPED, "the same tensor (Activation LINEAR where it must be a node)"),
    "InstanceNormalization": (MAPPED, "InstanceNorm; 1-D as 2-D"),
    "LayerNormalization": (MAPPED, "LayerNormFusion"),
    "LeakyRelu": (MAPPED, "LeakyRelu"),
    "Less": (MAPPED, "Less"),
    "LessOrEqual": (MAPPED, "LessEqual"),
    "Log": (MAPPED, "Log"),
    "LogSoftmax": (MAPPED, "LogSoftmax"),
    "LSTM": (MAPPED, "LSTM (gates reordered)"),
    "MatMul": (MAPPED, "MatMulFusion"),
    "Max": (MAPPED, "Maximum / Eltwise MAXIMUM"),
    "MaxPool": (MAPPED, "MaxPoolFusion; 1-D as 2-D"),
    "Min": (MAPPED, "Minimum"),
    "Mod": (MAPPED, "Mod (fmod=1, or integers)"),
    "Mul": (MAPPED, "MulFusion"),
    "Neg": (MAPPED, "Neg"),
    "Not": (MAPPED, "LogicalNot"),
    "Or": (MAPPED, "LogicalOr"),
    "Pad": (MAPPED, "PadFusion (constant, reflect); Gather for edge, wrap and negative pads"),
    "Pow": (MAPPED, "PowFusion"),
    "PRelu": (MAPPED, "PReLUFusion"),
    "QuantizeLinear": (MAPPED, "QuantDTypeCastV2"),
    "Range": (MAPPED, "Range (folded when constant)"),
    "Reciprocal": (MAPPED, "Reciprocal"),
    "ReduceL1": (MAPPED, "ReduceFusion ASUM"),
    "ReduceL2": (MAPPED, "ReduceFusion L2"),
    "ReduceMax": (MAPPED, "ReduceFusion MAX"),
    "ReduceMean": (MAPPED, "ReduceFusion MEAN"),
    "ReduceMin": (MAPPED, "ReduceFusion MIN"),
    "ReduceProd": (MAPPED, "ReduceFusion PROD"),
    "ReduceSum": (MAPPED, "ReduceFusion SUM"),
    "ReduceSumSquare": (MAPPED, "ReduceFusion SUM_SQUARE"),
    "Relu": (MAPPED, "Activation RELU (fused into the producer)"),
    "Reshape": (MAPPED, "Reshape"),
    "Resize": (MAPPED, "Resize (H, W; pytorch_half_pixel as half_pixel)"),
    "Round": (MAPPED, "Round"),
    "Shape": (MAPPED, "Shape (folded when the shape is static)"),
    "Sigmoid": (MAPPED, "Activation SIGMOID (x*sigmoid(x): SWISH)"),
    "Sign": (MAPPED, "Activation SIGN"),
    "Sin": (MAPPED, "Sin"),
    "Slice": (MAPPED, "SliceFusion; StridedSlice with steps"),
    "Softmax": (MAPPED, "Softmax"),
    "Softplus": (MAPPED, "Activation SOFTPLUS"),
    "Softsign": (MAPPED, "Activation SOFTSIGN"),
    "SpaceToDepth": (MAPPED, "SpaceToDepth"),
    "Split": (MAPPED, "Split"),
    "Sqrt": (MAPPED, "Sqrt"),
    "Squeeze": (MAPPED, "Squeeze"),
    "Sub": (MAPPED, "SubFusion"),
    "Sum": (MAPPED, "AddFusion / Eltwise SUM"),
    "Tanh": (MAPPED, "Activation TANH"),
    "Tile": (MAPPED, "TileFusion"),
    "TopK": (MAPPED, "TopKFusion (largest=1)"),
    "Transpose": (MAPPED, "Transpose (or MatMulFusion transposeB)"),
    "Unsqueeze": (MAPPED, "Unsqueeze"),
    "Upsample": (MAPPED, "Resize"),
    "Where": (MAPPED, "Where"),
    # --- exact compositions ---------------------------------------------------------------------
    "ConvInteger": (DECOMPOSED, "Cast, SubFusion, Conv2DFusion in int32"),
    "DynamicQuantizeLinear": (DECOMPOSED, "ReduceFusion, Maximum, Minimum, DivFusion, Round, Clip, Cast"),
    "Einsum": (DECOMPOSED, "ReduceFusion, Transpose, Reshape, MatMulFusion (1-2 operands, no "
               "diagonals; other forms on the host)"),
    "GatherElements": (DECOMPOSED, "GatherNd with constant coordinates (Concat, Mod)"),
    "GRU": (DECOMPOSED, "unrolled: MatMulFusion, Split, AddFusion/MulFusion/SubFusion with fused "
            "SIGMOID/TANH, Concat"),
    "HardSigmoid": (DECOMPOSED, "Activation HSIGMOID, or MulFusion + AddFusion RELU1"),
    "MatMulInteger": (DECOMPOSED, "Cast, SubFusion, MatMulFusion in int32"),
    "RNN": (DECOMPOSED, "unrolled: MatMulFusion, AddFusion with the fused activation, Concat"),
    "ArgMin": (DECOMPOSED, "Neg, ArgMaxFusion"),
    "CastLike": (MAPPED, "Cast"),
    "Celu": (DECOMPOSED, "DivFusion, Activation ELU, MulFusion"),
    "GatherND": (MAPPED, "GatherNd (batch_dims=0)"),
    "GlobalLpPool": (MAPPED, "ReduceFusion L2 / ASUM (p = 2 / 1)"),
    "Hardmax": (DECOMPOSED, "ArgMaxFusion, OneHot"),
    "IsInf": (DECOMPOSED, "Abs, Equal with infinity"),
    "IsNaN": (DECOMPOSED, "NotEqual(x, x)"),
    "LRN": (MAPPED, "LRN (odd size; alpha / size)"),
    "LpNormalization": (DECOMPOSED, "ReduceFusion L2 / ASUM, DivFusion"),
    "Mean": (DECOMPOSED, "AddFusion / Eltwise SUM, DivFusion"),
    "Mish": (DECOMPOSED, "Activation SOFTPLUS, Activation TANH, MulFusion"),
    "OneHot": (MAPPED, "OneHot"),
    "ReduceLogSum": (DECOMPOSED, "ReduceFusion SUM, Log"),
    "ReduceLogSumExp": (DECOMPOSED, "ReduceFusion MAX, SubFusion, ExpFusion, ReduceFusion SUM, Log, AddFusion"),
    "Scatter": (DECOMPOSED, "ScatterNd with coordinates, Where"),
    "ScatterElements": (DECOMPOSED, "ScatterNd with coordinates (Concat, Mod), Where / AddFusion"),
    "ScatterND": (DECOMPOSED, "ScatterNd, Greater, Where / AddFusion (reduction none/add)"),
    "Selu": (DECOMPOSED, "Activation ELU, MulFusion"),
    "Shrink": (DECOMPOSED, "Less, Greater, AddFusion, SubFusion, Where"),
    "Swish": (DECOMPOSED, "Activation SWISH (alpha = 1), else MulFusion, Activation SIGMOID, MulFusion"),
    "Tan": (DECOMPOSED, "Sin, Cos, DivFusion"),
    "ThresholdedRelu": (DECOMPOSED, "Greater, Where"),
    "Trilu": (DECOMPOSED, "Where with a constant mask"),
    "Xor": (DECOMPOSED, "NotEqual on booleans"),
    "QLinearConv": (DECOMPOSED, "Cast, SubFusion, Conv2DFusion in int32, then Cast, MulFusion, Round, "
                    "AddFusion, Clip, Cast (onnxruntime's requantisation)"),
    "QLinearMatMul": (DECOMPOSED, "Cast, SubFusion, MatMulFusion in int32, then Cast, MulFusion, "
                      "Round, AddFusion, Clip, Cast (onnxruntime's requantisation)"),
    "GroupNormalization": (DECOMPOSED, "Reshape, ReduceFusion MEAN, SubFusion, MulFusion, AddFusion, "
                           "Sqrt, DivFusion"),
    "ai.onnx.ml.Binarizer": (DECOMPOSED, "Greater, Where"),
    "ai.onnx.ml.LinearClassifier": (DECOMPOSED, "MatMulFusion, ArgMaxFusion, Gather, Activation "
                                    "SIGMOID / Softmax (string labels, binary models: host_onnx)"),
    "ai.onnx.ml.LinearRegressor": (DECOMPOSED, "MatMulFusion with the intercepts as bias"),
    "ai.onnx.ml.Normalizer": (DECOMPOSED, "ReduceFusion MAX / ASUM / L2, DivFusion"),
    "ai.onnx.ml.Scaler": (DECOMPOSED, "SubFusion, MulFusion"),
    "Acosh": (DECOMPOSED, "MulFusion, AddFusion, Sqrt, Log"),
    "Asinh": (DECOMPOSED, "Abs, MulFusion, AddFusion, Sqrt, Log, Activation SIGN"),
    "Atanh": (DECOMPOSED, "AddFusion, SubFusion, DivFusion, Log, MulFusion"),
    "Cosh": (DECOMPOSED, "ExpFusion (x, -x), AddFusion, MulFusion"),
    "Sinh": (DECOMPOSED, "ExpFusion (x, -x), SubFusion, MulFusion"),
    "MeanVarianceNormalization": (DECOMPOSED, "ReduceFusion MEAN, MulFusion, SubFusion, Sqrt, AddFusion, DivFusion"),
    # --- folded at load time only ---------------------------------------------------------------
    "Constant": (FOLDED, "a constant tensor"),
    "Size": (FOLDED, "static shapes (Shape and ReduceFusion PROD would compute it)"),
    "EyeLike": (FOLDED, "a constant for a static shape"),
    "HannWindow": (FOLDED, "constant size"),
    "HammingWindow": (FOLDED, "constant size"),
    "BlackmanWindow": (FOLDED, "constant size"),
    "MelWeightMatrix": (FOLDED, "constant inputs"),
    # --- host kernels ---------------------------------------------------------------------------
    "GridSample": (HOST, "host_onnx.grid_sample (data-dependent gather with interpolation)"),
    "If": (HOST, "branches imported as NNRt subgraphs; the choice runs on the host"),
    "Loop": (HOST, "body imported as an NNRt subgraph; the iteration runs on the host"),
    "Scan": (HOST, "body imported as an NNRt subgraph; the slicing and stacking run on the host"),
    "STFT": (HOST, "host_onnx STFT (NNRt v2_1 has no complex/FFT operators)"),
    "DFT": (HOST, "host_onnx DFT (NNRt v2_1 has no complex/FFT operators)"),
    "ai.onnx.ml.ZipMap": (HOST, "a sequence of maps (not a tensor)"),
    # --- NNRt v2_1 has no operator --------------------------------------------------------------
    "Acos": (NO_NNRT, "no inverse trigonometric operators"),
    "Asin": (NO_NNRT, "no inverse trigonometric operators"),
    "Atan": (NO_NNRT, "no inverse trigonometric operators"),
    "Bernoulli": (NO_NNRT, "random"),
    "BitCast": (NO_NNRT, "no bit reinterpretation"),
    "BitShift": (NO_NNRT, "no bitwise operators"),
    "BitwiseAnd": (NO_NNRT, "no bitwise operators"),
    "BitwiseNot": (NO_NNRT, "no bitwise operators"),
    "BitwiseOr": (NO_NNRT, "no bitwise operators"),
    "BitwiseXor": (NO_NNRT, "no bitwise operators"),
    "Compress": (NO_NNRT, "data-dependent output shape"),
    "ConcatFromSequence": (NO_NNRT, "sequences"),
    "CumProd": (NO_NNRT, "no scan operators"),
    "CumSum": (NO_NNRT, "no scan operators"),
    "Det": (NO_NNRT, "no matrix decompositions"),
    "ImageDecoder": (NO_NNRT, "image file decoding"),
    "MaxUnpool": (NO_NNRT, "data-dependent scatter of pooling indices (MaxPoolFusion has no indices)"),
    "MaxRoiPool": (NO_NNRT, "data-dependent regions"),
    "Multinomial": (NO_NNRT, "random"),
    "NonMaxSuppression": (NO_NNRT, "data-dependent output shape (DetectionPostProcess is SSD-only)"),
    "NonZero": (NO_NNRT, "data-dependent output shape"),
    "Optional": (NO_NNRT, "optional values"),
    "OptionalGetElement": (NO_NNRT, "optional values"),
    "OptionalHasElement": (NO_NNRT, "optional values"),
    "RandomNormal": (NO_NNRT, "random"),
    "RandomNormalLike": (NO_NNRT, "random"),
    "RandomUniform": (NO_NNRT, "random"),
    "RandomUniformLike": (NO_NNRT, "random"),
    "RegexFullMatch": (NO_NNRT, "strings"),
    "ReverseSequence": (NO_NNRT, "data-dependent per-batch lengths"),
    "RoiAlign": (NO_NNRT, "data-dependent regions with interpolation"),
    "SequenceAt": (NO_NNRT, "sequences"),
    "SequenceConstruct": (NO_NNRT, "sequences"),
    "SequenceEmpty": (NO_NNRT, "sequences"),
    "SequenceErase": (NO_NNRT, "sequences"),
    "SequenceInsert": (NO_NNRT, "sequences"),
    "SequenceLength": (NO_NNRT, "sequences"),
    "SequenceMap": (NO_NNRT, "sequences"),
    "SplitToSequence": (NO_NNRT, "sequences"),
    "StringConcat": (NO_NNRT, "strings"),
    "StringNormalizer": (NO_NNRT, "strings"),
    "StringSplit": (NO_NNRT, "strings"),
    "TfIdfVectorizer": (NO_NNRT, "n-gram counting"),
    "Unique": (NO_NNRT, "data-dependent output shape"),
    "DeformConv": (NO_NNRT, "data-dependent sampling offsets"),
    "Col2Im": (NO_NNRT, "overlapping scatter-add of blocks"),
    "ai.onnx.ml.ArrayFeatureExtractor": (NO_NNRT, "ai.onnx.ml"),
    "ai.onnx.ml.CastMap": (NO_NNRT, "maps"),
    "ai.onnx.ml.CategoryMapper": (NO_NNRT, "strings"),
    "ai.onnx.ml.DictVectorizer": (NO_NNRT, "maps"),
    "ai.onnx.ml.LabelEncoder": (NO_NNRT, "string/int lookup tables"),
    "ai.onnx.ml.SVMClassifier": (NO_NNRT, "kernel SVM"),
    "ai.onnx.ml.SVMRegressor": (NO_NNRT, "kernel SVM"),
    "ai.onnx.ml.TreeEnsemble": (NO_NNRT, "decision trees"),
    "ai.onnx.ml.TreeEnsembleClassifier": (NO_NNRT, "decision trees"),
    "ai.onnx.ml.TreeEnsembleRegressor": (NO_NNRT, "decision trees"),
    # --- expressible, not imported yet ----------------------------------------------------------
    "AffineGrid": (NOT_YET, "MatMulFusion with a constant base grid"),
    "Attention": (NOT_YET, "MatMulFusion, Softmax, ..."),
    "CausalConvWithState": (NOT_YET, "Concat, Conv2DFusion, SliceFusion"),
    "CenterCropPad": (NOT_YET, "SliceFusion / PadFusion (static shapes)"),
    "LinearAttention": (NOT_YET, "MatMulFusion, ..."),
    "LpPool": (NOT_YET, "Square, AvgPoolFusion, MulFusion, Sqrt (p = 2)"),
    "NegativeLogLikelihoodLoss": (NOT_YET, "GatherElements-style GatherNd, ReduceFusion"),
    "RMSNormalization": (NOT_YET, "ReduceFusion MEAN of Square, Rsqrt, MulFusion"),
    "RotaryEmbedding": (NOT_YET, "Gather, MulFusion, AddFusion, Concat"),
    "SoftmaxCrossEntropyLoss": (NOT_YET, "LogSoftmax, GatherNd, ReduceFusion"),
    "SwiGLU": (NOT_YET, "Split, Activation SWISH, MulFusion"),
    "TensorScatter": (NOT_YET, "ScatterNd, Where"),
    "ai.onnx.ml.FeatureVectorizer": (NOT_YET, "Concat"),
    "ai.onnx.ml.Imputer": (NOT_YET, "NotEqual, Where"),
    "ai.onnx.ml.OneHotEncoder": (NOT_YET, "OneHot (integer categories)"),
}  # fmt: skip


def status(op: str) -> str:
    """The audit status of ``op`` (``domain.op`` outside the default domain)."""
    hit = ONNX.get(op)
    if hit is not None:
        return hit[0]
    return NO_NNRT if "." in op else NOT_YET


def nnrt_has_no_operator(op: str) -> bool:
    """True only when NNRt v2_1 has no operator (nor composition) for ``op``."""
    return status(op) in (HOST, NO_NNRT)
