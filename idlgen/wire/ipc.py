"""HDI interfaces over Parcels: per-method request/reply codecs and a loopback proxy/stub pair.

Framing follows hdi-gen's C++ proxies and stubs:

* request = ``WriteInterfaceToken(descriptor)`` (int32 0x100, int32 0, String16 descriptor),
  then ``WriteBool(false)`` (the "memSet" flag) when some ``[out]`` parameter is a String, an
  array or a List, then the ``[in]`` parameters in order;
* reply = the ``[out]`` parameters in order; ``[oneway]`` methods have no reply;
* the method's int32 result is the transport status, not part of the reply.

Python side: a proxy method takes the ``[in]`` parameters (positionally or by name) and returns
the ``[out]`` values (None, the value, or a tuple when there are several); a non-zero status
raises :class:`HdiError`. A service implementation is any object with methods of those names
taking the ``[in]`` parameters and returning the ``[out]`` values (raise :class:`HdiError` to
return a status). Interface-typed parameters travel as :class:`~idlgen.wire.parcel.RemoteObject`
entries of the object table: the stub side exports an implementation as a new :class:`Stub`,
the receiving side gets a :class:`Proxy` for it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import DecodeError, IdlgenError
from . import parcel

__all__ = [
    "HDF_SUCCESS",
    "HDF_FAILURE",
    "HDF_ERR_NOT_SUPPORT",
    "HDF_ERR_INVALID_PARAM",
    "HdiError",
    "MethodCodec",
    "InterfaceCodec",
    "interface_codec",
    "Stub",
    "Proxy",
    "loopback",
]

HDF_SUCCESS = 0
HDF_FAILURE = -1
HDF_ERR_NOT_SUPPORT = -2
HDF_ERR_INVALID_PARAM = -3

_REGISTRY: dict[str, InterfaceCodec] = {}


class HdiError(IdlgenError):
    """A method call that returned a non-zero HDF status."""

    def __init__(self, status: int, message: str = "") -> None:
        self.status = status
        super().__init__(message or f"HDF status {status}")


def _needs_mem_set(codec: parcel.Codec) -> bool:
    return (
        codec is parcel.STRING
        or codec is parcel.BYTES
        or isinstance(codec, (parcel.PodArray, parcel.Array))
    )


class MethodCodec:
    """Request and reply codecs of one method.

    ``ins``/``outs`` map each parameter's Python name to its codec, in declaration order
    (``self.ins``/``self.outs``: the pairs).
    """

    def __init__(
        self,
        name: str,
        *,
        cmd_id: int,
        ins: Mapping[str, parcel.Codec],
        outs: Mapping[str, parcel.Codec] | None = None,
        oneway: bool = False,
        py_name: str = "",
    ) -> None:
        self.name = name
        self.py_name = py_name or name
        self.cmd_id = cmd_id
        self.ins = tuple(ins.items())
        self.outs = tuple(outs.items()) if outs else ()
        self.oneway = oneway
        self.mem_set = any(_needs_mem_set(c) for _, c in self.outs)
        self.descriptor = ""  # set by the owning InterfaceCodec

    def __repr__(self) -> str:
        return f"MethodCodec({self.name!r}, cmd_id={self.cmd_id})"

    def encode_request(
        self,
        args: Sequence[Any],
        objects: list[object] | None = None,
        *,
        export_remote: Any = None,
        limit: int | None = parcel.DEFAULT_CAPACITY,
    ) -> bytes:
        if len(args) != len(self.ins):
            raise TypeError(f"{self.name} takes {len(self.ins)} [in] arguments, got {len(args)}")
        w = parcel.Writer(objects, export_remote)
        w.write_interface_token(self.descriptor)
        if self.mem_set:
            w.write_bool(False)
        self._write(w, self.ins, args)
        return self._done(w, limit)

    def decode_request(
        self,
        data: bytes,
        objects: Sequence[object] | None = None,
        *,
        import_remote: Any = None,
    ) -> tuple[Any, ...]:
        r = parcel.Reader(bytes(data), objects, import_remote)
        try:
            token = r.read_interface_token()
            if token != self.descriptor:
                r.fail(f"interface token {token!r} is not {self.descriptor!r}", 12)
            mem_set = r.read_bool() if self.mem_set else False
            args = self._read(r, self.ins)
            if mem_set:  # the proxy announced capacities for its String/array [out]s
                for name, c in self.outs:
                    if _needs_mem_set(c) and r.read_uint32() > parcel.HDI_BUFF_MAX_SIZE:
                        r.fail(f"capacity of [out] {name} too large", r.pos - 4)
            r.check_done()
        except DecodeError as e:
            raise DecodeError(
                e.reason,
                path=f"{self.name}.{e.path}" if e.path else self.name,
                offset=e.offset,
            ) from None
        return args

    def encode_reply(
        self,
        outs: Sequence[Any],
        objects: list[object] | None = None,
        *,
        export_remote: Any = None,
        limit: int | None = parcel.DEFAULT_CAPACITY,
    ) -> bytes:
        if len(outs) != len(self.outs):
            raise TypeError(f"{self.name} returns {len(self.outs)} [out] values, got {len(outs)}")
        w = parcel.Writer(objects, export_remote)
        self._write(w, self.outs, outs)
        return self._done(w, limit)

    def decode_reply(
        self,
        data: bytes,
        objects: Sequence[object] | None = None,
        *,
        import_remote: Any = None,
    ) -> tuple[Any, ...]:
        r = parcel.Reader(bytes(data), objects, import_remote)
        try:
            outs = self._read(r, self.outs)
            r.check_done()
        except DecodeError as e:
            raise DecodeError(
                e.reason,
                path=f"{self.name}.{e.path}" if e.path else self.name,
                offset=e.offset,
            ) from None
        return outs

    @staticmethod
    def _write(
        w: parcel.Writer,
        params: tuple[tuple[str, parcel.Codec], ...],
        values: Sequence[Any],
    ) -> None:
        for (name, codec), v in zip(params, values):
            try:
                codec.write(w, v)
            except (
                parcel.EncodeError,
                struct.error,
                OverflowError,
                TypeError,
                ValueError,
                AttributeError,
            ) as e:
                reason = (
                    e.reason if isinstance(e, parcel.EncodeError) else f"{type(e).__name__}: {e}"
                )
                sub = e.path if isinstance(e, parcel.EncodeError) else ""
                raise parcel.EncodeError(reason, path=f"{name}.{sub}" if sub else name) from None

    @staticmethod
    def _read(r: parcel.Reader, params: tuple[tuple[str, parcel.Codec], ...]) -> tuple[Any, ...]:
        out = []
        for name, codec in params:
            try:
                out.append(codec.read(r))
            except DecodeError as e:
                raise DecodeError(
                    e.reason,
                    path=f"{name}.{e.path}" if e.path else name,
                    offset=e.offset,
                ) from None
        return tuple(out)

    @staticmethod
    def _done(w: parcel.Writer, limit: int | None) -> bytes:
        if limit is not None and len(w.buf) > limit:
            raise parcel.EncodeError(f"{len(w.buf)} bytes exceed the Parcel capacity of {limit}")
        return bytes(w.buf)


class InterfaceCodec:
    """All methods of an interface (inherited ones first), by command id and by Python name.

    A method redeclaring an ancestor's name (an hdi-gen overload) is named ``<name>_<cmd_id>``,
    as hdi-gen names its command constant (``CMD_FOO_PING_4``) and as the generated Protocol
    spells it; the ancestor's method keeps the plain name.
    """

    def __init__(
        self,
        descriptor: str,
        version: tuple[int, int],
        methods: Iterable[MethodCodec],
        parent: InterfaceCodec | None = None,
    ) -> None:
        self.descriptor = descriptor
        self.version = version
        self.parent = parent
        own = list(methods)
        inherited = list(parent.by_cmd.values()) if parent is not None else []
        self.by_cmd: dict[int, MethodCodec] = {}
        self.by_name: dict[str, MethodCodec] = {}
        for m in inherited + own:
            if m.cmd_id in self.by_cmd:
                raise ValueError(f"{descriptor}: duplicate command id {m.cmd_id}")
            # re-bind inherited methods to this descriptor (the token names the callee's interface)
            mc = MethodCodec(
                m.name,
                cmd_id=m.cmd_id,
                ins=dict(m.ins),
                outs=dict(m.outs),
                oneway=m.oneway,
                py_name=m.py_name,
            )
            mc.descriptor = descriptor
            self.by_cmd[mc.cmd_id] = mc
            if mc.py_name in self.by_name:
                raise ValueError(f"{descriptor}: two methods named {mc.py_name!r}")
            self.by_name[mc.py_name] = mc
        _REGISTRY[descriptor] = self

    @property
    def name(self) -> str:
        return self.descriptor.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"InterfaceCodec({self.descriptor!r}, {len(self.by_cmd)} methods)"


def interface_codec(descriptor: str) -> InterfaceCodec | None:
    """The codec registered for an interface descriptor (after its module was imported)."""
    return _REGISTRY.get(descriptor)


def _export(obj: object, descriptor: str) -> parcel.RemoteObject:
    if isinstance(obj, Proxy):
        return obj.remote
    iface = _REGISTRY.get(descriptor)
    if iface is None:
        return parcel.RemoteObject(descriptor, obj)
    return parcel.RemoteObject(descriptor, Stub(iface, obj))


def _import(remote: parcel.RemoteObject, descriptor: str) -> object:
    iface = _REGISTRY.get(descriptor)
    if iface is None or not isinstance(remote.target, Stub):
        return remote
    return Proxy(iface, remote)


class Stub:
    """The service side: decodes requests, calls ``impl``, encodes replies."""

    def __init__(self, codec: InterfaceCodec, impl: object) -> None:
        self.codec = codec
        self.impl = impl

    def send_request(
        self, cmd_id: int, data: bytes, objects: Sequence[object] = ()
    ) -> tuple[int, bytes, list[object]]:
        """Handle one transaction: (status, reply bytes, reply objects)."""
        m = self.codec.by_cmd.get(cmd_id)
        if m is None:
            return HDF_ERR_NOT_SUPPORT, b"", []
        try:
            args = m.decode_request(data, objects, import_remote=_import)
        except DecodeError:
            return HDF_ERR_INVALID_PARAM, b"", []
        fn = getattr(self.impl, m.py_name, None)
        implicit_version = m.cmd_id == 0 and m.name == "GetVersion"
        if fn is None and not implicit_version:
            return HDF_ERR_NOT_SUPPORT, b"", []
        result: Any = None
        if fn is not None:
            try:
                result = fn(*args)
            except HdiError as e:
                return e.status, b"", []
        if result is None and implicit_version:
            # hdi-gen implements GetVersion itself: the package's (major, minor)
            result = self.codec.version
        if m.oneway:
            return HDF_SUCCESS, b"", []
        if len(m.outs) == 0:
            outs: tuple[Any, ...] = ()
        elif len(m.outs) == 1:
            outs = (result,)
        elif isinstance(result, tuple) and len(result) == len(m.outs):
            outs = result
        else:
            return HDF_FAILURE, b"", []
        reply_objects: list[object] = []
        try:
            reply = m.encode_reply(outs, reply_objects, export_remote=_export)
        except parcel.EncodeError:
            # the service returned values that do not fit the [out] types (C++: write failed)
            return HDF_FAILURE, b"", []
        return HDF_SUCCESS, reply, reply_objects


class Proxy:
    """The client side: each interface method becomes a call through ``remote``'s stub.

    ``remote.target`` must offer ``send_request(cmd_id, data, objects)`` (a :class:`Stub`, or
    any transport with that signature). ``sent`` records the last (cmd id, request bytes).
    """

    def __init__(self, codec: InterfaceCodec, remote: parcel.RemoteObject) -> None:
        self.codec = codec
        self.remote = remote
        self.sent: tuple[int, bytes] | None = None

    def __getattr__(self, name: str) -> Any:
        m = self.codec.by_name.get(name)
        if m is None:
            raise AttributeError(f"{self.codec.name} has no method {name!r}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(m, *args, **kwargs)

        call.__name__ = name
        return call

    def call(self, m: MethodCodec, *args: Any, **kwargs: Any) -> Any:
        values = list(args)
        for pname, _ in m.ins[len(args) :]:
            if pname not in kwargs:
                raise TypeError(f"{m.name}() missing [in] argument {pname!r}")
            values.append(kwargs.pop(pname))
        if kwargs:
            raise TypeError(f"{m.name}() got unexpected arguments {sorted(kwargs)}")
        objects: list[object] = []
        data = m.encode_request(values, objects, export_remote=_export)
        self.sent = (m.cmd_id, data)
        status, reply, reply_objects = self.remote.target.send_request(m.cmd_id, data, objects)  # type: ignore[attr-defined]
        if status != HDF_SUCCESS:
            raise HdiError(status, f"{self.codec.name}.{m.name} failed with HDF status {status}")
        if m.oneway:
            return None
        outs = m.decode_reply(reply, reply_objects, import_remote=_import)
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else outs


def loopback(codec: InterfaceCodec, impl: object) -> Proxy:
    """A proxy whose calls go through real request/reply bytes to ``impl`` behind a stub."""
    return Proxy(codec, parcel.RemoteObject(codec.descriptor, Stub(codec, impl)))
