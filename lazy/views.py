"""View ops and basic indexing: new `View`s over the same storage, no copies.

Arguments are checked here, when the op is built, and errors name the
shapes and values (NumPy's and PyTorch's wording where they have one).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from scheduler.dtypes import DType
from scheduler.graph import Buffer
from scheduler.view import View, normalize_dim

from .tensor import Tensor


def _shape_arg(shape: tuple) -> tuple[int, ...]:
    """Accept f(2, 3) and f((2, 3)) alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of ints, got {shape!r}") from None


def _is_dtype(x: object) -> bool:
    """A dtype given where a shape was expected (`x.view(np.int32)`)."""
    return isinstance(x, (str, type, DType, np.dtype)) or type(x).__name__ == "dtype"


def _int_arg(fn: str, name: str, value: object) -> int:
    """An int argument (a NumPy integer too), or TypeError naming it."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}") from None


def _infer(t: Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension (-1), got shape {shape}")
    if any(s < -1 for s in shape):
        raise ValueError(f"invalid shape {shape}: dimensions must be >= 0 (or -1 once)")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or t.size % known:
            raise ValueError(f"cannot reshape tensor of size {t.size} into shape {shape}")
        shape = tuple(t.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != t.size:
        raise ValueError(f"cannot reshape tensor of size {t.size} into shape {shape}")
    return shape


def reshape(t: Tensor, shape: tuple) -> Tensor:
    """A view when strides allow, else a contiguous copy (as PyTorch)."""
    shape = _infer(t, _shape_arg(shape))
    v = t._view.reshape(shape)
    if v is None:
        c = t.contiguous()
        return c._as(c._view.reshape(shape))
    return t._as(v)


def view(t: Tensor, shape: tuple) -> Tensor:
    if len(shape) == 1 and _is_dtype(shape[0]):
        raise TypeError(f"view({shape[0]!r}): lazyrt cannot reinterpret a tensor's memory as "
                        f"another dtype (NumPy's and PyTorch's view(dtype)); astype converts "
                        f"the values")
    shape = _infer(t, _shape_arg(shape))
    v = t._view.reshape(shape)
    if v is None:
        raise ValueError(
            f"view size is not compatible with input tensor's size and stride: shape "
            f"{t.shape} with strides {t.stride()} cannot be viewed as {shape} (at least one "
            f"dimension spans across two contiguous subspaces); use .reshape(...) instead")
    return t._as(v)


def permute(t: Tensor, dims: tuple) -> Tensor:
    dims = _shape_arg(dims)
    if len(dims) != t.ndim:
        raise ValueError(f"permute: number of dims {len(dims)} does not match the tensor's "
                         f"{t.ndim} dimensions (shape {t.shape})")
    dims = tuple(normalize_dim(d, t.ndim) for d in dims)
    if sorted(dims) != list(range(t.ndim)):
        raise ValueError(f"permute: dims {dims} are not a permutation of 0..{t.ndim - 1}")
    return t._as(t._view.permute(dims))


def transpose(t: Tensor, dims: tuple) -> Tensor:
    """PyTorch's transpose(dim0, dim1) swaps; NumPy's transpose(axes) permutes.

    Two separate ints swap (also on 2-D, where NumPy's reading would be a
    no-op nobody writes on purpose); one tuple, or one int per axis, is a
    permutation; no argument reverses the axes.
    """
    if not dims:
        return permute(t, tuple(reversed(range(t.ndim))))
    swap = len(dims) == 2 and not isinstance(dims[0], (tuple, list))
    dims = _shape_arg(dims)
    if swap:
        a, b = (normalize_dim(d, t.ndim) for d in dims)
        perm = list(range(t.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return permute(t, tuple(perm))
    return permute(t, dims)


def expand(t: Tensor, shape: tuple) -> Tensor:
    """PyTorch's expand: -1 keeps a size; size-1 axes stretch with stride 0."""
    shape = _shape_arg(shape)
    if len(shape) < t.ndim:
        raise ValueError(f"expand: the number of sizes provided ({len(shape)}) must be at "
                         f"least the number of dimensions of the tensor ({t.ndim})")
    lead = len(shape) - t.ndim
    full = list(shape)
    for d, n in enumerate(t.shape):
        if full[lead + d] == -1:
            full[lead + d] = n
        elif n != 1 and full[lead + d] != n:
            raise ValueError(f"expand: the expanded size {full[lead + d]} must match the "
                             f"existing size {n} at non-singleton dimension {lead + d}; "
                             f"target sizes {shape}, tensor shape {t.shape}")
    if any(s < 0 for s in full):
        raise ValueError(f"expand: -1 is not allowed for new leading dimensions: {shape}")
    return t._as(t._view.expand(tuple(full)))


