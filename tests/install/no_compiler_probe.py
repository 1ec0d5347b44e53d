"""Run in a subprocess: use the committed generated packages and the model runtime with lark,
jinja2 and black made unimportable, then prove none of them was imported.

Exit 0 and print "ok" on success; any failure is a traceback and a non-zero exit.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

BLOCKED = ("lark", "jinja2", "black")


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{name} is blocked: runtime profile", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
for mod in list(sys.modules):
    assert mod.split(".")[0] not in BLOCKED, mod

import numpy as np  # noqa: E402

from generated.armnnSerializer import DataType, SerializedGraph, TensorInfo  # noqa: E402
from generated.ohos.hdi.nnrt import v2_1 as P  # noqa: E402
from generated.ohos.hdi.nnrt.v2_1 import kernels as K  # noqa: E402
from idlgen.runtime.builder import ModelBuilder  # noqa: E402
from idlgen.runtime.nnrt import execute  # noqa: E402

# Parcel, dict and nodeAttr codecs of an HDI struct.
conv = P.Conv2DFusion(
    kernelSize=[3, 3], stride=[1, 1], dilation=[1, 1], padList=[1, 1, 1, 1], group=1,
    inChannel=3, outChannel=8, activationType=P.ActivationType.ACTIVATION_TYPE_RELU,
)  # fmt: skip
assert P.Conv2DFusion.from_parcel(conv.to_parcel()) == conv
assert P.Conv2DFusion.from_dict(conv.to_dict()) == conv
assert K.decode_node_attr(P.NodeType.NODE_TYPE_CONV2D_FUSION, K.encode_node_attr(conv)) == conv

# FlatBuffers binary, JSON and dict codecs of a table.
info = TensorInfo(dimensions=[1, 3, 5], dataType=DataType.Float16, quantizationScale=0.5)
assert TensorInfo.from_flatbuffer(info.to_flatbuffer()) == info
assert TensorInfo.from_dict(info.to_dict()) == info
graph = SerializedGraph(inputIds=[1, 2], outputIds=[3])
assert SerializedGraph.from_flatbuffer(graph.to_flatbuffer()) == graph
assert TensorInfo.from_json(info.to_json()) == info

# A model on the NumPy runtime: Conv2D + ReLU, checked against a direct NumPy computation.
rng = np.random.default_rng(0)
x = rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
w = rng.standard_normal((2, 1, 1, 3)).astype(np.float32)  # OHWI, 1x1
b = ModelBuilder(P, name="probe")
xi = b.input("x", np.float32, x.shape)
y = b.node(
    P.Conv2DFusion(
        kernelSize=[1, 1], stride=[1, 1], dilation=[1, 1], padMode=P.PadMode.PAD_MODE_VALID,
        group=1, inChannel=3, outChannel=2,
        activationType=P.ActivationType.ACTIVATION_TYPE_RELU,
    ),
    [xi, b.constant("w", w)],
)  # fmt: skip
b.output(y)
model, buffers = b.build()
(got,) = execute(model, [x], buffers=buffers)
want = np.maximum(np.einsum("nhwc,oc->nhwo", x, w[:, 0, 0, :]), 0)
np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not leaked, leaked
print("ok")
