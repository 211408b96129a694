"""Views: shape, strides and offset (all in elements) over a flat storage.

Pure data and arithmetic, no graph. Every view op returns a new frozen
`View`; `reshape` returns None when strides cannot describe the result
(then `Tensor.reshape` copies and `Tensor.view` raises, as in PyTorch).
`compose` folds a view of a computed result into the views its producer
reads, which is how fusion "through views" turns into index arithmetic.

This module sits in `scheduler` because the scheduler folds views into
loads and must not import `lazy`; `lazy` re-exports it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from numpy.exceptions import AxisError


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def normalize_dim(dim: int, ndim: int, what: str = "dim", of: str = "") -> int:
    """Wrap a negative axis; the message says the valid range, as NumPy's does.
    `of` names what the range belongs to when that is not a tensor of `ndim`
    dimensions (unsqueeze's positions in its result)."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        if isinstance(dim, bool) or not hasattr(dim, "__index__"):
            raise TypeError(f"{what} must be an int, got {type(dim).__name__}")
        dim = dim.__index__()  # a NumPy integer, as NumPy and PyTorch accept
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:  # NumPy's AxisError is both an IndexError (PyTorch) and a ValueError
        raise AxisError(f"{what} {dim} is out of range for {of or f'a tensor of {ndim} dimensions'}"
                        f" (expected a value in [{lo}, {hi}])")
    return dim % ndim if ndim else 0


@dataclass(frozen=True, slots=True)
class View:
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    @staticmethod
    def contiguous(shape: tuple[int, ...], offset: int = 0) -> "View":
        if offset == 0:  # every op's output: shared, since views are immutable
            return _contiguous(tuple(shape))
        return View(tuple(shape), contiguous_strides(tuple(shape)), offset)

    @staticmethod
    def filled(shape: tuple[int, ...]) -> "View":
        """All of `shape` reading element 0 (stride 0): how a scalar is broadcast."""
        return View(tuple(shape), (0,) * len(shape))

    # -- queries -------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def is_contiguous(self) -> bool:
        """C-contiguous, ignoring strides of size-1 axes (as PyTorch does)."""
        expected = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n == 0:
                return True
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    def span(self) -> tuple[int, int]:
        """Lowest and highest element offset the view touches (size > 0)."""
        lo = hi = self.offset
        for n, s in zip(self.shape, self.strides):
            if s < 0:
                lo += s * (n - 1)
            else:
                hi += s * (n - 1)
        return lo, hi

    # -- view ops ------------------------------------------------------------
    def reshape(self, shape: tuple[int, ...]) -> "View | None":
        """The same elements under `shape` without copying, or None."""
        shape = tuple(shape)
        if self.is_contiguous() or self.size == 0:
            return View.contiguous(shape, self.offset)
        old = [(n, s) for n, s in zip(self.shape, self.strides) if n != 1]
        new_strides = [0] * len(shape)
        # Walk both shapes from the right in chunks of old axes that are
        # mutually contiguous; each chunk must map onto whole new axes.
        view_d = len(shape) - 1
        chunk_stride = old[-1][1]
        tensor_numel = view_numel = 1
        for d in range(len(old) - 1, -1, -1):
            tensor_numel *= old[d][0]
            if d == 0 or old[d - 1][1] != tensor_numel * chunk_stride:
                while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                    new_strides[view_d] = view_numel * chunk_stride
                    view_numel *= shape[view_d]
                    view_d -= 1
                if view_numel != tensor_numel:
                    return None
                if d > 0:
                    chunk_stride = old[d - 1][1]
                    tensor_numel = view_numel = 1
        if view_d != -1:
            return None
        return View(shape, tuple(new_strides), self.offset)

    def permute(self, dims: tuple[int, ...]) -> "View":
        return View(tuple(self.shape[d] for d in dims),
                    tuple(self.strides[d] for d in dims), self.offset)

    def expand(self, shape: tuple[int, ...]) -> "View":
        """Broadcast to `shape`: new leading axes and size-1 axes get stride 0."""
        lead = len(shape) - self.ndim
        strides = [0] * lead
        for d, (n, s) in enumerate(zip(self.shape, self.strides)):
            strides.append(s if n == shape[lead + d] else 0)
        return View(tuple(shape), tuple(strides), self.offset)

    def slice(self, dim: int, start: int, stop: int, step: int) -> "View":
        """Python-slice semantics along `dim`; arguments already normalized by slice.indices."""
        length = len(range(start, stop, step))
        shape = list(self.shape)
        strides = list(self.strides)
        offset = self.offset + start * strides[dim]  # kept when empty, as PyTorch
        shape[dim] = length
        strides[dim] *= step
        return View(tuple(shape), tuple(strides), offset)

    def select(self, dim: int, index: int) -> "View":
        return View(self.shape[:dim] + self.shape[dim + 1:],
                    self.strides[:dim] + self.strides[dim + 1:],
                    self.offset + index * self.strides[dim])

    def unsqueeze(self, dim: int) -> "View":
        stride = self.strides[dim] * self.shape[dim] if dim < self.ndim else 1
        return View(self.shape[:dim] + (1,) + self.shape[dim:],
                    self.strides[:dim] + (stride,) + self.strides[dim:], self.offset)

    def squeeze(self, dims: tuple[int, ...]) -> "View":
        keep = [d for d in range(self.ndim) if d not in dims]
        return View(tuple(self.shape[d] for d in keep),
                    tuple(self.strides[d] for d in keep), self.offset)

    def unfold(self, dim: int, size: int, step: int) -> "View":
        """PyTorch's unfold: windows of `size` every `step` along `dim`, as a new last axis."""
        count = (self.shape[dim] - size) // step + 1
        shape = list(self.shape)
        strides = list(self.strides)
        shape[dim], strides[dim] = count, self.strides[dim] * step
        return View(tuple(shape) + (size,), tuple(strides) + (self.strides[dim],), self.offset)

    def diagonal(self, offset: int, dim1: int, dim2: int) -> "View":
        """NumPy/PyTorch diagonal: the diagonal becomes the last axis."""
        n1, n2 = self.shape[dim1], self.shape[dim2]
        s1, s2 = self.strides[dim1], self.strides[dim2]
        if offset >= 0:
            length, start = max(0, min(n1, n2 - offset)), offset * s2
        else:
            length, start = max(0, min(n1 + offset, n2)), -offset * s1
        keep = [d for d in range(self.ndim) if d not in (dim1, dim2)]
        return View(tuple(self.shape[d] for d in keep) + (length,),
                    tuple(self.strides[d] for d in keep) + (s1 + s2,),
                    self.offset + (start if length else 0))


# Shared views are built from plain ints: a cache hit for a shape given as
# NumPy integers (equal, same hash) must not hand NumPy integers to others.
@lru_cache(maxsize=4096)
def _contiguous(shape: tuple[int, ...]) -> View:
    shape = tuple(map(int, shape))
    return View(shape, contiguous_strides(shape))


def compose(outer: View, inner: View) -> View | None:
    """Fold `outer` into `inner`, or None when strides cannot express it.

    `outer` indexes the contiguous layout of a buffer shaped `inner.shape`;
    `inner` maps that shape into real storage. The result maps outer's
    shape straight into real storage.
    """
    if inner.size == 0 or outer.size == 0 or not any(inner.strides):  # one element
        return View(outer.shape, (0,) * outer.ndim, inner.offset)
    if inner.offset == 0 and inner.is_contiguous():  # storage order: the identity
        return outer
    flat = inner.reshape((inner.size,))
    if flat is not None:  # inner is one arithmetic progression
        (s,) = flat.strides
        return View(outer.shape, tuple(st * s for st in outer.strides),
                    flat.offset + outer.offset * s)
    # Mixed radix: write each outer stride as a step along inner's axes and
    # check that no step ever carries from one inner axis into the next.
    cs = contiguous_strides(inner.shape)
    if not 0 <= outer.offset < inner.size:
        return None
    base = [(outer.offset // c) % n for c, n in zip(cs, inner.shape)]
    lo, hi = list(base), list(base)
    strides = []
    for n, s in zip(outer.shape, outer.strides):
        if n == 1 or s == 0:
            strides.append(0)
            continue
        sign, rem, stride = (1 if s > 0 else -1), abs(s), 0
        for k, c in enumerate(cs):
            digit = sign * (rem // c)
            rem %= c
            stride += digit * inner.strides[k]
            reach = digit * (n - 1)
            lo[k] += min(0, reach)
            hi[k] += max(0, reach)
        strides.append(stride)
    if any(l < 0 or h >= n for l, h, n in zip(lo, hi, inner.shape)):
        return None
    offset = inner.offset + sum(b * s for b, s in zip(base, inner.strides))
    return View(outer.shape, tuple(strides), offset)


Path = tuple[View, ...]  # views from a kernel's index to a value; chained where compose fails


def extend(path: Path, view: View) -> Path:
    """`path` followed by `view`: folded into its last view when strides can say it."""
    merged = compose(path[-1], view)
    if merged is path[-1]:
        return path
    return path[:-1] + (merged,) if merged is not None else path + (view,)
