"""The Jinja environment over the shipped ``templates/`` folder (``idlgen.templates``)."""

from __future__ import annotations

import functools

import jinja2

from ..resources import resource_dir

__all__ = ["env"]


@functools.cache
def env() -> jinja2.Environment:
    """Templates only print what views computed: no autoescape, strict undefined names."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
