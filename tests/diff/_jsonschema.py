"""A validator for the subset of JSON Schema that ``report.schema.json`` uses.

Supported: type (name or list), enum, required, properties, additionalProperties (bool), items,
uniqueItems, minimum, pattern, and local ``$ref`` (``#/...``). Anything else in the schema is an
error, so the subset cannot silently grow past what is checked.
"""

from __future__ import annotations

import json
import re
from typing import Any

_KNOWN = {
    "$schema",
    "$id",
    "$defs",
    "title",
    "description",
    "type",
    "enum",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "uniqueItems",
    "minimum",
    "pattern",
    "$ref",
}
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith("#/"), ref
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node  # type: ignore[no-any-return]


def validate(
    value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, where: str = "$"
) -> list[str]:
    root = root or schema
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"unsupported JSON Schema keywords at {where}: {sorted(unknown)}")
    if "$ref" in schema:
        return validate(value, _resolve(root, schema["$ref"]), root, where)
    errors: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            return [f"{where}: expected {types}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        for k in schema.get("required", ()):
            if k not in value:
                errors.append(f"{where}: missing {k!r}")
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                errors += validate(v, props[k], root, f"{where}.{k}")
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{where}: unexpected key {k!r}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errors += validate(v, schema["items"], root, f"{where}[{i}]")
    if isinstance(value, list) and schema.get("uniqueItems") is True:
        seen = [json.dumps(v, sort_keys=True) for v in value]
        if len(set(seen)) != len(seen):
            errors.append(f"{where}: items are not unique")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "minimum" in schema:
        if value < schema["minimum"]:
            errors.append(f"{where}: {value} < {schema['minimum']}")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{where}: {value!r} does not match {schema['pattern']}")
    return errors
