"""The Python back end: schema IR → view models → Jinja templates → black-formatted modules.

``views``/``naming`` decide every generated name and literal; ``hdi_codec``/``fbs_codec`` add
the Parcel and FlatBuffers codec tables, ``kernels`` the NNRt kernel modules; ``generate``
renders and formats a whole package tree.
"""

from __future__ import annotations

from .generate import GenerateOptions, generate
from .views import Names

__all__ = ["GenerateOptions", "Names", "generate"]
