"""Which storage positions an advanced-indexing key selects, as an affine map.

For a key made of slices, integers, integer arrays and boolean masks
(and one Ellipsis), NumPy's result element at (..., i, ..., b, ..., j, ...)
sits at storage position

    offset + adv[b] + i * step_i + j * step_j + ...

where `adv` sums the advanced indices' coordinates times their strides
(a `Term` each, broadcast to the shape B of the index arrays) and each
slice axis adds its own term. Writing that out costs the size of `adv` plus one pass to
add the slice terms, instead of one pass per axis over the whole result
(`indexing.selected_positions`); a gather may even skip writing it and
compute the slice terms in its kernel (`indexing.getitem`).

Pure data: `parse` reads shapes, strides and host arrays only. It returns
None for what it does not describe (None/newaxis, boolean scalars,
out-of-bounds or mismatched indices); the general path then gives NumPy's
own result or error.
"""
from __future__ import annotations

import functools
import operator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Term:
    """One advanced index's share of a position: the sum over `shape`'s axes
    of coordinate * stride, the coordinates those of each flat C-order
    `index` within `shape` (an integer array: one axis, the index itself;
    a mask: its true elements' flat indices, over the axes it covers)."""
    index: np.ndarray              # integers, broadcastable to the selection's B
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def value(self) -> np.ndarray:
        """The term on the host, int64 of the index's shape."""
        return self.combine(self.index.astype(np.int64))

    def combine(self, flat):
        """Σ coordinate * stride from the index as int64: a NumPy array, or a
        lazy tensor (indexing.py), which the same arithmetic builds as ops."""
        parts = []
        for d in range(len(self.shape) - 1, 0, -1):
            parts.append((flat % self.shape[d]) * self.strides[d])
            flat = flat // self.shape[d]
        parts.append(flat * self.strides[0])
        return functools.reduce(operator.add, parts)


@dataclass(frozen=True)
class Selection:
    shape: tuple[int, ...]                   # the result's shape (NumPy's)
    offset: int                              # storage position of the first slice element
    terms: tuple[Term, ...]                  # the advanced indices, broadcast together
    b_end: int                               # the result dim after that broadcast's dims
    slices: tuple[tuple[int, int, int], ...]  # (result dim, length, step in elements)

    def at_rank(self, index_shape: tuple[int, ...]) -> tuple[int, ...]:
        """An index's shape with the result's rank: its dims end at b_end."""
        end = self.b_end
        return (1,) * (end - len(index_shape)) + index_shape + (1,) * (len(self.shape) - end)

    def positions(self) -> np.ndarray:
        """Every selected position, C-contiguous int64 of the result's shape."""
        adv = functools.reduce(np.add, [t.value().reshape(self.at_rank(t.index.shape))
                                        for t in self.terms])
        inner = np.int64(self.offset)
        for dim, n, step in self.slices:
            inner = inner + (np.arange(n, dtype=np.int64) * step).reshape(
                along(dim, n, len(self.shape)))
        out = np.empty(self.shape, np.int64)
        np.add(adv, inner, out=out)
        return out


def along(dim: int, n: int, rank: int) -> tuple[int, ...]:
    """The shape of a slice axis's term: `rank` dims, length n at `dim`."""
    return (1,) * dim + (n,) + (1,) * (rank - dim - 1)


def _int_coords(k: np.ndarray, n: int) -> np.ndarray | None:
    """Integer indices into an axis of length n, negatives wrapped; None when
    any is out of bounds (the general path raises NumPy's IndexError)."""
    if k.size and (k.min() < -n or k.max() >= n):
        return None
    if k.dtype.kind == "i" and k.size and k.min() < 0:
        return np.where(k < 0, k + n, k)
    return k


def _mask_term(k: np.ndarray, strides: tuple[int, ...]) -> Term:
    """A mask's true elements as one flat index: over one axis of the mask's
    size when its axes are laid out in C order relative to each other (a
    whole contiguous tensor's mask), else decomposed over its axes."""
    flat = np.flatnonzero(k)
    if all(strides[i] == strides[i + 1] * k.shape[i + 1] for i in range(k.ndim - 1)):
        return Term(flat, (k.size,), (strides[-1],))
    return Term(flat, k.shape, tuple(strides))


def _expand(key: tuple, ndim: int) -> list | None:
    """The key with its Ellipsis replaced by the slices it stands for, behind
    an Ellipsis marker (which keeps advanced indices on either side apart,
    as in NumPy, even when it stands for no axis)."""
    if sum(k is Ellipsis for k in key) > 1 or any(k is None for k in key):
        return None
    used = sum(k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
               for k in key if k is not Ellipsis)
    if used > ndim:
        return None
    fill = [slice(None)] * (ndim - used)
    at = next((i for i, k in enumerate(key) if k is Ellipsis), None)
    if at is None:
        return list(key) + fill
    return list(key[:at]) + [Ellipsis] + fill + list(key[at + 1:])


def parse(shape: tuple[int, ...], strides: tuple[int, ...], offset: int,
          key: tuple) -> Selection | None:
    """The affine map of `key` (host arrays, no lists) on a view, or None."""
    items = _expand(key, len(shape))
    if items is None:
        return None
    parts: list = []   # per item: ("s", start, length, step), ("a", Term) or ("sep",)
    axis = 0
    for k in items:
        if k is Ellipsis:
            parts.append(("sep",))
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[axis])
            parts.append(("s", start * strides[axis], len(range(start, stop, step)),
                          step * strides[axis]))
            axis += 1
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            if k.ndim == 0 or k.shape != tuple(shape[axis:axis + k.ndim]):
                return None
            parts.append(("a", _mask_term(k, strides[axis:axis + k.ndim])))
            axis += k.ndim
        elif isinstance(k, (int, np.integer, np.ndarray)) and not isinstance(k, (bool, np.bool_)):
            k = np.asarray(k)
            if k.dtype.kind not in "iu":
                return None
            c = _int_coords(k, shape[axis])
            if c is None:
                return None
            parts.append(("a", Term(c, (shape[axis],), (strides[axis],))))
            axis += 1
        else:
            return None
    adv_at = [i for i, p in enumerate(parts) if p[0] == "a"]
    if not adv_at:  # basic indexing: a view, not a selection (lazy/views.py)
        return None
    terms = tuple(parts[i][1] for i in adv_at)
    try:
        b_shape = np.broadcast_shapes(*(t.index.shape for t in terms))
    except ValueError:
        return None
    # NumPy puts the broadcast dims where the advanced indices stand when
    # they are all next to each other, else in front of every slice dim
    first = adv_at[0] if adv_at == list(range(adv_at[0], adv_at[-1] + 1)) else 0
    lead = [p for p in parts[:first] if p[0] == "s"]
    rest = [p for p in parts[first:] if p[0] == "s"]
    shape_out = tuple(p[2] for p in lead) + b_shape + tuple(p[2] for p in rest)
    end = len(lead) + len(b_shape)
    dims = list(range(len(lead))) + list(range(end, len(shape_out)))
    spans = tuple((d, p[2], p[3]) for d, p in zip(dims, lead + rest))
    return Selection(shape_out, offset + sum(p[1] for p in lead + rest), terms, end, spans)
