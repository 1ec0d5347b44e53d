"""``python -m idlgen.runtime.conformance``: the ONNX conformance run of the NNRt kernels.

The harness itself is tool code in :mod:`idlgen.tools.onnx_conformance` (it needs ``onnx``);
this module only keeps the documented command, and the runtime never imports it.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from idlgen.tools.onnx_conformance import main

    sys.exit(main())
