"""Out-of-band values: what a Parcel carries beside its bytes (fds, Ashmem, binders)."""

from __future__ import annotations

from dataclasses import dataclass

# ----------------------------------------------------------------------------------------------
# Out-of-band values


@dataclass(frozen=True, slots=True)
class Ashmem:
    """An anonymous shared-memory region: its fd travels out of band, ``size`` (> 0) in band."""

    fd: int
    size: int


@dataclass(frozen=True, slots=True)
class NativeBuffer:
    """A graphics buffer handle (``sptr<NativeBuffer>``), passed through as an opaque object."""

    handle: object = None


@dataclass(frozen=True, slots=True)
class SharedMemQueueMeta:
    """The metadata of a ``SharedMemQueue<T>``: fd out of band; element count and type in band."""

    fd: int
    element_count: int
    type: int = 0


@dataclass(eq=False, slots=True)
class RemoteObject:
    """A binder object reference: the interface descriptor and the local object behind it.

    In a loopback (:mod:`idlgen.wire.ipc`) ``target`` is the service stub that answers requests.
    """

    descriptor: str
    target: object = None
