"""NumPy's memory `order` ("C", "F", "A", "K") for copies, casts and reshapes.

A lazyrt op writes its output C-contiguous. An output in any other axis
order is that op applied to the input's axes permuted into the wanted
order, and the result permuted back: the permutations are views (no
copy), so `copy(order="F")` is one copy kernel whose result has Fortran
strides, as NumPy's. Tensor's `astype` and `copy` call this on every
cast, so a C-contiguous tensor takes a short way through.
"""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import as_dtype

from . import elementwise
from .tensor import Tensor


def f_contiguous(t: Tensor) -> bool:
    """Fortran-contiguous strides: the reversed axes are C-contiguous."""
    return reversed_axes(t).is_contiguous()


def reversed_axes(t: Tensor) -> Tensor:
    return _permuted(t, tuple(reversed(range(t.ndim))))


def _permuted(t: Tensor, axes: tuple[int, ...]) -> Tensor:
    """A view of t with its axes in `axes` order (a valid permutation: no checks)."""
    return t._as(t._view.permute(axes))


def resolve_order(order: object, t: Tensor, keep: bool) -> str:
    """NumPy's `order` as "C", "F" or (`keep`: orders that allow K) "K":
    "A" is F for a Fortran- but not C-contiguous tensor, else C; None is C."""
    if order is None:
        return "C"
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if order == "K" and not keep:
        raise ValueError("order 'K' is not permitted for reshaping")
    if order == "A":
        return "F" if f_contiguous(t) and not t.is_contiguous() else "C"
    return order


def layout_axes(t: Tensor, order: object) -> tuple[int, ...]:
    """The axes from slowest to fastest of a new array in `order` like `t`.

    K keeps t's own order, as NumPy's copies and casts do: C or F when t
    is contiguous in that order (size-1 axes ignored, C first), else the
    axes by decreasing |stride|, ties in axis order, a broadcast axis
    (stride 0) fastest (`copy(broadcast_to(a, (4, 3)))` is Fortran-ordered
    in NumPy too)."""
    n = t.ndim
    if order == "K" and t.is_contiguous():
        return tuple(range(n))
    order = resolve_order(order, t, keep=True)
    if order == "C":
        return tuple(range(n))
    if order == "F" or (order == "K" and f_contiguous(t)):
        return tuple(reversed(range(n)))
    st = t.stride()
    return tuple(sorted(range(n), key=lambda d: -abs(st[d])))


def in_layout(t: Tensor, axes: tuple[int, ...], make) -> Tensor:
    """`make` (an op writing a C-contiguous result) applied so that its
    result's axes lie in memory as `axes` lists them."""
    if axes == tuple(range(t.ndim)):
        return make(t)
    return _permuted(make(_permuted(t, axes)), _inverse(axes))


def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes `axes`."""
    return tuple(sorted(range(len(axes)), key=axes.__getitem__))


def new_axes(t: Tensor, order: object, ndim: int) -> tuple[int, ...]:
    """The axes, slowest first, of a new `ndim`-d array in `order` like `t`
    (NumPy's `_like` functions). K keeps t's axis order only when `ndim` is
    t's own; for another `shape=` it is C, as in NumPy."""
    resolved = resolve_order(order, t, keep=True)
    if resolved == "K" and ndim == t.ndim:
        return layout_axes(t, "K")
    return tuple(reversed(range(ndim))) if resolved == "F" else tuple(range(ndim))


def new_in_layout(shape: tuple[int, ...], axes: tuple[int, ...], make) -> Tensor:
    """`make(shape)` (an op creating a C-contiguous tensor) with the result's
    axes lying in memory as `axes` lists them: made in the permuted shape,
    then viewed back."""
    if axes == tuple(range(len(shape))):
        return make(shape)
    return _permuted(make(tuple(shape[a] for a in axes)), _inverse(axes))


def copy_in(t: Tensor, order: object) -> Tensor:
    """A new tensor of t's values laid out in `order` (NumPy's copy)."""
    return in_layout(t, layout_axes(t, order), lambda x: elementwise.apply("copy", x))


def astype(t: Tensor, dtype: object, order: object = "K", casting: str = "unsafe",
           copy: bool = True) -> Tensor:
    """NumPy's ndarray.astype: a new tensor of `dtype` laid out in `order`,
    or with copy=False `t` itself when it already has both."""
    if copy and casting == "unsafe" and order == "K" and t.is_contiguous():
        return elementwise.astype(t, dtype)  # the common call, at its old cost
    d = as_dtype(dtype)
    if casting != "unsafe" and not np.can_cast(t.dtype.np, d.np, casting):
        raise TypeError(f"Cannot cast array data from dtype('{t.dtype.np}') to "
                        f"dtype('{d.np}') according to the rule '{casting}'")
    if not copy and d == t.dtype and has_layout(t, order):
        return t
    return in_layout(t, layout_axes(t, order), lambda x: elementwise.astype(x, d))


def has_layout(t: Tensor, order: object) -> bool:
    """Whether t is laid out in `order` already (any layout is K's)."""
    order = resolve_order(order, t, keep=True)
    return order == "K" or (t.is_contiguous() if order == "C" else f_contiguous(t))
