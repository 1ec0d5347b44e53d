"""Lower a ``.tflite`` model onto NNRt v2_1 operators.

The file is read with idlgen's own generated package for the TFLite schema
(``idlgen.prebuilt.tflite``, from ``schemas/fbs/tflite.fbs``). TFLite is NHWC with ``[O, H, W, I]``
convolution weights like NNRt, so no layout changes are needed except for depthwise weights
(``[1, H, W, C*M]`` -> ``[C*M, H, W, 1]`` grouped convolution). Fused activations map onto NNRt's
``activationType``; int8/uint8 tensors keep their integer data and carry their scale/zero point
(per channel too) as ``quantParams``, which the executor honours; float16 weights are cast.

Every builtin NNRt v2_1 can express is lowered, directly or as an exact composition
(``tflite_ops.TFLITE_TO_NNRT`` is the audit, both ways). Operators whose inputs are constants
are folded at import time (one run of the lowered node, within ``_FOLD_BUDGET``): DEQUANTIZE
of float16 / int8 weights, shape arithmetic, sparse weights (DENSIFY). Dynamic-range (hybrid)
operators compute as LiteRT's builtin kernels do: the float input is quantised per batch row on
every call (``_dynamic_quant``), the integer products are exact (float64), then scaled back.
Builtins NNRt has no operator for run as host operators (``host_tflite``): control flow (IF,
WHILE, CALL_ONCE, CALL) with its subgraphs imported as programs of their own, resource and
variable tensors (LiteRT keeps their state across runs), FFT, NMS, segment sums, ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from idlgen.errors import DecodeError, IdlgenError

from .builder import ModelBuilder
from .dtypes import from_numpy
from .packages import tflite_package
from .program import Program, UnsupportedModelError, target_package
from . import host_tflite
from .bodies import SubgraphBody, bindable
from .tflite_ops import unsupported_reason

__all__ = ["import_tflite", "TFLITE_PACKAGE"]

TFLITE_PACKAGE = "idlgen.prebuilt.tflite"  # .packages.TFLITE

# tflite TensorType -> NumPy dtype (schema enum values).
_TYPES = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_,
          7: np.int16, 9: np.int8, 10: np.float64, 12: np.uint64, 15: np.uint32, 16: np.uint16}  # fmt: skip
# tflite ActivationFunctionType -> NNRt ActivationType.
_ACT = {0: 0, 1: 1, 2: 7, 3: 3, 4: 10}


class _Unsupported(Exception):
    pass


_RESOURCE = 13  # TensorType.RESOURCE
_COMPLEX = {8: np.complex64, 11: np.complex128}  # NNRt has no complex DataType
_MAX_NESTING = 16  # subgraphs calling subgraphs (IF / WHILE / CALL_ONCE bodies)

#: Largest constant (bytes, all outputs of one operator) that folding may create.
_FOLD_BUDGET = 16 << 20
#: Operators never folded (none so far: every mapped operator is a pure function).
_NO_FOLD: frozenset[str] = frozenset()


def _bad(what: str) -> DecodeError:
    """An index, count or shape in the file that cannot be: the file is malformed."""
    return DecodeError(f"malformed TFLite model: {what}")


class TfliteImporter:
    def __init__(
        self,
        model: Any,
        package: Any,
        tfl: Any,
        subgraph: int = 0,
        variables: Any = None,
        depth: int = 0,
    ) -> None:
        self.m = model
        self.pkg = package
        self.T = tfl
        if not model.subgraphs:
            raise UnsupportedModelError("Model", "<file>", "no subgraphs")
        if not 0 <= subgraph < len(model.subgraphs):
            raise _bad(f"subgraph {subgraph}, but the model has {len(model.subgraphs)}")
        if depth > _MAX_NESTING:
            raise _bad(f"control flow nests subgraphs deeper than {_MAX_NESTING}")
        self.g = model.subgraphs[subgraph]
        self.subgraph, self.depth = subgraph, depth
        self._bodies: dict[int, SubgraphBody] = {}
        #: Resource variables shared by every subgraph of the model (host_tflite.Variables).
        self.vars = variables
        #: The file's bytes (buffers stored after the FlatBuffer are read from them).
        self.file: bytes | None = None
        self.tensors = list(self.g.tensors or [])
        self.codes = list(model.operator_codes or [])
        self.b = ModelBuilder(package, name=str(self.g.name or "tflite"))
        self.idx: dict[int, int] = {}  # tflite tensor -> NNRt tensor
        #: Values computed at import time (constant subgraphs folded, within _FOLD_BUDGET).
        self.folded: dict[int, np.ndarray] = {}
        self._dense: dict[int, np.ndarray] = {}  # sparse constants, densified

    def t(self, ti: int) -> Any:
        """Tensor ``ti`` of the subgraph; every tensor index read from the file comes here."""
        if not 0 <= ti < len(self.tensors):
            raise _bad(f"tensor index {ti}, but subgraph 0 has {len(self.tensors)} tensors")
        return self.tensors[ti]

    def dtype(self, ti: int) -> np.dtype[Any]:
        t = self.t(ti)
        if int(t.type) == _RESOURCE:  # a resource variable's handle: its id
            return np.dtype(np.int32)
        if int(t.type) in _COMPLEX:  # only host operators (RFFT2D, COMPLEX_ABS, ...) see these
            return np.dtype(_COMPLEX[int(t.type)])
        dt = _TYPES.get(int(t.type))
        if dt is None:
            code = int(t.type)
            kind = self.T.TensorType(code).name if code in set(self.T.TensorType) else code
            raise _Unsupported(f"tensor {t.name!r} of type {kind}")
        return np.dtype(dt)

    def dims(self, ti: int) -> list[int]:
        """The tensor's static shape: every dimension a size (0 or more)."""
        t = self.t(ti)
        dims = [int(d) for d in (t.shape or [])]
        if any(d < 0 for d in dims):
            raise _bad(f"tensor {ti} {t.name!r} has shape {dims}")
        return dims

    def shape(self, ti: int) -> list[int]:
        """The shape with unknown dimensions as -1 (``shape_signature`` where it fits)."""
        t = self.t(ti)
        dims = self.dims(ti)
        sig = [int(d) for d in (t.shape_signature or [])]
        if any(d < -1 for d in sig):
            raise _bad(f"tensor {ti} {t.name!r} has shape_signature {sig}")
        return sig if sig and len(sig) == len(dims) else dims

    def data(self, ti: int) -> np.ndarray | None:
        """The tensor's constant value (None: computed at run time, or a variable tensor)."""
        if ti in self.folded:
            return self.folded[ti]
        if bool(getattr(self.t(ti), "is_variable", False)):
            return None
        return self.buffer_data(ti)

    def buffer_data(self, ti: int) -> np.ndarray | None:
        t = self.t(ti)
        bufs = self.m.buffers or []
        b = int(t.buffer)
        if b == 0:  # buffer 0 is the empty sentinel: no constant data
            return None
        if not 0 < b < len(bufs):
            raise _bad(f"tensor {ti} {t.name!r} names buffer {b}, but the model has {len(bufs)}")
        buf = bufs[b]
        raw = bytes(buf.data or b"")
        if not raw:
            off, size = int(buf.offset or 0), int(buf.size or 0)
            if off <= 1:
                shape = self.dims(ti)
                if shape and all(d >= 0 for d in shape) and math.prod(shape) == 0:
                    # no elements: the shape is the whole value (BirdNET reshapes to a
                    # scalar with an empty shape vector whose buffer holds no bytes)
                    return np.zeros(shape, self.dtype(ti))
                return None
            # stored after the FlatBuffer (models over 2 GB): offset/size into the file
            if self.file is None or off + size > len(self.file):
                raise _bad(f"buffer {b} lies at {off}+{size}, past the end of the file")
            raw = bytes(self.file[off : off + size])
        dt = self.dtype(ti)
        shape = self.dims(ti)
        n = math.prod(shape)
        if t.sparsity is not None:  # densified once per tensor (a copy each time asked)
            hit = self._dense.get(ti)
            if hit is None:
                hit = self._dense[ti] = _densify(
                    t.sparsity, raw, dt, shape, f"tensor {ti} {t.name!r}"
                )
            return hit.copy()
        if len(raw) != n * dt.itemsize:
            raise DecodeError(
                f"buffer {b} holds {len(raw)} bytes, tensor {t.name!r} needs {n * dt.itemsize}"
            )
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()

    def quant(
        self, ti: int, axis_map: Callable[[int], int] | None = None
    ) -> list[tuple[float, int]] | None:
        t = self.t(ti)
        q = t.quantization
        if q is None or not list(q.scale or []):
            return None
        scales = [float(s) for s in q.scale]
        zps = [int(z) for z in (q.zero_point or [0] * len(scales))]
        if len(zps) == 1 and len(scales) > 1:
            zps = zps * len(scales)
        if len(zps) != len(scales):
            raise _bad(f"tensor {ti} {t.name!r} has {len(scales)} scales, {len(zps)} zero points")
        return list(zip(scales, zps))

    def num_bits(self, ti: int) -> int:
        """QuantParam.numBits: the integer type's full width, as LiteRT uses it (int16 is
        16-bit, not an int8 range)."""
        dt = self.dtype(ti)
        return 8 * dt.itemsize if dt.kind in "iu" else 8

    def tensor(self, ti: int) -> int:
        if ti in self.idx:
            return self.idx[ti]
        t = self.t(ti)
        arr = self.data(ti)
        name = str(t.name or f"t{ti}")
        qp = self.quant(ti)
        if bool(getattr(t, "is_variable", False)):
            return self.read_state(ti, self.buffer_data(ti))
        if arr is not None:
            self.idx[ti] = self.b.constant(name, arr, quant=qp, num_bits=self.num_bits(ti))
            self.b.tensors[self.idx[ti]].dims = list(arr.shape)  # a scalar stays 0-d
        else:
            raise _Unsupported(f"tensor {name!r} is read before any operator writes it")
        return self.idx[ti]

    def const(
        self, name: str, arr: np.ndarray, quant: list[tuple[float, int]] | None = None
    ) -> int:
        bits = 8 * arr.dtype.itemsize if arr.dtype.kind in "iu" else 8
        i = self.b.constant(name, np.ascontiguousarray(arr), quant=quant, num_bits=bits)
        self.b.tensors[i].dims = list(arr.shape)  # a scalar stays 0-d
        return int(i)

    def mid(
        self,
        struct: str,
        attrs: dict[str, Any],
        inputs: list[int],
        dtype: Any,
        dims: list[int],
        name: str,
    ) -> int:
        """An NNRt node of a decomposition whose output is not a tensor of the TFLite file."""
        rec = getattr(self.pkg, struct).from_dict(attrs)
        r = self.b.node(rec, inputs, outputs=[(name, np.dtype(dtype), dims)], name=name)
        return int(r if isinstance(r, int) else r[0])

    def float_of(self, ti: int) -> np.dtype[Any]:
        """The dtype a decomposition's intermediate values take: quantised tensors compute in
        float32 (the executor dequantises them), others keep their dtype."""
        dt = self.dtype(ti)
        return np.dtype(np.float32) if self.quant(ti) is not None else dt

    def emit(
        self, struct: str, attrs: dict[str, Any], inputs: list[int], outs: list[int], name: str
    ) -> None:
        rec = getattr(self.pkg, struct).from_dict(attrs)
        specs = []
        for ti in outs:
            t = self.t(ti)
            specs.append((str(t.name or f"t{ti}"), self.dtype(ti), self.shape(ti)))
        r = self.b.node(rec, inputs, outputs=specs, name=name)
        for ti, i in zip(outs, r if isinstance(r, list) else [r]):
            qp = self.quant(ti)
            if qp is not None:
                bits = self.num_bits(ti)
                self.b.tensors[i].quantParams = [
                    self.pkg.QuantParam(numBits=bits, zeroPoint=z, scale=s) for s, z in qp
                ]
            self.idx[ti] = i

    def run(self, source: str) -> Program:
        in_names, in_dtypes, in_shapes = [], [], []
        for ti in self.g.inputs or []:
            ti = int(ti)
            t = self.t(ti)
            name = str(t.name or f"t{ti}")
            try:
                dt = self.dtype(ti)
            except _Unsupported as e:
                raise UnsupportedModelError("input", name, str(e)) from None
            self.idx[ti] = self.b.input(
                name, dt, self.shape(ti), quant=self.quant(ti), num_bits=self.num_bits(ti)
            )
            in_names.append(name)
            in_dtypes.append(dt)
            in_shapes.append(self.shape(ti))
        self.lower_operators()
        out_names = []
        for ti in self.g.outputs or []:
            ti = int(ti)
            if ti not in self.idx:
                self.tensor(ti)
            self.b.output(self.idx[ti])
            out_names.append(str(self.t(ti).name or f"t{ti}"))
        model, buffers = self.b.build()
        return Program(
            model, buffers, in_names, out_names, source, in_dtypes, in_shapes, self.b.host_nodes
        )

    def inline(self, k: int, inputs: list[int], node: str) -> list[int]:
        """Lower subgraph ``k`` into this model (a CALL, a composite's decomposition): its inputs
        are the NNRt tensors ``inputs``; returns the NNRt tensors of its outputs."""
        child = TfliteImporter(self.m, self.pkg, self.T, k, self.vars, self.depth + 1)
        child.file = self.file
        child.b = self.b
        sub_ins = [int(t) for t in (child.g.inputs or [])]
        if len(sub_ins) != len(inputs):
            raise _bad(f"{node}: subgraph {k} takes {len(sub_ins)} inputs, given {len(inputs)}")
        for ti, nn in zip(sub_ins, inputs):
            child.t(ti)
            child.idx[ti] = nn
        child.lower_operators()
        res = []
        for ti in child.g.outputs or []:
            ti = int(ti)
            if ti not in child.idx:
                child.tensor(ti)
            res.append(child.idx[ti])
        return res

    def lower_operators(self) -> None:
        """Lower every operator of the subgraph, in order, onto ``self.b``."""
        from .budget import LOAD_NODE_COST, charge

        charge(LOAD_NODE_COST * len(self.g.operators or []), "importing the operators")
        for k, op in enumerate(self.g.operators or []):
            opname = self.opname(op, k)
            outs = [int(o) for o in (op.outputs or [])]
            ins = [int(i) for i in (op.inputs or [])]
            for i in outs:
                self.t(i)
            for i in ins:
                if i != -1:  # -1: an optional input left out
                    self.t(i)
            node = f"{k}:{self.tensors[outs[0]].name if outs else ''}"
            if opname == "CUSTOM":
                oc = self.codes[int(op.opcode_index)]
                custom = f"CUSTOM {oc.custom_code}"
                cfn = _CUSTOM.get(str(oc.custom_code))
                if cfn is None:
                    raise UnsupportedModelError(custom, node, unsupported_reason(custom))
                try:
                    cfn(self, op, ins, outs, node)
                except _Unsupported as e:
                    raise UnsupportedModelError(custom, node, str(e)) from None
                continue
            fn = _HANDLERS.get(opname)
            if (
                opname in host_tflite.COMPLEX
                and ins
                and ins[0] >= 0
                and self.dtype(ins[0]).kind == "c"
            ):
                # a complex operand (after RFFT2D): NNRt v2_1 has no complex DataType
                kern = host_tflite.COMPLEX[opname](
                    op.builtin_options, [self.dtype(o) for o in outs]
                )
                self.host(opname, kern, ins, outs, node, "NNRt v2_1 has no complex DataType")
                continue
            if fn is None:
                ctl = _CONTROL.get(opname)
                try:
                    if ctl is not None:
                        ctl(self, op, ins, outs, node)
                    elif opname in host_tflite.KERNELS:
                        self.on_host(opname, op, ins, outs, node, unsupported_reason(opname))
                    else:
                        raise UnsupportedModelError(opname, node, unsupported_reason(opname))
                except _Unsupported as e:
                    raise UnsupportedModelError(opname, node, str(e)) from None
                continue
            need_in, need_out = _ARITY[opname]
            if len(ins) < need_in or len(outs) < need_out or -1 in ins[:need_in]:
                raise _bad(
                    f"operator {k} ({opname}) has inputs {ins} and outputs {outs}; "
                    f"it takes at least {need_in} inputs and {need_out} outputs"
                )
            opts = op.builtin_options
            want = _OPTIONS.get(opname)
            if opts is None and opname in _NEEDS_OPTIONS:
                raise _bad(f"operator {k} ({opname}) has no {want}")
            if opts is not None and want is not None and type(opts).__name__ != want:
                raise _bad(f"operator {k} ({opname}) carries {type(opts).__name__}, not {want}")
            try:
                if not self.fold(fn, opname, op, ins, outs, node):
                    fn(self, op, ins, outs, node)
            except _Unsupported as e:
                if opname not in host_tflite.KERNELS:
                    raise UnsupportedModelError(
                        opname, node, unsupported_reason(opname, str(e))
                    ) from None
                self.on_host(opname, op, ins, outs, node, unsupported_reason(opname, str(e)))

    def fold(
        self,
        fn: Callable[[TfliteImporter, Any, list[int], list[int], str], None],
        opname: str,
        op: Any,
        ins: list[int],
        outs: list[int],
        node: str,
    ) -> bool:
        """Compute the operator now when its inputs are constants (or, for SHAPE / RANK, when
        its input's shape is static) and its outputs fit ``_FOLD_BUDGET``: the lowered node runs
        once through the executor and its outputs become constants. False: emit it."""
        if opname in _NO_FOLD or not outs:
            return False
        out_bytes = 0
        for o in outs:
            dims = self.shape(o)
            if any(d < 0 for d in dims) or (o in self.idx):
                return False
            out_bytes += math.prod(dims) * self.dtype(o).itemsize
        # DEQUANTIZE of a constant is the model's own weights decompressed (float16 doubles,
        # int8 quadruples them): folded within four budgets, else every run would cast (and
        # re-lay out) them again (BirdNET's metadata model: 27 MB of float16-stored weights)
        if out_bytes > _FOLD_BUDGET * (4 if opname == "DEQUANTIZE" else 1):
            return False
        if opname in ("SHAPE", "RANK") and ins and ins[0] >= 0 and ins[0] not in self.folded:
            dims = self.shape(ins[0])
            if any(d < 0 for d in dims):
                return False
            val = np.array(dims if opname == "SHAPE" else len(dims))
            self.folded[outs[0]] = val.astype(self.dtype(outs[0]))
            return True
        present = [i for i in ins if i >= 0]
        if not present or any(self.data(i) is None for i in present):
            return False
        from .nnrt import execute

        saved = self.b, self.idx
        self.b = ModelBuilder(self.pkg, name="fold")
        self.idx = {}
        try:
            fn(self, op, ins, outs, node)
            if any(o not in self.idx for o in outs):
                return False
            self.b.output(*[self.idx[o] for o in outs])
            model, bufs = self.b.build()
            vals = execute(model, [], buffers=bufs)
        except (_Unsupported, IdlgenError, ValueError, TypeError, IndexError):
            return False  # emitted as a node: the executor reports any real error at run time
        finally:
            self.b, self.idx = saved
        for o, v in zip(outs, vals):
            a = np.asarray(v).astype(self.dtype(o), copy=False)
            dims = self.dims(o)
            self.folded[o] = a.reshape(dims) if math.prod(dims) == a.size else a
        return True

    def state_key(self, ti: int) -> str:
        return f"state:{self.subgraph}:{ti}"

    def read_state(self, ti: int, init: np.ndarray | None) -> int:
        """A TFLite variable tensor (an RNN's state): LiteRT keeps its value across runs, so
        it is a resource variable of the host, starting from its buffer (or zeros)."""
        dims = self.dims(ti)
        if init is None:
            init = np.zeros(dims, self.dtype(ti))
        if self.b.nnrt_only:  # NNRt alone: every run starts from the initial state
            self.idx[ti] = self.const(str(self.t(ti).name or f"t{ti}"), init, self.quant(ti))
            return self.idx[ti]
        if self.vars is None:
            self.vars = host_tflite.Variables()
        vid = self.vars.ids.setdefault(self.state_key(ti), len(self.vars.ids))
        self.vars.values.setdefault(vid, np.array(init))
        t = self.t(ti)
        why = unsupported_reason("READ_VARIABLE", "a variable tensor's state lives on the host")
        (i,) = self.b.host(
            "READ_VARIABLE",
            self.vars.read_id(vid),
            [],
            outputs=[(str(t.name or f"t{ti}"), self.dtype(ti), dims)],
            name=f"{t.name}:read",
            why=why,
        )
        self.idx[ti] = i
        return i

    def write_state(self, ti: int, value: int) -> None:
        """After a stateful operator: its new state becomes the variable tensor's value."""
        if not bool(getattr(self.t(ti), "is_variable", False)) or self.vars is None:
            return
        if self.b.nnrt_only:
            return
        vid = self.vars.ids[self.state_key(ti)]
        why = unsupported_reason("ASSIGN_VARIABLE", "a variable tensor's state lives on the host")
        self.b.host("ASSIGN_VARIABLE", self.vars.assign_id(vid), [value], outputs=[],
                    name=f"{self.t(ti).name}:write", why=why)  # fmt: skip

    def host(
        self, opname: str, fn: Any, ins: list[int], outs: list[int], node: str, why: str
    ) -> None:
        """Emit a host node (see :mod:`.host`) reading ``ins`` and writing ``outs``."""
        inputs = [self.tensor(i) if i >= 0 else -1 for i in ins]
        specs = [
            (str(self.t(o).name or f"t{o}"), None if self.dtype(o).kind == "c" else self.dtype(o),
             self.shape(o))
            for o in outs
        ]  # fmt: skip
        idx = self.b.host(opname, fn, inputs, outputs=specs, name=node, why=why)
        for o, i in zip(outs, idx):
            qp = self.quant(o)
            if qp is not None:
                self.b.tensors[i].quantParams = [
                    self.pkg.QuantParam(numBits=self.num_bits(o), zeroPoint=z, scale=s)
                    for s, z in qp
                ]
            self.idx[o] = i

    def on_host(
        self, opname: str, op: Any, ins: list[int], outs: list[int], node: str, why: str
    ) -> None:
        """A builtin NNRt v2_1 cannot run: its host_tflite kernel, folded when its inputs are
        constants, else a host node."""
        fn = host_tflite.KERNELS[opname](op.builtin_options, [self.dtype(o) for o in outs])
        present = [i for i in ins if i >= 0]
        if present and all(self.data(i) is not None for i in present):
            vals = [self.data(i) if i >= 0 else None for i in ins]
            try:
                res = fn(vals)  # type: ignore[arg-type]
            except (IdlgenError, ValueError, TypeError, IndexError):
                res = None
            if res is not None and sum(np.asarray(r).nbytes for r in res) <= _FOLD_BUDGET:
                for o, v in zip(outs, res):
                    self.folded[o] = np.asarray(v).astype(self.dtype(o), copy=False)
                return
        self.host(opname, fn, ins, outs, node, why)

    def body(self, k: int) -> SubgraphBody:
        """Subgraph ``k`` (an IF branch, WHILE condition or body, CALL_ONCE initialiser)
        imported onto NNRt and absorbed as subgraph ``<model>_subgraph<k>`` of the model being
        built (once, however many operators use it); the host kernel runs it there."""
        done = self._bodies.get(k)
        if done is not None:
            return done
        child = TfliteImporter(self.m, self.pkg, self.T, k, self.vars, self.depth + 1)
        child.file = self.file
        child.b.nnrt_only = self.b.nnrt_only
        prog = child.run(f"{self.b.name}:subgraph{k}")
        label = f"subgraph{k}"
        host = self.b.body(label, prog.model, prog.buffers, prog.host)
        self._bodies[k] = SubgraphBody(prog, label, host)
        return self._bodies[k]

    def opname(self, op: Any, k: int | None = None) -> str:
        """The operator's BuiltinOperator name, after checking its opcode index."""
        i = int(op.opcode_index)
        if not 0 <= i < len(self.codes):
            where = f"operator {k}" if k is not None else "an operator"
            raise _bad(f"{where} names opcode {i}, but the model has {len(self.codes)}")
        oc = self.codes[i]
        code = max(int(oc.builtin_code), int(oc.deprecated_builtin_code))
        try:
            return str(self.T.BuiltinOperator(code).name)
        except ValueError:
            return f"builtin {code}"


