"""Lower an ONNX graph (opset 11-21) onto NNRt v2_1 operators.

Activations keep their ONNX (NCHW) meaning at the graph boundary; inside, every rank-4 value
has a physical layout (NCHW or NHWC) and layout-sensitive operators (Conv, pooling, Resize,
BatchNorm, ...) take NHWC. A ``Transpose`` node is inserted only where a consumer needs the other
layout, so a CNN runs NHWC from its first convolution to its last. Constant subgraphs (shape
arithmetic, dequantised weights, float16 weights cast to float32) are folded at load time with
ONNX's reference evaluator; BatchNorm after Conv is folded into the weights; ReLU/ReLU6 after
Conv/MatMul/Add, SiLU after Conv, and a bias Add after MatMul, are fused into the producing node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from idlgen.errors import ConfigError, IdlgenError

from . import onnx_lowering as L
from .builder import ModelBuilder
from .onnx_values import Val
from .host import host_reason, not_imported
from .program import Program, UnsupportedModelError, target_package

__all__ = ["import_onnx"]

_TO_NHWC = (0, 2, 3, 1)
_TO_NCHW = (0, 3, 1, 2)
_AXIS_NHWC = (0, 3, 1, 2)  # NCHW axis a lives at physical axis _AXIS_NHWC[a]




_MOVES = frozenset({"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split",
                    "SliceFusion", "Gather", "MaxPoolFusion", "PadFusion", "DepthToSpace",
                    "SpaceToDepth", "BroadcastTo", "TileFusion"})  # fmt: skip


_Unsupported = L.NotExpressible

Handler = Callable[["Importer", Any, dict[str, Any], list["Val | None"]], None]
HANDLERS: dict[str, Handler] = {}
handles = L.registry(HANDLERS)
_attrs = L.attributes


def _unit_move(shape: tuple[int, ...]) -> bool:
    """NCHW <-> NHWC moves no data: at most one of C, H*W is not 1 (and N is known)."""
    n, c, h, w = shape
    return n >= 0 and c >= 0 and h >= 0 and w >= 0 and (c == 1 or h * w == 1)


def _phys_shape(shape: tuple[int, ...] | None, nhwc: bool) -> list[int]:
    if shape is None:
        return []
    s = list(shape)
    return [s[i] for i in _TO_NHWC] if nhwc and len(s) == 4 else s


class Importer:
    def __init__(self, model: Any, package: Any) -> None:
        from . import onnx_lite as onnx

        self.onnx = onnx
        self.model = model
        self.pkg = package
        self.opset = next(
            (int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), 13
        )
        g = model.graph
        self.b = ModelBuilder(package, name=g.name or "onnx")
        self.vals: dict[str, Val] = {}
        self.alt: dict[tuple[str, bool], int] = {}
        self.info: dict[str, tuple[np.dtype[Any] | None, tuple[int, ...] | None]] = {}
        self.consumers: Counter[str] = Counter()
        self.graph_outputs = {o.name for o in g.output}
        # name -> (builder node, attrs record): producers that can absorb an activation or bias
        self.fusable: dict[str, tuple[Any, Any]] = {}
        self.users: dict[str, list[Any]] = {}
        # Nodes already lowered as part of an earlier node's pattern (e.g. the Mul of a SiLU).
        self.absorbed: set[int] = set()
        #: How control-flow bodies are imported (set by ``import_onnx``).
        self.load_body: Callable[[Any], Program] | None = None

    # -- values -----------------------------------------------------------------------------

    def _read_info(self) -> None:
        onnx = self.onnx
        src = self.model
        defaulted = [n for n in src.graph.node
                     if n.op_type == "STFT" and not any(a.name == "onesided" for a in n.attribute)]  # fmt: skip
        if defaulted:  # onnx infers a two-sided STFT when `onesided` is left at its default (1)
            src = type(self.model)()
            src.CopyFrom(self.model)
            for n in src.graph.node:
                if n.op_type == "STFT" and not any(a.name == "onesided" for a in n.attribute):
                    at = n.attribute.add()
                    at.name, at.type, at.i = "onesided", onnx.AttributeProto.INT, 1
        try:
            inferred = onnx.shape_inference.infer_shapes(src, data_prop=True)
        except Exception:
            inferred = self.model
        g = inferred.graph
        vis = list(g.input) + list(g.value_info) + list(g.output)
        # If branches: a branch whose condition is a constant is inlined (``_inline_if``)
        stack = [n for n in g.node if n.op_type == "If"]
        while stack:
            for at in stack.pop().attribute:
                if at.type == onnx.AttributeProto.GRAPH:
                    vis += list(at.g.value_info) + list(at.g.output)
                    stack += [n for n in at.g.node if n.op_type == "If"]
        for vi in vis:
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                continue
            dt = None
            if tt.elem_type:
                try:
                    dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type))
                except Exception:
                    dt = None
            shape = None
            if tt.HasField("shape"):
                shape = tuple(
                    int(d.dim_value) if d.HasField("dim_value") else -1 for d in tt.shape.dim
                )
            self.info[vi.name] = (dt, shape)

    def const(self, name: str, arr: np.ndarray) -> Val:
        v = Val(name, arr.dtype, tuple(arr.shape), const=arr)
        self.vals[name] = v
        return v

    def tensor(self, v: Val, nhwc: bool = False) -> int:
        """The NNRt tensor holding ``v`` in the requested layout (rank-4 values only)."""
        rank4 = v.shape is not None and len(v.shape) == 4
        want = nhwc and rank4
        if v.const is not None:
            key = (v.name, want)
            if key not in self.alt:
                arr = np.asarray(v.const.transpose(_TO_NHWC) if want else v.const, order="C")
                self.alt[key] = self.b.constant(v.name + (":nhwc" if want else ""), arr)
            return self.alt[key]
        assert v.idx is not None
        if not rank4 or v.nhwc == want:
            return v.idx
        key = (v.name, want)
        if key not in self.alt and v.shape is not None and _unit_move(v.shape):
            # Only size-1 dims move (e.g. [N, C, 1, 1]): the layouts share one memory order.
            dims = _phys_shape(v.shape, want)
            shp = self.b.constant(f"{v.name}:dims", np.array(dims, np.int64))
            self.alt[key] = self._node(
                "Reshape",
                {},
                [v.idx, shp],
                [(f"{v.name}:{'nhwc' if want else 'nchw'}", v.dtype, dims)],
                f"{v.name}/relayout",
            )[0]
        if key not in self.alt:
            perm = _TO_NHWC if want else _TO_NCHW
            p = self.b.constant(f"{v.name}:perm{''.join(map(str, perm))}", np.array(perm, np.int32))
            self.alt[key] = self._node(
                "Transpose",
                {},
                [v.idx, p],
                [(f"{v.name}:{'nhwc' if want else 'nchw'}", v.dtype, _phys_shape(v.shape, want))],
                f"{v.name}/transpose",
            )[0]
        return self.alt[key]

    def _node(
        self,
        struct: str,
        attrs: dict[str, Any],
        inputs: Sequence[int],
        outs: Sequence[tuple[str, np.dtype[Any] | None, list[int]]],
        name: str,
    ) -> list[int]:
        cls = getattr(self.pkg, struct, None)
        if cls is None:
            raise _Unsupported(f"{self.pkg.__name__} has no {struct}")
        rec = cls.from_dict(attrs)
        specs = [(n, dt if dt is not None else np.float32, dims) for n, dt, dims in outs]
        r = self.b.node(rec, list(inputs), outputs=specs, name=name)
        idx = r if isinstance(r, list) else [r]
        src_q = self.b.tensors[inputs[0]].quantParams if inputs and struct in _MOVES else None
        for i, (_, dt, _) in zip(idx, outs):
            if dt is None:
                self.b.tensors[i].dataType = self.pkg.DataType(0)
            elif src_q and np.dtype(dt).kind in "iu":
                # Data movement keeps quantised values quantised with the same parameters.
                self.b.tensors[i].quantParams = list(src_q)
        self._last = (self.b.nodes[-1], rec)
        return idx

    def emit(
        self,
        struct: str,
        attrs: dict[str, Any],
        inputs: Sequence[int],
        node: Any,
        *,
        nhwc: bool = False,
        outputs: Sequence[str] | None = None,
        fusable: bool = False,
    ) -> list[Val]:
        names = list(node.output) if outputs is None else list(outputs)
        vals = []
        specs = []
        for n in names:
            dt, shape = self.info.get(n, (None, None))
            v = Val(n, dt, shape, nhwc=nhwc and shape is not None and len(shape) == 4)
            vals.append(v)
            specs.append((n, dt, _phys_shape(shape, v.nhwc)))
        idx = self._node(struct, attrs, inputs, specs, node.name or names[0])
        for v, i in zip(vals, idx):
            v.idx = i
            self.vals[v.name] = v
        if fusable:
            self.fusable[names[0]] = self._last
        return vals

    def refuse(self, node: Any, reason: str) -> NoReturn:
        raise UnsupportedModelError(node.op_type, node.name or node.output[0], reason)

    # -- driver -----------------------------------------------------------------------------

    def run(self, source: str) -> Program:
        onnx = self.onnx
        from .onnx_lite import numpy_helper

        g = self.model.graph
        self._read_info()
        inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        nodes = _fold_batchnorm(list(g.node), inits, self.graph_outputs)
        for n in nodes:
            for i in n.input:
                if i:
                    self.consumers[i] += 1
                    self.users.setdefault(i, []).append(n)
        for name, arr in inits.items():
            self.const(name, arr)
        in_names, in_dtypes, in_shapes = [], [], []
        for vi in g.input:
            if vi.name in inits:
                continue
            dt, shape = self.info.get(vi.name, (None, None))
            if dt is None:
                raise UnsupportedModelError("input", vi.name, "input without a tensor type")
            dims = list(shape or [])
            idx = self.b.input(vi.name, dt, dims)
            self.vals[vi.name] = Val(vi.name, dt, shape, idx)
            in_names.append(vi.name)
            in_dtypes.append(dt)
            in_shapes.append(dims)
        from .budget import LOAD_NODE_COST, charge

        charge(LOAD_NODE_COST * len(nodes), f"importing {len(nodes)} nodes")
        for node in nodes:
            self._lower(node)
        out_names = []
        for o in g.output:
            v = self.vals.get(o.name)
            if v is None:
                raise UnsupportedModelError("output", o.name, "graph output is never produced")
            if v.const is not None:
                # A constant output still comes from a node: Identity-like Reshape to itself.
                self.emit_const_output(v)
            self.b.output(self.tensor(v, nhwc=False))
            out_names.append(o.name)
        model, buffers = self.b.build()
        del onnx
        return Program(
            model, buffers, in_names, out_names, source, in_dtypes, in_shapes, self.b.host_nodes
        )

    def emit_const_output(self, v: Val) -> None:
        assert v.const is not None
        arr = v.const
        src = self.tensor(v)
        shp = self.b.constant(v.name + ":shape", np.array(arr.shape, np.int64))
        (i,) = self._node("Reshape", {}, [src, shp], [(v.name, arr.dtype, list(arr.shape))], v.name)
        self.vals[v.name] = Val(v.name, arr.dtype, tuple(arr.shape), i)

    def _lower(self, node: Any) -> None:
        op = node.op_type
        if id(node) in self.absorbed:
            return
        if node.domain not in ("", "ai.onnx"):
            op = f"{node.domain}.{op}"  # e.g. ai.onnx.ml.Scaler: handled like any other op
            if op not in HANDLERS:
                self.on_host(node, [], host_reason(op))
                return
        ins: list[Val | None] = []
        for n in node.input:
            if not n:
                ins.append(None)
                continue
            v = self.vals.get(n)
            if v is None:
                self.refuse(node, f"input {n!r} is not produced by any earlier node")
            ins.append(v)
        a = _attrs(node)
        if op == "Constant":
            self._constant(node, a)
            return
        if op == "If" and self._inline_if(node, ins):
            return
        if self._fold(node, ins):
            return
        self._refine_info(node, ins)
        fn = HANDLERS.get(op)
        if fn is None:
            self.on_host(node, ins, host_reason(op))
            return
        mark = self._mark()
        try:
            fn(self, node, a, ins)
        except _Unsupported as e:
            if isinstance(e, L.ShapeUnknown) and self._open_dims():
                # Pinned dims make this lowerable: the loader imports per input shape.
                raise UnsupportedModelError(op, node.name or node.output[0], str(e)) from None
            self._rollback(mark)
            self.on_host(node, ins, str(e))
        except (IdlgenError, MemoryError):
            raise
        except Exception as e:  # noqa: BLE001 - a form the handler does not expect: not malformed
            self._rollback(mark)
            self.on_host(node, ins, not_imported(op, f"{type(e).__name__}: {e}"))

    # -- host operators -------------------------------------------------------------------------

    def on_host(self, node: Any, ins: list[Val | None], why: str) -> None:
        """Run ``node`` on the host (see :mod:`.host`): its hand-written kernel where
        ``host_onnx`` has one, else the ONNX reference implementation of the operator. With
        ``nnrt_only`` (or no way to run it) it is refused with ``why``."""
        from .onnx_fallback import outer_names, reference_kernel

        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        if self.b.nnrt_only:
            self.refuse(node, why)
        if not ins and node.input:
            ins = [self.vals.get(n) if n else None for n in node.input]
            missing = [n for n, v in zip(node.input, ins) if n and v is None]
            if missing:
                self.refuse(node, f"input {missing[0]!r} is not produced by any earlier node")
        extra = outer_names(node)
        outer = [self.vals.get(n) for n in extra]
        if any(v is None for v in outer):
            self.refuse(node, f"{why}; its body reads values idlgen cannot provide")
        fn = None
        try:
            from . import host_onnx  # hand-written host kernels, where present

            make = getattr(host_onnx, "KERNELS", {}).get(op)
            fn = make(node, _attrs(node), ins) if make is not None else None
            infer = getattr(host_onnx, "SHAPES", {}).get(op)
            if fn is not None and infer is not None:  # output shapes ONNX inference lacks
                for n, ds in zip(node.output, infer(node, _attrs(node), ins)):
                    had = self.info.get(n, (None, None))[1]
                    if not n or ds is None:
                        continue
                    # the kernel's own shape wins where it is whole (onnx infers a two-sided
                    # STFT when `onesided` is left at its default)
                    if (
                        had is None
                        or all(d >= 0 for d in ds[1])
                        or (len(had) == len(ds[1]) and had.count(-1) > ds[1].count(-1))
                    ):
                        self.info[n] = ds
        except ImportError:
            pass
        if fn is None and node.op_type in ("If", "Loop", "Scan") and node.domain in ("", "ai.onnx"):
            from .onnx_control import control_kernel

            described = [(n, v.dtype, v.shape) for n, v in zip(extra, outer) if v is not None]
            try:
                fn = control_kernel(
                    node, self.model.opset_import, ins, described, self.b, self.load_body
                )
            except UnsupportedModelError as e:
                self.refuse(node, f"{why}; its body: {e}")
        if fn is None:
            try:
                fn = reference_kernel(node, self.model.opset_import, extra)
            except Exception as e:  # noqa: BLE001 - the reference cannot run it either
                self.refuse(node, f"{why}; no host kernel ({type(e).__name__})")
        inputs = [self.tensor(v) if v is not None else -1 for v in ins]
        inputs += [self.tensor(v) for v in outer if v is not None]
        outs = []
        for n in node.output:
            dt, shape = self.info.get(n, (None, None))
            outs.append((n or f"{node.name}:unused", dt, list(shape or [])))
        idx = self.b.host(op, fn, inputs, outputs=outs, name=node.name or node.output[0], why=why)
        for n, i in zip(node.output, idx):
            if n:
                dt, shape = self.info.get(n, (None, None))
                self.vals[n] = Val(n, dt, shape, i)

    def _mark(self) -> tuple[int, int, int]:
        return len(self.b.nodes), len(self.b.tensors), len(self.b.host_nodes)

    def _rollback(self, mark: tuple[int, int, int]) -> None:
        """Forget what a handler emitted before it found it cannot lower its node."""
        n_nodes, n_tensors, n_host = mark
        del self.b.nodes[n_nodes:]
        del self.b.tensors[n_tensors:]
        del self.b.host_nodes[n_host:]
        self.alt = {k: i for k, i in self.alt.items() if i < n_tensors}
        for name in [k for k, v in self.vals.items() if v.idx is not None and v.idx >= n_tensors]:
            del self.vals[name]
        kept = {id(n) for n in self.b.nodes}
        self.fusable = {k: v for k, v in self.fusable.items() if id(v[0]) in kept}

    def _constant(self, node: Any, a: dict[str, Any]) -> None:
        from .onnx_lite import numpy_helper

        if "value" in a:
            arr = numpy_helper.to_array(a["value"])
        elif "value_float" in a:
            arr = np.array(a["value_float"], np.float32)
        elif "value_floats" in a:
            arr = np.array(a["value_floats"], np.float32)
        elif "value_int" in a:
            arr = np.array(a["value_int"], np.int64)
        elif "value_ints" in a:
            arr = np.array(a["value_ints"], np.int64)
        else:
            self.refuse(node, f"attribute {sorted(a)} (sparse/string constants have no NNRt type)")
        self.const(node.output[0], np.asarray(arr))

    def _inline_if(self, node: Any, ins: list[Val | None]) -> bool:
        """An ``If`` whose condition is known at load time is its chosen branch: lower that
        branch's nodes in place (they read the enclosing graph's values by name) and alias the
        branch outputs to the node's outputs."""
        from dataclasses import replace

        from .onnx_lite import numpy_helper

        c = ins[0] if ins else None
        if c is None or c.const is None or c.const.size != 1:
            return False
        a = _attrs(node)
        g = a["then_branch" if bool(np.asarray(c.const).reshape(-1)[0]) else "else_branch"]
        if len(g.output) != len(node.output):
            return False
        for t in g.initializer:
            self.const(t.name, numpy_helper.to_array(t))
        nodes = list(g.node)
        for n in nodes:
            for i in n.input:
                if i:
                    self.consumers[i] += 1
                    self.users.setdefault(i, []).append(n)
        for o, bo in zip(node.output, g.output):
            if o:  # the branch output is read where the node output is
                self.consumers[bo.name] += self.consumers[o] + 1
                if o in self.graph_outputs:
                    self.graph_outputs.add(bo.name)
        for n in nodes:
            self._lower(n)
        for o, bo in zip(node.output, g.output):
            if not o:
                continue
            v = self.vals.get(bo.name)
            if v is None:
                self.refuse(node, f"branch output {bo.name!r} is never produced")
            self.vals[o] = replace(v, name=o)
            if o not in self.info and bo.name in self.info:
                self.info[o] = self.info[bo.name]
        return True

    _NO_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                          "Multinomial", "Bernoulli"})  # fmt: skip

    def _fold(self, node: Any, ins: list[Val | None]) -> bool:
        """Evaluate a node at load time when its result does not depend on the model inputs."""
        op = node.op_type
        if op in ("Shape", "Size") and ins[0] is not None and ins[0].const is None:
            shape = ins[0].shape
            if shape is None or any(d < 0 for d in shape):
                return False
            a = _attrs(node)
            if op == "Size":
                self.const(node.output[0], np.array(int(np.prod(shape)), np.int64))
                return True
            r = len(shape)
            s, e = int(a.get("start", 0)), int(a.get("end", r))
            s = min(max(s + r if s < 0 else s, 0), r)
            e = min(max(e + r if e < 0 else e, 0), r)
            self.const(node.output[0], np.array(shape[s:e], np.int64))
            return True
        if op in self._NO_FOLD or not any(v is not None for v in ins):
            if op not in ("ConstantOfShape", "Range") or not ins:
                return False
        if any(v is not None and v.const is None for v in ins):
            return False
        if any(at.type in (at.GRAPH, at.GRAPHS) for at in node.attribute):
            from .onnx_fallback import outer_names

            outer = [self.vals.get(n) for n in outer_names(node)]
            if any(v is None or v.const is None for v in outer):
                return False  # its body reads values known only at run time
        from .budget import STEP_COST, MemoryBudgetError, charge, check_fold, heavy_cost
        from .onnx_fold import fold_node, too_big_to_fold

        consts = [None if v is None else v.const for v in ins]
        out_shapes = [self.info.get(n, (None, None))[1] for n in node.output if n]
        if too_big_to_fold(op, consts, out_shapes) and op in HANDLERS:
            return False  # a generated constant over the budget: an NNRt node makes it
        where = f"constant node {node.name or node.output[0]!r} ({op})"
        check_fold(op, _attrs(node), [None if v is None else v.const for v in ins],
                   [self.info.get(n, (None, None))[1] for n in node.output if n], where)  # fmt: skip
        # a fold is work too: its superlinear part before, its elements after it runs
        charge(heavy_cost(op, consts) + STEP_COST, where)
        quick = fold_node(op, _attrs(node), consts, self.opset)
        charge(sum(c.size for c in consts if c is not None), where)
        if quick is not None:  # NumPy, where it covers the operator (no reference evaluator)
            self._folded(node, quick, where)
            return True
        feeds: dict[str, np.ndarray] = {}
        for n, v in zip(node.input, ins):
            if v is not None and v.const is not None:
                feeds[n] = v.const
        from onnx.reference import ReferenceEvaluator

        try:
            outs = ReferenceEvaluator(self._single_node_model(node, feeds)).run(None, feeds)
        except MemoryError:
            raise MemoryBudgetError(where, 0, 0) from None
        except Exception as e:
            try:  # the reference evaluator lacks some old opset versions of unchanged operators
                outs = ReferenceEvaluator(self._single_node_model(node, feeds, 21)).run(None, feeds)
            except Exception:
                self.refuse(node, f"cannot fold constant node: {type(e).__name__}: {e}")
        self._folded(node, outs, where)
        return True

    def _folded(self, node: Any, outs: Iterable[Any], where: str) -> None:
        """A constant node's results become constants, at their cost in work and memory."""
        from .budget import charge, hold

        for n, arr in zip(node.output, outs):
            if n:
                a = np.asarray(arr)
                self.const(n, a)
                charge(a.size, where)
                hold([a], where)

    def _open_dims(self) -> bool:
        """Whether a graph input has a dimension left open (``load`` without input_shapes)."""
        inits = {t.name for t in self.model.graph.initializer}
        for vi in self.model.graph.input:
            if vi.name in inits:
                continue
            shape = self.info.get(vi.name, (None, None))[1]
            if shape is None or any(d < 0 for d in shape):
                return True
        return False

    def _refine_info(self, node: Any, ins: list[Val | None]) -> None:
        """Output shapes whole-model inference left open because an input was computed (a shape
        subgraph folded here, not by ONNX): infer them again from this node's known inputs."""

        def known(shape: tuple[int, ...] | None) -> bool:
            return shape is not None and all(d >= 0 for d in shape)

        outs = [o for o in node.output if o]
        if all(known(self.info.get(o, (None, None))[1]) for o in outs):
            return
        if any(v is not None and (v.dtype is None or not known(v.shape)) for v in ins):
            return
        onnx = self.onnx
        h = onnx.helper
        inputs, inits = [], []
        for n, v in zip(node.input, ins):
            if v is None:
                continue
            assert v.shape is not None and v.dtype is not None
            if v.const is not None and v.const.size <= 1 << 16:
                inits.append(onnx.numpy_helper.from_array(np.asarray(v.const), n))
            else:
                inputs.append(
                    h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                )
        g = h.make_graph([node], "shape", inputs, [h.make_empty_tensor_value_info(o) for o in outs],
                         initializer=inits)  # fmt: skip
        try:
            m = h.make_model(g, opset_imports=list(self.model.opset_import))
            inferred = onnx.shape_inference.infer_shapes(m, data_prop=True, strict_mode=False)
        except Exception:  # noqa: BLE001 - inference is a best effort; the handler decides
            return
        for vi in list(inferred.graph.output) + list(inferred.graph.value_info):
            if vi.name not in outs or not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            if not tt.HasField("shape"):
                continue
            shape = tuple(int(d.dim_value) if d.HasField("dim_value") else -1 for d in tt.shape.dim)
            old_dt, old = self.info.get(vi.name, (None, None))
            if known(shape) or old is None:
                dt = old_dt
                if dt is None and tt.elem_type:
                    dt = np.dtype(h.tensor_dtype_to_np_dtype(tt.elem_type))
                self.info[vi.name] = (dt, shape)

    def _single_node_model(
        self, node: Any, feeds: dict[str, np.ndarray], opset: int | None = None
    ) -> Any:
        h = self.onnx.helper
        inputs = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                  for n, a in feeds.items()]  # fmt: skip
        outputs = [h.make_empty_tensor_value_info(n) for n in node.output if n]
        g = h.make_graph([node], "fold", inputs, outputs)
        ops = list(self.model.opset_import)
        if opset is not None:
            ops = [h.make_opsetid("", opset)]
        return h.make_model(g, opset_imports=ops)

    # -- shared lowering helpers ------------------------------------------------------------

    def any_nhwc(self, ins: Sequence[Val | None]) -> bool:
        return any(v is not None and v.const is None and v.nhwc for v in ins)

    def try_fuse_activation(
        self, node: Any, x: Val, code: int, structs: tuple[str, ...] | None = None
    ) -> bool:
        """Fold an activation (ReLU/ReLU6, or SiLU into a convolution) into the node that
        produced ``x``; ``x`` must have no other consumer (SiLU's Sigmoid and Mul count as one)."""
        hit = self.fusable.get(x.name)
        uses = 2 if code == 18 else 1
        if hit is None or self.consumers[x.name] != uses or x.name in self.graph_outputs:
            return False
        nnode, rec = hit
        if structs is not None and type(rec).__name__ not in structs:
            return False
        if int(rec.activationType) != 0:
            return False
        rec.activationType = self.pkg.ActivationType(code)
        nnode.nodeAttr = self.b._encode_attrs(rec)
        out = node.output[0]
        self.vals[out] = Val(out, x.dtype, x.shape, x.idx, x.nhwc)
        del self.fusable[x.name]
        return True