def broadcast_to(t: Tensor, shape: tuple) -> Tensor:
    shape = _shape_arg((shape,) if isinstance(shape, int) else shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"cannot broadcast a tensor of shape {t.shape} to shape {shape}: "
                         f"negative dimensions are not allowed")
    from .elementwise import broadcast_shapes
    try:
        ok = len(shape) >= t.ndim and broadcast_shapes(t.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"cannot broadcast a tensor of shape {t.shape} to shape {shape}")
    return t._as(t._view.expand(shape))


def squeeze(t: Tensor, dim=None) -> Tensor:
    if dim is None:
        dims = tuple(d for d, n in enumerate(t.shape) if n == 1)
    else:
        dims = tuple(normalize_dim(d, t.ndim) for d in
                     (dim if isinstance(dim, (tuple, list)) else (dim,)))
        bad = [d for d in dims if t.shape[d] != 1]
        if bad:  # NumPy raises; PyTorch ignores. We follow NumPy: it catches bugs.
            raise ValueError(f"cannot select an axis to squeeze out which has size not "
                             f"equal to one: axis {bad[0]} of shape {t.shape}")
    return t._as(t._view.squeeze(dims))


def unsqueeze(t: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, t.ndim + 1, of=f"unsqueeze of a tensor of {t.ndim} dimensions")
    return t._as(t._view.unsqueeze(d))


