"""TFLite builtins against the 96 NNRt v2_1 operators: which NNRt operator(s) express each one.

``TFLITE_TO_NNRT[builtin]`` is the NNRt v2_1 struct (or the exact decomposition, ``+``-joined)
that computes the builtin, or ``""`` when NNRt v2_1 has no operator for it (control flow,
resource variables, hash tables, random numbers, FFT, 3-D convolution, ...). What idlgen imports
today is ``tflite_import._HANDLERS``; :func:`audit` joins the two, both ways, and is what
``idlgen/tools/op_audit.py`` prints for TFLite. :func:`unsupported_reason` words the refusal
truthfully: "NNRt v2_1 has no operator for X" only when that is so.
"""

from __future__ import annotations

__all__ = ["TFLITE_TO_NNRT", "CUSTOM_TO_NNRT", "audit", "nnrt_unused", "unsupported_reason"]

_NONE = ""

#: builtin -> NNRt v2_1 struct(s) that express it exactly ("" = no NNRt operator).
TFLITE_TO_NNRT: dict[str, str] = {
    "ADD": "AddFusion", "AVERAGE_POOL_2D": "AvgPoolFusion", "CONCATENATION": "Concat",
    "CONV_2D": "Conv2DFusion", "DEPTHWISE_CONV_2D": "Conv2DFusion", "DEPTH_TO_SPACE": "DepthToSpace",
    "DEQUANTIZE": "QuantDTypeCastV2", "EMBEDDING_LOOKUP": "Gather", "FLOOR": "Floor",
    "FULLY_CONNECTED": "FullConnection", "HASHTABLE_LOOKUP": _NONE,
    "L2_NORMALIZATION": "L2NormalizeFusion", "L2_POOL_2D": "Square+AvgPoolFusion+Sqrt",
    "LOCAL_RESPONSE_NORMALIZATION": "LRN", "LOGISTIC": "Activation", "LSH_PROJECTION": _NONE,
    "LSTM": "LSTM", "MAX_POOL_2D": "MaxPoolFusion", "MUL": "MulFusion", "RELU": "Activation",
    "RELU_N1_TO_1": "Activation", "RELU6": "Activation", "RESHAPE": "Reshape",
    "RESIZE_BILINEAR": "Resize", "RNN": "FullConnection+AddFusion", "SOFTMAX": "Softmax", "SPACE_TO_DEPTH": "SpaceToDepth",
    "SVDF": "FullConnection+StridedSlice+Concat+MulFusion+ReduceFusion", "TANH": "Activation", "CONCAT_EMBEDDINGS": _NONE, "SKIP_GRAM": _NONE,
    "CALL": "(the subgraph's operators)", "CUSTOM": _NONE, "EMBEDDING_LOOKUP_SPARSE": _NONE, "PAD": "PadFusion",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "FullConnection+AddFusion", "GATHER": "Gather", "BATCH_TO_SPACE_ND": "BatchToSpaceND",
    "SPACE_TO_BATCH_ND": "SpaceToBatchND", "TRANSPOSE": "Transpose", "MEAN": "ReduceFusion",
    "SUB": "SubFusion", "DIV": "DivFusion", "SQUEEZE": "Squeeze", "UNIDIRECTIONAL_SEQUENCE_LSTM": "LSTM",
    "STRIDED_SLICE": "StridedSlice", "BIDIRECTIONAL_SEQUENCE_RNN": "FullConnection+AddFusion+StridedSlice", "EXP": "ExpFusion",
    "TOPK_V2": "TopKFusion", "SPLIT": "Split", "LOG_SOFTMAX": "LogSoftmax", "DELEGATE": _NONE,
    "BIDIRECTIONAL_SEQUENCE_LSTM": "LSTM", "CAST": "Cast", "PRELU": "PReLUFusion",
    "MAXIMUM": "Maximum", "ARG_MAX": "ArgMaxFusion", "MINIMUM": "Minimum", "LESS": "Less",
    "NEG": "Neg", "PADV2": "PadFusion", "GREATER": "Greater", "GREATER_EQUAL": "GreaterEqual",
    "LESS_EQUAL": "LessEqual", "SELECT": "Select", "SLICE": "SliceFusion", "SIN": "Sin",
    "TRANSPOSE_CONV": "Conv2dTransposeFusion", "SPARSE_TO_DENSE": "SparseToDense",
    "TILE": "TileFusion", "EXPAND_DIMS": "ExpandDims", "EQUAL": "Equal", "NOT_EQUAL": "NotEqual",
    "LOG": "Log", "SUM": "ReduceFusion", "SQRT": "Sqrt", "RSQRT": "Rsqrt", "SHAPE": "Shape",
    "POW": "PowFusion", "ARG_MIN": "Neg+ArgMaxFusion", "FAKE_QUANT": _NONE,
    "REDUCE_PROD": "ReduceFusion", "REDUCE_MAX": "ReduceFusion", "PACK": "Stack",
    "LOGICAL_OR": "LogicalOr", "ONE_HOT": "OneHot", "LOGICAL_AND": "LogicalAnd",
    "LOGICAL_NOT": "LogicalNot", "UNPACK": "Unstack", "REDUCE_MIN": "ReduceFusion",
    "FLOOR_DIV": "DivFusion+Floor", "REDUCE_ANY": "LogicalNot+ReduceFusion+LogicalNot",
    "SQUARE": "Square", "ZEROS_LIKE": "Shape+Fill", "FILL": "Fill",
    "FLOOR_MOD": "Mod+NotEqual+Less+LogicalAnd+AddFusion+Where", "RANGE": "Range",
    "RESIZE_NEAREST_NEIGHBOR": "Resize", "LEAKY_RELU": "LeakyRelu",
    "SQUARED_DIFFERENCE": "SquaredDifference", "MIRROR_PAD": "PadFusion", "ABS": "Abs",
    "SPLIT_V": "Split", "UNIQUE": _NONE, "CEIL": "Ceil", "REVERSE_V2": "StridedSlice",
    "ADD_N": "AddFusion", "GATHER_ND": "GatherNd", "COS": "Cos", "WHERE": "Where", "RANK": "Rank",
    "ELU": "Activation", "REVERSE_SEQUENCE": _NONE, "MATRIX_DIAG": _NONE,
    "QUANTIZE": "QuantDTypeCastV2", "MATRIX_SET_DIAG": _NONE, "ROUND": "Round",
    "HARD_SWISH": "Activation", "IF": _NONE, "WHILE": _NONE, "NON_MAX_SUPPRESSION_V4": _NONE,
    "NON_MAX_SUPPRESSION_V5": _NONE, "SCATTER_ND": "ScatterNd", "SELECT_V2": "Where",
    "DENSIFY": "Reshape", "SEGMENT_SUM": _NONE, "BATCH_MATMUL": "MatMulFusion",
    "PLACEHOLDER_FOR_GREATER_OP_CODES": _NONE, "CUMSUM": "MatMulFusion",
    "CALL_ONCE": _NONE, "BROADCAST_TO": "BroadcastTo", "RFFT2D": _NONE, "CONV_3D": _NONE,
    "IMAG": _NONE, "REAL": _NONE, "COMPLEX_ABS": _NONE, "HASHTABLE": _NONE, "HASHTABLE_FIND": _NONE,
    "HASHTABLE_IMPORT": _NONE, "HASHTABLE_SIZE": _NONE, "REDUCE_ALL": "ReduceFusion",
    "CONV_3D_TRANSPOSE": _NONE, "VAR_HANDLE": _NONE, "READ_VARIABLE": _NONE,
    "ASSIGN_VARIABLE": _NONE, "BROADCAST_ARGS": _NONE, "RANDOM_STANDARD_NORMAL": _NONE,
    "BUCKETIZE": _NONE, "RANDOM_UNIFORM": _NONE, "MULTINOMIAL": _NONE, "GELU": "Activation",
    "DYNAMIC_UPDATE_SLICE": _NONE, "RELU_0_TO_1": "Activation", "UNSORTED_SEGMENT_PROD": _NONE,
    "UNSORTED_SEGMENT_MAX": _NONE, "UNSORTED_SEGMENT_SUM": _NONE, "ATAN2": _NONE,
    "UNSORTED_SEGMENT_MIN": _NONE, "SIGN": "Activation", "BITCAST": _NONE, "BITWISE_XOR": _NONE,
    "RIGHT_SHIFT": _NONE, "STABLEHLO_LOGISTIC": "Activation", "STABLEHLO_ADD": "AddFusion",
    "STABLEHLO_DIVIDE": "DivFusion", "STABLEHLO_MULTIPLY": "MulFusion",
    "STABLEHLO_MAXIMUM": "Maximum", "STABLEHLO_RESHAPE": "Reshape", "STABLEHLO_CLAMP": "Maximum+Minimum",
    "STABLEHLO_CONCATENATE": "Concat", "STABLEHLO_BROADCAST_IN_DIM": "Reshape+BroadcastTo",
    "STABLEHLO_CONVOLUTION": "Conv2DFusion", "STABLEHLO_SLICE": "StridedSlice",
    "STABLEHLO_CUSTOM_CALL": _NONE, "STABLEHLO_REDUCE": "ReduceFusion", "STABLEHLO_ABS": "Abs",
    "STABLEHLO_AND": "LogicalAnd", "STABLEHLO_COSINE": "Cos", "STABLEHLO_EXPONENTIAL": "ExpFusion",
    "STABLEHLO_FLOOR": "Floor", "STABLEHLO_LOG": "Log", "STABLEHLO_MINIMUM": "Minimum",
    "STABLEHLO_NEGATE": "Neg", "STABLEHLO_OR": "LogicalOr", "STABLEHLO_POWER": "PowFusion",
    "STABLEHLO_REMAINDER": "Mod", "STABLEHLO_RSQRT": "Rsqrt", "STABLEHLO_SELECT": "Where",
    "STABLEHLO_SUBTRACT": "SubFusion", "STABLEHLO_TANH": "Activation", "STABLEHLO_SCATTER": _NONE,
    "STABLEHLO_COMPARE": "Equal+NotEqual+Greater+GreaterEqual+Less+LessEqual", "STABLEHLO_CONVERT": "Cast", "STABLEHLO_DYNAMIC_SLICE": "Stack+Maximum+Minimum+SliceFusion",
    "STABLEHLO_DYNAMIC_UPDATE_SLICE": _NONE, "STABLEHLO_PAD": "PadFusion", "STABLEHLO_IOTA": "Reshape",
    "STABLEHLO_DOT_GENERAL": "MatMulFusion", "STABLEHLO_REDUCE_WINDOW": "MaxPoolFusion",
    "STABLEHLO_SORT": _NONE, "STABLEHLO_WHILE": _NONE, "STABLEHLO_GATHER": "GatherNd",
    "STABLEHLO_TRANSPOSE": "Transpose", "DILATE": _NONE, "STABLEHLO_RNG_BIT_GENERATOR": _NONE,
    "REDUCE_WINDOW": "MaxPoolFusion", "STABLEHLO_COMPOSITE": "(the decomposition's operators)", "STABLEHLO_SHIFT_LEFT": _NONE,
    "STABLEHLO_CBRT": "PowFusion", "STABLEHLO_CASE": _NONE,
}  # fmt: skip

