"""NNRt ``DataType`` numbers (MindSpore TypeId numbering) <-> NumPy dtypes."""

from __future__ import annotations

import numpy as np

from .errors import KernelError

__all__ = ["DATA_TYPES", "to_numpy", "from_numpy", "is_float", "FLOAT_ALIAS"]

# NnrtTypes.idl `enum DataType`; values are facts from the IDL.
DATA_TYPES: dict[int, np.dtype[np.generic]] = {
    30: np.dtype(np.bool_),
    32: np.dtype(np.int8),
    33: np.dtype(np.int16),
    34: np.dtype(np.int32),
    35: np.dtype(np.int64),
    37: np.dtype(np.uint8),
    38: np.dtype(np.uint16),
    39: np.dtype(np.uint32),
    40: np.dtype(np.uint64),
    42: np.dtype(np.float16),
    43: np.dtype(np.float32),
    44: np.dtype(np.float64),
}
_BY_DTYPE = {v: k for k, v in DATA_TYPES.items()}

#: MindSpore's generic ``kNumberTypeFloat`` (41) means float32 in practice.
FLOAT_ALIAS = {41: 43}


def to_numpy(data_type: int, *, op: str = "DataType") -> np.dtype[np.generic]:
    code = FLOAT_ALIAS.get(int(data_type), int(data_type))
    try:
        return DATA_TYPES[code]
    except KeyError:
        raise KernelError(op, f"unsupported DataType {int(data_type)}") from None


def from_numpy(dtype: np.dtype[np.generic] | type, *, op: str = "DataType") -> int:
    try:
        return _BY_DTYPE[np.dtype(dtype)]
    except KeyError:
        raise KernelError(op, f"NumPy dtype {np.dtype(dtype)} has no NNRt DataType") from None


def is_float(a: np.ndarray) -> bool:
    return bool(np.issubdtype(a.dtype, np.floating))
