"""Wrapping host data (NumPy arrays, nested lists, scalars) as storages.

A NumPy array becomes a realized buffer without a copy whenever its
strides are whole elements: the buffer spans the memory the array covers
and the view carries its strides (negative and zero ones too).

`lazy.asarray` of writeable memory that a live storage already wraps
(`asarray(a)` twice, or `asarray(a[1:])` after `asarray(a)`) gives a
view of that storage (`shared_view`), so that writes through either are
ordered against reads through the other, as NumPy's are.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from scheduler.dtypes import DEFAULT_FLOAT, DType, as_dtype
from scheduler.graph import Buffer
from scheduler.view import View


def storage_of(a: np.ndarray) -> tuple[np.ndarray, View]:
    """(flat array over a's memory, view of `a` into it) without copying when possible."""
    item = a.itemsize
    if a.size == 0:
        return np.empty(0, a.dtype), View.contiguous(a.shape)
    if a.flags.c_contiguous:
        return a.reshape(-1), View.contiguous(a.shape)
    if any(s % item for s in a.strides):
        return np.ascontiguousarray(a).reshape(-1), View.contiguous(a.shape)
    strides = tuple(s // item for s in a.strides)
    low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)]
    span = 1 + sum(abs(s) * (n - 1) for n, s in zip(a.shape, strides))
    flat = np.lib.stride_tricks.as_strided(low, shape=(span,), strides=(item,),
                                           writeable=a.flags.writeable)
    offset = (a.__array_interface__["data"][0] - low.__array_interface__["data"][0]) // item
    return flat, View(a.shape, strides, offset)


def from_python(data: object, dtype: DType | None, *, numpy_rules: bool = False) -> np.ndarray:
    """Nested lists and scalars: PyTorch's defaults (floats become float32),
    or NumPy's (`numpy_rules`: float64, and ints past int64 are refused)."""
    if dtype is not None:  # NumPy's conversion: a value the dtype can't hold raises
        return np.asarray(data, dtype=dtype.np)
    arr = np.asarray(data)
    if arr.dtype == object:
        raise TypeError(f"cannot make a tensor from {type(data).__name__} data "
                        f"(ragged nesting or non-numeric items)")
    if numpy_rules:
        if arr.dtype.kind == "u":
            raise OverflowError(f"Python integers in {data!r:.60} do not fit int64, and "
                                f"lazyrt has no uint64 to hold them as NumPy would")
        return arr
    if arr.dtype.kind == "f":
        return arr.astype(DEFAULT_FLOAT.np)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    return arr


def buffer_and_view(data: object, dtype: object | None, copy: bool) -> tuple[Buffer, View]:
    want = as_dtype(dtype) if dtype is not None else None
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.asarray(data)
        if want is None and not arr.dtype.isnative:  # kernels read native order only
            want = as_dtype(arr.dtype)
        if want is not None and arr.dtype != want.np:
            arr = arr.astype(want.np)
        else:
            as_dtype(arr.dtype)  # TypeError naming the supported dtypes
            if copy:
                arr = arr.copy()
    else:
        arr = from_python(data, want)
    flat, view = storage_of(arr)
    return Buffer.realized(flat, "cpu", as_dtype(flat.dtype)), view


# id of the object owning some memory -> (storage, flat array) of the live
# storages `asarray` made over it. A live storage's flat array keeps the
# owner alive, so its id cannot be reused while an entry for it is live.
_WRAPPED: dict[int, list[tuple[weakref.ref, np.ndarray]]] = {}
# The keys whose owner is not an ndarray (a DLPack capsule, a torch tensor):
# every export of the same memory has an owner of its own, so these are
# matched by address against every entry, and every miss looks at them.
_FOREIGN: set[int] = set()
# Held while an entry list is replaced or grown, so that no thread's append
# lands in a list another thread is replacing. Reentrant: `_forget` runs as
# a weakref callback, so a collection may run it on a thread that holds it.
# Readers take no lock: they copy `_FOREIGN` and `_WRAPPED` with `list()`,
# which runs neither Python code nor the collector between items, and an
# entry list is only ever appended to or replaced whole, never cut.
_lock = threading.RLock()


def _owner(a: np.ndarray) -> object:
    """The object whose memory `a` views (the end of its `.base` chain)."""
    o = a
    while isinstance(o, np.ndarray) and o.base is not None:
        o = o.base
    return o


def remember_storage(storage: object, a: np.ndarray, flat: np.ndarray) -> None:
    """Note that `storage` holds `a`'s memory as `flat` (no copy was made),
    for later `shared_view`s. Read-only memory is not noted: a write to
    such a storage goes to a copy, so the memory stops being its."""
    owner = _owner(a)
    if not a.flags.writeable or a.size == 0 or _owner(flat) is not owner:
        return
    key = id(owner)
    entry = (weakref.ref(storage, lambda ref: _forget(key)), flat)
    with _lock:
        _WRAPPED.setdefault(key, []).append(entry)
        if not isinstance(owner, np.ndarray):
            _FOREIGN.add(key)


def _forget(key: int) -> None:
    """Keep only `key`'s live entries (a storage over its memory died). The
    list is built anew, which allocates, so another callback may replace it
    meanwhile: then build it again from that one."""
    with _lock:
        while True:
            old = _WRAPPED.get(key)
            if old is None:
                return
            live = [e for e in old if e[0]() is not None]
            if _WRAPPED.get(key) is old:
                break
        if live:
            _WRAPPED[key] = live
        else:
            del _WRAPPED[key]
            _FOREIGN.discard(key)


def shared_view(a: np.ndarray) -> tuple[object, View] | None:
    """(storage, view of `a` into it) when a live storage from `asarray`
    holds all of `a`'s (writeable) memory in its dtype, whole elements
    apart; otherwise None, and `a` gets a storage of its own."""
    if not _WRAPPED or not a.flags.writeable or a.size == 0:
        return None
    item = a.itemsize
    if any(s % item for s in a.strides):
        return None
    owner = _owner(a)
    found = _within(_WRAPPED.get(id(owner), ()), a)
    if found is None and (_FOREIGN or not isinstance(owner, np.ndarray)):
        keys = list(_FOREIGN) if isinstance(owner, np.ndarray) else list(_WRAPPED)
        found = _within([e for k in keys for e in _WRAPPED.get(k, ())], a)
    return found


def pending_shared_view(a: np.ndarray) -> tuple[object, View] | None:
    """`shared_view(a)` when that storage has a lazy write still pending: `a`'s
    values in program order are then that version's, not the memory's now."""
    shared = shared_view(a)
    return shared if shared is not None and shared[0].buf.pending else None


def _within(entries: list, a: np.ndarray) -> tuple[object, View] | None:
    """The first live entry whose flat array holds all of `a`, by address."""
    item = a.itemsize
    strides = tuple(s // item for s in a.strides)
    ptr = a.__array_interface__["data"][0]
    for ref, flat in entries:
        storage = ref()
        if storage is None or flat.dtype != a.dtype:
            continue
        offset, rem = divmod(ptr - flat.__array_interface__["data"][0], item)
        low = offset + sum(s * (n - 1) for n, s in zip(a.shape, strides) if s < 0)
        high = offset + sum(s * (n - 1) for n, s in zip(a.shape, strides) if s > 0)
        if rem == 0 and low >= 0 and high < flat.size:
            return storage, View(a.shape, strides, offset)
    return None