#: CUSTOM operators (by ``custom_code``) that an NNRt v2_1 operator expresses.
CUSTOM_TO_NNRT: dict[str, str] = {
    "TFLite_Detection_PostProcess": "DetectionPostProcess",
    "Convolution2DTransposeBias": "Conv2dTransposeFusion",  # MediaPipe
}


def _counterpart(op: str) -> str:
    if op.startswith("CUSTOM "):
        return CUSTOM_TO_NNRT.get(op.removeprefix("CUSTOM "), "")
    return TFLITE_TO_NNRT.get(op, "")


def unsupported_reason(op: str, detail: str = "") -> str:
    """Why ``op`` does not import: NNRt v2_1 has no operator for it, or idlgen does not map it
    onto the NNRt operator(s) that would express it yet."""
    nn = _counterpart(op)
    if not nn:
        return f"NNRt v2_1 has no operator for {op}" + (f" ({detail})" if detail else "")
    more = f"; {detail}" if detail else ""
    return f"idlgen does not import {op} onto NNRt yet (NNRt v2_1 {nn}{more})"


def audit(imported: set[str], host: set[str]) -> list[tuple[str, str, str]]:
    """One row per TFLite builtin: (builtin, NNRt v2_1 operator(s) or "", status), status one of
    ``imported`` (onto NNRt operators), ``host`` (NNRt v2_1 has no operator; a host kernel runs
    it), ``not imported yet`` (NNRt has one, idlgen does not map it), ``no NNRt operator``.
    ``imported`` and ``host`` are the importer's own sets (``tflite_import.audit_rows``: this
    module is the importer's table and does not import it)."""
    rows = []
    for op, nn in TFLITE_TO_NNRT.items():
        if op in imported:
            status = "imported"
        elif op in host:
            status = "host" if not nn else "host (not imported onto NNRt yet)"
        elif nn:
            status = "not imported yet"
        else:
            status = "no NNRt operator"
        rows.append((op, nn, status))
    for code, nn in CUSTOM_TO_NNRT.items():
        rows.append((f"CUSTOM {code}", nn, "imported"))
    return rows


