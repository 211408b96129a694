"""Manipulation functions: views where NumPy gives views, lazy writes where it copies.

Views (no node): broadcast_to, expand_dims, flip, moveaxis, permute_dims,
reshape (when strides allow), squeeze, unstack, split. Copies are lazy
too: `concat`/`stack` write each piece into a new tensor (one fused write
kernel per piece), `repeat`/`tile` read a stride-0 expanded view through
a reshape (one copy kernel), `roll` is a concat of two slices.
"""
from __future__ import annotations

import operator

import numpy as np
from numpy.exceptions import AxisError

from scheduler.view import normalize_dim

from .. import creation, elementwise, indexing, views
from ..tensor import Tensor
from ._dtypes import astype, result_type
from ._helpers import axes_arg, axis_arg, cast_all, shared, store_out, tensor
from ..layout import copy_in, f_contiguous, resolve_order, reversed_axes


def numpy_axis(axis: object, ndim: int) -> int:
    """axis_arg under NumPy's rule that a 0-d array has no axis at all
    (AxisError; lazy's PyTorch-style views take 0 and -1 there)."""
    if ndim:
        return axis_arg(axis, ndim)
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"an integer is required for the axis, got {axis!r}")
    raise AxisError(operator.index(axis), 0)


def numpy_axes(axis: object, ndim: int, scalar_int: bool = False) -> tuple[int, ...]:
    """axes_arg under NumPy's 0-d rule (numpy_axis), except that an int 0
    or -1 names no axis where `scalar_int`: NumPy's ufunc reductions (sum,
    prod, max, min, any, all), count_nonzero and squeeze take it."""
    if ndim or axis is None:
        return axes_arg(axis, ndim)
    if not isinstance(axis, (tuple, list)):
        if scalar_int and not isinstance(axis, (bool, np.bool_)) \
                and operator.index(axis) in (0, -1):
            return ()
        axis = (axis,)
    return tuple(numpy_axis(a, 0) for a in axis)


def broadcast_to(x: object, /, shape: object) -> Tensor:
    return views.broadcast_to(shared(x), shape)


def broadcast_arrays(*arrays: object) -> list[Tensor]:
    ts = [shared(a) for a in arrays]
    shape = elementwise.broadcast_shapes(*(t.shape for t in ts))
    return [t if t.shape == shape else views.broadcast_to(t, shape) for t in ts]


