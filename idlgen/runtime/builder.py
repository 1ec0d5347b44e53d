"""Build an NNRt ``Model`` from NumPy arrays: tensors, nodes and one shared constant buffer.

    from idlgen.prebuilt.ohos.hdi.nnrt import v2_1 as nnrt
    b = ModelBuilder(nnrt)
    x = b.input("x", np.float32, [1, 8, 8, 3])
    w = b.constant("w", weights)                      # packed into the shared buffer
    y = b.node(nnrt.Conv2DFusion(kernelSize=[3, 3], stride=[1, 1], dilation=[1, 1],
                                 padMode=nnrt.PadMode.PAD_MODE_SAME, group=1), [x, w])
    b.output(y)
    model, buffers = b.build()
    (out,) = execute(model, [image], buffers=buffers)

The generated package is a parameter, so the builder makes that version's real dataclasses
(v1_0 or v2_1). ``nodeAttr`` is encoded with the package's ``kernels.encode_node_attr`` (or an
``encode`` callable you pass).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from .bindings import match_node_types
from .dtypes import from_numpy
from .errors import KernelError
from .host import HostKernel, HostNode, no_nnrt_operator, segments

__all__ = ["ModelBuilder"]

_ALIGN = 64  # constants start on cache-line boundaries inside the shared buffer


class ModelBuilder:
    """Accumulates tensors and nodes; ``build()`` returns ``(Model, {fd: bytes})``."""

    def __init__(
        self,
        package: ModuleType,
        *,
        name: str = "model",
        fd: int = 0,
        encode: Callable[[Any], bytes] | None = None,
        nnrt_only: bool = False,
    ) -> None:
        self.pkg = package
        #: Refuse host nodes (``load(..., nnrt_only=True)``): the model must be NNRt alone.
        self.nnrt_only = nnrt_only
        #: Operators that run on the host between NNRt nodes (see :mod:`.host`).
        self.host_nodes: list[HostNode] = []
        #: Control-flow bodies: (subgraph name, its nodes, inputs, outputs), placed after the
        #: main graph's nodes by ``build`` (see :meth:`body`).
        self._bodies: list[_Body] = []
        self.name = name
        self.fd = fd
        self._encode = encode
        self.tensors: list[Any] = []
        self.nodes: list[Any] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self._data = bytearray()
        members = [m.name for m in package.NodeType]
        self._node_type = {
            s: package.NodeType[m] for m, s in match_node_types(members, _struct_names(package))[0]
        }

    # -- tensors ------------------------------------------------------------------------------

    def tensor(
        self,
        name: str,
        dtype: Any = np.float32,
        dims: Sequence[int] = (),
        *,
        quant: Sequence[tuple[float, int]] | tuple[float, int] | None = None,
        num_bits: int = 8,
    ) -> int:
        """Declare a tensor (no data); returns its index. ``quant`` = (scale, zeroPoint) or a
        list of them (per channel)."""
        p = self.pkg
        dims = [int(d) for d in dims]
        t = p.Tensor(
            name=name,
            dataType=p.DataType(from_numpy(np.dtype(dtype))),
            dims=dims,
            format=p.Format.FORMAT_NHWC if len(dims) == 4 else p.Format.FORMAT_NONE,
        )
        if quant is not None:
            pairs = [quant] if isinstance(quant, tuple) else list(quant)
            t.quantParams = [
                p.QuantParam(numBits=num_bits, zeroPoint=int(z), scale=float(s)) for s, z in pairs
            ]
        self.tensors.append(t)
        return len(self.tensors) - 1

    def input(self, name: str, dtype: Any = np.float32, dims: Sequence[int] = (), **kw: Any) -> int:
        i = self.tensor(name, dtype, dims, **kw)
        self.inputs.append(i)
        return i

    def constant(self, name: str, value: Any, *, dtype: Any = None, **kw: Any) -> int:
        """A constant tensor whose bytes are appended to the shared buffer."""
        arr = np.asarray(value, dtype=dtype, order="C")  # ascontiguousarray makes 0-d 1-d
        i = self.tensor(name, arr.dtype, arr.shape, **kw)
        pad = (-len(self._data)) % _ALIGN
        self._data.extend(b"\0" * pad)
        off = len(self._data)
        self._data.extend(arr.tobytes())
        self.tensors[i].data = self.pkg.SharedBuffer(
            fd=self.fd, bufferSize=0, offset=off, dataSize=arr.nbytes
        )
        return i

    def output(self, *indices: int) -> None:
        self.outputs.extend(indices)

    # -- nodes --------------------------------------------------------------------------------

    def node(
        self,
        attrs: Any,
        inputs: Sequence[int],
        *,
        outputs: int | Sequence[str | tuple[str, Any, Sequence[int]]] = 1,
        name: str = "",
        out_dtype: Any = np.float32,
        quantized: bool = False,
    ) -> int | list[int]:
        """Add an operator given its attribute record; new output tensors are made for it.

        ``outputs`` is a count or a list of names / (name, dtype, dims). Returns the output index
        (or the list when there are several)."""
        struct = type(attrs).__name__
        nt = self._node_type.get(struct)
        if nt is None:
            raise KernelError(
                "ModelBuilder",
                f"{struct} is not an operator attribute struct of {self.pkg.__name__}",
            )
        nname = name or f"{struct.lower()}_{len(self.nodes)}"
        specs = (
            [f"{nname}:{k}" for k in range(outputs)] if isinstance(outputs, int) else list(outputs)
        )
        out_idx = []
        for s in specs:
            if isinstance(s, str):
                out_idx.append(self.tensor(s, out_dtype))
            else:
                out_idx.append(self.tensor(s[0], s[1], s[2]))
        node = self.pkg.Node(
            name=nname,
            nodeType=nt,
            nodeAttr=self._encode_attrs(attrs),
            inputIndex=[int(i) for i in inputs],
            outputIndex=out_idx,
            quantType=self.pkg.QuantType(1 if quantized else 0),
        )
        self.nodes.append(node)
        return out_idx[0] if len(out_idx) == 1 else out_idx

    def host(
        self,
        op: str,
        fn: HostKernel,
        inputs: Sequence[int],
        *,
        outputs: Sequence[tuple[str, Any, Sequence[int]]],
        name: str = "",
        why: str = "",
    ) -> list[int]:
        """Add an operator that runs on the host (see :mod:`.host`); returns its output tensor
        indices. ``why`` says why NNRt does not run it; with ``nnrt_only`` it is the refusal."""
        from .program import UnsupportedModelError

        hname = name or f"{op.lower()}_host{len(self.host_nodes)}"
        if self.nnrt_only:
            raise UnsupportedModelError(op, hname, why or no_nnrt_operator(op))
        out_idx = [
            self.tensor(n, dt if dt is not None else np.float32, dims) for n, dt, dims in outputs
        ]
        for i, (_, dt, _) in zip(out_idx, outputs):
            if dt is None:
                self.tensors[i].dataType = self.pkg.DataType(0)
        self.host_nodes.append(
            HostNode(
                op, hname, tuple(int(i) for i in inputs), tuple(out_idx), fn, len(self.nodes), why
            )
        )
        return out_idx

    def body(
        self, name: str, model: Any, buffers: dict[int, bytes], host: Sequence[HostNode]
    ) -> list[HostNode]:
        """Absorb a control-flow branch or body (an imported ``model`` with its constant
        ``buffers`` and ``host`` nodes) as subgraph ``<model name>_<name>`` of this model: its
        tensors join ``allTensors`` (constants rebased into the shared buffer), its nodes follow
        the main graph's. Returns its host nodes with their tensor indices moved along; the
        host kernel finds the subgraph by name when it is bound to the final ``Model``."""
        off = len(self.tensors)
        data = buffers.get(0, b"")
        pad = (-len(self._data)) % _ALIGN
        self._data.extend(b"\0" * pad)
        base = len(self._data)
        self._data.extend(data)
        for t in model.allTensors:
            t = type(t).from_dict(t.to_dict()) if hasattr(t, "to_dict") else t
            if t.data is not None and t.data.dataSize:
                t.data = self.pkg.SharedBuffer(
                    fd=self.fd,
                    bufferSize=0,
                    offset=int(t.data.offset) + base,
                    dataSize=int(t.data.dataSize),
                )
            self.tensors.append(t)
        nodes = []
        for n in model.nodes:
            nodes.append(
                self.pkg.Node(
                    name=n.name,
                    nodeType=n.nodeType,
                    nodeAttr=bytes(n.nodeAttr),
                    inputIndex=[int(i) + off for i in n.inputIndex],
                    outputIndex=[int(i) + off for i in n.outputIndex],
                    quantType=n.quantType,
                )
            )
        # The body's own run order is its main subgraph; its further subgraphs (NNRt segments,
        # bodies of control flow inside it) come along, renamed under this body's name.
        full = f"{self.name}_{name}"
        subs = list(model.subGraph)
        main = [int(i) for i in subs[0].nodeIndices] if subs else list(range(len(nodes)))
        extra = []
        for sg in subs[1:]:
            rest = str(sg.name).removeprefix(f"{model.name}_")
            extra.append(
                (
                    f"{full}_{rest}",
                    [int(i) for i in sg.nodeIndices],
                    [int(i) + off for i in sg.inputIndices],
                    [int(i) + off for i in sg.outputIndices],
                )
            )
        self._bodies.append(
            _Body(
                full,
                nodes,
                main,
                [int(i) + off for i in model.inputIndex],
                [int(i) + off for i in model.outputIndex],
                extra,
            )
        )
        return [
            HostNode(
                h.op,
                h.name,
                tuple(i + off if i >= 0 else i for i in h.inputs),
                tuple(i + off for i in h.outputs),
                h.fn,
                h.position,
                h.why,
            )
            for h in host
        ]

    def _encode_attrs(self, attrs: Any) -> bytes:
        if self._encode is not None:
            return bytes(self._encode(attrs))
        try:
            kernels = importlib.import_module(self.pkg.__name__ + ".kernels")
        except ImportError:
            kernels = None
        if kernels is not None:
            try:
                return bytes(kernels.encode_node_attr(attrs))
            except TypeError as e:  # the package was generated without Parcel codecs
                raise KernelError(
                    "ModelBuilder", f"cannot encode nodeAttr ({e}); pass encode="
                ) from None
        if hasattr(attrs, "to_parcel"):
            return bytes(attrs.to_parcel())
        raise KernelError(
            "ModelBuilder",
            f"{self.pkg.__name__} has no kernels.encode_node_attr; pass encode=",
        )

    # -- result -------------------------------------------------------------------------------

    def build(self) -> tuple[Any, dict[int, bytes]]:
        data = bytes(self._data)
        for t in self.tensors:
            if t.data.dataSize:
                t.data.bufferSize = len(data)
        p = self.pkg
        sub = p.SubGraph(
            name=f"{self.name}_main",
            inputIndices=list(self.inputs),
            outputIndices=list(self.outputs),
            nodeIndices=list(range(len(self.nodes))),
        )
        subs = [sub]
        if self.host_nodes:
            subs += self._segments()
        nodes = list(self.nodes)
        for body in self._bodies:
            start = len(nodes)
            nodes += body.nodes
            subs.append(
                p.SubGraph(
                    name=body.name,
                    inputIndices=body.inputs,
                    outputIndices=body.outputs,
                    nodeIndices=[start + i for i in body.main],
                )
            )
            for name, rel, ins, outs in body.extra:
                subs.append(
                    p.SubGraph(
                        name=name,
                        inputIndices=ins,
                        outputIndices=outs,
                        nodeIndices=[start + i for i in rel],
                    )
                )
        model = p.Model(
            name=self.name,
            inputIndex=list(self.inputs),
            outputIndex=list(self.outputs),
            nodes=nodes,
            allTensors=list(self.tensors),
            subGraph=subs,
        )
        return model, {self.fd: data}

    def _segments(self) -> list[Any]:
        """The NNRt subgraphs between host nodes, as NNRt would be handed them: each reads the
        tensors it does not produce (other than constants) and writes what anything after it,
        a host node or the model, reads."""
        p = self.pkg
        spans = segments(len(self.nodes), self.host_nodes)
        wanted = set(self.outputs)
        for h in self.host_nodes:
            wanted.update(i for i in h.inputs if i >= 0)
        consts = {i for i, t in enumerate(self.tensors) if t.data is not None and t.data.dataSize}
        out = []
        for k, (a, b) in enumerate(spans):
            made: set[int] = set()
            reads: list[int] = []
            for n in self.nodes[a:b]:
                for t in n.inputIndex:
                    if t not in made and t not in consts and t not in reads:
                        reads.append(int(t))
                made.update(int(t) for t in n.outputIndex)
            later = set(wanted)
            for n in self.nodes[b:]:
                later.update(int(t) for t in n.inputIndex)
            writes = [t for n in self.nodes[a:b] for t in n.outputIndex if t in later]
            out.append(
                p.SubGraph(
                    name=f"{self.name}_nnrt{k}",
                    inputIndices=reads,
                    outputIndices=[int(t) for t in writes],
                    nodeIndices=list(range(a, b)),
                )
            )
        return out


@dataclass
class _Body:
    """A control-flow body absorbed by ``ModelBuilder.body``: its nodes (tensor indices already
    moved), its run order and further subgraphs as indices into those nodes."""

    name: str
    nodes: list[Any]
    main: list[int]
    inputs: list[int]
    outputs: list[int]
    extra: list[tuple[str, list[int], list[int], list[int]]]


def _struct_names(package: ModuleType) -> list[str]:
    from .bindings import BINDINGS

    return [s for s in BINDINGS if hasattr(package, s)]
