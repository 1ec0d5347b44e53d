"""Limits that keep hostile schemas cheap: nesting depth, include depth, file size.

The parsers (LALR) are iterative, but lowering and the enum evaluator recurse once per nesting
level; the parser stops at ``MAX_TREE_DEPTH`` levels (``idlgen.frontend.lalr``), which turns
``((((…`` into a located diagnostic instead of a ``RecursionError``. The front end applies the
rest (``frontend.files`` refuses files over ``MAX_SCHEMA_BYTES``).
"""

from __future__ import annotations

__all__ = [
    "MAX_INCLUDE_DEPTH",
    "MAX_INHERITANCE",
    "MAX_SCHEMA_BYTES",
    "MAX_TREE_DEPTH",
    "MAX_TYPE_NESTING",
    "MAX_VALUE_NESTING",
]

# Parse-tree levels (one nesting level of a type or expression is 1-2 tree levels). Real
# schemas stay below 15; the limit leaves the recursive passes far from Python's stack limit.
MAX_TREE_DEPTH = 100
# Nested includes/imports followed recursively.
MAX_INCLUDE_DEPTH = 64
# Nesting of one type (List<…>, Map<…>, trailing []): generated annotations recurse on it.
MAX_TYPE_NESTING = 32
# Struct inheritance levels (each level copies its parent's fields).
MAX_INHERITANCE = 64
# Structs/unions held by value inside each other (S0 holds S1 holds …): the POD and layout
# rules recurse once per level. Real schemas stay below 5.
MAX_VALUE_NESTING = 64
# A schema file larger than this is refused before it is parsed.
MAX_SCHEMA_BYTES = 16 << 20
