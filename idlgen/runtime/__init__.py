"""Hand-written NumPy runtime for NNRt operators (NHWC, MindSpore Lite semantics).

Each operator is a plain function ``op(inputs, *, attr=...) -> list[np.ndarray]`` in a family
module (``elementwise``, ``activations``, ``conv``, ``pool``, ``norm``, ``shape``, ``resize``,
``reduce``, ``gather``, ``recurrent``, ``detection``, ``quant``, ``misc``). ``bindings`` maps every
NNRt attribute struct onto them; ``nnrt.execute`` runs a whole ``Model``.
"""

from __future__ import annotations

from .errors import KernelError
from .loader import load
from .program import Program, UnsupportedModelError

__all__ = ["KernelError", "Program", "UnsupportedModelError", "load"]
