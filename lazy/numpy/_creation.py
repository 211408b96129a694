"""Creation functions of the array API, with NumPy's float64 default.

`lazy.zeros(3)` is float32 (PyTorch's default); `lazy.numpy.zeros(3)` is
float64, as `numpy.zeros(3)`, so NumPy code keeps its dtypes. Ranges and
constants are pending nodes that fuse into their readers.
"""
from __future__ import annotations

import importlib
import operator

import numpy as np

from scheduler.dtypes import DType, as_dtype, float64, int64, result_type

from .. import creation, elementwise, views
from ..tensor import Tensor
from ._helpers import host_array, shared, tensor


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


def _full_of_array(shape: tuple, value: object, dtype: object, device: object) -> Tensor:
    """NumPy's full with an array fill value: the fill broadcast to `shape`
    and copied (a new contiguous tensor, not a view), in `dtype` or else the
    fill's own dtype; a fill that does not broadcast raises here."""
    fill = tensor(value)
    if device is not None:
        fill = fill.to(device)
    d = as_dtype(dtype) if dtype is not None else fill.dtype
    return elementwise.apply("copy", views.broadcast_to(elementwise.cast(fill, d), shape))


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


def empty_like(x: Tensor, /, dtype: object = None, *, device: object = None) -> Tensor:
    x = shared(x)
    return creation.empty(x.shape, dtype=as_dtype(dtype or x.dtype),
                          device=_device(device) or x.device)


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


def _like(x: object, value: object, dtype: object, device: object) -> Tensor:
    x = shared(x)
    if _array_fill(value):
        return _full_of_array(x.shape, value, dtype or x.dtype, _device(device) or x.device)
    return creation.full(x.shape, _fill(value), as_dtype(dtype or x.dtype),
                         _device(device) or x.device)


def zeros_like(x: Tensor, /, dtype: object = None, *, device: object = None) -> Tensor:
    return _like(x, 0, dtype, device)


def ones_like(x: Tensor, /, dtype: object = None, *, device: object = None) -> Tensor:
    return _like(x, 1, dtype, device)


def full_like(x: Tensor, /, fill_value: object, dtype: object = None, *,
              device: object = None) -> Tensor:
    return _like(x, fill_value, dtype, device)


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


def linspace(start: float, stop: float, /, num: int = 50, endpoint: bool = True, *,
             dtype: object = None, device: object = None) -> Tensor:
    """NumPy's linspace; integer dtypes take the floor of the float values, as NumPy.

    The default dtype is NumPy's: start and stop promoted with a float (Python
    numbers weak), so NumPy float32 scalars give float32 and integers float64.
    """
    d = as_dtype(dtype) if dtype is not None else _linspace_dtype(start, stop)
    if not d.is_float:
        from ._rounding import floor
        y = creation.linspace(start, stop, num, endpoint, dtype=float64, device=_device(device))
        return elementwise.cast(floor(y), d)
    return creation.linspace(start, stop, num, endpoint, dtype=d, device=_device(device))


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids (copies, as NumPy's default), from 1-D tensors."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [tensor(a).reshape(-1) for a in arrays]
    shape = [t.shape[0] for t in ts]
    if indexing == "xy" and len(ts) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(ts):
        axis = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and len(ts) > 1 else i
        s = [1] * len(ts)
        s[axis] = t.shape[0]
        out.append(t.reshape(s).broadcast_to(tuple(shape)).clone())
    return out


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