_HANDLERS: dict[str, Callable[[TfliteImporter, Any, list[int], list[int], str], None]] = {}
# Operator name -> (inputs, outputs) its handler reads at the least.
_ARITY: dict[str, tuple[int, int]] = {}


def _h(*names: str, ins: int = 1, outs: int = 1) -> Callable[[Any], Any]:
    def deco(fn: Any) -> Any:
        for n in names:
            _HANDLERS[n] = fn
            _ARITY[n] = (ins, outs)
        return fn

    return deco


# The builtin_options type each operator's handler reads, and the operators that cannot do
# without theirs (the others fall back to TFLite's defaults).
_OPTIONS = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions", "ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions",
    "DIV": "DivOptions", "RESHAPE": "ReshapeOptions", "GELU": "GeluOptions",
    "LEAKY_RELU": "LeakyReluOptions", "SOFTMAX": "SoftmaxOptions",
    "CONCATENATION": "ConcatenationOptions", "MEAN": "ReducerOptions", "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions", "REDUCE_PROD": "ReducerOptions", "SUM": "ReducerOptions",
    "SQUEEZE": "SqueezeOptions", "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions", "BATCH_MATMUL": "BatchMatMulOptions",
    "GATHER": "GatherOptions", "PACK": "PackOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
}  # fmt: skip
_NEEDS_OPTIONS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D",
                            "LEAKY_RELU", "CONCATENATION", "RESIZE_BILINEAR",
                            "RESIZE_NEAREST_NEIGHBOR", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH"})  # fmt: skip


def _act(opts: Any) -> int:
    a = int(getattr(opts, "fused_activation_function", 0) or 0)
    if a not in _ACT:
        raise _Unsupported(f"fused activation {a}")
    return _ACT[a]


def _pad_mode(opts: Any) -> int:
    return 1 if int(opts.padding) == 0 else 2  # SAME (extra bottom/right, as NNRt) / VALID


