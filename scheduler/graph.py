"""The deferred graph: storages (`Buffer`) and the nodes that produce them.

A Buffer is realized (a flat NumPy array) or pending (the output of a
Node, laid out contiguously in `node.shape`). A Node reads its inputs as
(Buffer, View) pairs whose views already have the shape the op needs, so
broadcasting and view ops never create nodes. Realizing a buffer drops its
node, which frees the graph behind it.
"""
from __future__ import annotations

import copy
import copyreg
import math
import os
import pickle
import sys
import threading
import weakref
from types import CodeType
from typing import Any

import numpy as np

from .dtypes import DType
from .view import View

_PACKAGE_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + p + os.sep
    for p in ("lazy", "scheduler", "cpu_backend", "cuda_backend"))
# The standard library's copy and pickle machinery that calls our __reduce__
# and __deepcopy__: the line to name is the user's copy.deepcopy(t) past it.
_PASS_THROUGH = frozenset(os.path.abspath(m.__file__) for m in (copy, copyreg, pickle))
_SWEEP_LOCK = threading.Lock()  # one sweep of a buffer's readers at a time
READERS_SWEEP = 64  # the fewest weak references to readers a sweep may find


_names: dict[str, str | None] = {}  # code file -> its basename, or None if it is lazyrt's
Site = tuple[CodeType | None, int]  # a `user_site`, formatted by `location` when shown


def _user_name(filename: str) -> str | None:
    """Basename of a user's file, None for lazyrt's own or the copy machinery's
    (normalized once per file)."""
    try:
        return _names[filename]
    except KeyError:
        path = os.path.abspath(filename)
        ours = path.startswith(_PACKAGE_DIRS) or path in _PASS_THROUGH
        name = _names[filename] = None if ours else os.path.basename(filename)
        return name


def user_site() -> Site:
    """(code, line) of the innermost frame outside lazyrt's own packages.

    Cheap enough for every op: the line is read now (a frame's line moves
    on as it runs), and `location` formats it only when a log record or an
    error shows it.
    """
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        try:
            name = _names[code.co_filename]
        except KeyError:
            name = _user_name(code.co_filename)
        if name is not None:
            return code, f.f_lineno
        f = f.f_back
    return None, 0


def user_stacklevel() -> int:
    """`warnings.warn`'s stacklevel, for the function calling this one, that
    attributes the warning to the innermost frame outside lazyrt's packages:
    the user's warning filters (by module and line) then apply to it."""
    f, level = sys._getframe(1), 1
    while f is not None and _user_name(f.f_code.co_filename) is None:
        f, level = f.f_back, level + 1
    return level


def location(code: CodeType | None, line: int) -> str:
    """`file:line` of a `user_site`."""
    return "<unknown>" if code is None else f"{_user_name(code.co_filename)}:{line}"


def user_location() -> str:
    """`file:line` of the innermost frame outside lazyrt's own packages."""
    return location(*user_site())


def const_key(value: object) -> tuple[str, str]:
    """A constant by exact value: repr keeps -0.0 apart from 0.0, and 1 from 1.0 and True."""
    return type(value).__name__, repr(value)


class Node:
    """One deferred op. `op` is an elementwise primitive name or one of
    'cast', 'const', 'iota', 'reduce', 'matmul'.

    `site` is where the user built it: a `user_site` (formatted only when a
    log record or an error reads `where`) or an already formatted `file:line`.
    """
    __slots__ = ("op", "srcs", "arg", "dtype", "shape", "site", "__weakref__")

    def __init__(self, op: str, srcs: tuple, arg: Any, dtype: DType,
                 shape: tuple[int, ...], site: Site | str):
        self.op = op
        self.srcs: tuple[tuple[Buffer, View], ...] = srcs
        if srcs:
            ref = weakref.ref(self)
            for buf, _ in srcs:  # `add_reader` inlined: this runs per op
                readers = buf.readers
                readers.append(ref)
                if len(readers) >= buf._sweep_at:
                    buf._sweep()
        self.arg = arg
        self.dtype = dtype
        self.shape = shape
        self.site = site

    @property
    def where(self) -> str:
        """`file:line` of the user code that built this node."""
        site = self.site
        return site if isinstance(site, str) else location(*site)

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.shape}, {self.dtype.name}, at {self.where})"


class Buffer:
    """A flat storage of `size` elements on one device.

    `readers` weakly holds the pending nodes that read this buffer: a write
    may reuse the buffer's memory only when none of them is left. It is a
    list of weak references, whose dead ones are swept out whenever it has
    doubled since the last sweep. This is cheaper per op than a WeakSet (a
    Python method, a callback and several GC-tracked objects per buffer),
    and safe when several threads build readers of one buffer: an append is
    atomic, and a sweep (under a lock) replaces only the prefix it read.
    No list is swept before it holds READERS_SWEEP references: from 8, a
    buffer read in a loop (`x + 1`, dropped at once) was swept every 8 ops,
    0.3 us of every op's 4.8 (docs/performance_history.md,
    "Op build on the Xeon").
    """
    __slots__ = ("device", "dtype", "size", "array", "node", "readers", "_sweep_at",
                 "__weakref__")

    def __init__(self, device: str, dtype: DType, size: int,
                 array: np.ndarray | None = None, node: Node | None = None):
        self.device = device
        self.dtype = dtype
        self.size = size
        self.array = array
        self.node = node
        self.readers: list[weakref.ref] = []
        self._sweep_at = READERS_SWEEP

    def add_reader(self, node: Node) -> None:
        self.readers.append(weakref.ref(node))
        if len(self.readers) >= self._sweep_at:
            self._sweep()

    def _sweep(self) -> None:
        with _SWEEP_LOCK:
            readers = self.readers
            n = len(readers)
            if n < self._sweep_at:
                return  # another thread swept it while this one waited
            readers[:n] = [r for r in readers[:n] if r() is not None]  # appends after n stay
            self._sweep_at = max(READERS_SWEEP, 2 * len(readers))

    def live_readers(self) -> list[Node]:
        """The pending nodes still alive that read this buffer, each once."""
        alive: dict[int, Node] = {}
        for r in list(self.readers):
            node = r()
            if node is not None:
                alive[id(node)] = node
        return list(alive.values())

    @property
    def pending(self) -> bool:
        return self.array is None

    @staticmethod
    def realized(array: np.ndarray, device: str, dtype: DType) -> "Buffer":
        return Buffer(device, dtype, array.size, array=array)

    @staticmethod
    def pending_from(node: Node, device: str) -> "Buffer":
        return Buffer(device, node.dtype, math.prod(node.shape), node=node)

    def __repr__(self) -> str:
        state = f"pending {self.node!r}" if self.pending else "realized"
        return f"Buffer({self.size} x {self.dtype.name} on {self.device}, {state})"


def host_view(flat: np.ndarray, view: View) -> np.ndarray:
    """A read-only NumPy array over `flat` with the view's shape and strides."""
    item = flat.itemsize
    if view.size == 0:
        return np.empty(view.shape, flat.dtype)
    arr = np.ndarray(view.shape, flat.dtype, buffer=flat, offset=view.offset * item,
                     strides=tuple(s * item for s in view.strides))
    arr.flags.writeable = False
    return arr
