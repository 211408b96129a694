"""Building nodes, tracking live pending storages, and syncing them.

Storages (what all views of a tensor share) are tracked by id with weak
references. `sync()` with no arguments realizes the pending version of
every storage some live tensor still views.

Building a node is the per-op hot path (a few microseconds in all), so the
weak references carry no callbacks: entries of dead storages are swept out
whenever the table has doubled since the last sweep.
"""
from __future__ import annotations

import gc
import math
import threading
import warnings
import weakref
from typing import TYPE_CHECKING, Any

from scheduler.config import config
from scheduler.dtypes import DType
from scheduler.graph import Buffer, Node, Site, user_location, user_site, user_stacklevel
from scheduler.realize import realize
from scheduler.view import View

from . import tensor as _tensor  # a cycle (tensor imports runtime): used at call time only

if TYPE_CHECKING:
    from .tensor import Storage, Tensor

_live: dict[int, weakref.ref] = {}  # id(storage) -> weak ref; dead ones until swept
_sweep_at = 1024
_pending_nodes = 0
# Pending buffers an automatic sync could not compute: later automatic
# syncs leave them alone (an explicit sync still tries, and raises).
_failed: "weakref.WeakSet[Buffer]" = weakref.WeakSet()
# Storages with a pending write over realized memory, held until it runs:
# the memory may be a NumPy array given to `asarray` or seen through
# `numpy()`/DLPack, so the write must happen even if every tensor of the
# storage is dropped (a dead pending result is otherwise never computed).
_writes: dict[int, "Storage"] = {}
# One sync at a time: two threads realizing the same pending write would
# run it twice, and a sync rewrites the graph the other one walks.
_sync_lock = threading.RLock()
_version_lock = threading.Lock()  # `new_version`: read a storage's buffer, then replace it
# `_live` and `_writes`: every change, and every copy of many entries, holds
# this lock. Copying a dict (`list(d.items())`) allocates, so the collector
# may run a finalizer in the middle of it, and the interpreter may switch
# there to a thread that inserts: "dictionary changed size during iteration".
_tables_lock = threading.Lock()


class ImplicitSyncError(RuntimeError):
    """An implicit sync happened while LAZY_IMPLICIT_SYNC=error."""


def track(s: "Storage") -> None:
    """Remember `s` until it dies. The table keeps the order storages were
    first tracked in, which is the order a full sync realizes them in."""
    key = id(s)
    _tables_lock.acquire()  # not `with`, which costs 0.12 us more of each op here
    try:
        old = _live.get(key)
        if old is not None:
            if old() is s:  # already tracked: a write made a new version
                return
            del _live[key]  # a dead storage's id, reused: the new one goes last
        _live[key] = weakref.ref(s)
        if len(_live) >= _sweep_at:
            _sweep()
    finally:
        _tables_lock.release()


def _sweep() -> None:
    """Drop the dead storages' entries (the caller holds _tables_lock)."""
    global _sweep_at
    for key in [key for key, ref in _live.items() if ref() is None]:
        del _live[key]
    _sweep_at = max(1024, 2 * len(_live))


def make(op: str, srcs: tuple, arg: Any, dtype: DType, shape: tuple[int, ...],
         device: str, site: Site | None = None) -> "Tensor":
    """A new pending tensor computed by `op` (the one way tensors get new nodes)."""
    t = _tensor.Tensor._wrap(pending(op, srcs, arg, dtype, shape, device, site),
                             View.contiguous(shape))
    count_node()
    return t


def pending(op: str, srcs: tuple, arg: Any, dtype: DType, shape: tuple[int, ...],
            device: str, site: Site | None = None) -> Buffer:
    """A pending buffer computed by `op`, built at `site` (default: the user's current line).

    The caller counts it (`count_node`), which may sync.
    """
    node = Node(op, srcs, arg, dtype, shape, site or user_site())
    return Buffer(device, dtype, math.prod(shape), None, node)


def count_node() -> None:
    """One more pending node; past `max_pending_nodes`, sync everything (logged as auto)."""
    global _pending_nodes
    _pending_nodes += 1
    if _pending_nodes > config.max_pending_nodes:
        _auto_sync(f"auto: {_pending_nodes} pending nodes exceed "
                   f"max_pending_nodes={config.max_pending_nodes}")


def _auto_sync(cause: str) -> None:
    """Sync every live pending tensor to bound the graph.

    The op being built did nothing wrong, so a tensor that can't be
    computed (a kernel error) does not make it raise: the other tensors
    are computed one by one, the failing ones stay pending (their own sync
    raises the error) and are skipped by later automatic syncs, and a
    RuntimeWarning names the first failure.
    """
    global _pending_nodes
    _pending_nodes = 0
    where = user_location()
    bufs = [b for b in live_pending() if b not in _failed]
    try:
        _realize(bufs, cause, where)
        return
    except Exception:  # noqa: BLE001 - retried below, one tensor at a time
        pass
    errors = []
    for b in bufs:
        if b.pending:
            try:
                _realize([b], cause, where)
            except Exception as e:  # noqa: BLE001 - reported in the warning
                _failed.add(b)
                errors.append(e)
    if errors:
        warnings.warn(f"automatic sync ({cause}) at {where}: {len(errors)} pending tensor(s) "
                      f"could not be computed and stay pending (syncing one raises its "
                      f"error); the first: {type(errors[0]).__name__}: {errors[0]}",
                      RuntimeWarning, stacklevel=user_stacklevel())


