"""Wrapping host data (NumPy arrays, nested lists, scalars) as storages.

A NumPy array becomes a realized buffer without a copy whenever its
strides are whole elements: the buffer spans the memory the array covers
and the view carries its strides (negative and zero ones too).

`lazy.asarray` of writeable memory that a live storage already wraps
(`asarray(a)` twice, or `asarray(a[1:])` after `asarray(a)`) gives a
view of that storage (`wrap_shared`), so that writes through either are
ordered against reads through the other, as NumPy's are.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable, TypeVar

import numpy as np

from scheduler.dtypes import DEFAULT_FLOAT, DType, as_dtype
from scheduler.graph import Buffer
from scheduler.view import View

T = TypeVar("T")


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


# id of the object owning some memory -> entries [storage ref, flat array]
# of the live storages `asarray` made over it. A live storage's flat array
# keeps the owner alive, so its id cannot be reused while an entry for it is
# live.
_WRAPPED: dict[int, list[list]] = {}
# The keys whose owner is not an ndarray (a DLPack capsule, a torch tensor):
# every export of the same memory has an owner of its own, so these are
# matched by address against every entry, and every miss looks at them.
_FOREIGN: set[int] = set()
# Keys with an entry whose storage died. A storage's death runs a weakref
# callback, which the collector may run on any thread, in the middle of
# any code, including code that holds some other lock: so the callback
# takes no lock. It drops the entry's array (the memory goes at once) and
# notes the key here; `_prune`, under `_lock`, removes the entry later.
_DEAD: list[int] = []
# Held while the table changes, and by `wrap_shared` across its lookup
# and insert, so two threads wrapping one array get one storage. Readers
# without it copy with `list()`, which runs neither Python code nor the
# collector between items, and an entry list is only ever appended to or
# replaced whole, never cut.
_lock = threading.Lock()


def _owner(a: np.ndarray) -> object:
    """The object whose memory `a` views (the end of its `.base` chain)."""
    o = a
    while isinstance(o, np.ndarray) and o.base is not None:
        o = o.base
    return o


def wrap_shared(a: np.ndarray, new_storage: Callable[[Buffer], T]) -> tuple[T, View]:
    """(storage, view of `a` into it): the live storage that already holds
    `a`'s memory (`shared_view`), else `new_storage` over it, remembered for
    later calls. One step under the lock: two threads wrapping one array at
    once get one storage, so their writes are ordered as NumPy's would be."""
    with _lock:
        _prune()
        found = shared_view(a)
        if found is not None:
            return found
        buf, view = buffer_and_view(a, None, copy=False)
        storage = new_storage(buf)
        _remember(storage, a, buf.array)
        return storage, view


def _remember(storage: object, a: np.ndarray, flat: np.ndarray) -> None:
    """Note that `storage` holds `a`'s memory as `flat` (no copy was made).
    Read-only memory is not noted: a write to such a storage goes to a copy,
    so the memory stops being its. The caller holds `_lock`."""
    owner = _owner(a)
    if not a.flags.writeable or a.size == 0 or _owner(flat) is not owner:
        return
    key = id(owner)
    entry: list = [None, flat]
    entry[0] = weakref.ref(storage, lambda ref: _forget(key, entry))
    _WRAPPED.setdefault(key, []).append(entry)
    if not isinstance(owner, np.ndarray):
        _FOREIGN.add(key)


def _forget(key: int, entry: list) -> None:
    """A storage died: let its memory go now, its entry at the next prune.
    (The entry and its callback refer to each other only until this runs:
    CPython drops a weakref's callback before calling it.)"""
    entry[1] = None
    _DEAD.append(key)


def _prune() -> None:
    """Drop the dead entries of the keys in `_DEAD`. The caller holds `_lock`;
    a collection in here may add keys, which the loop then takes too."""
    while _DEAD:
        key = _DEAD.pop()
        old = _WRAPPED.get(key)
        if old is None:
            continue
        live = [e for e in old if e[0]() is not None]
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