def flatten(t: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if t.ndim == 0:
        return reshape(t, (1,))
    a, b = normalize_dim(start_dim, t.ndim), normalize_dim(end_dim, t.ndim)
    if a > b:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = t.shape[:a] + (math.prod(t.shape[a:b + 1]),) + t.shape[b + 1:]
    return reshape(t, shape)


def narrow(t: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`start` may be a 0-d integer tensor, as in PyTorch (reading it syncs)."""
    d = normalize_dim(dim, t.ndim)
    n = t.shape[d]
    start, length = _int_arg("narrow", "start", start), _int_arg("narrow", "length", length)
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"narrow: start {start} and length {length} are out of range for "
                         f"dimension {d} of size {n} (shape {t.shape})")
    return t._as(t._view.slice(d, start, start + length, 1))


def _index(i: int, n: int, axis: int) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i % n


def select(t: Tensor, dim: int, index: int) -> Tensor:
    d = normalize_dim(dim, t.ndim)
    return t._as(t._view.select(d, _index(operator.index(index), t.shape[d], d)))


def diagonal(t: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    if t.ndim < 2:
        raise ValueError(f"diagonal requires a tensor of at least 2 dimensions, got shape {t.shape}")
    a, b = normalize_dim(dim1, t.ndim), normalize_dim(dim2, t.ndim)
    if a == b:
        raise ValueError(f"diagonal: dim1 and dim2 cannot be the same axis ({a})")
    return t._as(t._view.diagonal(_int_arg("diagonal", "offset", offset), a, b))


def as_strided(t: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """Any strides over the same storage; bounds are checked against the storage."""
    size, stride = _shape_arg(tuple(size)), _shape_arg(tuple(stride))
    if len(size) != len(stride):
        raise ValueError(f"as_strided: size {size} and stride {stride} differ in length")
    if any(n < 0 for n in size):
        raise ValueError(f"as_strided: negative size in {size}")
    offset = t._view.offset if storage_offset is None else \
        _int_arg("as_strided", "storage_offset", storage_offset)
    v = View(size, stride, offset)
    if v.size:
        lo, hi = v.span()
        if lo < 0 or hi >= t._buf.size:
            raise IndexError(f"as_strided: size {size}, stride {stride} and storage offset "
                             f"{offset} reach elements {lo}..{hi}, out of bounds for a "
                             f"storage of {t._buf.size} elements")
    return t._as(v)


def _expand_key(t: Tensor, key: tuple) -> list:
    """Replace `...` with full slices and check the index count."""
    if any(k is Ellipsis for k in key) and sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > t.ndim:
        raise IndexError(f"too many indices for tensor: tensor is {t.ndim}-dimensional, "
                         f"but {used} were indexed")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (t.ndim - used))
        else:
            out.append(k)
    if not any(k is Ellipsis for k in key):
        out.extend([slice(None)] * (t.ndim - used))
    return out


def unfold(t: Tensor, dim: int, size: int, step: int) -> Tensor:
    d = normalize_dim(dim, t.ndim) if t.ndim else 0
    n = t.shape[d] if t.ndim else 1
    size, step = _int_arg("unfold", "size", size), _int_arg("unfold", "step", step)
    if step <= 0:
        raise ValueError(f"unfold: step must be positive, got {step}")
    if size < 0:
        raise ValueError(f"unfold: size must be non-negative, got {size}")
    if size > n:
        raise ValueError(f"unfold: size {size} is larger than dimension {d} of size {n} "
                         f"(shape {t.shape})")
    v = t._view if t.ndim else t._view.unsqueeze(0)
    return t._as(v.unfold(d, size, step))


def getitem(t: Tensor, key) -> Tensor:
    """Basic indexing (ints, slices, None, ...) is a view, except one element
    (`_element`); advanced indexing a gather."""
    from . import indexing
    if indexing.is_advanced(key):
        return indexing.getitem(t, key)
    key = key if isinstance(key, tuple) else (key,)
    v = basic_view(t, key)
    if len(key) == t.ndim and not any(k is None or k is Ellipsis or isinstance(k, slice)
                                      for k in key):
        return _element(t._as(v))
    return t._as(v)


def basic_view(t: Tensor, key: tuple) -> View:
    """The view a basic index selects (what `t[key] = value` writes through)."""
    v, d, axis = t._view, 0, 0  # d: axis of the result so far; axis: of t
    for k in _expand_key(t, key):
        if k is None:
            v = v.unsqueeze(d)
            d += 1
        elif isinstance(k, slice):
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            v = v.slice(d, *k.indices(v.shape[d]))
            d += 1
            axis += 1
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`) and None "
                                 f"are valid indices, got {k!r}") from None
            v = v.select(d, _index(i, v.shape[d], axis))
            axis += 1
    return v


def _element(t: Tensor) -> Tensor:
    """`a[i, j]`, an int for every axis: NumPy gives a scalar, a copy, so a
    later write to `a` does not show in it (`tmp = a[i]; a[i] = a[j]; a[j] =
    tmp` swaps). PyTorch gives a 0-d view; lazyrt follows NumPy, whose
    programs it runs unchanged. A realized element is copied now (no kernel),
    a pending one by a copy node marked "element": a sync realizes `a`
    instead and copies the element out (runtime._realize), so the next
    element read is a plain copy too."""
    from . import runtime
    buf = t._buf
    if not buf.pending:
        return Tensor._element(Buffer.realized(runtime.element_array(buf, t._view.offset),
                                               buf.device, buf.dtype))
    out = Tensor._element(runtime.pending("copy", ((buf, t._view),), runtime.ELEMENT, buf.dtype,
                                          (), buf.device))
    runtime.count_node()
    return out
