"""The IR as JSON-ready data (``idlgen parse --json``)."""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any

from .. import ir

__all__ = ["schema_to_json", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Dataclasses become objects with a ``"node"`` kind; spans become ``{file, line, col}``."""
    if isinstance(obj, ir.Span):
        return {
            "file": obj.file,
            "line": obj.line,
            "col": obj.col,
            "end_line": obj.end_line,
            "end_col": obj.end_col,
        }
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"node": type(obj).__name__}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if f.name == "span" and v is None:
                continue
            out[f.name] = to_jsonable(v)
        return out
    if isinstance(obj, enum.Enum):
        return obj.name
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


def schema_to_json(schema: ir.Schema) -> Any:
    return to_jsonable(schema)
