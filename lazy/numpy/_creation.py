"""Creation functions of the array API, with NumPy's float64 default.

`lazy.zeros(3)` is float32 (PyTorch's default); `lazy.numpy.zeros(3)` is
float64, as `numpy.zeros(3)`, so NumPy code keeps its dtypes. Ranges and
constants are pending nodes that fuse into their readers.
"""
from __future__ import annotations

import functools
import importlib
import operator

import numpy as np

from scheduler.dtypes import DType, as_dtype, float64, int64, result_type

from .. import creation, elementwise, reductions, views
from ..layout import in_layout, new_axes, new_in_layout
from ..tensor import Tensor
from ._helpers import host_array, shared, tensor
from ._manipulation import broadcast_arrays


_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _default(value: object, dtype: object) -> DType:
    """NumPy's dtype for a fill value: bool, int64, float64, or a NumPy
    scalar's own."""
    if dtype is None and not isinstance(value, _SCALARS):
        raise TypeError(f"fill value must be a bool, int or float, "
                        f"got {type(value).__name__}")
    return creation.dtype_of_value(value, dtype, float64)


def _array_fill(value: object) -> bool:
    """An array-like fill value (NumPy broadcasts it), not a number or None."""
    return value is not None and not isinstance(value, _SCALARS)


def _full_of_array(shape: tuple, value: object, dtype: object, device: object,
                   axes: tuple[int, ...] | None = None) -> Tensor:
    """NumPy's full with an array fill value: the fill broadcast to `shape`
    and copied (a new tensor, not a view; C-contiguous, or laid out as
    `axes` lists them), in `dtype` or else the fill's own dtype; a fill that
    does not broadcast raises here."""
    fill = tensor(value)
    if device is not None:
        fill = fill.to(device)
    d = as_dtype(dtype) if dtype is not None else fill.dtype
    filled = views.broadcast_to(elementwise.cast(fill, d), shape)
    return in_layout(filled, axes or tuple(range(len(shape))),
                     lambda t: elementwise.apply("copy", t))


def _shape(shape: object) -> tuple[int, ...]:
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)


def _device(device: object) -> object:
    return None if device is None else str(device)


def asarray(obj: object, /, *, dtype: object = None, device: object = None,
            copy: bool | None = None) -> Tensor:
    """Tensors and NumPy arrays are shared (not copied) unless `copy` or `dtype` needs it.

    copy=False raises ValueError when a copy cannot be avoided (array API).
    """
    want = as_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        needs = want is not None and want != obj.dtype
        if copy is False and (needs or (device is not None and str(device) != obj.device)):
            raise ValueError("asarray: copy=False, but the dtype or device asked for "
                             "needs a copy")
        out = elementwise.astype(obj, want or obj.dtype) if (copy or needs) else obj
        return out if device is None else out.to(str(device))
    arr = host_array(obj, dtype)
    if copy is False and not isinstance(obj, np.ndarray):
        raise ValueError(f"asarray: copy=False, but {type(obj).__name__} data must be copied")
    if copy is False and arr is not obj and not np.shares_memory(arr, obj):
        raise ValueError("asarray: copy=False, but the dtype asked for needs a copy")
    if copy:
        return creation.tensor(arr, device=_device(device) or "cpu")
    return creation.asarray(arr, device=_device(device))


def array(obj: object, dtype: object = None, *, copy: bool = True, device: object = None,
          ndmin: int = 0) -> Tensor:
    """NumPy's `array`: a copy by default."""
    out = asarray(obj, dtype=dtype, device=device, copy=copy)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def arange(start: float, /, stop: float | None = None, step: float = 1, dtype: object = None,
           *, device: object = None) -> Tensor:
    start, stop, step = (_number(v) for v in (start, stop, step))
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
               for v in (start, stop, step) if v is not None)
    d = as_dtype(dtype) if dtype is not None else (int64 if ints else float64)
    return creation.arange(start, stop, step, dtype=d, device=_device(device))


def _number(v: object) -> object:
    """A 0-d tensor as the Python number it holds (`arange(labels.max() + 1)`:
    the result's length needs its value, so this is a sync point)."""
    return v.item() if isinstance(v, Tensor) and v.ndim == 0 else v