def _fold_batchnorm(nodes: list[Any], inits: dict[str, np.ndarray], outputs: set[str]) -> list[Any]:
    """Conv -> BatchNormalization (constant statistics, Conv output used once): scale the
    weights and bias instead (inference-mode BN is an affine map per output channel)."""
    from . import onnx_lite as onnx

    uses: Counter[str] = Counter(i for n in nodes for i in n.input)
    producer = {o: n for n in nodes for o in n.output}
    result: list[Any] = []
    for n in nodes:
        if n.op_type == "BatchNormalization" and len(n.output) == 1 and len(n.input) == 5:
            conv = producer.get(n.input[0])
            params = [inits.get(i) for i in n.input[1:]]
            if (
                conv is not None
                and conv.op_type == "Conv"
                and uses[n.input[0]] == 1
                and n.input[0] not in outputs
                and all(p is not None for p in params)
                and conv.input[1] in inits
                and uses[conv.input[1]] == 1
            ):
                gamma, beta, mean, var = (np.asarray(p, np.float64) for p in params)
                eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
                s = gamma / np.sqrt(var + eps)
                w = inits[conv.input[1]]
                b = inits.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
                b0 = np.zeros(w.shape[0]) if b is None else np.asarray(b, np.float64)
                wn, bn = conv.output[0] + ":w_bn", conv.output[0] + ":b_bn"
                inits[wn] = (w.astype(np.float64) * s.reshape(-1, *([1] * (w.ndim - 1)))).astype(
                    w.dtype
                )
                inits[bn] = ((b0 - mean) * s + beta).astype(w.dtype)
                new = onnx.helper.make_node(
                    "Conv", [conv.input[0], wn, bn], [n.output[0]], name=conv.name or n.name
                )
                new.attribute.extend(conv.attribute)
                # Replace the Conv in place; drop the BN.
                k = result.index(conv)
                result[k] = new
                producer[n.output[0]] = new
                continue
        result.append(n)
    return result


