"""The ONNX importer's view of one value (shared by ``onnx_import`` and ``onnx_decompose``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Val"]


@dataclass
class Val:
    """One ONNX value: its NNRt tensor (once materialised), logical shape and layout."""

    name: str
    dtype: np.dtype[Any] | None
    shape: tuple[int, ...] | None  # logical (ONNX) shape, -1 = unknown dim
    idx: int | None = None
    nhwc: bool = False
    const: np.ndarray | None = None
