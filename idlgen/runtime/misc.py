"""Control-flavoured operators: Assert."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import KernelError

__all__ = ["assert_"]


def assert_(inputs: Sequence[np.ndarray], *, summarize: int = 3) -> list[np.ndarray]:
    """``Assert``: raise when the condition input is not all true, printing up to ``summarize``
    entries of each data input; otherwise output the condition (MindSpore Lite ``assert.cc``).
    """
    if not inputs:
        raise KernelError("Assert", "needs a condition input")
    cond = np.asarray(inputs[0])
    if not bool(np.all(cond)):
        n = max(int(summarize), 0)
        shown = "; ".join(np.asarray(d).reshape(-1)[:n].tolist().__repr__() for d in inputs[1:])
        raise KernelError("Assert", f"condition is false; data: {shown}")
    return [cond]
