"""Host memory for outputs: 64-byte aligned, and recycled across syncs.

NumPy's large arrays start 16 bytes past a cache line (malloc's header on
an mmap'd chunk), so every row of a (n, 64) float32 output starts
mid-line: no row held a whole line-aligned block for the streaming
stores (loops._streamed_rows), and every 64-byte vector load split across
two lines. `empty` aligns outputs of ALIGN_MIN_BYTES or more to a line.

A kernel's output is usually written into fresh memory, and touching 40 MB
of fresh pages costs more than the kernel itself on many machines (page
faults, made worse when several threads fault at once). When a realized
buffer dies, its array comes here; the next output of the same size and
dtype reuses it. An array is handed out again only if nothing else refers
to it any more (CPython's reference count says so exactly): memory a user
still sees through `numpy()`, or another version still uses, is never
reused. Bounded by LAZY_POOL_MB (default 1024; 0 turns it off).
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import defaultdict

import numpy as np

MIN_BYTES = 1 << 20  # smaller arrays are cheap to allocate
ALIGN = 64                 # bytes: a cache line, an AVX-512 vector
ALIGN_MIN_BYTES = 1 << 16  # smaller arrays keep np.empty (aligning costs ~2 us)


def empty(size: int, dtype: np.dtype) -> np.ndarray:
    """np.empty(size, dtype), starting on an ALIGN boundary when large.

    The array is a view of a byte buffer through a memoryview, not of an
    ndarray: NumPy then never collapses a user's view of it past it to the
    raw bytes, so the pool's reference count on it still sees every user."""
    dtype = np.dtype(dtype)
    nbytes = size * dtype.itemsize
    if nbytes < ALIGN_MIN_BYTES:
        return np.empty(size, dtype)
    try:
        raw = np.empty(nbytes + ALIGN - 1, np.uint8)
    except (ValueError, MemoryError):  # NumPy's error, naming the size asked for
        return np.empty(size, dtype)
    skip = -raw.ctypes.data % ALIGN
    return np.frombuffer(memoryview(raw)[skip:skip + nbytes], dtype)


class Pool:
    def __init__(self) -> None:
        self._free: dict[tuple[int, str], list[np.ndarray]] = defaultdict(list)
        self._bytes = 0
        # reentrant: `give` runs from finalizers, and a garbage collection
        # inside `give` (it allocates) may run another buffer's finalizer
        self._lock = threading.RLock()

    @staticmethod
    def limit() -> int:
        try:
            return int(os.environ.get("LAZY_POOL_MB", "1024")) << 20
        except ValueError:
            return 1024 << 20

    def take(self, size: int, dtype: np.dtype) -> np.ndarray | None:
        """A recycled flat array of `size` elements, or None."""
        if size * dtype.itemsize < MIN_BYTES:  # never pooled: skip the lock and lookup
            return None
        key = (size, dtype.str)
        with self._lock:
            free = self._free.get(key)
            while free:
                arr = free.pop()
                self._bytes -= arr.nbytes
                # refs: the popped local, getrefcount's argument; more means in use
                if sys.getrefcount(arr) <= 2:
                    return arr
        return None

    def give(self, arr: np.ndarray) -> None:
        with self._lock:
            if self._bytes + arr.nbytes > self.limit():
                return
            free = self._free[(arr.size, arr.dtype.str)]
            if any(a is arr for a in free):
                return
            free.append(arr)
            self._bytes += arr.nbytes

    def recycle_when_dead(self, buf: object, arr: np.ndarray) -> None:
        """Return `arr` to the pool once `buf` (the buffer that owns it) is gone."""
        if arr.nbytes >= MIN_BYTES and self.limit() > 0:
            weakref.finalize(buf, self.give, arr)

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self._bytes = 0


pool = Pool()