def new_version(storage: "Storage", srcs: tuple, arg: Any) -> None:
    """Point `storage` at a new version: a scatter of `srcs` (the values, and
    for advanced indices the positions) over its current buffer. Reading the
    current buffer and replacing it is one step under a lock, so two threads
    writing one storage each build on the other's version (none is lost)."""
    with _version_lock:
        old = storage.buf
        whole = View((old.size,), (1,), 0)
        storage.buf = pending("scatter", ((old, whole), *srcs), arg, old.dtype, (old.size,),
                              old.device)
        with _tables_lock:
            if old.array is not None or id(storage) in _writes:
                _writes[id(storage)] = storage
        track(storage)
    count_node()


def live_pending() -> list[Buffer]:
    """The pending buffers of live storages, in the order they were tracked.

    The walk also forgets the dead storages it meets: `track` sweeps them
    only as the table grows past twice its last live size, so after 50,000
    storages had lived at once and died, every `lazy.sync()` walked 50,000
    dead entries (2.7 ms each, against 0.12 before)."""
    seen: dict[int, Buffer] = {}
    with _tables_lock:
        items = list(_live.items())
    dead = []
    for key, ref in items:
        s = ref()
        if s is None:
            dead.append((key, ref))
        elif s.buf.pending:
            seen.setdefault(id(s.buf), s.buf)
    if dead:
        _forget(dead)
    return list(seen.values())


def _forget(dead: list[tuple[int, weakref.ref]]) -> None:
    """Drop the entries of storages found dead, unless an id was reused since."""
    global _sweep_at
    with _tables_lock:
        for key, ref in dead:
            if _live.get(key) is ref:
                del _live[key]
        _sweep_at = max(1024, 2 * len(_live))


def held() -> set[int]:
    """Ids of the pending buffers live tensors view (a write must not clobber them)."""
    return {id(b) for b in live_pending()}


ELEMENT = "element"  # the arg of a copy node that is one element `a[i, j]` (views._element)


def element_array(buf: Buffer, offset: int) -> Any:
    """The element at `offset` of realized `buf`, copied out (NumPy or CuPy memory)."""
    return buf.array[offset:offset + 1].copy()


def _realize(bufs: list[Buffer], cause: str, where: str) -> None:
    """Realize the still-pending `bufs` under the sync lock (another thread
    may have realized some meanwhile), then let go of written storages
    whose writes have run.

    Python's cyclic GC is held off meanwhile, and restored after: planning
    allocates (kernel IR, templates) while the whole pending graph is alive,
    and every full collection that triggered walked all of that graph
    without freeing any of it (it holds no cycles): syncing a 100,000-op
    chain spent 3.6 of its 8.1 s in six of them. Only the sync's own span
    is affected, under the sync lock; a program that turned the GC off
    keeps it off. (Plain calls, not a context manager: 2.5 us less on
    every small sync.)"""
    with _sync_lock:
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        try:
            _realize_locked([b for b in bufs if b.pending], cause, where)
        finally:
            if collecting:
                gc.enable()
        with _tables_lock:
            for key in [key for key, s in _writes.items() if not s.buf.pending]:
                del _writes[key]


def scheduled(bufs: list[Buffer]) -> tuple[list[Buffer], list[Buffer]]:
    """(what the schedule realizes, the one-element copies taken after it).

    A one-element copy (views._element) is not a kernel: the tensor it
    reads is realized instead (as reading a view of it did), and the element
    is then copied out of its memory. So `a[i]` for every i of a pending `a`
    costs one kernel, not one per element. `lazy.explain` plans the same."""
    elements, rest = [], []
    for b in bufs:
        node = b.node
        (elements if node is not None and node.op == "copy" and node.arg == ELEMENT
         else rest).append(b)
    wanted = {id(b) for b in rest}
    for b in elements:
        src = b.node.srcs[0][0]
        if src.pending and id(src) not in wanted:
            wanted.add(id(src))
            rest.append(src)
    return rest, elements


def _realize_locked(bufs: list[Buffer], cause: str, where: str) -> None:
    """`realize` of what `scheduled` picks, then the elements copied out."""
    rest, elements = scheduled(bufs)
    if rest:
        realize(rest, cause, where, held)
    folded = []
    for b in elements:
        if not b.pending:  # taken by `rest`'s kernels already
            continue
        if b.node.op != "copy":  # `rest`'s plan folded it into a constant
            folded.append(b)
            continue
        (src, view), = b.node.srcs
        b.array, b.node = element_array(src, view.offset), None
    if folded:
        realize(folded, cause, where, held)


def sync(*tensors: "Tensor", _cause: str = "sync()") -> None:
    """Realize the given tensors, or every live pending tensor when none are given."""
    global _pending_nodes
    for t in tensors:
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(f"sync() takes tensors, as sync(a, b), got {type(t).__name__}")
    where = user_location()
    if tensors:
        bufs = list({id(t._buf): t._buf for t in tensors if t._buf.pending}.values())
        if bufs:
            _realize(bufs, _cause, where)
        return
    _realize(live_pending(), _cause, where)
    _pending_nodes = 0


def implicit_sync(t: "Tensor", what: str, also: tuple = ()) -> None:
    """Sync one tensor because its values were read; logged with the cause.
    The tensors in `also` are realized in the same sync, when what follows
    reads them too (a unique's sorted values beside its change marks)."""
    if not also:
        if not t._buf.pending:  # every read of a realized tensor passes here
            return
        bufs = [t._buf]
    else:
        bufs = list({id(x._buf): x._buf for x in (t, *also) if x._buf.pending}.values())
        if not bufs:
            return
    where = user_location()
    mode = config.implicit_sync
    message = f"implicit sync: {what} at {where}"
    if mode == "error":
        raise ImplicitSyncError(message + " (LAZY_IMPLICIT_SYNC=error)")
    if mode == "warn":
        warnings.warn(message, stacklevel=user_stacklevel())
    _realize(bufs, f"implicit: {what}", where)