def expand_dims(x: object, /, axis: object = 0) -> Tensor:
    """New size-1 axes at `axis` (an int or a tuple, positions in the result)."""
    t = shared(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = t.ndim + len(axes)
    pos = sorted(normalize_dim(operator.index(a), ndim, "axis") for a in axes)
    if len(set(pos)) != len(pos):
        raise ValueError(f"expand_dims: repeated axis in {axis!r}")
    for p in pos:
        t = views.unsqueeze(t, p)
    return t


def squeeze(x: object, /, axis: object = None) -> Tensor:
    t = shared(x)
    return views.squeeze(t, numpy_axes(axis, 0, scalar_int=True) if t.ndim == 0 else axis)


def permute_dims(x: object, /, axes: tuple[int, ...]) -> Tensor:
    return views.permute(shared(x), tuple(axes))


def transpose(a: object, axes: tuple[int, ...] | None = None) -> Tensor:
    """NumPy's transpose: reverse the axes, or permute them by `axes`."""
    t = shared(a)
    return views.permute(t, tuple(reversed(range(t.ndim))) if axes is None else tuple(axes))


def matrix_transpose(x: object, /) -> Tensor:
    t = shared(x)
    if t.ndim < 2:
        raise ValueError(f"matrix_transpose: input must be at least 2-D, got shape {t.shape}")
    return swapaxes(t, -1, -2)


def swapaxes(a: object, axis1: int, axis2: int) -> Tensor:
    t = shared(a)
    perm = list(range(t.ndim))
    i, j = numpy_axis(axis1, t.ndim), numpy_axis(axis2, t.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return views.permute(t, tuple(perm))


def moveaxis(x: object, source: object, destination: object, /) -> Tensor:
    t = shared(x)
    src = numpy_axes(source, t.ndim)
    dst = numpy_axes(destination, t.ndim)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must "
                         f"have the same number of elements")
    order = [d for d in range(t.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return views.permute(t, tuple(order))


def reshape(a: object, /, shape: object, order: str = "C", *,
            copy: bool | None = None) -> Tensor:
    """A view when strides allow (copy=False demands one), else a copy.
    order="F" reads and writes the elements with the first index fastest:
    the reversed axes reshaped to the reversed shape, reversed back (a view
    exactly when NumPy's is; of a C-contiguous array, a copy)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    t = tensor(a) if copy else shared(a)  # an array operand is copied now by `tensor`
    fortran = resolve_order(order, t, keep=False) == "F"
    if fortran:
        t, shape = reversed_axes(t), shape[::-1]
    if copy and isinstance(a, Tensor):
        t = t.clone()
    out = views.view(t, shape) if copy is False else views.reshape(t, shape)
    return reversed_axes(out) if fortran else out


def _copy(t: Tensor) -> Tensor:
    """A new tensor (NumPy's functions that build arrays never hand back a
    view of their input, even when nothing moves: `tile(a, 1)`, `roll(a, 0)`)."""
    return elementwise.apply("copy", t)


def ravel(a: object, order: str = "C") -> Tensor:
    """A view when `a` is contiguous in `order` (C; F: Fortran; K: in memory,
    any axis order, positive strides), else a copy, as NumPy's."""
    t = shared(a)
    order = resolve_order(order, t, keep=True)
    if order == "F":
        return reversed_axes(t).ravel()
    if order == "C" or t.is_contiguous():
        return t.ravel()
    return _ravel_keep(t)


def _ravel_keep(t: Tensor) -> Tensor:
    """ravel(order="K") of a non-C-contiguous tensor: NumPy's own K order,
    read from a NumPy array of storage positions with t's strides; a view
    where NumPy's ravel returns one (its result shares that array's memory)."""
    v = t._view
    low = sum(s * (n - 1) for n, s in zip(t.shape, v.strides) if s < 0)
    span = 1 + sum(abs(s) * (n - 1) for n, s in zip(t.shape, v.strides))
    base = np.arange(v.offset + low, v.offset + low + span, dtype=np.int64)
    item = base.itemsize
    proxy = np.lib.stride_tricks.as_strided(base[-low:], t.shape,
                                            tuple(s * item for s in v.strides))
    flat = np.ravel(proxy, order="K")
    if t.size and np.shares_memory(flat, base):
        return views.as_strided(t, (t.size,), (1,), int(flat[0]))
    return indexing.gather(t, flat)


def flip(x: object, /, axis: object = None) -> Tensor:
    """Reversed along `axis` (all axes when None): a view with negative strides."""
    t = shared(x)
    axes = set(numpy_axes(axis, t.ndim))
    return views.getitem(t, tuple(slice(None, None, -1) if d in axes else slice(None)
                                  for d in range(t.ndim)))


def unstack(x: object, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    t = shared(x)
    if t.ndim == 0:
        raise ValueError("unstack: input must be at least 1-D")
    d = axis_arg(axis, t.ndim)
    return tuple(views.select(t, d, i) for i in range(t.shape[d]))


def concat(arrays: object, /, axis: int | None = 0) -> Tensor:
    """Join along an existing axis (flattened first when axis is None).

    The result is a new tensor; each piece is a lazy write into it, so a
    piece's own ops fuse into its write kernel.
    """
    ts = [tensor(a) for a in arrays]
    if not ts:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        ts, axis = [views.reshape(t, (-1,)) for t in ts], 0
    ndim = ts[0].ndim
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    d = axis_arg(axis, ndim)
    for i, t in enumerate(ts[1:], 1):
        if t.ndim != ndim:
            raise ValueError(f"all the input array dimensions except for the concatenation "
                             f"axis must match exactly, but array 0 has {ndim} dimension(s) "
                             f"and array {i} has {t.ndim} dimension(s)")
        for k in range(ndim):
            if k != d and t.shape[k] != ts[0].shape[k]:
                raise ValueError(
                    f"all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {k}, the array at index 0 has size "
                    f"{ts[0].shape[k]} and the array at index {i} has size {t.shape[k]}")
    devices = {t.device for t in ts}
    if len(devices) > 1:
        raise ValueError(f"expected all tensors on the same device, but found "
                         f"{' and '.join(sorted(devices))}")
    shape = list(ts[0].shape)
    shape[d] = sum(t.shape[d] for t in ts)
    out = creation.empty(*shape, dtype=result_type(*ts), device=ts[0].device)
    start = 0
    for t in ts:
        n = t.shape[d]
        if n:
            out[(slice(None),) * d + (slice(start, start + n),)] = t
        start += n
    return out


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _cast_pieces(ts: list[Tensor], out: object, dtype: object, casting: str) -> list[Tensor]:
    """NumPy's concatenate casts each input to `dtype` (or out's dtype) under
    `casting` (not the promoted result: int64 to float32 rounds once)."""
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"'unsafe' (got {casting!r})")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    if out is None and dtype is None:
        return ts
    return cast_all(ts, dtype if dtype is not None else out.dtype, casting)


def concatenate(arrays: object, /, axis: int | None = 0, out: object = None, *,
                dtype: object = None, casting: str = "same_kind") -> Tensor:
    """NumPy's concatenate: concat of the inputs cast to `dtype` or out's dtype."""
    ts = _cast_pieces([tensor(a) for a in arrays], out, dtype, casting)
    return store_out(concat(ts, axis=axis), out)


def stack(arrays: object, axis: int = 0, out: object = None, *, dtype: object = None,
          casting: str = "same_kind") -> Tensor:
    """Join along a new axis; every array must have the same shape."""
    ts = _cast_pieces([tensor(a) for a in arrays], out, dtype, casting)
    if not ts:
        raise ValueError("need at least one array to stack")
    if len({t.shape for t in ts}) > 1:
        raise ValueError(f"all input arrays must have the same shape, got "
                         f"{', '.join(str(t.shape) for t in ts)}")
    d = normalize_dim(operator.index(axis), ts[0].ndim + 1, "axis")
    return store_out(concat([views.unsqueeze(t, d) for t in ts], axis=d), out)


def vstack(tup: object) -> Tensor:
    ts = [tensor(a) for a in tup]
    return concat([t.reshape(1, -1) if t.ndim < 2 else t for t in ts], axis=0)


def hstack(tup: object) -> Tensor:
    ts = [tensor(a) for a in tup]
    return concat(ts, axis=0 if ts and ts[0].ndim == 1 else 1)


def repeat(a: object, repeats: object, axis: int | None = None) -> Tensor:
    """Each element repeated; an int count is a stride-0 view copied once, per-element
    counts a gather."""
    t = tensor(a)
    if axis is None or t.ndim == 0:  # NumPy repeats a 0-d array as a 1-d one
        t, axis = views.reshape(t, (-1,)), 0 if axis is None else axis
    d = axis_arg(axis, t.ndim)
    if isinstance(repeats, (int, np.integer)) or (isinstance(repeats, Tensor)
                                                  and repeats.ndim == 0):
        r = operator.index(repeats)
        if r < 0:
            raise ValueError(f"repeat: repeats may not contain negative values, got {r}")
        wide = views.unsqueeze(t, d + 1)
        shape = t.shape[:d + 1] + (r,) + t.shape[d + 1:]
        merged = t.shape[:d] + (t.shape[d] * r,) + t.shape[d + 1:]
        return views.reshape(_copy(views.expand(wide, shape)), merged)
    counts = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)
    idx = np.repeat(np.arange(t.shape[d]), counts)  # NumPy's errors for bad counts
    return indexing.take(t, idx, d)


def tile(x: object, repetitions: object, /) -> Tensor:
    """`x` repeated `repetitions` times per axis: an expanded view, copied once."""
    t = tensor(x)
    reps = (operator.index(repetitions),) if not isinstance(repetitions, (tuple, list)) \
        else tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    nd = max(t.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    t = views.reshape(t, (1,) * (nd - t.ndim) + t.shape)
    inter = tuple(v for n in t.shape for v in (1, n))
    big = tuple(v for r, n in zip(reps, t.shape) for v in (r, n))
    wide = _copy(views.expand(views.reshape(t, inter), big))
    return views.reshape(wide, tuple(r * n for r, n in zip(reps, t.shape)))


def roll(x: object, /, shift: object, axis: object = None) -> Tensor:
    """Elements shifted cyclically: a concat of two slices per rolled axis."""
    t = tensor(x)
    if axis is None:
        return views.reshape(roll(views.reshape(t, (-1,)), shift, axis=0), t.shape)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    total: dict[int, int] = {}
    for s, a in zip(shifts.reshape(-1).tolist(), axes.reshape(-1).tolist()):
        d = numpy_axis(a, t.ndim)
        total[d] = total.get(d, 0) + s
    out = t
    for d, s in total.items():
        n = t.shape[d]
        k = s % n if n else 0
        if k:
            head = (slice(None),) * d
            out = concat([out[head + (slice(n - k, None),)], out[head + (slice(0, n - k),)]],
                         axis=d)
    return _copy(t) if out is t else out


def _atleast(arys: tuple, shape_of) -> Tensor | tuple[Tensor, ...]:
    out = tuple(views.reshape(t, shape_of(t.shape)) for t in map(shared, arys))
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: object) -> Tensor | tuple[Tensor, ...]:
    """Views with at least one axis (a 0-d tensor becomes shape (1,))."""
    return _atleast(arys, lambda s: s or (1,))


def atleast_2d(*arys: object) -> Tensor | tuple[Tensor, ...]:
    """Views with at least two axes: (N,) becomes (1, N), as NumPy's."""
    return _atleast(arys, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def atleast_3d(*arys: object) -> Tensor | tuple[Tensor, ...]:
    """Views with at least three axes: (N,) is (1, N, 1), (M, N) is (M, N, 1)."""
    return _atleast(arys, lambda s: s if len(s) >= 3 else
                    {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)])


def ascontiguousarray(a: object, dtype: object = None) -> Tensor:
    """`a` itself when it is already C-contiguous with at least one axis (as
    NumPy, so writes through it show in `a`), else a contiguous copy."""
    t = shared(a)
    if dtype is not None:
        t = astype(t, dtype, copy=False)
    return atleast_1d(t).contiguous()


def array_split(ary: object, indices_or_sections: object, axis: int = 0) -> list[Tensor]:
    """NumPy's array_split: views of k sections (the first n % k one longer),
    or cut at the given indices."""
    t = shared(ary)
    d = axis_arg(axis, t.ndim)
    n = t.shape[d]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = operator.index(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, k)
        cuts = [i * each + min(i, extra) for i in range(1, k)]
    else:
        cuts = [operator.index(i) for i in indices_or_sections]
    bounds = [0, *cuts, n]
    head = (slice(None),) * d
    return [t[head + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]


def split(ary: object, indices_or_sections: object, axis: int = 0) -> list[Tensor]:
    """NumPy's split: views of equal sections, or cut at the given indices."""
    t = shared(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        k = operator.index(indices_or_sections)
        if k <= 0 or t.shape[axis_arg(axis, t.ndim)] % k:
            raise ValueError("array split does not result in an equal division")
    return array_split(t, indices_or_sections, axis)


def hsplit(ary: object, indices_or_sections: object) -> list[Tensor]:
    t = shared(ary)
    if t.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(t, indices_or_sections, 1 if t.ndim > 1 else 0)


def vsplit(ary: object, indices_or_sections: object) -> list[Tensor]:
    t = shared(ary)
    if t.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(t, indices_or_sections, 0)


def diagonal(a: object, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """NumPy's diagonal: a view (NumPy's is read-only; this one writes `a`,
    as PyTorch's)."""
    return views.diagonal(shared(a), offset, axis1, axis2)


def flipud(m: object) -> Tensor:
    t = shared(m)
    if t.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(t, axis=0)


def fliplr(m: object) -> Tensor:
    t = shared(m)
    if t.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(t, axis=1)


def rot90(m: object, k: int = 1, axes: tuple = (0, 1)) -> Tensor:
    """NumPy's rot90: a view, rotated from the first axis towards the second."""
    t = shared(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == t.ndim:
        raise ValueError("Axes must be different.")
    if not all(-t.ndim <= a < t.ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={t.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return t[...]
    if k == 2:
        return flip(t, axis=axes)
    order = list(range(t.ndim))
    a0, a1 = axis_arg(axes[0], t.ndim), axis_arg(axes[1], t.ndim)
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return permute_dims(flip(t, axis=a1), tuple(order))
    return flip(permute_dims(t, tuple(order)), axis=a1)


# -- NumPy's functions that return their input or a view of it ---------------------

def asfortranarray(a: object, dtype: object = None) -> Tensor:
    """`a` itself (at least 1-D) when its strides are already Fortran-contiguous
    (1-D, a transposed C array), so writes through it reach `a`, as NumPy's
    view; otherwise a Fortran-ordered copy."""
    t = shared(a)
    if dtype is not None:
        t = astype(t, dtype, copy=False)
    t = atleast_1d(t)
    return t if f_contiguous(t) else copy_in(t, "F")


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F",
                 "F_CONTIGUOUS": "F", "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W",
                 "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a: object, dtype: object = None, requirements: object = None) -> Tensor:
    """NumPy's require: `a` itself (or a view) when it meets the requirements,
    else a copy. Tensors are always aligned and writeable; one owns its data
    ("O") when it spans its whole storage."""
    t = shared(a) if dtype is None else astype(shared(a), dtype, copy=False)
    reqs = {_REQUIREMENTS[r.upper()] for r in requirements or ()}
    if {"C", "F"} <= reqs:
        raise ValueError('Cannot specify both "C" and "F" order')
    if "C" in reqs and not t.is_contiguous():
        return _copy(t)
    if "F" in reqs and not f_contiguous(t):
        return copy_in(t, "F")
    owns = t._view.offset == 0 and t.size == t._buf.size and \
        (t.is_contiguous() or f_contiguous(t))
    return _copy(t) if "O" in reqs and not owns else t


def rollaxis(a: object, axis: int, start: int = 0) -> Tensor:
    """NumPy's rollaxis: `axis` moved to before `start`, a view (moveaxis is clearer)."""
    t = shared(a)
    n = t.ndim
    axis = numpy_axis(axis, n)
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but "
                                      f"{start} was passed in")
    if axis < start:
        start -= 1
    return moveaxis(t, axis, start) if axis != start else t[...]


def dsplit(ary: object, indices_or_sections: object) -> list[Tensor]:
    """Views split along the third axis."""
    t = shared(ary)
    if t.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(t, indices_or_sections, 2)


def trim_zeros(filt: object, trim: str = "fb", axis: object = None) -> Tensor:
    """A slice (a view) without the leading ("f") and/or trailing ("b") zeros
    along `axis` (all axes when None). Where the nonzero values lie is read
    now: an implicit sync."""
    t = shared(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = numpy_axes(axis, t.ndim)
    if not axes:
        return t
    nonzero = np.argwhere(t._host("trim_zeros"))
    if nonzero.size == 0:
        start = stop = [0] * t.ndim
    else:
        start = nonzero.min(0).tolist() if "f" in trim else [None] * t.ndim
        stop = (nonzero.max(0) + 1).tolist() if "b" in trim else [None] * t.ndim
    return t[tuple(slice(start[d], stop[d]) if d in axes else slice(None)
                   for d in range(t.ndim))]


__all__ = ["array_split", "ascontiguousarray", "asfortranarray", "atleast_1d",
           "atleast_2d", "atleast_3d", "broadcast_arrays", "broadcast_to", "concat",
           "concatenate", "diagonal", "dsplit", "expand_dims", "flip", "fliplr",
           "flipud", "hsplit", "hstack", "matrix_transpose", "moveaxis", "permute_dims",
           "ravel", "repeat", "require", "reshape", "roll", "rollaxis", "rot90",
           "split", "squeeze", "stack", "swapaxes", "tile", "transpose", "trim_zeros",
           "unstack", "vsplit", "vstack"]