def empty(shape: object, dtype: object = None, *, device: object = None) -> Tensor:
    return creation.empty(_shape(shape), dtype=as_dtype(dtype or float64), device=_device(device))


def empty_like(x: Tensor, /, dtype: object = None, order: str = "K", subok: bool = True,
               shape: object = None, *, device: object = None) -> Tensor:
    """NumPy's empty_like; the result is always a Tensor, whatever `subok` says."""
    x = shared(x)
    shape = x.shape if shape is None else _shape(shape)
    d, dev = as_dtype(dtype or x.dtype), _device(device) or x.device
    return new_in_layout(shape, new_axes(x, order, len(shape)),
                         lambda s: creation.empty(s, dtype=d, device=dev))


def zeros(shape: object, dtype: object = None, *, device: object = None) -> Tensor:
    return creation.full(_shape(shape), 0, as_dtype(dtype or float64), _device(device))


def ones(shape: object, dtype: object = None, *, device: object = None) -> Tensor:
    return creation.full(_shape(shape), 1, as_dtype(dtype or float64), _device(device))


def full(shape: object, fill_value: object, dtype: object = None, *,
         device: object = None) -> Tensor:
    if _array_fill(fill_value):
        return _full_of_array(_shape(shape), fill_value, dtype, _device(device))
    return creation.full(_shape(shape), _fill(fill_value), _default(fill_value, dtype),
                         _device(device))


def _fill(value: object) -> object:
    """NumPy's full copies a Python float in as a float64 cast unsafely to
    the dtype: NaN, inf or a float out of range gives an integer dtype's
    minimum with a RuntimeWarning, not an error (lazy.full raises, as torch)."""
    return np.float64(value) if type(value) is float else value


def _like(x: object, value: object, dtype: object, order: object, device: object,
          shape: object) -> Tensor:
    """x's dtype, device and (unless NumPy's `shape=` overrides it) shape,
    laid out in NumPy's `order` (K: as x, when the shape has x's ndim). The
    result is always a Tensor: `subok` has nothing to choose."""
    x = shared(x)
    shape = x.shape if shape is None else _shape(shape)
    axes, dev = new_axes(x, order, len(shape)), _device(device) or x.device
    if _array_fill(value):
        return _full_of_array(shape, value, dtype or x.dtype, dev, axes)
    d = as_dtype(dtype or x.dtype)
    return new_in_layout(shape, axes, lambda s: creation.full(s, _fill(value), d, dev))


def zeros_like(x: Tensor, /, dtype: object = None, order: str = "K", subok: bool = True,
               shape: object = None, *, device: object = None) -> Tensor:
    return _like(x, 0, dtype, order, device, shape)


def ones_like(x: Tensor, /, dtype: object = None, order: str = "K", subok: bool = True,
              shape: object = None, *, device: object = None) -> Tensor:
    return _like(x, 1, dtype, order, device, shape)


def full_like(x: Tensor, /, fill_value: object, dtype: object = None, order: str = "K",
              subok: bool = True, shape: object = None, *, device: object = None) -> Tensor:
    return _like(x, fill_value, dtype, order, device, shape)


def eye(n_rows: int, n_cols: int | None = None, /, k: int = 0, dtype: object = None, *,
        device: object = None) -> Tensor:
    return creation.eye(n_rows, n_cols, k, dtype=as_dtype(dtype or float64),
                        device=_device(device))


def identity(n: int, dtype: object = None, *, device: object = None) -> Tensor:
    return eye(n, dtype=dtype, device=device)


def _linspace_dtype(start: object, stop: object) -> DType:
    """NumPy's: start and stop promoted with a float (Python numbers weak);
    float64 where an operand's dtype is one lazyrt lacks (float16, ...)."""
    try:
        ends = [v if isinstance(v, (bool, int, float)) else
                v.dtype if isinstance(v, Tensor) else as_dtype(np.asarray(v).dtype)
                for v in (start, stop)]
        return result_type(*ends, 1.0)
    except TypeError:
        return float64