def markdown(rows: list[tuple[str, str, str]], all_structs: list[str] | None = None) -> str:
    """The audit as markdown (shipped as ``idlgen/runtime/tflite_ops_audit.md``, printed by
    ``python -m idlgen.tools.op_audit --tflite``): every builtin with its NNRt v2_1 counterpart
    and status, then every NNRt v2_1 operator with the builtins lowered onto it."""
    if all_structs is None:
        from .bindings import BINDINGS

        all_structs = sorted(BINDINGS)
    counts: dict[str, int] = {}
    for _, _, status in rows:
        counts[status] = counts.get(status, 0) + 1
    meaning = {
        "imported": "lowered onto the NNRt operator(s) named (one, or an exact composition)",
        "host": "NNRt v2_1 has no operator; a host kernel (host_tflite) runs it",
        "host (not imported onto NNRt yet)": "NNRt v2_1 can express it; the host runs it meanwhile",
        "not imported yet": "NNRt v2_1 can express it; idlgen refuses it for now",
        "no NNRt operator": "NNRt v2_1 has no operator and idlgen has no host kernel: refused",
    }
    lines = [
        "# TFLite <-> NNRt v2_1 operator audit",
        "",
        "Generated by `python -m idlgen.tools.op_audit --tflite` from",
        "`idlgen/runtime/tflite_ops.py` and the TFLite importer's handlers; a test keeps this file",
        "equal to its output.",
        "",
        f"{len(rows)} TFLite operators (every BuiltinOperator of `schemas/fbs/tflite.fbs`, and the",
        f"CUSTOM operators NNRt expresses), {len(all_structs)} NNRt v2_1 operators.",
        "",
        "| status | TFLite operators | meaning |",
        "|---|---:|---|",
    ]
    lines += [f"| {st} | {counts[st]} | {meaning[st]} |" for st in meaning if st in counts]
    lines += [
        "",
        "## TFLite operators",
        "",
        "| TFLite operator | status | NNRt v2_1 |",
        "|---|---|---|",
    ]
    lines += [f"| {op} | {status} | {nn or '-'} |" for op, nn, status in rows]
    users: dict[str, list[str]] = {n: [] for n in all_structs}
    for op, nn, status in rows:
        if status == "imported":
            for part in sorted(set(p for p in nn.split("+") if p)):
                users.setdefault(part, []).append(op)
    lines += ["", "## NNRt v2_1 operators", "",
              "| NNRt v2_1 operator | TFLite operators lowered onto it |", "|---|---|"]  # fmt: skip
    for n in all_structs:
        got = ", ".join(users[n]) if users[n] else "none (no TFLite operator lowers onto it)"
        lines.append(f"| {n} | {got} |")
    return "\n".join(lines) + "\n"


def nnrt_unused(all_structs: list[str]) -> list[str]:
    """The NNRt v2_1 operators no TFLite builtin maps onto (the other direction of the audit)."""
    used: set[str] = set()
    for nn in list(TFLITE_TO_NNRT.values()) + list(CUSTOM_TO_NNRT.values()):
        used.update(p for p in nn.split("+") if p)
    return sorted(s for s in all_structs if s not in used)
