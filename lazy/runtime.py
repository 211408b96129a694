"""Building nodes, tracking live pending storages, and syncing them.

Storages (what all views of a tensor share) are tracked by id with weak
references. `sync()` with no arguments realizes the pending version of
every storage some live tensor still views.
"""
from __future__ import annotations

import warnings
import weakref
from typing import TYPE_CHECKING, Any

from scheduler.config import config
from scheduler.dtypes import DType
from scheduler.graph import Buffer, Node, user_location
from scheduler.realize import realize
from scheduler.view import View

if TYPE_CHECKING:
    from .tensor import Storage, Tensor

_live: dict[int, weakref.ref] = {}
_pending_nodes = 0


class ImplicitSyncError(RuntimeError):
    """An implicit sync happened while LAZY_IMPLICIT_SYNC=error."""


def track(s: "Storage") -> None:
    key = id(s)
    _live[key] = weakref.ref(s, lambda _, key=key: _live.pop(key, None))


def make(op: str, srcs: tuple, arg: Any, dtype: DType, shape: tuple[int, ...],
         device: str) -> "Tensor":
    """A new pending tensor computed by `op` (the one way nodes are built)."""
    from .tensor import Tensor
    t = Tensor._wrap(_pending(op, srcs, arg, dtype, shape, device), View.contiguous(shape))
    _count_node()
    return t


def _pending(op: str, srcs: tuple, arg: Any, dtype: DType, shape: tuple[int, ...],
             device: str) -> Buffer:
    return Buffer.pending_from(Node(op, srcs, arg, dtype, shape, user_location()), device)


def _count_node() -> None:
    global _pending_nodes
    _pending_nodes += 1
    if _pending_nodes > config.max_pending_nodes:
        sync(_cause=f"auto: {_pending_nodes} pending nodes exceed "
                    f"max_pending_nodes={config.max_pending_nodes}")


def new_version(storage: "Storage", srcs: tuple, arg: Any) -> None:
    """Point `storage` at a new version: a scatter over its current buffer."""
    old = storage.buf
    storage.buf = _pending("scatter", srcs, arg, old.dtype, (old.size,), old.device)
    track(storage)
    _count_node()


def live_pending() -> list[Buffer]:
    seen: dict[int, Buffer] = {}
    for ref in list(_live.values()):
        s = ref()
        if s is not None and s.buf.pending:
            seen.setdefault(id(s.buf), s.buf)
    return list(seen.values())


def held() -> set[int]:
    """Ids of the pending buffers live tensors view (a write must not clobber them)."""
    return {id(b) for b in live_pending()}


def sync(*tensors: "Tensor", _cause: str = "sync()") -> None:
    """Realize the given tensors, or every live pending tensor when none are given."""
    global _pending_nodes
    where = user_location()
    if tensors:
        bufs = list({id(t._buf): t._buf for t in tensors if t._buf.pending}.values())
        if bufs:
            realize(bufs, _cause, where, held)
        return
    realize(live_pending(), _cause, where, held)
    _pending_nodes = 0


def implicit_sync(t: "Tensor", what: str) -> None:
    """Sync one tensor because its values were read; logged with the cause."""
    if not t._buf.pending:
        return
    where = user_location()
    mode = config.implicit_sync
    message = f"implicit sync: {what} at {where}"
    if mode == "error":
        raise ImplicitSyncError(message + " (LAZY_IMPLICIT_SYNC=error)")
    if mode == "warn":
        warnings.warn(message, stacklevel=3)
    realize([t._buf], f"implicit: {what}", where, held)