def linspace(start: object, stop: object, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: object = None, axis: int = 0, *,
             device: object = None) -> Tensor | tuple[Tensor, object]:
    """NumPy's linspace; integer dtypes take the floor of the float values, as NumPy.

    The default dtype is NumPy's: start and stop promoted with a float (Python
    numbers weak), so NumPy float32 scalars give float32 and integers float64.
    Array start and stop broadcast: the samples run along `axis` of the result.
    `retstep` also returns the step (NumPy's nan when there is none).
    """
    d = as_dtype(dtype) if dtype is not None else _linspace_dtype(start, stop)
    if np.ndim(start) or np.ndim(stop):
        y, step = _linspace_arrays(start, stop, operator.index(num), endpoint,
                                   _linspace_dtype(start, stop), device)
    else:
        y = creation.linspace(start, stop, num, endpoint, dtype=float64 if not d.is_float
                              else d, device=_device(device))
        div = (operator.index(num) - 1) if endpoint else operator.index(num)
        step = float("nan") if div <= 0 else asarray(
            np.subtract(_number(stop), _number(start), dtype=y.dtype.np) / div)
    if axis != 0:
        from ._manipulation import moveaxis
        y = moveaxis(y, 0, axis)
    if not d.is_float:
        from ._rounding import floor
        y = floor(y)
    y = elementwise.cast(y, d)
    return (y, step) if retstep else y


def _linspace_arrays(start: object, stop: object, num: int, endpoint: bool, dt: DType,
                     device: object) -> tuple[Tensor, object]:
    """NumPy's algorithm for array ends, in `dt`: arange(num) * step + start
    along a new first axis, the last sample `stop`. Where any step is zero
    (a denormal range) NumPy scales by delta / div instead, for every sample:
    reading which is a sync point."""
    a, b = (elementwise.cast(tensor(v), dt) for v in (start, stop))
    if device is not None:
        a, b = a.to(str(device)), b.to(str(device))
    delta = b - a
    i = creation.arange(0, num, 1, dtype=dt, device=a.device)
    y = views.reshape(i, (-1,) + (1,) * delta.ndim)
    div = (num - 1) if endpoint else num
    if div > 0:
        step = delta / div
        zero = reductions.reduce(step == 0, "any", None, False)
        y = y / div * delta if bool(zero) else y * step
    else:
        step = float("nan")
        y = y * delta
    y = y + a
    if endpoint and num > 1:
        last = views.reshape(i == num - 1, (num,) + (1,) * delta.ndim)
        y = elementwise.apply("where", last, b, y)
    return y, step


def meshgrid(*xi: object, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple[Tensor, ...] | list[Tensor]:
    """NumPy's coordinate grids: each input flattened onto its own axis
    (the first two swapped for "xy"), broadcast to the full grid unless
    `sparse`, and copied unless copy=False (then views of the inputs). The
    container is the installed NumPy's: before 2.5, sparse views came back
    as a list."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ts = [(tensor if copy else shared)(x) for x in xi]
    ndim = len(ts)
    out = []
    for i, t in enumerate(ts):
        s = [1] * ndim
        s[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        out.append(views.reshape(t, tuple(s)))
    if not sparse:
        out = tuple(broadcast_arrays(*out))
    if copy:
        return tuple(elementwise.apply("copy", t) for t in out)
    return out if _meshgrid_views_in_a_list() else tuple(out)


@functools.cache
def _meshgrid_views_in_a_list() -> bool:
    return isinstance(np.meshgrid(np.zeros(1), sparse=True, copy=False), list)


def _triangle(x: object, k: int, lower: bool) -> Tensor:
    x = tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: input must be at least 2-D, "
                         f"got shape {x.shape}")
    n, m = x.shape[-2:]
    rows = creation.arange(n, device=x.device).reshape(n, 1)
    cols = creation.arange(m, device=x.device).reshape(1, m)
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return elementwise.apply("where", keep, x, elementwise.const(0, x.dtype, (), x.device))


def tril(x: Tensor, /, k: int = 0) -> Tensor:
    return _triangle(x, operator.index(k), True)


def triu(x: Tensor, /, k: int = 0) -> Tensor:
    return _triangle(x, operator.index(k), False)


def from_dlpack(x: object, /, *, device: object = None, copy: bool | None = None) -> Tensor:
    """A tensor from any DLPack producer (lazy.interop's implementation)."""
    interop = importlib.import_module("lazy.interop")
    return interop.from_dlpack(x, device=device, copy=copy)


__all__ = ["arange", "array", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full",
           "full_like", "identity", "linspace", "meshgrid", "ones", "ones_like", "tril",
           "triu", "zeros", "zeros_like"]

