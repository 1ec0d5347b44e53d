"""The Jinja environment over the shipped ``templates/`` folder (``idlgen.templates``)."""

from __future__ import annotations

import functools

import jinja2

from ..resources import resource_dir
from .formatting import docstring_at
from .naming import py_literal, string_literal

__all__ = ["env"]


@functools.cache
def env() -> jinja2.Environment:
    """Templates only print what views computed: no autoescape, strict undefined names."""
    e = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,  # shipped files: no stat() per include (one per record otherwise)
    )
    # ``{{ x.doc | doc(1) }}``: a docstring as black lays it out one level deep, at the line
    # length the render was given (``line_length=`` in the template context; default 100).
    e.filters["doc"] = _doc
    # ``{{ name | py_str }}``: a Python string literal in black's quotes.
    e.filters["py_str"] = string_literal
    # ``{{ value | py_literal }}``: a default or flag value in black's spelling.
    e.filters["py_literal"] = py_literal
    return e


@jinja2.pass_context
def _doc(ctx: jinja2.runtime.Context, literal: str, depth: int) -> str:
    return docstring_at(literal, depth, ctx.get("line_length", 100))