@_h("CONV_2D", "DEPTHWISE_CONV_2D", ins=2)
def _conv(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    w = imp.data(ins[1])
    if w is None:
        _conv_runtime_weights(imp, op, ins, outs, node)
        return
    x_shape = imp.shape(ins[0])
    if len(x_shape) != 4 or w.ndim != 4 or 0 in w.shape:
        raise _bad(f"{node}: convolution of a {x_shape} input with {list(w.shape)} weights")
    in_c = x_shape[3]
    wq = imp.quant(ins[1])
    if type(o).__name__ == "DepthwiseConv2DOptions":
        w = np.ascontiguousarray(w.transpose(3, 1, 2, 0))  # [1, H, W, C*M] -> [C*M, H, W, 1]
        group, out_c = in_c, w.shape[0]
    else:
        group, out_c = in_c // w.shape[3], w.shape[0]
    attrs = {"kernelSize": [w.shape[1], w.shape[2]], "stride": [int(o.stride_h), int(o.stride_w)],
             "dilation": [int(o.dilation_h_factor), int(o.dilation_w_factor)], "padMode": _pad_mode(o),
             "padList": [0, 0, 0, 0], "group": group, "inChannel": in_c, "outChannel": out_c,
             "activationType": _act(o)}  # fmt: skip
    if wq is not None and _is_hybrid(imp, ins[0], ins[1]):
        _hybrid_conv(imp, ins, outs, node, w, wq, x_shape, attrs)
        return
    inputs = [imp.tensor(ins[0]), imp.const(imp.t(ins[1]).name or node + ":w", w, wq)]
    if len(ins) > 2 and ins[2] >= 0:
        inputs.append(imp.tensor(ins[2]))
    imp.emit("Conv2DFusion", attrs, inputs, outs, node)


@_h("FULLY_CONNECTED", ins=2)
def _fc(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    w = imp.data(ins[1])
    if o is not None and int(o.weights_format) != 0:
        raise _Unsupported("shuffled weights format")
    has_bias = len(ins) > 2 and ins[2] >= 0
    keep = bool(o.keep_num_dims) if o is not None else False
    x_shape = imp.shape(ins[0])
    act = _act(o) if o is not None else 0
    if w is not None and _is_hybrid(imp, ins[0], ins[1]) and w.ndim == 2:
        asym = bool(getattr(o, "asymmetric_quantize_inputs", False)) if o is not None else False
        _hybrid_fc(imp, ins, outs, node, w, x_shape, has_bias, act, asym)
        return
    inputs = [
        imp.tensor(ins[0]),
        (
            imp.tensor(ins[1])
            if w is None
            else imp.const(imp.t(ins[1]).name or node + ":w", w, imp.quant(ins[1]))
        ),
    ]
    if has_bias:
        inputs.append(imp.tensor(ins[2]))
    use_axis = keep and len(x_shape) > 2
    imp.emit("FullConnection", {"hasBias": has_bias, "useAxis": use_axis, "axis": len(x_shape) - 1 if use_axis else 0,
                                "activationType": act}, inputs, outs, node)  # fmt: skip


@_h("AVERAGE_POOL_2D", "MAX_POOL_2D")
def _pool(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    code = "AvgPoolFusion" if _opname(imp, op) == "AVERAGE_POOL_2D" else "MaxPoolFusion"
    attrs = {"kernelSize": [int(o.filter_height), int(o.filter_width)], "strides": [int(o.stride_h), int(o.stride_w)],
             "pad": [0, 0, 0, 0], "padMode": _pad_mode(o), "roundMode": 0, "format": 1, "global": False,
             "activationType": _act(o)}  # fmt: skip
    imp.emit(code, attrs, [imp.tensor(ins[0])], outs, node)


def _opname(imp: TfliteImporter, op: Any) -> str:
    return imp.opname(op)


_BIN = {"ADD": "AddFusion", "SUB": "SubFusion", "MUL": "MulFusion", "DIV": "DivFusion"}


@_h(*_BIN, ins=2)
def _binary(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    act = _act(o) if o is not None else 0
    imp.emit(
        _BIN[_opname(imp, op)],
        {"activationType": act},
        [imp.tensor(i) for i in ins[:2]],
        outs,
        node,
    )


_PLAIN = {"MAXIMUM": "Maximum", "MINIMUM": "Minimum", "LESS": "Less", "GREATER": "Greater", "EQUAL": "Equal",
          "SQUARED_DIFFERENCE": "SquaredDifference", "NEG": "Neg", "SQRT": "Sqrt", "RSQRT": "Rsqrt",
          "ABS": "Abs", "FLOOR": "Floor", "LOG": "Log", "SIN": "Sin", "COS": "Cos", "SQUARE": "Square",
          "RESHAPE": "Reshape", "TRANSPOSE": "Transpose", "GATHER_ND": "GatherNd", "SHAPE": "Shape",
          "SELECT": "Select", "SELECT_V2": "Select"}  # fmt: skip


@_h(*_PLAIN)
def _plain(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    if name == "RESHAPE" and len(ins) > 1 and ins[1] >= 0:
        target = imp.data(ins[1])
        src = imp.shape(ins[0])
        if target is not None and target.size == 0 and src and all(d == 1 for d in src):
            # an empty shape vector: a scalar, i.e. every (unit) dim squeezed
            axes = list(range(len(src)))
            imp.emit("Squeeze", {"axis": axes}, [imp.tensor(ins[0])], outs, node)
            return
    inputs = [imp.tensor(i) for i in ins if i >= 0]
    if name == "RESHAPE" and len(inputs) < 2:
        shape = list(
            (op.builtin_options.new_shape if op.builtin_options else None) or imp.shape(outs[0])
        )
        inputs.append(imp.const(node + ":shape", np.array(shape, np.int32)))
    imp.emit(_PLAIN[name], {}, inputs, outs, node)


_ACTS = {
    "RELU": 1,
    "RELU6": 3,
    "RELU_N1_TO_1": 7,
    "LOGISTIC": 2,
    "TANH": 10,
    "HARD_SWISH": 12,
    "GELU": 19,
}


@_h(*_ACTS)
def _activation(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    approx = bool(getattr(op.builtin_options, "approximate", False)) if name == "GELU" else False
    imp.emit("Activation", {"activationType": _ACTS[name], "alpha": 0.0, "minVal": 0.0, "maxVal": 0.0,
                            "approximate": approx}, [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("LEAKY_RELU")
def _leaky(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit(
        "LeakyRelu",
        {"negativeSlope": float(op.builtin_options.alpha)},
        [imp.tensor(ins[0])],
        outs,
        node,
    )


@_h("SOFTMAX")
def _softmax(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    beta = float(op.builtin_options.beta) if op.builtin_options is not None else 1.0
    x = imp.tensor(ins[0])
    if beta != 1.0:  # softmax(beta * x): the temperature as a multiplication first
        b = imp.const(node + ":beta", np.array(beta, imp.float_of(ins[0])))
        x = imp.mid("MulFusion", {"activationType": 0}, [x, b], imp.float_of(ins[0]),
                    imp.shape(ins[0]), node + ":scaled")  # fmt: skip
    imp.emit("Softmax", {"axis": [-1]}, [x], outs, node)


@_h("CONCATENATION")
def _concat(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    xs = [imp.tensor(i) for i in ins]
    if _act(o):  # Concat, then the activation
        y = imp.mid("Concat", {"axis": int(o.axis)}, xs, imp.float_of(outs[0]), imp.shape(outs[0]),
                    node + ":concat")  # fmt: skip
        imp.emit("Activation", {"activationType": _act(o), "alpha": 0.0, "minVal": 0.0,
                                "maxVal": 0.0, "approximate": False}, [y], outs, node)  # fmt: skip
        return
    imp.emit("Concat", {"axis": int(o.axis)}, xs, outs, node)


_REDUCE = {"MEAN": 0, "REDUCE_MAX": 1, "REDUCE_MIN": 2, "REDUCE_PROD": 3, "SUM": 4}


@_h(*_REDUCE, ins=2)
def _reduce(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    keep = bool(op.builtin_options.keep_dims) if op.builtin_options is not None else False
    axes = imp.data(ins[1])
    ax = imp.tensor(ins[1]) if axes is None else imp.const(node + ":axes", axes.astype(np.int32))
    imp.emit("ReduceFusion", {"keepDims": keep, "mode": _REDUCE[_opname(imp, op)], "reduceToEnd": False,
                              "coeff": 1.0}, [imp.tensor(ins[0]), ax], outs, node)  # fmt: skip


@_h("PAD", "PADV2", ins=2)
def _pad(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    pads = imp.data(ins[1])
    value = 0.0
    if len(ins) > 2 and ins[2] >= 0:
        cv = imp.data(ins[2])
        if cv is None:
            raise _Unsupported("constant value computed at run time")
        value = float(cv.reshape(-1)[0])
        cq = imp.quant(ins[2])
        if cq is not None and cv.dtype.kind in "iu":  # a quantised pad value: its real value
            value = float((value - cq[0][1]) * cq[0][0])
    # A quantised PAD fills with the zero point, i.e. real 0: the executor pads the real values.
    if pads is None:  # paddings at run time: PadFusion's input 1
        imp.emit("PadFusion", {"paddings": [], "paddingMode": 0, "constantValue": value},
                 [imp.tensor(ins[0]), imp.tensor(ins[1])], outs, node)  # fmt: skip
        return
    imp.emit("PadFusion", {"paddings": pads.astype(int).tolist(), "paddingMode": 0, "constantValue": value},
             [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("SQUEEZE")
def _squeeze(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    dims = list(op.builtin_options.squeeze_dims or []) if op.builtin_options is not None else []
    if not dims:
        dims = [i for i, d in enumerate(imp.shape(ins[0])) if d == 1]
    imp.emit("Squeeze", {"axis": [int(d) for d in dims]}, [imp.tensor(ins[0])], outs, node)


@_h("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", ins=2)
def _resize(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    size = imp.data(ins[1])
    align, half = bool(o.align_corners), bool(o.half_pixel_centers)
    bilinear = _opname(imp, op) == "RESIZE_BILINEAR"
    ctm = 1 if align else (2 if half else 0)
    # nearest (TFLite): align_corners rounds o * scale half away from zero; half_pixel_centers
    # takes floor((o + 0.5) * scale), the half-pixel source rounded half up; else floor
    nearest = 2 if (align or half) else 3
    attrs = {"method": 0 if bilinear else 1, "newHeight": 0, "newWidth": 0, "preserveAspectRatio": False,
             "coordinateTransformMode": ctm, "cubicCoeff": -0.75, "excludeOutside": 0,
             "extrapolationValue": 0.0, "nearestMode": nearest}  # fmt: skip
    imp.emit(
        "Resize",
        attrs,
        [
            imp.tensor(ins[0]),
            (
                imp.tensor(ins[1])
                if size is None
                else imp.const(node + ":size", size.astype(np.int32))
            ),
        ],
        outs,
        node,
    )


@_h("QUANTIZE", "DEQUANTIZE")
def _quant(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    src, dst = imp.dtype(ins[0]), imp.dtype(outs[0])
    if src == np.float16 and dst == np.float32:  # float16 weights: a plain Cast
        code = imp.const(node + ":to", np.array([from_numpy(dst)], np.int32))
        imp.emit("Cast", {}, [imp.tensor(ins[0]), code], outs, node)
        return
    x = imp.tensor(ins[0])
    if src.kind in "iu" and dst.kind in "iu":  # requantise: through the real values
        f32 = np.dtype(np.float32)
        x = imp.mid("QuantDTypeCastV2", {"srcT": from_numpy(src), "dstT": from_numpy(f32), "axis": 0},
                    [x], f32, imp.shape(ins[0]), node + ":real")  # fmt: skip
        src = f32
    q = imp.t(ins[0] if src.kind in "iu" else outs[0]).quantization
    axis = int(getattr(q, "quantized_dimension", 0) or 0) if q is not None else 0
    imp.emit("QuantDTypeCastV2", {"srcT": from_numpy(src), "dstT": from_numpy(dst), "axis": axis},
             [x], outs, node)  # fmt: skip


def import_tflite(
    data: bytes,
    *,
    package: Any = None,
    source: str = "",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    nnrt_only: bool = False,
) -> Program:
    tfl = tflite_package()
    model = tfl.Model.from_flatbuffer(data)
    pkg = target_package(package)
    imp = TfliteImporter(model, pkg, tfl, variables=host_tflite.Variables())
    imp.file = data
    imp.b.nnrt_only = nnrt_only
    if input_shapes:
        _pin_inputs(imp, input_shapes)
    return imp.run(source)


def _pin_inputs(imp: TfliteImporter, shapes: Mapping[str, Sequence[int]]) -> None:
    """Set the dims of the named subgraph inputs (``shape_signature`` -1 dims may take any
    size; fixed dims must match)."""
    from idlgen.errors import ConfigError

    by_name = {str(imp.t(int(ti)).name or f"t{int(ti)}"): int(ti) for ti in imp.g.inputs or []}
    for name, dims in shapes.items():
        ti = by_name.get(name)
        if ti is None:
            raise ConfigError(
                f"input_shapes names {name!r}, but the model's inputs are {', '.join(sorted(by_name))}"
            )
        want, got = imp.shape(ti), [int(d) for d in dims]
        if len(got) != len(want) or any(w >= 0 and w != g or g < 0 for w, g in zip(want, got)):
            raise ConfigError(f"input_shapes[{name!r}] is {got}; the model declares {want}")
        t = imp.t(ti)
        t.shape = list(got)
        t.shape_signature = list(got)


@_h("BATCH_MATMUL", ins=2)
def _batch_matmul(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    adj_x, adj_y = (bool(o.adj_x), bool(o.adj_y)) if o is not None else (False, False)
    rhs = imp.data(ins[1])
    if rhs is not None and rhs.ndim == 2 and not adj_x and _is_hybrid(imp, ins[0], ins[1]):
        wq = imp.quant(ins[1])
        if wq is not None and len(wq) == 1:  # per-row quantised lhs times int8 rhs
            asym = bool(getattr(o, "asymmetric_quantize_inputs", False)) if o is not None else False
            w = np.ascontiguousarray(rhs if adj_y else rhs.T)  # [N, K]
            _hybrid_fc(imp, ins, outs, node, w, imp.shape(ins[0]), False, 0, asym)
            return
    if rhs is not None and rhs.ndim > 2 and _is_hybrid(imp, ins[0], ins[1]):
        wq = imp.quant(ins[1])
        if adj_x or wq is None or len(wq) != 1:
            raise _Unsupported("dynamic-range BATCH_MATMUL with adj_x or per-channel weights")
        _hybrid_bmm(imp, op, ins, outs, node, rhs, wq, adj_y)
        return
    attrs = {"transposeA": adj_x, "transposeB": adj_y, "activationType": 0}
    imp.emit("MatMulFusion", attrs, [imp.tensor(i) for i in ins[:2]], outs, node)


@_h("GATHER", ins=2)
def _gather(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o = op.builtin_options
    if o is not None and int(o.batch_dims):
        _gather_batched(imp, op, ins, outs, node)
        return
    axis = int(o.axis) if o is not None else 0
    ax = imp.const(node + ":axis", np.array([axis], np.int32))
    imp.emit("Gather", {}, [imp.tensor(ins[0]), imp.tensor(ins[1]), ax], outs, node)


@_h("SPLIT", ins=2)
def _split(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    axis = imp.data(ins[0])  # SPLIT takes (axis, input)
    if axis is None:
        raise _Unsupported("axis computed at run time")
    ax = int(axis.reshape(-1)[0])
    shape = imp.shape(ins[1])
    ax = ax + len(shape) if ax < 0 else ax
    if not 0 <= ax < len(shape):
        raise _bad(f"{node}: SPLIT axis {int(axis.reshape(-1)[0])} of a rank-{len(shape)} input")
    n = len(outs)
    if shape[ax] < 0 or shape[ax] % n:
        raise _Unsupported(f"dimension {shape[ax]} does not split evenly into {n}")
    attrs = {"outputNum": n, "sizeSplits": [shape[ax] // n] * n, "axis": ax}
    imp.emit("Split", attrs, [imp.tensor(ins[1])], outs, node)


@_h("PACK")
def _pack(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    axis = int(op.builtin_options.axis) if op.builtin_options is not None else 0
    imp.emit("Stack", {"axis": axis}, [imp.tensor(i) for i in ins], outs, node)


@_h("EXP")
def _exp(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    attrs = {"base": -1.0, "scale": 1.0, "shift": 0.0}
    imp.emit("ExpFusion", attrs, [imp.tensor(ins[0])], outs, node)


@_h("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def _d2s(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    attrs: dict[str, Any] = {"blockSize": int(op.builtin_options.block_size), "format": 1}
    if _opname(imp, op) == "DEPTH_TO_SPACE":
        imp.emit("DepthToSpace", {**attrs, "mode": "DCR"}, [imp.tensor(ins[0])], outs, node)
    else:
        imp.emit("SpaceToDepth", attrs, [imp.tensor(ins[0])], outs, node)


# -- every other builtin NNRt v2_1 expresses (see tflite_ops.TFLITE_TO_NNRT) -------------------


def _opts(op: Any, field: str, default: Any) -> Any:
    o = op.builtin_options
    v = getattr(o, field, None) if o is not None else None
    return default if v is None else v


def _const_ints(imp: TfliteImporter, ti: int, what: str) -> list[int]:
    v = imp.data(ti)
    if v is None:
        raise _Unsupported(f"{what} computed at run time")
    return [int(a) for a in np.asarray(v).reshape(-1)]


_PLAIN2 = {"GREATER_EQUAL": "GreaterEqual", "LESS_EQUAL": "LessEqual", "NOT_EQUAL": "NotEqual",
           "LOGICAL_AND": "LogicalAnd", "LOGICAL_OR": "LogicalOr", "LOGICAL_NOT": "LogicalNot",
           "CEIL": "Ceil", "ROUND": "Round", "EXPAND_DIMS": "ExpandDims", "RANK": "Rank",
           "GATHER_ND": "GatherNd", "SCATTER_ND": "ScatterNd", "UNPACK": "Unstack",
           "LOG_SOFTMAX": "LogSoftmax", "BROADCAST_TO": "BroadcastTo", "TILE": "TileFusion",
           "SLICE": "SliceFusion", "PRELU": "PReLUFusion", "WHERE": "Where"}  # fmt: skip
_PLAIN2_ATTRS: dict[str, dict[str, Any]] = {
    "TILE": {"dims": []}, "SLICE": {"axes": []}, "PRELU": {"channelShared": False},
    "BROADCAST_TO": {"shape": []}, "LOG_SOFTMAX": {"axis": -1},
}  # fmt: skip


@_h(*_PLAIN2)
def _plain2(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    attrs = dict(_PLAIN2_ATTRS.get(name, {}))
    if name == "UNPACK":
        axis = int(_opts(op, "axis", 0))
        attrs["axis"] = axis
    imp.emit(_PLAIN2[name], attrs, [imp.tensor(i) for i in ins if i >= 0], outs, node)


@_h("SELECT_V2", ins=3)
def _select_v2(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit("Where", {}, [imp.tensor(i) for i in ins[:3]], outs, node)


_ACTS2 = {
    "ELU": (4, 1.0, 0.0, 0.0),
    "RELU_0_TO_1": (16, 0.0, 0.0, 1.0),
    "SIGN": (17, 0.0, 0.0, 0.0),
}


@_h(*_ACTS2)
def _activation2(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    kind, alpha, lo, hi = _ACTS2[_opname(imp, op)]
    imp.emit("Activation", {"activationType": kind, "alpha": alpha, "minVal": lo, "maxVal": hi,
                            "approximate": False}, [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("STRIDED_SLICE", ins=4)
def _strided_slice(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    o = op.builtin_options
    inputs = [imp.tensor(ins[0]), imp.tensor(ins[1])]
    if o is not None and bool(getattr(o, "offset", False)):
        # end is relative to begin: end = begin + end
        b, e = _const_ints(imp, ins[1], "begin"), _const_ints(imp, ins[2], "end")
        end = np.array([x + y for x, y in zip(b, e)], np.int32)
        inputs.append(imp.const(node + ":end", end))
    else:
        inputs.append(imp.tensor(ins[2]))
    inputs.append(imp.tensor(ins[3]))
    attrs = {f: int(getattr(o, k, 0) or 0) if o is not None else 0
             for f, k in (("beginMask", "begin_mask"), ("endMask", "end_mask"),
                          ("ellipsisMask", "ellipsis_mask"), ("newAxisMask", "new_axis_mask"),
                          ("shrinkAxisMask", "shrink_axis_mask"))}  # fmt: skip
    imp.emit("StridedSlice", attrs, inputs, outs, node)


@_h("REVERSE_V2", ins=2)
def _reverse(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """A StridedSlice with stride -1 on the reversed axes (begin -1, end masked)."""
    rank = len(imp.shape(ins[0]))
    axes = {a + rank if a < 0 else a for a in _const_ints(imp, ins[1], "axes")}
    begin = [-1 if a in axes else 0 for a in range(rank)]
    strides = [-1 if a in axes else 1 for a in range(rank)]
    mask = (1 << rank) - 1
    keep = sum(1 << a for a in range(rank) if a not in axes)
    inputs = [imp.tensor(ins[0]), imp.const(node + ":begin", np.array(begin, np.int32)),
              imp.const(node + ":end", np.zeros(rank, np.int32)),
              imp.const(node + ":strides", np.array(strides, np.int32))]  # fmt: skip
    attrs = {"beginMask": keep, "endMask": mask, "ellipsisMask": 0, "newAxisMask": 0,
             "shrinkAxisMask": 0}  # fmt: skip
    imp.emit("StridedSlice", attrs, inputs, outs, node)


@_h("MIRROR_PAD", ins=2)
def _mirror_pad(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    pads = imp.data(ins[1])
    if pads is None:
        raise _Unsupported("paddings computed at run time")
    mode = 1 if int(_opts(op, "mode", 0)) == 0 else 2  # REFLECT / SYMMETRIC
    imp.emit("PadFusion", {"paddings": pads.astype(int).tolist(), "paddingMode": mode,
                           "constantValue": 0.0}, [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("FILL", ins=2)
def _fill(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit("Fill", {}, [imp.tensor(ins[1]), imp.tensor(ins[0])], outs, node)  # (value, dims)


@_h("ZEROS_LIKE")
def _zeros_like(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    dt = imp.dtype(ins[0])
    shape = imp.mid("Shape", {}, [imp.tensor(ins[0])], np.int32, [len(imp.shape(ins[0]))],
                    node + ":shape")  # fmt: skip
    imp.emit("Fill", {}, [imp.const(node + ":zero", np.zeros((), dt)), shape], outs, node)


@_h("RANGE", ins=3)
def _range(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    attrs = {"dataType": from_numpy(imp.dtype(outs[0])), "start": 0, "limit": 0, "delta": 1}
    imp.emit("Range", attrs, [imp.tensor(i) for i in ins[:3]], outs, node)


@_h("CAST")
def _cast(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    code = imp.const(node + ":to", np.array([from_numpy(imp.dtype(outs[0]))], np.int32))
    imp.emit("Cast", {}, [imp.tensor(ins[0]), code], outs, node)


@_h("POW", ins=2)
def _pow(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit(
        "PowFusion", {"scale": 1.0, "shift": 0.0}, [imp.tensor(i) for i in ins[:2]], outs, node
    )


@_h("ARG_MAX", "ARG_MIN", ins=2)
def _argmax(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    axis = _const_ints(imp, ins[1], "axis")
    if len(axis) != 1:
        raise _bad(f"{node}: ARG_MAX/ARG_MIN axis {axis}")
    x = imp.tensor(ins[0])
    if _opname(imp, op) == "ARG_MIN":  # the first minimum is the first maximum of -x
        if imp.dtype(ins[0]).kind == "u" and imp.quant(ins[0]) is None:
            raise _Unsupported("ARG_MIN of unsigned integers (no exact negation)")
        x = imp.mid("Neg", {}, [x], imp.float_of(ins[0]), imp.shape(ins[0]), node + ":neg")
    attrs = {"axis": axis[0], "topK": 1, "keepDims": False, "outMaxValue": False}
    imp.emit("ArgMaxFusion", attrs, [x], outs, node)


@_h("TOPK_V2", ins=2, outs=2)
def _topk(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit(
        "TopKFusion", {"sorted": True, "axis": -1}, [imp.tensor(i) for i in ins[:2]], outs, node
    )


@_h("ONE_HOT", ins=4)
def _one_hot(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit(
        "OneHot", {"axis": int(_opts(op, "axis", -1))}, [imp.tensor(i) for i in ins[:4]], outs, node
    )


@_h("SPLIT_V", ins=3)
def _split_v(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    sizes = _const_ints(imp, ins[1], "size_splits")
    shape = imp.shape(ins[0])
    ax = _const_ints(imp, ins[2], "axis")[0]
    ax = ax + len(shape) if ax < 0 else ax
    if not 0 <= ax < len(shape) or len(sizes) != len(outs):
        raise _bad(f"{node}: SPLIT_V of {shape} on axis {ax} into {sizes}")
    if -1 in sizes:
        if shape[ax] < 0:
            raise _Unsupported("size -1 of a dimension known only at run time")
        sizes[sizes.index(-1)] = shape[ax] - sum(s for s in sizes if s != -1)
    attrs = {"outputNum": len(outs), "sizeSplits": sizes, "axis": ax}
    imp.emit("Split", attrs, [imp.tensor(ins[0])], outs, node)


@_h("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", ins=3)
def _s2b(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    if len(imp.shape(ins[0])) != 4:
        raise _Unsupported("only 4-D NHWC inputs (NNRt's SpaceToBatchND / BatchToSpaceND)")
    block = _const_ints(imp, ins[1], "block shape")
    pads = _const_ints(imp, ins[2], "paddings")
    pairs = [pads[0:2], pads[2:4]]
    if _opname(imp, op) == "SPACE_TO_BATCH_ND":
        imp.emit("SpaceToBatchND", {"blockShape": block, "paddings": pairs}, [imp.tensor(ins[0])],
                 outs, node)  # fmt: skip
    else:
        imp.emit("BatchToSpaceND", {"blockShape": block, "crops": pairs}, [imp.tensor(ins[0])],
                 outs, node)  # fmt: skip


@_h("SPARSE_TO_DENSE", ins=3)
def _sparse_to_dense(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    inputs = [imp.tensor(ins[0]), imp.tensor(ins[2]), imp.tensor(ins[1])]  # indices, values, shape
    if len(ins) > 3 and ins[3] >= 0:
        inputs.append(imp.tensor(ins[3]))
    imp.emit("SparseToDense", {}, inputs, outs, node)


@_h("EMBEDDING_LOOKUP", ins=2)
def _embedding(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    ax = imp.const(node + ":axis", np.array([0], np.int32))
    imp.emit("Gather", {}, [imp.tensor(ins[1]), imp.tensor(ins[0]), ax], outs, node)


@_h("L2_NORMALIZATION")
def _l2norm(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    # TFLite divides by max(||x||, 1e-6): the NNRt form max(sum x^2, epsilon) with epsilon 1e-12
    act = _act(op.builtin_options) if op.builtin_options is not None else 0
    imp.emit("L2NormalizeFusion", {"axis": [-1], "epsilon": 1e-12, "activationType": act},
             [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("LOCAL_RESPONSE_NORMALIZATION")
def _lrn(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    attrs = {"depthRadius": int(_opts(op, "radius", 5)), "bias": float(_opts(op, "bias", 1.0)),
             "alpha": float(_opts(op, "alpha", 1.0)), "beta": float(_opts(op, "beta", 0.5)),
             "normRegion": "ACROSS_CHANNELS"}  # fmt: skip
    imp.emit("LRN", attrs, [imp.tensor(ins[0])], outs, node)


@_h("L2_POOL_2D")
def _l2pool(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """sqrt(mean of squares over the window's valid cells): Square, AvgPool, Sqrt."""
    o = op.builtin_options
    dt = imp.float_of(ins[0])
    sq = imp.mid("Square", {}, [imp.tensor(ins[0])], dt, imp.shape(ins[0]), node + ":sq")
    attrs = {"kernelSize": [int(o.filter_height), int(o.filter_width)], "strides": [int(o.stride_h), int(o.stride_w)],
             "pad": [0, 0, 0, 0], "padMode": _pad_mode(o), "roundMode": 0, "format": 1, "global": False,
             "activationType": 0}  # fmt: skip
    avg = imp.mid("AvgPoolFusion", attrs, [sq], dt, imp.shape(outs[0]), node + ":mean")
    if _act(o):
        r = imp.mid("Sqrt", {}, [avg], dt, imp.shape(outs[0]), node + ":sqrt")
        imp.emit("Activation", {"activationType": _act(o), "alpha": 0.0, "minVal": 0.0, "maxVal": 0.0,
                                "approximate": False}, [r], outs, node)  # fmt: skip
    else:
        imp.emit("Sqrt", {}, [avg], outs, node)


@_h("ADD_N")
def _add_n(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    xs = [imp.tensor(i) for i in ins]
    if len(xs) == 1:
        imp.emit("Reshape", {}, [xs[0], imp.const(node + ":shape", np.array(imp.dims(outs[0]), np.int32))],
                 outs, node)  # fmt: skip
        return
    acc = xs[0]
    for k, x in enumerate(xs[1:-1]):
        acc = imp.mid("AddFusion", {"activationType": 0}, [acc, x], imp.float_of(outs[0]),
                      imp.shape(outs[0]), f"{node}:add{k}")  # fmt: skip
    imp.emit("AddFusion", {"activationType": 0}, [acc, xs[-1]], outs, node)


@_h("FLOOR_DIV", ins=2)
def _floor_div(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """floor(x / y); integers divide in float64 (exact quotient's floor for |x| < 2**31)."""
    dt = imp.dtype(outs[0])
    x, y = imp.tensor(ins[0]), imp.tensor(ins[1])
    shape = imp.shape(outs[0])
    if dt.kind in "iu":
        f64 = imp.const(node + ":f64", np.array([from_numpy(np.dtype(np.float64))], np.int32))
        x = imp.mid("Cast", {}, [x, f64], np.float64, imp.shape(ins[0]), node + ":x64")
        y = imp.mid("Cast", {}, [y, f64], np.float64, imp.shape(ins[1]), node + ":y64")
        q = imp.mid("DivFusion", {"activationType": 0}, [x, y], np.float64, shape, node + ":div")
        f = imp.mid("Floor", {}, [q], np.float64, shape, node + ":floor")
        to = imp.const(node + ":to", np.array([from_numpy(dt)], np.int32))
        imp.emit("Cast", {}, [f, to], outs, node)
        return
    q = imp.mid(
        "DivFusion", {"activationType": 0}, [x, y], imp.float_of(outs[0]), shape, node + ":div"
    )
    imp.emit("Floor", {}, [q], outs, node)


@_h("FLOOR_MOD", ins=2)
def _floor_mod(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """r = fmod(x, y); r + y where r != 0 and r, y differ in sign (TFLite's floor_mod)."""
    dt = imp.float_of(outs[0])
    x, y = imp.tensor(ins[0]), imp.tensor(ins[1])
    shape = imp.shape(outs[0])
    r = imp.mid("Mod", {}, [x, y], dt, shape, node + ":fmod")
    zero = imp.const(node + ":zero", np.zeros((), dt))
    nz = imp.mid("NotEqual", {}, [r, zero], np.bool_, shape, node + ":nz")
    rn = imp.mid("Less", {}, [r, zero], np.bool_, shape, node + ":rneg")
    yn = imp.mid("Less", {}, [y, zero], np.bool_, imp.shape(ins[1]), node + ":yneg")
    diff = imp.mid("NotEqual", {}, [rn, yn], np.bool_, shape, node + ":sign")
    fix = imp.mid("LogicalAnd", {}, [nz, diff], np.bool_, shape, node + ":fix")
    ry = imp.mid("AddFusion", {"activationType": 0}, [r, y], dt, shape, node + ":ry")
    imp.emit("Where", {}, [fix, ry, r], outs, node)


@_h("REDUCE_ANY", "REDUCE_ALL", ins=2)
def _reduce_bool(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    keep = bool(_opts(op, "keep_dims", False))
    axes = imp.const(node + ":axes", np.array(_const_ints(imp, ins[1], "axes"), np.int32))
    attrs = {"keepDims": keep, "mode": 7, "reduceToEnd": False, "coeff": 1.0}
    if _opname(imp, op) == "REDUCE_ALL":
        imp.emit("ReduceFusion", attrs, [imp.tensor(ins[0]), axes], outs, node)
        return
    # any(x) = not all(not x)
    nx = imp.mid("LogicalNot", {}, [imp.tensor(ins[0])], np.bool_, imp.shape(ins[0]), node + ":not")
    a = imp.mid("ReduceFusion", attrs, [nx, axes], np.bool_, imp.shape(outs[0]), node + ":all")
    imp.emit("LogicalNot", {}, [a], outs, node)


@_h("TRANSPOSE_CONV", ins=3)
def _transpose_conv(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """inputs (output_shape, weights [O, kH, kW, I], x[, bias]): Conv2dTransposeFusion with
    [I, kH, kW, O] weights and the pads that give TFLite's output_shape."""
    o = op.builtin_options
    w = imp.data(ins[1])
    if w is None:
        raise _Unsupported("weights computed at run time")
    x_shape = imp.shape(ins[2])
    out_shape = imp.data(ins[0])
    if w.ndim != 4 or len(x_shape) != 4 or out_shape is None or out_shape.size != 4:
        raise _Unsupported(f"transposed convolution of {x_shape} with {list(w.shape)} weights")
    if x_shape[1] < 0 or x_shape[2] < 0:
        raise _Unsupported("spatial dims known only at run time")
    oc, kh, kw, ic = w.shape
    sh, sw = int(o.stride_h), int(o.stride_w)
    pads, extra = [], []
    for size, k, s, want in (
        (x_shape[1], kh, sh, int(out_shape[1])),
        (x_shape[2], kw, sw, int(out_shape[2])),
    ):
        total = (size - 1) * s + k - want
        if total >= 0:
            first = total // 2 if int(o.padding) == 0 else 0
            pads += [first, total - first]
            extra.append(0)
        else:
            pads += [0, 0]
            extra.append(-total)
    wq = imp.quant(ins[1])
    if wq is not None and _is_hybrid(imp, ins[2], ins[1]) and len(x_shape) == 4:
        f64 = np.dtype(np.float64)
        attrs = {"kernelSize": [kh, kw], "stride": [sh, sw], "dilation": [1, 1], "padMode": 0,
                 "padList": pads, "group": 1, "inChannel": ic, "outChannel": oc,
                 "activationType": 0, "outputPaddings": extra}  # fmt: skip
        # LiteRT's hybrid transposed convolution quantises each image asymmetrically
        q, sf = _dynamic_quant(imp, imp.tensor(ins[2]), x_shape, True, node + ":dq")
        to64 = imp.const(node + ":to64", np.array([from_numpy(f64)], np.int32))
        q64 = imp.mid("Cast", {}, [q, to64], f64, x_shape, node + ":q64")
        w64 = np.ascontiguousarray(_weights64(w, wq, 0).transpose(3, 1, 2, 0))
        out_dims = imp.shape(outs[0])
        acc = imp.mid("Conv2dTransposeFusion", attrs, [q64, imp.const(node + ":w64", w64)], f64,
                      out_dims, node + ":acc64")  # fmt: skip
        bias = imp.tensor(ins[3]) if len(ins) > 3 and ins[3] >= 0 else None
        _hybrid_tail(imp, acc, out_dims, sf, wq, bias, _act(o), outs, node)
        return
    if wq is not None and len(wq) > 1:
        # per output channel (axis 0), which the transpose moves last: the executor would
        # dequantise them anyway, so they are dequantised here, with its formula
        from .quant import QuantParams, dequantize

        qp = QuantParams(np.array([a for a, _ in wq]), np.array([z for _, z in wq]))
        w, wq = dequantize(w, qp, axis=0), None
    wt = np.ascontiguousarray(w.transpose(3, 1, 2, 0))
    attrs = {"kernelSize": [kh, kw], "stride": [sh, sw], "dilation": [1, 1], "padMode": 0,
             "padList": pads, "group": 1, "inChannel": ic, "outChannel": oc,
             "activationType": _act(o), "outputPaddings": extra}  # fmt: skip
    inputs = [imp.tensor(ins[2]), imp.const(node + ":w", wt, wq)]
    if len(ins) > 3 and ins[3] >= 0:
        inputs.append(imp.tensor(ins[3]))
    imp.emit("Conv2dTransposeFusion", attrs, inputs, outs, node)


@_h("CUMSUM", ins=2)
def _cumsum(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """A running sum along ``axis`` is a product with a constant triangular matrix: move the
    axis last (Transpose), MatMulFusion, move it back."""
    shape = imp.shape(ins[0])
    r = len(shape)
    ax = _const_ints(imp, ins[1], "axis")[0]
    ax = ax + r if ax < 0 else ax
    n = shape[ax] if 0 <= ax < r else -1
    if n < 0:
        raise _Unsupported("axis length known only at run time")
    dt = imp.dtype(ins[0])
    if dt.kind != "f" or imp.quant(ins[0]) is not None:
        raise _Unsupported(f"{dt} input (the MatMul decomposition is exact for floats)")
    exclusive, reverse = bool(_opts(op, "exclusive", False)), bool(_opts(op, "reverse", False))
    i, j = np.indices((n, n))  # out[..., j] = sum_i x[..., i] * T[i, j]
    tri = (i > j) if reverse else (i < j)
    if not exclusive:
        tri |= i == j
    perm = [a for a in range(r) if a != ax] + [ax]
    moved = [shape[a] for a in perm]
    x = imp.tensor(ins[0])
    if ax != r - 1:
        x = imp.mid("Transpose", {}, [x, imp.const(node + ":perm", np.array(perm, np.int32))], dt,
                    moved, node + ":t")  # fmt: skip
    tri_t = imp.const(node + ":tri", tri.astype(dt))
    mm = {"transposeA": False, "transposeB": False, "activationType": 0}
    if ax == r - 1:
        imp.emit("MatMulFusion", mm, [x, tri_t], outs, node)
        return
    y = imp.mid("MatMulFusion", mm, [x, tri_t], dt, moved, node + ":mm")
    back = np.argsort(perm).astype(np.int32)
    imp.emit("Transpose", {}, [y, imp.const(node + ":back", back)], outs, node)


# -- hybrid (dynamic-range) quantisation: int8 weights, float activations -----------------------
#
# LiteRT's builtin kernels quantise the float input on every call, per batch row (per image for
# convolutions): symmetrically (scale max|x| / 127, no zero point) or, with
# ``asymmetric_quantize_inputs``, asymmetrically (scale (max - min) / 255 over a range that
# holds 0, and the nudged zero point), round half away from zero, multiply in integers and scale
# the int32 sums back: ``bias + dot * (input_scale * weight_scale)``. The lowering spells that out
# in NNRt operators: the integers are carried as floats (exact), and the products are summed
# in float64 (exact for int8 x int8 sums below 2**53).


def _is_hybrid(imp: TfliteImporter, x: int, w: int) -> bool:
    return (
        imp.dtype(x).kind == "f"
        and imp.dtype(w) in (np.dtype(np.int8), np.dtype(np.uint8))
        and imp.quant(w) is not None
        and imp.data(w) is not None
    )


def _round_away(imp: TfliteImporter, t: int, dt: Any, dims: list[int], name: str) -> int:
    """C ``round`` (half away from zero): sign(t) * floor(|t| + 0.5)."""
    a = imp.mid("Abs", {}, [t], dt, dims, name + ":abs")
    h = imp.mid("AddFusion", {"activationType": 0}, [a, imp.const(name + ":half", np.array(0.5, dt))],
                dt, dims, name + ":h")  # fmt: skip
    f = imp.mid("Floor", {}, [h], dt, dims, name + ":floor")
    s = imp.mid("Activation", {"activationType": 17, "alpha": 0.0, "minVal": 0.0, "maxVal": 0.0,
                               "approximate": False}, [t], dt, dims, name + ":sign")  # fmt: skip
    return imp.mid("MulFusion", {"activationType": 0}, [f, s], dt, dims, name + ":round")


def _dynamic_quant(
    imp: TfliteImporter, x: int, dims: list[int], asym: bool, name: str
) -> tuple[int, int]:
    """Quantise ``x`` (float32, NNRt tensor ``x`` of shape ``dims``) per batch row (axis 0) as
    LiteRT does; returns (q - zero point as float32, scale of shape [B, 1, ...] float32)."""
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    red = imp.const(name + ":axes", np.arange(1, len(dims), dtype=np.int32))
    row = [dims[0]] + [1] * (len(dims) - 1)
    rf = {"keepDims": True, "reduceToEnd": False, "coeff": 1.0}

    def c(v: float, dt: Any, tag: str) -> int:
        return imp.const(f"{name}:{tag}", np.array(v, dt))

    def op2(struct: str, a: int, b: int, dt: Any, shape: list[int], tag: str) -> int:
        attrs = {"activationType": 0} if struct.endswith("Fusion") else {}
        return imp.mid(struct, attrs, [a, b], dt, shape, f"{name}:{tag}")

    if not asym:
        a = imp.mid("Abs", {}, [x], f32, dims, name + ":abs")
        r = imp.mid("ReduceFusion", {**rf, "mode": 1}, [a, red], f32, row, name + ":range")
        # range 0: every q is 0 whatever the scale; the floor keeps 127 / range finite
        rr = op2("Maximum", r, c(1e-30, f32, "tiny"), f32, row, "safe")
        inv = op2("DivFusion", c(127.0, f32, "127"), rr, f32, row, "inv")
        y = op2("MulFusion", x, inv, f32, dims, "y")
        q = _round_away(imp, y, f32, dims, name + ":q")
        sf = op2("DivFusion", r, c(127.0, f32, "127b"), f32, row, "scale")
        return q, sf
    mn = imp.mid("ReduceFusion", {**rf, "mode": 2}, [x, red], f32, row, name + ":min")
    mx = imp.mid("ReduceFusion", {**rf, "mode": 1}, [x, red], f32, row, name + ":max")
    to64 = imp.const(name + ":f64", np.array([from_numpy(f64)], np.int32))
    to32 = imp.const(name + ":f32", np.array([from_numpy(f32)], np.int32))
    rmin = op2("Minimum", imp.mid("Cast", {}, [mn, to64], f64, row, name + ":min64"),
               c(0.0, f64, "zero"), f64, row, "rmin")  # fmt: skip
    rmax = op2("Maximum", imp.mid("Cast", {}, [mx, to64], f64, row, name + ":max64"),
               c(0.0, f64, "zero2"), f64, row, "rmax")  # fmt: skip
    span = op2("SubFusion", rmax, rmin, f64, row, "span")
    one = c(1.0, f64, "one")
    zero = c(0.0, f64, "zero3")
    empty = op2("Equal", span, zero, np.bool_, row, "empty")
    span = imp.mid("Where", {}, [empty, one, span], f64, row, name + ":span1")  # x all 0: any scale
    scale = op2("DivFusion", span, c(255.0, f64, "255"), f64, row, "scale64")
    lo = op2("DivFusion", rmin, scale, f64, row, "lo")
    hi = op2("DivFusion", rmax, scale, f64, row, "hi")
    zmin = op2("SubFusion", c(-128.0, f64, "qmin"), lo, f64, row, "zmin")
    zmax = op2("SubFusion", c(127.0, f64, "qmax"), hi, f64, row, "zmax")
    emin = op2("AddFusion", c(128.0, f64, "aqmin"), imp.mid("Abs", {}, [lo], f64, row, name + ":alo"),
               f64, row, "emin")  # fmt: skip
    emax = op2("AddFusion", c(127.0, f64, "aqmax"), imp.mid("Abs", {}, [hi], f64, row, name + ":ahi"),
               f64, row, "emax")  # fmt: skip
    pick = op2("Less", emin, emax, np.bool_, row, "pick")
    zd = imp.mid("Where", {}, [pick, zmin, zmax], f64, row, name + ":zd")
    zr = _round_away(imp, zd, f64, row, name + ":zr")
    zc = imp.mid("Clip", {"max": 127.0, "min": -128.0}, [zr], f64, row, name + ":zp64")
    zp = imp.mid("Cast", {}, [zc, to32], f32, row, name + ":zp")
    sf = imp.mid("Cast", {}, [scale, to32], f32, row, name + ":scale")
    inv = op2("DivFusion", c(1.0, f32, "one32"), sf, f32, row, "inv")
    y = op2("AddFusion", op2("MulFusion", x, inv, f32, dims, "xs"), zp, f32, dims, "y")
    q = _round_away(imp, y, f32, dims, name + ":q")
    q = imp.mid("Clip", {"max": 127.0, "min": -128.0}, [q], f32, dims, name + ":qc")
    return op2("SubFusion", q, zp, f32, dims, "qz"), sf


def _hybrid_tail(
    imp: TfliteImporter,
    acc64: int,
    out_dims: list[int],
    sf: int,
    wq: list[tuple[float, int]],
    bias: int | None,
    act: int,
    outs: list[int],
    node: str,
) -> None:
    """float32(acc) * (input scale * weight scale) + bias, then the fused activation (and the
    output's own shape when it differs in rank from ``out_dims``, the accumulator's)."""
    f32 = np.dtype(np.float32)
    to32 = imp.const(node + ":to32", np.array([from_numpy(f32)], np.int32))
    acc = imp.mid("Cast", {}, [acc64, to32], f32, out_dims, node + ":acc")
    ws = np.array([s for s, _ in wq], np.float32)
    sdims = [out_dims[0]] + [1] * (len(out_dims) - 2) + [len(ws)]
    s = imp.mid("MulFusion", {"activationType": 0}, [sf, imp.const(node + ":wscale", ws)], f32,
                sdims, node + ":s")  # fmt: skip
    final = imp.shape(outs[0])
    if final == out_dims or len(final) == len(out_dims):
        if bias is None:
            imp.emit("MulFusion", {"activationType": act}, [acc, s], outs, node)
            return
        y = imp.mid("MulFusion", {"activationType": 0}, [acc, s], f32, out_dims, node + ":scaled")
        imp.emit("AddFusion", {"activationType": act}, [y, bias], outs, node)
        return
    y = imp.mid("MulFusion", {"activationType": 0 if bias is not None else act}, [acc, s], f32,
                out_dims, node + ":scaled")  # fmt: skip
    if bias is not None:
        y = imp.mid("AddFusion", {"activationType": act}, [y, bias], f32, out_dims, node + ":b")
    shape = imp.const(node + ":shape", np.array([-1] + [d for d in final[1:]], np.int32))
    imp.emit("Reshape", {}, [y, shape], outs, node)


def _weights64(w: np.ndarray, wq: list[tuple[float, int]], axis: int) -> np.ndarray:
    """The integer weights less their zero points, as float64 (exact)."""
    zp = np.array([z for _, z in wq], np.float64)
    shape = [1] * w.ndim
    shape[axis] = zp.size if zp.size > 1 else 1
    return np.ascontiguousarray(w.astype(np.float64) - zp.reshape(shape))


def _hybrid_fc(
    imp: TfliteImporter,
    ins: list[int],
    outs: list[int],
    node: str,
    w: np.ndarray,
    x_shape: list[int],
    has_bias: bool,
    act: int,
    asym: bool,
) -> None:
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    wq = imp.quant(ins[1])
    assert wq is not None
    k, n = w.shape[1], w.shape[0]
    rows = math.prod(x_shape[:-1]) if all(d >= 0 for d in x_shape) else -1
    if len(x_shape) >= 1 and x_shape[-1] not in (k, -1):
        rows = -1
    x = imp.tensor(ins[0])
    if len(x_shape) != 2 or x_shape[-1] != k:
        x = imp.mid("Reshape", {}, [x, imp.const(node + ":rows", np.array([-1, k], np.int32))], f32,
                    [rows, k], node + ":x2")  # fmt: skip
    q, sf = _dynamic_quant(imp, x, [rows, k], asym, node + ":dq")
    to64 = imp.const(node + ":to64", np.array([from_numpy(f64)], np.int32))
    q64 = imp.mid("Cast", {}, [q, to64], f64, [rows, k], node + ":q64")
    w64 = imp.const(node + ":w64", _weights64(w, wq, 0))
    acc = imp.mid("FullConnection", {"hasBias": False, "useAxis": False, "axis": 0, "activationType": 0},
                  [q64, w64], f64, [rows, n], node + ":acc64")  # fmt: skip
    bias = imp.tensor(ins[2]) if has_bias else None
    _hybrid_tail(imp, acc, [rows, n], sf, wq, bias, act, outs, node)


def _hybrid_conv(
    imp: TfliteImporter,
    ins: list[int],
    outs: list[int],
    node: str,
    w: np.ndarray,
    wq: list[tuple[float, int]],
    x_shape: list[int],
    attrs: dict[str, Any],
) -> None:
    """Per image quantised input, float64 convolution of the integers, then the scales and
    bias."""
    f64 = np.dtype(np.float64)
    # per-channel weights: asymmetric per image; one weight scale: symmetric per image
    q, sf = _dynamic_quant(imp, imp.tensor(ins[0]), x_shape, len(wq) > 1, node + ":dq")
    to64 = imp.const(node + ":to64", np.array([from_numpy(f64)], np.int32))
    q64 = imp.mid("Cast", {}, [q, to64], f64, x_shape, node + ":q64")
    w64 = imp.const(node + ":w64", _weights64(w, wq, 0))
    out_dims = imp.shape(outs[0])
    act = int(attrs["activationType"])
    acc = imp.mid("Conv2DFusion", {**attrs, "activationType": 0}, [q64, w64], f64, out_dims,
                  node + ":acc64")  # fmt: skip
    bias = imp.tensor(ins[2]) if len(ins) > 2 and ins[2] >= 0 else None
    _hybrid_tail(imp, acc, out_dims, sf, wq, bias, act, outs, node)


# -- CUSTOM operators NNRt v2_1 expresses -----------------------------------------------------


def _flex_options(op: Any, node: str) -> dict[str, Any]:
    raw = bytes(op.custom_options or b"")
    if not raw:
        return {}
    from flatbuffers import flexbuffers  # type: ignore[import-untyped]

    try:
        opts = flexbuffers.Loads(raw)
    except Exception as e:  # noqa: BLE001 - any decoding failure is a malformed file
        raise _bad(
            f"{node}: custom options are not a FlexBuffer map ({type(e).__name__})"
        ) from None
    if not isinstance(opts, dict):
        raise _bad(f"{node}: custom options are not a FlexBuffer map")
    return opts


def _detection(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """``TFLite_Detection_PostProcess`` (SSD box decoding and NMS): NNRt's
    DetectionPostProcess, with the FlexBuffer options as its attributes."""
    if len(ins) < 3 or len(outs) < 4 or -1 in ins[:3]:
        raise _bad(f"{node}: TFLite_Detection_PostProcess takes 3 inputs and 4 outputs")
    o = _flex_options(op, node)

    def num(key: str, default: float) -> float:
        v = o.get(key, default)
        if not isinstance(v, (int, float)) or isinstance(v, bool) and key != "use_regular_nms":
            raise _bad(f"{node}: custom option {key}={v!r}")
        return float(v)

    attrs = {
        "format": 1,
        "inputSize": 0,
        "scale": [num(k, 0.0) for k in ("y_scale", "x_scale", "h_scale", "w_scale")],
        "nmsIoUThreshold": num("nms_iou_threshold", 0.5),
        "nmsScoreThreshold": num("nms_score_threshold", 0.0),
        "maxDetections": int(num("max_detections", 10)),
        "detectionsPerClass": int(num("detections_per_class", 100)),
        "maxClassesPerDetection": int(num("max_classes_per_detection", 1)),
        "numClasses": int(num("num_classes", 1)),
        "useRegularNms": bool(o.get("use_regular_nms", False)),
        "outQuantized": False,
    }
    imp.emit("DetectionPostProcess", attrs, [imp.tensor(i) for i in ins[:3]], outs[:4], node)


_CUSTOM: dict[str, Callable[[TfliteImporter, Any, list[int], list[int], str], None]] = {
    "TFLite_Detection_PostProcess": _detection,
}


# -- control flow and resource variables: host operators --------------------------------------


def _subgraph_index(op: Any, field: str, node: str) -> int:
    v = getattr(op.builtin_options, field, None) if op.builtin_options is not None else None
    if v is None:
        raise _bad(f"{node}: no {field}")
    return int(v)


def _if(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    then_b = imp.body(_subgraph_index(op, "then_subgraph_index", node))
    else_b = imp.body(_subgraph_index(op, "else_subgraph_index", node))
    why = unsupported_reason("IF", "control flow runs on the host")
    imp.host("IF", bindable(host_tflite.if_kernel, then_b, else_b), ins, outs, node, why)


def _while(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    cond = imp.body(_subgraph_index(op, "cond_subgraph_index", node))
    body = imp.body(_subgraph_index(op, "body_subgraph_index", node))
    why = unsupported_reason("WHILE", "control flow runs on the host")
    imp.host("WHILE", bindable(host_tflite.while_kernel, cond, body), ins, outs, node, why)


def _call_once(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    init = imp.body(_subgraph_index(op, "init_subgraph_index", node))
    why = unsupported_reason("CALL_ONCE", "initialises resource variables on the host")
    imp.host("CALL_ONCE", bindable(host_tflite.call_once_kernel, init), ins, outs, node, why)


def _variable(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = imp.opname(op)
    vs = imp.vars if imp.vars is not None else host_tflite.Variables()
    imp.vars = vs
    why = unsupported_reason(name, "resource variables live on the host")
    if name == "VAR_HANDLE":
        o = op.builtin_options
        key = f"{getattr(o, 'container', '') or ''}/{getattr(o, 'shared_name', '') or ''}"
        if key == "/":
            key = f"{imp.subgraph}:{node}"
        imp.host(name, vs.handle(key), [], outs[:1], node, why)
    elif name == "READ_VARIABLE":
        imp.host(name, vs.read(), ins[:1], outs[:1], node, why)
    else:
        imp.host(name, vs.assign(), ins[:2], [], node, why)


def _call(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """CALL: the subgraph's operators lowered in place (NNRt runs them)."""
    _inline_into(imp, _subgraph_index(op, "subgraph", node), ins, outs, node)


def _inline_into(imp: TfliteImporter, k: int, ins: list[int], outs: list[int], node: str) -> None:
    res = imp.inline(k, [imp.tensor(i) for i in ins if i >= 0], node)
    if len(res) < len(outs):
        raise _bad(f"{node}: subgraph {k} gives {len(res)} outputs for {len(outs)}")
    for o, r in zip(outs, res):
        imp.idx[o] = r


def _hlo_composite(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """STABLEHLO_COMPOSITE: its decomposition subgraph lowered in place (as LiteRT runs an
    unfused composite)."""
    k = int(getattr(_opts2(op, node), "decomposition_subgraph_index", -1))
    _inline_into(imp, k, ins, outs, node)


def _hlo_while(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o2 = getattr(op, "builtin_options_2", None)
    if o2 is None:
        raise _bad(f"{node}: STABLEHLO_WHILE without StablehloWhileOptions")
    cond = imp.body(int(o2.cond_subgraph_index))
    body = imp.body(int(o2.body_subgraph_index))
    why = unsupported_reason("STABLEHLO_WHILE", "control flow runs on the host")
    kernel = bindable(host_tflite.while_kernel, cond, body)
    imp.host("STABLEHLO_WHILE", kernel, ins, outs, node, why)


def _hlo_case(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """STABLEHLO_CASE: input 0 picks the branch (out of range: the last), the rest are its
    inputs."""
    o2 = getattr(op, "builtin_options_2", None)
    idx = [int(v) for v in (getattr(o2, "branch_subgraph_indices", None) or [])]
    if not idx:
        raise _bad(f"{node}: STABLEHLO_CASE without branches")
    bodies = [imp.body(k) for k in idx]
    why = unsupported_reason("STABLEHLO_CASE", "control flow runs on the host")
    imp.host("STABLEHLO_CASE", bindable(host_tflite.case_kernel, bodies), ins, outs, node, why)


#: Operators whose subgraph is lowered in place (NNRt runs it), not run on the host.
_INLINED = frozenset({"CALL", "STABLEHLO_COMPOSITE"})

_CONTROL: dict[str, Callable[[TfliteImporter, Any, list[int], list[int], str], None]] = {
    "CALL": _call,
    "STABLEHLO_COMPOSITE": _hlo_composite,
    "STABLEHLO_WHILE": _hlo_while,
    "STABLEHLO_CASE": _hlo_case,
    "IF": _if,
    "WHILE": _while,
    "CALL_ONCE": _call_once,
    "VAR_HANDLE": _variable,
    "READ_VARIABLE": _variable,
    "ASSIGN_VARIABLE": _variable,
}


# -- LSTM -----------------------------------------------------------------------------------


@_h("UNIDIRECTIONAL_SEQUENCE_LSTM")
def _seq_lstm(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """TFLite's sequence LSTM (gates i, f, c, o; weights [h, in] / [h, out] per gate; state
    tensors 18, 19) onto NNRt's LSTM ([1, 4h, in] weights, gate order i, f, g, o, bias [1, 8h],
    h0 / c0 [1, batch, out]), with an optional projection (no projection bias). Peepholes,
    CIFG, layer normalisation and clipping have no NNRt LSTM attribute: refused. The state
    tensors keep LiteRT's meaning: the final states are written back and the next run starts
    from them."""
    o = op.builtin_options

    def opt(i: int) -> bool:
        return len(ins) > i and ins[i] >= 0

    if len(ins) < 20 or not all(opt(i) for i in (0, 2, 3, 4, 6, 7, 8, 18, 19)):
        raise _bad(f"{node}: UNIDIRECTIONAL_SEQUENCE_LSTM inputs {ins}")
    if any(opt(i) for i in (9, 10, 11)) or not opt(1):
        raise _Unsupported("peephole or CIFG (coupled input gate) LSTM")
    if any(opt(i) for i in range(20, 24)):
        raise _Unsupported("layer-normalised LSTM")
    if o is not None and (float(o.cell_clip or 0) or float(o.proj_clip or 0)):
        raise _Unsupported("cell or projection clipping")
    if o is not None and int(o.fused_activation_function) != 4:
        raise _Unsupported("cell activation other than TANH")
    if _hybrid_lstm(imp, op, ins, outs, node):
        return
    ws = []
    for i in range(1, 9):
        w = imp.data(ins[i])
        if w is None:
            raise _Unsupported("weights computed at run time")
        q = imp.quant(ins[i])
        if q is not None and w.dtype.kind in "iu":  # dynamic-range weights: their real values
            s = np.array([a for a, _ in q], np.float32).reshape(-1, 1)
            z = np.array([b for _, b in q], np.float32).reshape(-1, 1)
            w = (w.astype(np.float32) - z) * s
        ws.append(w.astype(np.float32))
    h, n_in = ws[0].shape
    n_out = ws[4].shape[1]
    biases = []
    for i in range(12, 16):
        bv = imp.data(ins[i]) if opt(i) else np.zeros(h, np.float32)
        if bv is None:
            raise _Unsupported("biases computed at run time")
        biases.append(bv.astype(np.float32).reshape(-1))
    proj = None
    if opt(16):
        pw = imp.data(ins[16])
        if pw is None:
            raise _Unsupported("projection computed at run time")
        if opt(17) and np.any(imp.data(ins[17]) != 0):
            raise _Unsupported("projection bias (NNRt's LSTM has none)")
        proj = pw.astype(np.float32).reshape(1, n_out, h)
    time_major = bool(getattr(o, "time_major", True)) if o is not None else False
    x_shape = imp.shape(ins[0])
    if len(x_shape) != 3:
        raise _Unsupported(f"input of rank {len(x_shape)}")
    seq, batch = (x_shape[0], x_shape[1]) if time_major else (x_shape[1], x_shape[0])
    f32 = np.dtype(np.float32)
    x = imp.tensor(ins[0])
    perm = imp.const(node + ":perm", np.array([1, 0, 2], np.int32))
    if not time_major:
        x = imp.mid("Transpose", {}, [x, perm], f32, [seq, batch, n_in], node + ":tm")
    w_ih = imp.const(node + ":w_ih", np.concatenate(ws[0:4]).reshape(1, 4 * h, n_in))
    w_hh = imp.const(node + ":w_hh", np.concatenate(ws[4:8]).reshape(1, 4 * h, n_out))
    bias = np.concatenate(biases + [np.zeros(4 * h, np.float32)]).reshape(1, 8 * h)
    state = []
    for i, width in ((18, n_out), (19, h)):
        t = imp.tensor(ins[i])
        state.append(
            imp.mid("Reshape", {}, [t, imp.const(f"{node}:s{i}", np.array([1, batch, width], np.int32))],
                    f32, [1, batch, width], f"{node}:state{i}")  # fmt: skip
        )
    inputs = [x, w_ih, w_hh, imp.const(node + ":bias", bias), state[0], state[1]]
    if proj is not None:
        inputs.append(imp.const(node + ":proj", proj))
    attrs = {"bidirectional": False, "hasBias": True, "inputSize": n_in, "hiddenSize": h,
             "numLayers": 1, "numDirections": 1, "dropout": 0.0, "zoneoutCell": 0.0,
             "zoneoutHidden": 0.0, "projSize": n_out if proj is not None else 0}  # fmt: skip
    rec = imp.pkg.LSTM.from_dict(attrs)
    specs = [(node + ":y", f32, [seq, batch, n_out]), (node + ":hn", f32, [1, batch, n_out]),
             (node + ":cn", f32, [1, batch, h])]  # fmt: skip
    y, hn, cn = imp.b.node(rec, inputs, outputs=specs, name=node)  # type: ignore[misc]
    if time_major:
        imp.emit("Reshape", {}, [y, imp.const(node + ":yshape", np.array([seq, batch, n_out], np.int32))],
                 outs, node + ":out")  # fmt: skip
    else:
        imp.emit("Transpose", {}, [y, perm], outs, node + ":out")
    for i, v in ((18, hn), (19, cn)):  # the states LiteRT writes back into its variable tensors
        imp.write_state(ins[i], v)


# -- StableHLO element-wise operators --------------------------------------------------------

_HLO_BIN = {"STABLEHLO_ADD": "AddFusion", "STABLEHLO_SUBTRACT": "SubFusion",
            "STABLEHLO_MULTIPLY": "MulFusion", "STABLEHLO_DIVIDE": "DivFusion",
            "STABLEHLO_MAXIMUM": "Maximum", "STABLEHLO_MINIMUM": "Minimum",
            "STABLEHLO_POWER": "PowFusion", "STABLEHLO_REMAINDER": "Mod",
            "STABLEHLO_AND": "LogicalAnd", "STABLEHLO_OR": "LogicalOr"}  # fmt: skip
_HLO_UN = {"STABLEHLO_ABS": "Abs", "STABLEHLO_NEGATE": "Neg", "STABLEHLO_LOG": "Log",
           "STABLEHLO_FLOOR": "Floor", "STABLEHLO_COSINE": "Cos", "STABLEHLO_RSQRT": "Rsqrt"}  # fmt: skip
#: Integer semantics that differ from the NNRt operator's (truncating division, bitwise and/or).
_HLO_FLOAT_ONLY = frozenset({"STABLEHLO_DIVIDE", "STABLEHLO_POWER", "STABLEHLO_REMAINDER"})


@_h(*_HLO_BIN, ins=2)
def _hlo_binary(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    dt = imp.dtype(ins[0])
    if name in _HLO_FLOAT_ONLY and dt.kind != "f":
        raise _Unsupported(f"{dt} operands (the NNRt operator's integer semantics differ)")
    if name in ("STABLEHLO_AND", "STABLEHLO_OR") and dt != np.bool_:
        raise _Unsupported(f"bitwise {dt} operands (NNRt's logical operators take booleans)")
    struct = _HLO_BIN[name]
    attrs: dict[str, Any] = {"activationType": 0} if struct.endswith("Fusion") else {}
    if struct == "PowFusion":
        attrs = {"scale": 1.0, "shift": 0.0}
    imp.emit(struct, attrs, [imp.tensor(i) for i in ins[:2]], outs, node)


@_h(*_HLO_UN, "STABLEHLO_EXPONENTIAL", "STABLEHLO_TANH", "STABLEHLO_LOGISTIC")
def _hlo_unary(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    name = _opname(imp, op)
    x = [imp.tensor(ins[0])]
    if name == "STABLEHLO_EXPONENTIAL":
        imp.emit("ExpFusion", {"base": -1.0, "scale": 1.0, "shift": 0.0}, x, outs, node)
    elif name in ("STABLEHLO_TANH", "STABLEHLO_LOGISTIC"):
        kind = 10 if name == "STABLEHLO_TANH" else 2
        imp.emit("Activation", {"activationType": kind, "alpha": 0.0, "minVal": 0.0, "maxVal": 0.0,
                                "approximate": False}, x, outs, node)  # fmt: skip
    else:
        imp.emit(_HLO_UN[name], {}, x, outs, node)


@_h("STABLEHLO_SELECT", ins=3)
def _hlo_select(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    imp.emit("Where", {}, [imp.tensor(i) for i in ins[:3]], outs, node)


@_h("STABLEHLO_CLAMP", ins=3)
def _hlo_clamp(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """clamp(min, x, max) = minimum(maximum(x, min), max)."""
    lo = imp.mid("Maximum", {}, [imp.tensor(ins[1]), imp.tensor(ins[0])], imp.float_of(outs[0]),
                 imp.shape(outs[0]), node + ":lo")  # fmt: skip
    imp.emit("Minimum", {}, [lo, imp.tensor(ins[2])], outs, node)


@_h("STABLEHLO_CONVERT")
def _hlo_convert(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    _cast(imp, op, ins, outs, node)


#: Longest sequence a hybrid LSTM is unrolled over (each step is ~50-90 NNRt nodes).
_MAX_UNROLL = 512


def _hybrid_matvec(
    imp: TfliteImporter, x: int, rows: int, ws: list[np.ndarray], qs: list[Any], asym: bool,
    name: str,
) -> int:  # fmt: skip
    """sum_k x[r, k] * W[n, k] as LiteRT's hybrid kernels compute it, for the gate weights
    ``ws`` (int8, stacked along n) with their own scales: [rows, N] float32, no bias."""
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    k = ws[0].shape[1]
    n = sum(w.shape[0] for w in ws)
    q, sf = _dynamic_quant(imp, x, [rows, k], asym, name + ":dq")
    to64 = imp.const(name + ":to64", np.array([from_numpy(f64)], np.int32))
    q64 = imp.mid("Cast", {}, [q, to64], f64, [rows, k], name + ":q64")
    w64 = np.concatenate([_weights64(w, qq, 0) for w, qq in zip(ws, qs)])
    acc = imp.mid("FullConnection", {"hasBias": False, "useAxis": False, "axis": 0, "activationType": 0},
                  [q64, imp.const(name + ":w64", w64)], f64, [rows, n], name + ":acc64")  # fmt: skip
    to32 = imp.const(name + ":to32", np.array([from_numpy(f32)], np.int32))
    acc32 = imp.mid("Cast", {}, [acc, to32], f32, [rows, n], name + ":acc")
    scales = np.concatenate([np.repeat(np.float32(qq[0][0]), w.shape[0]) for w, qq in zip(ws, qs)])
    s = imp.mid("MulFusion", {"activationType": 0}, [sf, imp.const(name + ":ws", scales)], f32,
                [rows, n], name + ":s")  # fmt: skip
    return imp.mid("MulFusion", {"activationType": 0}, [acc32, s], f32, [rows, n], name + ":g")


def _hybrid_lstm(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> bool:
    """A dynamic-range LSTM (int8 gate weights, float activations) unrolled over time as
    LiteRT's hybrid kernel computes it: every step quantises x_t and h_{t-1} per batch row,
    takes the integer products, and the gates start from the bias: (b + x part) + h part.
    False when the LSTM is not hybrid (or has a projection, or an open sequence length)."""
    x_shape = imp.shape(ins[0])
    wts = [imp.data(ins[i]) for i in range(1, 9)]
    qs = [imp.quant(ins[i]) for i in range(1, 9)]
    if imp.dtype(ins[0]).kind != "f" or any(w is None or w.dtype != np.int8 for w in wts):
        return False
    if any(q is None or len(q) != 1 for q in qs) or (len(ins) > 16 and ins[16] >= 0):
        return False
    o = op.builtin_options
    time_major = bool(getattr(o, "time_major", True)) if o is not None else False
    if len(x_shape) != 3:
        return False
    seq, batch = (x_shape[0], x_shape[1]) if time_major else (x_shape[1], x_shape[0])
    if not 0 <= seq <= _MAX_UNROLL:
        raise _Unsupported("a dynamic-range LSTM over a sequence of unknown length (unrolled)")
    batch = _known_batch(imp, batch, ins[18])
    asym = bool(getattr(o, "asymmetric_quantize_inputs", False)) if o is not None else False
    f32 = np.dtype(np.float32)
    ws = [w for w in wts if w is not None]
    qq = [q for q in qs if q is not None]
    h, n_in = ws[0].shape
    n_out = ws[4].shape[1]
    bias = np.concatenate([
        (b.astype(np.float32).reshape(-1) if (b := imp.data(ins[i])) is not None else np.zeros(h, np.float32))
        for i in range(12, 16)
    ])  # fmt: skip
    bias_t = imp.const(node + ":bias", bias)
    x = imp.tensor(ins[0])
    perm = imp.const(node + ":perm", np.array([1, 0, 2], np.int32))
    if not time_major:
        x = imp.mid("Transpose", {}, [x, perm], f32, [seq, batch, n_in], node + ":tm")
    steps = imp.b.node(imp.pkg.Unstack.from_dict({"axis": 0}), [x],
                       outputs=[(f"{node}:x{t}", f32, [batch, n_in]) for t in range(seq)],
                       name=node + ":steps")  # fmt: skip
    xs = [int(steps)] if isinstance(steps, int) else [int(v) for v in steps]
    shape_h = imp.const(node + ":hshape", np.array([batch, n_out], np.int32))
    shape_c = imp.const(node + ":cshape", np.array([batch, h], np.int32))
    hprev = imp.mid(
        "Reshape", {}, [imp.tensor(ins[18]), shape_h], f32, [batch, n_out], node + ":h0"
    )
    cprev = imp.mid("Reshape", {}, [imp.tensor(ins[19]), shape_c], f32, [batch, h], node + ":c0")
    act = {"alpha": 0.0, "minVal": 0.0, "maxVal": 0.0, "approximate": False}
    add = {"activationType": 0}
    ys = []
    for t, xt in enumerate(xs):
        nm = f"{node}:t{t}"
        gx = _hybrid_matvec(imp, xt, batch, ws[0:4], qq[0:4], asym, nm + ":x")
        gh = _hybrid_matvec(imp, hprev, batch, ws[4:8], qq[4:8], asym, nm + ":h")
        g = imp.mid("AddFusion", add, [bias_t, gx], f32, [batch, 4 * h], nm + ":gb")
        g = imp.mid("AddFusion", add, [g, gh], f32, [batch, 4 * h], nm + ":g")
        parts = imp.b.node(imp.pkg.Split.from_dict({"outputNum": 4, "sizeSplits": [h] * 4, "axis": 1}),
                           [g], outputs=[(f"{nm}:{k}", f32, [batch, h]) for k in "ifco"],
                           name=nm + ":split")  # fmt: skip
        gi, gf, gc, go = (int(v) for v in parts)  # type: ignore[union-attr]
        i_ = imp.mid("Activation", {"activationType": 2, **act}, [gi], f32, [batch, h], nm + ":i")
        f_ = imp.mid("Activation", {"activationType": 2, **act}, [gf], f32, [batch, h], nm + ":f")
        c_ = imp.mid("Activation", {"activationType": 10, **act}, [gc], f32, [batch, h], nm + ":cc")
        o_ = imp.mid("Activation", {"activationType": 2, **act}, [go], f32, [batch, h], nm + ":o")
        fc = imp.mid("MulFusion", add, [f_, cprev], f32, [batch, h], nm + ":fc")
        ic = imp.mid("MulFusion", add, [i_, c_], f32, [batch, h], nm + ":ic")
        cprev = imp.mid("AddFusion", add, [fc, ic], f32, [batch, h], nm + ":c")
        tc = imp.mid(
            "Activation", {"activationType": 10, **act}, [cprev], f32, [batch, h], nm + ":tc"
        )
        hprev = imp.mid("MulFusion", add, [o_, tc], f32, [batch, n_out], nm + ":h")
        ys.append(hprev)
    y = imp.mid("Stack", {"axis": 0}, ys, f32, [seq, batch, n_out], node + ":y")
    if time_major:
        imp.emit("Reshape", {}, [y, imp.const(node + ":yshape", np.array([seq, batch, n_out], np.int32))],
                 outs, node + ":out")  # fmt: skip
    else:
        imp.emit("Transpose", {}, [y, perm], outs, node + ":out")
    imp.write_state(ins[18], hprev)
    imp.write_state(ins[19], cprev)
    return True


def _conv_runtime_weights(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """CONV_2D / DEPTHWISE_CONV_2D whose weights are computed at run time: NNRt's Conv2DFusion
    takes them as an input tensor (depthwise [1, H, W, C*M] moved to [C*M, H, W, 1])."""
    o = op.builtin_options
    x_shape, w_shape = imp.shape(ins[0]), imp.shape(ins[1])
    if len(x_shape) != 4 or len(w_shape) != 4 or min(w_shape) < 0 or x_shape[3] < 0:
        raise _Unsupported(f"run-time weights {w_shape} for a {x_shape} input")
    w = imp.tensor(ins[1])
    in_c = x_shape[3]
    if type(o).__name__ == "DepthwiseConv2DOptions":
        moved = [w_shape[3], w_shape[1], w_shape[2], 1]
        w = imp.mid("Transpose", {}, [w, imp.const(node + ":perm", np.array([3, 1, 2, 0], np.int32))],
                    imp.float_of(ins[1]), moved, node + ":w")  # fmt: skip
        group, out_c, kh, kw = in_c, moved[0], moved[1], moved[2]
    else:
        group, out_c, kh, kw = in_c // w_shape[3], w_shape[0], w_shape[1], w_shape[2]
    attrs = {"kernelSize": [kh, kw], "stride": [int(o.stride_h), int(o.stride_w)],
             "dilation": [int(o.dilation_h_factor), int(o.dilation_w_factor)], "padMode": _pad_mode(o),
             "padList": [0, 0, 0, 0], "group": group, "inChannel": in_c, "outChannel": out_c,
             "activationType": _act(o)}  # fmt: skip
    inputs = [imp.tensor(ins[0]), w]
    if len(ins) > 2 and ins[2] >= 0:
        inputs.append(imp.tensor(ins[2]))
    imp.emit("Conv2DFusion", attrs, inputs, outs, node)


@_h("LSTM")
def _lstm_step(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """The one-step LSTM builtin (kernel_type FULL): the sequence LSTM over a sequence of one,
    time-major ([1, batch, in] in, [1, batch, out] out); its state tensors carry the sequence."""
    import dataclasses

    o = op.builtin_options
    if o is not None and int(getattr(o, "kernel_type", 0) or 0) != 0:
        raise _Unsupported("the BASIC kernel type (a fused 4-gate weight)")
    if not ins or ins[0] < 0 or not outs:
        raise _bad(f"{node}: LSTM inputs {ins} outputs {outs}")
    x_shape, y_shape = imp.shape(ins[0]), imp.shape(outs[0])
    if len(x_shape) != 2 or len(y_shape) != 2:
        raise _Unsupported(f"input of rank {len(x_shape)}")

    def alias(ti: int, dims: list[int]) -> int:
        t = imp.t(ti)
        fake = dataclasses.replace(t, shape=dims, shape_signature=dims, buffer=0)
        imp.tensors.append(fake)
        return len(imp.tensors) - 1

    x3 = alias(ins[0], [1] + x_shape)
    imp.idx[x3] = imp.mid("Reshape", {}, [imp.tensor(ins[0]), imp.const(node + ":x3", np.array([1] + x_shape, np.int32))],
                          imp.float_of(ins[0]), [1] + x_shape, node + ":x3")  # fmt: skip
    y3 = alias(outs[0], [1] + y_shape)
    _seq_lstm(imp, op, [x3] + ins[1:], [y3] + outs[1:], node)
    imp.emit("Reshape", {}, [imp.idx[y3], imp.const(node + ":y2", np.array(y_shape, np.int32))],
             outs[:1], node + ":y")  # fmt: skip


@_h("BIDIRECTIONAL_SEQUENCE_LSTM")
def _bidi_lstm(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """Two sequence LSTMs: forward over x, backward over x reversed in time (its outputs put
    back in time order); merged along the last axis or as two outputs. No auxiliary input."""
    import dataclasses

    o = op.builtin_options
    if len(ins) < 39 or not outs:
        raise _bad(f"{node}: BIDIRECTIONAL_SEQUENCE_LSTM inputs {ins} outputs {outs}")
    if any(i >= 0 for i in ins[39:48]):
        raise _Unsupported("auxiliary inputs")
    merge = bool(getattr(o, "merge_outputs", False)) if o is not None else False
    time_major = bool(getattr(o, "time_major", True)) if o is not None else True
    x_shape = imp.shape(ins[0])
    if len(x_shape) != 3:
        raise _Unsupported(f"input of rank {len(x_shape)}")
    t_axis = 0 if time_major else 1
    n_fw = imp.shape(ins[35])[-1]
    n_bw = imp.shape(ins[37])[-1]

    def alias(ti: int, dims: list[int]) -> int:
        fake = dataclasses.replace(imp.t(ti), shape=dims, shape_signature=dims, buffer=0,
                                   is_variable=False)  # fmt: skip
        imp.tensors.append(fake)
        return len(imp.tensors) - 1

    def reverse_time(src: int, dims: list[int], name: str) -> int:
        begin = [-1 if a == t_axis else 0 for a in range(3)]
        strides = [-1 if a == t_axis else 1 for a in range(3)]
        keep = sum(1 << a for a in range(3) if a != t_axis)
        return imp.mid("StridedSlice", {"beginMask": keep, "endMask": 7, "ellipsisMask": 0,
                                        "newAxisMask": 0, "shrinkAxisMask": 0},
                       [src, imp.const(name + ":b", np.array(begin, np.int32)),
                        imp.const(name + ":e", np.zeros(3, np.int32)),
                        imp.const(name + ":s", np.array(strides, np.int32))],
                       np.float32, dims, name)  # fmt: skip

    ydims = list(x_shape)
    fw_dims, bw_dims = ydims[:2] + [n_fw], ydims[:2] + [n_bw]
    fw_out = alias(outs[0], fw_dims)
    fw_ins = [ins[0]] + ins[1:18] + [ins[35], ins[36]] + [-1] * 4
    _seq_lstm(imp, op, fw_ins, [fw_out], node + ":fw")
    x_rev = alias(ins[0], list(x_shape))
    imp.idx[x_rev] = reverse_time(imp.tensor(ins[0]), list(x_shape), node + ":xrev")
    bw_out = alias(outs[-1], bw_dims)
    bw_ins = [x_rev] + ins[18:35] + [ins[37], ins[38]] + [-1] * 4
    _seq_lstm(imp, op, bw_ins, [bw_out], node + ":bw")
    bw = reverse_time(imp.idx[bw_out], bw_dims, node + ":bwrev")
    if merge:
        imp.emit("Concat", {"axis": 2}, [imp.idx[fw_out], bw], outs[:1], node)
        return
    shape = imp.const(node + ":fwshape", np.array(fw_dims, np.int32))
    imp.emit("Reshape", {}, [imp.idx[fw_out], shape], outs[:1], node + ":fwout")
    if len(outs) > 1:
        shape = imp.const(node + ":bwshape", np.array(bw_dims, np.int32))
        imp.emit("Reshape", {}, [bw, shape], outs[1:2], node + ":bwout")


# -- RNN: no NNRt operator, but an exact unrolling onto FullConnection / AddFusion ----------


def _rnn_weights(imp: TfliteImporter, ins: list[int]) -> tuple[Any, ...]:
    w, r = imp.data(ins[1]), imp.data(ins[2])
    bias = imp.data(ins[3]) if len(ins) > 3 and ins[3] >= 0 else None
    if w is None or r is None or (len(ins) > 3 and ins[3] >= 0 and bias is None):
        raise _Unsupported("weights computed at run time")
    wq, rq = imp.quant(ins[1]), imp.quant(ins[2])
    hybrid = imp.dtype(ins[0]).kind == "f" and w.dtype == np.int8 and r.dtype == np.int8
    if hybrid and (wq is None or rq is None or len(wq) != 1 or len(rq) != 1):
        raise _Unsupported("dynamic-range weights without one scale each")
    if not hybrid:

        def real(a: np.ndarray, q: Any) -> np.ndarray:
            if q is not None and a.dtype.kind in "iu":
                v = (a.astype(np.float32) - q[0][1]) * np.float32(q[0][0])
                return np.asarray(v, dtype=np.float32)
            return np.asarray(a, dtype=np.float32)

        w, r = real(w, wq), real(r, rq)
    b = np.zeros(w.shape[0], np.float32) if bias is None else bias.astype(np.float32).reshape(-1)
    return w, r, b, wq, rq, hybrid


def _rnn_steps(
    imp: TfliteImporter,
    xs: list[int],
    batch: int,
    h0: int,
    weights: tuple[Any, ...],
    act: int,
    asym: bool,
    node: str,
) -> tuple[list[int], int]:
    """h_t = act(b + W x_t + R h_{t-1}) for each step (LiteRT's order of the two sums);
    returns the outputs and the last state."""
    w, r, b, wq, rq, hybrid = weights
    units = w.shape[0]
    f32 = np.dtype(np.float32)
    add = {"activationType": 0}
    bias = imp.const(node + ":bias", b)
    w_t, r_t = None, None
    if not hybrid:
        w_t, r_t = imp.const(node + ":w", w), imp.const(node + ":r", r)
    fc = {"hasBias": False, "useAxis": False, "axis": 0, "activationType": 0}
    h, ys = h0, []
    for t, xt in enumerate(xs):
        nm = f"{node}:t{t}"
        if hybrid:
            gx = _hybrid_matvec(imp, xt, batch, [w], [wq], asym, nm + ":x")
            gh = _hybrid_matvec(imp, h, batch, [r], [rq], asym, nm + ":h")
        else:
            gx = imp.mid("FullConnection", fc, [xt, w_t], f32, [batch, units], nm + ":x")  # type: ignore[list-item]
            gh = imp.mid("FullConnection", fc, [h, r_t], f32, [batch, units], nm + ":h")  # type: ignore[list-item]
        g = imp.mid("AddFusion", add, [bias, gx], f32, [batch, units], nm + ":gb")
        h = imp.mid("AddFusion", {"activationType": act}, [g, gh], f32, [batch, units], nm + ":ht")
        ys.append(h)
    return ys, h


@_h("RNN", "UNIDIRECTIONAL_SEQUENCE_RNN", ins=5)
def _rnn(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """Basic RNN cell (one step, or a sequence unrolled): NNRt v2_1 has no RNN operator, the
    recurrence is FullConnection and AddFusion with the fused activation; dynamic-range
    weights quantise x_t and h_{t-1} per batch row as LiteRT does. The state tensor keeps its
    value across runs."""
    o = op.builtin_options
    act = _act(o) if o is not None else 0
    asym = bool(getattr(o, "asymmetric_quantize_inputs", False)) if o is not None else False
    weights = _rnn_weights(imp, ins)
    units, n_in = weights[0].shape
    x_shape = imp.shape(ins[0])
    f32 = np.dtype(np.float32)
    step = _opname(imp, op) == "RNN" if not isinstance(op, _SeqOp) else False
    if step:
        if len(x_shape) != 2:
            raise _Unsupported(f"input {x_shape}")
        seq, batch, time_major = 1, x_shape[0], True
    else:
        time_major = bool(getattr(o, "time_major", False)) if o is not None else False
        if len(x_shape) != 3:
            raise _Unsupported(f"input {x_shape}")
        seq, batch = (x_shape[0], x_shape[1]) if time_major else (x_shape[1], x_shape[0])
        if not 0 <= seq <= _MAX_UNROLL:
            raise _Unsupported(f"input {x_shape} (a known sequence length is unrolled)")
    batch = _known_batch(imp, batch, ins[4])
    x = imp.tensor(ins[0])
    if step:
        xs = [x]
    else:
        perm = imp.const(node + ":perm", np.array([1, 0, 2], np.int32))
        if not time_major:
            x = imp.mid("Transpose", {}, [x, perm], f32, [seq, batch, n_in], node + ":tm")
        st = imp.b.node(imp.pkg.Unstack.from_dict({"axis": 0}), [x],
                        outputs=[(f"{node}:x{t}", f32, [batch, n_in]) for t in range(seq)],
                        name=node + ":steps")  # fmt: skip
        xs = [int(st)] if isinstance(st, int) else [int(v) for v in st]
    h_in = 4
    h0 = imp.mid("Reshape", {}, [imp.tensor(ins[h_in]), imp.const(node + ":hs", np.array([batch, units], np.int32))],
                 f32, [batch, units], node + ":h0")  # fmt: skip
    ys, h = _rnn_steps(imp, xs, batch, h0, weights, act, asym, node)
    if step:
        imp.emit("Reshape", {}, [h, imp.const(node + ":ys", np.array([batch, units], np.int32))], outs[:1],
                 node + ":out")  # fmt: skip
    else:
        y = imp.mid("Stack", {"axis": 0}, ys, f32, [seq, batch, units], node + ":y")
        if time_major:
            imp.emit("Reshape", {}, [y, imp.const(node + ":ys", np.array([seq, batch, units], np.int32))],
                     outs[:1], node + ":out")  # fmt: skip
        else:
            imp.emit("Transpose", {}, [y, imp.const(node + ":back", np.array([1, 0, 2], np.int32))],
                     outs[:1], node + ":out")  # fmt: skip
    imp.write_state(ins[h_in], h)


@_h("BIDIRECTIONAL_SEQUENCE_RNN", ins=9)
def _bidi_rnn(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """A forward and a reversed-time sequence RNN (no auxiliary input)."""
    import dataclasses

    o = op.builtin_options
    if any(i >= 0 for i in ins[9:12]):
        raise _Unsupported("auxiliary inputs")
    merge = bool(getattr(o, "merge_outputs", False)) if o is not None else False
    time_major = bool(getattr(o, "time_major", True)) if o is not None else True
    x_shape = imp.shape(ins[0])
    if len(x_shape) != 3 or min(x_shape) < 0:
        raise _Unsupported(f"input {x_shape}")
    t_axis = 0 if time_major else 1
    seq_opts = imp.T.SequenceRNNOptions(
        time_major=time_major,
        fused_activation_function=getattr(o, "fused_activation_function", 0) if o else 0,
        asymmetric_quantize_inputs=(
            bool(getattr(o, "asymmetric_quantize_inputs", False)) if o else False
        ),
    )
    step_op = dataclasses.replace(op, builtin_options=seq_opts)

    def alias(ti: int, dims: list[int]) -> int:
        fake = dataclasses.replace(imp.t(ti), shape=dims, shape_signature=dims, buffer=0,
                                   is_variable=False)  # fmt: skip
        imp.tensors.append(fake)
        return len(imp.tensors) - 1

    def reverse_time(src: int, dims: list[int], name: str) -> int:
        begin = [-1 if a == t_axis else 0 for a in range(3)]
        strides = [-1 if a == t_axis else 1 for a in range(3)]
        keep = sum(1 << a for a in range(3) if a != t_axis)
        return imp.mid("StridedSlice", {"beginMask": keep, "endMask": 7, "ellipsisMask": 0,
                                        "newAxisMask": 0, "shrinkAxisMask": 0},
                       [src, imp.const(name + ":b", np.array(begin, np.int32)),
                        imp.const(name + ":e", np.zeros(3, np.int32)),
                        imp.const(name + ":s", np.array(strides, np.int32))],
                       np.float32, dims, name)  # fmt: skip

    units_fw, units_bw = imp.shape(ins[1])[0], imp.shape(ins[5])[0]
    lead = x_shape[:2]
    fw_out, bw_out = alias(outs[0], lead + [units_fw]), alias(outs[-1], lead + [units_bw])
    _rnn_seq(imp, step_op, ins[0:5], [fw_out], node + ":fw")
    x_rev = alias(ins[0], list(x_shape))
    imp.idx[x_rev] = reverse_time(imp.tensor(ins[0]), list(x_shape), node + ":xrev")
    _rnn_seq(imp, step_op, [x_rev] + ins[5:9], [bw_out], node + ":bw")
    bw = reverse_time(imp.idx[bw_out], lead + [units_bw], node + ":bwrev")
    if merge:
        imp.emit("Concat", {"axis": 2}, [imp.idx[fw_out], bw], outs[:1], node)
        return
    shape = imp.const(node + ":fws", np.array(lead + [units_fw], np.int32))
    imp.emit("Reshape", {}, [imp.idx[fw_out], shape], outs[:1], node + ":fwout")
    if len(outs) > 1:
        shape = imp.const(node + ":bws", np.array(lead + [units_bw], np.int32))
        imp.emit("Reshape", {}, [bw, shape], outs[1:2], node + ":bwout")


class _SeqOp:
    """An operator seen as UNIDIRECTIONAL_SEQUENCE_RNN (a direction of a bidirectional RNN)."""

    def __init__(self, op: Any) -> None:
        self.builtin_options = op.builtin_options
        self.opcode_index = op.opcode_index


def _rnn_seq(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    _rnn(imp, _SeqOp(op), ins, outs, node)


def _known_batch(imp: TfliteImporter, batch: int, state: int) -> int:
    """An open batch dimension (-1) takes the state tensor's (what LiteRT allocates)."""
    if batch >= 0 or state < 0:
        return batch
    dims = imp.shape(state)
    return dims[0] if dims and dims[0] > 0 else batch


@_h("SVDF", ins=3)
def _svdf(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """SVDF (NNRt v2_1 has no such operator; exact composition): the state [batch, filters,
    memory] drops its oldest column and appends x . W_feature^T; the output sums state x
    W_time over memory, then over each unit's ``rank`` filters, plus bias, then activation.
    The state tensor keeps its value across runs (host variable)."""
    o = op.builtin_options
    if len(ins) < 5 or ins[4] < 0:
        raise _bad(f"{node}: SVDF needs its state tensor (input 4)")
    rank = int(getattr(o, "rank", 1) or 1) if o is not None else 1
    act = _act(o) if o is not None else 0
    wf, wt = imp.data(ins[1]), imp.data(ins[2])
    if wf is None or wt is None:
        raise _Unsupported("weights computed at run time")
    if imp.dtype(ins[0]).kind != "f" or wf.dtype.kind != "f" or wt.dtype.kind != "f":
        raise _Unsupported("quantised SVDF (integer or dynamic-range weights)")
    n_filters, n_in = wf.shape
    mem = wt.shape[1]
    if n_filters % rank or wt.shape[0] != n_filters:
        raise _bad(f"{node}: SVDF filters {wf.shape} / {wt.shape} with rank {rank}")
    units = n_filters // rank
    x_shape = imp.shape(ins[0])
    batch = _known_batch(imp, x_shape[0] if x_shape else -1, ins[4])
    f32 = np.dtype(np.float32)
    add = {"activationType": 0}
    state = imp.mid("Reshape", {}, [imp.tensor(ins[4]), imp.const(node + ":s3", np.array([batch, n_filters, mem], np.int32))],
                    f32, [batch, n_filters, mem], node + ":state")  # fmt: skip
    old = imp.mid("StridedSlice", {"beginMask": 3, "endMask": 7, "ellipsisMask": 0, "newAxisMask": 0,
                                   "shrinkAxisMask": 0},
                  [state, imp.const(node + ":b", np.array([0, 0, 1], np.int32)),
                   imp.const(node + ":e", np.zeros(3, np.int32)), imp.const(node + ":st", np.ones(3, np.int32))],
                  f32, [batch, n_filters, mem - 1], node + ":old")  # fmt: skip
    fc = {"hasBias": False, "useAxis": False, "axis": 0, "activationType": 0}
    feat = imp.mid("FullConnection", fc, [imp.tensor(ins[0]), imp.const(node + ":wf", wf.astype(np.float32))],
                   f32, [batch, n_filters], node + ":feat")  # fmt: skip
    feat3 = imp.mid("Reshape", {}, [feat, imp.const(node + ":f3", np.array([batch, n_filters, 1], np.int32))],
                    f32, [batch, n_filters, 1], node + ":feat3")  # fmt: skip
    new = imp.mid("Concat", {"axis": 2}, [old, feat3], f32, [batch, n_filters, mem], node + ":new")
    prod = imp.mid("MulFusion", add, [new, imp.const(node + ":wt", wt.astype(np.float32))], f32,
                   [batch, n_filters, mem], node + ":prod")  # fmt: skip
    rf = {"keepDims": False, "mode": 4, "reduceToEnd": False, "coeff": 1.0}
    per_filter = imp.mid("ReduceFusion", rf, [prod, imp.const(node + ":ax2", np.array([2], np.int32))], f32,
                         [batch, n_filters], node + ":time")  # fmt: skip
    grouped = imp.mid("Reshape", {}, [per_filter, imp.const(node + ":u3", np.array([batch, units, rank], np.int32))],
                      f32, [batch, units, rank], node + ":units")  # fmt: skip
    y = imp.mid("ReduceFusion", rf, [grouped, imp.const(node + ":ax2b", np.array([2], np.int32))], f32,
                [batch, units], node + ":rank")  # fmt: skip
    if len(ins) > 3 and ins[3] >= 0:
        imp.emit("AddFusion", {"activationType": act}, [y, imp.tensor(ins[3])], outs[:1], node)
    elif act:
        imp.emit("Activation", {"activationType": act, "alpha": 0.0, "minVal": 0.0, "maxVal": 0.0,
                                "approximate": False}, [y], outs[:1], node)  # fmt: skip
    else:
        imp.emit(
            "Reshape",
            {},
            [y, imp.const(node + ":y", np.array([batch, units], np.int32))],
            outs[:1],
            node,
        )
    flat = imp.mid("Reshape", {}, [new, imp.const(node + ":sflat", np.array([batch, n_filters * mem], np.int32))],
                   f32, [batch, n_filters * mem], node + ":stateout")  # fmt: skip
    imp.write_state(ins[4], flat)


def _mp_transpose_conv_bias(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """MediaPipe's CUSTOM Convolution2DTransposeBias (input, weights [O, kH, kW, I], bias;
    options a TfLiteTransposeConvParams struct: padding, stride_w, stride_h as int32): TFLite's
    TRANSPOSE_CONV with a bias, to the output tensor's static shape."""
    import dataclasses
    import struct
    from types import SimpleNamespace

    raw = bytes(op.custom_options or b"")
    if len(raw) < 12 or len(ins) < 2 or not outs:
        raise _bad(f"{node}: Convolution2DTransposeBias options {len(raw)} bytes, inputs {ins}")
    padding, sw, sh = struct.unpack_from("<iii", raw)
    if padding not in (1, 2) or sw <= 0 or sh <= 0:
        raise _bad(f"{node}: Convolution2DTransposeBias padding {padding}, strides {sw}x{sh}")
    dims = imp.dims(outs[0])
    fake = dataclasses.replace(imp.t(outs[0]), shape=[4], shape_signature=[4], buffer=0,
                               type=2, quantization=None, is_variable=False)  # fmt: skip
    imp.tensors.append(fake)
    shape_ti = len(imp.tensors) - 1
    imp.folded[shape_ti] = np.array(dims, np.int32)
    opts = imp.T.TransposeConvOptions(padding=0 if padding == 1 else 1, stride_w=sw, stride_h=sh)
    tc_ins = [shape_ti, ins[1], ins[0]] + ([ins[2]] if len(ins) > 2 and ins[2] >= 0 else [])
    _transpose_conv(imp, SimpleNamespace(builtin_options=opts), tc_ins, outs[:1], node)


_CUSTOM["Convolution2DTransposeBias"] = _mp_transpose_conv_bias


def _hybrid_bmm(
    imp: TfliteImporter,
    op: Any,
    ins: list[int],
    outs: list[int],
    node: str,
    rhs: np.ndarray,
    wq: list[tuple[float, int]],
    adj_y: bool,
) -> None:
    """Dynamic-range BATCH_MATMUL with a batched int8 rhs: each lhs row quantised (as LiteRT),
    a float64 MatMul of the integers, then the scales."""
    o = op.builtin_options
    asym = bool(getattr(o, "asymmetric_quantize_inputs", False)) if o is not None else False
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    x_shape = imp.shape(ins[0])
    k = x_shape[-1]
    if k < 0 or any(d < 0 for d in x_shape[:-2]):
        raise _Unsupported(f"dynamic-range BATCH_MATMUL of a {x_shape} input")
    rows = math.prod(x_shape[:-1]) if all(d >= 0 for d in x_shape) else -1
    flat = imp.mid("Reshape", {}, [imp.tensor(ins[0]), imp.const(node + ":rows", np.array([-1, k], np.int32))],
                   f32, [rows, k], node + ":x2")  # fmt: skip
    q, sf = _dynamic_quant(imp, flat, [rows, k], asym, node + ":dq")
    to64 = imp.const(node + ":to64", np.array([from_numpy(f64)], np.int32))
    q64 = imp.mid("Cast", {}, [q, to64], f64, [rows, k], node + ":q64")
    back = imp.const(node + ":xshape", np.array([-1] + x_shape[1:], np.int32))
    q3 = imp.mid("Reshape", {}, [q64, back], f64, x_shape, node + ":q3")
    w64 = rhs.astype(np.float64) - wq[0][1]
    out_dims = imp.shape(outs[0])
    acc = imp.mid("MatMulFusion", {"transposeA": False, "transposeB": adj_y, "activationType": 0},
                  [q3, imp.const(node + ":w64", np.ascontiguousarray(w64))], f64, out_dims, node + ":acc")  # fmt: skip
    to32 = imp.const(node + ":to32", np.array([from_numpy(f32)], np.int32))
    acc32 = imp.mid("Cast", {}, [acc, to32], f32, out_dims, node + ":acc32")
    sshape = imp.const(node + ":sshape", np.array([-1] + x_shape[1:-1] + [1], np.int32))
    sf3 = imp.mid("Reshape", {}, [sf, sshape], f32, x_shape[:-1] + [1], node + ":sf")
    s = imp.mid("MulFusion", {"activationType": 0}, [sf3, imp.const(node + ":ws", np.array([wq[0][0]], np.float32))],
                f32, x_shape[:-1] + [1], node + ":s")  # fmt: skip
    imp.emit("MulFusion", {"activationType": 0}, [acc32, s], outs, node)


def _gather_batched(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """GATHER with batch_dims b and axis b: GatherNd with the batch coordinates (constant, for
    static index shapes) prepended to each index."""
    o = op.builtin_options
    p_shape, i_shape = imp.shape(ins[0]), imp.shape(ins[1])
    bd = int(o.batch_dims)
    bd = bd + len(i_shape) if bd < 0 else bd
    axis = int(o.axis)
    axis = axis + len(p_shape) if axis < 0 else axis
    if axis != bd:
        raise _Unsupported(f"batch_dims {bd} with axis {axis} (only axis == batch_dims)")
    if any(d < 0 for d in i_shape) or not 0 < bd <= len(i_shape):
        raise _Unsupported(f"indices of shape {i_shape}")
    coords = np.indices(i_shape[:bd], dtype=np.int32)  # [bd, B...]
    grid = np.broadcast_to(
        np.moveaxis(coords, 0, -1).reshape(i_shape[:bd] + [1] * (len(i_shape) - bd) + [bd]),
        i_shape + [bd],
    )
    idt = imp.dtype(ins[1])
    cg = imp.const(node + ":batch", np.ascontiguousarray(grid).astype(idt))
    ex = imp.mid("ExpandDims", {}, [imp.tensor(ins[1]), imp.const(node + ":last", np.array([-1], np.int32))],
                 idt, i_shape + [1], node + ":idx")  # fmt: skip
    full = imp.mid("Concat", {"axis": -1}, [cg, ex], idt, i_shape + [bd + 1], node + ":coords")
    imp.emit("GatherNd", {}, [imp.tensor(ins[0]), full], outs, node)


def _densify(sp: Any, raw: bytes, dt: np.dtype[Any], shape: list[int], what: str) -> np.ndarray:
    """A sparse constant (TFLite SparsityParameters: a traversal order over the dims and their
    blocks, each level DENSE or SPARSE_CSR) as its dense array."""
    order = [int(v) for v in (sp.traversal_order or [])]
    bmap = [int(v) for v in (sp.block_map or [])]
    levels = list(sp.dim_metadata or [])
    rank = len(shape)
    n = len(order)
    if len(raw) % dt.itemsize or n != rank + len(bmap) or len(levels) != n:
        raise _bad(f"{what}: sparsity over {n} levels for rank {rank} with blocks {bmap}")
    if sorted(order) != list(range(n)) or any(not 0 <= d < rank for d in bmap):
        raise _bad(f"{what}: traversal order {order}, block map {bmap}")
    values = np.frombuffer(raw, dtype=dt)
    level_of = {d: k for k, d in enumerate(order)}
    block = [int(levels[level_of[rank + j]].dense_size) for j in range(len(bmap))]

    def vec(v: Any) -> np.ndarray:
        vals = getattr(v, "values", None) if v is not None else None
        if isinstance(vals, (bytes, bytearray, memoryview)):  # a [ubyte] / [ushort] vector
            width = {"Uint16Vector": "<u2", "Int32Vector": "<i4"}.get(type(v).__name__, "u1")
            return np.frombuffer(bytes(vals), np.dtype(width)).astype(np.int64)
        return np.asarray(vals if vals is not None else [], np.int64).reshape(-1)

    segs = [vec(m.array_segments) for m in levels]
    idxs = [vec(m.array_indices) for m in levels]
    dense = [int(m.dense_size) for m in levels]
    sparse = [int(m.format) == 1 for m in levels]
    # every level's extent: an original dim over its blocks, or a block's size
    extent = list(shape) + block
    for j, d in enumerate(bmap):
        if block[j] <= 0 or extent[d] % block[j]:
            raise _bad(f"{what}: block {block[j]} does not divide dim {d} of {shape}")
        extent[d] //= block[j]
    for k, d in enumerate(order):
        if not sparse[k] and dense[k] != extent[d]:
            raise _bad(f"{what}: level {k} is {dense[k]} wide, dim {d} has {extent[d]}")
    # the traversal, one level at a time over every entry at once: ``pos`` is each entry's
    # position in the next level (for the last level, its index into ``values``)
    pos = np.zeros(1, np.int64)
    cur: list[np.ndarray] = [np.zeros(1, np.int64)] * n
    for k in range(n):
        if not sparse[k]:
            width = dense[k]
            i = np.tile(np.arange(width, dtype=np.int64), pos.size)
            pos = np.repeat(pos, width) * width + i
            cur = [np.repeat(c, width) for c in cur]
            cur[order[k]] = i
        else:
            sg, ix = segs[k], idxs[k]
            if pos.size and (pos.min() < 0 or pos.max() >= sg.size - 1):
                raise _bad(f"{what}: segment {int(pos.max())} of {sg.size - 1}")
            lo, hi = sg[pos], sg[pos + 1]
            counts = np.maximum(hi - lo, 0)
            if int(counts.sum()) > values.size + math.prod(shape):
                raise _bad(f"{what}: more sparse entries than dense elements")
            starts = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
            j = np.arange(int(counts.sum()), dtype=np.int64) + starts
            if j.size and (j.min() < 0 or j.max() >= ix.size):
                raise _bad(f"{what}: index {int(j.max())} of {ix.size}")
            cur = [np.repeat(c, counts) for c in cur]
            cur[order[k]] = ix[j]
            pos = j
    idx = list(cur[:rank])
    for j2, d in enumerate(bmap):
        idx[d] = cur[d] * block[j2] + cur[rank + j2]
    bad = (pos < 0) | (pos >= values.size)
    for i_d, s_d in zip(idx, shape):
        bad |= (i_d < 0) | (i_d >= s_d)
    if bad.any():
        at = int(np.argmax(bad))
        raise _bad(
            f"{what}: sparse element {int(pos[at])} at {[int(i[at]) for i in idx]} outside {shape}"
        )
    out = np.zeros(shape, dtype=dt)
    if pos.size:
        out[tuple(idx)] = values[pos]
    return out


@_h("DENSIFY")
def _densify_op(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """DENSIFY of a sparse constant: its dense value (read densified), as a constant."""
    v = imp.data(ins[0])
    if v is None:
        raise _Unsupported("a sparse tensor computed at run time")
    shape = imp.const(node + ":shape", np.array(imp.dims(outs[0]), np.int32))
    imp.emit("Reshape", {}, [imp.tensor(ins[0]), shape], outs, node)


# -- StableHLO structural operators ------------------------------------------------------


def _opts2(op: Any, node: str) -> Any:
    o2 = getattr(op, "builtin_options_2", None)
    if o2 is None:
        raise _bad(f"{node}: no StableHLO options")
    return o2


@_h("STABLEHLO_RESHAPE")
def _hlo_reshape(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    dims = imp.shape(outs[0])
    if sum(d < 0 for d in dims) > 1:
        raise _Unsupported(f"output shape {dims}")
    imp.emit("Reshape", {}, [imp.tensor(ins[0]), imp.const(node + ":shape", np.array(dims, np.int32))],
             outs, node)  # fmt: skip


@_h("STABLEHLO_TRANSPOSE")
def _hlo_transpose(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    perm = [int(v) for v in (_opts2(op, node).permutation or [])]
    imp.emit("Transpose", {}, [imp.tensor(ins[0]), imp.const(node + ":perm", np.array(perm, np.int32))],
             outs, node)  # fmt: skip


@_h("STABLEHLO_CONCATENATE")
def _hlo_concat(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    axis = int(_opts2(op, node).dimension or 0)
    imp.emit("Concat", {"axis": axis}, [imp.tensor(i) for i in ins], outs, node)


_HLO_CMP = {0: "Equal", 1: "NotEqual", 2: "GreaterEqual", 3: "Greater", 4: "LessEqual", 5: "Less"}


@_h("STABLEHLO_COMPARE", ins=2)
def _hlo_compare(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o2 = _opts2(op, node)
    if int(getattr(o2, "compare_type", 0) or 0) == 2:  # TOTALORDER: -0 < +0, NaN ordered
        raise _Unsupported("TOTALORDER comparison")
    d = int(o2.comparison_direction or 0)
    if d not in _HLO_CMP:
        raise _bad(f"{node}: comparison direction {d}")
    imp.emit(_HLO_CMP[d], {}, [imp.tensor(i) for i in ins[:2]], outs, node)


@_h("STABLEHLO_SLICE")
def _hlo_slice(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o2 = _opts2(op, node)
    b, e, st = (
        [int(v) for v in (getattr(o2, k) or [])]
        for k in ("start_indices", "limit_indices", "strides")
    )
    if not len(b) == len(e) == len(st) == len(imp.shape(ins[0])) or min(st, default=1) <= 0:
        raise _bad(f"{node}: slice {b}:{e}:{st} of {imp.shape(ins[0])}")
    inputs = [imp.tensor(ins[0]), imp.const(node + ":b", np.array(b, np.int32)),
              imp.const(node + ":e", np.array(e, np.int32)), imp.const(node + ":s", np.array(st, np.int32))]  # fmt: skip
    imp.emit("StridedSlice", {"beginMask": 0, "endMask": 0, "ellipsisMask": 0, "newAxisMask": 0,
                              "shrinkAxisMask": 0}, inputs, outs, node)  # fmt: skip


@_h("STABLEHLO_PAD", ins=2)
def _hlo_pad(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    o2 = _opts2(op, node)
    lo, hi, inner = ([int(v) for v in (getattr(o2, k) or [])]
                     for k in ("edge_padding_low", "edge_padding_high", "interior_padding"))  # fmt: skip
    if any(inner) or min(lo + hi, default=0) < 0:
        raise _Unsupported("interior or negative (cropping) padding")
    v = imp.data(ins[1])
    if v is None:
        raise _Unsupported("padding value computed at run time")
    value = float(v.reshape(-1)[0])
    imp.emit("PadFusion", {"paddings": [[a, c] for a, c in zip(lo, hi)], "paddingMode": 0,
                           "constantValue": value}, [imp.tensor(ins[0])], outs, node)  # fmt: skip


@_h("STABLEHLO_BROADCAST_IN_DIM")
def _hlo_broadcast(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """Operand dim i becomes output dim broadcast_dimensions[i]: Reshape (size-1 dims
    elsewhere; a transpose first when the mapping is not increasing), then BroadcastTo."""
    dims = [int(v) for v in (_opts2(op, node).broadcast_dimensions or [])]
    x_shape, out = imp.shape(ins[0]), imp.shape(outs[0])
    if (
        len(dims) != len(x_shape)
        or any(d < 0 for d in out)
        or any(not 0 <= d < len(out) for d in dims)
    ):
        raise _Unsupported(f"broadcast of {x_shape} along {dims} to {out}")
    x = imp.tensor(ins[0])
    dt = imp.float_of(ins[0])
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    if order != list(range(len(dims))):
        x = imp.mid("Transpose", {}, [x, imp.const(node + ":perm", np.array(order, np.int32))], dt,
                    [x_shape[i] for i in order], node + ":t")  # fmt: skip
        x_shape, dims = [x_shape[i] for i in order], [dims[i] for i in order]
    mid = [1] * len(out)
    for s, d in zip(x_shape, dims):
        mid[d] = s
    r = imp.mid(
        "Reshape", {}, [x, imp.const(node + ":mid", np.array(mid, np.int32))], dt, mid, node + ":r"
    )
    imp.emit("BroadcastTo", {"shape": out}, [r], outs, node)


@_h("STABLEHLO_IOTA", ins=0)
def _hlo_iota(imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str) -> None:
    """A constant: 0, 1, 2, ... along iota_dimension."""
    out = imp.dims(outs[0])
    d = int(_opts2(op, node).iota_dimension or 0)
    if not 0 <= d < len(out) or math.prod(out) * 8 > _FOLD_BUDGET:
        raise _Unsupported(f"iota of {out} along {d}")
    shape = [1] * len(out)
    shape[d] = out[d]
    val = np.broadcast_to(np.arange(out[d]).reshape(shape), out).astype(imp.dtype(outs[0]))
    imp.folded[outs[0]] = np.ascontiguousarray(val)


@_h("STABLEHLO_DYNAMIC_SLICE", ins=2)
def _hlo_dynamic_slice(
    imp: TfliteImporter, op: Any, ins: list[int], outs: list[int], node: str
) -> None:
    """Start indices (one scalar input per dim) clamped to [0, dim - size], then SliceFusion."""
    sizes = [int(v) for v in (_opts2(op, node).slice_sizes or [])]
    x_shape = imp.shape(ins[0])
    if len(sizes) != len(x_shape) or len(ins) != 1 + len(x_shape) or any(d < 0 for d in x_shape):
        raise _Unsupported(f"dynamic slice {sizes} of {x_shape}")
    idt = imp.dtype(ins[1])
    starts = imp.mid(
        "Stack", {"axis": 0}, [imp.tensor(i) for i in ins[1:]], idt, [len(sizes)], node + ":starts"
    )
    lo = imp.mid("Maximum", {}, [starts, imp.const(node + ":zero", np.zeros(len(sizes), idt))], idt,
                 [len(sizes)], node + ":lo")  # fmt: skip
    hi = np.array([d - s for d, s in zip(x_shape, sizes)], idt)
    begin = imp.mid(
        "Minimum", {}, [lo, imp.const(node + ":hi", hi)], idt, [len(sizes)], node + ":begin"
    )
    imp.emit("SliceFusion", {"axes": []}, [imp.tensor(ins[0]), begin,
                                           imp.const(node + ":size", np.array(sizes, idt))], outs, node)  # fmt: skip


def audit_rows() -> list[tuple[str, str, str]]:
    """``tflite_ops.audit`` of what this importer lowers and what runs on the host."""
    from .host_tflite import KERNELS
    from .tflite_ops import audit

    imported = set(_HANDLERS) | set(_INLINED)
    host = (set(KERNELS) | set(_CONTROL)) - set(_INLINED)
    return audit(imported, host)
