"""The deferred graph: storages (`Buffer`) and the nodes that produce them.

A Buffer is realized (a flat NumPy array) or pending (the output of a
Node, laid out contiguously in `node.shape`). A Node reads its inputs as
(Buffer, View) pairs whose views already have the shape the op needs, so
broadcasting and view ops never create nodes. Realizing a buffer drops its
node, which frees the graph behind it.
"""
from __future__ import annotations

import math
import os
import sys
import weakref
from typing import Any

import numpy as np

from .dtypes import DType
from .view import View

_PACKAGE_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + p + os.sep
    for p in ("lazy", "scheduler", "cpu_backend", "cuda_backend"))


_files: dict[str, str | None] = {}  # code file -> its basename, or None if it is lazyrt's


def _user_name(filename: str) -> str | None:
    """Basename of a user's file, None for lazyrt's own (normalized once per file)."""
    try:
        return _files[filename]
    except KeyError:
        ours = os.path.abspath(filename).startswith(_PACKAGE_DIRS)
        name = _files[filename] = None if ours else os.path.basename(filename)
        return name


def user_location() -> str:
    """`file:line` of the innermost frame outside lazyrt's own packages."""
    f = sys._getframe(1)
    while f is not None:
        name = _user_name(f.f_code.co_filename)
        if name is not None:
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


def const_key(value: object) -> tuple[str, str]:
    """A constant by exact value: repr keeps -0.0 apart from 0.0, and 1 from 1.0 and True."""
    return type(value).__name__, repr(value)


class Node:
    """One deferred op. `op` is an elementwise primitive name or one of
    'cast', 'const', 'iota', 'reduce', 'matmul'."""
    __slots__ = ("op", "srcs", "arg", "dtype", "shape", "where", "__weakref__")

    def __init__(self, op: str, srcs: tuple, arg: Any, dtype: DType,
                 shape: tuple[int, ...], where: str):
        self.op = op
        self.srcs: tuple[tuple[Buffer, View], ...] = srcs
        for buf, _ in srcs:
            buf.add_reader(self)
        self.arg = arg
        self.dtype = dtype
        self.shape = shape
        self.where = where

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.shape}, {self.dtype.name}, at {self.where})"


class Buffer:
    """A flat storage of `size` elements on one device.

    `readers` weakly holds the pending nodes that read this buffer: a write
    may reuse the buffer's memory only when none of them is left.
    """
    __slots__ = ("device", "dtype", "size", "array", "node", "readers", "__weakref__")

    def __init__(self, device: str, dtype: DType, size: int,
                 array: np.ndarray | None = None, node: Node | None = None):
        self.device = device
        self.dtype = dtype
        self.size = size
        self.array = array
        self.node = node
        self.readers: weakref.WeakSet | None = None

    def add_reader(self, node: "Node") -> None:
        if self.readers is None:
            self.readers = weakref.WeakSet()
        self.readers.add(node)

    def live_readers(self) -> list["Node"]:
        return list(self.readers) if self.readers is not None else []

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