def _need4(v: Val | None, what: str) -> tuple[Val, tuple[int, ...]]:
    """The value and its (rank-4, NCHW) shape."""
    if v is None or v.shape is None:
        raise L.ShapeUnknown(f"{what}: input of unknown rank")
    if len(v.shape) != 4:
        r = len(v.shape) - 2
        raise _Unsupported(f"{what}: {r}-D spatial input; NNRt runs 2-D (NHWC) windows only")
    return v, v.shape


def _i32(imp: Importer, name: str, vals: Sequence[int]) -> int:
    return imp.b.constant(name, np.array(list(vals), np.int32))


# --- convolution / pooling -------------------------------------------------------------------


@handles("Conv")
def _conv(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, shape = _need4(x[0], "Conv")
    w = x[1]
    if w is None or w.const is None:
        raise L.ShapeUnknown("weights computed at run time: NNRt Conv2DFusion weights are constant")
    wt = w.const
    attrs = L.conv_attrs(a, wt.shape[2:], shape[1], wt.shape[0])
    wi = imp.b.constant(w.name + ":ohwi", np.ascontiguousarray(wt.transpose(0, 2, 3, 1)))
    ins = [imp.tensor(xv, True), wi]
    if len(x) > 2 and x[2] is not None:
        ins.append(imp.tensor(x[2]))
    imp.emit("Conv2DFusion", attrs, ins, node, nhwc=True, fusable=True)


@handles("ConvTranspose")
def _deconv(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, shape = _need4(x[0], "ConvTranspose")
    w = x[1]
    if w is None or w.const is None:
        raise L.ShapeUnknown("weights computed at run time")
    wt = w.const
    attrs = L.deconv_attrs(a, wt.shape[2:], shape[1], wt.shape[1])
    wi = imp.b.constant(w.name + ":ihwo", np.ascontiguousarray(wt.transpose(0, 2, 3, 1)))
    ins = [imp.tensor(xv, True), wi]
    if len(x) > 2 and x[2] is not None:
        ins.append(imp.tensor(x[2]))
    imp.emit("Conv2dTransposeFusion", attrs, ins, node, nhwc=True, fusable=True)


def _pool(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None], struct: str) -> None:
    xv, shape = _need4(x[0], node.op_type)
    attrs = L.pool_attrs(a, indices=len(node.output) > 1 and bool(node.output[1]))
    mode, pads = attrs["padMode"], attrs["pad"]
    src = imp.tensor(xv, True)
    if (
        struct == "AvgPoolFusion"
        and int(a.get("count_include_pad", 0))
        and (any(pads) or mode == 1)
    ):
        if mode != 0 or attrs["roundMode"]:
            raise _Unsupported("count_include_pad=1 with auto_pad/ceil_mode")
        t, bo, le, r = pads
        n, c, h, w = shape
        (src,) = imp._node("PadFusion", {"paddings": [[0, 0], [t, bo], [le, r], [0, 0]],
                                         "paddingMode": 0, "constantValue": 0.0}, [src],
                           [(xv.name + ":padded", xv.dtype, [n, h + t + bo, w + le + r, c])],
                           (node.name or node.output[0]) + "/pad")  # fmt: skip
        attrs["pad"] = [0, 0, 0, 0]
    imp.emit(struct, attrs, [src], node, nhwc=True, outputs=node.output[:1])


@handles("MaxPool")
def _maxpool(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    _pool(imp, node, a, x, "MaxPoolFusion")


@handles("AveragePool")
def _avgpool(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    _pool(imp, node, a, x, "AvgPoolFusion")


@handles("GlobalAveragePool", "GlobalMaxPool")
def _gpool(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, shape = _need4(x[0], node.op_type)
    struct = "AvgPoolFusion" if node.op_type == "GlobalAveragePool" else "MaxPoolFusion"
    imp.emit(struct, dict(L.GLOBAL_POOL), [imp.tensor(xv, True)], node, nhwc=True)


@handles("BatchNormalization")
def _bn(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    if int(a.get("training_mode", 0)):
        raise _Unsupported("training_mode=1")
    xv = x[0]
    assert xv is not None
    rank4 = xv.shape is not None and len(xv.shape) == 4
    ins = [imp.tensor(xv, rank4)] + [imp.tensor(v) for v in x[1:5] if v is not None]
    imp.emit("FusedBatchNorm", {"epsilon": float(a.get("epsilon", 1e-5))}, ins, node,
             nhwc=rank4, outputs=node.output[:1])  # fmt: skip


@handles("InstanceNormalization")
def _inorm(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, shape = _need4(x[0], "InstanceNormalization")
    ins = [imp.tensor(xv, True)] + [imp.tensor(v) for v in x[1:3] if v is not None]
    imp.emit("InstanceNorm", {"epsilon": float(a.get("epsilon", 1e-5))}, ins, node, nhwc=True)


@handles("Resize", "Upsample")
def _resize(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, shape = _need4(x[0], node.op_type)
    old_style = node.op_type == "Upsample" or imp.opset < 11  # Resize-10 is Upsample's form
    attrs = L.resize_attrs(a, upsample=old_style)
    if old_style:
        scales_v, sizes_v = (x[1] if len(x) > 1 else None), None
        if scales_v is None and "scales" in a:  # Upsample-7: scales as an attribute
            scales_v = Val(node.name + ":scales", np.dtype(np.float32), (len(a["scales"]),),
                           const=np.array(a["scales"], np.float32))  # fmt: skip
    else:
        scales_v = x[2] if len(x) > 2 else None
        sizes_v = x[3] if len(x) > 3 else None
    consts = [v.const if v is not None else None for v in (scales_v, sizes_v)]
    if not any(c is not None and c.size for c in consts):
        raise L.ShapeUnknown("scales/sizes computed at run time")
    size_in = L.resize_size(a, consts[0], consts[1], shape)
    s = imp.b.constant((node.name or node.output[0]) + ":size", size_in)
    imp.emit("Resize", attrs, [imp.tensor(xv, True), s], node, nhwc=True)


@handles("DepthToSpace", "SpaceToDepth")
def _d2s(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, shape = _need4(x[0], node.op_type)
    attrs: dict[str, Any] = {"blockSize": int(a["blocksize"]), "format": 1}
    if node.op_type == "DepthToSpace":
        attrs["mode"] = a.get("mode", "DCR")
    elif a.get("mode", "DCR") != "DCR":
        raise _Unsupported("mode=CRD")
    imp.emit(node.op_type, attrs, [imp.tensor(xv, True)], node, nhwc=True)


# --- matrix multiplication -------------------------------------------------------------------


@handles("MatMul")
def _matmul(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    va, vb = x[0], x[1]
    assert va is not None and vb is not None
    imp.emit("MatMulFusion", {"transposeA": False, "transposeB": False, "activationType": 0},
             [imp.tensor(va), imp.tensor(vb)], node, fusable=True)  # fmt: skip


@handles("Gemm")
def _gemm(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    va, vb = x[0], x[1]
    vc = x[2] if len(x) > 2 else None
    assert va is not None and vb is not None
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    ta, tb = bool(a.get("transA", 0)), bool(a.get("transB", 0))
    ins = [imp.tensor(va)]
    if vb.const is not None:
        # Constant B: stored [K, N] contiguous and pre-scaled, so the kernel is one BLAS call.
        bm = vb.const.T if tb else vb.const
        ins.append(
            imp.b.constant(vb.name + ":kn", np.ascontiguousarray(bm * alpha if alpha != 1 else bm))
        )
        tb = False
    elif alpha != 1.0:
        raise _Unsupported("alpha != 1 with a computed B")
    else:
        ins.append(imp.tensor(vb))
    if vc is not None:
        if vc.const is not None:
            ins.append(
                imp.b.constant(
                    vc.name + ":bias",
                    np.ascontiguousarray(vc.const * beta if beta != 1 else vc.const),
                )
            )
        elif beta != 1.0:
            raise _Unsupported("beta != 1 with a computed C")
        else:
            ins.append(imp.tensor(vc))
    imp.emit("MatMulFusion", {"transposeA": ta, "transposeB": tb, "activationType": 0}, ins, node,
             fusable=True)  # fmt: skip


# --- elementwise -----------------------------------------------------------------------------

_ACT = {**L.ACTIVATIONS, "Dropout": 15}  # inference Dropout is the identity


def _unary_layout(imp: Importer, x: Val) -> tuple[int, bool]:
    nhwc = x.const is None and x.nhwc
    return imp.tensor(x, nhwc), nhwc


def _act(imp: Importer, node: Any, x: Val, code: int, **kw: Any) -> None:
    attrs = L.activation(code, **kw)
    t, nhwc = _unary_layout(imp, x)
    imp.emit("Activation", attrs, [t], node, nhwc=nhwc, outputs=node.output[:1])


@handles(*_ACT)
def _simple_act(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    code = _ACT[node.op_type]
    if code == 1 and imp.try_fuse_activation(node, xv, 1):
        return
    if code == 2:
        # x * sigmoid(x) (SiLU, as exported from PyTorch): one SWISH activation.
        out = node.output[0]
        users = imp.users.get(out, [])
        if (len(users) == 1 and users[0].op_type == "Mul" and out not in imp.graph_outputs
                and sorted(users[0].input) == sorted([xv.name, out])):  # fmt: skip
            imp.absorbed.add(id(users[0]))
            if not imp.try_fuse_activation(users[0], xv, 18, structs=("Conv2DFusion",)):
                _act(imp, users[0], xv, 18)
            return
    if code == 15:  # Identity / inference Dropout: the same tensor under a second name
        out = node.output[0]
        imp.vals[out] = Val(out, xv.dtype, xv.shape, xv.idx, xv.nhwc, xv.const)
        return
    _act(imp, node, xv, code)


@handles("Elu")
def _elu(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    _act(imp, node, x[0], 4, alpha=float(a.get("alpha", 1.0)))


@handles("Gelu")
def _gelu(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    _act(imp, node, x[0], 19, approximate=a.get("approximate", "none") == "tanh")


@handles("LeakyRelu")
def _leaky(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    t, nhwc = _unary_layout(imp, x[0])
    imp.emit("LeakyRelu", {"negativeSlope": float(a.get("alpha", 0.01))}, [t], node, nhwc=nhwc)


@handles("Clip")
def _clip(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    given = [(k, v) for k in (1, 2) if len(x) > k and (v := x[k]) is not None]
    if any(v.const is None for _, v in given):
        # a bound computed at run time (openWakeWord's "max - 80 dB" floor): Clip is
        # min(max(x, lo), hi), as onnxruntime computes it
        cur, out = xv, node.output[0]
        for j, (k, v) in enumerate(given):
            name = out if j == len(given) - 1 else f"{out}:clip_lo"
            imp.info.setdefault(name, imp.info.get(out, (xv.dtype, xv.shape)))
            ids, nhwc = _broadcast_layout(imp, [cur, v], _out_rank(imp, node))
            (cur,) = imp.emit("Maximum" if k == 1 else "Minimum", {}, ids, node, nhwc=nhwc,
                              outputs=[name])  # fmt: skip
        return
    bounds = []
    for k, key, default in ((1, "min", -np.inf), (2, "max", np.inf)):
        v = x[k] if len(x) > k else None
        bounds.append(float(v.const.reshape(-1)[0]) if v is not None and v.const is not None
                      else float(a.get(key, default)))  # fmt: skip
    lo, hi = bounds
    if lo == 0.0 and hi == 6.0 and imp.try_fuse_activation(node, xv, 3):
        return
    t, nhwc = _unary_layout(imp, xv)
    imp.emit("Clip", {"min": lo, "max": hi}, [t], node, nhwc=nhwc, outputs=node.output[:1])


_UNARY = L.UNARY


@handles(*_UNARY)
def _unary(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    t, nhwc = _unary_layout(imp, x[0])
    imp.emit(_UNARY[node.op_type], {}, [t], node, nhwc=nhwc)


@handles("Exp")
def _exp(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    t, nhwc = _unary_layout(imp, x[0])
    imp.emit("ExpFusion", dict(L.EXP), [t], node, nhwc=nhwc)


def _broadcast_layout(
    imp: Importer, vals: Sequence[Val], out_rank: int | None
) -> tuple[list[int], bool]:
    """Tensors for an elementwise op: NHWC when an activation operand already is and every other
    operand is a constant (permuted to match) or NHWC too; NCHW otherwise."""
    go = out_rank == 4 and imp.any_nhwc(vals)
    if go:
        for v in vals:
            if (
                v.const is None
                and not v.nhwc
                and not (v.shape is not None and all(d == 1 for d in v.shape))
            ):
                go = False
    ids = []
    for v in vals:
        if go and v.const is not None:
            c = (
                v.const.reshape((1,) * (4 - v.const.ndim) + v.const.shape)
                if v.const.ndim <= 4
                else v.const
            )
            key = (v.name, True)
            if key not in imp.alt:
                imp.alt[key] = imp.b.constant(
                    v.name + ":nhwc", np.ascontiguousarray(c.transpose(_TO_NHWC))
                )
            ids.append(imp.alt[key])
        elif go and v.const is None and v.shape is not None and len(v.shape) < 4:
            ids.append(imp.tensor(v))  # all-ones shape: broadcasts the same either way
        else:
            ids.append(imp.tensor(v, go))
    return ids, go


_BINARY = L.BINARY
_PLAIN_BINARY = {**L.COMPARE, "Pow": "PowFusion", "PRelu": "PReLUFusion", "Mod": "Mod"}


def _out_rank(imp: Importer, node: Any) -> int | None:
    shape = imp.info.get(node.output[0], (None, None))[1]
    return None if shape is None else len(shape)


@handles(*_BINARY)
def _binary(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    va, vb = x[0], x[1]
    assert va is not None and vb is not None
    # MatMul + constant bias along the last axis: the bias becomes MatMulFusion's third input.
    if node.op_type == "Add":
        for m, c in ((va, vb), (vb, va)):
            hit = imp.fusable.get(m.name)
            if (hit is not None and c.const is not None and imp.consumers[m.name] == 1
                    and m.name not in imp.graph_outputs and type(hit[1]).__name__ == "MatMulFusion"
                    and len(hit[0].inputIndex) == 2 and m.shape and c.const.ndim == 1
                    and c.const.shape[0] == m.shape[-1]):  # fmt: skip
                hit[0].inputIndex.append(imp.tensor(c))
                out = node.output[0]
                imp.vals[out] = Val(out, m.dtype, m.shape, m.idx, m.nhwc)
                imp.fusable[out] = hit
                del imp.fusable[m.name]
                return
    ids, nhwc = _broadcast_layout(imp, [va, vb], _out_rank(imp, node))
    imp.emit(_BINARY[node.op_type], {"activationType": 0}, ids, node, nhwc=nhwc,
             fusable=node.op_type == "Add")  # fmt: skip


@handles(*_PLAIN_BINARY)
def _plain_binary(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    vals = [v for v in x if v is not None]
    attrs: dict[str, Any] = {}
    if node.op_type == "Pow":
        attrs = {"scale": 1.0, "shift": 0.0}
    elif node.op_type == "PRelu":
        attrs = {"channelShared": vals[1].shape is not None and int(np.prod(vals[1].shape)) == 1}
        if vals[0].shape is not None and len(vals[0].shape) == 4 and vals[1].const is not None:
            # NNRt PReLU slopes run along the last (channel) axis: go NHWC with flat slopes.
            slope = vals[1].const.reshape(-1)
            s = imp.b.constant(vals[1].name + ":flat", np.ascontiguousarray(slope))
            imp.emit("PReLUFusion", attrs, [imp.tensor(vals[0], True), s], node, nhwc=True)
            return
    elif node.op_type == "Mod" and int(a.get("fmod", 0)) != 1:
        if vals[0].dtype is not None and vals[0].dtype.kind == "f":
            raise _Unsupported("fmod=0 on floats: NNRt Mod is C fmod")
    ids, nhwc = _broadcast_layout(imp, vals, _out_rank(imp, node))
    imp.emit(_PLAIN_BINARY[node.op_type], attrs, ids, node, nhwc=nhwc)


@handles("Max", "Min", "Sum")
def _nary(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    vals = [v for v in x if v is not None]
    ids, nhwc = _broadcast_layout(imp, vals, _out_rank(imp, node))
    if len(vals) == 2 and node.op_type != "Sum":
        imp.emit("Maximum" if node.op_type == "Max" else "Minimum", {}, ids, node, nhwc=nhwc)
    elif node.op_type == "Min":
        raise _Unsupported("Min of more than two tensors")
    else:
        imp.emit("Eltwise", {"mode": 2 if node.op_type == "Max" else 1}, ids, node, nhwc=nhwc)


@handles("Cast")
def _cast(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    from .dtypes import from_numpy

    xv = x[0]
    assert xv is not None
    to = np.dtype(imp.onnx.helper.tensor_dtype_to_np_dtype(int(a["to"])))
    t, nhwc = _unary_layout(imp, xv)
    code = imp.b.constant(
        (node.name or node.output[0]) + ":to", np.array([from_numpy(to)], np.int32)
    )
    imp.emit("Cast", {}, [t, code], node, nhwc=nhwc)


# --- normalisation / reductions (axis-aware) -------------------------------------------------


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _axis_layout(imp: Importer, v: Val, axes: Sequence[int]) -> tuple[int, list[int], bool]:
    """Keep an NHWC value NHWC and map the ONNX axes onto it; otherwise NCHW as is."""
    rank = len(v.shape) if v.shape is not None else None
    axes = [_norm_axis(int(ax), rank) if rank else int(ax) for ax in axes]
    if v.const is None and v.nhwc and rank == 4:
        return imp.tensor(v, True), [_AXIS_NHWC[ax] for ax in axes], True
    return imp.tensor(v), axes, False


@handles("Softmax", "LogSoftmax")
def _softmax(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    rank = len(xv.shape) if xv.shape is not None else None
    axis = int(a.get("axis", -1 if imp.opset >= 13 else 1))
    if imp.opset < 13 and rank is not None and _norm_axis(axis, rank) != rank - 1:
        raise _Unsupported(
            f"opset {imp.opset} axis={axis}: a flattened 2-D softmax over several axes"
        )
    t, axes, nhwc = _axis_layout(imp, xv, [axis])
    if node.op_type == "Softmax":
        imp.emit("Softmax", {"axis": axes}, [t], node, nhwc=nhwc)
    else:
        imp.emit("LogSoftmax", {"axis": axes[0]}, [t], node, nhwc=nhwc)


@handles("LayerNormalization")
def _lnorm(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    if len(node.output) > 1 and any(node.output[1:]):
        raise _Unsupported("Mean / InvStdDev outputs")
    axis = int(a.get("axis", -1))
    rank = len(xv.shape) if xv.shape is not None else None
    if rank is not None:
        axis = _norm_axis(axis, rank)
    ins = [imp.tensor(xv)] + [imp.tensor(v) for v in x[1:3] if v is not None]
    attrs = {"beginNormAxis": axis, "epsilon": float(a.get("epsilon", 1e-5)), "elementwiseAffine": True,
             "beginParamsAxis": axis}  # fmt: skip
    imp.emit("LayerNormFusion", attrs, ins, node, outputs=node.output[:1])


_REDUCE = L.REDUCE


@handles(*_REDUCE)
def _reduce(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    av = x[1] if len(x) > 1 else None
    if av is not None and av.const is None:
        raise L.ShapeUnknown("axes computed at run time")
    axes = [
        int(v) for v in (av.const if av is not None and av.const is not None else a.get("axes", []))
    ]
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            raise _Unsupported("noop_with_empty_axes=1")
        if xv.shape is None:
            raise L.ShapeUnknown("reduce over all axes of a value of unknown rank")
        axes = list(range(len(xv.shape)))
    keep = bool(a.get("keepdims", 1))
    rank = len(xv.shape) if xv.shape is not None else None
    t, paxes, nhwc = _axis_layout(imp, xv, axes)
    if nhwc and not keep:
        logical = [d for d in range(4) if d not in [_norm_axis(ax, 4) for ax in axes]]
        physical = [d for d in _TO_NHWC if d not in [_norm_axis(ax, 4) for ax in axes]]
        if logical != physical:
            t, paxes, nhwc = imp.tensor(xv), [_norm_axis(ax, rank or 0) for ax in axes], False
    ax_t = _i32(imp, (node.name or node.output[0]) + ":axes", paxes)
    attrs = {"keepDims": keep, "mode": _REDUCE[node.op_type], "reduceToEnd": False, "coeff": 1.0}
    imp.emit("ReduceFusion", attrs, [t, ax_t], node, nhwc=nhwc and keep)


@handles("ArgMax")
def _argmax(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    if int(a.get("select_last_index", 0)):
        raise _Unsupported("select_last_index=1")
    assert x[0] is not None
    attrs = {"axis": int(a.get("axis", 0)), "topK": 1, "keepDims": bool(a.get("keepdims", 1)),
             "outMaxValue": False}  # fmt: skip
    imp.emit("ArgMaxFusion", attrs, [imp.tensor(x[0])], node)


@handles("Concat")
def _concat(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    vals = [v for v in x if v is not None]
    axis = int(a["axis"])
    rank = _out_rank(imp, node)
    if rank == 4 and imp.any_nhwc(vals):
        ids = [imp.tensor(v, True) for v in vals]
        imp.emit("Concat", {"axis": _AXIS_NHWC[_norm_axis(axis, 4)]}, ids, node, nhwc=True)
    else:
        imp.emit("Concat", {"axis": axis}, [imp.tensor(v) for v in vals], node)


@handles("Split")
def _split(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    sv = x[1] if len(x) > 1 else None
    if sv is not None and sv.const is None:
        raise L.ShapeUnknown("split sizes computed at run time")
    sizes = (
        [int(v) for v in sv.const]
        if sv is not None and sv.const is not None
        else list(a.get("split", []))
    )
    if not sizes:
        rank = len(xv.shape) if xv.shape is not None else 0
        ax = _norm_axis(int(a.get("axis", 0)), rank)
        if xv.shape is None or xv.shape[ax] < 0:
            raise L.ShapeUnknown("even split of an unknown dimension")
        n = len(node.output)
        if xv.shape[ax] % n:
            sizes = [-(-xv.shape[ax] // n)] * (n - 1)
            sizes.append(xv.shape[ax] - sum(sizes))
        else:
            sizes = [xv.shape[ax] // n] * n
    t, axes, nhwc = _axis_layout(imp, xv, [int(a.get("axis", 0))])
    attrs = {"outputNum": len(node.output), "sizeSplits": sizes, "axis": axes[0]}
    imp.emit("Split", attrs, [t], node, nhwc=nhwc)


@handles("Slice")
def _slice(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    if any(v is not None and v.const is None for v in x[1:]):
        raise L.ShapeUnknown("starts/ends/axes/steps computed at run time")
    if xv.shape is None or any(d < 0 for d in xv.shape):
        raise L.ShapeUnknown("slice of a value of unknown shape")
    consts = [v.const if v is not None else None for v in x[1:]] + [None] * 4
    if len(x) == 1:  # opset < 10: starts/ends/axes are attributes
        consts = [np.array(a[k]) if k in a else None for k in ("starts", "ends", "axes")] + [None]
    if consts[0] is None or consts[1] is None:
        raise _Unsupported("no starts/ends")
    starts, ends = [int(v) for v in consts[0]], [int(v) for v in consts[1]]
    rank = len(xv.shape)
    axes = [int(v) for v in consts[2]] if consts[2] is not None else list(range(len(starts)))
    steps = [int(v) for v in consts[3]] if consts[3] is not None else [1] * len(starts)
    axes = [_norm_axis(ax, rank) for ax in axes]
    if any(s != 1 for s in steps):
        from .onnx_decompose import strided_slice

        strided_slice(imp, node, xv, axes, starts, ends, steps)
        return
    begin, size = L.slice_window(xv.shape, axes, starts, ends)
    t, paxes, nhwc = _axis_layout(imp, xv, axes)
    nm = node.name or node.output[0]
    imp.emit("SliceFusion", {"axes": paxes}, [t, _i32(imp, nm + ":begin", begin), _i32(imp, nm + ":size", size)],
             node, nhwc=nhwc)  # fmt: skip


@handles("Pad")
def _pad(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None and xv.shape is not None
    mode = a.get("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise _Unsupported(f"mode={mode}")
    pv = x[1] if len(x) > 1 else None
    if pv is not None and pv.const is None:
        raise L.ShapeUnknown("pads computed at run time")
    pads = [int(v) for v in (pv.const if pv is not None and pv.const is not None else a["pads"])]
    rank = len(xv.shape)
    axv = x[3] if len(x) > 3 else None
    axes = (
        [int(v) for v in axv.const]
        if axv is not None and axv.const is not None
        else list(range(rank))
    )
    rows = [[0, 0] for _ in range(rank)]
    k = len(axes)
    for i, ax in enumerate(axes):
        rows[_norm_axis(ax, rank)] = [pads[i], pads[i + k]]
    cv = x[2] if len(x) > 2 else None
    value = (
        float(cv.const.reshape(-1)[0])
        if cv is not None and cv.const is not None and cv.const.size
        else float(a.get("value", 0.0))
    )
    nhwc = xv.const is None and xv.nhwc and rank == 4
    if mode in ("edge", "wrap") or any(p < 0 for row in rows for p in row):
        from .onnx_decompose import pad_gather

        pad_gather(imp, node, xv, rows, mode, value)
        return
    if nhwc:
        rows = [rows[i] for i in _TO_NHWC]
    imp.emit("PadFusion", {"paddings": rows, "paddingMode": 0 if mode == "constant" else 1, "constantValue": value},
             [imp.tensor(xv, nhwc)], node, nhwc=nhwc)  # fmt: skip


# --- shape -----------------------------------------------------------------------------------


def _shape_input(imp: Importer, node: Any, v: Val | None, what: str) -> int:
    if v is None:
        raise _Unsupported(f"no {what}")
    return imp.tensor(v)


@handles("Reshape")
def _reshape(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, sv = x[0], x[1]
    assert xv is not None and sv is not None
    if int(a.get("allowzero", 0)) and sv.const is not None and 0 in sv.const.tolist():
        raise _Unsupported("allowzero=1 with a 0 dim")
    imp.emit("Reshape", {}, [imp.tensor(xv), _shape_input(imp, node, sv, "shape")], node)


@handles("Flatten")
def _flatten(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    imp.emit("Flatten", {"axis": int(a.get("axis", 1))}, [imp.tensor(x[0])], node)


@handles("Transpose")
def _transpose(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv = x[0]
    assert xv is not None
    rank = len(xv.shape) if xv.shape is not None else None
    if "perm" in a:
        perm = [int(p) for p in a["perm"]]
    elif rank is not None:
        perm = list(range(rank))[::-1]
    else:
        raise L.ShapeUnknown("default perm of a value of unknown rank")
    nm = node.name or node.output[0]
    if _fold_into_matmul(imp, node, xv, perm):
        return
    if xv.const is None and xv.nhwc and rank == 4:
        # Compose with the pending NHWC -> NCHW transpose: one Transpose node.
        phys = [_AXIS_NHWC[p] for p in perm]
        imp.emit("Transpose", {}, [imp.tensor(xv, True), _i32(imp, nm + ":perm", phys)], node)
        return
    imp.emit("Transpose", {}, [imp.tensor(xv), _i32(imp, nm + ":perm", perm)], node)


def _fold_into_matmul(imp: Importer, node: Any, xv: Val, perm: list[int]) -> bool:
    """A Transpose swapping only the last two axes whose one consumer is a MatMul reading it
    as B (``q @ k^T`` in attention): lower that MatMul now with ``transposeB`` instead."""
    r = len(perm)
    out = node.output[0]
    users = imp.users.get(out, [])
    if (r < 2 or perm != list(range(r - 2)) + [r - 1, r - 2] or xv.const is not None
            or (xv.nhwc and r == 4) or len(users) != 1 or out in imp.graph_outputs):  # fmt: skip
        return False
    mm = users[0]
    if mm.op_type != "MatMul" or list(mm.input[1:]) != [out] or mm.input[0] == out:
        return False
    va = imp.vals.get(mm.input[0])
    if va is None:
        return False
    imp.absorbed.add(id(mm))
    out_dt, out_shape = imp.info.get(mm.output[0], (None, None))
    if (out_shape is None or any(d < 0 for d in out_shape)) and va.shape and xv.shape:
        if all(d >= 0 for d in va.shape + xv.shape) and len(va.shape) >= 2:
            batch = np.broadcast_shapes(va.shape[:-2], xv.shape[:-2])
            imp.info[mm.output[0]] = (out_dt or va.dtype, (*batch, va.shape[-2], xv.shape[-2]))
    imp.emit("MatMulFusion", {"transposeA": False, "transposeB": True, "activationType": 0},
             [imp.tensor(va), imp.tensor(xv)], mm, fusable=True)  # fmt: skip
    return True


def _axes_of(node: Any, a: dict[str, Any], x: list[Val | None]) -> list[int]:
    av = x[1] if len(x) > 1 else None
    if av is not None:
        if av.const is None:
            raise L.ShapeUnknown("axes computed at run time")
        return [int(v) for v in av.const]
    return [int(v) for v in a.get("axes", [])]


@handles("Squeeze", "Unsqueeze")
def _squeeze(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None
    imp.emit(node.op_type, {"axis": _axes_of(node, a, x)}, [imp.tensor(x[0])], node)


@handles("Gather")
def _gather(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, iv = x[0], x[1]
    assert xv is not None and iv is not None
    nm = node.name or node.output[0]
    axis = int(a.get("axis", 0))
    ax = imp.b.constant(nm + ":axis", np.array([axis], np.int32))
    if iv.const is not None and iv.const.ndim == 0 and xv.shape is not None:
        # A scalar index drops the axis: gather [i] (NNRt has no rank-0 constants), then Squeeze.
        from .onnx_decompose import gather_scalar

        gather_scalar(imp, node, xv, iv.const, _norm_axis(axis, len(xv.shape)), ax)
        return
    imp.emit("Gather", {}, [imp.tensor(xv), imp.tensor(iv), ax], node)


@handles("Shape")
def _shape(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    if "start" in a or "end" in a:
        raise _Unsupported("start/end on a shape known only at run time")
    assert x[0] is not None
    imp.emit("Shape", {}, [imp.tensor(x[0])], node)


@handles("Expand")
def _expand(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    xv, sv = x[0], x[1]
    assert xv is not None and sv is not None
    if sv.const is None:
        raise L.ShapeUnknown("shape computed at run time")
    imp.emit("BroadcastTo", {"shape": [int(v) for v in sv.const]}, [imp.tensor(xv)], node)


@handles("Tile")
def _tile(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    assert x[0] is not None and x[1] is not None
    imp.emit("TileFusion", {"dims": []}, [imp.tensor(x[0]), imp.tensor(x[1])], node)


@handles("TopK")
def _topk(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    if int(a.get("largest", 1)) != 1:
        raise _Unsupported("largest=0")
    assert x[0] is not None and x[1] is not None
    imp.emit("TopKFusion", {"sorted": bool(a.get("sorted", 1)), "axis": int(a.get("axis", -1))},
             [imp.tensor(x[0]), imp.tensor(x[1])], node)  # fmt: skip


# --- recurrent -------------------------------------------------------------------------------


@handles("LSTM")
def _lstm(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    L.only(a, layout=lambda v: v == 0, direction=lambda v: v in ("forward", "bidirectional"),
           input_forget=lambda v: v == 0, clip=lambda v: False)  # fmt: skip
    acts = [s.decode() if isinstance(s, bytes) else s for s in a.get("activations", [])]
    if acts and acts not in (["Sigmoid", "Tanh", "Tanh"] * 2, ["Sigmoid", "Tanh", "Tanh"]):
        raise _Unsupported(f"activations={acts}")
    xs, w, r = x[0], x[1], x[2]
    assert xs is not None and w is not None and r is not None
    if w.const is None or r.const is None:
        raise L.ShapeUnknown("weights computed at run time")
    if len(x) > 7 and x[7] is not None:
        raise _Unsupported("peephole input P")
    if len(x) > 4 and x[4] is not None:
        raise _Unsupported("sequence_lens")
    if xs.shape is None or any(d < 0 for d in xs.shape):
        raise L.ShapeUnknown("input of unknown shape")
    seq, batch, isz = xs.shape
    dirs, h = w.const.shape[0], w.const.shape[1] // 4
    order = np.concatenate([np.arange(h) + g * h for g in (0, 2, 3, 1)])  # ONNX iofc -> i f g o
    bv = x[3] if len(x) > 3 else None
    if bv is not None and bv.const is None:
        raise L.ShapeUnknown("bias computed at run time")
    b = np.zeros((dirs, 8 * h), w.const.dtype) if bv is None else bv.const
    assert b is not None
    b = np.concatenate([b[:, : 4 * h][:, order], b[:, 4 * h :][:, order]], axis=1)
    nm = node.name or node.output[0]
    ins = [imp.tensor(xs), imp.b.constant(nm + ":wih", np.ascontiguousarray(w.const[:, order])),
           imp.b.constant(nm + ":whh", np.ascontiguousarray(r.const[:, order])),
           imp.b.constant(nm + ":bias", np.ascontiguousarray(b))]  # fmt: skip
    for k, what in ((5, "h0"), (6, "c0")):
        v = x[k] if len(x) > k else None
        ins.append(imp.tensor(v) if v is not None else
                   imp.b.constant(f"{nm}:{what}", np.zeros((dirs, batch, h), w.const.dtype)))  # fmt: skip
    attrs = {"bidirectional": dirs == 2, "hasBias": True, "inputSize": isz, "hiddenSize": h, "numLayers": 1,
             "numDirections": dirs, "dropout": 0.0, "zoneoutCell": 0.0, "zoneoutHidden": 0.0, "projSize": 0}  # fmt: skip
    outs = list(node.output) + [""] * (3 - len(node.output))
    y_raw = f"{nm}:y"
    dt = w.const.dtype
    idx = imp._node("LSTM", attrs, ins, [(y_raw, dt, [seq, batch, dirs * h]),
                                        (outs[1] or f"{nm}:hn", dt, [dirs, batch, h]),
                                        (outs[2] or f"{nm}:cn", dt, [dirs, batch, h])], nm)  # fmt: skip
    for k in (1, 2):
        if outs[k]:
            imp.vals[outs[k]] = Val(outs[k], dt, (dirs, batch, h), idx[k])
    if outs[0]:
        shp = imp.b.constant(nm + ":yshape", np.array([seq, batch, dirs, h], np.int64))
        (r4,) = imp._node(
            "Reshape", {}, [idx[0], shp], [(f"{nm}:y4", dt, [seq, batch, dirs, h])], nm + "/reshape"
        )
        perm = _i32(imp, nm + ":yperm", [0, 2, 1, 3])
        (y,) = imp._node(
            "Transpose", {}, [r4, perm], [(outs[0], dt, [seq, dirs, batch, h])], nm + "/transpose"
        )
        imp.vals[outs[0]] = Val(outs[0], dt, (seq, dirs, batch, h), y)


# --- quantisation ----------------------------------------------------------------------------


@handles("QuantizeLinear", "DequantizeLinear")
def _qdq(imp: Importer, node: Any, a: dict[str, Any], x: list[Val | None]) -> None:
    from .dtypes import from_numpy

    xv, sv = x[0], x[1]
    zv = x[2] if len(x) > 2 else None
    assert xv is not None and sv is not None
    if sv.const is None or (zv is not None and zv.const is None):
        raise L.ShapeUnknown("scale/zero point computed at run time")
    if int(a.get("block_size", 0)):
        raise _Unsupported("blocked quantisation")
    scale = np.asarray(sv.const, np.float64).reshape(-1)
    zp = (
        np.zeros(scale.shape, np.int64)
        if zv is None
        else np.asarray(zv.const, np.int64).reshape(-1)
    )
    if node.op_type == "QuantizeLinear":
        qdt = zv.const.dtype if zv is not None and zv.const is not None else np.dtype(np.uint8)
        src, dst = 43, from_numpy(qdt)
    else:
        src, dst = from_numpy(xv.dtype or np.dtype(np.int8)), from_numpy(sv.const.dtype)
    axis = int(a.get("axis", 1)) if scale.size > 1 else 0
    t, axes, nhwc = _axis_layout(imp, xv, [axis])
    if scale.size == 1:
        axes = [0]
    # The executor takes quantisation parameters from the integer side's tensor (NNRt keeps
    # them on tensors, not as operator inputs).
    qps = [
        imp.pkg.QuantParam(numBits=8, zeroPoint=int(z), scale=float(sc)) for sc, z in zip(scale, zp)
    ]
    if node.op_type == "DequantizeLinear":
        ten = imp.b.tensors[t]
        if not ten.quantParams:
            ten.quantParams = qps
    (v,) = imp.emit(
        "QuantDTypeCastV2", {"srcT": src, "dstT": dst, "axis": axes[0]}, [t], node, nhwc=nhwc
    )
    if node.op_type == "QuantizeLinear":
        assert v.idx is not None
        imp.b.tensors[v.idx].quantParams = qps


def parse_onnx(model: Any) -> Any:
    """A ``ModelProto`` from a path, bytes or a ``ModelProto``."""
    from . import onnx_lite as onnx

    if not onnx.available():
        raise ConfigError("reading .onnx models needs the onnx package: pip install 'idlgen[onnx]'")
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    if isinstance(model, str):
        return onnx.load(model)
    return model


def import_onnx(
    model: Any,
    *,
    package: Any = None,
    source: str = "",
    nnrt_only: bool = False,
    load_body: Callable[[Any], Program] | None = None,
) -> Program:
    model = parse_onnx(model)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and not 7 <= int(o.version) <= 21:
            raise UnsupportedModelError("opset", source, f"opset {o.version} (supported: 7-21)")
    pkg = target_package(package)
    imp = Importer(model, pkg)
    imp.b.nnrt_only = nnrt_only
    # control-flow bodies are models of their own: the caller's loader imports them (shapes at
    # run time included); without one, the importer itself, shapes as declared
    imp.load_body = load_body or (
        lambda m: import_onnx(m, package=pkg, source=source, nnrt_only=nnrt_only)
    )
    return imp.run(source)


from . import onnx_decompose as _decompose  # noqa: E402  (exact compositions onto NNRt)

_decompose.install(HANDLERS)
